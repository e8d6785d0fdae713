// Pending OIDC logins: what auth_url started and the callback finishes. Vault keeps them in
// memory; here they live in the mount's storage (a Durable Object may be evicted between the two
// steps, and the Mount DO serialises every write, so a state is consumed exactly once).
//
// Layout: `oidc/state/<state>` holds the request; `oidc/expiry/<expiresAt>/<state>` indexes it
// by expiry time, so a sweep reads only entries that are due, oldest first.

import { toBase64Url, utf8 } from '../../crypto/encoding';
import { randomBase62 } from '../../crypto/random';
import { getJSON, putJSON, type Storage } from '../../framework/storage';

/** How long a started login may take (Vault: 10 minutes). */
export const OIDC_REQUEST_TTL_MS = 10 * 60 * 1000;
/** At most this many expired entries are removed per sweep (bounds the work of one auth_url). */
const SWEEP_LIMIT = 100;

const STATE_PREFIX = 'oidc/state/';
const EXPIRY_PREFIX = 'oidc/expiry/';

export interface PendingRequest {
  state: string;
  nonce: string;
  /** PKCE code verifier; absent in the implicit (id_token) flow. */
  codeVerifier?: string;
  role: string;
  redirectUri: string;
  /** The client_nonce given to auth_url ("" if none): the callback must repeat it. */
  clientNonce: string;
  /** Seconds; 0 when the role sets no max_age. */
  maxAge: number;
  /** Audiences the ID token must include one of (the role's bound_audiences; empty: no check). */
  audiences: string[];
  createdAt: number;
  expiresAt: number;
  /** Filled in by a form_post callback, used by the GET callback that follows (code=no_code). */
  code?: string;
  idToken?: string;
}

/** `st_` + 20 base62 characters (Vault's state format). */
export const newState = (): string => `st_${randomBase62(20)}`;
/** `n_` + 20 base62 characters (Vault's nonce format). */
export const newNonce = (): string => `n_${randomBase62(20)}`;
/** A PKCE code verifier: 43 base62 characters (RFC 7636 allows 43..128 unreserved characters). */
export const newCodeVerifier = (): string => randomBase62(43);

/** The S256 code challenge: base64url(sha256(verifier)) without padding. */
export async function codeChallenge(verifier: string): Promise<string> {
  return toBase64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', utf8(verifier))));
}

// Zero-padded so the index sorts by time as strings do.
const expiryKey = (p: Pick<PendingRequest, 'expiresAt' | 'state'>) => `${EXPIRY_PREFIX}${String(p.expiresAt).padStart(15, '0')}/${p.state}`;
/** States are base62 with fixed prefixes; anything else cannot name a stored request. */
const validState = (state: string) => /^st_[A-Za-z0-9]{20}$/.test(state);

export async function savePending(storage: Storage, p: PendingRequest, isNew: boolean): Promise<void> {
  await putJSON(storage, STATE_PREFIX + p.state, p);
  if (isNew) await storage.put(expiryKey(p), new Uint8Array(0));
}

async function remove(storage: Storage, p: Pick<PendingRequest, 'expiresAt' | 'state'>): Promise<void> {
  await storage.delete(STATE_PREFIX + p.state);
  await storage.delete(expiryKey(p));
}

/** The live request for `state`, or null (unknown or expired; an expired one is deleted). */
export async function findPending(storage: Storage, state: string, now = Date.now()): Promise<PendingRequest | null> {
  if (!validState(state)) return null;
  const p = await getJSON<PendingRequest>(storage, STATE_PREFIX + state);
  if (!p) return null;
  if (p.expiresAt <= now) {
    await remove(storage, p);
    return null;
  }
  return p;
}

/** Finds and deletes the request: a state is good for one callback, whatever its outcome. */
export async function takePending(storage: Storage, state: string, now = Date.now()): Promise<PendingRequest | null> {
  const p = await findPending(storage, state, now);
  if (p) await remove(storage, p);
  return p;
}

/** Deletes requests that expired (oldest first, a bounded number per call). */
export async function sweepExpired(storage: Storage, now = Date.now()): Promise<number> {
  let removed = 0;
  for (const key of await storage.scan(EXPIRY_PREFIX, '', SWEEP_LIMIT)) {
    const [at, state] = key.slice(EXPIRY_PREFIX.length).split('/');
    if (Number(at) > now) break;
    await remove(storage, { expiresAt: Number(at), state });
    removed++;
  }
  return removed;
}
