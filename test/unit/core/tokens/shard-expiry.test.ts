// Expiry (TokenShard.tick): expired tokens are revoked a batch at a time, each batch in two writes
// (markers and removal, then markers' deletion and the parent's links), with everything
// revokeAccessor does for one token: children, lease holders, secret leases. What cannot finish
// keeps its marker and is resumed by a later tick. The sweep for holders of gone tokens runs once
// per shard, when flagged, and for tidy; not on every tick.
import { describe, expect, it } from 'vitest';
import { newAccessorFor, newServiceTokenFor, rootTokenEntry, type TokenEntry } from '../../../../src/core/tokens/entry';
import { SWEEP_PAGE, TokenShard } from '../../../../src/core/tokens/shard';
import { MemoryStorage, type StorageOp } from '../../../../src/framework/storage';

const SHARDS = 2;

/** Counts every write; `failNextBatch` makes one batch fail (as a crash before its commit would). */
class CountingStorage extends MemoryStorage {
  writes = 0;
  failNextBatch = false;
  gets: string[] = [];
  override async get(key: string) {
    this.gets.push(key);
    return super.get(key);
  }
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
  const unreachable = new Set<string>();
  const onActive: { run?: () => Promise<void> } = {};
  const shard: TokenShard = new TokenShard(storage, {
    shard: 0,
    shards: SHARDS,
    peer: () => shard,
    notifyHolder: async (holder, accessor) => {
      if (unreachable.has(holder)) throw new Error(`${holder} unreachable`);
      notified.push(`${holder} ${accessor}`);
    },
    active: async () => {
      const run = onActive.run;
      onActive.run = undefined;
      await run?.();
    },
    revokeTokenLeases: async (accessor) => {
      if (failLeasesOf.has(accessor)) throw new Error('mount unreachable');
      leasesRevoked.push(accessor);
    },
    wakeAt: async (at) => {
      wakes.push(at);
    },
  });
  return { shard, storage, wakes, leasesRevoked, failLeasesOf, notified, unreachable, onActive };
}

/** Stores a token of shard 0 under `parent` (linked, as auth/token/create links it). */
async function child(shard: TokenShard, parent: TokenEntry, expireTime: number | null, accessorTime?: number): Promise<{ token: string; entry: TokenEntry }> {
  const token = newServiceTokenFor(0, SHARDS);
  const accessor = accessorTime === undefined ? shard.tokens.accessorFor(token) : newAccessorFor(token, SHARDS, accessorTime);
  const entry: TokenEntry = { ...rootTokenEntry(accessor), parent: parent.accessor, expireTime };
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
    await shard.tick(now - 5_000); // none due yet: the shard's one-time holder sweep, and its mark
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

describe('holders of gone tokens', () => {
  /** A token of shard 0 (under the root) that `holder` was granted; its holder record stands. */
  async function used(shard: TokenShard, root: TokenEntry, holder: string, accessorTime?: number) {
    const t = await child(shard, root, Date.now() + 3_600_000, accessorTime);
    expect((await shard.lease(t.token, holder)).status).toBe('ok');
    return t;
  }
  /** Removes a token the way a lost notice would leave it: gone, its holder record standing. */
  async function lostNotice(shard: TokenShard, token: string) {
    const stored = await shard.tokens.lookup(token);
    await shard.tokens.remove(stored!);
  }

  it("reads no standing token's entry on ticks after the shard's first, in this instance or the next", async () => {
    const { shard, storage } = site();
    const root = await shard.tokens.createRoot(newServiceTokenFor(0, SHARDS));
    for (let i = 0; i < 50; i++) await used(shard, root, 'mount:m1');
    const now = Date.now();
    await shard.tick(now); // the instance's first: the sweep reads each of the 50
    expect(storage.gets.filter((k) => k.startsWith('accessors/')).length).toBeGreaterThanOrEqual(50);
    for (let i = 0; i < 5; i++) await child(shard, root, now + i);
    storage.gets = [];
    await shard.tick(now + 10);
    expect(storage.gets.filter((k) => k.startsWith('accessors/'))).toEqual([]);
    expect(await shard.tokens.children(root.accessor)).toHaveLength(50);
    // A new instance over the same storage (the object restarted) does not sweep again.
    const restarted: TokenShard = new TokenShard(storage, { shard: 0, shards: SHARDS, peer: () => restarted, notifyHolder: async () => {}, revokeTokenLeases: async () => {}, wakeAt: async () => {} });
    storage.gets = [];
    await restarted.tick(now + 20);
    expect(storage.gets.filter((k) => k.startsWith('accessors/'))).toEqual([]);
  });

  it('tells the holder of a token gone without notice on the first tick, and later only when tidy asks', async () => {
    const { shard, storage, notified } = site();
    const root = await shard.tokens.createRoot(newServiceTokenFor(0, SHARDS));
    const first = await used(shard, root, 'mount:m1');
    await lostNotice(shard, first.token);
    await shard.tick();
    expect(notified).toEqual([`mount:m1 ${first.entry.accessor}`]);
    expect(rows(storage, first.entry.accessor).filter((k) => k.startsWith('holders/'))).toEqual([]);

    const second = await used(shard, root, 'mount:m2');
    await lostNotice(shard, second.token);
    await shard.tick();
    expect(notified).toHaveLength(1);
    await shard.tick(Date.now(), true);
    expect(notified).toEqual([`mount:m1 ${first.entry.accessor}`, `mount:m2 ${second.entry.accessor}`]);
    expect(rows(storage, second.entry.accessor).filter((k) => k.startsWith('holders/'))).toEqual([]);
  });

  it('revoke-orphan that cannot tell a holder flags a sweep; a later tick tells it and clears the flag', async () => {
    const { shard, storage, notified, unreachable, wakes } = site();
    const root = await shard.tokens.createRoot(newServiceTokenFor(0, SHARDS));
    await shard.tick(); // the instance's first sweep is behind it
    const t = await used(shard, root, 'mount:down');
    unreachable.add('mount:down');
    expect(await shard.revokeOrphan(t.token)).toBe(true);
    expect(await storage.get('sweeps/holders')).not.toBeNull();
    expect(wakes.length).toBeGreaterThan(0);
    await shard.tick(); // still unreachable: the flag stays
    expect(await storage.get('sweeps/holders')).not.toBeNull();
    unreachable.clear();
    await shard.tick();
    expect(notified).toEqual([`mount:down ${t.entry.accessor}`]);
    expect(await storage.get('sweeps/holders')).toBeNull();
    expect(rows(storage, t.entry.accessor)).toEqual([]);
  });

  it('sweeps a page of holder records per tick, the pass kept between ticks, and finishes it', async () => {
    const { shard, storage, notified, wakes } = site();
    const root = await shard.tokens.createRoot(newServiceTokenFor(0, SHARDS));
    const gone: string[] = [];
    for (let i = 0; i < SWEEP_PAGE + 20; i++) {
      const t = await used(shard, root, 'mount:m1');
      await lostNotice(shard, t.token);
      gone.push(t.entry.accessor);
    }
    const now = Date.now();
    storage.gets = [];
    await shard.tick(now); // the shard's first tick: a pass begins
    expect(storage.gets.filter((k) => k.startsWith('accessors/')).length).toBe(SWEEP_PAGE);
    expect(notified).toHaveLength(SWEEP_PAGE);
    expect(await storage.get('sweeps/holders-pass')).not.toBeNull();
    expect(await storage.get('sweeps/holders-once')).toBeNull();
    expect(wakes).toContain(now);
    // A new instance over the same storage (the object restarted) goes on where the pass stopped.
    const restarted: TokenShard = new TokenShard(storage, { shard: 0, shards: SHARDS, peer: () => restarted, notifyHolder: async (holder, accessor) => void notified.push(`${holder} ${accessor}`), revokeTokenLeases: async () => {}, wakeAt: async () => {} });
    await restarted.tick(now + 1);
    expect(notified).toHaveLength(gone.length);
    expect(new Set(notified)).toEqual(new Set(gone.map((a) => `mount:m1 ${a}`)));
    expect([...storage.data.keys()].filter((k) => k.startsWith('holders/') || k === 'sweeps/holders-pass')).toEqual([]);
    expect(await storage.get('sweeps/holders-once')).not.toBeNull();
    storage.gets = [];
    await restarted.tick(now + 2);
    expect(storage.gets.filter((k) => k.startsWith('accessors/'))).toEqual([]);
  });

  it('keeps a flag raised while a pass is under way, and a later pass tells that holder', async () => {
    const { shard, storage, notified, unreachable } = site();
    const root = await shard.tokens.createRoot(newServiceTokenFor(0, SHARDS));
    for (let i = 0; i < SWEEP_PAGE + 5; i++) await used(shard, root, 'mount:m1');
    await shard.tick(); // the first page of the shard's first pass: every token stands
    const { after } = JSON.parse(new TextDecoder().decode((await storage.get('sweeps/holders-pass'))!)) as { after: string };
    // A token whose holder record the pass has gone by already (accessors begin with their time:
    // this one's is older than the pass's place): only a later pass can meet it.
    const orphan = await used(shard, root, 'mount:down', 0);
    expect(`holders/${orphan.entry.accessor}/` < after).toBe(true);
    unreachable.add('mount:down');
    expect(await shard.revokeOrphan(orphan.token)).toBe(true);
    unreachable.clear();
    await shard.tick(); // the pass ends without meeting the record: the flag, raised after it began, stays
    expect(await storage.get('sweeps/holders-pass')).toBeNull();
    expect(await storage.get('sweeps/holders')).not.toBeNull();
    for (let i = 0; i < 3 && (await storage.get('sweeps/holders')) !== null; i++) await shard.tick();
    expect(notified).toContain(`mount:down ${orphan.entry.accessor}`);
    expect(await storage.get('sweeps/holders')).toBeNull();
    expect(rows(storage, orphan.entry.accessor)).toEqual([]);
  });

  it('refuses a grant that raced the revocation of its token, and leaves no holder record', async () => {
    const { shard, storage, onActive } = site();
    const root = await shard.tokens.createRoot(newServiceTokenFor(0, SHARDS));
    const t = await child(shard, root, Date.now() + 60_000);
    // Revoked after the lease found the token, before its holder record is written.
    onActive.run = () => shard.revokeAccessor(t.entry.accessor);
    expect((await shard.lease(t.token, 'mount:m1')).status).toBe('invalid');
    expect(rows(storage, t.entry.accessor)).toEqual([]);
    // Without a race the grant stands.
    const other = await child(shard, root, Date.now() + 60_000);
    expect((await shard.lease(other.token, 'mount:m1')).status).toBe('ok');
    expect(await storage.get(`holders/${other.entry.accessor}/mount:m1`)).not.toBeNull();
  });
});
