// AES-256-GCM with a random 96-bit nonce, over WebCrypto. Output: nonce || ciphertext || tag.

import { concatBytes } from './encoding';
import { randomBytes } from './random';

const NONCE_BYTES = 12;
// Imported keys are cached as CryptoKey objects, not promises: awaiting a promise created while
// serving an earlier request costs a trip through the event loop in workerd.
const keyCache = new WeakMap<Uint8Array, CryptoKey>();

async function importKey(raw: Uint8Array): Promise<CryptoKey> {
  let key = keyCache.get(raw);
  if (!key) {
    key = await crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']);
    keyCache.set(raw, key);
  }
  return key;
}

export async function aesGcmSeal(key: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Promise<Uint8Array> {
  const nonce = randomBytes(NONCE_BYTES);
  const cryptoKey = keyCache.get(key) ?? (await importKey(key));
  const ct = await crypto.subtle.encrypt({ name: 'AES-GCM', iv: nonce, additionalData: aad }, cryptoKey, plaintext);
  return concatBytes(nonce, new Uint8Array(ct));
}

/** Returns null when authentication fails (wrong key, tampered data or wrong AAD). */
export async function aesGcmOpen(key: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Promise<Uint8Array | null> {
  if (sealed.length < NONCE_BYTES + 16) return null;
  const cryptoKey = keyCache.get(key) ?? (await importKey(key));
  try {
    const pt = await crypto.subtle.decrypt({ name: 'AES-GCM', iv: sealed.subarray(0, NONCE_BYTES), additionalData: aad }, cryptoKey, sealed.subarray(NONCE_BYTES));
    return new Uint8Array(pt);
  } catch {
    return null;
  }
}
