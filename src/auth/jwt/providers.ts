// provider_config: identity providers whose group claims need handling of their own (Vault's
// custom providers). SecureAuth sends groups as one comma-separated string, IBM ISAM as one
// space-separated string, and Azure leaves them out of a token past its group limit, pointing at
// Microsoft Graph instead (OIDC distributed claims), where they are read with the access token of
// the OIDC code exchange. Providers that need credentials of their own (Google Workspace, Okta)
// are refused when the config is written rather than accepted and ignored.

import { ClaimError, getClaim, type Claims } from './claims';

export type ProviderName = 'azure' | 'ibmisam' | 'secureauth';

const SUPPORTED = new Set<string>(['azure', 'ibmisam', 'secureauth']);
/** Vault's other providers: known, but not available here. */
const UNSUPPORTED = new Set<string>(['gsuite', 'okta', 'kubernetes']);

/** Why a provider_config cannot be used, in Vault's words where it has them. */
export class ProviderConfigError extends Error {}

/** The provider a config names, or null without provider_config. Throws ProviderConfigError. */
export function configuredProvider(pc: Record<string, unknown>): ProviderName | null {
  if (Object.keys(pc).length === 0) return null;
  const name = pc.provider;
  if (typeof name !== 'string') throw new ProviderConfigError("'provider' field not found in provider_config");
  if (UNSUPPORTED.has(name)) throw new ProviderConfigError(`provider ${JSON.stringify(name)} is not supported by this server`);
  if (!SUPPORTED.has(name)) throw new ProviderConfigError(`provider ${JSON.stringify(name)} not found in custom providers`);
  if (name === 'azure' && pc.fetch_groups !== undefined && pc.fetch_groups !== false) {
    // Reading every group from graph.microsoft.com regardless of the token is not built; the
    // groups a token leaves out are still read from its distributed claims.
    throw new ProviderConfigError(`error initializing "azure" provider_config: fetch_groups is not supported by this server`);
  }
  return name as ProviderName;
}

export interface GroupsContext {
  /** The OIDC code exchange's access token; null for JWT logins (no token to call APIs with). */
  accessToken: string | null;
}

/**
 * The groups claim as the provider delivers it (before Vault's list normalisation). Provider
 * results also replace the "groups" claim, as in Vault, so bound_claims on "groups" see them.
 */
export async function providerGroups(provider: ProviderName, claims: Claims, groupsClaim: string, ctx: GroupsContext): Promise<unknown> {
  let raw = getClaim(claims, groupsClaim);
  if (provider === 'secureauth' && typeof raw === 'string') raw = raw.split(',');
  else if (provider === 'ibmisam' && typeof raw === 'string') raw = raw.split(' ');
  else if (provider === 'azure' && raw === undefined) {
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
