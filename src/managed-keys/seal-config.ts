// The managed-key seals' configuration, read from the Worker's variables (./seal.ts builds the
// seal from it):
//   - SEAL_TYPE=pkcs11: the SEAL_PKCS11_* variables (an RSA key in an HSM behind the bridge);
//   - SEAL_TYPE=awskms | azurekeyvault | gcpckms (Vault's seal names): one secret,
//     SEAL_MANAGED_KEY, the JSON object of the fields a managed key of that type takes at
//     sys/managed-keys/<type>/<name> (plus allow_generate_key), validated by ./entry.ts exactly as
//     that endpoint validates them, so its errors read the same. No message here ever contains a
//     PIN, a secret key, a client secret or a service-account key.

import { CofferError } from '../framework/errors';
import type { HashName } from '../crypto/transit/hashes';
import { ALL_BACKEND_FIELDS, BACKEND_FIELDS, buildEntry, GCP_ALGORITHMS, SECRET_FIELDS } from './entry';
import { sealMisconfigured } from './seal-error';
import type { ManagedKeyEntry } from './types';

const RSA_KEY_BITS = [2048, 3072, 4096];

/** RSA-OAEP hashes the pkcs11 seal may use (Vault's rsa_oaep_hash values, in Coffer's names). */
export const OAEP_HASHES: Readonly<Record<string, HashName>> = Object.freeze({
  sha1: 'sha1',
  'sha-1': 'sha1',
  sha224: 'sha2-224',
  'sha2-224': 'sha2-224',
  'sha-224': 'sha2-224',
  sha256: 'sha2-256',
  'sha2-256': 'sha2-256',
  'sha-256': 'sha2-256',
  sha384: 'sha2-384',
  'sha2-384': 'sha2-384',
  'sha-384': 'sha2-384',
  sha512: 'sha2-512',
  'sha2-512': 'sha2-512',
  'sha-512': 'sha2-512',
});
const DEFAULT_OAEP_HASH: HashName = 'sha2-256';

// ---- SEAL_TYPE=pkcs11

/** The Worker variables of the pkcs11 seal (src/rpc/env.ts Env extends this). */
export interface Pkcs11SealVars {
  /** The HSM bridge's kms_library stanza. */
  SEAL_PKCS11_LIBRARY?: string;
  /** The token, by slot number (decimal) or by label (one of the two). */
  SEAL_PKCS11_SLOT?: string;
  SEAL_PKCS11_TOKEN_LABEL?: string;
  /** The token's user PIN (a Worker secret). */
  SEAL_PKCS11_PIN?: string;
  /** The RSA key, by label and/or CKA_ID (hex). */
  SEAL_PKCS11_KEY_LABEL?: string;
  SEAL_PKCS11_KEY_ID?: string;
  /** The size of a generated key (2048, the default; 3072; 4096). */
  SEAL_PKCS11_KEY_BITS?: string;
  /** "true" creates the key in the HSM at sys/init when the HSM holds none. */
  SEAL_PKCS11_GENERATE_KEY?: string;
  /** The RSA-OAEP hash (sha256, the default; sha1 for SoftHSM2; sha224, sha384, sha512). */
  SEAL_PKCS11_RSA_OAEP_HASH?: string;
}

export interface Pkcs11SealConfig {
  /** The bridge's kms_library stanza. */
  library: string;
  /** Decimal slot number, or '' when tokenLabel names the token. */
  slot: string;
  tokenLabel: string;
  pin: string;
  keyLabel: string;
  /** Hexadecimal CKA_ID without "0x", or ''. */
  keyId: string;
  /** Size of a generated key. */
  keyBits: number;
  /** Create the key at sys/init when the HSM holds none. */
  generateKey: boolean;
  oaepHash: HashName;
}

/**
 * Reads the pkcs11 seal's variables. Throws a ManagedKeySealError (./seal-error) naming every
 * missing or malformed variable.
 */
export function pkcs11SealConfig(vars: Pkcs11SealVars): Pkcs11SealConfig {
  const text = (v: string | undefined) => (v ?? '').trim();
  const problems: string[] = [];
  const missing: string[] = [];

  const library = text(vars.SEAL_PKCS11_LIBRARY);
  if (!library) missing.push('SEAL_PKCS11_LIBRARY (the name of a kms_library of the HSM bridge)');
  const slot = text(vars.SEAL_PKCS11_SLOT);
  const tokenLabel = text(vars.SEAL_PKCS11_TOKEN_LABEL);
  if (!slot && !tokenLabel) missing.push('SEAL_PKCS11_SLOT or SEAL_PKCS11_TOKEN_LABEL');
  if (slot && tokenLabel) problems.push('set SEAL_PKCS11_SLOT or SEAL_PKCS11_TOKEN_LABEL, not both');
  if (slot && (!/^\d{1,20}$/.test(slot) || BigInt(slot) > 18446744073709551615n)) problems.push(`SEAL_PKCS11_SLOT=${slot} is not a slot number (decimal)`);
  // The PIN is taken as given (PINs may have spaces), and never echoed.
  const pin = vars.SEAL_PKCS11_PIN ?? '';
  if (pin === '') missing.push('SEAL_PKCS11_PIN (a Worker secret)');
  const keyLabel = text(vars.SEAL_PKCS11_KEY_LABEL);
  let keyId = text(vars.SEAL_PKCS11_KEY_ID).replace(/^0x/i, '').toLowerCase();
  if (!keyLabel && !keyId) missing.push('SEAL_PKCS11_KEY_LABEL or SEAL_PKCS11_KEY_ID');
  if (keyId && !/^(?:[0-9a-f]{2}){1,128}$/.test(keyId)) {
    problems.push(`SEAL_PKCS11_KEY_ID=${vars.SEAL_PKCS11_KEY_ID?.trim()} is not a hexadecimal CKA_ID (an even number of hex digits, "0x" optional)`);
    keyId = '';
  }
  const bitsText = text(vars.SEAL_PKCS11_KEY_BITS);
  const keyBits = bitsText === '' ? 2048 : Number(bitsText);
  if (!RSA_KEY_BITS.includes(keyBits) || (bitsText !== '' && !/^\d+$/.test(bitsText))) {
    problems.push(`SEAL_PKCS11_KEY_BITS=${bitsText}: the RSA key sizes are ${RSA_KEY_BITS.join(', ')}`);
  }
  const generateText = text(vars.SEAL_PKCS11_GENERATE_KEY).toLowerCase();
  const generateKey = ['true', '1', 'yes'].includes(generateText);
  if (!generateKey && !['', 'false', '0', 'no'].includes(generateText)) problems.push(`SEAL_PKCS11_GENERATE_KEY=${vars.SEAL_PKCS11_GENERATE_KEY}: give "true" or "false"`);
  if (generateKey && !keyLabel && keyId) problems.push('SEAL_PKCS11_GENERATE_KEY=true needs SEAL_PKCS11_KEY_LABEL: a generated key is found again by its label');
  const hashText = text(vars.SEAL_PKCS11_RSA_OAEP_HASH).toLowerCase();
  const oaepHash = hashText === '' ? DEFAULT_OAEP_HASH : OAEP_HASHES[hashText];
  if (!oaepHash) problems.push(`SEAL_PKCS11_RSA_OAEP_HASH=${hashText}: the hashes are sha1, sha224, sha256, sha384 and sha512`);

  if (missing.length) problems.unshift(`SEAL_TYPE=pkcs11 needs ${missing.join(', ')}`);
  if (problems.length) throw sealMisconfigured('pkcs11', problems.join('; '));
  return { library, slot, tokenLabel, pin, keyLabel, keyId, keyBits, generateKey, oaepHash: oaepHash! };
}

// ---- SEAL_TYPE=awskms | azurekeyvault | gcpckms

/** The cloud seals by Vault's seal names, and the managed-key type each one's key is. */
export const CLOUD_SEAL_TYPES = Object.freeze({ awskms: 'cloudakms', azurekeyvault: 'cloudbkeyvault', gcpckms: 'cloudckms' } as const);
export type CloudSealType = keyof typeof CLOUD_SEAL_TYPES;

export const isCloudSealType = (type: string): type is CloudSealType => Object.hasOwn(CLOUD_SEAL_TYPES, type);

/** The Worker variable of the cloud seals (src/rpc/env.ts Env extends this). */
export interface CloudSealVars {
  /**
   * awskms / azurekeyvault / gcpckms seal (a Worker secret): the JSON object of the fields of a
   * managed key of that type, exactly as sys/managed-keys/<type>/<name> takes them (credentials
   * included), plus "allow_generate_key": true to have sys/init create the key. The key must be an
   * RSA encryption key: AWS key_type RSA, Azure RSA-HSM, Google an RSA_DECRYPT_OAEP_* algorithm.
   */
  SEAL_MANAGED_KEY?: string;
}

/** Fields of sys/managed-keys that mean nothing for the seal's key: it only encrypts and decrypts, and is never replaced. */
const NOT_FOR_THE_SEAL = ['usages', 'allow_replace_key', 'allow_store_key', 'any_mount'];

/** What the seal's key must be: RSA, for encryption (the envelope wraps with RSA-OAEP). */
const GCP_OAEP_ALGORITHMS = GCP_ALGORITHMS.filter((a) => a.startsWith('RSA_DECRYPT_OAEP_'));

const quoted = (names: string[]) => names.map((n) => JSON.stringify(n)).join(', ');

/**
 * The seal's key as a managed-key entry (never stored), from SEAL_MANAGED_KEY. Throws a
 * ManagedKeySealError ("the awskms seal is misconfigured: …") naming the variable and what is
 * wrong with it; the secrets it holds are never part of the message.
 */
export function cloudSealEntry(type: CloudSealType, vars: CloudSealVars): ManagedKeyEntry {
  const keyType = CLOUD_SEAL_TYPES[type];
  const bad = (problem: string) => sealMisconfigured(type, problem);
  const text = vars.SEAL_MANAGED_KEY ?? '';
  if (text.trim() === '') {
    throw bad(`SEAL_TYPE=${type} needs SEAL_MANAGED_KEY (a Worker secret): the JSON object of a ${type} managed key's fields, as sys/managed-keys/${type}/<name> takes them`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (e) {
    // The parser's message may quote the text (the secrets): only the position is kept.
    const at = /position (\d+)/.exec(e instanceof Error ? e.message : '')?.[1];
    throw bad(`SEAL_MANAGED_KEY is not valid JSON${at ? ` (at position ${at})` : ''}: give the ${type} managed key's fields as one JSON object`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw bad(`SEAL_MANAGED_KEY is not a JSON object: give the ${type} managed key's fields as one JSON object`);
  const fields = parsed as Record<string, unknown>;
  const scrub = scrubberOf(type, fields);

  const own = Object.keys(BACKEND_FIELDS[keyType]);
  const needless = NOT_FOR_THE_SEAL.filter((f) => Object.hasOwn(fields, f));
  if (needless.length) {
    throw bad(`SEAL_MANAGED_KEY: ${quoted(needless)} ${needless.length === 1 ? 'does' : 'do'} not apply to the seal's key: it only encrypts and decrypts (usages encrypt,decrypt) and is never replaced; leave ${needless.length === 1 ? 'it' : 'them'} out`);
  }
  // Another backend's fields get entry.ts's own message; a name no backend knows is most likely a typo.
  const unknown = Object.keys(fields)
    .filter((f) => f !== 'allow_generate_key' && !own.includes(f) && !ALL_BACKEND_FIELDS.includes(f))
    .sort();
  if (unknown.length) {
    throw bad(`SEAL_MANAGED_KEY: unknown field${unknown.length === 1 ? '' : 's'} ${quoted(unknown)}: the fields of ${type} managed keys are ${quoted(own)}, and "allow_generate_key"`);
  }

  let entry: ManagedKeyEntry;
  try {
    entry = buildEntry({ type: keyType, name: 'seal', raw: { ...fields, usages: 'encrypt,decrypt' }, previous: null, newId: () => '' });
  } catch (e) {
    if (e instanceof CofferError) throw bad(`SEAL_MANAGED_KEY: ${scrub(e.errors.join('; '))}`);
    throw e;
  }
  if (entry.type === 'cloudakms' && entry.config.key_type !== 'RSA') {
    throw bad(`SEAL_MANAGED_KEY: key_type ${entry.config.key_type} cannot seal: the seal wraps with RSA-OAEP, so the key must be key_type "RSA" (an RSA KMS key with KeyUsage ENCRYPT_DECRYPT)`);
  }
  if (entry.type === 'cloudckms' && !(GCP_OAEP_ALGORITHMS as readonly string[]).includes(entry.config.algorithm)) {
    throw bad(
      `SEAL_MANAGED_KEY: algorithm ${entry.config.algorithm} cannot seal: the seal wraps with RSA-OAEP, so the key must be an ASYMMETRIC_DECRYPT key of one of ${GCP_OAEP_ALGORITHMS.join(', ')}`,
    );
  }
  return entry;
}

/** Replaces the values of the type's secret fields (as given, and as JSON) in a message. */
function scrubberOf(type: CloudSealType, fields: Record<string, unknown>): (text: string) => string {
  const secrets = SECRET_FIELDS[CLOUD_SEAL_TYPES[type]]
    .map((f) => fields[f])
    .filter((v) => v !== undefined && v !== null)
    .flatMap((v) => (typeof v === 'string' ? [v, JSON.stringify(v)] : [JSON.stringify(v)]))
    .filter((s) => s.length >= 4)
    .sort((a, b) => b.length - a.length);
  return (text) => secrets.reduce((out, s) => out.split(s).join('[redacted]'), text);
}
