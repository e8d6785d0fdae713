// sign and verify with a managed_key key. The backend signs a digest made here (or given, with
// prehashed); ECDSA comes back as ASN.1 DER and is turned into r‖s for marshaling_algorithm=jws.
// Verification needs no private half: it runs here against the version's stored public key, after
// the managed key's `verify` usage and the mount's permission are checked like for any other use.

import { ECDSASigValue } from '@peculiar/asn1-ecc';
import { AsnConvert } from '@peculiar/asn1-schema';
import { EC_CURVES, isEcType, isRsaType, rsaModulusBits, verify, type AsymmetricKey, type SignOptions } from '../../../crypto/transit/asymmetric';
import { digest, hashLength, type HashName } from '../../../crypto/transit/hashes';
import { pssMaxSaltLength } from '../../../crypto/transit/rsa-pss';
import { badRequest } from '../../../framework/errors';
import type { KeyPolicy, KeyVersion } from '../policy';
import { usableVersion } from '../versions';
import { managedOf, type ManagedUse } from './access';
import { versionPublicKey } from './public-key';

/**
 * RSA-PSS salt in bytes, with the meanings transit gives salt_length for its own RSA keys except
 * one: `auto` (the default) is the hash's length, not the largest salt, because cloud KMS (AWS,
 * Azure, Google) sign PSS only with a salt as long as the hash. Verification still detects any salt.
 */
function pssSalt(pub: AsymmetricKey, hash: HashName, opt: SignOptions['saltLength']): number {
  const max = pssMaxSaltLength(rsaModulusBits(pub), hash);
  if (opt === 'auto' || opt === 0) return hashLength(hash);
  if (opt === 'hash' || opt === -1) return hashLength(hash);
  if (!Number.isInteger(opt) || opt < -1) throw badRequest(`salt length is invalid: ${String(opt)}`);
  if (opt > max) throw badRequest(`requested salt length ${opt} is invalid`);
  return opt;
}

/** DER SEQUENCE{r, s} as the fixed-width r‖s of JWS (RFC 7518 §3.4). */
function derToJws(der: Uint8Array, size: number): Uint8Array {
  const sig = AsnConvert.parse(der, ECDSASigValue);
  const out = new Uint8Array(size * 2);
  [new Uint8Array(sig.r), new Uint8Array(sig.s)].forEach((n, i) => {
    let start = 0;
    while (start < n.length - 1 && n[start] === 0) start++;
    const bytes = n.subarray(start);
    if (bytes.length > size) throw badRequest('the managed key returned an ECDSA signature too large for its curve');
    out.set(bytes, i * size + size - bytes.length);
  });
  return out;
}

/** Signs one item's input with version `key_version` (0: latest) of a managed_key key. */
export async function managedSign(use: ManagedUse, p: KeyPolicy, o: SignOptions, input: Uint8Array, keyVersion: number): Promise<{ version: number; signature: Uint8Array }> {
  const { version, entry } = usableVersion(p, keyVersion);
  const mv = managedOf(entry);
  const { entry: managed, key } = await use.forVersion(mv, 'sign');
  const pub = await versionPublicKey(mv);
  if (o.hash === 'none') throw badRequest('hash_algorithm=none is not supported for keys of type managed_key');
  const hash = o.hash;
  const sum = o.prehashed ? input : await digest(hash, input);
  const rsa = isRsaType(pub.type);
  if (rsa && sum.length !== hashLength(hash)) throw badRequest('crypto/rsa: input must be hashed message');
  const pss = rsa && o.signatureAlgorithm === 'pss';
  const saltLength = pss ? pssSalt(pub, hash, o.saltLength) : undefined;
  const der = await key.sign(sum, { hash, pss, ...(saltLength !== undefined ? { saltLength } : {}) });
  // The backend signs with the key it holds now: if that is no longer this version's key (rotated
  // over with allow_replace_key), the signature would not verify under the version's public key.
  // Over the input itself unless only a digest was given: WebCrypto then hashes and verifies
  // natively, where a digest needs the (much slower) JavaScript verifier.
  const check: SignOptions = { ...o, marshaling: 'asn1', saltLength: saltLength ?? 'auto' };
  if (!(await verify(pub, input, der, check).catch(() => false))) {
    throw badRequest(`managed key ${JSON.stringify(managed.name)} no longer holds the key of version ${version} of this key (it was replaced): sign with a newer version`);
  }
  if (!rsa && o.marshaling === 'jws' && isEcType(pub.type)) return { version, signature: derToJws(der, EC_CURVES[pub.type].size) };
  return { version, signature: der };
}

/** Verifies a signature made by `entry` (already split from its "vault:v<N>:" prefix). */
export async function managedVerify(use: ManagedUse, entry: KeyVersion, input: Uint8Array, signature: Uint8Array, o: SignOptions): Promise<boolean> {
  const mv = managedOf(entry);
  await use.forVersion(mv, 'verify');
  return await verify(await versionPublicKey(mv), input, signature, o);
}
