// The `kms` key source of root|intermediate|keys/generate/kms: a managed key (sys/managed-keys)
// named by managed_key_name or managed_key_id, which the mount must be allowed to use and which
// must allow signing. Its HSM key is generated when missing and allow_generate_key says so;
// otherwise the existing one is used. Only its UUID and public half become the PKI key.

import { publicKeyInfo, type PkiKeyType } from '../../crypto/pki/keys';
import { pemBlocks } from '../../crypto/pem';
import { badRequest } from '../../framework/errors';
import type { FieldData } from '../../framework/fields';
import { assertUsage, ensureKey } from '../../managed-keys/guard';
import { managedKeyRef } from '../../managed-keys/resolve';
import { ManagedKeyError } from '../../managed-keys/types';
import { MANAGED_KEYS_UNAVAILABLE, type KeyAccess } from './signers';

/** What a PKI key entry keeps of a managed key. */
export interface ManagedKeyMaterial {
  managedKeyId: string;
  type: PkiKeyType;
  bits: number;
  /** SubjectPublicKeyInfo DER of the HSM key. */
  spki: Uint8Array;
}

/** The managed key a kms request names, its HSM key made if needed. */
export async function requestedManagedKey(access: KeyAccess, f: FieldData): Promise<ManagedKeyMaterial> {
  const ref = managedKeyRef(f.get<string>('managed_key_name'), f.get<string>('managed_key_id'));
  if (!access.managedKeys) throw badRequest(MANAGED_KEYS_UNAVAILABLE);
  const { entry, key } = await access.managedKeys.resolve(ref, access.allowed ?? []);
  assertUsage(entry, 'sign');
  const info = await ensureKey(entry, key);
  const der = pemBlocks(info.pem, 'PUBLIC KEY')[0]?.der;
  if (!der) throw new ManagedKeyError(502, `managed key ${JSON.stringify(entry.name)}: the backend answered without a public key`);
  const { type, bits } = publicKeyInfo(der);
  if (type === 'ed25519') throw badRequest(`managed key ${JSON.stringify(entry.name)} is an Ed25519 key, which cannot sign through a digest`);
  return { managedKeyId: entry.uuid, type, bits, spki: der };
}
