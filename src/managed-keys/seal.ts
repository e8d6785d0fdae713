// The managed-key seals: the root key (and the other values the seal protects) is wrapped by an
// RSA key held outside the server instead of by the SEAL_KEY secret. SEAL_TYPE chooses
// (durable-objects/system.ts):
//   - pkcs11: an RSA key in an HSM behind the PKCS#11 bridge (hsm-bridge/, mutual TLS,
//     env.HSM_BRIDGE), configured by SEAL_PKCS11_*;
//   - awskms, azurekeyvault, gcpckms (Vault's seal names): an RSA key in AWS KMS, Azure Key Vault
//     or Google Cloud KMS, configured by SEAL_MANAGED_KEY (the fields of a managed key of that type).
// ./seal-config.ts reads the variables, ./seal-keys.ts makes the key; this class is the envelope,
// the same for every backend.
//
// Envelope: each value gets a fresh 32-byte data key; AES-256-GCM seals the value with the
// context (and the seal type, the key's fingerprint and the OAEP hash) as associated data; the
// key wraps the data key with RSA-OAEP. The stored blob is UTF-8 JSON whose first member names
// the seal type, then the key (pkcs11: label and id; the clouds: the key's name) and the SHA-256
// of its public key, so that the wrong key is reported as such.
//
// The key is checked at the first encrypt (it must unwrap what it wrapped), generated only by
// sys/init and only when allowed, and read again after a failure: a backend that was down or a
// key that was missing is found on a later request.
//
// The class matches core's Seal interface structurally ({type, encrypt, decrypt}): this layer
// imports nothing of src/core.

import { aesGcmOpen, aesGcmSeal } from '../crypto/aead';
import { fromBase64, fromUtf8, toBase64, toHex, utf8 } from '../crypto/encoding';
import { sha256 } from '../crypto/hmac';
import { pemBlocks } from '../crypto/pem';
import { randomBytes } from '../crypto/random';
import { constantTimeEqual } from '../crypto/timing';
import type { HashName } from '../crypto/transit/hashes';
import { cloudSealEntry, isCloudSealType, OAEP_HASHES, pkcs11SealConfig, type CloudSealType, type CloudSealVars, type Pkcs11SealConfig, type Pkcs11SealVars } from './seal-config';
import { ManagedKeySealError, sealFailure } from './seal-error';
import { cloudSealKey, pkcs11SealKey, type SealKey } from './seal-keys';
import { ManagedKeyError, ManagedKeyMissing, type BackendDeps, type PublicKeyInfo } from './types';

export { CLOUD_SEAL_TYPES, isCloudSealType, pkcs11SealConfig, type CloudSealType, type CloudSealVars, type Pkcs11SealConfig, type Pkcs11SealVars } from './seal-config';
export { ManagedKeySealError } from './seal-error';

/** The pkcs11 seal's failures are ManagedKeySealErrors (the name it had when it was the only managed-key seal). */
export const Pkcs11SealError = ManagedKeySealError;
export type Pkcs11SealError = ManagedKeySealError;

/** What the first member of every pkcs11 blob says (static seal blobs are binary: nonce || ciphertext). */
export const PKCS11_SEAL_FORMAT = 'pkcs11';
const BLOB_VERSION = 1;
const DATA_KEY_BYTES = 32;

export interface ManagedKeySealOptions {
  /** True once the cluster is initialised: a missing key is then never generated. */
  initialized?: () => boolean;
}
export type Pkcs11SealOptions = ManagedKeySealOptions;

/** The members every blob has, around the key's names (SealKey.names) that follow "v". */
interface Blob {
  seal: string;
  v: number;
  /** Hex SHA-256 of the key's public key (DER SubjectPublicKeyInfo). */
  key_sha256: string;
  oaep_hash: HashName;
  /** RSA-OAEP of the data key, base64. */
  wrapped_key: string;
  /** AES-256-GCM with the data key: nonce || ciphertext || tag, base64. */
  ciphertext: string;
  /** The key's names (pkcs11: key_label, key_id; the clouds: key). */
  [name: string]: unknown;
}

interface KeyIdentity {
  fingerprint: string;
  bits: number;
}

/** Associated data: binds the value to its purpose, the seal type, the key and the hash it was wrapped with. */
const aad = (type: string, b: Pick<Blob, 'v' | 'key_sha256' | 'oaep_hash'>, context: string) => utf8(`coffer-seal:${type}:${b.v}:${b.key_sha256}:${b.oaep_hash}:${context}`);

export class ManagedKeySeal {
  readonly type: string;
  readonly #key: SealKey;
  readonly #options: ManagedKeySealOptions;
  /** The key's identity, once read (reset when reading it failed). */
  #identity: Promise<KeyIdentity> | null = null;
  /** Set once the key unwrapped what it wrapped (checked at the first encrypt). */
  #roundTripped = false;

  constructor(key: SealKey, options: ManagedKeySealOptions = {}) {
    this.type = key.type;
    this.#key = key;
    this.#options = options;
  }

  #fail(message: string, status = 400): ManagedKeySealError {
    return sealFailure(this.type, message, status);
  }

  get #where(): string {
    return `the ${this.#key.ref}`;
  }

  async encrypt(plaintext: Uint8Array, context: string): Promise<Uint8Array> {
    const key = this.#key;
    const identity = await this.#keyIdentity(true);
    const header = { v: BLOB_VERSION, key_sha256: identity.fingerprint, oaep_hash: key.oaepHash };
    const dataKey = randomBytes(DATA_KEY_BYTES);
    const wrapped = await this.#call('wrap the data key', () => key.key.encrypt(dataKey, { hash: key.oaepHash }));
    if (!this.#roundTripped) {
      // A key that wraps but cannot unwrap (no decrypt permission or usage, another private key
      // under the name) would leave a cluster that never unseals: find out now, while nothing depends on it.
      const back = await this.#call('unwrap the data key', () => key.key.decrypt(wrapped, { hash: key.oaepHash }));
      if (!constantTimeEqual(back, dataKey)) throw this.#fail(`${this.#where} did not unwrap what it wrapped: it cannot seal this cluster`);
      this.#roundTripped = true;
    }
    const blob: Blob = {
      seal: this.type,
      v: BLOB_VERSION,
      ...key.names,
      key_sha256: identity.fingerprint,
      oaep_hash: key.oaepHash,
      wrapped_key: toBase64(wrapped),
      ciphertext: toBase64(await aesGcmSeal(dataKey, plaintext, aad(this.type, header, context))),
    };
    return utf8(JSON.stringify(blob));
  }

  async decrypt(stored: Uint8Array, context: string): Promise<Uint8Array> {
    const key = this.#key;
    const blob = this.#parseBlob(stored);
    let identity = await this.#keyIdentity(false);
    if (identity.fingerprint !== blob.key_sha256) {
      // The key may have changed in the backend since it was read: read it again before refusing.
      this.#identity = null;
      identity = await this.#keyIdentity(false);
    }
    if (identity.fingerprint !== blob.key_sha256) {
      const names = Object.fromEntries(Object.keys(key.names).map((n) => [n, blob[n] as string]));
      throw this.#fail(
        `the stored ${context} was sealed by another ${key.holder} key (${key.nameOf(names) || 'unnamed'}, public key SHA-256 ${blob.key_sha256.slice(0, 16)}…), ` +
          `but ${this.#where} has public key SHA-256 ${identity.fingerprint.slice(0, 16)}…: set ${key.configVars} to the key this cluster was initialised with`,
      );
    }
    const wrapped = fromBase64(blob.wrapped_key);
    const sealed = fromBase64(blob.ciphertext);
    if (!wrapped || !sealed) throw this.#fail(`the stored ${context} is damaged (its wrapped key or ciphertext is not base64)`);
    let dataKey: Uint8Array;
    try {
      dataKey = await key.key.decrypt(wrapped, { hash: blob.oaep_hash });
    } catch (e) {
      if (key.refusesCiphertext(e)) throw this.#fail(`${this.#where} cannot unwrap the data key of the stored ${context}: the value was damaged or tampered with`);
      throw this.#wrapError('unwrap the data key', e);
    }
    const plain = dataKey.length === DATA_KEY_BYTES ? await aesGcmOpen(dataKey, sealed, aad(this.type, blob, context)) : null;
    if (plain === null) throw this.#fail(`the stored ${context} fails authentication: it was damaged or tampered with, or sealed for another purpose`);
    return plain;
  }

  /** The key's fingerprint; generates the key when it is missing and that is allowed. */
  #keyIdentity(forEncrypt: boolean): Promise<KeyIdentity> {
    if (!this.#identity) {
      const reading = this.#readIdentity(forEncrypt);
      // A failure is not kept: the next use asks the backend again (it may be back, the key made).
      reading.catch(() => {
        if (this.#identity === reading) this.#identity = null;
      });
      this.#identity = reading;
    }
    return this.#identity;
  }

  async #readIdentity(forEncrypt: boolean): Promise<KeyIdentity> {
    let info: PublicKeyInfo;
    try {
      info = await this.#key.key.publicKey();
    } catch (e) {
      if (!(e instanceof ManagedKeyMissing)) throw this.#wrapError('read the key', e);
      info = await this.#generate(forEncrypt, e);
    }
    if (info.keyType !== 'rsa') throw this.#fail(`${this.#where} is an EC key: the seal wraps with RSA-OAEP and needs an RSA key`);
    const der = pemBlocks(info.pem, 'PUBLIC KEY')[0]?.der;
    if (!der) throw this.#fail(`${this.#key.service} answered without the public key of ${this.#where}`, 502);
    return { fingerprint: toHex(await sha256(der)), bits: info.bits ?? 0 };
  }

  async #generate(forEncrypt: boolean, cause: ManagedKeyMissing): Promise<PublicKeyInfo> {
    const initialized = this.#options.initialized?.() ?? false;
    if (!forEncrypt || initialized) throw this.#fail(this.#key.missing(cause, true));
    if (!this.#key.mayGenerate) throw this.#fail(this.#key.missing(cause, false));
    await this.#call('generate the key', () => this.#key.generate());
    return await this.#call('read the generated key', () => this.#key.key.publicKey());
  }

  async #call<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (e) {
      throw this.#wrapError(what, e);
    }
  }

  /** A backend failure as a seal error, with its status (400 refused, 502 unreachable) kept. */
  #wrapError(what: string, e: unknown): ManagedKeySealError {
    if (e instanceof ManagedKeySealError) return e;
    const status = e instanceof ManagedKeyError ? e.status : 502;
    const message = this.#key.scrub(e instanceof Error ? e.message : String(e));
    return this.#fail(`cannot ${what} (${this.#where}): ${message}${this.#key.hint(message)}`, status);
  }

  #parseBlob(stored: Uint8Array): Blob {
    const type = this.type;
    let parsed: unknown = null;
    try {
      parsed = JSON.parse(fromUtf8(stored));
    } catch {
      // not JSON: another seal's blob
    }
    const sealOf = parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as { seal?: unknown }).seal : undefined;
    if (sealOf !== type) {
      if (typeof sealOf === 'string' && /^[a-z0-9]+$/.test(sealOf)) {
        throw this.#fail(`the stored value was sealed by the ${sealOf} seal, not the ${type} one: set SEAL_TYPE=${sealOf} (migrating between seal types is not supported)`);
      }
      throw this.#fail(`the stored value was not sealed by the ${type} seal: this cluster was initialised with another seal type (static, SEAL_KEY?); migrating between seal types is not supported`);
    }
    const blob = parsed as Partial<Blob>;
    if (blob.v !== BLOB_VERSION) throw this.#fail(`the stored value is in ${type} seal format version ${String(blob.v)}; this version reads ${BLOB_VERSION}`);
    const str = (v: unknown) => typeof v === 'string';
    const named = Object.keys(this.#key.names).every((n) => str(blob[n]));
    if (!named || !str(blob.key_sha256) || !str(blob.wrapped_key) || !str(blob.ciphertext) || !Object.values(OAEP_HASHES).includes(blob.oaep_hash as HashName)) {
      throw this.#fail(`the stored value is damaged (a member of its ${type} seal blob is missing or malformed)`);
    }
    return blob as Blob;
  }
}

/** The pkcs11 seal: an RSA key in an HSM behind the bridge. */
export class Pkcs11Seal extends ManagedKeySeal {
  constructor(config: Pkcs11SealConfig, deps: BackendDeps, options: ManagedKeySealOptions = {}) {
    super(pkcs11SealKey(config, deps), options);
  }
}

/** A cloud KMS seal (awskms, azurekeyvault, gcpckms): throws a ManagedKeySealError when SEAL_MANAGED_KEY is wrong. */
export class CloudKmsSeal extends ManagedKeySeal {
  constructor(type: CloudSealType, vars: CloudSealVars, deps: BackendDeps, options: ManagedKeySealOptions = {}) {
    super(cloudSealKey(type, cloudSealEntry(type, vars), deps), options);
  }
}

/** A managed-key seal that cannot work (misconfigured): reports its type, and fails with the reason. */
export class UnavailableSeal {
  constructor(
    readonly type: string,
    private readonly reason: string,
  ) {}
  encrypt(): Promise<Uint8Array> {
    return Promise.reject(new ManagedKeySealError(400, this.reason));
  }
  decrypt(): Promise<Uint8Array> {
    return Promise.reject(new ManagedKeySealError(400, this.reason));
  }
}

type Built = { seal: ManagedKeySeal | UnavailableSeal; error?: string };

function build(type: string, make: () => ManagedKeySeal): Built {
  try {
    return { seal: make() };
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    return { seal: new UnavailableSeal(type, error), error };
  }
}

/**
 * The seal for SEAL_TYPE=pkcs11. A misconfiguration (a missing variable, no bridge binding) gives
 * a seal that reports type pkcs11 and fails, with `error` saying what is wrong.
 */
export function pkcs11SealFromEnv(vars: Pkcs11SealVars, deps: BackendDeps, options: ManagedKeySealOptions = {}): Built {
  return build('pkcs11', () => new Pkcs11Seal(pkcs11SealConfig(vars), deps, options));
}

/** The seal for SEAL_TYPE=awskms | azurekeyvault | gcpckms; a misconfiguration as pkcs11SealFromEnv. */
export function cloudSealFromEnv(type: CloudSealType, vars: CloudSealVars, deps: BackendDeps, options: ManagedKeySealOptions = {}): Built {
  return build(type, () => new CloudKmsSeal(type, vars, deps, options));
}

/** The seal types of this module (SEAL_TYPE values, lowercase). */
export const isManagedKeySealType = (type: string): boolean => type === 'pkcs11' || isCloudSealType(type);

/** The managed-key seal SEAL_TYPE names (see isManagedKeySealType), built as pkcs11SealFromEnv does. */
export function managedKeySealFromEnv(type: string, vars: Pkcs11SealVars & CloudSealVars, deps: () => BackendDeps, options: ManagedKeySealOptions = {}): Built {
  if (isCloudSealType(type)) return cloudSealFromEnv(type, vars, deps(), options);
  if (type === 'pkcs11') return pkcs11SealFromEnv(vars, deps(), options);
  throw new Error(`not a managed-key seal type: ${type}`);
}
