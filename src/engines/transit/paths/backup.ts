// backup/:name and restore(/:name): Vault's plaintext key backups (reference §6.12): base64 of
// JSON {"policy": <keysutil.Policy>, "archived_keys": {"keys": [<KeyEntry>...]}} with Vault's
// field names, so backups move between Vault and this server. Big integers (EC and RSA
// components, nanosecond periods) are written and read exactly: JSON.rawJSON out, and the
// reviver's source text in.

import { pemBlocks, toPem } from '../../../crypto/pem';
import type { LogicalRequest, PathDef } from '../../../framework/backend';
import { nameRegex } from '../../../framework/backend';
import { AsymmetricError, type AsymmetricKey } from '../../../crypto/transit/asymmetric';
import { cipherKeyLength } from '../../../crypto/transit/cipher';
import {
  ecFromParts,
  ecParts,
  ed25519FromPrivate64,
  ed25519PublicRaw,
  publicKeyPem,
  rsaFromParts,
  rsaFromPublicParts,
  rsaParts,
  rsaPublicParts,
} from '../../../crypto/transit/key-encoding';
import { fromBase64, fromUtf8, toBase64, utf8 } from '../../../crypto/encoding';
import { randomBytes } from '../../../crypto/random';
import { formatRFC3339Nano, GO_ZERO_TIME } from '../../../framework/duration';
import { badRequest, CofferError } from '../../../framework/errors';
import type { FieldData } from '../../../framework/fields';
import { HMAC_KEY_SIZE_MAX, HMAC_KEY_SIZE_MIN } from '../create';
import { NO_EXPORT } from '../managed/create';
import { isCipher, isEcdsa, isRsa, typeCode, typeFromCode, type KeyType } from '../key-types';
import { scheduleRotation } from './keys';
import { HMAC_KEY_BYTES } from '../material';
import { DEFAULT_VERSION_TEMPLATE, editable, type KeyPolicy, type KeyVersion, type StampInfo } from '../policy';
import { loadPolicy, savePolicy } from '../store';

// ---- JSON with exact integers ------------------------------------------------------------------

interface RawJson {
  readonly rawJSON: string;
}
type JsonOut = string | number | boolean | null | RawJson | JsonOut[] | { [key: string]: JsonOut };
type Reviver = (this: unknown, key: string, value: unknown, context?: { source?: string }) => unknown;

// ES2025 additions that TypeScript's ES2023 lib does not declare (workerd has both).
const rawJSON = (JSON as unknown as { rawJSON(text: string): RawJson }).rawJSON;
const parseWith = JSON.parse as (text: string, reviver: Reviver) => unknown;

const bigOut = (n: bigint): RawJson => rawJSON(n.toString());

/** JSON.parse where integers beyond 2^53 come back as exact bigints. */
function parseExact(text: string): unknown {
  return parseWith(text, (_key, value, context) =>
    typeof value === 'number' && !Number.isSafeInteger(value) && context?.source && /^-?\d+$/.test(context.source) ? BigInt(context.source) : value,
  );
}

// ---- reading untrusted backup JSON ---------------------------------------------------------------

type Obj = Record<string, unknown>;

const malformed = (what: string): CofferError => badRequest(`invalid backup: ${what}`);

function asObj(v: unknown, what: string): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw malformed(`${what} is not an object`);
  return v as Obj;
}

/** A member by name: exact first, then case-insensitively (Go's decoder matches both). */
function member(o: Obj, ...names: string[]): unknown {
  for (const name of names) {
    if (o[name] !== undefined) return o[name];
    const folded = Object.keys(o).find((k) => k.toLowerCase() === name.toLowerCase());
    if (folded !== undefined) return o[folded];
  }
  return undefined;
}

function int(o: Obj, name: string, ...aliases: string[]): number {
  const v = member(o, name, ...aliases);
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return v;
  throw malformed(`${name} is not an integer`);
}

function bool(o: Obj, name: string, ...aliases: string[]): boolean {
  const v = member(o, name, ...aliases);
  if (v === undefined || v === null) return false;
  if (typeof v === 'boolean') return v;
  throw malformed(`${name} is not a boolean`);
}

function str(o: Obj, name: string): string {
  const v = member(o, name);
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  throw malformed(`${name} is not a string`);
}

function bytes(o: Obj, name: string): Uint8Array | null {
  const s = str(o, name);
  if (s === '') return null;
  const out = fromBase64(s);
  if (!out) throw malformed(`${name} is not base64`);
  return out;
}

function big(o: Obj, name: string): bigint | null {
  const v = member(o, name);
  if (v === undefined || v === null) return null;
  if (typeof v === 'bigint') return v;
  if (typeof v === 'number' && Number.isSafeInteger(v)) return BigInt(v);
  throw malformed(`${name} is not an integer`);
}

function needBig(o: Obj, name: string): bigint {
  const v = big(o, name);
  if (v === null) throw malformed(`${name} is missing`);
  return v;
}

/** Go's time.Time JSON (RFC 3339, up to nanoseconds, any offset) → ms; null for the zero time. */
function goTime(s: string): number | null {
  const m = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d)$/.exec(s);
  if (!m || s === GO_ZERO_TIME) return null;
  const ms = Date.parse(`${m[1]}${m[3]}`);
  return Number.isNaN(ms) ? null : ms + Number((m[2] ?? '0').padEnd(3, '0').slice(0, 3));
}

// Certificate chains are stored as PEM and backed up as DER, as Vault does.
const pemToDer = (pem: string): Uint8Array | null => pemBlocks(pem, 'CERTIFICATE')[0]?.der ?? null;

// ---- writing ---------------------------------------------------------------------------------

const ZERO_ENTRY: JsonOut = { key: null, hmac_key: null, time: GO_ZERO_TIME, creation_time: 0 };
// Vault: 0 = hmac-sha256-counter (also the value of keys that never derive), 1 = hkdf_sha256.
const kdfCode = (p: KeyPolicy): number => (p.derived && p.kdf === 'hkdf_sha256' ? 1 : 0);
const stamp = (s: StampInfo | undefined): JsonOut => (s ? { time: s.time, version: s.version } : null);

/** A version as Vault's KeyEntry. */
async function entryOut(p: KeyPolicy, v: KeyVersion): Promise<JsonOut> {
  const out: Record<string, JsonOut> = {
    key: p.type === 'hmac' ? toBase64(v.hmacKey) : v.key ? toBase64(v.key) : null,
    hmac_key: toBase64(v.hmacKey),
    time: formatRFC3339Nano(v.created),
  };
  const asym = v.asym;
  if (asym && isEcdsa(p.type)) {
    const ec = await ecParts(asym);
    out.ec_x = bigOut(ec.x);
    out.ec_y = bigOut(ec.y);
    if (ec.d !== null) out.ec_d = bigOut(ec.d);
  }
  if (asym && isRsa(p.type)) {
    if (asym.privateKey) {
      const k = await rsaParts(asym);
      out.rsa_key = {
        N: bigOut(k.n),
        E: k.e,
        D: bigOut(k.d),
        Primes: [bigOut(k.p), bigOut(k.q)],
        Precomputed: { Dp: bigOut(k.dp), Dq: bigOut(k.dq), Qinv: bigOut(k.qi), CRTValues: [] },
      };
    }
    const pub = await rsaPublicParts(asym);
    out.rsa_public_key = { N: bigOut(pub.n), E: pub.e };
  }
  if (asym && isEcdsa(p.type)) out.public_key = publicKeyPem(asym);
  if (asym && p.type === 'ed25519') out.public_key = toBase64(ed25519PublicRaw(asym));
  if (p.convergent) out.convergent_version = p.convergentVersion === -1 ? 3 : p.convergentVersion;
  out.creation_time = Math.floor(v.created / 1000);
  const chain = (v.certificateChain ?? []).map(pemToDer).filter((d): d is Uint8Array => d !== null);
  if (chain.length) out.certificate_chain = chain.map(toBase64);
  return out;
}

async function encodeBackup(p: KeyPolicy): Promise<string> {
  const keys: Record<string, JsonOut> = {};
  const archive: JsonOut[] = [];
  // Vault's archive holds every version from min_available_version (index 0 = that version;
  // a zero entry stands for version 0); its live map only those that can still decrypt.
  for (let n = p.minAvailableVersion; n <= p.latestVersion; n++) {
    const v = p.versions.get(n);
    const entry = v ? await entryOut(p, v) : ZERO_ENTRY;
    archive.push(entry);
    if (v && n >= p.minDecryptionVersion) keys[n] = entry;
  }
  const policy: Record<string, JsonOut> = { name: p.name };
  if (p.type === 'hmac' && p.keySize) policy.key_size = p.keySize;
  Object.assign(policy, {
    keys,
    derived: p.derived,
    kdf: kdfCode(p),
    convergent_encryption: p.convergent,
    exportable: p.exportable,
    min_decryption_version: p.minDecryptionVersion,
    min_encryption_version: p.minEncryptionVersion,
    latest_version: p.latestVersion,
    archive_version: p.latestVersion,
    archive_min_version: p.minAvailableVersion,
    min_available_version: p.minAvailableVersion,
    deletion_allowed: p.deletionAllowed,
    convergent_version: p.convergentVersion,
    type: typeCode(p.type),
    backup_info: stamp(p.backupInfo),
    restore_info: stamp(p.restoreInfo),
    allow_plaintext_backup: p.allowPlaintextBackup,
    version_template: p.versionTemplate === DEFAULT_VERSION_TEMPLATE ? '' : p.versionTemplate,
    storage_prefix: '',
    auto_rotate_period: bigOut(BigInt(p.autoRotatePeriod) * 1_000_000_000n),
    // Untagged in Vault's struct, hence Go's field names; a rotation inside Vault clears Imported.
    Imported: p.imported && !p.rotatedHere,
    AllowImportedKeyRotation: p.allowRotation,
  } satisfies Record<string, JsonOut>);
  const doc: JsonOut = { policy, archived_keys: { keys: archive } };
  return toBase64(utf8(JSON.stringify(doc)));
}

// ---- reading --------------------------------------------------------------------------------

/** Vault's type codes for types this server does not offer. */
const OTHER_TYPES: Record<number, string> = { 10: 'managed_key', 12: 'aes128-cmac', 13: 'aes256-cmac', 14: 'ml-dsa', 15: 'hybrid' };

const isZeroEntry = (e: Obj): boolean =>
  ['key', 'hmac_key', 'ec_x', 'ec_d', 'rsa_key', 'rsa_public_key', 'public_key'].every((k) => member(e, k) === undefined || member(e, k) === null || member(e, k) === '');

async function ed25519FromRawPublic(raw: Uint8Array): Promise<AsymmetricKey> {
  const key = await crypto.subtle.importKey('raw', raw, { name: 'Ed25519' }, true, ['verify']);
  return { type: 'ed25519', privateKey: null, publicKey: new Uint8Array((await crypto.subtle.exportKey('spki', key)) as ArrayBuffer) };
}

async function asymmetricFrom(type: KeyType, e: Obj, key: Uint8Array | null): Promise<AsymmetricKey> {
  if (type === 'ed25519') {
    if (key) return await ed25519FromPrivate64(key);
    const raw = fromBase64(str(e, 'public_key'));
    if (raw?.length !== 32) throw malformed('ed25519 version without a private or public key');
    return await ed25519FromRawPublic(raw);
  }
  if (isEcdsa(type)) return await ecFromParts(type, { x: needBig(e, 'ec_x'), y: needBig(e, 'ec_y'), d: big(e, 'ec_d') });
  if (!isRsa(type)) throw malformed(`no key material for type ${type}`);
  const priv = member(e, 'rsa_key');
  if (priv !== undefined && priv !== null) {
    const k = asObj(priv, 'rsa_key');
    const primes = member(k, 'Primes');
    if (!Array.isArray(primes) || primes.length !== 2) throw badRequest('invalid backup: only two-prime RSA keys are supported');
    const pre = asObj(member(k, 'Precomputed'), 'rsa_key.Precomputed');
    const prime = (i: number) => needBig({ p: primes[i] }, 'p');
    return await rsaFromParts(type, {
      n: needBig(k, 'N'),
      e: int(k, 'E'),
      d: needBig(k, 'D'),
      p: prime(0),
      q: prime(1),
      dp: needBig(pre, 'Dp'),
      dq: needBig(pre, 'Dq'),
      qi: needBig(pre, 'Qinv'),
    });
  }
  const pub = asObj(member(e, 'rsa_public_key'), 'rsa_public_key');
  return await rsaFromPublicParts(type, needBig(pub, 'N'), int(pub, 'E'));
}

async function versionFrom(type: KeyType, e: Obj, n: number): Promise<KeyVersion> {
  const created = goTime(str(e, 'time')) ?? int(e, 'creation_time') * 1000;
  const key = bytes(e, 'key');
  const hmacKey = bytes(e, 'hmac_key');
  // Versions from before per-version HMAC keys existed get a fresh one, as Vault's upgrade does.
  const v: KeyVersion = { created, hmacKey: hmacKey ?? randomBytes(HMAC_KEY_BYTES) };
  if (type === 'hmac') {
    const k = key ?? hmacKey;
    if (!k || k.length < HMAC_KEY_SIZE_MIN || k.length > HMAC_KEY_SIZE_MAX) throw malformed(`version ${n} has no valid hmac key`);
    v.hmacKey = k;
  } else if (isCipher(type)) {
    if (key?.length !== cipherKeyLength(type)) throw malformed(`version ${n} has no valid ${type} key`);
    v.key = key;
  } else {
    v.asym = await asymmetricFrom(type, e, key);
    if (type === 'ed25519' && key) v.key = key;
  }
  const chain = member(e, 'certificate_chain');
  if (Array.isArray(chain) && chain.length) {
    v.certificateChain = chain.map((c) => {
      const der = typeof c === 'string' ? fromBase64(c) : null;
      if (!der) throw malformed(`version ${n} has an invalid certificate_chain`);
      return toPem('CERTIFICATE', der);
    });
  }
  return v;
}

/** Every version a backup holds: archived entries (indexed from min_available_version), then the live map. */
function backupEntries(doc: Obj, pol: Obj): Map<number, Obj> {
  const entries = new Map<number, Obj>();
  const base = int(pol, 'min_available_version');
  const archived = member(doc, 'archived_keys');
  if (archived !== undefined && archived !== null) {
    const list = member(asObj(archived, 'archived_keys'), 'keys');
    if (list !== undefined && list !== null && !Array.isArray(list)) throw malformed('archived_keys.keys is not a list');
    (list ?? []).forEach((e: unknown, i: number) => entries.set(base + i, asObj(e, 'archived key')));
  }
  for (const [k, e] of Object.entries(asObj(member(pol, 'keys') ?? {}, 'keys'))) {
    if (!/^\d+$/.test(k)) throw malformed(`key version "${k}" is not a number`);
    entries.set(Number(k), asObj(e, `key version ${k}`));
  }
  return entries;
}

function convergentVersionOf(pol: Obj, entries: Obj[]): number {
  const policyLevel = int(pol, 'convergent_version');
  // Each version's own scheme wins over the policy's (0 in both: the first scheme).
  const effective = entries.map((e) => int(e, 'convergent_version') || policyLevel || 1);
  const lowest = Math.min(...effective);
  if (lowest >= 3) return policyLevel === -1 ? -1 : 3;
  return lowest;
}

function stampIn(v: unknown, what: string): StampInfo | undefined {
  if (v === undefined || v === null) return undefined;
  const o = asObj(v, what);
  return { time: str(o, 'time'), version: int(o, 'version') };
}

async function decodeBackup(backup: string, rename: string, now: number): Promise<KeyPolicy> {
  const raw = fromBase64(backup);
  if (!raw) throw malformed('not base64');
  let parsed: unknown;
  try {
    parsed = parseExact(fromUtf8(raw));
  } catch {
    throw malformed('not JSON');
  }
  const doc = asObj(parsed, 'backup');
  const polRaw = member(doc, 'policy');
  if (polRaw === undefined || polRaw === null) throw badRequest('backup data does not contain a valid policy');
  const pol = asObj(polRaw, 'policy');
  const name = rename || str(pol, 'name');
  if (!new RegExp(`^${nameRegex('n')}$`).test(name)) throw malformed(`invalid key name "${name}"`);
  const code = int(pol, 'type');
  const type = typeFromCode(code);
  // A managed_key backup would carry only managed key UUIDs of another server.
  if (!type || type === 'managed_key') throw badRequest(`restoring keys of type ${OTHER_TYPES[code] ?? `code ${code}`} is not supported`);
  const latest = int(pol, 'latest_version');
  const minAvailable = int(pol, 'min_available_version');
  const minDecryption = Math.max(1, int(pol, 'min_decryption_version'));
  if (latest < 1 || minDecryption > latest) throw malformed('inconsistent key versions');
  const kept = [...backupEntries(doc, pol)].filter(([n, e]) => n >= Math.max(1, minAvailable) && n <= latest && !isZeroEntry(e));
  const versions = new Map<number, KeyVersion>();
  try {
    for (const [n, e] of kept.sort((a, b) => a[0] - b[0])) versions.set(n, await versionFrom(type, e, n));
  } catch (e) {
    if (e instanceof AsymmetricError) throw malformed(e.message);
    throw e;
  }
  for (let n = minDecryption; n <= latest; n++) if (!versions.has(n)) throw malformed(`key version ${n} is missing`);
  const derived = bool(pol, 'derived');
  const convergent = bool(pol, 'convergent_encryption');
  const periodNs = big(pol, 'auto_rotate_period') ?? 0n;
  const template = str(pol, 'version_template') || DEFAULT_VERSION_TEMPLATE;
  if (template.split('{{version}}').length !== 2) throw malformed('invalid version_template');
  return {
    name,
    type,
    derived,
    kdf: derived && int(pol, 'kdf') === 0 ? 'hmac-sha256-counter' : 'hkdf_sha256',
    convergent,
    convergentVersion: convergent ? convergentVersionOf(pol, kept.map(([, e]) => e)) : 0,
    exportable: bool(pol, 'exportable'),
    allowPlaintextBackup: bool(pol, 'allow_plaintext_backup'),
    deletionAllowed: bool(pol, 'deletion_allowed'),
    minDecryptionVersion: minDecryption,
    minEncryptionVersion: int(pol, 'min_encryption_version'),
    minAvailableVersion: minAvailable,
    latestVersion: latest,
    autoRotatePeriod: Number(periodNs / 1_000_000_000n),
    keySize: type === 'hmac' ? (versions.get(latest)?.hmacKey.length ?? 0) : 0,
    imported: bool(pol, 'Imported', 'imported_key'),
    allowRotation: bool(pol, 'AllowImportedKeyRotation', 'allow_imported_key_rotation'),
    rotatedHere: false,
    versionTemplate: template,
    backupInfo: stampIn(member(pol, 'backup_info'), 'backup_info'),
    restoreInfo: { time: formatRFC3339Nano(now), version: latest },
    versions,
  };
}

// ---- handlers ---------------------------------------------------------------------------------

/** Backs up a key and records backup_info on it (the mount serialises this read with its writes). */
async function backupKey(req: LogicalRequest, f: FieldData) {
  const name = f.get<string>('name');
  const p = await loadPolicy(req.storage, name);
  if (!p) throw badRequest(`key "${name}" not found`);
  if (p.type === 'managed_key') throw badRequest(NO_EXPORT);
  if (!p.exportable) throw badRequest('exporting is disallowed on the policy');
  if (!p.allowPlaintextBackup) throw badRequest('plaintext backup is disallowed on the policy');
  const stamped = editable(p);
  stamped.backupInfo = { time: formatRFC3339Nano(Date.now()), version: p.latestVersion };
  const backup = await encodeBackup(stamped);
  await savePolicy(req.storage, stamped);
  return { data: { backup } };
}

async function restoreKey(req: LogicalRequest, f: FieldData) {
  const backup = f.get<string>('backup');
  if (backup === '') throw badRequest("'backup' must be supplied");
  const rename = f.get<string>('name');
  if (rename.includes('/')) throw badRequest('key names cannot be paths');
  const p = await decodeBackup(backup, rename, Date.now());
  if ((await loadPolicy(req.storage, p.name)) && !f.get<boolean>('force')) throw badRequest(`key "${p.name}" already exists`);
  await savePolicy(req.storage, p);
  scheduleRotation(req, p);
  return null;
}

export function backupPaths(): PathDef[] {
  return [
    {
      pattern: `backup/${nameRegex('name')}`,
      fields: { name: { type: 'string', description: 'Key name', required: true } },
      summary: 'Back up a key (exportable keys that allow plaintext backup).',
      operations: { read: backupKey },
    },
    {
      pattern: `restore(?:/${nameRegex('name')})?`,
      fields: {
        backup: { type: 'string', description: 'A backup from backup/:name' },
        name: { type: 'string', description: 'Name of the restored key (default: the name in the backup)' },
        force: { type: 'bool', description: 'Replace an existing key of that name' },
      },
      summary: 'Restore a key from a backup.',
      operations: { update: restoreKey },
    },
  ];
}
