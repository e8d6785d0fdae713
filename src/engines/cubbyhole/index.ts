// Per-token private storage: every token sees only its own cubbyhole, keyed by its accessor.

import type { Backend } from '../../framework/backend';
import { badRequest, permissionDenied } from '../../framework/errors';
import { listRecursive, PrefixedStorage } from '../../framework/storage';
import { passthroughPaths } from '../../framework/passthrough-paths';

export function cubbyholeBackend(): Backend {
  return {
    type: 'cubbyhole',
    paths: passthroughPaths({
      leaseHints: false,
      storageFor: (req) => {
        if (!req.auth) throw permissionDenied();
        if (req.auth.tokenType === 'batch' || req.auth.accessor === '') throw badRequest('cubbyhole: batch tokens have no cubbyhole');
        return new PrefixedStorage(req.storage, `${req.auth.accessor}/`);
      },
    }),
    // A token's cubbyhole ends with the token, as in Vault.
    forgetToken: async (accessor, storage) => {
      const mine = new PrefixedStorage(storage, `${accessor}/`);
      for (const key of await listRecursive(mine, '')) await mine.delete(key);
    },
  };
}
