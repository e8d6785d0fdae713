// Where the keys that verify a JWT come from: the configured PEM public keys, a JWKS URL (or
// several, jwks_pairs), or the jwks_uri of an OIDC discovery document. Remote documents are
// fetched lazily and kept until the config changes: a key set is refetched when no key of it
// verifies a token (unknown kid, rotated key), never on a timer, as Vault's remote key sets do.
// Caches are keyed by the config's version, which every config write changes.

import { pemBlocks, toPem } from '../../crypto/pem';
import {
  compactVerify,
  createLocalJWKSet,
  decodeProtectedHeader,
  errors,
  exportJWK,
  importSPKI,
  importX509,
  type CompactVerifyGetKey,
  type CompactVerifyResult,
  type JSONWebKeySet,
  type JWK,
} from 'jose';
import { AsnConvert } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, SubjectPublicKeyInfo } from '@peculiar/asn1-x509';
import type { JwtConfig } from './config';

/** Every asymmetric signing algorithm a JWT may use here (Vault's list; HMAC and none never). */
export const ASYMMETRIC_ALGS = ['RS256', 'RS384', 'RS512', 'ES256', 'ES384', 'ES512', 'PS256', 'PS384', 'PS512', 'EdDSA'];

/** A signature failure; the message is what follows "error verifying token signature: ". */
export class SignatureError extends Error {}

/** The members of an OIDC discovery document Coffer uses (the whole document is in `raw`). */
export interface DiscoveryDocument {
  issuer: string;
  jwks_uri: string;
  authorization_endpoint?: string;
  token_endpoint?: string;
  userinfo_endpoint?: string;
  raw: Record<string, unknown>;
}

/** A parsed key set: jose's key getter over its keys. */
export type KeySet = CompactVerifyGetKey;

interface CacheEntry {
  staticKeys?: KeySet;
  /** Parsed key sets by URL. */
  remote: Map<string, KeySet>;
  discovery?: DiscoveryDocument;
  /**
   * Tokens whose signature verified under this config: the same bytes verify the same way, and
   * clients often log in with one token many times (a CI job, a pod's service account token).
   * The claims are still checked on every login.
   */
  verified: Map<string, CompactVerifyResult>;
}

const MAX_VERIFIED = 1_000;

function rememberVerified(entry: CacheEntry, token: string, result: CompactVerifyResult): CompactVerifyResult {
  if (entry.verified.size >= MAX_VERIFIED) entry.verified.delete(entry.verified.keys().next().value as string);
  entry.verified.set(token, result);
  return result;
}

// Only settled values are cached (never promises), so no request waits on another one's I/O.
const cache = new Map<string, CacheEntry>();
const MAX_CACHED_CONFIGS = 64;

function entryFor(version: string): CacheEntry {
  let entry = cache.get(version);
  if (!entry) {
    entry = { remote: new Map(), verified: new Map() };
    cache.set(version, entry);
    // Old versions are never used again; drop the oldest once there are many.
    while (cache.size > MAX_CACHED_CONFIGS) cache.delete(cache.keys().next().value as string);
  }
  return entry;
}

const FETCH_TIMEOUT_MS = 10_000;

async function fetchJSON(url: string): Promise<unknown> {
  let res: Response;
  try {
    res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(FETCH_TIMEOUT_MS) });
  } catch (e) {
    throw new Error(`request to ${url} failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  const body = await res.text();
  if (res.status !== 200) throw new Error(`${res.status} ${res.statusText}: ${body.slice(0, 200)}`);
  try {
    return JSON.parse(body);
  } catch {
    throw new Error(`response from ${url} is not JSON`);
  }
}

/** Fetches and parses a JWKS document (throws on a fetch failure or a malformed set). */
export async function fetchKeySet(url: string): Promise<KeySet> {
  return createLocalJWKSet((await fetchJSON(url)) as JSONWebKeySet);
}

/** Fetches `<url>/.well-known/openid-configuration`; its issuer must be `url` itself (as go-oidc demands). */
export async function fetchDiscovery(url: string): Promise<DiscoveryDocument> {
  const doc = await fetchJSON(`${url.replace(/\/+$/, '')}/.well-known/openid-configuration`);
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error('discovery document is not a JSON object');
  const raw = doc as Record<string, unknown>;
  if (raw.issuer !== url) throw new Error(`issuer did not match the issuer returned by provider, expected ${JSON.stringify(url)} got ${JSON.stringify(raw.issuer)}`);
  if (typeof raw.jwks_uri !== 'string' || raw.jwks_uri === '') throw new Error('discovery document has no jwks_uri');
  const str = (k: string) => (typeof raw[k] === 'string' ? (raw[k] as string) : undefined);
  return {
    issuer: url,
    jwks_uri: raw.jwks_uri,
    authorization_endpoint: str('authorization_endpoint'),
    token_endpoint: str('token_endpoint'),
    userinfo_endpoint: str('userinfo_endpoint'),
    raw,
  };
}

/**
 * Stores what a config write fetched under the new version, so the first logins after a write
 * do not fetch the same documents again.
 */
export function primeCache(version: string, docs: { discovery?: DiscoveryDocument; keySets?: Map<string, KeySet> }): void {
  const entry = entryFor(version);
  if (docs.discovery) entry.discovery = docs.discovery;
  for (const [url, set] of docs.keySets ?? []) entry.remote.set(url, set);
}

/** The config's discovery document, fetched once per config version. */
export async function discoveryDocument(config: JwtConfig): Promise<DiscoveryDocument> {
  const entry = entryFor(config.version);
  if (!entry.discovery) entry.discovery = await fetchDiscovery(config.oidcDiscoveryUrl);
  return entry.discovery;
}

// ---- PEM public keys ----

const PEM_RE = /-----BEGIN ([A-Z0-9 ]+)-----([\s\S]*?)-----END \1-----/;
const RSA_ENCRYPTION = '1.2.840.113549.1.1.1';
// Import algorithms to try, one per key kind; the JWK exported afterwards serves every alg of its kind.
const IMPORT_ALGS = ['RS256', 'PS256', 'ES256', 'ES384', 'ES512', 'EdDSA'];

/**
 * A PEM public key (PKIX "PUBLIC KEY", PKCS#1 "RSA PUBLIC KEY" or a "CERTIFICATE") as a JWK,
 * the forms Vault's certutil.ParsePublicKeyPEM accepts. Throws with Vault's message.
 */
export async function pemToJwk(pem: string): Promise<JWK> {
  const m = PEM_RE.exec(pem.trim());
  if (!m) throw new Error('data does not contain any valid public keys');
  let [, label] = m;
  let text = m[0];
  if (label === 'RSA PUBLIC KEY') {
    // PKCS#1 wraps into a SubjectPublicKeyInfo (rsaEncryption, NULL parameters).
    const der = pemBlocks(m[0])[0]?.der;
    if (!der) throw new Error('data does not contain any valid public keys');
    const spki = new SubjectPublicKeyInfo({
      algorithm: new AlgorithmIdentifier({ algorithm: RSA_ENCRYPTION, parameters: new Uint8Array([5, 0]).buffer }),
      subjectPublicKey: new Uint8Array(der).buffer,
    });
    text = toPem('PUBLIC KEY', AsnConvert.serialize(spki));
    label = 'PUBLIC KEY';
  }
  if (label !== 'PUBLIC KEY' && label !== 'CERTIFICATE') throw new Error('data does not contain any valid public keys');
  for (const alg of IMPORT_ALGS) {
    try {
      const key = label === 'CERTIFICATE' ? await importX509(text, alg, { extractable: true }) : await importSPKI(text, alg, { extractable: true });
      const jwk = await exportJWK(key);
      return { kty: jwk.kty, n: jwk.n, e: jwk.e, crv: jwk.crv, x: jwk.x, y: jwk.y };
    } catch {
      // Not this kind of key: try the next.
    }
  }
  throw new Error('data does not contain any valid public keys');
}

// ---- verification ----

/** Verifies with one key set; null when no key of it verifies the token. */
async function verifyWith(keys: KeySet, token: string): Promise<CompactVerifyResult | null> {
  const options = { algorithms: ASYMMETRIC_ALGS };
  try {
    return await compactVerify(token, keys, options);
  } catch (e) {
    // Several keys fit (no kid, or a repeated one): jose leaves trying them to the caller.
    if (e instanceof errors.JWKSMultipleMatchingKeys) {
      for await (const key of e) {
        try {
          return await compactVerify(token, key, options);
        } catch {
          // Next candidate.
        }
      }
    }
    return null;
  }
}

async function staticKeys(config: JwtConfig): Promise<KeySet> {
  const entry = entryFor(config.version);
  if (!entry.staticKeys) {
    const local = createLocalJWKSet({ keys: await Promise.all(config.jwtValidationPubkeys.map(pemToJwk)) });
    // PEM keys have no kid: every key of the token's kind is tried, whatever kid it names.
    entry.staticKeys = (header, token) => local({ ...header, kid: undefined }, token);
  }
  return entry.staticKeys;
}

/** The JWKS URLs this config verifies against. */
async function remoteURLs(config: JwtConfig): Promise<string[]> {
  if (config.jwksUrl) return [config.jwksUrl];
  if (config.jwksPairs.length > 0) return config.jwksPairs.map((p) => p.jwksUrl);
  if (config.oidcDiscoveryUrl) {
    try {
      return [(await discoveryDocument(config)).jwks_uri];
    } catch (e) {
      throw new SignatureError(`fetching keys oidc: get keys failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return [];
}

/** The cached key set of `url`, fetched when missing or when `refresh`; says whether it fetched. */
async function remoteSet(entry: CacheEntry, url: string, refresh: boolean): Promise<{ set: KeySet; fetched: boolean }> {
  const cached = refresh ? undefined : entry.remote.get(url);
  if (cached) return { set: cached, fetched: false };
  let set: KeySet;
  try {
    set = await fetchKeySet(url);
  } catch (e) {
    throw new SignatureError(`fetching keys oidc: get keys failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  entry.remote.set(url, set);
  return { set, fetched: true };
}

/**
 * Verifies the token's signature against the config's keys (any asymmetric algorithm; the
 * allow-list is checked afterwards, as Vault does). Throws SignatureError.
 */
export async function verifySignature(config: JwtConfig, token: string): Promise<CompactVerifyResult> {
  // none and HMAC never verify against public keys; refusing them here also keeps jose from
  // rejecting inside its own promise chain (reported as unhandled under workerd).
  let alg: unknown;
  try {
    alg = decodeProtectedHeader(token).alg;
  } catch (e) {
    throw new SignatureError(`malformed jwt: ${e instanceof Error ? e.message : String(e)}`);
  }
  if (typeof alg !== 'string' || !ASYMMETRIC_ALGS.includes(alg)) {
    throw new SignatureError(config.jwtValidationPubkeys.length > 0 ? 'no known key successfully validated the token signature' : 'failed to verify id token signature');
  }
  const entry = entryFor(config.version);
  const known = entry.verified.get(token);
  if (known) return known;
  if (config.jwtValidationPubkeys.length > 0) {
    const result = await verifyWith(await staticKeys(config), token);
    if (!result) throw new SignatureError('no known key successfully validated the token signature');
    return rememberVerified(entry, token, result);
  }
  const urls = await remoteURLs(config);
  const fresh = new Set<string>();
  for (const url of urls) {
    const { set, fetched } = await remoteSet(entry, url, false);
    if (fetched) fresh.add(url);
    const result = await verifyWith(set, token);
    if (result) return rememberVerified(entry, token, result);
  }
  // A cached set that verifies nothing may be stale (a new kid, a rotated key): refetch it once.
  for (const url of urls) {
    if (fresh.has(url)) continue;
    const result = await verifyWith((await remoteSet(entry, url, true)).set, token);
    if (result) return rememberVerified(entry, token, result);
  }
  throw new SignatureError('failed to verify id token signature');
}
