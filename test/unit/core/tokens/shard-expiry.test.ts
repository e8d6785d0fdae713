// Expiry (TokenShard.tick): expired tokens are revoked a batch at a time, each batch in two writes
// (markers and removal, then markers' deletion and the parent's links), with everything
// revokeAccessor does for one token: children, lease holders, secret leases. What cannot finish
// keeps its marker and is resumed by a later tick.
import { describe, expect, it } from 'vitest';
import { newServiceTokenFor, rootTokenEntry, type TokenEntry } from '../../../../src/core/tokens/entry';
import { TokenShard } from '../../../../src/core/tokens/shard';
import { MemoryStorage, type StorageOp } from '../../../../src/framework/storage';

const SHARDS = 2;

/** Counts every write; `failNextBatch` makes one batch fail (as a crash before its commit would). */
class CountingStorage extends MemoryStorage {
  writes = 0;
  failNextBatch = false;
  override async put(key: string, value: Uint8Array) {
    this.writes++;
    return super.put(key, value);
  }
  override async delete(key: string) {
    this.writes++;
    return super.delete(key);
  }
  override async applyBatch(ops: StorageOp[]) {
    if (this.failNextBatch) {
      this.failNextBatch = false;
      throw new Error('storage went away');
    }
    this.writes++;
    return super.applyBatch(ops);
  }
}

function site() {
  const storage = new CountingStorage();
  const wakes: number[] = [];
  const leasesRevoked: string[] = [];
  const failLeasesOf = new Set<string>();
  const notified: string[] = [];
  const shard: TokenShard = new TokenShard(storage, {
    shard: 0,
    shards: SHARDS,
    peer: () => shard,
    notifyHolder: async (holder, accessor) => {
      notified.push(`${holder} ${accessor}`);
    },
    revokeTokenLeases: async (accessor) => {
      if (failLeasesOf.has(accessor)) throw new Error('mount unreachable');
      leasesRevoked.push(accessor);
    },
    wakeAt: async (at) => {
      wakes.push(at);
    },
  });
  return { shard, storage, wakes, leasesRevoked, failLeasesOf, notified };
}

/** Stores a token of shard 0 under `parent` (linked, as auth/token/create links it). */
async function child(shard: TokenShard, parent: TokenEntry, expireTime: number | null): Promise<{ token: string; entry: TokenEntry }> {
  const token = newServiceTokenFor(0, SHARDS);
  const entry: TokenEntry = { ...rootTokenEntry(shard.tokens.accessorFor(token)), parent: parent.accessor, expireTime };
  await shard.createHere(token, entry);
  return { token, entry };
}

const rows = (storage: MemoryStorage, accessor: string) => [...storage.data.keys()].filter((k) => k.includes(accessor));

describe('token expiry', () => {
  it('revokes 250 expired tokens in two writes per hundred, leaving neither rows, markers nor links', async () => {
    const { shard, storage, leasesRevoked } = site();
    const root = await shard.tokens.createRoot(newServiceTokenFor(0, SHARDS));
    const now = Date.now();
    const expired = [];
    for (let i = 0; i < 250; i++) expired.push(await child(shard, root, now - 1000 + i));
    const live = await child(shard, root, now + 60_000);
    storage.writes = 0;

    let next = await shard.tick(now);
    expect(storage.writes).toBe(2);
    expect(next).toBeLessThanOrEqual(now); // more are due: the alarm comes straight back
    while (next !== null && next <= now) next = await shard.tick(now);
    expect(storage.writes).toBe(6);
    expect(next).toBe(live.entry.expireTime);

    for (const { token, entry } of expired) {
      expect(await shard.tokens.lookup(token, now - 10_000)).toBeNull();
      expect(await shard.tokens.byAccessor(entry.accessor)).toBeNull();
      expect(rows(storage, entry.accessor)).toEqual([]);
    }
    expect(await shard.tokens.children(root.accessor)).toEqual([live.entry.accessor]);
    expect([...storage.data.keys()].filter((k) => k.startsWith('revoking/') || k.startsWith('expiry/'))).toHaveLength(1);
    expect(new Set(leasesRevoked)).toEqual(new Set(expired.map(({ entry }) => entry.accessor)));
    expect(await shard.tokens.lookup(live.token, now)).not.toBeNull();
  });

  it("takes an expired token's live children with it and tells its lease holders", async () => {
    const { shard, storage, notified } = site();
    const root = await shard.tokens.createRoot(newServiceTokenFor(0, SHARDS));
    const now = Date.now();
    const parent = await child(shard, root, now - 1);
    const grandchild = await child(shard, parent.entry, now + 60_000);
    // A mount was granted the parent while it was live: it must hear of the revocation.
    expect((await shard.lease(parent.token, 'mount:m1', now - 100)).status).toBe('ok');

    expect(await shard.tick(now)).toBeNull();
    expect(await shard.tokens.byAccessor(parent.entry.accessor)).toBeNull();
    expect(await shard.tokens.byAccessor(grandchild.entry.accessor)).toBeNull();
    expect(rows(storage, parent.entry.accessor)).toEqual([]);
    expect(rows(storage, grandchild.entry.accessor)).toEqual([]);
    expect(await shard.tokens.children(root.accessor)).toEqual([]);
    expect(notified).toEqual([`mount:m1 ${parent.entry.accessor}`]);
  });

  it('keeps the marker of a token whose leases could not be revoked, finishes the rest, and resumes it later', async () => {
    const { shard, storage, wakes, failLeasesOf, leasesRevoked } = site();
    const root = await shard.tokens.createRoot(newServiceTokenFor(0, SHARDS));
    const now = Date.now();
    const stuck = await child(shard, root, now - 2);
    const other = await child(shard, root, now - 1);
    failLeasesOf.add(stuck.entry.accessor);

    await shard.tick(now);
    expect(await shard.tokens.byAccessor(stuck.entry.accessor)).toBeNull(); // unusable at once
    expect(await storage.get(`revoking/${stuck.entry.accessor}`)).not.toBeNull();
    expect(await shard.tokens.children(root.accessor)).toEqual([stuck.entry.accessor]);
    expect(rows(storage, other.entry.accessor)).toEqual([]);
    expect(wakes.some((at) => at > now)).toBe(true);

    failLeasesOf.clear();
    expect(await shard.tick(now + 5_000)).toBeNull();
    expect(leasesRevoked).toContain(stuck.entry.accessor);
    expect(rows(storage, stuck.entry.accessor)).toEqual([]);
    expect(await shard.tokens.children(root.accessor)).toEqual([]);
  });

  it('leaves all of a batch in place when its first write fails, and all of it due again', async () => {
    const { shard, storage } = site();
    const root = await shard.tokens.createRoot(newServiceTokenFor(0, SHARDS));
    const now = Date.now();
    const due = [await child(shard, root, now - 2), await child(shard, root, now - 1)];
    storage.failNextBatch = true;
    await expect(shard.tick(now)).rejects.toThrow('storage went away');
    for (const { entry } of due) {
      expect(await shard.tokens.byAccessor(entry.accessor)).not.toBeNull();
      expect(await storage.get(`revoking/${entry.accessor}`)).toBeNull();
    }
    expect(await shard.tick(now)).toBeNull();
    for (const { entry } of due) expect(rows(storage, entry.accessor)).toEqual([]);
  });

  it('resumes from the markers when the second write fails', async () => {
    const { shard, storage } = site();
    const root = await shard.tokens.createRoot(newServiceTokenFor(0, SHARDS));
    const now = Date.now();
    const due = await child(shard, root, now - 1);
    const applyBatch = storage.applyBatch.bind(storage);
    let batches = 0;
    storage.applyBatch = async (ops) => {
      if (++batches === 2) throw new Error('storage went away');
      return applyBatch(ops);
    };
    await expect(shard.tick(now)).rejects.toThrow('storage went away');
    expect(await shard.tokens.byAccessor(due.entry.accessor)).toBeNull();
    expect(await storage.get(`revoking/${due.entry.accessor}`)).not.toBeNull();
    storage.applyBatch = applyBatch;
    expect(await shard.tick(now)).toBeNull();
    expect(rows(storage, due.entry.accessor)).toEqual([]);
    expect(await shard.tokens.children(root.accessor)).toEqual([]);
  });
});
