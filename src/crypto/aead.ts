// AES-256-GCM with a random 96-bit nonce, over WebCrypto. Output: nonce || ciphertext || tag.

import { concatBytes } from './encoding';
import { randomBytes } from './random';

const NONCE_BYTES = 12;
const keyCache = new WeakMap<Uint8Array, Promise<CryptoKey>>();

/** Imports raw key bytes once per Uint8Array instance (keys are long-lived objects). */
function importKey(raw: Uint8Array): Promise<CryptoKey> {
  let key = keyCache.get(raw);
  if (!key) {
    key = crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']);
    keyCache.set(raw, key);
  }
  return key;
}

export async function aesGcmSeal(key: Uint8Array, plaintext: Uint8Array, aad: Uint8Array): Promise<Uint8Array> {
  const nonce = randomBytes(NONCE_BYTES);
  const ct = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv: nonce, additionalData: aad },
    await importKey(key),
    plaintext,
  );
  return concatBytes(nonce, new Uint8Array(ct));
}

/** Returns null when authentication fails (wrong key, tampered data or wrong AAD). */
export async function aesGcmOpen(key: Uint8Array, sealed: Uint8Array, aad: Uint8Array): Promise<Uint8Array | null> {
  if (sealed.length < NONCE_BYTES + 16) return null;
  try {
    const pt = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: sealed.subarray(0, NONCE_BYTES), additionalData: aad },
      await importKey(key),
      sealed.subarray(NONCE_BYTES),
    );
    return new Uint8Array(pt);
  } catch {
    return null;
  }
}
