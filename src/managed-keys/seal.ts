// The pkcs11 seal: the root key (and the other values the seal protects) is wrapped by an RSA key
// held in an HSM behind the PKCS#11 bridge (hsm-bridge/, mutual TLS, env.HSM_BRIDGE), instead
// of by the SEAL_KEY secret. Chosen with SEAL_TYPE=pkcs11 (durable-objects/system.ts).
//
// Envelope: each value gets a fresh 32-byte data key; AES-256-GCM seals the value with the
// context (and the HSM key's fingerprint and OAEP hash) as associated data; the HSM wraps the
// data key with RSA-OAEP. The stored blob is UTF-8 JSON (PKCS11_SEAL_FORMAT) naming the HSM key
// (label, id, SHA-256 of its public key) so that the wrong key is reported as such.
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
import { pkcs11Backend } from './pkcs11';
import { ManagedKeyError, ManagedKeyMissing, type BackendDeps, type ManagedKey, type ManagedKeyEntry, type PublicKeyInfo } from './types';

/** What the first member of every blob says (static seal blobs are binary: nonce || ciphertext). */
export const PKCS11_SEAL_FORMAT = 'pkcs11';
const BLOB_VERSION = 1;
const DATA_KEY_BYTES = 32;
const CKM_RSA_PKCS_OAEP = 0x0009;
const RSA_KEY_BITS = [2048, 3072, 4096];
/** How long one bridge call may take (key generation: longer, RSA 4096 takes a while on some HSMs). */
const BRIDGE_TIMEOUT_MS = 15_000;
const GENERATE_TIMEOUT_MS = 120_000;

/** RSA-OAEP hashes the seal may use (Vault's rsa_oaep_hash values, in Coffer's names). */
const OAEP_HASHES: Readonly<Record<string, HashName>> = Object.freeze({
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

/** The Worker variables of the pkcs11 seal (a subset of src/rpc/env.ts Env). */
export interface Pkcs11SealVars {
  SEAL_PKCS11_LIBRARY?: string;
  SEAL_PKCS11_SLOT?: string;
  SEAL_PKCS11_TOKEN_LABEL?: string;
  SEAL_PKCS11_PIN?: string;
  SEAL_PKCS11_KEY_LABEL?: string;
  SEAL_PKCS11_KEY_ID?: string;
  SEAL_PKCS11_KEY_BITS?: string;
  SEAL_PKCS11_GENERATE_KEY?: string;
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

export interface Pkcs11SealOptions {
  /** True once the cluster is initialised: a missing key is then never generated. */
  initialized?: () => boolean;
}

/** A seal failure: the status it answers with when a request meets it, and the message. */
export class Pkcs11SealError extends ManagedKeyError {
  constructor(status: number, message: string) {
    super(status, message);
    this.name = 'SealError';
  }
}

const fail = (message: string, status = 400) => new Pkcs11SealError(status, `pkcs11 seal: ${message}`);

/**
 * Reads the seal's variables. Throws a Pkcs11SealError naming every missing or malformed variable.
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
  if (problems.length) throw new Pkcs11SealError(400, `the pkcs11 seal is misconfigured: ${problems.join('; ')}`);
  return { library, slot, tokenLabel, pin, keyLabel, keyId, keyBits, generateKey, oaepHash: oaepHash! };
}

/** The stored blob: JSON, its first member naming the format. */
interface Blob {
  seal: typeof PKCS11_SEAL_FORMAT;
  v: number;
  key_label: string;
  key_id: string;
  /** Hex SHA-256 of the HSM key's public key (DER SubjectPublicKeyInfo). */
  key_sha256: string;
  oaep_hash: HashName;
  /** RSA-OAEP of the data key, base64. */
  wrapped_key: string;
  /** AES-256-GCM with the data key: nonce || ciphertext || tag, base64. */
  ciphertext: string;
}

interface KeyIdentity {
  fingerprint: string;
  bits: number;
}

/** Associated data: binds the value to its purpose, the key and the hash it was wrapped with. */
const aad = (b: Pick<Blob, 'v' | 'key_sha256' | 'oaep_hash'>, context: string) => utf8(`coffer-seal:pkcs11:${b.v}:${b.key_sha256}:${b.oaep_hash}:${context}`);

/** The HSM key's name for messages: label "x" (id 0x..). */
function keyName(label: string, id: string): string {
  return [label ? `label "${label}"` : '', id ? `id 0x${id}` : ''].filter(Boolean).join(', ');
}

export class Pkcs11Seal {
  readonly type = 'pkcs11';
  readonly #config: Pkcs11SealConfig;
  readonly #key: ManagedKey;
  /** The bridge binding (with deadlines) and its URL, for key generation. */
  readonly #options: Pkcs11SealOptions;
  /** The HSM key's identity, once read (reset when reading it failed). */
  #identity: Promise<KeyIdentity> | null = null;
  /** Set once the HSM unwrapped what it wrapped (checked at the first encrypt). */
  #roundTripped = false;

  constructor(config: Pkcs11SealConfig, deps: BackendDeps, options: Pkcs11SealOptions = {}) {
    this.#config = config;
    this.#options = options;
    const bridge = deps.hsmBridge;
    if (!bridge || !deps.hsmBridgeUrl) throw fail('no HSM bridge is bound to this deployment: bind HSM_BRIDGE (an mTLS certificate binding) and set HSM_BRIDGE_URL');
    // Every bridge call has a deadline: an unreachable bridge must not hold requests forever.
    const timed = {
      fetch: (input: RequestInfo | URL, init?: RequestInit) => {
        const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
        const ms = url.endsWith('/v1/key/generate') ? GENERATE_TIMEOUT_MS : BRIDGE_TIMEOUT_MS;
        return bridge.fetch(input, { ...init, signal: init?.signal ?? AbortSignal.timeout(ms) });
      },
    };
    this.#key = pkcs11Backend(sealKeyEntry(config), { ...deps, hsmBridge: timed }, { replaceOnGenerate: false });
  }

  /** The configured key, for messages: key with label "x" on token "y" (or slot n) of library "z". */
  get #keyRef(): string {
    const token = this.#config.slot !== '' ? `slot ${this.#config.slot}` : `token "${this.#config.tokenLabel}"`;
    return `key with ${keyName(this.#config.keyLabel, this.#config.keyId)} on ${token} of library "${this.#config.library}"`;
  }

  get #where(): string {
    return `the ${this.#keyRef}`;
  }

  async encrypt(plaintext: Uint8Array, context: string): Promise<Uint8Array> {
    const identity = await this.#keyIdentity(true);
    const header = { v: BLOB_VERSION, key_sha256: identity.fingerprint, oaep_hash: this.#config.oaepHash };
    const dataKey = randomBytes(DATA_KEY_BYTES);
    const wrapped = await this.#bridge('wrap the data key', () => this.#key.encrypt(dataKey, { hash: this.#config.oaepHash }));
    if (!this.#roundTripped) {
      // A key that wraps but cannot unwrap (no CKA_DECRYPT, another private key under the label)
      // would leave a cluster that never unseals: find out now, while nothing depends on it.
      const back = await this.#bridge('unwrap the data key', () => this.#key.decrypt(wrapped, { hash: this.#config.oaepHash }));
      if (!constantTimeEqual(back, dataKey)) throw fail(`${this.#where} did not unwrap what it wrapped: it cannot seal this cluster`);
      this.#roundTripped = true;
    }
    const blob: Blob = {
      seal: PKCS11_SEAL_FORMAT,
      v: BLOB_VERSION,
      key_label: this.#config.keyLabel,
      key_id: this.#config.keyId,
      key_sha256: identity.fingerprint,
      oaep_hash: this.#config.oaepHash,
      wrapped_key: toBase64(wrapped),
      ciphertext: toBase64(await aesGcmSeal(dataKey, plaintext, aad(header, context))),
    };
    return utf8(JSON.stringify(blob));
  }

  async decrypt(stored: Uint8Array, context: string): Promise<Uint8Array> {
    const blob = parseBlob(stored);
    let identity = await this.#keyIdentity(false);
    if (identity.fingerprint !== blob.key_sha256) {
      // The key may have changed in the HSM since it was read: read it again before refusing.
      this.#identity = null;
      identity = await this.#keyIdentity(false);
    }
    if (identity.fingerprint !== blob.key_sha256) {
      throw fail(
        `the stored ${context} was sealed by another HSM key (${keyName(blob.key_label, blob.key_id) || 'unnamed'}, public key SHA-256 ${blob.key_sha256.slice(0, 16)}…), ` +
          `but ${this.#where} has public key SHA-256 ${identity.fingerprint.slice(0, 16)}…: set SEAL_PKCS11_* to the key this cluster was initialised with`,
      );
    }
    const wrapped = fromBase64(blob.wrapped_key);
    const sealed = fromBase64(blob.ciphertext);
    if (!wrapped || !sealed) throw fail(`the stored ${context} is damaged (its wrapped key or ciphertext is not base64)`);
    let dataKey: Uint8Array;
    try {
      dataKey = await this.#key.decrypt(wrapped, { hash: blob.oaep_hash });
    } catch (e) {
      if (e instanceof ManagedKeyError && e.status < 500 && /decryption_failed/.test(e.message)) {
        throw fail(`${this.#where} cannot unwrap the data key of the stored ${context}: the value was damaged or tampered with`);
      }
      throw this.#wrapError('unwrap the data key', e);
    }
    const plain = dataKey.length === DATA_KEY_BYTES ? await aesGcmOpen(dataKey, sealed, aad(blob, context)) : null;
    if (plain === null) throw fail(`the stored ${context} fails authentication: it was damaged or tampered with, or sealed for another purpose`);
    return plain;
  }

  /** The HSM key's fingerprint; generates the key when it is missing and that is allowed. */
  #keyIdentity(forEncrypt: boolean): Promise<KeyIdentity> {
    if (!this.#identity) {
      const reading = this.#readIdentity(forEncrypt);
      // A failure is not kept: the next use asks the bridge again (it may be back, the key made).
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
      info = await this.#key.publicKey();
    } catch (e) {
      if (!(e instanceof ManagedKeyMissing)) throw this.#wrapError('read the key', e);
      info = await this.#generate(forEncrypt);
    }
    if (info.keyType !== 'rsa') throw fail(`${this.#where} is an EC key: the seal wraps with RSA-OAEP and needs an RSA key`);
    const der = pemBlocks(info.pem, 'PUBLIC KEY')[0]?.der;
    if (!der) throw fail(`the HSM bridge answered without the public key of ${this.#where}`, 502);
    return { fingerprint: toHex(await sha256(der)), bits: info.bits ?? 0 };
  }

  async #generate(forEncrypt: boolean): Promise<PublicKeyInfo> {
    const initialized = this.#options.initialized?.() ?? false;
    if (!forEncrypt || initialized) {
      throw fail(`the HSM holds no ${this.#keyRef}: the key this cluster was sealed with is missing, or SEAL_PKCS11_* name another token or key`);
    }
    if (!this.#config.generateKey) {
      throw fail(`the HSM holds no ${this.#keyRef}: create an RSA key pair with that label in the HSM, or set SEAL_PKCS11_GENERATE_KEY=true to have sys/init create it`);
    }
    await this.#bridge('generate the key', () => this.#generateKey());
    return await this.#bridge('read the generated key', () => this.#key.publicKey());
  }

  /** Creates the RSA key pair at the bridge, never over an existing object (a seal key is never replaced). */
  async #generateKey(): Promise<void> {
    try {
      await this.#key.generate();
    } catch (e) {
      if (e instanceof ManagedKeyError && e.message.endsWith('(key_exists)')) {
        throw new ManagedKeyError(
          400,
          'another key on the token already has that label or id, and a seal key is never generated over an existing one: name that key exactly with SEAL_PKCS11_KEY_LABEL and SEAL_PKCS11_KEY_ID, or choose another label (key_exists)',
        );
      }
      throw e;
    }
  }

  async #bridge<T>(what: string, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (e) {
      throw this.#wrapError(what, e);
    }
  }

  /** A bridge failure as a seal error, with its status (400 refused, 502 unreachable) kept. */
  #wrapError(what: string, e: unknown): Pkcs11SealError {
    if (e instanceof Pkcs11SealError) return e;
    const status = e instanceof ManagedKeyError ? e.status : 502;
    const message = e instanceof Error ? e.message : String(e);
    let hint = '';
    if (this.#config.oaepHash !== 'sha1' && /C_(En|De)cryptInit/.test(message)) {
      hint = `; the HSM may not support RSA-OAEP with ${this.#config.oaepHash} (SoftHSM2 supports only sha1): set SEAL_PKCS11_RSA_OAEP_HASH=sha1`;
    }
    return fail(`cannot ${what} (${this.#where}): ${message}${hint}`, status);
  }
}

/** The seal's key as a pkcs11 managed-key entry (never stored: the backend only reads it). */
function sealKeyEntry(c: Pkcs11SealConfig): ManagedKeyEntry {
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

function parseBlob(stored: Uint8Array): Blob {
  let blob: Partial<Blob> | null = null;
  try {
    const parsed: unknown = JSON.parse(fromUtf8(stored));
    if (parsed && typeof parsed === 'object' && (parsed as Blob).seal === PKCS11_SEAL_FORMAT) blob = parsed as Partial<Blob>;
  } catch {
    // not JSON: another seal's blob
  }
  if (!blob) {
    throw fail('the stored value was not sealed by the pkcs11 seal: this cluster was initialised with another seal type (static, SEAL_KEY?); migrating between seal types is not supported');
  }
  if (blob.v !== BLOB_VERSION) throw fail(`the stored value is in pkcs11 seal format version ${String(blob.v)}; this version reads ${BLOB_VERSION}`);
  const str = (v: unknown) => typeof v === 'string';
  if (!str(blob.key_label) || !str(blob.key_id) || !str(blob.key_sha256) || !str(blob.wrapped_key) || !str(blob.ciphertext) || !Object.values(OAEP_HASHES).includes(blob.oaep_hash as HashName)) {
    throw fail('the stored value is damaged (a member of its pkcs11 seal blob is missing or malformed)');
  }
  return blob as Blob;
}

/** A pkcs11 seal that cannot work (misconfigured): reported as type pkcs11, failing with the reason. */
export class UnavailablePkcs11Seal {
  readonly type = 'pkcs11';
  constructor(private readonly reason: string) {}
  encrypt(): Promise<Uint8Array> {
    return Promise.reject(new Pkcs11SealError(400, this.reason));
  }
  decrypt(): Promise<Uint8Array> {
    return Promise.reject(new Pkcs11SealError(400, this.reason));
  }
}

/**
 * The seal for SEAL_TYPE=pkcs11. A misconfiguration (a missing variable, no bridge binding) gives
 * a seal that reports type pkcs11 and fails, with `error` saying what is wrong.
 */
export function pkcs11SealFromEnv(
  vars: Pkcs11SealVars,
  deps: BackendDeps,
  options: Pkcs11SealOptions = {},
): { seal: Pkcs11Seal | UnavailablePkcs11Seal; error?: string } {
  try {
    return { seal: new Pkcs11Seal(pkcs11SealConfig(vars), deps, options) };
  } catch (e) {
    const error = e instanceof Error ? e.message : String(e);
    return { seal: new UnavailablePkcs11Seal(error), error };
  }
}
