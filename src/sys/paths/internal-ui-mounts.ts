// sys/internal/ui/mounts: the mount listing the vault CLI and UI use to find KV versions.
// Unauthenticated, but a token (when sent) widens what is shown.

import { mountInfo, routePrefix } from '../../core/mounts/table';
import type { PathDef } from '../../framework/backend';
import { CofferError } from '../../framework/errors';
import type { SystemServices } from '../context';

export function uiMountPaths(s: SystemServices): PathDef[] {
  return [
    {
      pattern: 'internal/ui/mounts',
      summary: 'Mounts visible to the caller.',
      operations: {
        read: async (req) => {
          const secret: Record<string, unknown> = {};
          const auth: Record<string, unknown> = {};
          for (const [table, out] of [
            ['mounts', secret],
            ['auth', auth],
          ] as const) {
            for (const e of await s.mounts.list(table)) {
              if (await s.canSee(req.auth, routePrefix(e))) out[e.path] = mountInfo(e);
              else if (e.config.listing_visibility === 'unauth') {
                out[e.path] = { type: e.type, description: e.description, options: e.options };
              }
            }
          }
          return { data: { secret, auth } };
        },
      },
    },
    {
      pattern: 'internal/ui/mounts/(?<path>.+)',
      fields: { path: { type: 'string', description: 'A path inside the mount.' } },
      summary: 'The mount serving a path, if the caller may use it.',
      operations: {
        read: async (req, f) => {
          const path = f.get<string>('path');
          const entries = [...(await s.mounts.list('mounts')), ...(await s.mounts.list('auth'))]
            .map((e) => ({ e, prefix: routePrefix(e) }))
            .sort((a, b) => b.prefix.length - a.prefix.length);
          const hit = entries.find(({ prefix }) => path.startsWith(prefix) || path === prefix.slice(0, -1));
          if (!hit || !(await s.canSee(req.auth, hit.prefix))) {
            throw new CofferError(403, [
              `preflight capability check returned 403, please ensure client's policies grant access to path "${path.replace(/\/?$/, '/')}"`,
            ]);
          }
          return { data: { ...mountInfo(hit.e), path: hit.prefix } };
        },
      },
    },
  ];
}
