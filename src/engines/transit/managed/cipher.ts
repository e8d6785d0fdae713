// encrypt/decrypt (and so rewrap and datakey) with a managed_key key: RSA-OAEP by the backend,
// "vault:v<N>:<base64>" like every transit ciphertext. EC managed keys only sign.
//
// The OAEP hash (and MGF1 hash) is SHA-1. Vault's own RSA keys use SHA-256, but SoftHSM2 2.6, the
// HSM this is tested on, does OAEP with SHA-1 only, as do several other HSMs; OAEP's security does
// not rest on the hash's collision resistance. It is fixed, not stored per version: a version made
// with another hash would need it recorded next to its managed key UUID (policy.ts).

import type { HashName } from '../../../crypto/transit/hashes';
import { isRsaType, rsaModulusBits } from '../../../crypto/transit/asymmetric';
import { fromBase64, toBase64 } from '../../../crypto/encoding';
import { badRequest } from '../../../framework/errors';
import type { LogicalRequest } from '../../../framework/backend';
import type { ManagedKeyAccess } from '../../../managed-keys/access';
import { decryptValue, encryptValue, type CipherOptions } from '../ciphertexts';
import { versionPrefix, type KeyPolicy, type KeyVersion } from '../policy';
import { splitVersioned, usableVersion } from '../versions';
import { managedOf, managedUse, type ManagedUse } from './access';
import { versionPublicKey } from './public-key';

export const MANAGED_OAEP_HASH: HashName = 'sha1';
const OAEP_HASH_BYTES = 20;

/** RSA-OAEP only; no associated data, context or nonce (as for transit's RSA keys). */
function checkOptions(o: CipherOptions): void {
  if (o.padding !== '' && o.padding !== 'oaep') throw badRequest(`padding_scheme ${JSON.stringify(o.padding)} is not supported for keys of type managed_key: they use oaep`);
  if (o.associatedData.length > 0) throw badRequest('associated_data is not supported for keys of type managed_key');
  if (o.context.length > 0 || o.nonce.length > 0) throw badRequest('context and nonce are not supported for keys of type managed_key');
}

/** The version's modulus size in bytes; 400 for an EC managed key. */
async function rsaBytes(entry: KeyVersion, op: 'encryption' | 'decryption'): Promise<number> {
  const pub = await versionPublicKey(managedOf(entry));
  if (!isRsaType(pub.type)) throw badRequest(`message ${op} not supported for a managed_key key on an ECDSA managed key: only RSA managed keys encrypt`);
  return Math.ceil(rsaModulusBits(pub) / 8);
}

export async function managedEncrypt(use: ManagedUse, p: KeyPolicy, requestedVersion: number, plaintext: Uint8Array, o: CipherOptions): Promise<{ ciphertext: string; version: number }> {
  checkOptions(o);
  const { version, entry } = usableVersion(p, requestedVersion);
  const k = await rsaBytes(entry, 'encryption');
  const { key } = await use.forVersion(managedOf(entry), 'encrypt');
  if (plaintext.length > k - 2 * OAEP_HASH_BYTES - 2) throw badRequest('failed to RSA encrypt the plaintext: message too long for RSA key size');
  const payload = await key.encrypt(plaintext, { hash: MANAGED_OAEP_HASH });
  return { ciphertext: versionPrefix(p, version) + toBase64(payload), version };
}

export async function managedDecrypt(use: ManagedUse, p: KeyPolicy, ciphertext: string, o: CipherOptions): Promise<Uint8Array> {
  checkOptions(o);
  const { entry, payload } = splitVersioned(p.versionTemplate, p, ciphertext, 'ciphertext');
  const bytes = fromBase64(payload);
  if (!bytes) throw badRequest('invalid ciphertext: could not decode base64');
  const k = await rsaBytes(entry, 'decryption');
  const { key } = await use.forVersion(managedOf(entry), 'decrypt');
  if (bytes.length !== k) throw badRequest('invalid ciphertext: unable to decrypt');
  return await key.decrypt(bytes, { hash: MANAGED_OAEP_HASH });
}

/** Encrypt and decrypt for one request, whatever the key's type (the encrypt paths use these). */
export interface ValueCiphers {
  encrypt(p: KeyPolicy, requestedVersion: number, plaintext: Uint8Array, o: CipherOptions): Promise<{ ciphertext: string; version: number }>;
  decrypt(p: KeyPolicy, ciphertext: string, o: CipherOptions): Promise<Uint8Array>;
}

export function valueCiphers(access: ManagedKeyAccess | undefined, req: LogicalRequest): ValueCiphers {
  const use = managedUse(access, req);
  return {
    encrypt: (p, v, plaintext, o) => (p.type === 'managed_key' ? managedEncrypt(use, p, v, plaintext, o) : encryptValue(p, v, plaintext, o)),
    decrypt: (p, ciphertext, o) => (p.type === 'managed_key' ? managedDecrypt(use, p, ciphertext, o) : decryptValue(p, ciphertext, o)),
  };
}
