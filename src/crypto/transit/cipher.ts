// Transit's AEAD key types. Payload layout (Vault): nonce(12) ‖ ciphertext ‖ tag(16).
// AES-GCM over WebCrypto; ChaCha20-Poly1305 (RFC 8439) over node:crypto, which workerd has and
// WebCrypto does not.

import { createCipheriv, createDecipheriv } from 'node:crypto';
import { concatBytes } from '../encoding';

export type CipherName = 'aes128-gcm96' | 'aes256-gcm96' | 'chacha20-poly1305';

export const NONCE_LENGTH = 12;
const TAG_LENGTH = 16;

export function cipherKeyLength(c: CipherName): number {
  return c === 'aes128-gcm96' ? 16 : 32;
}

function checkKey(c: CipherName, key: Uint8Array): void {
  const want = cipherKeyLength(c);
  if (key.length !== want) throw new Error(`${c} key must be ${want} bytes, got ${key.length}`);
}

// Cache the CryptoKey (not the promise): awaiting an old promise costs an event-loop trip.
const aesKeys = new WeakMap<Uint8Array, CryptoKey>();

async function importAes(raw: Uint8Array): Promise<CryptoKey> {
  const key = await crypto.subtle.importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']);
  aesKeys.set(raw, key);
  return key;
}

const asBuffer = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/** nonce(12) ‖ ciphertext ‖ tag(16): Vault's transit payload layout. Throws if key/nonce length is wrong. */
export async function seal(
  c: CipherName,
  key: Uint8Array,
  nonce: Uint8Array,
  plaintext: Uint8Array,
  aad: Uint8Array,
): Promise<Uint8Array> {
  checkKey(c, key);
  if (nonce.length !== NONCE_LENGTH) throw new Error(`nonce must be ${NONCE_LENGTH} bytes, got ${nonce.length}`);
  if (c === 'chacha20-poly1305') {
    const cipher = createCipheriv('chacha20-poly1305', asBuffer(key), asBuffer(nonce), { authTagLength: TAG_LENGTH });
    cipher.setAAD(asBuffer(aad), { plaintextLength: plaintext.length });
    return concatBytes(nonce, cipher.update(asBuffer(plaintext)), cipher.final(), cipher.getAuthTag());
  }
  const cryptoKey = aesKeys.get(key) ?? (await importAes(key));
  const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv: nonce, additionalData: aad }, cryptoKey, plaintext);
  return concatBytes(nonce, new Uint8Array(sealed));
}

/** null when the payload is too short or authentication fails (wrong key, AAD, tampering).
 *  A key of the wrong length is a caller bug and throws, as in seal. */
export async function open(
  c: CipherName,
  key: Uint8Array,
  payload: Uint8Array,
  aad: Uint8Array,
): Promise<Uint8Array | null> {
  checkKey(c, key);
  if (payload.length < NONCE_LENGTH + TAG_LENGTH) return null;
  const nonce = payload.subarray(0, NONCE_LENGTH);
  if (c === 'chacha20-poly1305') {
    const body = payload.subarray(NONCE_LENGTH, payload.length - TAG_LENGTH);
    try {
      const decipher = createDecipheriv('chacha20-poly1305', asBuffer(key), asBuffer(nonce), {
        authTagLength: TAG_LENGTH,
      });
      decipher.setAuthTag(asBuffer(payload.subarray(payload.length - TAG_LENGTH)));
      decipher.setAAD(asBuffer(aad), { plaintextLength: body.length });
      return concatBytes(decipher.update(asBuffer(body)), decipher.final());
    } catch {
      return null;
    }
  }
  const cryptoKey = aesKeys.get(key) ?? (await importAes(key));
  try {
    const pt = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: nonce, additionalData: aad },
      cryptoKey,
      payload.subarray(NONCE_LENGTH),
    );
    return new Uint8Array(pt);
  } catch {
    return null;
  }
}
