// HMAC-SHA256 over WebCrypto, with imported keys cached per key object.

import { utf8 } from './encoding';

const keyCache = new WeakMap<Uint8Array, Promise<CryptoKey>>();

function importKey(raw: Uint8Array): Promise<CryptoKey> {
  let key = keyCache.get(raw);
  if (!key) {
    key = crypto.subtle.importKey('raw', raw, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    keyCache.set(raw, key);
  }
  return key;
}

export async function hmacSha256(key: Uint8Array, message: Uint8Array | string): Promise<Uint8Array> {
  const msg = typeof message === 'string' ? utf8(message) : message;
  return new Uint8Array(await crypto.subtle.sign('HMAC', await importKey(key), msg));
}

export async function sha256(message: Uint8Array | string): Promise<Uint8Array> {
  const msg = typeof message === 'string' ? utf8(message) : message;
  return new Uint8Array(await crypto.subtle.digest('SHA-256', msg));
}
