// Seal state of the cluster: init, seal/unseal with recovery key shares, the keyring behind the
// barrier, key rotation, and root-token and DR operation-token generation. Everything needed to
// open the barrier lives in raw `core/*` physical entries, each protected by the seal or by the
// root key; everything else this object keeps goes through the barrier.

import { aesGcmOpen, aesGcmSeal } from '../../crypto/aead';
import { fromBase64, fromHex, fromUtf8, toBase64, toBase64Raw, toHex, utf8 } from '../../crypto/encoding';
import { sha256 } from '../../crypto/hmac';
import { randomBase62, randomBytes, randomHex, randomUUID } from '../../crypto/random';
import { constantTimeEqual } from '../../crypto/timing';
import { badRequest, permissionDenied, sealedError } from '../../framework/errors';
import { getJSON, LOCAL_KEY_PREFIX, putJSON } from '../../framework/storage';
import { BarrierStorage, type KeyringSource } from './barrier';
import { Keyring } from './keyring';
import type { Physical } from './physical';
import { SealError, type Seal } from './seal';
import { combine, split, ShamirError } from './shamir';
import { newRootToken, ROOT_TOKEN_LENGTH } from '../tokens/entry';
import { decodeKeyShare } from './unseal-keys';
import { BUILD_DATE, VERSION_STRING } from '../version';

const K = {
  sealConfig: 'core/seal-config',
  rootKey: 'core/root-key',
  recovery: 'core/recovery',
  keyring: 'core/keyring',
  sealed: 'core/sealed',
  unsealProgress: 'core/unseal-progress',
} as const;
const CLUSTER_KEY = 'core/cluster';
const GENERATE_ROOT_KEY = 'core/generate-root';
/** The secondary's own attempt: a Merkle repair from the primary must not erase it. */
const GENERATE_OPERATION_TOKEN_KEY = `${LOCAL_KEY_PREFIX}generate-dr-operation-token`;
/** The barrier key of a share-collecting attempt: one per kind of token it mints. */
type AttemptSlot = typeof GENERATE_ROOT_KEY | typeof GENERATE_OPERATION_TOKEN_KEY;
/** How refusals name an attempt: Vault's words for root generation. */
const attemptName = (slot: AttemptSlot): string => (slot === GENERATE_ROOT_KEY ? 'root generation' : 'DR operation token generation');
/** A DR operation token is exactly as long as the OTP (the length of a root token, `hvs.` + 24). */
export const OPERATION_TOKEN_LENGTH = ROOT_TOKEN_LENGTH;

interface SealConfig {
  type: string;
  recovery_shares: number;
  recovery_threshold: number;
}

interface RecoveryRecord {
  key: string;
  /** SHA-256 of every share handed out, so a single share can be checked on its own. */
  share_digests: string[];
}

interface Progress {
  nonce: string;
  shares: string[];
}

interface GenerateRootAttempt extends Progress {
  otp: string;
}

export interface ClusterInfo {
  name: string;
  id: string;
}

/** What the seal state machine needs from the platform around it. */
export interface SystemCorePorts {
  /** Stores a new root token in the token store. */
  createRootToken(token: string): Promise<void>;
  /** Tells the rest of the cluster that the keyring gained a term (objects drop cached keys). */
  keyringRotated(): Promise<void>;
}

export interface InitParams {
  recovery_shares?: number;
  recovery_threshold?: number;
  secret_shares?: number;
  secret_threshold?: number;
  pgp_keys?: unknown;
  recovery_pgp_keys?: unknown;
  root_token_pgp_key?: string;
}

export class SealState implements KeyringSource {
  private keyring: Keyring | null = null;
  private cluster: ClusterInfo | null = null;
  /** Set while sys/init runs, so the token store can fetch the new keyring before init is durable. */
  private initializing = false;
  private sealFailure: string | null = null;
  /** In-memory copies of core/seal-config and core/sealed: this object is their only writer. */
  private sealConfigCache: SealConfig | null | undefined;
  private sealedFlagCache: boolean | undefined;
  readonly barrier: BarrierStorage;

  constructor(
    private readonly physical: Physical,
    private readonly seal: Seal | null,
    private readonly ports: SystemCorePorts,
    private readonly options: { devRootToken?: string; sealConfigError?: string } = {},
  ) {
    this.barrier = new BarrierStorage(physical, this);
  }

  // ---- KeyringSource ----
  async get(): Promise<Keyring> {
    if (this.initializing && this.keyring) return this.keyring;
    if (await this.isSealed()) throw sealedError();
    return this.keyring!;
  }
  refresh(): Promise<Keyring> {
    return this.get();
  }

  // ---- state ----
  isInitialized(): boolean {
    return this.sealConfig() !== null;
  }

  private sealConfig(): SealConfig | null {
    if (this.sealConfigCache === undefined) {
      const raw = this.physical.get(K.sealConfig);
      this.sealConfigCache = raw ? (JSON.parse(fromUtf8(raw)) as SealConfig) : null;
    }
    return this.sealConfigCache;
  }

  private explicitlySealed(): boolean {
    if (this.sealedFlagCache === undefined) this.sealedFlagCache = this.physical.get(K.sealed) !== null;
    return this.sealedFlagCache;
  }

  /** Writes raw core entries, keeping the in-memory copies in step. */
  private writeCore(ops: { key: string; value: Uint8Array | null }[]): void {
    this.physical.apply(ops);
    for (const op of ops) {
      if (op.key === K.sealConfig) this.sealConfigCache = undefined;
      if (op.key === K.sealed) this.sealedFlagCache = op.value !== null;
    }
  }

  private requireSeal(): Seal {
    if (this.options.sealConfigError) throw badRequest(this.options.sealConfigError);
    if (!this.seal) {
      throw badRequest(
        'no seal key is configured: set the SEAL_KEY secret to 32 random bytes in hex or base64 (for example `openssl rand -hex 32 | npx wrangler secret put SEAL_KEY`)',
      );
    }
    return this.seal;
  }

  /** Sealed = uninitialised, explicitly sealed, or the seal cannot open the root key. */
  async isSealed(): Promise<boolean> {
    if (!this.isInitialized()) return true;
    if (this.explicitlySealed()) return true;
    if (this.keyring) return false;
    return !(await this.autoUnseal());
  }

  /** The static seal unseals by itself: decrypt the root key, then the keyring. */
  private async autoUnseal(): Promise<boolean> {
    if (!this.seal) {
      this.sealFailure = this.options.sealConfigError ?? 'no seal key is configured (SEAL_KEY)';
      return false;
    }
    try {
      const rootKey = await this.seal.decrypt(this.physical.get(K.rootKey)!, 'root-key');
      const ring = await aesGcmOpen(rootKey, this.physical.get(K.keyring)!, utf8(K.keyring));
      if (!ring) throw new SealError('the root key cannot decrypt the keyring');
      this.keyring = Keyring.deserialize(ring);
      this.sealFailure = null;
      return true;
    } catch (e) {
      this.sealFailure = e instanceof Error ? e.message : String(e);
      return false;
    }
  }

  private async rootKey(): Promise<Uint8Array> {
    return await this.requireSeal().decrypt(this.physical.get(K.rootKey)!, 'root-key');
  }

  async clusterInfo(): Promise<ClusterInfo | null> {
    if (this.cluster) return this.cluster;
    if (await this.isSealed()) return null;
    this.cluster = await getJSON<ClusterInfo>(this.barrier, CLUSTER_KEY);
    return this.cluster;
  }

  // ---- sys/seal-status, sys/health ----
  async sealStatus(): Promise<Record<string, unknown>> {
    const config = this.sealConfig();
    const sealed = await this.isSealed();
    const progress = sealed && config ? await this.loadProgress() : null;
    const cluster = sealed ? null : await this.clusterInfo();
    const status: Record<string, unknown> = {
      type: this.seal?.type ?? 'static',
      initialized: config !== null,
      sealed,
      t: config?.recovery_threshold ?? 0,
      n: config?.recovery_shares ?? 0,
      progress: progress?.shares.length ?? 0,
      nonce: progress?.nonce ?? '',
      version: VERSION_STRING,
      build_date: BUILD_DATE,
      migration: false,
    };
    if (cluster) {
      status.cluster_name = cluster.name;
      status.cluster_id = cluster.id;
    }
    status.recovery_seal = true;
    status.recovery_seal_type = 'shamir';
    status.storage_type = 'durable-objects';
    const warnings = this.statusWarnings(sealed);
    if (warnings.length > 0) status.warnings = warnings;
    return status;
  }

  private statusWarnings(sealed: boolean): string[] {
    if (this.options.sealConfigError) return [this.options.sealConfigError];
    if (!this.seal) return ['no seal key is configured (SEAL_KEY): the server can neither initialise nor unseal'];
    if (sealed && this.isInitialized() && !this.explicitlySealed() && this.sealFailure) return [this.sealFailure];
    return [];
  }

  async health(now = Date.now()): Promise<{ initialized: boolean; sealed: boolean; body: Record<string, unknown> }> {
    const initialized = this.isInitialized();
    const sealed = await this.isSealed();
    const cluster = sealed ? null : await this.clusterInfo();
    const body: Record<string, unknown> = {
      initialized,
      sealed,
      standby: false,
      performance_standby: false,
      replication_performance_mode: 'disabled',
      replication_dr_mode: 'disabled',
      server_time_utc: Math.floor(now / 1000),
      version: VERSION_STRING,
      enterprise: false,
    };
    if (cluster) {
      body.cluster_name = cluster.name;
      body.cluster_id = cluster.id;
    }
    body.echo_duration_ms = 0;
    body.clock_skew_ms = 0;
    body.replication_primary_canary_age_ms = 0;
    return { initialized, sealed, body };
  }

  // ---- sys/init ----
  async init(params: InitParams, now = Date.now()): Promise<Record<string, unknown>> {
    if (this.isInitialized()) throw badRequest('Vault is already initialized');
    const seal = this.requireSeal();
    if (hasValue(params.pgp_keys) || hasValue(params.recovery_pgp_keys) || params.root_token_pgp_key) {
      throw badRequest('PGP-encrypted key shares are not supported; omit pgp_keys, recovery_pgp_keys and root_token_pgp_key');
    }
    const useRecovery = (params.recovery_shares ?? 0) > 0 || (params.recovery_threshold ?? 0) > 0;
    const shares = (useRecovery ? params.recovery_shares : params.secret_shares) ?? 0;
    const threshold = (useRecovery ? params.recovery_threshold : params.secret_threshold) ?? 0;
    validateShareConfig(shares, threshold);

    const recoveryKey = randomBytes(32);
    const keyShares = shares === 1 ? [recoveryKey] : split(recoveryKey, shares, threshold);
    const rootKey = randomBytes(32);
    const keyring = Keyring.generate(now);
    const recovery: RecoveryRecord = {
      key: toBase64(recoveryKey),
      share_digests: await Promise.all(keyShares.map(async (s) => toHex(await sha256(s)))),
    };
    const config: SealConfig = { type: seal.type, recovery_shares: shares, recovery_threshold: threshold };
    const rootToken = this.options.devRootToken || newRootToken();

    // Key material first; the seal config, written last, is what marks the cluster initialised.
    this.writeCore([
      { key: K.rootKey, value: await seal.encrypt(rootKey, 'root-key') },
      { key: K.recovery, value: await seal.encrypt(utf8(JSON.stringify(recovery)), 'recovery') },
      { key: K.keyring, value: await aesGcmSeal(rootKey, keyring.serialize(), utf8(K.keyring)) },
      { key: K.sealed, value: null },
      { key: K.unsealProgress, value: null },
    ]);
    this.keyring = keyring;
    this.initializing = true;
    try {
      this.cluster = { name: `vault-cluster-${randomHex(4)}`, id: randomUUID() };
      await putJSON(this.barrier, CLUSTER_KEY, this.cluster);
      await this.ports.createRootToken(rootToken);
      this.writeCore([{ key: K.sealConfig, value: utf8(JSON.stringify(config)) }]);
    } catch (e) {
      this.keyring = null;
      this.cluster = null;
      throw e;
    } finally {
      this.initializing = false;
    }
    return {
      keys: [],
      keys_base64: [],
      recovery_keys: keyShares.map(toHex),
      recovery_keys_base64: keyShares.map(toBase64),
      root_token: rootToken,
    };
  }

  // ---- recovery shares (unseal and generate-root both collect them) ----
  private async recoveryRecord(): Promise<RecoveryRecord> {
    const blob = this.physical.get(K.recovery);
    if (!blob) throw badRequest('Vault is not initialized');
    return JSON.parse(fromUtf8(await this.requireSeal().decrypt(blob, 'recovery'))) as RecoveryRecord;
  }

  /** True when `share` is one of the shares handed out at init. */
  async isRecoveryShare(share: Uint8Array): Promise<boolean> {
    const digest = await sha256(share);
    const record = await this.recoveryRecord();
    let found = false;
    for (const d of record.share_digests) found = constantTimeEqual(digest, fromHex(d)!) || found;
    return found;
  }

  /**
   * Adds a verified share to a progress record; returns the recovery key once the threshold is
   * met. Shares that pass one by one but do not combine invalidate the attempt (`discard`).
   */
  private async addShare(progress: Progress, share: Uint8Array, discard: () => Promise<void>): Promise<Uint8Array | null> {
    if (!(await this.isRecoveryShare(share))) {
      throw badRequest("recovery key verification failed: the key is not a share of this cluster's recovery key");
    }
    const encoded = toBase64(share);
    if (progress.shares.includes(encoded)) throw badRequest('given key has already been provided during this operation');
    progress.shares.push(encoded);
    const config = this.sealConfig()!;
    if (progress.shares.length < config.recovery_threshold) return null;
    const parts = progress.shares.map((s) => fromBase64(s)!);
    let key: Uint8Array | null = null;
    try {
      key = config.recovery_shares === 1 ? parts[0] : combine(parts);
    } catch (e) {
      if (!(e instanceof ShamirError)) throw e;
    }
    const record = await this.recoveryRecord();
    if (!key || !constantTimeEqual(key, fromBase64(record.key)!)) {
      await discard();
      throw badRequest('recovery key verification failed: the shares do not combine to the recovery key');
    }
    return key;
  }

  // ---- sys/unseal, sys/seal ----
  private async loadProgress(): Promise<Progress | null> {
    const blob = this.physical.get(K.unsealProgress);
    if (!blob || !this.seal) return null;
    try {
      return JSON.parse(fromUtf8(await this.seal.decrypt(blob, 'unseal-progress'))) as Progress;
    } catch {
      return null;
    }
  }

  private async saveProgress(progress: Progress | null): Promise<void> {
    const value = progress ? await this.requireSeal().encrypt(utf8(JSON.stringify(progress)), 'unseal-progress') : null;
    this.writeCore([{ key: K.unsealProgress, value }]);
  }

  async unseal(params: { key?: string; reset?: boolean }): Promise<Record<string, unknown>> {
    if (!this.isInitialized()) throw badRequest('Vault is not initialized');
    const sealed = await this.isSealed();
    if (params.reset) {
      if (!sealed) throw badRequest('vault is unsealed');
      await this.saveProgress(null);
      return this.sealStatus();
    }
    if (!sealed) return this.sealStatus();
    if (!params.key) throw badRequest("'key' must be specified in request body as JSON, or 'reset' set to true");
    const share = decodeKeyShare(params.key);
    this.requireSeal();
    const progress = (await this.loadProgress()) ?? { nonce: randomUUID(), shares: [] };
    const key = await this.addShare(progress, share, () => this.saveProgress(null));
    if (!key) {
      await this.saveProgress(progress);
      return this.sealStatus();
    }
    this.writeCore([
      { key: K.unsealProgress, value: null },
      { key: K.sealed, value: null },
    ]);
    if (!(await this.autoUnseal())) {
      this.writeCore([{ key: K.sealed, value: utf8('1') }]);
      throw badRequest(`unseal failed: ${this.sealFailure}`);
    }
    return this.sealStatus();
  }

  /**
   * Forgets the keyring and what was opened with it, without sealing: the next use reopens the
   * barrier from storage (a DR secondary's storage was just replaced by its primary's).
   */
  forgetKeys(): void {
    this.keyring = null;
    this.cluster = null;
    this.barrier.forgetOpened();
  }

  async sealNow(): Promise<void> {
    this.writeCore([
      { key: K.sealed, value: utf8('1') },
      { key: K.unsealProgress, value: null },
    ]);
    this.keyring = null;
    this.cluster = null;
    this.barrier.forgetOpened();
  }

  // ---- sys/rotate, sys/key-status ----
  async rotate(now = Date.now()): Promise<void> {
    const current = await this.get();
    const next = current.rotate(now);
    const sealed = await aesGcmSeal(await this.rootKey(), next.serialize(), utf8(K.keyring));
    this.writeCore([{ key: K.keyring, value: sealed }]);
    this.keyring = next;
    await this.ports.keyringRotated();
  }

  async keyStatus(): Promise<Record<string, unknown>> {
    const active = (await this.get()).active();
    return { term: active.term, install_time: active.installTime };
  }

  // ---- sys/generate-root and DR operation-token generation ----
  // Both collect recovery key shares into an attempt and, at the threshold, return a new token
  // XORed with the attempt's OTP. Each kind has its own slot (storage key), so an attempt of one
  // kind never disturbs the other; they differ only in what completion mints.

  async generateRootGet(): Promise<Record<string, unknown>> {
    return this.attemptGet(GENERATE_ROOT_KEY);
  }

  async generateRootStart(
    params: { otp?: string; pgp_key?: string; key?: string },
    tokenAuthorized: boolean,
  ): Promise<Record<string, unknown>> {
    return this.attemptStart(GENERATE_ROOT_KEY, params, tokenAuthorized, () => this.mintRootToken());
  }

  async generateRootCancel(tokenAuthorized: boolean, key: string | undefined): Promise<void> {
    return this.attemptCancel(GENERATE_ROOT_KEY, tokenAuthorized, key);
  }

  async generateRootUpdate(params: { key?: string; nonce?: string }): Promise<Record<string, unknown>> {
    return this.attemptUpdate(GENERATE_ROOT_KEY, params, () => this.mintRootToken());
  }

  private async mintRootToken(): Promise<string> {
    const token = newRootToken();
    await this.ports.createRootToken(token);
    return token;
  }

  /**
   * sys/replication/dr/secondary/generate-operation-token/*: the same protocol as generate-root,
   * in its own slot. `issue` mints and stores the DR operation token (the caller keeps its hash);
   * it must return a token of OPERATION_TOKEN_LENGTH characters, the OTP length.
   */
  async operationTokenGet(): Promise<Record<string, unknown>> {
    return this.attemptGet(GENERATE_OPERATION_TOKEN_KEY);
  }

  async operationTokenStart(
    params: { otp?: string; pgp_key?: string; key?: string },
    tokenAuthorized: boolean,
    issue: () => Promise<string>,
  ): Promise<Record<string, unknown>> {
    return this.attemptStart(GENERATE_OPERATION_TOKEN_KEY, params, tokenAuthorized, issue);
  }

  async operationTokenCancel(tokenAuthorized: boolean, key: string | undefined): Promise<void> {
    return this.attemptCancel(GENERATE_OPERATION_TOKEN_KEY, tokenAuthorized, key);
  }

  async operationTokenUpdate(params: { key?: string; nonce?: string }, issue: () => Promise<string>): Promise<Record<string, unknown>> {
    return this.attemptUpdate(GENERATE_OPERATION_TOKEN_KEY, params, issue);
  }

  private async attempt(slot: AttemptSlot): Promise<GenerateRootAttempt | null> {
    return getJSON<GenerateRootAttempt>(this.barrier, slot);
  }

  private generateRootStatus(attempt: GenerateRootAttempt | null, extra: Record<string, unknown> = {}): Record<string, unknown> {
    return {
      nonce: attempt?.nonce ?? '',
      started: attempt !== null,
      progress: attempt?.shares.length ?? 0,
      required: this.sealConfig()?.recovery_threshold ?? 0,
      complete: false,
      encoded_token: '',
      encoded_root_token: '',
      pgp_fingerprint: '',
      otp: '',
      otp_length: ROOT_TOKEN_LENGTH,
      ...extra,
    };
  }

  private async attemptGet(slot: AttemptSlot): Promise<Record<string, unknown>> {
    if (await this.isSealed()) throw sealedError();
    return this.generateRootStatus(await this.attempt(slot));
  }

  /**
   * Starting or cancelling an attempt must be authorised — by a token with sudo on the path, or by
   * presenting a recovery key share — so an anonymous caller cannot occupy or cancel the single
   * attempt slot (CVE-2026-5807 class).
   */
  private async authorizeAttempt(tokenAuthorized: boolean, key: string | undefined): Promise<Uint8Array | null> {
    if (tokenAuthorized) return key ? decodeKeyShare(key) : null;
    if (!key) throw permissionDenied();
    const share = decodeKeyShare(key);
    if (!(await this.isRecoveryShare(share))) throw permissionDenied();
    return share;
  }

  private async attemptStart(
    slot: AttemptSlot,
    params: { otp?: string; pgp_key?: string; key?: string },
    tokenAuthorized: boolean,
    issue: () => Promise<string>,
  ): Promise<Record<string, unknown>> {
    if (await this.isSealed()) throw sealedError();
    const share = await this.authorizeAttempt(tokenAuthorized, params.key);
    if (await this.attempt(slot)) throw badRequest(`${attemptName(slot)} already in progress`);
    if (params.pgp_key) throw badRequest('PGP-encrypted root tokens are not supported; use an OTP');
    let otp = params.otp ?? '';
    let generated = false;
    if (otp === '') {
      otp = randomBase62(ROOT_TOKEN_LENGTH);
      generated = true;
    } else if (otp.length !== ROOT_TOKEN_LENGTH) {
      throw badRequest('OTP string has incorrect length');
    }
    const attempt: GenerateRootAttempt = { nonce: randomUUID(), otp, shares: [] };
    if (share) {
      const done = await this.progressAttempt(slot, attempt, share, issue);
      if (done) return { ...done, otp: generated ? otp : '' };
    }
    await putJSON(this.barrier, slot, attempt);
    return this.generateRootStatus(attempt, generated ? { otp } : {});
  }

  private async attemptCancel(slot: AttemptSlot, tokenAuthorized: boolean, key: string | undefined): Promise<void> {
    if (await this.isSealed()) throw sealedError();
    await this.authorizeAttempt(tokenAuthorized, key);
    await this.barrier.delete(slot);
  }

  private async attemptUpdate(slot: AttemptSlot, params: { key?: string; nonce?: string }, issue: () => Promise<string>): Promise<Record<string, unknown>> {
    if (await this.isSealed()) throw sealedError();
    const attempt = await this.attempt(slot);
    if (!attempt) throw badRequest(`no ${attemptName(slot)} in progress`);
    if (!params.key) throw badRequest("'key' must be specified in request body as JSON");
    if (params.nonce !== attempt.nonce) throw badRequest('incorrect nonce supplied; the attempt may have been restarted');
    const share = decodeKeyShare(params.key);
    const done = await this.progressAttempt(slot, attempt, share, issue);
    if (done) return done;
    await putJSON(this.barrier, slot, attempt);
    return this.generateRootStatus(attempt);
  }

  /** Adds a share; on completion mints the token with `issue` and returns the final status. */
  private async progressAttempt(
    slot: AttemptSlot,
    attempt: GenerateRootAttempt,
    share: Uint8Array,
    issue: () => Promise<string>,
  ): Promise<Record<string, unknown> | null> {
    const key = await this.addShare(attempt, share, () => this.barrier.delete(slot));
    if (!key) return null;
    const token = utf8(await issue());
    // The XOR encoding needs equal lengths; a mismatch is a bug in the caller's `issue`.
    if (token.length !== attempt.otp.length) throw new Error(`issued token has ${token.length} bytes; the OTP has ${attempt.otp.length}`);
    await this.barrier.delete(slot);
    const encoded = toBase64Raw(xorBytes(token, utf8(attempt.otp)));
    return this.generateRootStatus(attempt, { complete: true, encoded_token: encoded, encoded_root_token: encoded });
  }
}

/** sys/decode-token: XOR the base64 (raw or padded) encoded token with the OTP. */
export function decodeToken(encoded: string, otp: string): string {
  const bytes = fromBase64(encoded.trim());
  if (!bytes) throw badRequest('encoded_token is not valid base64');
  const otpBytes = utf8(otp);
  if (bytes.length !== otpBytes.length) throw badRequest('the encoded token and the OTP have different lengths');
  return fromUtf8(xorBytes(bytes, otpBytes));
}

function xorBytes(a: Uint8Array, b: Uint8Array): Uint8Array {
  return a.map((v, i) => v ^ b[i]);
}

function hasValue(v: unknown): boolean {
  return Array.isArray(v) ? v.length > 0 : v !== undefined && v !== null && v !== '';
}

export function validateShareConfig(shares: number, threshold: number): void {
  const fail = (msg: string) => badRequest(`invalid recovery seal configuration: ${msg}`);
  if (!Number.isInteger(shares) || shares < 1) {
    throw fail('recovery_shares must be at least 1 (Coffer unseals after sys/seal and generates root tokens with recovery keys)');
  }
  if (!Number.isInteger(threshold) || threshold < 1) throw fail('recovery_threshold must be at least 1');
  if (threshold > shares) throw fail('recovery_threshold cannot be greater than recovery_shares');
  if (shares > 255) throw fail('recovery_shares cannot exceed 255');
  if (shares > 1 && threshold < 2) throw fail('recovery_threshold must be at least 2 when recovery_shares is greater than 1');
}
