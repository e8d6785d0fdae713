// <mount>/delete, undelete and destroy: act on listed versions of a secret. Versions that do not
// exist, or whose state does not allow the change, are skipped, as in Vault.

import type { LogicalRequest, PathDef } from '../../../../framework/backend';
import { badRequest } from '../../../../framework/errors';
import type { FieldData } from '../../../../framework/fields';
import { PATH_FIELD, type Kv2Context } from '../context';
import { destroy, softDelete, undelete, type KeyMeta } from '../model';
import { eraseVersionData, readConfig, readMeta, saveMeta } from '../store';

type Change = (req: LogicalRequest, path: string, meta: KeyMeta, versions: number[], now: number) => Promise<void>;

function versionsPath(ctx: Kv2Context, verb: string, summary: string, missing: string, change: Change): PathDef {
  return {
    pattern: `${verb}/(?<path>.*)`,
    summary,
    fields: {
      path: PATH_FIELD,
      versions: { type: 'comma-int-list', description: 'Version numbers: a JSON array of integers or a comma-separated string.' },
    },
    operations: {
      update: ctx.guard(async (req, f: FieldData) => {
        const versions = f.get<number[]>('versions');
        if (versions.length === 0) throw badRequest(missing);
        const path = f.get<string>('path');
        const meta = await readMeta(req.storage, path);
        if (meta) await change(req, path, meta, versions, Date.now());
        return null;
      }),
    },
  };
}

export function versionPaths(ctx: Kv2Context): PathDef[] {
  return [
    versionsPath(ctx, 'delete', 'Soft-delete versions: their data is kept but no longer returned.', 'No version number provided', async (req, path, meta, versions, now) => {
      softDelete(meta, versions, now);
      await saveMeta(req.storage, path, meta, now, { wakeAt: req.wakeAt });
    }),
    versionsPath(ctx, 'undelete', 'Restore soft-deleted versions.', 'No version number provided', async (req, path, meta, versions, now) => {
      undelete(meta, versions, now, await readConfig(req.storage));
      await saveMeta(req.storage, path, meta, now, { wakeAt: req.wakeAt });
    }),
    versionsPath(ctx, 'destroy', 'Permanently erase the data of versions.', 'no version number provided', async (req, path, meta, versions, now) => {
      await eraseVersionData(req.storage, path, meta, destroy(meta, versions));
      await saveMeta(req.storage, path, meta, now, { wakeAt: req.wakeAt });
    }),
  ];
}
