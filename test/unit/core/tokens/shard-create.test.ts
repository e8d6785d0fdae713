// auth/token/create's write on the serving shard (TokenShard.createHere): the new token and its
// parent's link to it go in one grouped batch, and a parent revoked while the batch was being
// prepared takes the new token with it.
import { describe, expect, it } from 'vitest';
import { newServiceTokenFor, rootTokenEntry, shardFor, type TokenEntry } from '../../../../src/core/tokens/entry';
import { TokenShard } from '../../../../src/core/tokens/shard';
import { MemoryStorage, type StorageOp } from '../../../../src/framework/storage';

const SHARDS = 4;

/** The same data as `inner`, with writes held until `open()` (the grouped path, paused). */
class GatedStorage extends MemoryStorage {
  batches: StorageOp[][] = [];
  gets: string[] = [];
  #gate: Promise<void> = Promise.resolve();
  #open: () => void = () => {};
  constructor(private readonly inner: MemoryStorage) {
    super();
  }
  close(): void {
    this.#gate = new Promise((resolve) => (this.#open = resolve));
  }
  open(): void {
    this.#open();
  }
  override async get(key: string) {
    this.gets.push(key);
    return this.inner.get(key);
  }
  override async list(prefix: string) {
    return this.inner.list(prefix);
  }
  override async applyBatch(ops: StorageOp[]) {
    await this.#gate;
    this.batches.push(ops);
    await this.inner.applyBatch(ops);
  }
}

function shardOn(n: number) {
  const storage = new MemoryStorage();
  const grouped = new GatedStorage(storage);
  const shard: TokenShard = new TokenShard(
    storage,
    {
      shard: n,
      shards: SHARDS,
      peer: () => shard,
      notifyHolder: async () => {},
      revokeTokenLeases: async () => {},
      wakeAt: async () => {},
    },
    grouped,
  );
  return { shard, storage, grouped };
}

async function withParent(n: number) {
  const site = shardOn(n);
  const parentToken = newServiceTokenFor(n, SHARDS);
  const parent = await site.shard.tokens.createRoot(parentToken);
  const token = newServiceTokenFor(n, SHARDS);
  const entry: TokenEntry = { ...rootTokenEntry(site.shard.tokens.accessorFor(token)), parent: parent.accessor, expireTime: Date.now() + 60_000 };
  return { ...site, parent, token, entry };
}

describe('creating a token on the serving shard', () => {
  it("places a token by FNV-1a of its UTF-8 bytes, ASCII or not (a stored token's shard never moves)", () => {
    const fnv = (s: string) => new TextEncoder().encode(s).reduce((h, b) => Math.imul(h ^ b, 0x01000193) >>> 0, 0x811c9dc5);
    for (const token of ['hvs.CAESIJ0abcdefghijklmnop', 'my-own-id', 'id-é-ü', '鍵-id', 'emoji-🔑', '']) {
      for (const shards of [2, 3, 4, 7]) expect(shardFor(token, shards)).toBe(fnv(token) % shards);
    }
  });


  it('draws tokens for the shard asked for', () => {
    for (let n = 0; n < SHARDS; n++) {
      for (let i = 0; i < 20; i++) {
        const token = newServiceTokenFor(n, SHARDS);
        expect(token).toMatch(/^hvs\.[A-Za-z0-9]{24}$/);
        expect(shardFor(token, SHARDS)).toBe(n);
      }
    }
  });

  it('writes the token, its accessor, its expiry and the link under its parent in one grouped batch', async () => {
    const { shard, grouped, parent, token, entry } = await withParent(2);
    await shard.createHere(token, entry);
    expect(grouped.batches.map((b) => b.map((op) => op.key.split('/')[0]).sort())).toEqual([['accessors', 'children', 'expiry', 'tokens']]);
    expect(await shard.tokens.children(parent.accessor)).toEqual([entry.accessor]);
    expect((await shard.tokens.lookup(token))?.entry.accessor).toBe(entry.accessor);
  });

  it('refuses a token that belongs to another shard', async () => {
    const { shard, entry } = await withParent(1);
    await expect(shard.createHere(newServiceTokenFor(3, SHARDS), entry)).rejects.toThrow('wrong shard');
  });

  it('reads nothing to check a parent found stored with no token removed since', async () => {
    const { shard, grouped, token, entry } = await withParent(1);
    await shard.createHere(token, entry, shard.tokens.removalCount);
    expect(grouped.gets.filter((k) => k.startsWith('accessors/'))).toEqual([]);
    const other = newServiceTokenFor(1, SHARDS);
    const before = shard.tokens.removalCount;
    await shard.revokeAccessor(entry.accessor); // some other token removed: the parent is read
    await shard.createHere(other, { ...entry, accessor: shard.tokens.accessorFor(other) }, before);
    expect(grouped.gets.filter((k) => k === `accessors/${entry.parent}`)).toHaveLength(1);
  });

  it('revokes the new token when its parent was revoked before the batch was written', async () => {
    const { shard, grouped, storage, parent, token, entry } = await withParent(0);
    const foundAt = shard.tokens.removalCount; // the parent found stored, as a request's caller
    grouped.close();
    const creating = shard.createHere(token, entry, foundAt);
    // The parent's revocation runs to its end (children listed: none yet) while the batch waits.
    await shard.revokeAccessor(parent.accessor);
    grouped.open();
    await expect(creating).rejects.toThrow('parent token was revoked');
    expect(await shard.tokens.lookup(token)).toBeNull();
    expect(await shard.tokens.byAccessor(entry.accessor)).toBeNull();
    expect([...storage.data.keys()].filter((k) => /^(tokens|accessors|children|expiry)\//.test(k))).toEqual([]);
  });
});
