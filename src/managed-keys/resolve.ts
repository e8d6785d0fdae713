// Which managed key a mount means, and whether it may use it: a mount uses a key it lists in its
// allowed_managed_keys (by name), or any key configured with any_mount.

import { ManagedKeyError, type ManagedKeyEntry } from './types';

/** How an engine names a key: managed_key_name or managed_key_id (the key's UUID). */
export type ManagedKeyRef = { name: string; id?: undefined } | { id: string; name?: undefined };

/** Whether a mount with this allowed_managed_keys may use the key. */
export const mountMayUse = (entry: ManagedKeyEntry, allowedManagedKeys: readonly string[]): boolean =>
  entry.anyMount || allowedManagedKeys.includes(entry.name);

/**
 * The key `ref` names among `entries`, for a mount whose allowed_managed_keys is `allowed`.
 * 400 "no managed key found with name|uuid ..." (Vault's wording) when there is none, and a 400
 * when the mount may not use it.
 */
export function resolveManagedKey(entries: Iterable<ManagedKeyEntry>, allowed: readonly string[], ref: ManagedKeyRef): ManagedKeyEntry {
  let found: ManagedKeyEntry | undefined;
  for (const e of entries) {
    if (ref.id !== undefined ? e.uuid === ref.id : e.name === ref.name) {
      found = e;
      break;
    }
  }
  if (!found) {
    throw new ManagedKeyError(400, ref.id !== undefined ? `no managed key found with uuid ${JSON.stringify(ref.id)}` : `no managed key found with name ${JSON.stringify(ref.name)}`);
  }
  if (!mountMayUse(found, allowed)) {
    throw new ManagedKeyError(
      400,
      `managed key ${JSON.stringify(found.name)} is not allowed on this mount: add it to the mount's allowed_managed_keys (sys/mounts/<path>/tune) or set any_mount on the key`,
    );
  }
  return found;
}

/** The reference an engine's managed_key_name / managed_key_id fields make (Vault PKI's messages). */
export function managedKeyRef(name: string, id: string): ManagedKeyRef {
  const n = name.trim();
  const i = id.trim();
  if (!n && !i) throw new ManagedKeyError(400, 'missing argument managed_key_name or managed_key_id');
  if (n && i) throw new ManagedKeyError(400, 'only one argument of managed_key_name or managed_key_id should be specified');
  return n ? { name: n } : { id: i };
}
