// Cloud KMS key algorithms (CryptoKeyVersionAlgorithm) as facts this server needs: a Cloud KMS
// version's algorithm fixes the key type and size, the digest it signs and the padding, so a
// request asking for another hash or padding can only be refused.

import type { HashName } from '../crypto/transit/hashes';
import { GCP_ALGORITHMS } from './entry';
import type { PublicKeyInfo } from './types';

export interface GcpAlgorithm {
  name: string;
  /** The CryptoKey purpose a key of this algorithm is created with. */
  purpose: 'ASYMMETRIC_SIGN' | 'ASYMMETRIC_DECRYPT';
  keyType: PublicKeyInfo['keyType'];
  bits?: number;
  curve?: PublicKeyInfo['curve'];
  /** The digest it signs, or OAEP's hash (for OAEP and MGF1). */
  hash: HashName;
  /** RSA padding; ECDSA has none. */
  padding?: 'pss' | 'pkcs1' | 'oaep';
}

const HASHES: Record<string, HashName> = { SHA1: 'sha1', SHA256: 'sha2-256', SHA384: 'sha2-384', SHA512: 'sha2-512' };
const PADDINGS = { SIGN_PSS: 'pss', SIGN_PKCS1: 'pkcs1', DECRYPT_OAEP: 'oaep' } as const;


function describe(name: string): GcpAlgorithm {
  const ec = /^EC_SIGN_P(256|384)_(SHA\d+)$/.exec(name);
  if (ec) return { name, purpose: 'ASYMMETRIC_SIGN', keyType: 'ec', curve: ec[1] === '256' ? 'P-256' : 'P-384', hash: HASHES[ec[2]] };
  const rsa = /^RSA_(SIGN_PSS|SIGN_PKCS1|DECRYPT_OAEP)_(\d+)_(SHA\d+)$/.exec(name)!;
  const padding = PADDINGS[rsa[1] as keyof typeof PADDINGS];
  return { name, purpose: padding === 'oaep' ? 'ASYMMETRIC_DECRYPT' : 'ASYMMETRIC_SIGN', keyType: 'rsa', bits: Number(rsa[2]), hash: HASHES[rsa[3]], padding };
}

// The algorithms a configuration may name (./entry.ts): RSA and NIST-curve keys.
const TABLE: ReadonlyMap<string, GcpAlgorithm> = new Map(GCP_ALGORITHMS.map((n) => [n, describe(n)]));

/** The algorithm's facts; undefined for a name this server cannot use. */
export const gcpAlgorithm = (name: string): GcpAlgorithm | undefined => TABLE.get(name);

/** The field of AsymmetricSignRequest.digest that carries a digest of `hash`. */
export const DIGEST_FIELDS: Partial<Record<HashName, 'sha256' | 'sha384' | 'sha512'>> = { 'sha2-256': 'sha256', 'sha2-384': 'sha384', 'sha2-512': 'sha512' };

/** What a ManagedKey reports of a key of this algorithm. */
export const publicKeyInfo = (alg: GcpAlgorithm, pem: string): PublicKeyInfo =>
  alg.keyType === 'rsa' ? { pem, keyType: 'rsa', bits: alg.bits } : { pem, keyType: 'ec', curve: alg.curve };
