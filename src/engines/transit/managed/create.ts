// Creating and rotating keys of type managed_key, and the settings they refuse. The key material
// is the managed key's: creation uses the backend's key (generating it when missing and
// allow_generate_key allows), rotation asks the backend for a fresh one (allow_replace_key) or
// moves to another managed key. Nothing of it can leave the backend, so export, plaintext backup
// and derivation do not apply; automatic rotation is refused because the periodic work runs
// without a request, and so without the mount's allowed_managed_keys to check.

import { badRequest } from '../../../framework/errors';
import type { FieldData } from '../../../framework/fields';
import { ensureKey, replaceKey } from '../../../managed-keys/guard';
import { managedKeyRef, type ManagedKeyRef } from '../../../managed-keys/resolve';
import { checkTypeOptions, policyWith, type CreateOptions } from '../create';
import { editable, type KeyPolicy } from '../policy';
import { managedOf, NOT_AVAILABLE, type ManagedUse } from './access';
import { managedVersion } from './public-key';

export const NO_EXPORT = 'keys of type managed_key cannot be exported or backed up: their key never leaves the managed key\'s backend';
export const NO_AUTO_ROTATE = 'automatic rotation is not supported for keys of type managed_key: rotate them with keys/:name/rotate';
export const MANAGED_FIELDS_ONLY = 'managed_key_name and managed_key_id apply only to keys of type managed_key';

/** Whether the request names a managed key (JSON null is the empty string). */
export const namesManagedKey = (f: FieldData): boolean => f.get<string>('managed_key_name').trim() !== '' || f.get<string>('managed_key_id').trim() !== '';

const refOf = (f: FieldData): ManagedKeyRef => managedKeyRef(f.get<string>('managed_key_name'), f.get<string>('managed_key_id'));

/** The settings a managed_key key refuses (creation and keys/:name/config alike). */
export function checkManagedSettings(s: { exportable: boolean; allowPlaintextBackup: boolean; autoRotatePeriod: number }): void {
  if (s.exportable || s.allowPlaintextBackup) throw badRequest(NO_EXPORT);
  if (s.autoRotatePeriod !== 0) throw badRequest(NO_AUTO_ROTATE);
}

/** keys/:name with type managed_key: version 1 is the named managed key's key. */
export async function createManagedKey(use: ManagedUse, name: string, f: FieldData, now: number): Promise<KeyPolicy> {
  if (!use.available) throw badRequest(NOT_AVAILABLE);
  const o: CreateOptions = {
    type: 'managed_key',
    derived: f.get<boolean>('derived'),
    convergent: f.get<boolean>('convergent_encryption'),
    exportable: f.get<boolean>('exportable'),
    allowPlaintextBackup: f.get<boolean>('allow_plaintext_backup'),
    keySize: f.get<number>('key_size'),
    autoRotatePeriod: f.get<number>('auto_rotate_period'),
  };
  checkTypeOptions('managed_key', o);
  checkManagedSettings(o);
  const { entry, key } = await use.byRef(refOf(f));
  const v1 = await managedVersion(entry.uuid, await ensureKey(entry, key), now);
  return policyWith(name, 'managed_key', o, 0, v1);
}

/**
 * keys/:name/rotate of a managed_key key: the new version uses the managed key named (by default
 * the latest version's). The same managed key makes a fresh key in its backend (allow_replace_key,
 * or allow_generate_key when it holds none); another one is used as it is, generated if missing.
 * Versions on a replaced key still verify (their public key is kept) but no longer sign or decrypt.
 */
export async function rotateManagedKey(use: ManagedUse, p: KeyPolicy, f: FieldData, now: number): Promise<KeyPolicy> {
  const current = managedOf(p.versions.get(p.latestVersion) ?? { created: 0, hmacKey: new Uint8Array(0) });
  const { entry, key } = await use.byRef(namesManagedKey(f) ? refOf(f) : { id: current.id });
  const pub = entry.uuid === current.id ? await replaceKey(entry, key) : await ensureKey(entry, key);
  const next = editable(p);
  next.latestVersion = p.latestVersion + 1;
  next.versions.set(next.latestVersion, await managedVersion(entry.uuid, pub, now));
  return next;
}
