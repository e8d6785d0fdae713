// BarrierStorage: the only production Storage. Every value is sealed with AES-256-GCM under the
// active keyring term, with the storage key as additional data (a value cannot be moved to
// another key). Layout: term (uint32 BE) | version (1 byte) | nonce (12) | ciphertext | tag (16).
// applyBatch is the single write path, so a replication log can observe every change.

import { aesGcmOpen, aesGcmSeal } from '../../crypto/aead';
import { concatBytes, utf8 } from '../../crypto/encoding';
import {
  DEFAULT_MAX_ENTRY_SIZE,
  entryTooLarge,
  StorageTransaction,
  type BatchStorage,
  type StorageOp,
} from '../../framework/storage';
import type { Keyring } from './keyring';
import { OpenedCache } from './opened-cache';
import type { Physical } from './physical';

const BARRIER_VERSION = 1;
const HEADER_BYTES = 5;

/** Where the barrier gets its keys. refresh() is called when a value names an unknown term. */
export interface KeyringSource {
  get(): Promise<Keyring>;
  refresh(): Promise<Keyring>;
  /** The keyring when get() would answer it without asking anyone; null otherwise (absent: never). */
  current?(): Keyring | null;
}

export class BarrierError extends Error {}

export class BarrierStorage implements BatchStorage {
  constructor(
    private readonly physical: Physical,
    private readonly keys: KeyringSource,
    private readonly maxEntrySize = DEFAULT_MAX_ENTRY_SIZE,
  ) {}

  private readonly opened = new OpenedCache();

  async get(key: string): Promise<Uint8Array | null> {
    const sealed = this.physical.get(key);
    if (sealed === null) return null;
    const hit = this.opened.lookup(key, sealed);
    if (hit) {
      // Still refuses while sealed: the keyring source throws once the keys are gone.
      await this.keys.get();
      return hit;
    }
    const plain = await this.open(key, sealed);
    this.opened.remember(key, sealed, plain);
    return plain;
  }

  /**
   * get's answer without a wait: an absent key, or a value opened before while the keys are still
   * current (so a sealed barrier still refuses, by get). Undefined: ask get.
   */
  peek(key: string): Uint8Array | null | undefined {
    const sealed = this.physical.get(key);
    if (sealed === null) return null;
    if (!this.keys.current?.()) return undefined;
    return this.opened.lookup(key, sealed) ?? undefined;
  }

  /** Forgets every decrypted value (the cluster sealed or its keys rotated). */
  forgetOpened(): void {
    this.opened.clear();
  }

  async put(key: string, value: Uint8Array): Promise<void> {
    await this.applyBatch([{ key, value }]);
  }

  async delete(key: string): Promise<void> {
    await this.applyBatch([{ key, value: null }]);
  }

  async list(prefix: string): Promise<string[]> {
    return this.physical.list(prefix);
  }

  /** Keys are not encrypted: a listing never waits. */
  peekList(prefix: string): string[] {
    return this.physical.list(prefix);
  }

  /** Keys are not encrypted, so a scan is the physical layer's (an index range, in SQLite). */
  async scan(prefix: string, after: string, limit: number): Promise<string[]> {
    return this.physical.scan(prefix, after, limit);
  }

  async applyBatch(ops: StorageOp[]): Promise<void> {
    for (const op of ops) {
      if (op.value !== null && op.value.length > this.maxEntrySize) throw entryTooLarge(op.value.length, this.maxEntrySize);
    }
    const keyring = ops.some((op) => op.value !== null) ? await this.keys.get() : null;
    const sealedOps: StorageOp[] = [];
    for (const op of ops) {
      sealedOps.push({ key: op.key, value: op.value === null ? null : await this.seal(keyring!, op.key, op.value) });
    }
    this.physical.apply(sealedOps);
    ops.forEach((op, i) => {
      const sealed = sealedOps[i].value;
      if (op.value === null || sealed === null) this.opened.forget(op.key);
      else this.opened.remember(op.key, sealed, op.value);
    });
  }

  transaction(): StorageTransaction {
    return new StorageTransaction(this);
  }

  private async seal(keyring: Keyring, key: string, value: Uint8Array): Promise<Uint8Array> {
    const term = keyring.active();
    const header = new Uint8Array(HEADER_BYTES);
    new DataView(header.buffer).setUint32(0, term.term);
    header[4] = BARRIER_VERSION;
    return concatBytes(header, await aesGcmSeal(term.key, value, utf8(key)));
  }

  private async open(key: string, sealed: Uint8Array): Promise<Uint8Array> {
    if (sealed.length < HEADER_BYTES || sealed[4] !== BARRIER_VERSION) {
      throw new BarrierError(`barrier: unsupported entry format at ${JSON.stringify(key)}`);
    }
    const termNo = new DataView(sealed.buffer, sealed.byteOffset, 4).getUint32(0);
    let term = (await this.keys.get()).term(termNo);
    if (!term) term = (await this.keys.refresh()).term(termNo);
    if (!term) throw new BarrierError(`barrier: no key for term ${termNo}`);
    const plain = await aesGcmOpen(term.key, sealed.subarray(HEADER_BYTES), utf8(key));
    if (plain === null) throw new BarrierError(`barrier: failed to decrypt ${JSON.stringify(key)}`);
    return plain;
  }
}
