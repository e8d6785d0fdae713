// keys/, keys/:name (create, read, delete), keys/:name/config, rotate and trim.

import type { RsaPairSource } from '../../../crypto/rsa-keygen';
import { rsaBitsOf } from '../../../crypto/transit/asymmetric';
import type { LogicalRequest, PathDef } from '../../../framework/backend';
import { badRequest, notFound } from '../../../framework/errors';
import type { FieldData, FieldSchemas } from '../../../framework/fields';
import { nameRegex } from '../../../framework/backend';
import { itemBytes } from '../batch';
import { buildPolicy, checkAutoRotatePeriod } from '../create';
import { newVersion } from '../material';
import { editable, type KeyPolicy } from '../policy';
import { deletePolicy, listPolicies, loadPolicy, savePolicy } from '../store';
import { keyView } from '../view';
import type { ManagedKeyAccess } from '../../../managed-keys/access';
import { managedUse } from '../managed/access';
import { checkManagedSettings, createManagedKey, MANAGED_FIELDS_ONLY, namesManagedKey, rotateManagedKey } from '../managed/create';
import { managedKeyView } from '../managed/view';

export const CREATION_FIELDS: FieldSchemas = {
  type: { type: 'string', description: 'Key type', default: 'aes256-gcm96' },
  derived: { type: 'bool', description: 'Derive a key per request from a context' },
  convergent_encryption: { type: 'bool', description: 'Same plaintext and context give the same ciphertext (needs derived)' },
  exportable: { type: 'bool', description: 'Allow exporting the key material (one-way)' },
  allow_plaintext_backup: { type: 'bool', description: 'Allow plaintext backups (one-way)' },
  key_size: { type: 'int', description: 'HMAC key size in bytes (16 to 512)' },
  auto_rotate_period: { type: 'duration', description: 'Automatic rotation period (0 disables; at least 1h)' },
  managed_key_name: { type: 'string', description: 'Managed key name (managed_key type)' },
  managed_key_id: { type: 'string', description: 'Managed key id (managed_key type)' },
  context: { type: 'string', description: 'Base64 context (key read: the derived ed25519 public key for it)' },
};

export const noSuchKey = (name: string) => badRequest(`no existing key named ${name} could be found`);

/** The key a management path operates on (400 when absent). */
export async function existingKey(req: LogicalRequest, name: string): Promise<KeyPolicy> {
  const p = await loadPolicy(req.storage, name);
  if (!p) throw noSuchKey(name);
  return p;
}

/** Asks for the alarm when the key's next automatic rotation is due. */
export function scheduleRotation(req: LogicalRequest, p: KeyPolicy): void {
  if (p.autoRotatePeriod <= 0) return;
  const latest = p.versions.get(p.latestVersion);
  req.wakeAt?.((latest?.created ?? Date.now()) + p.autoRotatePeriod * 1000);
}

/** Adds a generated version (rotate and auto-rotation). */
export async function rotated(p: KeyPolicy, now: number, rsa?: RsaPairSource): Promise<KeyPolicy> {
  if (p.imported && !p.allowRotation) throw badRequest(`imported key ${p.name} does not allow rotation within Vault`);
  const next = editable(p);
  next.latestVersion = p.latestVersion + 1;
  next.versions.set(next.latestVersion, await newVersion(p.type, p.keySize, now, rsa));
  if (p.imported) next.rotatedHere = true;
  return next;
}

/** The key read response; a managed_key key's shows its managed keys (../managed/view.ts). */
const viewOf = (req: LogicalRequest, managed: ManagedKeyAccess | undefined, p: KeyPolicy) =>
  p.type === 'managed_key' ? managedKeyView(managedUse(managed, req), p) : keyView(p);

/** A key of one of transit's own types, version 1 generated here. */
function generatedKey(req: LogicalRequest, f: FieldData, name: string): Promise<KeyPolicy> {
  const options = {
    type: f.get<string>('type'),
    derived: f.get<boolean>('derived'),
    convergent: f.get<boolean>('convergent_encryption'),
    exportable: f.get<boolean>('exportable'),
    allowPlaintextBackup: f.get<boolean>('allow_plaintext_backup'),
    keySize: f.get<number>('key_size'),
    autoRotatePeriod: f.get<number>('auto_rotate_period'),
  };
  return buildPolicy(name, options, Date.now(), undefined, req.rsaPairs);
}

async function create(req: LogicalRequest, f: FieldData, managed: ManagedKeyAccess | undefined) {
  const name = f.get<string>('name');
  const managedType = f.get<string>('type') === 'managed_key';
  if (!managedType && namesManagedKey(f)) throw badRequest(MANAGED_FIELDS_ONLY);
  const existing = await loadPolicy(req.storage, name);
  if (existing) return { data: await viewOf(req, managed, existing), warnings: [`key ${name} already existed`] };
  const p = managedType ? await createManagedKey(managedUse(managed, req), name, f, Date.now()) : await generatedKey(req, f, name);
  await savePolicy(req.storage, p);
  scheduleRotation(req, p);
  return { data: await viewOf(req, managed, p) };
}

async function configure(req: LogicalRequest, f: FieldData, managed: ManagedKeyAccess | undefined) {
  const p = editable(await existingKey(req, f.get<string>('name')));
  const warnings: string[] = [];
  if (p.type === 'managed_key') {
    checkManagedSettings({
      exportable: f.has('exportable') && f.get<boolean>('exportable'),
      allowPlaintextBackup: f.has('allow_plaintext_backup') && f.get<boolean>('allow_plaintext_backup'),
      autoRotatePeriod: f.has('auto_rotate_period') ? f.get<number>('auto_rotate_period') : 0,
    });
  }
  if (f.has('min_decryption_version')) {
    let v = f.get<number>('min_decryption_version');
    if (v < 0) throw badRequest('min decryption version cannot be negative');
    if (v === 0) {
      v = 1;
      warnings.push('since Vault 0.3, transit key numbering starts at 1; forcing minimum to 1');
    }
    if (v > p.latestVersion) throw badRequest(`cannot set min decryption version of ${v}, latest key version is ${p.latestVersion}`);
    if (v < p.minAvailableVersion) throw badRequest(`cannot set min decryption version of ${v} below the min available version ${p.minAvailableVersion}`);
    p.minDecryptionVersion = v;
  }
  if (f.has('min_encryption_version')) {
    const v = f.get<number>('min_encryption_version');
    if (v < 0) throw badRequest('min encryption version cannot be negative');
    if (v > p.latestVersion) throw badRequest(`cannot set min encryption version of ${v}, latest key version is ${p.latestVersion}`);
    if (v !== 0 && v < p.minAvailableVersion) throw badRequest(`cannot set min encryption version of ${v} below the min available version ${p.minAvailableVersion}`);
    p.minEncryptionVersion = v;
  }
  if (p.minEncryptionVersion > 0 && p.minEncryptionVersion < p.minDecryptionVersion) {
    throw badRequest(
      `cannot set min encryption/decryption values; min encryption version of ${p.minEncryptionVersion} must be greater than or equal to min decryption version of ${p.minDecryptionVersion}`,
    );
  }
  if (f.has('deletion_allowed')) p.deletionAllowed = f.get<boolean>('deletion_allowed');
  if (f.has('exportable')) {
    const v = f.get<boolean>('exportable');
    if (p.exportable && !v) throw badRequest('cannot disable exportability after it has been enabled');
    p.exportable = v;
  }
  if (f.has('allow_plaintext_backup')) {
    const v = f.get<boolean>('allow_plaintext_backup');
    if (p.allowPlaintextBackup && !v) throw badRequest('cannot disable plaintext backup after it has been enabled');
    p.allowPlaintextBackup = v;
  }
  if (f.has('auto_rotate_period')) {
    const v = f.get<number>('auto_rotate_period');
    checkAutoRotatePeriod(v);
    p.autoRotatePeriod = v;
  }
  await savePolicy(req.storage, p);
  scheduleRotation(req, p);
  return { data: await viewOf(req, managed, p), ...(warnings.length ? { warnings } : {}) };
}

async function trim(req: LogicalRequest, f: FieldData, managed: ManagedKeyAccess | undefined) {
  const p = editable(await existingKey(req, f.get<string>('name')));
  const min = f.get<number>('min_available_version');
  if (p.minEncryptionVersion === 0 || p.minDecryptionVersion === 0) {
    throw badRequest('minimum decryption and encryption versions must be set before trimming');
  }
  if (min <= 0) throw badRequest('minimum available version should be positive');
  if (min > p.minEncryptionVersion) throw badRequest('minimum available version cannot be greater than minimum encryption version');
  if (min > p.minDecryptionVersion) throw badRequest('minimum available version cannot be greater than minimum decryption version');
  if (min < p.minAvailableVersion) throw badRequest(`minimum available version cannot be less than the current one (${p.minAvailableVersion})`);
  for (const n of [...p.versions.keys()]) if (n < min) p.versions.delete(n);
  p.minAvailableVersion = min;
  await savePolicy(req.storage, p);
  return { data: await viewOf(req, managed, p) };
}

/** keys/:name/rotate: a generated version, or for managed_key keys one from a managed key. */
async function rotate(req: LogicalRequest, f: FieldData, managed: ManagedKeyAccess | undefined) {
  const p = await existingKey(req, f.get<string>('name'));
  if (p.type !== 'managed_key' && namesManagedKey(f)) throw badRequest(MANAGED_FIELDS_ONLY);
  const next = p.type === 'managed_key' ? await rotateManagedKey(managedUse(managed, req), p, f, Date.now()) : await rotated(p, Date.now(), req.rsaPairs);
  await savePolicy(req.storage, next);
  scheduleRotation(req, next);
  return { data: await viewOf(req, managed, next) };
}

export function keyPaths(managed?: ManagedKeyAccess): PathDef[] {
  const name = { type: 'string', description: 'Key name', required: true } as const;
  return [
    {
      pattern: 'keys/?',
      summary: 'List transit keys.',
      operations: {
        list: async (req) => {
          const keys = (await listPolicies(req.storage)).filter((k) => !k.endsWith('/'));
          if (keys.length === 0) throw notFound();
          return { data: { keys } };
        },
      },
    },
    {
      pattern: `keys/${nameRegex('name')}`,
      fields: { name, ...CREATION_FIELDS },
      summary: 'Create, read or delete a transit key.',
      // A new RSA key's pair is made outside the mount's object.
      rsaKeysNeeded: async (req, f) => {
        const bits = rsaBitsOf(f.get<string>('type'));
        if (req.operation === 'read' || req.operation === 'delete' || bits === undefined) return [];
        return (await loadPolicy(req.storage, f.get<string>('name'))) ? [] : [bits];
      },
      operations: {
        update: (req, f) => create(req, f, managed),
        read: async (req, f) => {
          const p = await loadPolicy(req.storage, f.get<string>('name'));
          if (!p) throw notFound();
          if (p.type === 'managed_key') return { data: await viewOf(req, managed, p) };
          return { data: await keyView(p, itemBytes({ context: f.get<string>('context') }, 'context')) };
        },
        delete: async (req, f) => {
          const n = f.get<string>('name');
          const p = await loadPolicy(req.storage, n);
          if (!p) throw badRequest('could not delete key; not found');
          if (!p.deletionAllowed) throw badRequest('deletion is not allowed for this key');
          await deletePolicy(req.storage, n);
          return null;
        },
      },
    },
    {
      pattern: `keys/${nameRegex('name')}/config`,
      fields: {
        name,
        min_decryption_version: { type: 'int', description: 'Oldest version that may decrypt or verify' },
        min_encryption_version: { type: 'int', description: 'Oldest version that may encrypt, sign or HMAC (0: latest)' },
        deletion_allowed: { type: 'bool', description: 'Allow deleting the key' },
        exportable: { type: 'bool', description: 'Allow exporting (one-way)' },
        allow_plaintext_backup: { type: 'bool', description: 'Allow plaintext backup (one-way)' },
        auto_rotate_period: { type: 'duration', description: 'Automatic rotation period (0 disables; at least 1h)' },
      },
      summary: "Change a key's settings.",
      operations: { update: (req, f) => configure(req, f, managed) },
    },
    {
      pattern: `keys/${nameRegex('name')}/rotate`,
      fields: {
        name,
        managed_key_name: { type: 'string', description: 'Managed key name (managed_key type)' },
        managed_key_id: { type: 'string', description: 'Managed key id (managed_key type)' },
      },
      summary: 'Add a new version to a key.',
      rsaKeysNeeded: async (req, f) => {
        const p = await loadPolicy(req.storage, f.get<string>('name'));
        const bits = p && (!p.imported || p.allowRotation) ? rsaBitsOf(p.type) : undefined;
        return bits === undefined ? [] : [bits];
      },
      operations: { update: (req, f) => rotate(req, f, managed) },
    },
    {
      pattern: `keys/${nameRegex('name')}/trim`,
      fields: { name, min_available_version: { type: 'int', description: 'Versions below this are deleted' } },
      summary: 'Delete versions older than min_available_version.',
      operations: { update: (req, f) => trim(req, f, managed) },
    },
  ];
}
