// A managed key's configuration: type names and aliases, the fields of each backend with Vault's
// weak typing, validation (400s that say what is wrong), and the read view (secrets redacted).
//
// Type names: keys are stored under the spec's types (pkcs11, cloudakms, cloudbkeyvault,
// cloudckms). Vault's names awskms, azurekeyvault and gcpckms are aliases: a path may use either
// name, both list the same keys, and a read shows the type as the path named it.

import { badRequest, CofferError } from '../framework/errors';
import { convertField, type FieldType } from '../framework/fields';
import { EXACT_NUMBER_KEY, exactText, isExactNumber } from '../framework/json-numbers';
import {
  KEY_USAGES,
  MANAGED_KEY_TYPES,
  type AwsKmsConfig,
  type AzureKeyVaultConfig,
  type BackendConfigs,
  type GcpCkmsConfig,
  type KeyUsage,
  type ManagedKeyEntry,
  type ManagedKeyType,
  type Pkcs11Config,
} from './types';

/** Vault's names for the cloud types. */
export const VAULT_TYPE_ALIASES: Readonly<Record<string, ManagedKeyType>> = Object.freeze({
  awskms: 'cloudakms',
  azurekeyvault: 'cloudbkeyvault',
  gcpckms: 'cloudckms',
});

const VAULT_NAME_OF: Partial<Record<ManagedKeyType, string>> = { cloudakms: 'awskms', cloudbkeyvault: 'azurekeyvault', cloudckms: 'gcpckms' };

/** The stored type a path's type names (spec name or Vault alias); null when it names none. */
export function canonicalType(pathType: string): ManagedKeyType | null {
  if ((MANAGED_KEY_TYPES as readonly string[]).includes(pathType)) return pathType as ManagedKeyType;
  // Own keys only: a path's "constructor" or "toString" is no alias.
  return Object.hasOwn(VAULT_TYPE_ALIASES, pathType) ? VAULT_TYPE_ALIASES[pathType] : null;
}

/** "cloudakms (awskms)": a type with its Vault name, for messages. */
export const typeLabel = (type: ManagedKeyType): string => (VAULT_NAME_OF[type] ? `${type} (${VAULT_NAME_OF[type]})` : type);

/** The stored type of a path's type, or a 400 naming the accepted ones. */
export function requireType(pathType: string): ManagedKeyType {
  const type = canonicalType(pathType);
  if (!type) throw badRequest(`unsupported managed key type ${JSON.stringify(pathType)}: supported types are ${MANAGED_KEY_TYPES.map(typeLabel).join(', ')}`);
  return type;
}

/** Lowercase letters, digits, "_", "-" and "." (not first or last), at most 128 characters. */
const NAME_RE = /^[a-z0-9_](?:[a-z0-9_.-]{0,126}[a-z0-9_])?$/;

/** Refuses a name that is not a valid managed key name. */
export function validateName(name: string): string {
  if (name === '') throw badRequest('missing managed key name');
  if (name !== name.toLowerCase()) throw badRequest(`managed key names must be lowercase: ${JSON.stringify(name)}`);
  if (!NAME_RE.test(name)) {
    throw badRequest(`invalid managed key name ${JSON.stringify(name)}: use lowercase letters, digits, "_", "-" and "." (not first or last), at most 128 characters`);
  }
  return name;
}

// ---- fields

/** Generic fields: booleans may be given as strings ("true"/"false"), as Vault documents them. */
export const GENERIC_FIELDS: Readonly<Record<string, FieldType>> = Object.freeze({
  allow_generate_key: 'bool',
  allow_replace_key: 'bool',
  allow_store_key: 'bool',
  any_mount: 'bool',
  usages: 'comma-string-list',
});

/** Each type's backend fields and how they are converted ('any': converted by the type's rules below). */
export const BACKEND_FIELDS: Readonly<Record<ManagedKeyType, Readonly<Record<string, FieldType>>>> = Object.freeze({
  pkcs11: {
    library: 'string',
    slot: 'any',
    token_label: 'string',
    pin: 'string',
    key_label: 'string',
    key_id: 'string',
    mechanism: 'any',
    curve: 'string',
    key_bits: 'int',
    force_rw_session: 'bool',
    max_parallel: 'int',
  },
  cloudakms: {
    access_key: 'string',
    secret_key: 'string',
    curve: 'string',
    endpoint: 'string',
    key_bits: 'string',
    key_type: 'string',
    kms_key: 'string',
    region: 'string',
  },
  cloudbkeyvault: {
    tenant_id: 'string',
    client_id: 'string',
    client_secret: 'string',
    environment: 'string',
    vault_name: 'string',
    key_name: 'string',
    resource: 'string',
    key_bits: 'string',
    key_type: 'string',
  },
  cloudckms: {
    credentials: 'any',
    project: 'string',
    key_ring: 'string',
    region: 'string',
    crypto_key: 'string',
    crypto_key_version: 'string',
    algorithm: 'string',
  },
});

/** Every backend field of every type (for a path's schema). */
export const ALL_BACKEND_FIELDS: readonly string[] = Object.freeze([...new Set(Object.values(BACKEND_FIELDS).flatMap((f) => Object.keys(f)))].sort());

/** Fields never returned by a read: shown as "redacted". */
export const SECRET_FIELDS: Readonly<Record<ManagedKeyType, readonly string[]>> = Object.freeze({
  pkcs11: ['pin'],
  cloudakms: ['access_key', 'secret_key'],
  cloudbkeyvault: ['client_secret'],
  cloudckms: ['credentials'],
});

export const REDACTED = 'redacted';

const DEFAULT_USAGES: KeyUsage[] = ['sign', 'verify'];

const DEFAULTS: { [T in ManagedKeyType]: BackendConfigs[T] } = {
  pkcs11: {
    library: '',
    slot: '',
    token_label: '',
    pin: '',
    key_label: '',
    key_id: '',
    mechanism: 0,
    curve: '',
    key_bits: 0,
    force_rw_session: false,
    max_parallel: 1,
  },
  cloudakms: { access_key: '', secret_key: '', curve: '', endpoint: '', key_bits: '', key_type: '', kms_key: '', region: 'us-east-1' },
  cloudbkeyvault: {
    tenant_id: '',
    client_id: '',
    client_secret: '',
    environment: 'AZUREPUBLICCLOUD',
    vault_name: '',
    key_name: '',
    resource: 'vault.azure.net',
    key_bits: '',
    key_type: '',
  },
  cloudckms: { credentials: '', project: '', key_ring: '', region: '', crypto_key: '', crypto_key_version: '1', algorithm: '' },
};

/** Converts one value with the framework's weak typing; a 400 naming the field when it cannot. */
function convert(name: string, type: FieldType, raw: unknown): unknown {
  try {
    return convertField(type, raw);
  } catch (e) {
    if (e instanceof CofferError) throw e;
    throw badRequest(`error converting input ${JSON.stringify(raw)} for field "${name}": ${(e as Error).message}`);
  }
}

const missing = (field: string) => badRequest(`missing required field "${field}"`);

// ---- building an entry

export interface BuildInput {
  type: ManagedKeyType;
  name: string;
  /** The request's fields (path parameters `type` and `name` are ignored). */
  raw: Record<string, unknown>;
  /** The stored entry being updated: fields the request leaves out keep their values. */
  previous: ManagedKeyEntry | null;
  newId: () => string;
}

/**
 * The entry a create or update stores, or a 400 saying what is wrong. An update keeps the UUID
 * and every field the request does not name; the result is validated as a whole.
 */
export function buildEntry({ type, name, raw, previous, newId }: BuildInput): ManagedKeyEntry {
  if (previous && previous.type !== type) throw new Error('buildEntry: previous entry of another type');
  refuseForeignFields(type, raw);
  const given = (field: string) => raw[field] !== undefined;

  const flag = (field: string, current: boolean) => (given(field) ? (convert(field, 'bool', raw[field]) as boolean) : current);
  const generic = {
    allowGenerateKey: flag('allow_generate_key', previous?.allowGenerateKey ?? false),
    allowReplaceKey: flag('allow_replace_key', previous?.allowReplaceKey ?? false),
    allowStoreKey: flag('allow_store_key', previous?.allowStoreKey ?? false),
    anyMount: flag('any_mount', previous?.anyMount ?? false),
    usages: given('usages') ? parseUsages(convert('usages', 'comma-string-list', raw.usages) as string[]) : (previous?.usages ?? [...DEFAULT_USAGES]),
  };

  const config: Record<string, unknown> = { ...(previous?.config ?? DEFAULTS[type]) };
  for (const [field, ftype] of Object.entries(BACKEND_FIELDS[type])) {
    if (given(field)) config[field] = CONVERTERS[type][field]?.(raw[field]) ?? convert(field, ftype, raw[field]);
  }
  const entry = { uuid: previous?.uuid ?? newId(), name, type, ...generic, config } as unknown as ManagedKeyEntry;
  VALIDATORS[type](entry as never);
  return entry;
}

/** A field of another backend type is refused rather than ignored. */
function refuseForeignFields(type: ManagedKeyType, raw: Record<string, unknown>): void {
  const own = BACKEND_FIELDS[type];
  const foreign = Object.keys(raw)
    .filter((k) => raw[k] !== undefined && !(k in own) && ALL_BACKEND_FIELDS.includes(k))
    .sort();
  if (foreign.length > 0) {
    throw badRequest(`${foreign.map((f) => JSON.stringify(f)).join(', ')} ${foreign.length === 1 ? 'is not a field' : 'are not fields'} of ${typeLabel(type)} managed keys`);
  }
}

function parseUsages(list: string[]): KeyUsage[] {
  const out: KeyUsage[] = [];
  for (const raw of list) {
    const u = raw.trim().toLowerCase();
    if (!(KEY_USAGES as readonly string[]).includes(u)) throw badRequest(`invalid usage ${JSON.stringify(raw)}: allowed usages are ${KEY_USAGES.join(', ')}`);
    if (!out.includes(u as KeyUsage)) out.push(u as KeyUsage);
  }
  if (out.length === 0) throw badRequest(`"usages" must name at least one of ${KEY_USAGES.join(', ')}`);
  return out;
}

// Per-type conversions of the fields whose wire forms vary.

const UINT64_MAX = 18446744073709551615n;

function parseSlot(raw: unknown): string {
  if (raw === null || raw === '') return '';
  const text = typeof raw === 'number' && Number.isSafeInteger(raw) ? String(raw) : isExactNumber(raw) ? exactText(raw) : typeof raw === 'string' ? raw.trim() : null;
  if (text === null || !/^\d+$/.test(text) || BigInt(text) > UINT64_MAX) {
    throw badRequest(`invalid slot ${JSON.stringify(raw)}: give the slot number in decimal, as a string (e.g. "0" or "2305843009213693953")`);
  }
  return BigInt(text).toString();
}

function parseMechanism(raw: unknown): number {
  if (raw === null || raw === '') return 0;
  // A read shows the mechanism as a number: accept it back in that form too.
  if (typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 0 && raw <= 0xffffffff) return raw;
  if (typeof raw === 'string' && /^0[xX][0-9a-fA-F]{1,8}$/.test(raw.trim())) return parseInt(raw.trim().slice(2), 16);
  throw badRequest(`invalid mechanism ${JSON.stringify(raw)}: give a hexadecimal string prefixed with 0x, e.g. "0x0001" (CKM_RSA_PKCS) or "0x1041" (CKM_ECDSA)`);
}

/** key_bits of the cloud types: a string in Vault's documentation; numbers are accepted too. */
function parseKeyBitsText(raw: unknown): string {
  const text = convert('key_bits', 'string', raw) as string;
  return text.trim();
}

function parseCredentials(raw: unknown): string {
  // The JSON of a key file, as a string or as the object itself.
  if (raw !== null && typeof raw === 'object' && !Array.isArray(raw) && !(EXACT_NUMBER_KEY in raw)) return JSON.stringify(raw);
  return convert('credentials', 'string', raw) as string;
}

const CONVERTERS: Record<ManagedKeyType, Record<string, ((raw: unknown) => unknown) | undefined>> = {
  pkcs11: { slot: parseSlot, mechanism: parseMechanism },
  cloudakms: { key_bits: parseKeyBitsText },
  cloudbkeyvault: { key_bits: parseKeyBitsText },
  cloudckms: { credentials: parseCredentials },
};

// ---- validation per type

const RSA_SIZES = [2048, 3072, 4096];
const CURVES = ['P256', 'P384', 'P521'];

/** PKCS#11 mechanisms a key may be generated for (others may be used with existing keys). */
export const PKCS11_MECHANISMS: Readonly<Record<number, string>> = Object.freeze({
  0x0001: 'CKM_RSA_PKCS',
  0x0009: 'CKM_RSA_PKCS_OAEP',
  0x000d: 'CKM_RSA_PKCS_PSS',
  0x1041: 'CKM_ECDSA',
});
export const CKM_ECDSA = 0x1041;

export const mechanismHex = (m: number): string => `0x${m.toString(16).toUpperCase().padStart(4, '0')}`;

function checkCurve(config: { curve: string }): void {
  if (config.curve === '') return;
  const c = config.curve.toUpperCase().replace('-', '');
  if (!CURVES.includes(c)) throw badRequest(`invalid curve ${JSON.stringify(config.curve)}: supported curves are ${CURVES.join(', ')}`);
  config.curve = c;
}

function checkRsaBits(bits: number | string): void {
  if (bits === 0 || bits === '') return;
  if (!RSA_SIZES.includes(Number(bits)) || !/^\d+$/.test(String(bits))) {
    throw badRequest(`invalid key_bits ${JSON.stringify(bits)}: supported sizes are ${RSA_SIZES.join(', ')}`);
  }
}

function requireFields(config: Record<string, unknown>, fields: string[]): void {
  for (const f of fields) if (config[f] === '' || config[f] === undefined) throw missing(f);
}

function validatePkcs11(e: ManagedKeyEntry & { type: 'pkcs11' }): void {
  const c: Pkcs11Config = e.config;
  requireFields(c as never, ['library', 'pin']);
  if (c.mechanism === 0) throw missing('mechanism');
  if (c.slot === '' && c.token_label === '') throw badRequest('one of "slot" or "token_label" is required');
  if (c.slot !== '' && c.token_label !== '') throw badRequest('"slot" and "token_label" cannot both be set (send an empty value to clear one)');
  if (c.key_label === '' && c.key_id === '') throw badRequest('one of "key_label" or "key_id" is required');
  checkCurve(c);
  checkRsaBits(c.key_bits);
  if (c.max_parallel < 1) throw badRequest(`invalid max_parallel ${c.max_parallel}: at least 1 request must be allowed in flight`);
  if (!e.allowGenerateKey) return;
  const name = PKCS11_MECHANISMS[c.mechanism];
  if (!name) {
    const supported = Object.entries(PKCS11_MECHANISMS).map(([m, n]) => `${mechanismHex(Number(m))} (${n})`);
    throw badRequest(`mechanism ${mechanismHex(c.mechanism)} cannot be used with allow_generate_key: keys can be generated only for ${supported.join(', ')}`);
  }
  if (c.mechanism === CKM_ECDSA && c.curve === '') throw badRequest(`"curve" is required when allow_generate_key is true and the mechanism is ${name}`);
  if (c.mechanism !== CKM_ECDSA && c.key_bits === 0) throw badRequest(`"key_bits" is required when allow_generate_key is true and the mechanism is ${name}`);
  if (c.key_label === '') throw badRequest('"key_label" is required when allow_generate_key is true: a generated key is found by its label (key ids are assigned by the HSM)');
}

const AWS_REGION_RE = /^[a-z]{2}(?:-[a-z]+)+-\d+$/;

function checkUrl(field: string, value: string): void {
  if (value === '') return;
  let ok = false;
  try {
    const u = new URL(value);
    ok = (u.protocol === 'https:' || u.protocol === 'http:') && u.hostname !== '';
  } catch {
    ok = false;
  }
  if (!ok) throw badRequest(`invalid ${field} ${JSON.stringify(value)}: give an https:// (or http://) URL`);
}

function validateAwsKms(e: ManagedKeyEntry & { type: 'cloudakms' }): void {
  const c: AwsKmsConfig = e.config;
  requireFields(c as never, ['access_key', 'secret_key', 'kms_key']);
  const keyType = String(c.key_type ?? '').toUpperCase();
  if (keyType === '') throw missing('key_type');
  if (keyType !== 'RSA' && keyType !== 'ECDSA') throw badRequest(`invalid key_type ${JSON.stringify(c.key_type)}: supported types are RSA and ECDSA`);
  c.key_type = keyType;
  checkCurve(c);
  checkRsaBits(c.key_bits);
  if (keyType === 'RSA' && c.key_bits === '') throw badRequest('"key_bits" is required when key_type is RSA');
  if (keyType === 'ECDSA' && c.curve === '') throw badRequest('"curve" is required when key_type is ECDSA');
  if (e.allowGenerateKey && !c.kms_key.startsWith('alias/')) {
    throw badRequest(`"kms_key" must be an alias ("alias/<name>") when allow_generate_key is true: the alias names the generated key; got ${JSON.stringify(c.kms_key)}`);
  }
  if (c.region === '') c.region = DEFAULTS.cloudakms.region;
  if (!AWS_REGION_RE.test(c.region)) throw badRequest(`invalid region ${JSON.stringify(c.region)}: give an AWS region such as "us-east-1"`);
  checkUrl('endpoint', c.endpoint);
}

const AZURE_ENVIRONMENTS = ['AZUREPUBLICCLOUD', 'AZURECHINACLOUD', 'AZUREUSGOVERNMENTCLOUD', 'AZUREGERMANCLOUD'];
const AZURE_VAULT_RE = /^[A-Za-z](?!.*--)[A-Za-z0-9-]{1,22}[A-Za-z0-9]$/;
const AZURE_KEY_RE = /^[A-Za-z0-9-]{1,127}$/;
const DNS_SUFFIX_RE = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/;

function validateAzure(e: ManagedKeyEntry & { type: 'cloudbkeyvault' }): void {
  const c: AzureKeyVaultConfig = e.config;
  requireFields(c as never, ['tenant_id']);
  if (c.client_id === '' || c.client_secret === '') {
    throw badRequest(`missing required field "${c.client_id === '' ? 'client_id' : 'client_secret'}": client credentials are required (managed identities are not available to this server)`);
  }
  requireFields(c as never, ['vault_name', 'key_name']);
  const keyType = String(c.key_type ?? '').toUpperCase();
  if (keyType === '') throw missing('key_type');
  if (keyType !== 'RSA-HSM') throw badRequest(`invalid key_type ${JSON.stringify(c.key_type)}: the only supported key type is RSA-HSM`);
  c.key_type = 'RSA-HSM';
  checkRsaBits(c.key_bits);
  if (e.allowGenerateKey && c.key_bits === '') throw badRequest('"key_bits" is required when allow_generate_key is true');
  const environment = (c.environment || DEFAULTS.cloudbkeyvault.environment).toUpperCase();
  if (!AZURE_ENVIRONMENTS.includes(environment)) throw badRequest(`invalid environment ${JSON.stringify(c.environment)}: supported environments are ${AZURE_ENVIRONMENTS.join(', ')}`);
  c.environment = environment;
  if (!AZURE_VAULT_RE.test(c.vault_name)) {
    throw badRequest(`invalid vault_name ${JSON.stringify(c.vault_name)}: 3 to 24 letters, digits and single hyphens, starting with a letter`);
  }
  if (!AZURE_KEY_RE.test(c.key_name)) throw badRequest(`invalid key_name ${JSON.stringify(c.key_name)}: 1 to 127 letters, digits and hyphens`);
  if (c.resource === '') c.resource = DEFAULTS.cloudbkeyvault.resource;
  if (!DNS_SUFFIX_RE.test(c.resource)) throw badRequest(`invalid resource ${JSON.stringify(c.resource)}: give the key store's DNS suffix, e.g. "vault.azure.net"`);
}

export const GCP_ALGORITHMS = [
  'EC_SIGN_P256_SHA256',
  'EC_SIGN_P384_SHA384',
  'RSA_SIGN_PSS_2048_SHA256',
  'RSA_SIGN_PSS_3072_SHA256',
  'RSA_SIGN_PSS_4096_SHA256',
  'RSA_SIGN_PSS_4096_SHA512',
  'RSA_SIGN_PKCS1_2048_SHA256',
  'RSA_SIGN_PKCS1_3072_SHA256',
  'RSA_SIGN_PKCS1_4096_SHA256',
  'RSA_SIGN_PKCS1_4096_SHA512',
  // Beyond the spec's list (signing keys only): decryption keys, for transit encrypt/decrypt and the seal.
  'RSA_DECRYPT_OAEP_2048_SHA256',
  'RSA_DECRYPT_OAEP_3072_SHA256',
  'RSA_DECRYPT_OAEP_4096_SHA256',
  'RSA_DECRYPT_OAEP_4096_SHA512',
  'RSA_DECRYPT_OAEP_2048_SHA1',
  'RSA_DECRYPT_OAEP_3072_SHA1',
  'RSA_DECRYPT_OAEP_4096_SHA1',
] as const;

const GCP_PROJECT_RE = /^[a-z][a-z0-9-]{4,28}[a-z0-9]$/;
const GCP_ID_RE = /^[A-Za-z0-9_-]{1,63}$/;
const GCP_LOCATION_RE = /^[a-z0-9-]{1,63}$/;

function validateGcp(e: ManagedKeyEntry & { type: 'cloudckms' }): void {
  const c: GcpCkmsConfig = e.config;
  requireFields(c as never, ['credentials', 'project', 'key_ring', 'region', 'crypto_key', 'algorithm']);
  let creds: unknown;
  try {
    creds = JSON.parse(c.credentials);
  } catch {
    throw badRequest('"credentials" must be the JSON content of a service-account key file (this server cannot read files)');
  }
  const o = creds as Record<string, unknown> | null;
  if (!o || typeof o !== 'object' || Array.isArray(o) || typeof o.client_email !== 'string' || typeof o.private_key !== 'string' || !o.client_email || !o.private_key) {
    throw badRequest('"credentials" must be a service-account key: a JSON object with client_email and private_key');
  }
  if (!GCP_PROJECT_RE.test(c.project)) throw badRequest(`invalid project ${JSON.stringify(c.project)}: give the project ID (6 to 30 lowercase letters, digits and hyphens)`);
  if (!GCP_ID_RE.test(c.key_ring)) throw badRequest(`invalid key_ring ${JSON.stringify(c.key_ring)}: 1 to 63 letters, digits, "_" and "-"`);
  if (!GCP_ID_RE.test(c.crypto_key)) throw badRequest(`invalid crypto_key ${JSON.stringify(c.crypto_key)}: 1 to 63 letters, digits, "_" and "-"`);
  if (!GCP_LOCATION_RE.test(c.region)) throw badRequest(`invalid region ${JSON.stringify(c.region)}: give the key ring's location, e.g. "us-east1" or "global"`);
  if (c.crypto_key_version === '') c.crypto_key_version = DEFAULTS.cloudckms.crypto_key_version;
  if (!/^[1-9]\d{0,9}$/.test(c.crypto_key_version)) throw badRequest(`invalid crypto_key_version ${JSON.stringify(c.crypto_key_version)}: give a positive integer`);
  const algorithm = c.algorithm.toUpperCase();
  if (!(GCP_ALGORITHMS as readonly string[]).includes(algorithm)) {
    throw badRequest(`invalid algorithm ${JSON.stringify(c.algorithm)}: supported algorithms are ${GCP_ALGORITHMS.join(', ')}`);
  }
  c.algorithm = algorithm;
}

const VALIDATORS: { [T in ManagedKeyType]: (e: ManagedKeyEntry & { type: T }) => void } = {
  pkcs11: validatePkcs11,
  cloudakms: validateAwsKms,
  cloudbkeyvault: validateAzure,
  cloudckms: validateGcp,
};

// ---- the read view

/** A slot as a JSON number (an exact one beyond 2^53); null when the key uses a token label. */
function slotView(slot: string): unknown {
  if (slot === '') return null;
  const n = Number(slot);
  return Number.isSafeInteger(n) ? n : { [EXACT_NUMBER_KEY]: slot };
}

/**
 * GET sys/managed-keys/:type/:name: Vault's field names (`UUID` capitalised), the generic flags as
 * booleans, secrets as "redacted", pkcs11's mechanism and slot as numbers; keys in Go's (sorted)
 * order. `pathType` is the type as the path named it.
 */
export function entryView(entry: ManagedKeyEntry, pathType: string): Record<string, unknown> {
  const out: Record<string, unknown> = {
    UUID: entry.uuid,
    allow_generate_key: entry.allowGenerateKey,
    allow_replace_key: entry.allowReplaceKey,
    allow_store_key: entry.allowStoreKey,
    any_mount: entry.anyMount,
    name: entry.name,
    type: pathType,
    usages: [...entry.usages],
  };
  const config: Record<string, unknown> = { ...entry.config };
  for (const f of SECRET_FIELDS[entry.type]) config[f] = REDACTED;
  if (entry.type === 'pkcs11') config.slot = slotView(entry.config.slot);
  Object.assign(out, config);
  return Object.fromEntries(Object.keys(out).sort().map((k) => [k, out[k]]));
}
