// One Key Vault REST call with a bearer token: a cached token the vault refuses (401) is dropped and
// the call made once more with a new one; throttling (429) is waited out a couple of times, as
// Retry-After asks; Key Vault's error document ({"error":{"code","message","innererror"}}) becomes
// a ManagedKeyError naming its code (KeyNotFound: ManagedKeyMissing).

import type { AzureTarget } from './azure-endpoints';
import { azureToken, forgetToken, scrub } from './azure-token';
import { ManagedKeyError, ManagedKeyMissing, type AzureKeyVaultConfig, type BackendDeps } from './types';

export interface VaultContext {
  config: AzureKeyVaultConfig;
  target: AzureTarget;
  fetch: BackendDeps['fetch'];
}

interface KeyVaultErrorDocument {
  error?: { code?: string; message?: string; innererror?: { code?: string } | null; innerError?: { code?: string } | null };
}

const THROTTLE_RETRIES = 2;
/** Longest wait for one Retry-After (a Worker request should not stall for long). */
const MAX_RETRY_AFTER_MS = 10_000;
const DEFAULT_RETRY_AFTER_MS = 1_000;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Retry-After in seconds (or an HTTP date), bounded. */
function retryAfterMs(res: Response): number {
  const raw = res.headers.get('retry-after');
  if (!raw) return DEFAULT_RETRY_AFTER_MS;
  const seconds = Number(raw);
  const ms = Number.isFinite(seconds) ? seconds * 1000 : Date.parse(raw) - Date.now();
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, Number.isFinite(ms) ? ms : DEFAULT_RETRY_AFTER_MS));
}

/** `what` names the operation in messages ("read key", "sign with key"). */
export async function vaultCall<T>(ctx: VaultContext, what: string, method: 'GET' | 'POST', url: string, body?: unknown): Promise<T> {
  let res = await send(ctx, method, url, body, false);
  for (let attempt = 0; res.status === 429 && attempt < THROTTLE_RETRIES; attempt++) {
    await res.body?.cancel();
    await sleep(retryAfterMs(res));
    res = await send(ctx, method, url, body, false);
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : {};
  } catch {
    throw new ManagedKeyError(502, `Azure Key Vault answered ${res.status} to ${what} ${subject(ctx)} with a body that is not JSON`);
  }
  if (res.ok) return parsed as T;
  throw vaultError(ctx, what, res.status, parsed as KeyVaultErrorDocument);
}

/** Sends once; a 401 to a token from the cache is retried with a fresh token. */
async function send(ctx: VaultContext, method: string, url: string, body: unknown, retried: boolean): Promise<Response> {
  const auth = await azureToken(ctx.config, ctx.target, ctx.fetch);
  let res: Response;
  try {
    res = await ctx.fetch(url, {
      method,
      headers: { authorization: `Bearer ${auth.token}`, accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new ManagedKeyError(502, `Azure Key Vault cannot be reached at ${ctx.target.vaultUrl}: ${scrub(e instanceof Error ? e.message : String(e), ctx.config)}`);
  }
  if (res.status === 401) {
    forgetToken(auth.cacheKey);
    if (auth.fromCache && !retried) {
      await res.body?.cancel();
      return send(ctx, method, url, body, true);
    }
  }
  return res;
}

const subject = (ctx: VaultContext) => `key ${JSON.stringify(ctx.config.key_name)} in vault ${JSON.stringify(ctx.config.vault_name)}`;

function vaultError(ctx: VaultContext, what: string, status: number, doc: KeyVaultErrorDocument): ManagedKeyError {
  const code = typeof doc.error?.code === 'string' ? doc.error.code : '';
  const inner = doc.error?.innererror?.code ?? doc.error?.innerError?.code ?? '';
  const detail = typeof doc.error?.message === 'string' && doc.error.message ? doc.error.message : `status ${status}`;
  const codes = [code, inner].filter(Boolean).join('/');
  const message = scrub(`Azure Key Vault refused to ${what} ${subject(ctx)}: ${detail}${codes ? ` (${codes}, HTTP ${status})` : ` (HTTP ${status})`}`, ctx.config);
  if (status === 404 && code === 'KeyNotFound') return new ManagedKeyMissing(message);
  // The cloud failing or still throttling after the retries is not the configuration's fault.
  if (status >= 500 || status === 429) return new ManagedKeyError(502, message);
  return new ManagedKeyError(400, message);
}
