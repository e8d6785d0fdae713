// auth/token/renew, renew-self and renew-accessor.
import type { PathDef } from '../../../framework/backend';
import { badRequest, permissionDenied } from '../../../framework/errors';
import { authBlock } from '../auth-block';
import type { TokenOps } from '../ops';

const increment = { type: 'duration' as const, description: 'Requested extension; default the token\'s creation TTL.' };

export function renewPaths(ops: TokenOps): PathDef[] {
  return [
    {
      pattern: 'renew-self',
      fields: { increment },
      summary: 'Renew the calling token.',
      operations: {
        update: async (req, f) => {
          const caller = await ops.caller(req);
          if (!caller) throw permissionDenied();
          if (caller.entry.type === 'batch') throw badRequest('batch tokens cannot be renewed');
          const { entry, ttl, warnings } = await ops.renewAccessor(caller.entry.accessor, f.get('increment'), caller.entry);
          return { auth: authBlock(caller.token, entry, ttl), warnings };
        },
      },
    },
    {
      pattern: 'renew',
      fields: { token: { type: 'string', description: 'Token to renew.', required: true }, increment },
      summary: 'Renew a token.',
      operations: {
        update: async (_req, f) => {
          const token = f.get<string>('token');
          const current = await ops.lookup(token);
          if (!current) throw badRequest('invalid token');
          if (current.type === 'batch') throw badRequest('batch tokens cannot be renewed');
          const { entry, ttl, warnings } = await ops.renewAccessor(current.accessor, f.get('increment'), current);
          return { auth: authBlock(token, entry, ttl), warnings };
        },
      },
    },
    {
      pattern: 'renew-accessor',
      fields: { accessor: { type: 'string', description: 'Accessor of the token.', required: true }, increment },
      summary: 'Renew a token, by accessor.',
      operations: {
        update: async (_req, f) => {
          const { entry, ttl, warnings } = await ops.renewAccessor(f.get('accessor'), f.get('increment'));
          return { auth: authBlock('', entry, ttl), warnings };
        },
      },
    },
  ];
}
