// Transit key derivation for derived and convergent keys (Vault's hkdf_sha256 and the legacy
// hmac-sha256-counter KDF).

import { concatBytes } from '../encoding';
import { hmac } from './hashes';

const SHA256_BYTES = 32;
const MAX_HKDF_BYTES = 255 * SHA256_BYTES; // RFC 5869 §2.3
const CONVERGENT_NONCE_BYTES = 12;

// One imported HKDF key per IKM, so repeated derivations from a version key skip the import.
const hkdfKeys = new WeakMap<Uint8Array, CryptoKey>();
const EMPTY = new Uint8Array(0);

async function importIkm(ikm: Uint8Array): Promise<CryptoKey> {
  const key = await crypto.subtle.importKey('raw', ikm, 'HKDF', false, ['deriveBits']);
  hkdfKeys.set(ikm, key);
  return key;
}

/** HKDF-SHA256 with an empty salt, info = context (WebCrypto HKDF). */
export async function hkdfSha256(ikm: Uint8Array, info: Uint8Array, length: number): Promise<Uint8Array> {
  if (!Number.isInteger(length) || length < 1 || length > MAX_HKDF_BYTES) {
    throw new Error(`HKDF-SHA256 output length must be 1..${MAX_HKDF_BYTES} bytes, got ${length}`);
  }
  const key = hkdfKeys.get(ikm) ?? (await importIkm(ikm));
  // An empty salt is, per RFC 5869, HashLen zero bytes: the same HMAC key, so Vault's nil salt matches.
  const bits = await crypto.subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: EMPTY, info }, key, length * 8);
  return new Uint8Array(bits);
}

function be32(n: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, n, false);
  return out;
}

const OUTPUT_BITS = 256;
const OUTPUT_BITS_BE32 = be32(OUTPUT_BITS);
const COUNTER_0 = be32(0);

/** Vault's legacy "hmac-sha256-counter" KDF: NIST SP 800-108 counter mode, PRF HMAC-SHA256(key),
 *  round input BE32(i from 0) ‖ context ‖ BE32(256); 32 bytes out. */
export async function counterKdfHmacSha256(key: Uint8Array, context: Uint8Array): Promise<Uint8Array> {
  // 256 output bits from a 256-bit PRF is exactly one round, the one with counter 0.
  return hmac('sha2-256', key, concatBytes(COUNTER_0, context, OUTPUT_BITS_BE32));
}

/** Convergent encryption v3 nonce: first 12 bytes of HMAC-SHA256(nonceKey, plaintext). */
export async function convergentNonce(nonceKey: Uint8Array, plaintext: Uint8Array): Promise<Uint8Array> {
  return (await hmac('sha2-256', nonceKey, plaintext)).slice(0, CONVERGENT_NONCE_BYTES);
}
