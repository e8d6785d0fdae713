// The token store's persistence within one shard: tokens keyed by HMAC-SHA256(salt, token) under a
// barrier-protected salt; accessors pointing at those HMACs; each parent's children (by accessor,
// which names their shard); and an expiry index the shard's alarm walks. Pure logic over Storage.
//
// Live entries are also kept in memory, keyed by token: the shard owns every write to its tokens,
// so the cache is coherent, and it saves the HMAC, the read and the decryption on every request.
// Memory holds nothing the keyring in the same memory would not already unlock.

import { toHex, utf8 } from '../../crypto/encoding';
import { hmacSha256 } from '../../crypto/hmac';
import { randomBytes } from '../../crypto/random';
import type { Maybe } from '../../framework/steps';
import { getJSON, putJSON, type BatchStorage, type Storage, type StorageOp } from '../../framework/storage';
import { RESPONSE_WRAPPING_POLICY_NAME, newAccessorFor, rootTokenEntry, type TokenEntry } from './entry';

const SALT_KEY = 'salt';
/** Every stored token's entry lives below this key (counted for sys/internal/counters/tokens). */
export const TOKENS_PREFIX = 'tokens/';
const CACHE_LIMIT = 10_000;

/** Expiry index keys sort by time: expiry/<13-digit unix ms>/<hash>. */
// The expiry index: one flat folder of "<ms, 13 digits>-<hash>" keys, paged in time order with
// scan (earlier releases used a folder per millisecond, "<ms>/<hash>": read alike, cleaned up when due).
const EXPIRY = 'expiry/';
const expiryKey = (ms: number, hash: string) => `${EXPIRY}${String(ms).padStart(13, '0')}-${hash}`;
const expiryOf = (key: string): { ms: number; hash: string } => ({ ms: Number(key.slice(EXPIRY.length, EXPIRY.length + 13)), hash: key.slice(EXPIRY.length + 14) });

const childKey = (parentAccessor: string, childAccessor: string) => `children/${parentAccessor}/${childAccessor}`;

/** The stored token unless it has expired by `now`. */
const live = (stored: StoredToken, now: number): StoredToken | null => (stored.entry.expireTime !== null && stored.entry.expireTime <= now ? null : stored);

/** A wrapped response and how it was made (Vault keeps these in the wrapping token's cubbyhole). */
export interface WrappedResponse {
  /** The original response envelope, as JSON text. */
  response: string;
  /** Seconds. */
  creationTTL: number;
  /** RFC 3339 with nanoseconds. */
  creationTime: string;
  creationPath: string;
  wrappedAccessor: string;
}

export interface StoredToken {
  hash: string;
  entry: TokenEntry;
}

export class TokenStore {
  private salt: Uint8Array | null = null;
  private readonly cache = new Map<string, StoredToken>();
  /** hash → token, for dropping cache entries when a change arrives by accessor. */
  private readonly cachedTokens = new Map<string, string>();
  /** Counts removals and resets: a lookup that read storage before one must not cache what it read. */
  private removals = 0;

  /**
   * `grouped` takes the rows of new random tokens (logins, auth/token/create): a host may stage
   * them for a group commit there (src/core/barrier/grouped-writes.ts) and reply once they are
   * durable; all else goes to `storage`.
   */
  constructor(
    private readonly storage: Storage,
    private readonly shards: number,
    private readonly grouped: Storage = storage,
  ) {}

  private async getSalt(create: boolean): Promise<Uint8Array | null> {
    if (this.salt) return this.salt;
    let salt = await this.storage.get(SALT_KEY);
    if (!salt && create) {
      salt = randomBytes(32);
      await this.storage.put(SALT_KEY, salt);
    }
    this.salt = salt;
    return salt;
  }

  /** Grows with every removal (and reset): a token found stored is still stored while it has not moved. */
  get removalCount(): number {
    return this.removals;
  }

  /** Forgets everything held in memory (after a seal or a keyring change). */
  reset(): void {
    this.removals++;
    this.salt = null;
    this.cache.clear();
    this.cachedTokens.clear();
  }

  private remember(token: string, stored: StoredToken): void {
    // An eighth at a time: finding the oldest walks over the tombstones of earlier deletions.
    if (this.cache.size >= CACHE_LIMIT) {
      let evict = CACHE_LIMIT / 8;
      for (const [oldest, old] of this.cache) {
        if (evict-- <= 0) break;
        this.cache.delete(oldest);
        this.cachedTokens.delete(old.hash);
      }
    }
    this.cache.set(token, stored);
    this.cachedTokens.set(stored.hash, token);
  }

  private forget(hash: string): void {
    const token = this.cachedTokens.get(hash);
    if (token !== undefined) this.cache.delete(token);
    this.cachedTokens.delete(hash);
  }

  async hash(token: string, create = false): Promise<string | null> {
    const salt = await this.getSalt(create);
    return salt ? toHex(await hmacSha256(salt, token)) : null;
  }

  accessorFor(token: string): string {
    return newAccessorFor(token, this.shards);
  }

  /** Applies writes together: in one batch where the storage can (one statement, all or none). */
  private async apply(ops: StorageOp[], storage = this.storage): Promise<void> {
    if (ops.length === 0) return;
    const batch = storage as Partial<BatchStorage>;
    if (typeof batch.applyBatch === 'function') {
      await batch.applyBatch.call(storage, ops);
      return;
    }
    for (const op of ops) {
      if (op.value === null) await storage.delete(op.key);
      else await storage.put(op.key, op.value);
    }
  }

  /** The writes that store `entry` under `hash`, keeping the expiry index in step. */
  private entryOps(hash: string, entry: TokenEntry, previous: TokenEntry | null): StorageOp[] {
    const ops: StorageOp[] = [];
    if (previous?.expireTime != null && previous.expireTime !== entry.expireTime) ops.push({ key: expiryKey(previous.expireTime, hash), value: null });
    ops.push({ key: `${TOKENS_PREFIX}${hash}`, value: utf8(JSON.stringify(entry)) });
    if (entry.expireTime !== null) ops.push({ key: expiryKey(entry.expireTime, hash), value: new Uint8Array(0) });
    return ops;
  }

  /** Stores a new token. The accessor must be one from accessorFor(token). */
  async put(token: string, entry: TokenEntry): Promise<StoredToken> {
    const hash = (await this.hash(token, true))!;
    if (await this.storage.get(`${TOKENS_PREFIX}${hash}`)) throw new Error('token already exists');
    return this.store(token, hash, entry, this.storage);
  }

  /**
   * Stores a new token drawn at random (so not looked up) through the grouped storage, with its
   * link under its parent when `parent` is given: one batch, all or none.
   */
  async putGrouped(token: string, entry: TokenEntry, parent?: string): Promise<StoredToken> {
    const link: StorageOp[] = parent ? [{ key: childKey(parent, entry.accessor), value: new Uint8Array(0) }] : [];
    return this.store(token, (await this.hash(token, true))!, entry, this.grouped, link);
  }

  /**
   * Whether a token with this accessor is stored, as the grouped storage sees it (staged rows
   * included). Its accessor row goes with it (remove() deletes both in one batch).
   */
  async storedInGroup(accessor: string): Promise<boolean> {
    return (await this.grouped.get(`accessors/${accessor}`)) !== null;
  }

  private async store(token: string, hash: string, entry: TokenEntry, storage: Storage, more: StorageOp[] = []): Promise<StoredToken> {
    await this.apply([...more, ...this.entryOps(hash, entry, null), { key: `accessors/${entry.accessor}`, value: utf8(JSON.stringify({ hash })) }], storage);
    const stored = { hash, entry };
    this.remember(token, stored);
    return stored;
  }

  async createRoot(token: string, now = Date.now()): Promise<TokenEntry> {
    return (await this.put(token, rootTokenEntry(this.accessorFor(token), now))).entry;
  }

  /** Rewrites an entry (renewal, a use), keeping the expiry index in step. */
  async update(hash: string, entry: TokenEntry, previous: TokenEntry): Promise<void> {
    await this.write(hash, entry, previous);
    const token = this.cachedTokens.get(hash);
    if (token !== undefined) this.cache.set(token, { hash, entry });
  }

  private async write(hash: string, entry: TokenEntry, previous: TokenEntry | null): Promise<void> {
    await this.apply(this.entryOps(hash, entry, previous));
  }

  /** Deletes a token's records (its children index stays: the caller revokes or orphans them). */
  async remove(stored: StoredToken): Promise<void> {
    await this.removeAll([stored]);
  }

  /**
   * Deletes several tokens' records and applies `more` with them, all in one batch (all or none):
   * expiry removes tokens by the hundred, in one write.
   */
  async removeAll(tokens: StoredToken[], more: StorageOp[] = []): Promise<void> {
    this.removals++;
    // By key: `more` may delete an expiry index key again, and each op costs a statement row.
    const ops = new Map(more.map((op) => [op.key, op.value]));
    for (const { hash, entry } of tokens) {
      this.forget(hash);
      ops.set(`${TOKENS_PREFIX}${hash}`, null);
      // Only wrap() writes one, for a token of this policy alone (whatever uses it has left).
      if (entry.policies.includes(RESPONSE_WRAPPING_POLICY_NAME)) ops.set(`wrapped/${hash}`, null);
      if (entry.accessor) ops.set(`accessors/${entry.accessor}`, null);
      if (entry.expireTime !== null) ops.set(expiryKey(entry.expireTime, hash), null);
    }
    await this.apply([...ops].map(([key, value]) => ({ key, value })));
  }

  /** Drops children links (`[parent, child]` accessors) and applies `more` with them, in one batch. */
  async unlinkAll(links: [string, string][], more: StorageOp[] = []): Promise<void> {
    await this.apply([...more, ...links.map(([parent, child]) => ({ key: childKey(parent, child), value: null }))]);
  }

  /** The live entry for a token, or null when unknown or expired. */
  async lookup(token: string, now = Date.now()): Promise<StoredToken | null> {
    return await this.lookupNow(token, now);
  }

  /** lookup, answered at once (no promise) for a token in memory: a busy token's every request. */
  lookupNow(token: string, now = Date.now()): Maybe<StoredToken | null> {
    const stored = this.cache.get(token);
    return stored ? live(stored, now) : this.#read(token, now);
  }

  async #read(token: string, now: number): Promise<StoredToken | null> {
    const removals = this.removals;
    const hash = await this.hash(token);
    if (!hash) return null;
    const entry = await getJSON<TokenEntry>(this.storage, `${TOKENS_PREFIX}${hash}`);
    if (!entry) return null;
    const stored = { hash, entry };
    // A token removed while this read was under way would otherwise stay usable from memory.
    if (this.removals === removals) this.remember(token, stored);
    return live(stored, now);
  }

  /** A token by accessor, expired or not (revocation must find expired ones too). */
  async byAccessor(accessor: string): Promise<StoredToken | null> {
    const ref = await getJSON<{ hash: string }>(this.storage, `accessors/${accessor}`);
    if (!ref) return null;
    const entry = await getJSON<TokenEntry>(this.storage, `${TOKENS_PREFIX}${ref.hash}`);
    return entry ? { hash: ref.hash, entry } : null;
  }

  async byHash(hash: string): Promise<StoredToken | null> {
    const entry = await getJSON<TokenEntry>(this.storage, `${TOKENS_PREFIX}${hash}`);
    return entry ? { hash, entry } : null;
  }

  async addChild(parentAccessor: string, childAccessor: string): Promise<void> {
    await this.storage.put(childKey(parentAccessor, childAccessor), new Uint8Array(0));
  }

  async removeChild(parentAccessor: string, childAccessor: string): Promise<void> {
    await this.storage.delete(childKey(parentAccessor, childAccessor));
  }

  async children(parentAccessor: string): Promise<string[]> {
    return this.storage.list(`children/${parentAccessor}/`);
  }

  /** Index entries of tokens whose expiry time is at or before `now`, oldest first. */
  async expired(now: number, limit = 100): Promise<{ hash: string; key: string }[]> {
    const out: { hash: string; key: string }[] = [];
    for (const key of await this.storage.scan(EXPIRY, '', limit)) {
      const { ms, hash } = expiryOf(key);
      if (ms > now) break;
      out.push({ hash, key });
    }
    return out;
  }

  /** The earliest expiry time in the index, or null. */
  async nextExpiry(): Promise<number | null> {
    const [first] = await this.storage.scan(EXPIRY, '', 1);
    return first ? expiryOf(first).ms : null;
  }

  /** The response a wrapping token holds (kept beside the token, removed with it). */
  async putWrapped(hash: string, record: WrappedResponse): Promise<void> {
    await putJSON(this.storage, `wrapped/${hash}`, record);
  }

  async wrapped(hash: string): Promise<WrappedResponse | null> {
    return getJSON<WrappedResponse>(this.storage, `wrapped/${hash}`);
  }

  /** Every accessor in this shard (auth/token/accessors). */
  async accessors(): Promise<string[]> {
    return this.storage.list('accessors/');
  }
}
