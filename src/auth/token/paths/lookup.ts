// auth/token/lookup, lookup-self and lookup-accessor.
import { tokenLookupData, type TokenEntry } from '../../../core/tokens/entry';
import type { LogicalRequest, LogicalResponse, PathDef } from '../../../framework/backend';
import { andThen, type Maybe } from '../../../framework/steps';
import { CofferError, permissionDenied } from '../../../framework/errors';
import type { TokenOps } from '../ops';

const badToken = () => new CofferError(403, ['bad token']);

export function lookupPaths(ops: TokenOps): PathDef[] {
  /** Vault adds the entity's policies (entity and groups) when it has any. */
  const withIdentity = (entry: TokenEntry, data: Record<string, unknown>): Maybe<Record<string, unknown>> => {
    // No entity (root, most service tokens): nothing to ask the identity store, nothing to wait for.
    if (!entry.entityId) return data;
    return ops.identityPolicies(entry.entityId).then((policies) => (policies.length > 0 ? { ...data, identity_policies: policies } : data));
  };
  /** lookup-self: at once for a caller known in memory with no entity. */
  const self = (req: LogicalRequest): Maybe<LogicalResponse> =>
    andThen(ops.caller(req), (caller) => {
      if (!caller) throw permissionDenied();
      return andThen(withIdentity(caller.entry, tokenLookupData(caller.entry, caller.token)), (data) => ({ data }));
    });
  return [
    {
      pattern: 'lookup-self',
      summary: 'Information about the calling token.',
      operations: { read: self, update: self },
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
