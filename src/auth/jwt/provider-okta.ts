// provider_config "okta": Okta caps the groups it puts in an ID token (100 by default) and drops
// the rest without saying so. With fetch_groups, a token whose groups reach groups_cap (or that
// has none) has its user's groups read from Okta's admin API with an API token (SSWS), following
// Link-header pages. groups_filter keeps only matching group names, whichever way they came.
// Departure from Vault: besides https, org_url may be plain http on a loopback host (no network
// to protect the API token on; it lets the provider be tested against a local emulator).

import { ClaimError, getClaim, type Claims } from './claims';
import { option } from './provider-options';

export interface OktaConfig {
  orgUrl: string;
  apiToken: string;
  userIdClaim: string;
  groupsCap: number;
  groupsFilter: RegExp | null;
  fetchGroups: boolean;
}

const DEFAULT_GROUPS_CAP = 100;
/** Pages of groups followed before giving up (a Link header that loops). */
const MAX_PAGES = 100;
const LOOPBACK = /^(localhost|127(?:\.\d{1,3}){3}|\[::1\])$/i;

/** Validates an okta provider_config (Vault's Initialize); throws with the reason. */
export function parseOktaConfig(pc: Record<string, unknown>, oidcDiscoveryUrl: string): OktaConfig {
  let orgUrl = option(pc, 'org_url', 'string', '');
  const apiToken = option(pc, 'api_token', 'string', '');
  const userIdClaim = option(pc, 'user_id_claim', 'string', '');
  let groupsCap = option(pc, 'groups_cap', 'int', 0);
  const filter = option(pc, 'groups_filter', 'string', '');
  const fetchGroups = option(pc, 'fetch_groups', 'boolean', false);
  if (orgUrl === '' && oidcDiscoveryUrl !== '') {
    try {
      const u = new URL(oidcDiscoveryUrl);
      orgUrl = `${u.protocol}//${u.host}`;
    } catch {
      // A discovery URL that does not parse was refused already.
    }
  }
  if (orgUrl !== '') {
    let u: URL;
    try {
      u = new URL(orgUrl);
    } catch {
      throw new Error(`invalid org_url: parse ${JSON.stringify(orgUrl)}: invalid URL`);
    }
    if (u.host === '') throw new Error('org_url must include a host');
    if (u.protocol !== 'https:' && !(u.protocol === 'http:' && LOOPBACK.test(u.hostname))) throw new Error('org_url must use https');
  }
  if (fetchGroups) {
    if (orgUrl === '') throw new Error("'org_url' must be set in provider_config or oidc_discovery_url must be configured when fetch_groups=true");
    if (apiToken === '') throw new Error("'api_token' is required in provider_config when fetch_groups=true");
  }
  if (groupsCap < 0) throw new Error('groups_cap must be >= 0');
  if (groupsCap === 0) groupsCap = DEFAULT_GROUPS_CAP;
  let groupsFilter: RegExp | null = null;
  if (filter !== '') {
    try {
      groupsFilter = new RegExp(filter);
    } catch (e) {
      throw new Error(`invalid groups_filter regex: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return { orgUrl, apiToken, userIdClaim, groupsCap, groupsFilter, fetchGroups };
}

/** Vault's normalizeList for the groups claim (a scalar is a list of one). */
const asList = (v: unknown): unknown[] | null => (Array.isArray(v) ? v : typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean' ? [v] : null);

const filtered = (c: OktaConfig, list: unknown[]): unknown[] => (c.groupsFilter ? list.filter((g) => typeof g === 'string' && c.groupsFilter!.test(g)) : list);

/** The groups claim as Okta's provider delivers it (see the file comment). */
export async function oktaGroups(c: OktaConfig, claims: Claims, groupsClaim: string, userClaim: string): Promise<unknown> {
  const raw = getClaim(claims, groupsClaim);
  if (!c.fetchGroups) {
    if (raw === undefined) throw new ClaimError(`failed to fetch groups: ${JSON.stringify(groupsClaim)} claim not found in token`);
    const list = c.groupsFilter ? asList(raw) : null;
    return list ? filtered(c, list) : raw;
  }
  if (raw !== undefined) {
    const list = asList(raw);
    // Fewer than the cap: the token has them all.
    if (list && list.length < c.groupsCap) return c.groupsFilter ? filtered(c, list) : raw;
  }
  const user = oktaUser(c, claims, userClaim);
  try {
    return filtered(c, await fetchUserGroups(c, user));
  } catch (e) {
    throw new ClaimError(`failed to fetch groups: unable to fetch groups from Okta API: ${e instanceof Error ? e.message : String(e)}`);
  }
}

function oktaUser(c: OktaConfig, claims: Claims, userClaim: string): string {
  const claim = c.userIdClaim || userClaim;
  const fail = (why: string) => new ClaimError(`failed to fetch groups: ${why}`);
  if (claim === '') throw fail('user_id_claim is unset and role has no user_claim');
  const raw = getClaim(claims, claim);
  if (raw === undefined) throw fail(`unable to locate ${JSON.stringify(claim)} in claims for Okta user lookup`);
  if (typeof raw !== 'string') throw fail(`claim ${JSON.stringify(claim)} is not a string; cannot use for Okta user lookup`);
  if (raw === '') throw fail(`claim ${JSON.stringify(claim)} is empty; cannot use for Okta user lookup`);
  return raw;
}

/** The URL of a Link header's rel="next" entry (RFC 8288), or ''. */
export function nextLink(header: string | null): string {
  for (const part of (header ?? '').split(',')) {
    const m = /<([^>]+)>\s*;\s*rel\s*=\s*"next"/.exec(part);
    if (m) return m[1];
  }
  return '';
}

async function fetchUserGroups(c: OktaConfig, user: string): Promise<string[]> {
  let next = `${c.orgUrl.replace(/\/+$/, '')}/api/v1/users/${encodeURIComponent(user)}/groups`;
  const names: string[] = [];
  for (let page = 0; next !== ''; page++) {
    if (page >= MAX_PAGES) throw new Error(`okta API pagination exceeded ${MAX_PAGES} pages; possible circular Link header`);
    const res = await fetch(next, { headers: { accept: 'application/json', authorization: `SSWS ${c.apiToken}` } });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`okta api returned ${res.status}: ${body}`);
    let groups: { profile?: { name?: unknown } }[];
    try {
      groups = JSON.parse(body) as { profile?: { name?: unknown } }[];
      if (!Array.isArray(groups)) throw new Error('not a list of groups');
    } catch (e) {
      throw new Error(`unable to decode Okta API response: ${e instanceof Error ? e.message : String(e)}`);
    }
    for (const g of groups) if (typeof g.profile?.name === 'string' && g.profile.name !== '') names.push(g.profile.name);
    next = nextLink(res.headers.get('link'));
  }
  return names;
}
