// Transit BYOK key wrapping: RSA-OAEP of a one-time AES-256 key, then AES-KWP (RFC 5649) of the
// key material under it. Error texts follow what Vault returns for the same failures.
// OAEP runs on WebCrypto except with SHA-224, which only node:crypto offers here.

import { generateRsaPair, type RsaPairSource } from '../rsa-keygen';
import { constants, createPrivateKey, privateDecrypt, publicEncrypt } from 'node:crypto';
import { aeskwp } from '@noble/ciphers/aes.js';
import { concatBytes } from '../encoding';
import { randomBytes } from '../random';

export type OaepHash = 'sha1' | 'sha224' | 'sha256' | 'sha384' | 'sha512';

/** Message is shown to the client in a 400. */
export class KeyWrapError extends Error {
  override name = 'KeyWrapError';
}

const OAEP_HASHES: readonly OaepHash[] = ['sha1', 'sha224', 'sha256', 'sha384', 'sha512'];

/** Vault's hash_function values, case-insensitive: SHA1 SHA224 SHA256 SHA384 SHA512; null otherwise. */
export function parseOaepHash(s: string): OaepHash | null {
  const lower = s.toLowerCase();
  return (OAEP_HASHES as readonly string[]).includes(lower) ? (lower as OaepHash) : null;
}

const WEB_HASH: Record<OaepHash, string | null> = {
  sha1: 'SHA-1',
  sha224: null,
  sha256: 'SHA-256',
  sha384: 'SHA-384',
  sha512: 'SHA-512',
};

const EPHEMERAL_KEY_BYTES = 32;
// Vault's KWP (tink) only wraps 16..8192 bytes; keeping the same bounds keeps the formats interchangeable.
const MIN_WRAP = 16;
const MAX_WRAP = 8192;
const wrappedSize = (n: number): number => Math.ceil(n / 8) * 8 + 8;

const asBuffer = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

// Imported OAEP keys, per DER bytes and hash (the wrapping key is reused for every import).
const oaepKeys = new WeakMap<Uint8Array, Map<string, CryptoKey>>();

async function oaepKey(der: Uint8Array, format: 'pkcs8' | 'spki', hash: string): Promise<CryptoKey> {
  const cached = oaepKeys.get(der)?.get(hash);
  if (cached) return cached;
  const usage = format === 'pkcs8' ? 'decrypt' : 'encrypt';
  const key = await crypto.subtle.importKey(format, der, { name: 'RSA-OAEP', hash }, false, [usage]);
  let perKey = oaepKeys.get(der);
  if (!perKey) {
    perKey = new Map();
    oaepKeys.set(der, perKey);
  }
  perKey.set(hash, key);
  return key;
}

const modulusCache = new WeakMap<Uint8Array, number>();

function modulusBytes(pkcs8: Uint8Array): number {
  let n = modulusCache.get(pkcs8);
  if (n === undefined) {
    const bits = createPrivateKey({ key: asBuffer(pkcs8), format: 'der', type: 'pkcs8' }).asymmetricKeyDetails?.modulusLength;
    if (!bits) throw new Error('wrapping key is not an RSA private key');
    n = Math.ceil(bits / 8);
    modulusCache.set(pkcs8, n);
  }
  return n;
}

// node:crypto takes DER keys as { key, format, type } (workerd rejects KeyObjects in these option
// objects); @types/node's RsaPrivateKey omits format/type, hence the options live in a variable.

/** Throws (any error) when OAEP decoding fails. */
async function oaepDecrypt(pkcs8: Uint8Array, hash: OaepHash, ct: Uint8Array): Promise<Uint8Array> {
  const web = WEB_HASH[hash];
  if (web) return new Uint8Array(await crypto.subtle.decrypt('RSA-OAEP', await oaepKey(pkcs8, 'pkcs8', web), ct));
  const opts = { key: asBuffer(pkcs8), format: 'der', type: 'pkcs8', padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash } as const;
  return new Uint8Array(privateDecrypt(opts, asBuffer(ct)));
}

async function oaepEncrypt(spki: Uint8Array, hash: OaepHash, pt: Uint8Array): Promise<Uint8Array> {
  const web = WEB_HASH[hash];
  if (web) return new Uint8Array(await crypto.subtle.encrypt('RSA-OAEP', await oaepKey(spki, 'spki', web), pt));
  const opts = { key: asBuffer(spki), format: 'der', type: 'spki', padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash } as const;
  return new Uint8Array(publicEncrypt(opts, asBuffer(pt)));
}

/** Splits blob into RSA-OAEP(wrapping key; hash H, MGF1 H, empty label) of a 32-byte ephemeral AES key (the first
 *  modulus-length bytes, 512 for RSA-4096) and AES-KWP (RFC 5649) of the key material under it; returns the material.
 *  Errors (KeyWrapError): blob not longer than the RSA part → "provided ciphertext is too short";
 *  OAEP failure; ephemeral key not 32 bytes; KWP size or integrity failure. */
export async function unwrapImport(wrappingPrivateKeyPkcs8: Uint8Array, blob: Uint8Array, hash: OaepHash): Promise<Uint8Array> {
  const rsaBytes = modulusBytes(wrappingPrivateKeyPkcs8);
  if (blob.length <= rsaBytes) throw new KeyWrapError('provided ciphertext is too short');
  let ephemeral: Uint8Array;
  try {
    ephemeral = await oaepDecrypt(wrappingPrivateKeyPkcs8, hash, blob.subarray(0, rsaBytes));
  } catch {
    throw new KeyWrapError('crypto/rsa: decryption error');
  }
  try {
    if (ephemeral.length !== EPHEMERAL_KEY_BYTES) throw new KeyWrapError('expected ephemeral AES key to be 256-bit');
    const wrapped = blob.subarray(rsaBytes);
    if (wrapped.length < wrappedSize(MIN_WRAP)) throw new KeyWrapError('kwp: wrapped key size too small');
    if (wrapped.length > wrappedSize(MAX_WRAP)) throw new KeyWrapError('kwp: wrapped key size too large');
    if (wrapped.length % 8 !== 0) throw new KeyWrapError('kwp: wrapped key size must be a multiple of 8 bytes');
    try {
      return aeskwp(ephemeral).decrypt(wrapped).slice();
    } catch {
      throw new KeyWrapError('kwp: unwrap failed integrity check');
    }
  } finally {
    ephemeral.fill(0);
  }
}

/** The inverse (for byok-export and tests): a fresh ephemeral key, OAEP under the given SPKI RSA public key, then KWP.
 *  Material outside Vault's KWP bounds (16..8192 bytes) is a KeyWrapError. */
export async function wrapForImport(targetPublicKeySpki: Uint8Array, material: Uint8Array, hash: OaepHash): Promise<Uint8Array> {
  if (material.length < MIN_WRAP) throw new KeyWrapError('kwp: key size to wrap too small');
  if (material.length > MAX_WRAP) throw new KeyWrapError('kwp: key size to wrap too large');
  const ephemeral = randomBytes(EPHEMERAL_KEY_BYTES);
  try {
    const wrappedKey = await oaepEncrypt(targetPublicKeySpki, hash, ephemeral);
    return concatBytes(wrappedKey, aeskwp(ephemeral).encrypt(material));
  } finally {
    ephemeral.fill(0);
  }
}

/** The size of a transit wrapping key (RSA, e = 65537). */
export const WRAPPING_KEY_BITS = 4096;

/** A transit wrapping key as PKCS#8 DER + SPKI DER; the pair comes from `rsa` (by default made here). */
export async function generateWrappingKey(rsa: RsaPairSource = generateRsaPair): Promise<{ privateKey: Uint8Array; publicKey: Uint8Array }> {
  const { pkcs8, spki } = await rsa(WRAPPING_KEY_BITS);
  return { privateKey: pkcs8, publicKey: spki };
}
