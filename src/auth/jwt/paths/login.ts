// POST auth/<mount>/login {role, jwt}: checks in Vault's order (role, role type, token, bound
// CIDRs, then the token itself), then builds the login from the claims. loginFromClaims is also
// the last step of the OIDC callback.

import { allowedByCIDRs } from '../../../core/tokens/cidr';
import type { LoginAuth, PathDef } from '../../../framework/backend';
import { badRequest, permissionDenied } from '../../../framework/errors';
import type { FieldSchemas } from '../../../framework/fields';
import { tokenLoginFields } from '../../token/fields';
import { ClaimError, getClaim, groupNames, extractMetadata, userClaimValue, validateBoundClaims, type Claims } from '../claims';
import { loadConfig, type JwtConfig } from '../config';
import { configuredProvider, ProviderConfigError, providerGroups, providerUserInfo, type GroupsContext, type Provider, type ProviderApis } from '../providers';
import { loadRole, type JwtRole } from './roles';
import { audienceOf, loginExpectations, TokenValidationError, validateToken } from '../validate';

const loginFields: FieldSchemas = {
  role: { type: 'lowercase-string', description: 'The role to log in against.' },
  jwt: { type: 'string', description: 'The signed JWT to validate.' },
};

const claimError = (e: unknown, prefix = ''): unknown => (e instanceof ClaimError ? badRequest(prefix + e.message) : e);

/** The config's provider; one stored before it was refused on write fails logins with a 400. */
function loginProvider(config: JwtConfig): Provider | null {
  try {
    return configuredProvider(config.providerConfig, config.oidcDiscoveryUrl);
  } catch (e) {
    if (e instanceof ProviderConfigError) throw new ClaimError(`failed to load custom provider config: ${e.message}`);
    throw e;
  }
}

/**
 * The login for verified claims: the alias named by the user claim, metadata from
 * claim_mappings plus the role name (for both the alias and the token), group aliases from
 * groups_claim (through the config's provider, if any), then the bound claims. `ctx`: what
 * providers need to call their APIs. Throws 400s with Vault's messages.
 */
export async function loginFromClaims(config: JwtConfig, role: JwtRole, claims: Claims, roleName: string, ctx: GroupsContext): Promise<LoginAuth> {
  let aliasName: string;
  let metadata: Record<string, string>;
  let groups: string[] = [];
  try {
    aliasName = userClaimValue(claims, role.userClaim, role.userClaimJsonPointer);
    const provider = loginProvider(config);
    if (provider) await providerUserInfo(provider, claims, role.userClaim, ctx);
    metadata = { ...extractMetadata(claims, role.claimMappings ?? {}), role: roleName };
    if (role.groupsClaim !== '') {
      const raw = provider ? await providerGroups(provider, claims, role.groupsClaim, role.userClaim, ctx) : getClaim(claims, role.groupsClaim);
      groups = groupNames(raw, role.groupsClaim);
    }
  } catch (e) {
    throw claimError(e);
  }
  try {
    validateBoundClaims(role.boundClaimsType, role.boundClaims ?? {}, claims);
  } catch (e) {
    throw claimError(e, 'error validating claims: ');
  }
  return {
    aliasName,
    aliasMetadata: { ...metadata },
    // Vault refreshes this mount's external group memberships on every login: none means none.
    groupAliasNames: groups,
    metadata,
    displayName: aliasName,
    role: roleName,
    ...tokenLoginFields(role.token),
  };
}

/** `apis`: where providers find the APIs they read groups from. */
export function loginPaths(apis: ProviderApis): PathDef[] {
  return [
    {
      pattern: 'login',
      fields: loginFields,
      summary: 'Authenticates with a signed JWT.',
      operations: {
        update: async (req, f) => {
          const config = await loadConfig(req.storage);
          if (!config) throw badRequest('could not load configuration');
          const roleName = f.get<string>('role') || config.defaultRole;
          if (roleName === '') throw badRequest('missing role');
          const role = await loadRole(req.storage, roleName);
          if (!role) throw badRequest(`role ${JSON.stringify(roleName)} could not be found`);
          if (role.roleType === 'oidc') throw badRequest('role with oidc role_type is not allowed');
          const token = f.get<string>('jwt');
          if (token === '') throw badRequest('missing token');
          if (role.token.boundCidrs.length > 0 && !allowedByCIDRs(role.token.boundCidrs, req.clientIP)) throw permissionDenied();

          let claims: Claims;
          try {
            claims = await validateToken(config, token, loginExpectations(config, role));
          } catch (e) {
            if (e instanceof TokenValidationError) throw badRequest(`error validating token: ${e.message}`);
            throw e;
          }
          // CVE-2024-5798: a token meant for some audience must not log in to a role bound to none.
          if (role.boundAudiences.length === 0 && audienceOf(claims).length > 0) {
            throw badRequest('audience claim found in JWT but no audiences bound to the role');
          }
          return { login: await loginFromClaims(config, role, claims, roleName, { ...apis, accessToken: null }) };
        },
      },
    },
  ];
}
