// The asymmetric key specs the emulator holds, and the algorithms KMS allows with each: every RSA
// spec signs with PKCS#1 v1.5 or PSS over SHA-2 (PSS salt = hash length) or encrypts with OAEP
// (SHA-1 or SHA-256, MGF1 on the same hash); each NIST curve signs only with its own hash.

export type HashAlg = 'sha256' | 'sha384' | 'sha512' | 'sha1';

export interface RsaSpec {
  kind: 'rsa';
  bits: number;
}
export interface EcSpec {
  kind: 'ec';
  /** node:crypto's curve name. */
  curve: 'P-256' | 'P-384' | 'P-521';
  signing: string;
}
export type Spec = RsaSpec | EcSpec;

export const KEY_SPECS: Readonly<Record<string, Spec>> = {
  RSA_2048: { kind: 'rsa', bits: 2048 },
  RSA_3072: { kind: 'rsa', bits: 3072 },
  RSA_4096: { kind: 'rsa', bits: 4096 },
  ECC_NIST_P256: { kind: 'ec', curve: 'P-256', signing: 'ECDSA_SHA_256' },
  ECC_NIST_P384: { kind: 'ec', curve: 'P-384', signing: 'ECDSA_SHA_384' },
  ECC_NIST_P521: { kind: 'ec', curve: 'P-521', signing: 'ECDSA_SHA_512' },
};

export interface SigningAlgorithm {
  hash: HashAlg;
  /** Digest length in bytes (also the PSS salt length). */
  length: number;
  padding: 'pkcs1' | 'pss' | 'ecdsa';
}

export const SIGNING_ALGORITHMS: Readonly<Record<string, SigningAlgorithm>> = {
  RSASSA_PSS_SHA_256: { hash: 'sha256', length: 32, padding: 'pss' },
  RSASSA_PSS_SHA_384: { hash: 'sha384', length: 48, padding: 'pss' },
  RSASSA_PSS_SHA_512: { hash: 'sha512', length: 64, padding: 'pss' },
  RSASSA_PKCS1_V1_5_SHA_256: { hash: 'sha256', length: 32, padding: 'pkcs1' },
  RSASSA_PKCS1_V1_5_SHA_384: { hash: 'sha384', length: 48, padding: 'pkcs1' },
  RSASSA_PKCS1_V1_5_SHA_512: { hash: 'sha512', length: 64, padding: 'pkcs1' },
  ECDSA_SHA_256: { hash: 'sha256', length: 32, padding: 'ecdsa' },
  ECDSA_SHA_384: { hash: 'sha384', length: 48, padding: 'ecdsa' },
  ECDSA_SHA_512: { hash: 'sha512', length: 64, padding: 'ecdsa' },
};

export const ENCRYPTION_ALGORITHMS: Readonly<Record<string, HashAlg>> = { RSAES_OAEP_SHA_1: 'sha1', RSAES_OAEP_SHA_256: 'sha256' };

/** The usages CreateKey accepts for a spec. */
export const usagesOf = (spec: Spec): string[] => (spec.kind === 'rsa' ? ['ENCRYPT_DECRYPT', 'SIGN_VERIFY'] : ['SIGN_VERIFY', 'KEY_AGREEMENT']);

/** KeyMetadata.SigningAlgorithms. */
export function signingAlgorithmsOf(spec: Spec, usage: string): string[] {
  if (usage !== 'SIGN_VERIFY') return [];
  return spec.kind === 'ec' ? [spec.signing] : Object.keys(SIGNING_ALGORITHMS).filter((a) => SIGNING_ALGORITHMS[a].padding !== 'ecdsa');
}

/** KeyMetadata.EncryptionAlgorithms. */
export const encryptionAlgorithmsOf = (spec: Spec, usage: string): string[] => (spec.kind === 'rsa' && usage === 'ENCRYPT_DECRYPT' ? Object.keys(ENCRYPTION_ALGORITHMS) : []);
