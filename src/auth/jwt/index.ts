// The JWT/OIDC auth method (Vault's vault-plugin-auth-jwt): config, roles, JWT login and the
// OIDC authorization-code flow.
import type { Backend } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import { configPaths } from './paths/config';
import { loginPaths } from './paths/login';
import { oidcPaths } from './paths/oidc';
import { GOOGLE_ADMIN_API } from './provider-gsuite';
import { MICROSOFT_GRAPH, type ProviderApis } from './providers';
import { loadRole, rolePaths } from './paths/roles';

const JWT_UNAUTHENTICATED_PATHS = ['login', 'oidc/auth_url', 'oidc/callback'];

/** `host`: the Google Admin SDK's and Microsoft Graph's URLs, when not the public ones (emulators). */
export function jwtBackend(_options: Record<string, string> | null = null, host?: Partial<ProviderApis>): Backend {
  const apis: ProviderApis = { googleAdminApi: host?.googleAdminApi || GOOGLE_ADMIN_API, microsoftGraph: host?.microsoftGraph || MICROSOFT_GRAPH };
  return {
    type: 'jwt',
    unauthenticatedPaths: JWT_UNAUTHENTICATED_PATHS,
    paths: [...loginPaths(apis), ...rolePaths(), ...configPaths(), ...oidcPaths(apis)],
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
