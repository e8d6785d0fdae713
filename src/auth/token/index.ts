// The token auth method (auth/token/). The full token store arrives with the auth core; for now
// it serves lookup-self, which clients (vault login, hvac is_authenticated) use to check a token.

import type { TokenStore } from '../../core/token-store';
import { tokenLookupData } from '../../core/tokens';
import type { Backend, Handler } from '../../framework/backend';
import { permissionDenied } from '../../framework/errors';

export const TOKEN_UNAUTHENTICATED_PATHS: string[] = [];

export function tokenBackend(store: TokenStore): Backend {
  const lookupSelf: Handler = async (req) => {
    const token = req.clientToken;
    const entry = token ? await store.lookup(token) : null;
    if (!entry || !token) throw permissionDenied();
    return { data: tokenLookupData(entry, token) };
  };
  return {
    type: 'token',
    paths: [{ pattern: 'lookup-self', summary: 'Information about the calling token.', operations: { read: lookupSelf, update: lookupSelf } }],
    unauthenticatedPaths: TOKEN_UNAUTHENTICATED_PATHS,
  };
}
