// New key versions, and the key a request actually uses (a version's key, or one derived from it
// with the request's context).

import type { RsaPairSource } from '../../crypto/rsa-keygen';
import { generateKeyPair, ed25519FromSeed, type AsymmetricKey } from '../../crypto/transit/asymmetric';
import { cipherKeyLength } from '../../crypto/transit/cipher';
import { counterKdfHmacSha256, hkdfSha256 } from '../../crypto/transit/kdf';
import { ed25519Private64 } from '../../crypto/transit/key-encoding';
import { randomBytes } from '../../crypto/random';
import { badRequest } from '../../framework/errors';
import { isAsymmetric, isCipher, type KeyType } from './key-types';
import type { KeyPolicy, KeyVersion } from './policy';

export const HMAC_KEY_BYTES = 32;
export const DEFAULT_HMAC_KEY_SIZE = 32;

/** Fresh material for a new version of a key of this type (RSA pairs from `rsa`, when given). */
export async function newVersion(type: KeyType, keySize: number, now: number, rsa?: RsaPairSource): Promise<KeyVersion> {
  // Its material is the managed key's, made by its backend (./managed/create.ts).
  if (type === 'managed_key') throw badRequest('a managed_key version is made from its managed key');
  const v: KeyVersion = { created: now, hmacKey: randomBytes(HMAC_KEY_BYTES) };
  if (type === 'hmac') v.hmacKey = randomBytes(keySize || DEFAULT_HMAC_KEY_SIZE);
  else if (isCipher(type)) v.key = randomBytes(cipherKeyLength(type));
  else if (isAsymmetric(type)) {
    v.asym = await generateKeyPair(type, rsa);
    if (type === 'ed25519') v.key = ed25519Private64(v.asym);
  }
  return v;
}

export const MISSING_CONTEXT =
  "missing 'context' for key derivation; the key was created using a derived key, which means additional, per-request information must be included in order to perform operations with the key";

/** The cipher key for a version: the stored one, or derived from it with `context` (derived keys). */
export async function cipherKey(p: KeyPolicy, v: KeyVersion, context: Uint8Array, length: number): Promise<Uint8Array> {
  if (!v.key) throw badRequest('key version has no key material');
  if (!p.derived) return v.key;
  if (context.length === 0) throw badRequest(MISSING_CONTEXT);
  if (p.kdf === 'hmac-sha256-counter') return (await counterKdfHmacSha256(v.key, context)).subarray(0, length);
  return await hkdfSha256(v.key, context, length);
}

/** The signing key of a version: for derived ed25519 a key pair made from the context. */
export async function signingKey(p: KeyPolicy, v: KeyVersion, context: Uint8Array): Promise<AsymmetricKey> {
  if (!v.asym) throw badRequest('key version has no key material');
  if (!(p.derived && p.type === 'ed25519')) return v.asym;
  if (context.length === 0) throw badRequest(MISSING_CONTEXT);
  return await ed25519FromSeed(await cipherKey(p, v, context, 32));
}
