// The mount's issuer keys (reference §1.7): LIST keys, key/:key_ref (read, rename, delete) and
// keys/import. Private key material is never returned after creation (a managed key's never is).
// Deleting a managed key here only forgets it: the HSM key stays.

import { parsePrivateKeyPem, subjectKeyId } from '../../../crypto/pki/keys';
import { toHex } from '../../../crypto/encoding';
import { nameRegex, type LogicalRequest, type LogicalResponse, type PathDef } from '../../../framework/backend';
import { badRequest, notFound } from '../../../framework/errors';
import type { FieldData } from '../../../framework/fields';
import type { Storage } from '../../../framework/storage';
import { importKey, pemItems, TOO_SHORT } from './import';
import { entrySpki, managedKeyName, requestKeyAccess, type KeyAccess } from '../signers';
import type { ManagedKeyAccess } from '../../../managed-keys/access';
import {
  checkKeyName,
  deleteKey,
  keysConfig,
  loadAllIssuers,
  loadAllKeys,
  resolveKeyRef,
  saveKey,
  saveKeysConfig,
  type KeyEntry,
} from '../store';

const NAME_RE = /^\w(?:[\w.-]*\w)?$/;

/** A key_ref as Vault reads it: trimmed, any casing of "default" meaning the default key. */
const keyRef = (f: FieldData): string => {
  const ref = f.get<string>('key_ref').trim();
  return ref.toLowerCase() === 'default' ? 'default' : ref;
};

/** Colon-separated lowercase hex, as Vault prints key identifiers. */
export const colonHex = (b: Uint8Array): string => toHex(b).match(/../g)?.join(':') ?? '';

/** A key as reads show it; a managed key also names its managed key (by its current name). */
export async function keyView(access: KeyAccess, e: KeyEntry): Promise<LogicalResponse> {
  const data: Record<string, unknown> = {
    key_id: e.id,
    key_name: e.name,
    key_type: e.type,
    subject_key_id: colonHex(await subjectKeyId(entrySpki(e))),
  };
  if (!e.managedKeyId) return { data };
  const name = await managedKeyName(access, e);
  data.managed_key_id = e.managedKeyId;
  data.managed_key_name = name ?? '';
  if (name !== null) return { data };
  return { data, warnings: [`managed key ${e.managedKeyId} cannot be found or is not allowed on this mount: this key cannot sign until it is`] };
}

/**
 * The key_name a request asks for (Vault's getKeyName): absent → '', otherwise a valid name that
 * no key uses yet and that is not `default`.
 */
export async function requestedKeyName(storage: Storage, f: FieldData): Promise<string> {
  if (!f.has('key_name')) return '';
  const name = f.get<string>('key_name').trim();
  if (name.toLowerCase() === 'default') throw badRequest("reserved keyword 'default' can not be used as key name");
  if (!NAME_RE.test(name)) throw badRequest('key name contained invalid characters');
  await checkKeyName(storage, name, '');
  return name;
}

async function listKeys(req: LogicalRequest) {
  const keys = await loadAllKeys(req.storage);
  if (keys.length === 0) throw notFound();
  const { default: defaultId } = await keysConfig(req.storage);
  const keyInfo: Record<string, unknown> = {};
  for (const k of keys) keyInfo[k.id] = { key_name: k.name, is_default: k.id === defaultId };
  return { data: { keys: keys.map((k) => k.id), key_info: keyInfo } };
}

async function renameKey(req: LogicalRequest, f: FieldData, access: KeyAccess) {
  const key = await resolveKeyRef(req.storage, keyRef(f));
  const name = f.get<string>('key_name').trim();
  if (name !== '' && !NAME_RE.test(name)) throw badRequest('new key name outside of valid character limits');
  if (name.toLowerCase() === 'default') throw badRequest("reserved keyword 'default' can not be used as key name");
  await checkKeyName(req.storage, name, key.id);
  const next = { ...key, name };
  if (name !== key.name) await saveKey(req.storage, next);
  const view = await keyView(access, next);
  const warnings = [...(view.warnings ?? [])];
  if (name === '') warnings.push(`Name successfully deleted, you will now need to reference this key by it's Id: ${key.id}`);
  return { data: view.data, ...(warnings.length ? { warnings } : {}) };
}

async function removeKey(req: LogicalRequest, f: FieldData) {
  const ref = f.get<string>('key_ref').trim();
  const key = await resolveKeyRef(req.storage, keyRef(f));
  const user = (await loadAllIssuers(req.storage)).find((i) => i.keyId === key.id);
  if (user) throw badRequest(`Failed to Delete Key.  Key in Use by Issuer: ${user.id}`);
  await deleteKey(req.storage, key.id);
  const cfg = await keysConfig(req.storage);
  if (cfg.default !== key.id) return null;
  await saveKeysConfig(req.storage, { default: '' });
  return {
    warnings: [
      `Deleted key ${key.id} (via key_ref ${ref}); this was configured as the default key. Operations without an explicit key will not work until a new default is configured.`,
    ],
  };
}

async function importOneKey(req: LogicalRequest, f: FieldData) {
  const name = await requestedKeyName(req.storage, f);
  const text = f.get<string>('pem_bundle');
  if (text.length < 64) throw badRequest(TOO_SHORT);
  const items = pemItems(text);
  if (items.length !== 1) throw badRequest('only a single key can be present within the pem_bundle for importing');
  const key = await parsePrivateKeyPem(items[0].pem);
  const { entry, existing } = await importKey(req.storage, key, name);
  return {
    data: { key_id: entry.id, key_name: entry.name, key_type: entry.type },
    ...(existing ? { warnings: ['Key already imported, use key/ endpoint to update name.'] } : {}),
  };
}

export function keyPaths(managedKeys?: ManagedKeyAccess): PathDef[] {
  return [
    {
      pattern: 'keys/?',
      summary: "List the mount's keys.",
      operations: { list: listKeys },
    },
    {
      pattern: `key/${nameRegex('key_ref')}`,
      fields: {
        key_ref: { type: 'string', description: 'Key id, name, or "default"', default: 'default' },
        key_name: { type: 'string', description: 'New name of the key ("" removes it)' },
      },
      summary: 'Read, rename or delete a key.',
      operations: {
        read: async (req, f) => await keyView(requestKeyAccess(managedKeys, req), await resolveKeyRef(req.storage, keyRef(f))),
        update: (req, f) => renameKey(req, f, requestKeyAccess(managedKeys, req)),
        delete: removeKey,
      },
    },
    {
      pattern: 'keys/import',
      fields: {
        pem_bundle: { type: 'string', description: 'One unencrypted RSA, EC or Ed25519 private key in PEM' },
        key_name: { type: 'string', description: 'Name for the key' },
      },
      summary: 'Import a private key.',
      operations: { update: importOneKey },
    },
  ];
}
