// Where a PKI key signs: a local key (its PKCS#8 in the mount's storage) through WebCrypto, or a
// managed key (made by root|intermediate|keys/generate/kms) at the HSM behind it. A managed key is
// stored as its UUID and public half only and resolved at every use, so a key deleted from
// sys/managed-keys, no longer allowed on the mount or stripped of its `sign` usage stops signing
// at once, with a 400 saying why.

import { defaultSignatureAlgorithm, externalSigner, sameKey, signerFor, signerForGoName, type PkiKey, type Signer } from '../../crypto/pki/keys';
import type { HashName } from '../../crypto/transit/hashes';
import { fromBase64 } from '../../crypto/encoding';
import type { LogicalRequest } from '../../framework/backend';
import { badRequest, CofferError } from '../../framework/errors';
import type { ManagedKeyAccess, ResolvedManagedKey } from '../../managed-keys/access';
import { assertUsage } from '../../managed-keys/guard';
import type { KeyEntry } from './store';

/** How signing reaches managed keys: the server's managed keys, and which ones the mount may use. */
export interface KeyAccess {
  managedKeys?: ManagedKeyAccess;
  /**
   * The mount's allowed_managed_keys. null in background work whose host does not tell them: there
   * only keys with any_mount can sign.
   */
  allowed: readonly string[] | null;
}

export const requestKeyAccess = (managedKeys: ManagedKeyAccess | undefined, req: LogicalRequest): KeyAccess => ({
  managedKeys,
  allowed: req.mountAllowedManagedKeys ?? [],
});

export const backgroundKeyAccess = (managedKeys: ManagedKeyAccess | undefined, allowed?: readonly string[]): KeyAccess => ({ managedKeys, allowed: allowed ?? null });

export const MANAGED_KEYS_UNAVAILABLE = 'managed keys are not available on this server';

/** Which signature: a Go algorithm name, or Vault's default for signature_bits / use_pss. */
export type SignatureChoice = { goName: string } | { signatureBits: number; usePss: boolean };

/** Whether a stored key is a managed key (its private half is in an HSM, never here). */
export const isManaged = (e: KeyEntry): boolean => Boolean(e.managedKeyId);

export const entrySpki = (e: KeyEntry): Uint8Array => fromBase64(e.spki) ?? new Uint8Array(0);

/**
 * A key's public half in PkiKey form, for the crypto functions that read only `spki` (sameKey,
 * buildCsr). Its empty PKCS#8 never reaches a signer: signing goes through keySigner.
 */
export const publicOnly = (type: PkiKey['type'], bits: number, spki: Uint8Array): PkiKey => ({ type, bits, pkcs8: new Uint8Array(0), spki });

/** Whether two SubjectPublicKeyInfos hold the same key (by value, not encoding). */
export const samePublicKey = (a: Uint8Array, b: Uint8Array): boolean => sameKey(publicOnly('rsa', 0, a), b);

// Local keys are cached by their stored encoding, so a changed record never meets a stale entry;
// the same PkiKey object keeps the crypto layer's imported-key cache warm across requests.
const CACHE_MAX = 256;
const localKeys = new Map<string, PkiKey>();

/** A local key as crypto wants it (a managed key has no private half here: refused). */
export function keyFromEntry(e: KeyEntry): PkiKey {
  if (isManaged(e)) throw new Error(`PKI key ${e.id} is a managed key: it signs only through keySigner`);
  const hit = localKeys.get(e.pkcs8);
  if (hit) return hit;
  if (localKeys.size >= CACHE_MAX) localKeys.delete(localKeys.keys().next().value as string);
  const key: PkiKey = { type: e.type, bits: e.bits, pkcs8: fromBase64(e.pkcs8) ?? new Uint8Array(0), spki: entrySpki(e) };
  localKeys.set(e.pkcs8, key);
  return key;
}

/** The signer of a stored key, local or managed. */
export async function keySigner(access: KeyAccess, e: KeyEntry, choice: SignatureChoice): Promise<Signer> {
  if (!isManaged(e)) {
    const key = keyFromEntry(e);
    return 'goName' in choice ? await signerForGoName(key, choice.goName) : await signerFor(key, choice.signatureBits, choice.usePss);
  }
  const goName = 'goName' in choice ? choice.goName : defaultSignatureAlgorithm(e.type, e.bits, choice.signatureBits, choice.usePss);
  const { key } = await managedKeyFor(access, e);
  return await externalSigner(entrySpki(e), goName, (digest, how) =>
    key.sign(digest, { hash: HASH_NAMES[how.hash], pss: how.pss, ...(how.saltLength !== undefined ? { saltLength: how.saltLength } : {}) }),
  );
}

/** WebCrypto hash names → the managed-key interface's. */
const HASH_NAMES: Record<string, HashName> = { 'SHA-256': 'sha2-256', 'SHA-384': 'sha2-384', 'SHA-512': 'sha2-512' };

/** The managed key behind a stored PKI key, if the mount may still use it to sign. */
async function managedKeyFor(access: KeyAccess, e: KeyEntry): Promise<ResolvedManagedKey> {
  if (!access.managedKeys) throw badRequest(MANAGED_KEYS_UNAVAILABLE);
  try {
    const resolved = await access.managedKeys.resolve({ id: e.managedKeyId! }, access.allowed ?? []);
    assertUsage(resolved.entry, 'sign');
    return resolved;
  } catch (err) {
    if (!(err instanceof CofferError) || err.status >= 500) throw err;
    const why = err.errors.join('; ');
    if (access.allowed !== null) throw badRequest(`unable to sign with the managed key of PKI key ${e.id}: ${why}`);
    throw badRequest(
      `unable to sign with the managed key of PKI key ${e.id} in background work: ${why} (background work does not know the mount's allowed_managed_keys, so only keys with any_mount sign there; a CRL read or crl/rotate rebuilds with them)`,
    );
  }
}

/** managed_key_name of a stored managed key (its name may have changed since); null when it cannot be resolved. */
export async function managedKeyName(access: KeyAccess, e: KeyEntry): Promise<string | null> {
  if (!access.managedKeys || !e.managedKeyId) return null;
  try {
    return (await access.managedKeys.resolve({ id: e.managedKeyId }, access.allowed ?? [])).entry.name;
  } catch (err) {
    if (err instanceof CofferError && err.status < 500) return null;
    throw err;
  }
}
