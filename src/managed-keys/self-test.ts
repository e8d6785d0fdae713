// sys/managed-keys/:type/:name/test/sign: sign random data with the key, have the backend verify
// it, and verify it here with the key's public half. Success means the configuration works.

import { randomBytes } from '../crypto/random';
import { verify, type AsymmetricKey, type AsymmetricType } from '../crypto/transit/asymmetric';
import { digest, hashLength, type HashName } from '../crypto/transit/hashes';
import { parsePublicKeyPem } from '../crypto/transit/key-encoding';
import { assertUsage, ensureKey } from './guard';
import { ManagedKeyError, type ManagedKey, type ManagedKeyEntry, type PublicKeyInfo, type SignOptions } from './types';

export interface TestSignOptions {
  hash: HashName;
  /** RSA keys: PSS instead of PKCS#1 v1.5. */
  pss: boolean;
}

/** Throws a ManagedKeyError saying what failed; resolves when the key signs and verifies. */
export async function testSign(entry: ManagedKeyEntry, key: ManagedKey, opts: TestSignOptions): Promise<void> {
  assertUsage(entry, 'sign');
  const pub = await ensureKey(entry, key);
  if (opts.pss && pub.keyType !== 'rsa') throw new ManagedKeyError(400, 'use_pss applies only to RSA keys');
  const local = await publicKeyOf(pub);
  const sum = await digest(opts.hash, randomBytes(32));
  const signOpts: SignOptions = { hash: opts.hash, pss: opts.pss, ...(opts.pss ? { saltLength: hashLength(opts.hash) } : {}) };
  const signature = await key.sign(sum, signOpts);
  if (entry.usages.includes('verify') && !(await key.verify(sum, signature, signOpts))) {
    throw new ManagedKeyError(400, `managed key ${JSON.stringify(entry.name)}: the backend did not verify its own signature`);
  }
  const valid = await verify(local, sum, signature, {
    hash: opts.hash,
    prehashed: true,
    signatureAlgorithm: opts.pss ? 'pss' : 'pkcs1v15',
    saltLength: opts.pss ? hashLength(opts.hash) : 'auto',
    marshaling: 'asn1',
  }).catch(() => false);
  if (!valid) {
    throw new ManagedKeyError(400, `managed key ${JSON.stringify(entry.name)}: the signature the backend made does not verify with its public key`);
  }
}

const RSA_TYPES: AsymmetricType[] = ['rsa-2048', 'rsa-3072', 'rsa-4096'];
const EC_TYPES: Record<NonNullable<PublicKeyInfo['curve']>, AsymmetricType> = { 'P-256': 'ecdsa-p256', 'P-384': 'ecdsa-p384', 'P-521': 'ecdsa-p521' };

/** The backend's public key as crypto's key type (RSA 2048/3072/4096, ECDSA P-256/384/521). */
async function publicKeyOf(pub: PublicKeyInfo): Promise<AsymmetricKey> {
  const candidates: AsymmetricType[] =
    pub.keyType === 'rsa'
      ? pub.bits
        ? [`rsa-${pub.bits}` as AsymmetricType]
        : RSA_TYPES
      : pub.curve
        ? [EC_TYPES[pub.curve]]
        : Object.values(EC_TYPES);
  let last = '';
  for (const type of candidates) {
    try {
      return await parsePublicKeyPem(type, pub.pem);
    } catch (e) {
      last = (e as Error).message;
    }
  }
  throw new ManagedKeyError(400, `the backend's public key cannot be used: ${last || 'unsupported key'}`);
}
