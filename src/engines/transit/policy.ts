// A transit key ("policy" in Vault's terms): its settings and every version's material. The
// stored form is JSON with base64 bytes; parsed policies are shared between requests (store.ts),
// so they are never mutated in place: edits work on `editable(p)` and are saved as a new record.

import type { AsymmetricKey, AsymmetricType } from '../../crypto/transit/asymmetric';
import { fromBase64, toBase64 } from '../../crypto/encoding';
import { fromUtf8, utf8 } from '../../crypto/encoding';
import { isAsymmetric, type KeyType } from './key-types';

export type Kdf = 'hkdf_sha256' | 'hmac-sha256-counter';

export interface KeyVersion {
  /** Creation time, ms since the epoch. */
  created: number;
  /** Every version's own HMAC key (for the hmac type: the key itself). */
  hmacKey: Uint8Array;
  /** Cipher key (aes/chacha); for ed25519 the 64-byte private key (seed ‖ public), Vault's derivation input. */
  key?: Uint8Array;
  /** Asymmetric types: the key pair (privateKey null for a public-only import). */
  asym?: AsymmetricKey;
  /** PEM certificates set with set-certificate (asymmetric types). */
  certificateChain?: string[];
  /** managed_key versions (their hmacKey is empty): which managed key, and its public key then. */
  managed?: ManagedVersion;
}

/**
 * A managed_key version: the managed key's UUID (resolved at every use, so that the mount's
 * allowed_managed_keys and the key's usages apply) and its public key when the version was made.
 * Never the managed key's configuration: that (PIN, credentials) stays in sys/managed-keys.
 */
export interface ManagedVersion {
  id: string;
  /** PKIX "PUBLIC KEY" PEM. */
  publicKeyPem: string;
}

export interface StampInfo {
  time: string;
  version: number;
}

export interface KeyPolicy {
  name: string;
  type: KeyType;
  derived: boolean;
  kdf: Kdf;
  convergent: boolean;
  /** -1 for keys made here (Vault's marker for the current scheme); 1..3 for restored old keys. */
  convergentVersion: number;
  exportable: boolean;
  allowPlaintextBackup: boolean;
  deletionAllowed: boolean;
  minDecryptionVersion: number;
  minEncryptionVersion: number;
  minAvailableVersion: number;
  latestVersion: number;
  /** Seconds; 0 disables automatic rotation. */
  autoRotatePeriod: number;
  /** hmac keys: bytes. */
  keySize: number;
  imported: boolean;
  allowRotation: boolean;
  /** An imported key rotated here takes no more import_version. */
  rotatedHere: boolean;
  versionTemplate: string;
  backupInfo?: StampInfo;
  restoreInfo?: StampInfo;
  versions: Map<number, KeyVersion>;
}

export const DEFAULT_VERSION_TEMPLATE = 'vault:v{{version}}:';

/** A copy whose settings and version map can be changed (versions themselves are never edited). */
export function editable(p: KeyPolicy): KeyPolicy {
  return { ...p, versions: new Map(p.versions) };
}

/** The ciphertext/signature prefix of a version. */
export const versionPrefix = (p: KeyPolicy, version: number): string => p.versionTemplate.replace('{{version}}', String(version));

interface StoredVersion {
  created: number;
  hmac_key: string;
  key?: string;
  private_key?: string;
  public_key?: string;
  certificate_chain?: string[];
  managed_key_id?: string;
  managed_public_key?: string;
}

interface StoredPolicy extends Omit<KeyPolicy, 'versions'> {
  versions: Record<string, StoredVersion>;
}

const b64 = (s: string, what: string): Uint8Array => {
  const out = fromBase64(s);
  if (!out) throw new Error(`stored transit key has invalid ${what}`);
  return out;
};

export function encodePolicy(p: KeyPolicy): Uint8Array {
  const versions: Record<string, StoredVersion> = {};
  for (const [n, v] of p.versions) {
    const sv: StoredVersion = { created: v.created, hmac_key: toBase64(v.hmacKey) };
    if (v.key) sv.key = toBase64(v.key);
    if (v.asym) {
      sv.public_key = toBase64(v.asym.publicKey);
      if (v.asym.privateKey) sv.private_key = toBase64(v.asym.privateKey);
    }
    if (v.certificateChain?.length) sv.certificate_chain = v.certificateChain;
    if (v.managed) {
      sv.managed_key_id = v.managed.id;
      sv.managed_public_key = v.managed.publicKeyPem;
    }
    versions[n] = sv;
  }
  const stored: StoredPolicy = { ...p, versions };
  return utf8(JSON.stringify(stored));
}

export function decodePolicy(bytes: Uint8Array): KeyPolicy {
  const stored = JSON.parse(fromUtf8(bytes)) as StoredPolicy;
  const versions = new Map<number, KeyVersion>();
  for (const [n, sv] of Object.entries(stored.versions)) {
    const v: KeyVersion = { created: sv.created, hmacKey: b64(sv.hmac_key, 'hmac_key') };
    if (sv.key) v.key = b64(sv.key, 'key');
    if (sv.public_key && isAsymmetric(stored.type)) {
      v.asym = {
        type: stored.type as AsymmetricType,
        publicKey: b64(sv.public_key, 'public_key'),
        privateKey: sv.private_key ? b64(sv.private_key, 'private_key') : null,
      };
    }
    if (sv.certificate_chain) v.certificateChain = sv.certificate_chain;
    if (sv.managed_key_id !== undefined) v.managed = { id: sv.managed_key_id, publicKeyPem: sv.managed_public_key ?? '' };
    versions.set(Number(n), v);
  }
  return { ...stored, versions };
}
