// provider_config: identity providers whose group claims need handling of their own (Vault's
// custom providers). SecureAuth sends groups as one comma-separated string, IBM ISAM as one
// space-separated string, and Azure leaves them out of a token past its group limit, pointing at
// Microsoft Graph instead (OIDC distributed claims), where they are read with the access token of
// the OIDC code exchange (with fetch_groups, every time). Google Workspace groups and user
// schemas come from its Directory API (provider-gsuite.ts), and Okta's capped group claims are
// completed from its admin API (provider-okta.ts). Providers not built here are refused when the
// config is written rather than accepted and ignored.
//
// Departure from Vault: a provider's groups are the groups whatever groups_claim is called (Vault
// puts them in the "groups" claim and then reads groups_claim, so another name sees the raw
// claim). They also replace the "groups" claim, as in Vault, for bound_claims.

import { ClaimError, getClaim, type Claims } from './claims';
import { checkGsuiteKey, parseGsuiteConfig, workspaceCustomSchemas, workspaceGroups, type GsuiteConfig } from './provider-gsuite';
import { oktaGroups, parseOktaConfig, type OktaConfig } from './provider-okta';
import { option } from './provider-options';

export const MICROSOFT_GRAPH = 'https://graph.microsoft.com';

export type Provider =
  | { name: 'ibmisam' | 'secureauth' }
  | { name: 'azure'; fetchGroups: boolean }
  | { name: 'gsuite'; gsuite: GsuiteConfig }
  | { name: 'okta'; okta: OktaConfig };

const SIMPLE = new Set<string>(['ibmisam', 'secureauth']);
/** Vault's other providers: known, but not available here (kubernetes reads a pod's service account files). */
const UNSUPPORTED = new Set<string>(['kubernetes']);
/** provider_config keys never read back, by provider. */
const SENSITIVE: Record<string, string[]> = { gsuite: ['gsuite_service_account'], okta: ['api_token'] };

/** Why a provider_config cannot be used, in Vault's words where it has them. */
export class ProviderConfigError extends Error {}

/**
 * The provider a config names, or null without provider_config. Throws ProviderConfigError.
 * `oidcDiscoveryUrl`: the config's, from which Okta's org URL is taken when not given.
 */
export function configuredProvider(pc: Record<string, unknown>, oidcDiscoveryUrl = ''): Provider | null {
  if (Object.keys(pc).length === 0) return null;
  const name = pc.provider;
  if (typeof name !== 'string') throw new ProviderConfigError("'provider' field not found in provider_config");
  if (UNSUPPORTED.has(name)) throw new ProviderConfigError(`provider ${JSON.stringify(name)} is not supported by this server`);
  if (name === 'gsuite') {
    try {
      return { name, gsuite: parseGsuiteConfig(pc) };
    } catch (e) {
      throw new ProviderConfigError(`error initializing "gsuite" provider_config: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  if (name === 'okta') {
    try {
      return { name, okta: parseOktaConfig(pc, oidcDiscoveryUrl) };
    } catch (e) {
      throw new ProviderConfigError(`error initializing "okta" provider_config: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  if (name === 'azure') {
    try {
      return { name, fetchGroups: option(pc, 'fetch_groups', 'boolean', false) };
    } catch (e) {
      throw new ProviderConfigError(`error initializing "azure" provider_config: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  if (!SIMPLE.has(name)) throw new ProviderConfigError(`provider ${JSON.stringify(name)} not found in custom providers`);
  return { name: name as 'ibmisam' | 'secureauth' };
}

/** Checks on config write what parsing cannot: that a service account key can sign. */
export async function checkProviderKeys(provider: Provider | null): Promise<void> {
  if (provider?.name !== 'gsuite') return;
  try {
    await checkGsuiteKey(provider.gsuite);
  } catch (e) {
    throw new ProviderConfigError(`error initializing "gsuite" provider_config: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** provider_config as read back: without the provider's secrets (a service account key). */
export function providerConfigView(pc: Record<string, unknown>): Record<string, unknown> {
  const hidden = typeof pc.provider === 'string' ? (SENSITIVE[pc.provider] ?? []) : [];
  return Object.fromEntries(Object.entries(pc).filter(([k]) => !hidden.includes(k)));
}

/** Where providers find the APIs they call (GroupsContext without the login's access token). */
export type ProviderApis = Omit<GroupsContext, 'accessToken'>;

export interface GroupsContext {
  /** The OIDC code exchange's access token; null for JWT logins (no token to call APIs with). */
  accessToken: string | null;
  /** Where the Google Admin SDK is (its public URL unless the host says otherwise). */
  googleAdminApi: string;
  /** Where Microsoft Graph is, for Azure's fetch_groups (its public URL unless the host says otherwise). */
  microsoftGraph: string;
}

/** The user claim as a provider's API names the user (Vault: the role's user_claim, pointers allowed). */
function apiUser(claims: Claims, userClaim: string): string {
  const raw = getClaim(claims, userClaim);
  if (raw === undefined) throw new ClaimError(`unable to locate ${JSON.stringify(userClaim)} in claims`);
  if (typeof raw !== 'string') throw new ClaimError(`claim ${JSON.stringify(userClaim)} could not be converted to string`);
  return raw;
}

const apiFailure = (e: unknown): ClaimError => (e instanceof ClaimError ? e : new ClaimError(e instanceof Error ? e.message : String(e)));

/**
 * Adds what the provider knows of the user to the claims before claim_mappings reads them
 * (Vault's FetchUserInfo): a Google Workspace user's custom schemas, by schema name.
 */
export async function providerUserInfo(provider: Provider, claims: Claims, userClaim: string, ctx: GroupsContext): Promise<void> {
  if (provider.name !== 'gsuite' || !provider.gsuite.fetchUserInfo || provider.gsuite.userCustomSchemas === '') return;
  try {
    Object.assign(claims, await workspaceCustomSchemas(provider.gsuite, ctx.googleAdminApi, apiUser(claims, userClaim)));
  } catch (e) {
    throw apiFailure(e);
  }
}

/**
 * The groups claim as the provider delivers it (before Vault's list normalisation). Provider
 * results also replace the "groups" claim, as in Vault, so bound_claims on "groups" see them.
 */
export async function providerGroups(provider: Provider, claims: Claims, groupsClaim: string, userClaim: string, ctx: GroupsContext): Promise<unknown> {
  let raw = getClaim(claims, groupsClaim);
  if (provider.name === 'okta') raw = await oktaGroups(provider.okta, claims, groupsClaim, userClaim);
  else if (provider.name === 'secureauth' && typeof raw === 'string') raw = raw.split(',');
  else if (provider.name === 'ibmisam' && typeof raw === 'string') raw = raw.split(' ');
  else if (provider.name === 'gsuite' && provider.gsuite.fetchGroups) {
    try {
      raw = await workspaceGroups(provider.gsuite, ctx.googleAdminApi, apiUser(claims, userClaim));
    } catch (e) {
      throw new ClaimError(`failed to fetch groups: ${apiFailure(e).message}`);
    }
  } else if (provider.name === 'azure' && provider.fetchGroups) {
    // Every group of the signed-in user, whatever the token carries.
    try {
      raw = await graphGroups(`${ctx.microsoftGraph.replace(/\/+$/, '')}/v1.0/me/getMemberObjects`, ctx.accessToken);
    } catch (e) {
      throw new ClaimError(`failed to fetch groups: unable to fetch groups from Microsoft Graph API: ${e instanceof Error ? e.message : String(e)}`);
    }
  } else if (provider.name === 'azure' && raw === undefined) {
    const source = claimSource(claims, groupsClaim);
    try {
      raw = await graphGroups(source, ctx.accessToken);
    } catch (e) {
      throw new ClaimError(`failed to fetch groups: ${JSON.stringify(groupsClaim)} claim not found in token: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  if (raw !== undefined) claims.groups = raw;
  return raw;
}

/** The Graph URL a token's distributed claims give for its groups (OIDC Core §5.6.2). */
function claimSource(claims: Claims, groupsClaim: string): string {
  const fail = (why: string) => new ClaimError(`failed to fetch groups: unable to get claim sources: ${why}`);
  const sourceName = getClaim(claims, `/_claim_names/${groupsClaim}`);
  if (typeof sourceName !== 'string') throw fail(`unable to locate groups claim ${JSON.stringify(groupsClaim)} in _claim_names`);
  const pointer = `/_claim_sources/${sourceName}/endpoint`;
  const endpoint = getClaim(claims, pointer);
  if (endpoint === undefined) throw fail(`unable to locate ${pointer} in claims`);
  try {
    return graphURL(String(endpoint));
  } catch {
    throw fail(`unable to parse claim source URL: ${JSON.stringify(String(endpoint))}`);
  }
}

/** Azure AD Graph (retired) endpoints are asked of Microsoft Graph instead, as Vault does. */
export function graphURL(endpoint: string): string {
  const url = new URL(endpoint);
  const moved: Record<string, string> = { 'graph.windows.net': 'graph.microsoft.com', 'graph.microsoftazure.us': 'graph.microsoft.us' };
  const host = moved[url.hostname];
  if (host) {
    url.hostname = host;
    url.pathname = `/v1.0${url.pathname}`;
  }
  return url.toString();
}

/** Microsoft Graph getMemberObjects with the user's access token: the ids of every group the user is in. */
async function graphGroups(endpoint: string, accessToken: string | null): Promise<unknown[]> {
  if (!accessToken) throw new Error('token unavailable to call Microsoft Graph API');
  let res: Response;
  try {
    res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${accessToken}` },
      body: JSON.stringify({ securityEnabledOnly: false }),
    });
  } catch (e) {
    throw new Error(`unable to call Microsoft Graph API: ${e instanceof Error ? e.message : String(e)}`);
  }
  const body = await res.text();
  if (res.status !== 200) throw new Error(`failed to get groups: ${body}`);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch (e) {
    throw new Error(`unable to decode response: ${e instanceof Error ? e.message : String(e)}`);
  }
  const value = (parsed as { value?: unknown }).value;
  return Array.isArray(value) ? value : [];
}
