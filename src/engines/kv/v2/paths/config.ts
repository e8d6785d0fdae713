// <mount>/config: the engine-wide max_versions, cas_required and delete_version_after.

import type { PathDef } from '../../../../framework/backend';
import { badRequest } from '../../../../framework/errors';
import type { Kv2Context } from '../context';
import { DELETE_AFTER_DISABLED } from '../model';
import { readConfig } from '../store';
import { configView } from '../views';

export function configPath(ctx: Kv2Context): PathDef {
  return {
    pattern: 'config',
    summary: 'Engine-wide settings applied to every secret of the mount.',
    fields: {
      max_versions: { type: 'int', description: 'Versions kept per secret (0: 10).' },
      cas_required: { type: 'bool', description: 'Every write must carry options.cas.' },
      delete_version_after: {
        type: 'signed-duration',
        description: 'Time after which a new version is deleted; 0 clears it, a negative value disables it on every secret.',
      },
    },
    operations: {
      read: ctx.guard(async (req) => ({ data: configView(await readConfig(req.storage)) })),
      update: ctx.guard(async (req, f) => {
        if (!f.has('max_versions') && !f.has('cas_required') && !f.has('delete_version_after')) return null;
        const config = await ctx.config.forWrite(req.storage);
        if (f.has('max_versions')) {
          const max = f.get<number>('max_versions');
          if (max < 0) throw badRequest('max_versions cannot be negative');
          config.maxVersions = max;
        }
        if (f.has('cas_required')) config.casRequired = f.get<boolean>('cas_required');
        if (f.has('delete_version_after')) {
          const after = f.get<number>('delete_version_after');
          config.deleteVersionAfter = after < 0 ? DELETE_AFTER_DISABLED : after;
        }
        await ctx.config.save(req.storage, config);
        return null;
      }),
    },
  };
}
