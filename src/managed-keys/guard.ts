// What a key's configuration allows, enforced in one place for every caller (engines, test/sign):
// usages, and allow_generate_key / allow_replace_key / allow_store_key around key creation.

import { typeLabel } from './entry';
import { ManagedKeyError, ManagedKeyMissing, type KeyUsage, type ManagedKey, type ManagedKeyEntry, type PublicKeyInfo } from './types';

/** Refuses an operation the key's `usages` do not include. */
export function assertUsage(entry: ManagedKeyEntry, usage: KeyUsage): void {
  if (!entry.usages.includes(usage)) {
    throw new ManagedKeyError(400, `managed key ${JSON.stringify(entry.name)} may not be used to ${usage}: its usages are ${entry.usages.join(', ')}`);
  }
}

/** The key's public half, or null when the backend holds no key for the configuration. */
export async function existingKey(key: ManagedKey): Promise<PublicKeyInfo | null> {
  try {
    return await key.publicKey();
  } catch (e) {
    if (e instanceof ManagedKeyMissing) return null;
    throw e;
  }
}

/** The key's public half, generating the key first when it is missing and allow_generate_key says so. */
export async function ensureKey(entry: ManagedKeyEntry, key: ManagedKey): Promise<PublicKeyInfo> {
  const found = await existingKey(key);
  if (found) return found;
  if (!entry.allowGenerateKey) {
    throw new ManagedKeyError(400, `managed key ${JSON.stringify(entry.name)}: no key was found in the ${typeLabel(entry.type)} backend, and allow_generate_key is false`);
  }
  return await key.generate();
}

/**
 * Generates a new key even when one exists (a rotation): allowed over an existing key only with
 * allow_replace_key, and in place of a missing one only with allow_generate_key.
 */
export async function replaceKey(entry: ManagedKeyEntry, key: ManagedKey): Promise<PublicKeyInfo> {
  const found = await existingKey(key);
  if (found && !entry.allowReplaceKey) {
    throw new ManagedKeyError(400, `managed key ${JSON.stringify(entry.name)}: a key already exists in the backend, and allow_replace_key is false`);
  }
  if (!found && !entry.allowGenerateKey) {
    throw new ManagedKeyError(400, `managed key ${JSON.stringify(entry.name)}: no key was found in the backend, and allow_generate_key is false`);
  }
  return await key.generate();
}

/**
 * Before key material from this server is stored (imported) into the backend: refused without
 * allow_store_key, and over an existing key without allow_replace_key too.
 */
export async function assertMayStore(entry: ManagedKeyEntry, key: ManagedKey): Promise<void> {
  if (!entry.allowStoreKey) {
    throw new ManagedKeyError(400, `managed key ${JSON.stringify(entry.name)}: storing a key in the backend is not allowed (allow_store_key is false)`);
  }
  if ((await existingKey(key)) && !entry.allowReplaceKey) {
    throw new ManagedKeyError(400, `managed key ${JSON.stringify(entry.name)}: a key already exists in the backend, and allow_replace_key is false`);
  }
}
