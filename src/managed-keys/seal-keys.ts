// The key of each managed-key seal (./seal.ts), as the envelope needs it: the ManagedKey that
// wraps data keys with RSA-OAEP, the OAEP hash, and the words its messages use for that key and
// its backend. pkcs11: an RSA key in an HSM behind the bridge (SEAL_PKCS11_*); awskms, azurekeyvault
// and gcpckms: the cloud KMS key SEAL_MANAGED_KEY describes, through the backend of its managed-key
// type (./backends.ts), so that the seal reaches a cloud exactly as a managed key does.

import type { HashName } from '../crypto/transit/hashes';
import { KmsCallError } from './awskms-client';
import { createBackend } from './backends';
import { gcpAlgorithm } from './gcp-algorithms';
import { isKmsError } from './gcp-rest';
import { pkcs11Backend } from './pkcs11';
import type { CloudSealType, Pkcs11SealConfig } from './seal-config';
import { sealFailure } from './seal-error';
import { ManagedKeyError, type BackendDeps, type ManagedKey, type ManagedKeyEntry, type ManagedKeyMissing } from './types';

/** What the seal knows of its key. */
export interface SealKey {
  /** The seal's type (SEAL_TYPE): what sys/seal-status reports, and the blob's first member. */
  readonly type: string;
  readonly key: ManagedKey;
  /** The hash of RSA-OAEP (and MGF1) for new blobs (each blob records its own). */
  readonly oaepHash: HashName;
  /** Whether sys/init may create the key when the backend holds none. */
  readonly mayGenerate: boolean;
  /** The configured key for messages, used as "the <ref>": `key with label "x" on token "y" of library "z"`. */
  readonly ref: string;
  /** Whose keys they are, in "sealed by another <holder> key". */
  readonly holder: string;
  /** What answers for the backend, in "<service> answered without the public key". */
  readonly service: string;
  /** The variables that name the key, in "set <configVars> to the key this cluster was initialised with". */
  readonly configVars: string;
  /** The blob's members naming the key, in their order (after "v"). */
  readonly names: Readonly<Record<string, string>>;
  /** A blob's key names for messages ('' when they are empty). */
  nameOf(names: Readonly<Record<string, string>>): string;
  /** Why the key is missing and what to do: `sealed` when it is needed as it was (decrypting, or an initialised cluster), else generating is not allowed. */
  missing(cause: ManagedKeyMissing, sealed: boolean): string;
  /** True for the backend's refusal of a ciphertext (not made with this key and hash: a tampered blob). */
  refusesCiphertext(e: unknown): boolean;
  /** Creates the key (only called when the backend holds none: a seal key is never made over another). */
  generate(): Promise<void>;
  /** Advice to append to a backend's failure message ('' for none). */
  hint(message: string): string;
  /** The message without the configuration's secrets (the backends keep them out already: a second guard). */
  scrub(text: string): string;
}

const CKM_RSA_PKCS_OAEP = 0x0009;
/** How long one bridge call may take (key generation: longer, RSA 4096 takes a while on some HSMs). */
const BRIDGE_TIMEOUT_MS = 15_000;
const GENERATE_TIMEOUT_MS = 120_000;
/** How long one cloud API request may take (the backends' clients retry within their own limits). */
const CLOUD_TIMEOUT_MS = 20_000;

type Fetcher = BackendDeps['fetch'];

/** A fetch that gives up after `ms(url)` unless the caller set its own deadline. */
function withDeadline(fetcher: Fetcher, ms: (url: string) => number): Fetcher {
  return (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    return fetcher(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(ms(url)) });
  };
}

/** Replaces the secrets in a text; those shorter than `min` are left (replacing "1234" everywhere would garble messages). */
const scrubber = (secrets: string[], min = 4) => {
  const list = secrets.filter((s) => s.length >= min).sort((a, b) => b.length - a.length);
  return (text: string) => list.reduce((out, s) => out.split(s).join('[redacted]'), text);
};

// ---- pkcs11

/** The HSM key's name for messages: label "x" (id 0x..). */
function keyName(label: string, id: string): string {
  return [label ? `label "${label}"` : '', id ? `id 0x${id}` : ''].filter(Boolean).join(', ');
}

/** The pkcs11 seal's HSM key, through the bridge (deps.hsmBridge). */
export function pkcs11SealKey(config: Pkcs11SealConfig, deps: BackendDeps): SealKey {
  const bridge = deps.hsmBridge;
  if (!bridge || !deps.hsmBridgeUrl) throw sealFailure('pkcs11', 'no HSM bridge is bound to this deployment: bind HSM_BRIDGE (an mTLS certificate binding) and set HSM_BRIDGE_URL');
  // Every bridge call has a deadline: an unreachable bridge must not hold requests forever.
  const timed = { fetch: withDeadline((input, init) => bridge.fetch(input, init), (url) => (url.endsWith('/v1/key/generate') ? GENERATE_TIMEOUT_MS : BRIDGE_TIMEOUT_MS)) };
  const key = pkcs11Backend(pkcs11Entry(config), { ...deps, hsmBridge: timed }, { replaceOnGenerate: false });
  const token = config.slot !== '' ? `slot ${config.slot}` : `token "${config.tokenLabel}"`;
  const ref = `key with ${keyName(config.keyLabel, config.keyId)} on ${token} of library "${config.library}"`;
  return {
    type: 'pkcs11',
    key,
    oaepHash: config.oaepHash,
    mayGenerate: config.generateKey,
    ref,
    holder: 'HSM',
    service: 'the HSM bridge',
    configVars: 'SEAL_PKCS11_*',
    names: { key_label: config.keyLabel, key_id: config.keyId },
    nameOf: (n) => keyName(n.key_label ?? '', n.key_id ?? ''),
    missing: (_cause, sealed) =>
      sealed
        ? `the HSM holds no ${ref}: the key this cluster was sealed with is missing, or SEAL_PKCS11_* name another token or key`
        : `the HSM holds no ${ref}: create an RSA key pair with that label in the HSM, or set SEAL_PKCS11_GENERATE_KEY=true to have sys/init create it`,
    refusesCiphertext: (e) => e instanceof ManagedKeyError && e.status < 500 && /decryption_failed/.test(e.message),
    async generate() {
      try {
        await key.generate();
      } catch (e) {
        if (e instanceof ManagedKeyError && e.message.endsWith('(key_exists)')) {
          throw new ManagedKeyError(
            400,
            'another key on the token already has that label or id, and a seal key is never generated over an existing one: name that key exactly with SEAL_PKCS11_KEY_LABEL and SEAL_PKCS11_KEY_ID, or choose another label (key_exists)',
          );
        }
        throw e;
      }
    },
    hint: (message) =>
      config.oaepHash !== 'sha1' && /C_(En|De)cryptInit/.test(message)
        ? `; the HSM may not support RSA-OAEP with ${config.oaepHash} (SoftHSM2 supports only sha1): set SEAL_PKCS11_RSA_OAEP_HASH=sha1`
        : '',
    // The bridge never echoes the PIN; a long one is taken out all the same.
    scrub: scrubber([config.pin], 8),
  };
}

/** The seal's key as a pkcs11 managed-key entry (never stored: the backend only reads it). */
function pkcs11Entry(c: Pkcs11SealConfig): ManagedKeyEntry {
  return {
    uuid: '',
    name: 'seal',
    type: 'pkcs11',
    allowGenerateKey: c.generateKey,
    allowReplaceKey: false,
    allowStoreKey: false,
    anyMount: false,
    usages: ['encrypt', 'decrypt', 'wrap', 'unwrap'],
    config: {
      library: c.library,
      slot: c.slot,
      token_label: c.slot === '' ? c.tokenLabel : '',
      pin: c.pin,
      key_label: c.keyLabel,
      key_id: c.keyId,
      mechanism: CKM_RSA_PKCS_OAEP,
      curve: '',
      key_bits: c.keyBits,
      force_rw_session: false,
      max_parallel: 4,
    },
  };
}

// ---- the clouds

/** How each cloud's key is named, what it must be, and how its backend refuses a ciphertext. */
interface CloudFacts {
  ref: string;
  holder: string;
  /** The blob's name of the key. */
  name: string;
  oaepHash: HashName;
  /** What to create when the key is missing. */
  create: string;
  /** Whether the backend's "missing" message says more than `ref` does. */
  citeCause: boolean;
  refusesCiphertext(e: unknown): boolean;
  secrets: string[];
}

function cloudFacts(entry: ManagedKeyEntry): CloudFacts {
  switch (entry.type) {
    case 'cloudakms': {
      const c = entry.config;
      return {
        ref: `AWS KMS key ${JSON.stringify(c.kms_key)} in region ${c.region}`,
        holder: 'AWS KMS',
        name: c.kms_key,
        // KMS's RSA-OAEP hashes are SHA-1 and SHA-256 (RSAES_OAEP_SHA_256).
        oaepHash: 'sha2-256',
        create: `create an RSA_${c.key_bits} key with KeyUsage ENCRYPT_DECRYPT${c.kms_key.startsWith('alias/') ? ' and point the alias at it' : ''}`,
        citeCause: false,
        refusesCiphertext: (e) => e instanceof KmsCallError && e.code === 'InvalidCiphertextException',
        secrets: [c.secret_key, c.access_key],
      };
    }
    case 'cloudbkeyvault': {
      const c = entry.config;
      return {
        ref: `Azure Key Vault key ${JSON.stringify(c.key_name)} in vault ${JSON.stringify(c.vault_name)}`,
        holder: 'Azure Key Vault',
        name: `${c.vault_name}/${c.key_name}`,
        // RSA-OAEP-256.
        oaepHash: 'sha2-256',
        create: `create an ${c.key_type} key of that name that may encrypt and decrypt`,
        citeCause: false,
        // Key Vault answers a ciphertext its key cannot decrypt with 400 BadParameter.
        refusesCiphertext: (e) => e instanceof ManagedKeyError && e.status === 400 && /\(BadParameter(?:\/[^,)]*)?, HTTP 400\)$/.test(e.message),
        secrets: [c.client_secret],
      };
    }
    case 'cloudckms': {
      const c = entry.config;
      const name = `projects/${c.project}/locations/${c.region}/keyRings/${c.key_ring}/cryptoKeys/${c.crypto_key}/cryptoKeyVersions/${c.crypto_key_version}`;
      const alg = gcpAlgorithm(c.algorithm);
      if (!alg || alg.padding !== 'oaep') throw sealFailure('gcpckms', `algorithm ${c.algorithm} cannot seal: the seal needs an RSA_DECRYPT_OAEP_* key`);
      let privateKey = '';
      try {
        privateKey = String((JSON.parse(c.credentials) as { private_key?: unknown }).private_key ?? '');
      } catch {
        // entry.ts has checked that it parses
      }
      return {
        ref: `Google Cloud KMS key version ${name}`,
        holder: 'Google Cloud KMS',
        name,
        // The version's algorithm fixes the hash.
        oaepHash: alg.hash,
        create: `create it (purpose ASYMMETRIC_DECRYPT, algorithm ${alg.name})`,
        citeCause: true,
        // Cloud KMS answers a ciphertext the version cannot decrypt with INVALID_ARGUMENT.
        refusesCiphertext: (e) => isKmsError(e, 'INVALID_ARGUMENT'),
        secrets: [c.credentials, privateKey],
      };
    }
    default:
      throw new Error(`no cloud seal for managed keys of type ${entry.type}`);
  }
}

/** The key of a cloud seal: a managed key of the type's backend, configured by SEAL_MANAGED_KEY. */
export function cloudSealKey(type: CloudSealType, entry: ManagedKeyEntry, deps: BackendDeps): SealKey {
  const facts = cloudFacts(entry);
  const key = createBackend(entry, { ...deps, fetch: withDeadline(deps.fetch, () => CLOUD_TIMEOUT_MS) });
  const ref = facts.ref;
  const scrub = scrubber(facts.secrets);
  return {
    type,
    key,
    oaepHash: facts.oaepHash,
    mayGenerate: entry.allowGenerateKey,
    ref,
    holder: facts.holder,
    service: facts.holder,
    configVars: 'SEAL_MANAGED_KEY',
    names: { key: facts.name },
    nameOf: (n) => n.key ?? '',
    missing(cause, sealed) {
      const why = `the ${ref} does not exist${facts.citeCause ? ` (${scrub(cause.message)})` : ''}`;
      return sealed
        ? `${why}: the key this cluster was sealed with is missing, or SEAL_MANAGED_KEY names another key`
        : `${why}: ${facts.create}, or set "allow_generate_key": true in SEAL_MANAGED_KEY to have sys/init create it`;
    },
    refusesCiphertext: facts.refusesCiphertext,
    async generate() {
      await key.generate();
    },
    hint: () => '',
    scrub,
  };
}
