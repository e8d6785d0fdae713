// The storage contract every engine sees. Keys are '/'-separated paths; values are bytes.
// list(prefix) returns the direct children of a folder prefix ("" or ending in '/'), sorted,
// with sub-folders as "name/" — Vault's logical.Storage semantics. scan(prefix, after, limit)
// pages through every key below a folder in key order, so an engine can walk a large subtree a
// page at a time without listing whole folders.

import { CofferError } from './errors';
import { fromUtf8, utf8 } from '../crypto/encoding';
import type { Maybe } from './steps';

export interface Storage {
  get(key: string): Promise<Uint8Array | null>;
  /**
   * get's answer when it needs no wait (a value in memory, or read synchronously); undefined when
   * it would, or when this storage cannot tell. Lets a read served from memory answer at once
   * (src/framework/steps.ts): a promise costs a read a few event-loop turns in its object.
   */
  peek?(key: string): Uint8Array | null | undefined;
  /** list's answer when it needs no wait; undefined when it would (see peek). */
  peekList?(prefix: string): string[] | undefined;
  put(key: string, value: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
  list(prefix: string): Promise<string[]>;
  /**
   * Full keys below the folder `prefix` (at any depth), in key order (compareKeys), strictly
   * after `after` ("" = from the start), at most `limit` of them.
   */
  scan(prefix: string, after: string, limit: number): Promise<string[]>;
}

/**
 * Physical keys an object keeps for its own cluster (an attempt in progress, notices still to
 * send): DR replication neither records, compares nor repairs them. Mount data lives under
 * `logical/`, so no user path reaches this prefix.
 */
export const LOCAL_KEY_PREFIX = 'local/';

export interface StorageOp {
  key: string;
  /** null deletes the key. */
  value: Uint8Array | null;
}

/** A storage whose writes become durable, all together, on commit. */
export interface Transaction extends Storage {
  /** Undefined when there was nothing to write (nothing to wait for). */
  commit(): Promise<void> | undefined;
}

/** A storage that can apply several writes atomically: all of them or none. */
export interface BatchStorage extends Storage {
  applyBatch(ops: StorageOp[]): Promise<void>;
}

export function assertFolderPrefix(prefix: string): void {
  if (prefix !== '' && !prefix.endsWith('/')) {
    throw new Error(`storage list prefix must be empty or end with "/": ${JSON.stringify(prefix)}`);
  }
}

export function assertKey(key: string): void {
  if (key === '' || key.endsWith('/') || key.startsWith('/') || key.includes('//')) {
    throw new Error(`invalid storage key ${JSON.stringify(key)}`);
  }
}

/** The child of `prefix` that `key` lies under: "name" for a direct key, "name/" for a folder. */
export function childName(prefix: string, key: string): string | null {
  if (!key.startsWith(prefix) || key.length === prefix.length) return null;
  const rest = key.slice(prefix.length);
  const slash = rest.indexOf('/');
  return slash < 0 ? rest : rest.slice(0, slash + 1);
}

/**
 * Key order: the byte order of the keys' UTF-8 form (what SQLite's BINARY collation uses), which
 * is code point order. JavaScript's `<` compares UTF-16 units and differs from it only when
 * surrogate pairs meet U+E000..U+FFFF.
 */
export function compareKeys(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return codePointRank(x) - codePointRank(y);
  }
  return a.length - b.length;
}

/** Moves surrogates above U+E000..U+FFFF, where the code points they encode belong. */
const codePointRank = (unit: number): number => (unit >= 0xe000 ? unit - 0x800 : unit >= 0xd800 ? unit + 0x2000 : unit);

/** scan() over an in-memory key set (for in-memory implementations). */
export function scanKeys(keys: Iterable<string>, prefix: string, after: string, limit: number): string[] {
  assertFolderPrefix(prefix);
  const out: string[] = [];
  for (const key of keys) if (key.startsWith(prefix) && compareKeys(key, after) > 0) out.push(key);
  return out.sort(compareKeys).slice(0, Math.max(0, limit));
}

/** The sorted, distinct children of `prefix` among `keys` (for in-memory implementations). */
export function childrenOf(keys: Iterable<string>, prefix: string): string[] {
  assertFolderPrefix(prefix);
  const out = new Set<string>();
  for (const key of keys) {
    const child = childName(prefix, key);
    if (child !== null) out.add(child);
  }
  return [...out].sort();
}

export async function getJSON<T>(storage: Storage, key: string): Promise<T | null> {
  const raw = await storage.get(key);
  return raw === null ? null : (JSON.parse(fromUtf8(raw)) as T);
}

/** list, answered at once when the storage can (Storage.peekList). */
export function listNow(storage: Storage, prefix: string): Maybe<string[]> {
  return storage.peekList?.(prefix) ?? storage.list(prefix);
}

/** getJSON, answered at once when the storage can (Storage.peek). */
export function getJSONNow<T>(storage: Storage, key: string): Maybe<T | null> {
  const raw = storage.peek?.(key);
  if (raw === undefined) return getJSON<T>(storage, key);
  return raw === null ? null : (JSON.parse(fromUtf8(raw)) as T);
}

export async function putJSON(storage: Storage, key: string, value: unknown): Promise<void> {
  await storage.put(key, utf8(JSON.stringify(value)));
}

/** Every key below a folder prefix, depth first (for erasing a subtree). */
export async function listRecursive(storage: Storage, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for (const child of await storage.list(prefix)) {
    if (child.endsWith('/')) out.push(...(await listRecursive(storage, prefix + child)));
    else out.push(prefix + child);
  }
  return out;
}

/** A view of `inner` with every key under `prefix` (which must end with '/'). */
export class PrefixedStorage implements Storage {
  constructor(
    private readonly inner: Storage,
    private readonly prefix: string,
  ) {
    assertFolderPrefix(prefix);
  }
  get(key: string) {
    return this.inner.get(this.prefix + key);
  }
  peek(key: string) {
    return this.inner.peek?.(this.prefix + key);
  }
  peekList(prefix: string) {
    return this.inner.peekList?.(this.prefix + prefix);
  }
  put(key: string, value: Uint8Array) {
    return this.inner.put(this.prefix + key, value);
  }
  delete(key: string) {
    return this.inner.delete(this.prefix + key);
  }
  list(prefix: string) {
    return this.inner.list(this.prefix + prefix);
  }
  async scan(prefix: string, after: string, limit: number) {
    const keys = await this.inner.scan(this.prefix + prefix, after === '' ? '' : this.prefix + after, limit);
    return keys.map((k) => k.slice(this.prefix.length));
  }
}

/** A transaction seen through a key prefix; committing commits the underlying transaction. */
class PrefixedTransaction extends PrefixedStorage implements Transaction {
  constructor(
    private readonly tx: Transaction,
    prefix: string,
  ) {
    super(tx, prefix);
  }
  commit() {
    return this.tx.commit();
  }
}

/** `tx` seen through `prefix` (a class, not an object of arrows: one is made for every request). */
export function prefixedTransaction(tx: Transaction, prefix: string): Transaction {
  return new PrefixedTransaction(tx, prefix);
}

/** Plain in-memory storage, for unit tests of engines and the framework. */
export class MemoryStorage implements BatchStorage {
  readonly data = new Map<string, Uint8Array>();

  async get(key: string) {
    return this.data.get(key) ?? null;
  }
  peek(key: string) {
    return this.data.get(key) ?? null;
  }
  peekList(prefix: string) {
    return childrenOf(this.data.keys(), prefix);
  }
  async put(key: string, value: Uint8Array) {
    assertKey(key);
    this.data.set(key, value.slice());
  }
  async delete(key: string) {
    this.data.delete(key);
  }
  async list(prefix: string) {
    return childrenOf(this.data.keys(), prefix);
  }
  async scan(prefix: string, after: string, limit: number) {
    return scanKeys(this.data.keys(), prefix, after, limit);
  }
  async applyBatch(ops: StorageOp[]) {
    ops.forEach((op) => assertKey(op.key));
    for (const op of ops) {
      if (op.value === null) this.data.delete(op.key);
      else this.data.set(op.key, op.value.slice());
    }
  }
}

/**
 * Buffers writes over a BatchStorage and applies them in one atomic batch on commit, so a
 * request that fails half-way leaves nothing behind. Reads (and lists) see the buffered writes.
 */
export class StorageTransaction implements Transaction {
  private readonly pending = new Map<string, Uint8Array | null>();

  constructor(private readonly inner: BatchStorage) {}

  /** Whether anything was written (or deleted) so far. */
  get dirty(): boolean {
    return this.pending.size > 0;
  }

  /** What was written so far, by key (null: deleted). */
  get changes(): ReadonlyMap<string, Uint8Array | null> {
    return this.pending;
  }

  async get(key: string) {
    if (this.pending.has(key)) return this.pending.get(key) ?? null;
    return await this.inner.get(key);
  }
  peek(key: string) {
    if (this.pending.has(key)) return this.pending.get(key) ?? null;
    return this.inner.peek?.(key);
  }
  /** Only before anything is written (every read): merging the writes in is list's work. */
  peekList(prefix: string) {
    return this.pending.size === 0 ? this.inner.peekList?.(prefix) : undefined;
  }
  async put(key: string, value: Uint8Array) {
    assertKey(key);
    this.pending.set(key, value.slice());
  }
  async delete(key: string) {
    this.pending.set(key, null);
  }
  async list(prefix: string): Promise<string[]> {
    assertFolderPrefix(prefix);
    const children = new Set(await this.inner.list(prefix));
    const touchedFolders = new Set<string>();
    for (const [key, value] of this.pending) {
      const child = childName(prefix, key);
      if (child === null) continue;
      if (value !== null) children.add(child);
      else if (child.endsWith('/')) touchedFolders.add(child);
      else children.delete(child);
    }
    // A folder whose keys were deleted in this transaction may now be empty.
    for (const folder of touchedFolders) {
      if (children.has(folder) && (await this.list(prefix + folder)).length === 0) children.delete(folder);
    }
    return [...children].sort();
  }
  async scan(prefix: string, after: string, limit: number): Promise<string[]> {
    assertFolderPrefix(prefix);
    const inRange = (key: string) => key.startsWith(prefix) && compareKeys(key, after) > 0;
    const pending = [...this.pending].filter(([key]) => inRange(key));
    // Each pending delete can hide one stored key of the page: fetch that many more.
    const deletes = pending.filter(([, value]) => value === null).length;
    const keys = new Set(await this.inner.scan(prefix, after, limit + deletes));
    for (const [key, value] of pending) {
      if (value === null) keys.delete(key);
      else keys.add(key);
    }
    return [...keys].sort(compareKeys).slice(0, Math.max(0, limit));
  }

  commit(): Promise<void> | undefined {
    if (this.pending.size === 0) return undefined;
    const ops = [...this.pending].map(([key, value]) => ({ key, value }));
    this.pending.clear();
    return this.inner.applyBatch(ops);
  }
}

/** Storage values larger than this are refused (Vault's raft max_entry_size default). */
export const DEFAULT_MAX_ENTRY_SIZE = 1024 * 1024;

export function entryTooLarge(size: number, max: number): CofferError {
  return new CofferError(413, [`put failed due to value being too large; got ${size} bytes, max: ${max} bytes`]);
}
