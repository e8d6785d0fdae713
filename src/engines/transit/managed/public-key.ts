// A managed_key version's public key: the backend's PEM as one of transit's asymmetric types (RSA
// 2048/3072/4096, ECDSA P-256/384/521), which says what the version can do and verifies its
// signatures here. Parsed keys are remembered per PEM text.

import { AsymmetricError, isRsaType, type AsymmetricKey, type AsymmetricType } from '../../../crypto/transit/asymmetric';
import { parsePublicKeyPem, publicKeyPem } from '../../../crypto/transit/key-encoding';
import { badRequest } from '../../../framework/errors';
import type { PublicKeyInfo } from '../../../managed-keys/types';
import type { KeyVersion, ManagedVersion } from '../policy';

const RSA: AsymmetricType[] = ['rsa-2048', 'rsa-3072', 'rsa-4096'];
const EC: AsymmetricType[] = ['ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521'];
const BY_CURVE: Record<string, AsymmetricType> = { 'P-256': 'ecdsa-p256', 'P-384': 'ecdsa-p384', 'P-521': 'ecdsa-p521' };

const CACHE_MAX = 256;
const parsed = new Map<string, AsymmetricKey>();

/** The types to try for a PEM, the backend's hint first. */
function candidates(hint?: Pick<PublicKeyInfo, 'keyType' | 'bits' | 'curve'>): AsymmetricType[] {
  if (hint?.keyType === 'rsa') return hint.bits ? [`rsa-${hint.bits}` as AsymmetricType] : RSA;
  if (hint?.keyType === 'ec') return hint.curve ? [BY_CURVE[hint.curve]] : EC;
  return [...EC, ...RSA];
}

/** The PEM as a public-only AsymmetricKey; 400 when transit has no type for it. */
export async function parseManagedPublicKey(pem: string, hint?: Pick<PublicKeyInfo, 'keyType' | 'bits' | 'curve'>): Promise<AsymmetricKey> {
  const hit = parsed.get(pem);
  if (hit) return hit;
  let last = 'unsupported key';
  for (const type of candidates(hint)) {
    try {
      const key = await parsePublicKeyPem(type, pem);
      if (parsed.size >= CACHE_MAX) parsed.delete(parsed.keys().next().value as string);
      parsed.set(pem, key);
      return key;
    } catch (e) {
      if (!(e instanceof AsymmetricError)) throw e;
      last = e.message;
    }
  }
  throw badRequest(`the managed key's public key cannot be used by transit (RSA 2048, 3072 or 4096, ECDSA P-256, P-384 or P-521): ${last}`);
}

export const versionPublicKey = (v: ManagedVersion): Promise<AsymmetricKey> => parseManagedPublicKey(v.publicKeyPem);

/** A new version backed by the managed key `id`, whose backend holds `pub`. */
export async function managedVersion(id: string, pub: PublicKeyInfo, now: number): Promise<KeyVersion> {
  const key = await parseManagedPublicKey(pub.pem, pub);
  // Re-encoded: the stored (and shown) PEM has the same layout as other transit public keys.
  return { created: now, hmacKey: new Uint8Array(0), managed: { id, publicKeyPem: publicKeyPem(key) } };
}

export const isRsaKey = (key: AsymmetricKey): boolean => isRsaType(key.type);
