// auth/token/lookup, lookup-self and lookup-accessor.
import { tokenLookupData } from '../../core/tokens';
import type { PathDef } from '../../framework/backend';
import { CofferError, permissionDenied } from '../../framework/errors';
import type { TokenOps } from './ops';

const badToken = () => new CofferError(403, ['bad token']);

export function lookupPaths(ops: TokenOps): PathDef[] {
  return [
    {
      pattern: 'lookup-self',
      summary: 'Information about the calling token.',
      operations: {
        read: async (req) => {
          const caller = await ops.caller(req);
          if (!caller) throw permissionDenied();
          return { data: tokenLookupData(caller.entry, caller.token) };
        },
        update: async (req) => {
          const caller = await ops.caller(req);
          if (!caller) throw permissionDenied();
          return { data: tokenLookupData(caller.entry, caller.token) };
        },
      },
    },
    {
      pattern: 'lookup',
      fields: { token: { type: 'string', description: 'Token to look up.', required: true } },
      summary: 'Information about a token.',
      operations: {
        update: async (_req, f) => {
          const token = f.get<string>('token');
          const entry = await ops.lookup(token);
          if (!entry) throw badToken();
          return { data: tokenLookupData(entry, token) };
        },
        read: async (_req, f) => {
          const token = f.get<string>('token');
          const entry = await ops.lookup(token);
          if (!entry) throw badToken();
          return { data: tokenLookupData(entry, token) };
        },
      },
    },
    {
      pattern: 'lookup-accessor',
      fields: { accessor: { type: 'string', description: 'Accessor of the token.', required: true } },
      summary: 'Information about a token, by accessor.',
      operations: {
        update: async (_req, f) => {
          const entry = await ops.lookupAccessor(f.get('accessor'));
          if (!entry) throw badToken();
          return { data: tokenLookupData(entry, '') };
        },
      },
    },
  ];
}
