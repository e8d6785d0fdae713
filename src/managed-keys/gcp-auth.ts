// Google service-account credentials for Cloud KMS: the key file's JSON (given as content: a Worker
// has no files), and OAuth 2.0 access tokens from its token_uri through the JWT-bearer grant (an
// RS256 assertion signed with the service account's key). Tokens are kept, per credential, until
// five minutes before they expire. No message here ever contains key material.

import { importPKCS8, SignJWT } from 'jose';
import { toHex, utf8 } from '../crypto/encoding';
import { ManagedKeyError } from './types';

const DEFAULT_TOKEN_URI = 'https://oauth2.googleapis.com/token';
const CLOUDKMS_SCOPE = 'https://www.googleapis.com/auth/cloudkms';
const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
/** A token is renewed this long before Google says it expires. */
const RENEW_BEFORE_MS = 5 * 60_000;
const TOKEN_TIMEOUT_MS = 15_000;
const MAX_CACHED = 256;

export interface ServiceAccount {
  clientEmail: string;
  privateKeyId: string;
  privateKeyPem: string;
  tokenUri: string;
}

const bad = (why: string) => new ManagedKeyError(400, `"credentials": ${why}`);

/** The service account of a key file's JSON (entry.ts has checked client_email and private_key). */
export function parseServiceAccount(json: string): ServiceAccount {
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    throw bad('not JSON');
  }
  if (o.type !== undefined && o.type !== 'service_account') throw bad(`a key of type ${JSON.stringify(o.type)} cannot be used: give a service-account key ("type": "service_account")`);
  const text = (field: string): string => (typeof o[field] === 'string' ? (o[field] as string) : '');
  if (!text('client_email') || !text('private_key').includes('PRIVATE KEY')) throw bad('a service-account key needs client_email and a PEM private_key');
  const tokenUri = text('token_uri') || DEFAULT_TOKEN_URI;
  if (!/^https?:\/\/[^/\s]+/.test(tokenUri)) throw bad(`invalid token_uri ${JSON.stringify(tokenUri)}`);
  return { clientEmail: text('client_email'), privateKeyId: text('private_key_id'), privateKeyPem: text('private_key'), tokenUri };
}

interface Cached {
  token: string;
  renewAt: number;
}

/**
 * Tokens by a SHA-256 of the credential (email, key id, token URI and the key itself, so that a
 * wrong key under a known key id never gets another credential's token). Values, not promises:
 * a promise made in one request cannot be awaited from another in workerd.
 */
const tokens = new Map<string, Cached>();

async function cacheKey(sa: ServiceAccount): Promise<string> {
  const identity = JSON.stringify([sa.clientEmail, sa.privateKeyId, sa.tokenUri, sa.privateKeyPem, CLOUDKMS_SCOPE]);
  return toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', utf8(identity))));
}

/** Drops the cached token of a credential (Cloud KMS refused it). */
export async function forgetToken(sa: ServiceAccount): Promise<void> {
  tokens.delete(await cacheKey(sa));
}

/** A valid access token for the service account with the Cloud KMS scope. */
export async function accessToken(sa: ServiceAccount, fetcher: typeof fetch): Promise<string> {
  const key = await cacheKey(sa);
  const hit = tokens.get(key);
  if (hit && hit.renewAt > Date.now()) return hit.token;
  const { token, expiresIn } = await requestToken(sa, fetcher);
  if (tokens.size >= MAX_CACHED) {
    for (const [k, v] of tokens) if (v.renewAt <= Date.now() || tokens.size >= MAX_CACHED) tokens.delete(k);
  }
  const renewAt = Date.now() + expiresIn * 1000 - RENEW_BEFORE_MS;
  if (renewAt > Date.now()) tokens.set(key, { token, renewAt });
  return token;
}

async function assertion(sa: ServiceAccount): Promise<string> {
  let key: Awaited<ReturnType<typeof importPKCS8>>;
  try {
    key = await importPKCS8(sa.privateKeyPem, 'RS256');
  } catch {
    throw bad(`the private_key of ${sa.clientEmail} is not a PKCS#8 RSA key`);
  }
  const iat = Math.floor(Date.now() / 1000);
  return await new SignJWT({ scope: CLOUDKMS_SCOPE })
    .setProtectedHeader({ alg: 'RS256', typ: 'JWT', ...(sa.privateKeyId ? { kid: sa.privateKeyId } : {}) })
    .setIssuer(sa.clientEmail)
    .setAudience(sa.tokenUri)
    .setIssuedAt(iat)
    .setExpirationTime(iat + 3600)
    .sign(key);
}

async function requestToken(sa: ServiceAccount, fetcher: typeof fetch): Promise<{ token: string; expiresIn: number }> {
  const body = new URLSearchParams({ grant_type: GRANT_TYPE, assertion: await assertion(sa) });
  let res: Response;
  try {
    res = await fetcher(sa.tokenUri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: body.toString(),
      signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
    });
  } catch (e) {
    throw new ManagedKeyError(502, `Google's token endpoint ${sa.tokenUri} cannot be reached: ${e instanceof Error ? e.message : String(e)}`);
  }
  const text = await res.text();
  let doc: Record<string, unknown> = {};
  try {
    doc = JSON.parse(text) as Record<string, unknown>;
  } catch {
    // handled below: neither a token nor an OAuth error
  }
  if (res.ok && typeof doc.access_token === 'string' && doc.access_token !== '') {
    const expiresIn = typeof doc.expires_in === 'number' && doc.expires_in > 0 ? doc.expires_in : 3600;
    return { token: doc.access_token, expiresIn };
  }
  if (typeof doc.error === 'string') {
    // An OAuth error document: Google's own words (they never echo the assertion).
    const why = typeof doc.error_description === 'string' && doc.error_description ? `: ${doc.error_description.slice(0, 300)}` : '';
    throw new ManagedKeyError(res.status >= 500 ? 502 : 400, `Google refused a token for ${sa.clientEmail} (HTTP ${res.status}): ${doc.error}${why}`);
  }
  throw new ManagedKeyError(502, `Google's token endpoint answered HTTP ${res.status} without an access token`);
}
