// auth/token/lookup, lookup-self and lookup-accessor.
import { tokenLookupData, type TokenEntry } from '../../../core/tokens/entry';
import type { PathDef } from '../../../framework/backend';
import { CofferError, permissionDenied } from '../../../framework/errors';
import type { TokenOps } from '../ops';

const badToken = () => new CofferError(403, ['bad token']);

export function lookupPaths(ops: TokenOps): PathDef[] {
  /** Vault adds the entity's policies (entity and groups) when it has any. */
  const withIdentity = async (entry: TokenEntry, data: Record<string, unknown>) => {
    const policies = entry.entityId ? await ops.identityPolicies(entry.entityId) : [];
    return policies.length > 0 ? { ...data, identity_policies: policies } : data;
  };
  return [
    {
      pattern: 'lookup-self',
      summary: 'Information about the calling token.',
      operations: {
        read: async (req) => {
          const caller = await ops.caller(req);
          if (!caller) throw permissionDenied();
          return { data: await withIdentity(caller.entry, tokenLookupData(caller.entry, caller.token)) };
        },
        update: async (req) => {
          const caller = await ops.caller(req);
          if (!caller) throw permissionDenied();
          return { data: await withIdentity(caller.entry, tokenLookupData(caller.entry, caller.token)) };
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
          return { data: await withIdentity(entry, tokenLookupData(entry, token)) };
        },
        read: async (_req, f) => {
          const token = f.get<string>('token');
          const entry = await ops.lookup(token);
          if (!entry) throw badToken();
          return { data: await withIdentity(entry, tokenLookupData(entry, token)) };
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
          return { data: await withIdentity(entry, tokenLookupData(entry, '')) };
        },
      },
    },
  ];
}
