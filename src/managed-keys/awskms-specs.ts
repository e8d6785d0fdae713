// What a cloudakms key's configuration means in AWS KMS's terms: the KeySpec it asks for, the
// KeyUsage a generated key gets, and the SigningAlgorithm / EncryptionAlgorithm of each request.
// KMS signs only SHA-2 digests, salts PSS with the hash's length, signs with each NIST curve only
// its own hash, and encrypts with OAEP over SHA-1 or SHA-256: anything else is a clear 400 here
// rather than a ValidationException from AWS.

import { hashLength, type HashName } from '../crypto/transit/hashes';
import { ManagedKeyError, type AwsKmsConfig, type KeyUsage, type PublicKeyInfo, type SignOptions } from './types';

const RSA_SPECS: Readonly<Record<string, string>> = { '2048': 'RSA_2048', '3072': 'RSA_3072', '4096': 'RSA_4096' };
const EC_SPECS: Readonly<Record<string, string>> = { P256: 'ECC_NIST_P256', P384: 'ECC_NIST_P384', P521: 'ECC_NIST_P521' };

/** The public key shape of each KeySpec the backend can use. */
const SPEC_KEYS: Readonly<Record<string, Omit<PublicKeyInfo, 'pem'>>> = {
  RSA_2048: { keyType: 'rsa', bits: 2048 },
  RSA_3072: { keyType: 'rsa', bits: 3072 },
  RSA_4096: { keyType: 'rsa', bits: 4096 },
  ECC_NIST_P256: { keyType: 'ec', curve: 'P-256' },
  ECC_NIST_P384: { keyType: 'ec', curve: 'P-384' },
  ECC_NIST_P521: { keyType: 'ec', curve: 'P-521' },
};

/** The one hash KMS signs with for each curve. */
const EC_HASH: Readonly<Record<string, HashName>> = { ECC_NIST_P256: 'sha2-256', ECC_NIST_P384: 'sha2-384', ECC_NIST_P521: 'sha2-512' };

const HASH_SUFFIX: Partial<Record<HashName, string>> = { 'sha2-256': 'SHA_256', 'sha2-384': 'SHA_384', 'sha2-512': 'SHA_512' };
const OAEP: Partial<Record<HashName, string>> = { sha1: 'RSAES_OAEP_SHA_1', 'sha2-256': 'RSAES_OAEP_SHA_256' };

const isRsa = (c: AwsKmsConfig) => c.key_type === 'RSA';

/** The KeySpec the configuration names (key_type with key_bits or curve; entry.ts validated them). */
export function configuredKeySpec(c: AwsKmsConfig): string {
  const spec = isRsa(c) ? RSA_SPECS[c.key_bits] : EC_SPECS[c.curve];
  if (!spec) throw new ManagedKeyError(400, `the AWS KMS key configuration names no key spec: key_type ${c.key_type} with ${isRsa(c) ? `key_bits ${JSON.stringify(c.key_bits)}` : `curve ${JSON.stringify(c.curve)}`}`);
  return spec;
}

/** A KeySpec's public key shape; null for specs the backend cannot use (symmetric, HMAC, SM2, …). */
export const specKey = (spec: string): Omit<PublicKeyInfo, 'pem'> | null => SPEC_KEYS[spec] ?? null;

const SIGNING_USAGES: readonly KeyUsage[] = ['sign', 'verify'];
const ENCRYPTION_USAGES: readonly KeyUsage[] = ['encrypt', 'decrypt', 'wrap', 'unwrap'];

/**
 * The KeyUsage a generated key gets. A KMS key either signs or encrypts: ECC keys sign; RSA keys
 * sign unless the managed key's usages are all about encryption.
 */
export function generatedKeyUsage(c: AwsKmsConfig, usages: readonly KeyUsage[]): 'SIGN_VERIFY' | 'ENCRYPT_DECRYPT' {
  const encrypts = usages.some((u) => ENCRYPTION_USAGES.includes(u));
  const signs = usages.some((u) => SIGNING_USAGES.includes(u));
  return isRsa(c) && encrypts && !signs ? 'ENCRYPT_DECRYPT' : 'SIGN_VERIFY';
}

/** Why a found key's KeyUsage cannot serve the managed key's usages, or null when it can. */
export function usageMismatch(keyUsage: string, usages: readonly KeyUsage[]): string | null {
  const signs = usages.some((u) => SIGNING_USAGES.includes(u));
  const encrypts = usages.some((u) => ENCRYPTION_USAGES.includes(u));
  if (keyUsage !== 'SIGN_VERIFY' && keyUsage !== 'ENCRYPT_DECRYPT') return `its KeyUsage is ${keyUsage || '(none)'}: managed keys use SIGN_VERIFY or ENCRYPT_DECRYPT keys`;
  if (keyUsage === 'SIGN_VERIFY' ? signs : encrypts) return null;
  const listed = `the managed key's usages (${usages.join(', ')})`;
  if (!signs && !encrypts) return `its KeyUsage is ${keyUsage}, and ${listed} include neither signing nor encryption`;
  return `its KeyUsage is ${keyUsage}, and ${listed} need ${keyUsage === 'SIGN_VERIFY' ? 'ENCRYPT_DECRYPT' : 'SIGN_VERIFY'}`;
}

/** The SigningAlgorithm of a Sign/Verify request, or a 400 saying why KMS cannot make that signature. */
export function signingAlgorithm(c: AwsKmsConfig, opts: SignOptions): string {
  const suffix = HASH_SUFFIX[opts.hash];
  if (!suffix) throw new ManagedKeyError(400, `AWS KMS cannot sign ${opts.hash} digests: it signs SHA-256, SHA-384 and SHA-512 digests only (sha2-256, sha2-384, sha2-512)`);
  if (!isRsa(c)) {
    if (opts.pss) throw new ManagedKeyError(400, 'PSS applies only to RSA keys: this AWS KMS key is ECDSA');
    const spec = configuredKeySpec(c);
    if (EC_HASH[spec] !== opts.hash) {
      throw new ManagedKeyError(400, `AWS KMS signs with a ${spec} key only ${EC_HASH[spec]} digests (ECDSA_${HASH_SUFFIX[EC_HASH[spec]]}), not ${opts.hash}`);
    }
    return `ECDSA_${suffix}`;
  }
  if (!opts.pss) return `RSASSA_PKCS1_V1_5_${suffix}`;
  const hashBytes = hashLength(opts.hash);
  if (opts.saltLength !== undefined && opts.saltLength !== hashBytes) {
    throw new ManagedKeyError(
      400,
      `AWS KMS makes RSA-PSS signatures only with a salt as long as the hash (${hashBytes} bytes for ${opts.hash}), not ${opts.saltLength} bytes (transit: salt_length=hash)`,
    );
  }
  return `RSASSA_PSS_${suffix}`;
}

/** The EncryptionAlgorithm for RSA-OAEP with `hash`, or a 400. */
export function encryptionAlgorithm(c: AwsKmsConfig, hash: HashName): string {
  if (!isRsa(c)) throw new ManagedKeyError(400, 'AWS KMS encrypts only with RSA keys: this key is ECDSA');
  const alg = OAEP[hash];
  if (!alg) throw new ManagedKeyError(400, `AWS KMS encrypts with RSA-OAEP over sha1 or sha2-256 only (RSAES_OAEP_SHA_1, RSAES_OAEP_SHA_256), not ${hash}`);
  return alg;
}
