// DR activation-token secrecy. The primary hands a secondary a payload (its address, the cluster
// id, the secondary's id and a random credential). Normally the endpoint layer response-wraps it;
// when the operator supplies the secondary's `secondary_public_key`, the payload is instead
// encrypted to that key (ECIES: ephemeral ECDH P-256, HKDF-SHA-256, AES-256-GCM), so activation
// needs no unwrap call to the primary. Only the secondary, holding the private key, can read it.
//
// Token: `cofferdr1.<ephemeral public key>.<iv>.<ciphertext>`, each part unpadded base64url.

import { concatBytes, fromBase64, fromUtf8, toBase64, toBase64Url, utf8 } from '../../crypto/encoding';
import { randomBytes } from '../../crypto/random';
import { badRequest } from '../../framework/errors';
import type { ActivationPayload } from './state';

export type { ActivationPayload } from './state';

export interface SecondaryKeyPair {
  /** Standard base64 of the uncompressed P-256 point (65 bytes), as secondary/generate-public-key returns it. */
  publicKey: string;
  /** Kept by the secondary in its local state, never sent anywhere. */
  privateKeyJwk: JsonWebKey;
}

const VERSION = 'cofferdr1';
const ECDH = { name: 'ECDH', namedCurve: 'P-256' } as const;
const POINT_BYTES = 65;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const HKDF_LABEL = utf8(`${VERSION} activation`);

const FORMAT_ERROR = `activation token is not in the expected format (${VERSION}.<key>.<iv>.<ciphertext>)`;
const DECRYPT_ERROR = "activation token could not be decrypted: it was not issued to this secondary's public key, or it was modified";

// ---- keys ----

export async function generateSecondaryKeyPair(): Promise<SecondaryKeyPair> {
  const pair = (await crypto.subtle.generateKey(ECDH, true, ['deriveBits'])) as CryptoKeyPair;
  const raw = new Uint8Array((await crypto.subtle.exportKey('raw', pair.publicKey)) as ArrayBuffer);
  const privateKeyJwk = (await crypto.subtle.exportKey('jwk', pair.privateKey)) as JsonWebKey;
  return { publicKey: toBase64(raw), privateKeyJwk };
}

/**
 * Checks an operator-supplied `secondary_public_key` (base64 of an uncompressed P-256 point) and
 * returns its bytes; 400 when it is anything else, so a bad key fails when the token is issued
 * rather than at activation.
 */
export async function validatePublicKey(b64: unknown): Promise<Uint8Array> {
  return (await importRecipient(b64)).raw;
}

async function importRecipient(b64: unknown): Promise<{ raw: Uint8Array; key: CryptoKey }> {
  const fail = () => badRequest('secondary_public_key must be the base64 encoding of an uncompressed P-256 public key (65 bytes), as secondary/generate-public-key returns it');
  if (typeof b64 !== 'string' || b64.trim() === '') throw fail();
  // Accept the URL-safe alphabet too: operators copy keys between tools.
  const raw = fromBase64(b64.trim().replace(/-/g, '+').replace(/_/g, '/'));
  if (!raw || raw.length !== POINT_BYTES || raw[0] !== 0x04) throw fail();
  const key = await importPoint(raw);
  if (!key) throw fail();
  return { raw, key };
}

/** Imports an uncompressed point; null when the platform refuses it (not on the curve). */
async function importPoint(raw: Uint8Array): Promise<CryptoKey | null> {
  try {
    return await crypto.subtle.importKey('raw', raw, ECDH, false, []);
  } catch {
    return null;
  }
}

async function importPrivate(jwk: JsonWebKey): Promise<{ raw: Uint8Array; key: CryptoKey }> {
  const fail = () => badRequest("this secondary's activation key is unusable; generate a new public key with secondary/generate-public-key");
  const x = typeof jwk?.x === 'string' ? fromBase64Url(jwk.x) : null;
  const y = typeof jwk?.y === 'string' ? fromBase64Url(jwk.y) : null;
  if (jwk?.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.d !== 'string' || x?.length !== 32 || y?.length !== 32) throw fail();
  try {
    const key = await crypto.subtle.importKey('jwk', { kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, d: jwk.d }, ECDH, false, ['deriveBits']);
    return { raw: concatBytes(new Uint8Array([0x04]), x, y), key };
  } catch {
    throw fail();
  }
}

/**
 * WebCrypto's ECDH parameters name the peer key `public`; workers-types spells that field
 * `$public` (a reserved-word artefact of its generator), so the object is typed by hand.
 */
const ecdhPeer = (peer: CryptoKey) => ({ name: 'ECDH', public: peer }) as unknown as SubtleCryptoDeriveKeyAlgorithm;

/**
 * ECDH shared secret → AES-256-GCM key. The HKDF info binds the version and both public keys, so
 * a token re-targeted at another recipient or version derives a different key and fails to open.
 */
async function deriveAesKey(privateKey: CryptoKey, publicKey: CryptoKey, ephemeral: Uint8Array, recipient: Uint8Array, usage: 'encrypt' | 'decrypt'): Promise<CryptoKey> {
  const shared = await crypto.subtle.deriveBits(ecdhPeer(publicKey), privateKey, 256);
  const ikm = await crypto.subtle.importKey('raw', shared, 'HKDF', false, ['deriveKey']);
  const info = concatBytes(HKDF_LABEL, ephemeral, recipient);
  return crypto.subtle.deriveKey({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info }, ikm, { name: 'AES-GCM', length: 256 }, false, [usage]);
}

// ---- tokens ----

export async function encryptActivation(payload: ActivationPayload, publicKeyB64: string): Promise<string> {
  const plaintext = utf8(JSON.stringify(parsePayload(payload)));
  const recipient = await importRecipient(publicKeyB64);
  const eph = (await crypto.subtle.generateKey(ECDH, true, ['deriveBits'])) as CryptoKeyPair;
  const ephRaw = new Uint8Array((await crypto.subtle.exportKey('raw', eph.publicKey)) as ArrayBuffer);
  const key = await deriveAesKey(eph.privateKey, recipient.key, ephRaw, recipient.raw, 'encrypt');
  const iv = randomBytes(IV_BYTES);
  const ct = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: utf8(VERSION) }, key, plaintext));
  return [VERSION, toBase64Url(ephRaw), toBase64Url(iv), toBase64Url(ct)].join('.');
}

/** True when `token` looks like an encrypted activation token (the wrapped form is a wrapping token). */
export const isEncryptedActivation = (token: string): boolean => token.trim().startsWith(`${VERSION}.`);

export async function decryptActivation(token: unknown, privateKeyJwk: JsonWebKey): Promise<ActivationPayload> {
  if (typeof token !== 'string') throw badRequest(FORMAT_ERROR);
  const parts = token.trim().split('.');
  if (parts.length === 4 && parts[0] !== VERSION && /^cofferdr\d+$/.test(parts[0])) {
    throw badRequest(`unsupported activation token version "${parts[0]}"; this server reads ${VERSION}`);
  }
  if (parts.length !== 4 || parts[0] !== VERSION) throw badRequest(FORMAT_ERROR);
  const [ephRaw, iv, ct] = parts.slice(1).map(fromBase64Url);
  if (ephRaw?.length !== POINT_BYTES || ephRaw[0] !== 0x04 || iv?.length !== IV_BYTES || !ct || ct.length < TAG_BYTES) throw badRequest(FORMAT_ERROR);
  const eph = await importPoint(ephRaw);
  if (!eph) throw badRequest(DECRYPT_ERROR);
  const own = await importPrivate(privateKeyJwk);
  const key = await deriveAesKey(own.key, eph, ephRaw, own.raw, 'decrypt');
  let plaintext: Uint8Array;
  try {
    plaintext = new Uint8Array(await crypto.subtle.decrypt({ name: 'AES-GCM', iv, additionalData: utf8(VERSION) }, key, ct));
  } catch {
    throw badRequest(DECRYPT_ERROR);
  }
  let json: unknown;
  try {
    json = JSON.parse(fromUtf8(plaintext));
  } catch {
    throw badRequest('activation token payload is not valid JSON');
  }
  return parsePayload(json);
}

// ---- payload ----

/** Validates an activation payload from either path; returns only the known fields. */
export function parsePayload(json: unknown): ActivationPayload {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw badRequest('activation token payload must be a JSON object');
  const o = json as Record<string, unknown>;
  const text = (field: keyof ActivationPayload, allowEmpty = false): string => {
    const v = o[field];
    if (typeof v !== 'string' || (!allowEmpty && v === '')) {
      throw badRequest(`activation token payload: ${field} must be a ${allowEmpty ? '' : 'non-empty '}string`);
    }
    return v;
  };
  const primary_api_addr = text('primary_api_addr');
  if (!isHttpUrl(primary_api_addr)) throw badRequest('activation token payload: primary_api_addr must be an http or https URL');
  const payload: ActivationPayload = {
    primary_api_addr,
    primary_cluster_addr: text('primary_cluster_addr', true),
    cluster_id: text('cluster_id'),
    secondary_id: text('secondary_id'),
    credential: text('credential'),
    expires: 0,
    token_shards: 0,
  };
  const positive = (field: 'expires' | 'token_shards', what: string): number => {
    const v = o[field];
    if (typeof v !== 'number' || !Number.isSafeInteger(v) || v <= 0) throw badRequest(`activation token payload: ${field} must be a positive integer (${what})`);
    return v;
  };
  payload.expires = positive('expires', 'unix milliseconds');
  payload.token_shards = positive('token_shards', "the primary's TOKEN_SHARDS");
  return payload;
}

function isHttpUrl(s: string): boolean {
  try {
    const u = new URL(s);
    return u.protocol === 'https:' || u.protocol === 'http:';
  } catch {
    return false;
  }
}

/** Strict unpadded base64url: anything else, including non-canonical trailing bits, is null. */
function fromBase64Url(s: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(s)) return null;
  const bytes = fromBase64(s.replace(/-/g, '+').replace(/_/g, '/'));
  // Re-encoding must give the same text, or two spellings would carry the same bytes.
  return bytes && toBase64Url(bytes) === s ? bytes : null;
}
