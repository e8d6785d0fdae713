// Transit's hash algorithms (Vault names) for hash, hmac, sign and verify.
// WebCrypto where workerd has the algorithm, node:crypto for SHA-224 (missing from WebCrypto),
// @noble/hashes for SHA-3 (missing from both).

import { createHash, createHmac } from 'node:crypto';
import { hmac as nobleHmac } from '@noble/hashes/hmac.js';
import { sha3_224, sha3_256, sha3_384, sha3_512 } from '@noble/hashes/sha3.js';

export type HashName =
  | 'sha1'
  | 'sha2-224'
  | 'sha2-256'
  | 'sha2-384'
  | 'sha2-512'
  | 'sha3-224'
  | 'sha3-256'
  | 'sha3-384'
  | 'sha3-512';

export const HASH_NAMES: readonly HashName[] = Object.freeze([
  'sha1',
  'sha2-224',
  'sha2-256',
  'sha2-384',
  'sha2-512',
  'sha3-224',
  'sha3-256',
  'sha3-384',
  'sha3-512',
] as const);

const LENGTHS: Record<HashName, number> = {
  sha1: 20,
  'sha2-224': 28,
  'sha2-256': 32,
  'sha2-384': 48,
  'sha2-512': 64,
  'sha3-224': 28,
  'sha3-256': 32,
  'sha3-384': 48,
  'sha3-512': 64,
};

const WEBCRYPTO: Partial<Record<HashName, string>> = {
  sha1: 'SHA-1',
  'sha2-256': 'SHA-256',
  'sha2-384': 'SHA-384',
  'sha2-512': 'SHA-512',
};

// node:crypto names for the SHA-1/SHA-2 family (SHA-224 always; the others only for empty HMAC keys).
const NODE: Partial<Record<HashName, string>> = {
  sha1: 'sha1',
  'sha2-224': 'sha224',
  'sha2-256': 'sha256',
  'sha2-384': 'sha384',
  'sha2-512': 'sha512',
};

const SHA3 = { 'sha3-224': sha3_224, 'sha3-256': sha3_256, 'sha3-384': sha3_384, 'sha3-512': sha3_512 } as const;
type Sha3Name = keyof typeof SHA3;
const isSha3 = (h: HashName): h is Sha3Name => h in SHA3;

/** Vault's names exactly (lowercase); anything else is null. */
export function parseHashName(s: string): HashName | null {
  return (HASH_NAMES as readonly string[]).includes(s) ? (s as HashName) : null;
}

export function hashLength(h: HashName): number {
  return LENGTHS[h];
}

// node:crypto wants Buffers; wrap without copying. Its results are copied back into plain
// Uint8Arrays because small Buffers are views into a shared pool.
const asBuffer = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

export async function digest(h: HashName, data: Uint8Array): Promise<Uint8Array> {
  const web = WEBCRYPTO[h];
  if (web) return new Uint8Array(await crypto.subtle.digest(web, data));
  if (isSha3(h)) return SHA3[h](data);
  return new Uint8Array(createHash(NODE[h] as string).update(asBuffer(data)).digest());
}

// HMAC CryptoKeys cached per key bytes and hash; the CryptoKey itself is cached (not the promise)
// so a warm call never waits on another request's promise.
const hmacKeys = new WeakMap<Uint8Array, Map<string, CryptoKey>>();

async function importHmacKey(key: Uint8Array, hash: string): Promise<CryptoKey> {
  const imported = await crypto.subtle.importKey('raw', key, { name: 'HMAC', hash }, false, ['sign']);
  let perKey = hmacKeys.get(key);
  if (!perKey) {
    perKey = new Map();
    hmacKeys.set(key, perKey);
  }
  perKey.set(hash, imported);
  return imported;
}

export async function hmac(h: HashName, key: Uint8Array, data: Uint8Array): Promise<Uint8Array> {
  const web = WEBCRYPTO[h];
  // WebCrypto refuses zero-length HMAC keys, which HMAC itself allows: node:crypto takes those.
  if (web && key.length > 0) {
    const cryptoKey = hmacKeys.get(key)?.get(web) ?? (await importHmacKey(key, web));
    return new Uint8Array(await crypto.subtle.sign('HMAC', cryptoKey, data));
  }
  if (isSha3(h)) return nobleHmac(SHA3[h], key, data);
  return new Uint8Array(createHmac(NODE[h] as string, asBuffer(key)).update(asBuffer(data)).digest());
}
