// The JWT/OIDC auth method (Vault's vault-plugin-auth-jwt): config, roles, JWT login and the
// OIDC authorization-code flow.
import type { Backend } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import { configPaths } from './config';
import { loginPaths } from './login';
import { oidcPaths } from './oidc';
import { loadRole, rolePaths } from './roles';

export const JWT_UNAUTHENTICATED_PATHS = ['login', 'oidc/auth_url', 'oidc/callback'];

export function jwtBackend(): Backend {
  return {
    type: 'jwt',
    unauthenticatedPaths: JWT_UNAUTHENTICATED_PATHS,
    paths: [...loginPaths(), ...rolePaths(), ...configPaths(), ...oidcPaths()],
    // A GET callback spends its OIDC state: serialised with the writes, so a state is used once.
    writingReadPaths: ['oidc/callback'],
    // A JWT login writes nothing of this mount's (the entity and token live elsewhere).
    storageFreeWritePaths: ['login'],
    // Renewal re-reads the role (Vault's pathLoginRenew): its current ttl, max_ttl and period.
    renewLogin: async (storage, roleName) => {
      const role = await loadRole(storage, roleName);
      if (!role) throw badRequest(`role ${roleName} does not exist during renewal`);
      return { ttl: role.token.ttl, maxTtl: role.token.maxTtl, period: role.token.period };
    },
  };
}
