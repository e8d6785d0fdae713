// How the token store writes: each change of a token is one atomic batch (so a token is never
// stored without its accessor or expiry index), and random tokens skip the existence lookup.
import { describe, expect, it } from 'vitest';
import { TokenStore, type WrappedResponse } from '../../../../src/core/tokens/store';
import { rootTokenEntry, wrappingTokenEntry } from '../../../../src/core/tokens/entry';
import { MemoryStorage, type StorageOp } from '../../../../src/framework/storage';

class CountingStorage extends MemoryStorage {
  batches: StorageOp[][] = [];
  gets: string[] = [];
  override async applyBatch(ops: StorageOp[]) {
    this.batches.push(ops);
    await super.applyBatch(ops);
  }
  override async get(key: string) {
    this.gets.push(key);
    return super.get(key);
  }
}

const entry = (store: TokenStore, token: string, expireTime: number | null) => ({ ...rootTokenEntry(store.accessorFor(token)), expireTime });

describe('TokenStore writes', () => {
  it('stores a token, its accessor and its expiry in one batch; a failed batch stores none of them', async () => {
    const storage = new CountingStorage();
    const store = new TokenStore(storage, 4);
    await store.hash('warm-up', true);
    storage.batches = [];
    const stored = await store.put('hvs.one', entry(store, 'hvs.one', Date.now() + 60_000));
    expect(storage.batches.length).toBe(1);
    expect(storage.batches[0].map((op) => op.key.split('/')[0]).sort()).toEqual(['accessors', 'expiry', 'tokens']);
    expect((await store.byAccessor(stored.entry.accessor))?.hash).toBe(stored.hash);

    const failing = new CountingStorage();
    failing.applyBatch = async () => {
      throw new Error('disk full');
    };
    const broken = new TokenStore(failing, 4);
    await expect(broken.put('hvs.two', entry(broken, 'hvs.two', Date.now() + 60_000))).rejects.toThrow('disk full');
    expect([...failing.data.keys()].filter((k) => !k.startsWith('salt'))).toEqual([]);
  });

  it('writes a drawn token through the grouped storage, in one batch, without looking it up first', async () => {
    const storage = new CountingStorage();
    const grouped = new CountingStorage();
    const store = new TokenStore(storage, 4, grouped);
    await store.hash('warm-up', true);
    storage.gets = [];
    const stored = await store.putGrouped('hvs.login', entry(store, 'hvs.login', Date.now() + 60_000));
    expect(storage.batches.length).toBe(0);
    expect(storage.gets).toEqual([]);
    expect(grouped.batches.map((b) => b.map((op) => op.key.split('/')[0]).sort())).toEqual([['accessors', 'expiry', 'tokens']]);
    expect(grouped.data.has(`tokens/${stored.hash}`)).toBe(true);
    expect((await store.lookup('hvs.login'))?.hash).toBe(stored.hash);
  });

  it("links a created token under its parent in the token's own batch, and sees staged tokens", async () => {
    const storage = new CountingStorage();
    const grouped = new CountingStorage();
    const store = new TokenStore(storage, 4, grouped);
    const child = entry(store, 'hvs.child', Date.now() + 60_000);
    expect(await store.storedInGroup(child.accessor)).toBe(false);
    await store.putGrouped('hvs.child', child, 'parentAccessor');
    expect(grouped.batches.map((b) => b.map((op) => op.key.split('/')[0]).sort())).toEqual([['accessors', 'children', 'expiry', 'tokens']]);
    expect(grouped.data.has(`children/parentAccessor/${child.accessor}`)).toBe(true);
    expect(await store.storedInGroup(child.accessor)).toBe(true);
    expect(storage.batches.length).toBe(0);
  });

  it('renewal moves the expiry index in the same batch; removal deletes everything in one', async () => {
    const storage = new CountingStorage();
    const store = new TokenStore(storage, 4);
    const first = entry(store, 'hvs.r', Date.now() + 60_000);
    const stored = await store.put('hvs.r', first);
    storage.batches = [];
    await store.update(stored.hash, { ...first, expireTime: first.expireTime! + 1000 }, first);
    expect(storage.batches.length).toBe(1);
    expect(storage.batches[0].filter((op) => op.key.startsWith('expiry/')).map((op) => op.value === null)).toEqual([true, false]);
    await store.remove({ hash: stored.hash, entry: { ...first, expireTime: first.expireTime! + 1000 } });
    expect(storage.batches.length).toBe(2);
    expect([...storage.data.keys()].filter((k) => !k.startsWith('salt'))).toEqual([]);
  });

  it("removes a wrapping token's wrapped response with it, used or not; other tokens delete no such row", async () => {
    const storage = new CountingStorage();
    const store = new TokenStore(storage, 4);
    for (const numUses of [1, 0]) {
      const token = `hvs.w${numUses}`;
      const wrapping = wrappingTokenEntry(store.accessorFor(token), 60, 'sys/wrapping/wrap', Date.now());
      const stored = await store.put(token, wrapping);
      await store.putWrapped(stored.hash, { response: { data: { a: 1 } } } as unknown as WrappedResponse);
      await store.remove({ hash: stored.hash, entry: { ...wrapping, numUses } });
      expect([...storage.data.keys()].filter((k) => !k.startsWith('salt'))).toEqual([]);
    }
    const plain = await store.put('hvs.p', entry(store, 'hvs.p', null));
    storage.batches = [];
    await store.remove(plain);
    expect(storage.batches[0].map((op) => op.key.split('/')[0]).sort()).toEqual(['accessors', 'tokens']);
  });

  it('keeps no token in memory that was removed while it was being looked up', async () => {
    let release = () => {};
    let gate: Promise<void> | null = null;
    class GatedReads extends MemoryStorage {
      override async get(key: string) {
        const value = await super.get(key);
        if (gate && key.startsWith('tokens/')) await gate;
        return value;
      }
    }
    const store = new TokenStore(new GatedReads(), 4);
    const stored = await store.put('hvs.gone', entry(store, 'hvs.gone', null));
    store.reset(); // not in memory: the next lookup reads storage
    gate = new Promise((resolve) => (release = resolve));
    const looking = store.lookup('hvs.gone');
    await new Promise((resolve) => setTimeout(resolve, 0));
    await store.remove(stored);
    gate = null;
    release();
    expect((await looking)?.hash).toBe(stored.hash); // read before the removal
    expect(await store.lookup('hvs.gone')).toBeNull();
  });

  it('answers a lookup of a token in memory at once (expired: null), and reads one it does not hold', async () => {
    const storage = new CountingStorage();
    const store = new TokenStore(storage, 4);
    const now = Date.now();
    const { entry: known } = await store.put('hvs.known', entry(store, 'hvs.known', now + 60_000));
    const atOnce = store.lookupNow('hvs.known', now);
    expect(atOnce).not.toBeInstanceOf(Promise);
    expect((atOnce as { entry: { expireTime: number } }).entry.expireTime).toBe(now + 60_000);
    expect(store.lookupNow('hvs.known', now + 60_000)).toBeNull();
    const read = store.lookupNow('hvs.unknown', now);
    expect(read).toBeInstanceOf(Promise);
    expect(await read).toBeNull();
    // A fresh store over the same storage reads the token, then holds it.
    const again = new TokenStore(storage, 4);
    const first = again.lookupNow('hvs.known', now);
    expect(first).toBeInstanceOf(Promise);
    expect((await first)?.entry.accessor).toBe(known.accessor);
    expect(again.lookupNow('hvs.known', now)).not.toBeInstanceOf(Promise);
  });

  it('looks a token of a chosen ID up before storing it', async () => {
    const storage = new CountingStorage();
    const store = new TokenStore(storage, 4);
    await store.put('hvs.custom', entry(store, 'hvs.custom', null));
    expect(storage.gets.filter((k) => k.startsWith('tokens/')).length).toBe(1);
    await expect(store.put('hvs.custom', entry(store, 'hvs.custom', null))).rejects.toThrow('token already exists');
  });
});

describe('the expiry index', () => {
  it('pages due tokens in time order, and reads entries in the older folder-per-millisecond layout alike', async () => {
    const storage = new CountingStorage();
    const store = new TokenStore(storage, 4);
    const t = Date.now();
    const late = await store.put('hvs.late', entry(store, 'hvs.late', t + 5000));
    const soon = await store.put('hvs.soon', entry(store, 'hvs.soon', t + 1000));
    // An entry as an earlier release wrote it.
    await storage.put(`expiry/${String(t + 2000).padStart(13, '0')}/oldhash`, new Uint8Array(0));
    expect(await store.nextExpiry()).toBe(t + 1000);
    expect((await store.expired(t)).map((e) => e.hash)).toEqual([]);
    expect((await store.expired(t + 3000)).map((e) => e.hash)).toEqual([soon.hash, 'oldhash']);
    const all = await store.expired(t + 9000);
    expect(all.map((e) => e.hash)).toEqual([soon.hash, 'oldhash', late.hash]);
    expect(all[1].key).toBe(`expiry/${String(t + 2000).padStart(13, '0')}/oldhash`);
    expect((await store.expired(t + 9000, 2)).length).toBe(2);
  });
});

describe('accessors', () => {
  it('are 24 base62 characters on their token\'s shard, and never repeat', async () => {
    const { newAccessorFor, newServiceToken, shardFor } = await import('../../../../src/core/tokens/entry');
    const seen = new Set<string>();
    for (const shards of [1, 3, 4, 16]) {
      for (let i = 0; i < 500; i++) {
        const token = newServiceToken();
        const accessor = newAccessorFor(token, shards);
        expect(accessor).toMatch(/^[A-Za-z0-9]{24}$/);
        expect(shardFor(accessor, shards)).toBe(shardFor(token, shards));
        seen.add(accessor);
      }
    }
    expect(seen.size).toBe(2000);
  });

  it('begin with their creation time, so that later ones sort after earlier ones', async () => {
    const { newAccessorFor, newServiceToken, shardFor } = await import('../../../../src/core/tokens/entry');
    const { timePrefix } = await import('../../../../src/crypto/random');
    const t = Date.UTC(2026, 10, 27, 12, 0, 0);
    // Made in turn, they sort in turn (byte order, which is SQLite's for keys); the time prefix
    // itself is tested with the rest of src/crypto/random.ts.
    const made: string[] = [];
    for (let i = 0; i < 200; i++) {
      const token = newServiceToken();
      const accessor = newAccessorFor(token, 4, t + i);
      expect(accessor.startsWith(timePrefix(t + i))).toBe(true);
      expect(shardFor(accessor, 4)).toBe(shardFor(token, 4));
      made.push(accessor);
    }
    expect([...made].sort()).toEqual(made);
    // Made in the same millisecond, they differ in their random part.
    const same = new Set(Array.from({ length: 100 }, () => newAccessorFor(newServiceToken(), 4, t)));
    expect(same.size).toBe(100);
  });
});
