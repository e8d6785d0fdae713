// Entra ID (Azure AD) access tokens for Key Vault: the client-credentials grant at the tenant's v2.0
// token endpoint, cached per credential until shortly before they expire. The cache lives at module
// level (one per isolate) and holds tokens, never promises (workerd forbids sharing I/O between
// requests); its keys are SHA-256 digests of the credential, so no secret is ever a key or a log line.

import { toHex } from '../crypto/encoding';
import { sha256 } from '../crypto/hmac';
import type { AzureTarget } from './azure-endpoints';
import { ManagedKeyError, type AzureKeyVaultConfig, type BackendDeps } from './types';

interface CachedToken {
  token: string;
  /** Epoch ms after which a new token is asked for. */
  refreshAt: number;
}

const tokens = new Map<string, CachedToken>();
const MAX_CACHED = 256;
/** A token is renewed this long before it expires (at most half its lifetime). */
const RENEW_MARGIN_S = 300;

export interface AzureToken {
  token: string;
  /** The cache entry's key, to drop it when the vault refuses the token. */
  cacheKey: string;
  fromCache: boolean;
}

async function cacheKeyOf(config: AzureKeyVaultConfig, target: AzureTarget): Promise<string> {
  return toHex(await sha256(JSON.stringify([target.authority, config.tenant_id, config.client_id, target.scope, config.client_secret])));
}

/** Forgets a cached token (the vault answered 401 to it). */
export function forgetToken(cacheKey: string): void {
  tokens.delete(cacheKey);
}

/** Empties the cache (tests). */
export function clearAzureTokenCache(): void {
  tokens.clear();
}

/** A bearer token for the vault's resource: from the cache while it is fresh, else from Entra ID. */
export async function azureToken(config: AzureKeyVaultConfig, target: AzureTarget, fetchFn: BackendDeps['fetch']): Promise<AzureToken> {
  const cacheKey = await cacheKeyOf(config, target);
  const hit = tokens.get(cacheKey);
  if (hit && Date.now() < hit.refreshAt) return { token: hit.token, cacheKey, fromCache: true };
  tokens.delete(cacheKey);

  const { token, expiresIn } = await requestToken(config, target, fetchFn);
  const margin = Math.min(RENEW_MARGIN_S, expiresIn / 2);
  if (tokens.size >= MAX_CACHED) evict();
  tokens.set(cacheKey, { token, refreshAt: Date.now() + (expiresIn - margin) * 1000 });
  return { token, cacheKey, fromCache: false };
}

/** Drops stale entries, then the oldest ones, until there is room. */
function evict(): void {
  const now = Date.now();
  for (const [k, v] of tokens) if (v.refreshAt <= now) tokens.delete(k);
  for (const k of tokens.keys()) {
    if (tokens.size < MAX_CACHED) break;
    tokens.delete(k);
  }
}

interface TokenAnswer {
  token_type?: string;
  access_token?: string;
  expires_in?: number | string;
  error?: string;
  error_description?: string;
  error_codes?: number[];
}

async function requestToken(config: AzureKeyVaultConfig, target: AzureTarget, fetchFn: BackendDeps['fetch']): Promise<{ token: string; expiresIn: number }> {
  const form = new URLSearchParams({ grant_type: 'client_credentials', client_id: config.client_id, client_secret: config.client_secret, scope: target.scope });
  let res: Response;
  try {
    res = await fetchFn(target.tokenUrl, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: form.toString() });
  } catch (e) {
    throw new ManagedKeyError(502, `Azure AD cannot be reached at ${target.authority}: ${scrub(e instanceof Error ? e.message : String(e), config)}`);
  }
  const text = await res.text();
  let answer: TokenAnswer;
  try {
    answer = JSON.parse(text) as TokenAnswer;
  } catch {
    throw new ManagedKeyError(502, `Azure AD answered the token request with ${res.status} and a body that is not JSON`);
  }
  if (!res.ok || answer.error) throw aadError(res.status, answer, config);
  const expiresIn = Number(answer.expires_in);
  if (typeof answer.access_token !== 'string' || answer.access_token === '' || String(answer.token_type).toLowerCase() !== 'bearer' || !(expiresIn > 0)) {
    throw new ManagedKeyError(502, 'Azure AD answered the token request without a bearer access token and its lifetime');
  }
  return { token: answer.access_token, expiresIn };
}

/** What the AADSTS codes that wrong configurations produce mean. */
const AADSTS_MEANING: Readonly<Record<number, string>> = Object.freeze({
  7000215: 'invalid client secret',
  7000222: 'the client secret has expired',
  700016: 'unknown client: no such application in the tenant',
  90002: 'unknown tenant',
  900023: 'the tenant id is not valid',
  500011: 'the Key Vault resource is not known in the tenant (wrong environment or resource?)',
  1002012: 'the scope is not valid',
});

/**
 * Entra ID's error document ({error, error_description, error_codes}) as a 400 naming its codes
 * (a 502 when Entra ID itself failed). The description's first line is kept when the code is not
 * one of the known ones; the secret is scrubbed from it all the same.
 */
function aadError(status: number, answer: TokenAnswer, config: AzureKeyVaultConfig): ManagedKeyError {
  const code = Array.isArray(answer.error_codes) && typeof answer.error_codes[0] === 'number' ? answer.error_codes[0] : null;
  const known = code !== null ? AADSTS_MEANING[code] : undefined;
  const described = (answer.error_description ?? '').split(/\r?\n/)[0].trim();
  const why = known ?? (described || `status ${status}`);
  const codes = [answer.error, code !== null ? `AADSTS${code}` : null].filter(Boolean).join(', ');
  const message = `Azure AD refused the token request of client ${JSON.stringify(config.client_id)} in tenant ${JSON.stringify(config.tenant_id)}: ${why}${codes ? ` (${codes})` : ''}`;
  return new ManagedKeyError(status >= 500 || status === 429 ? 502 : 400, scrub(message, config));
}

/** Removes the client secret from text that might echo a request. */
export function scrub(text: string, config: AzureKeyVaultConfig): string {
  return config.client_secret ? text.split(config.client_secret).join('[redacted]') : text;
}
