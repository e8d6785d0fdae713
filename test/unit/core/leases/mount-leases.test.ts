// The mount's lease expiry index: one flat folder paged with scan, and entries an earlier release
// wrote (a folder per millisecond) read alike and removed once no lease stands behind them.
import { describe, expect, it } from 'vitest';
import { LeaseManager, type LeaseRecord } from '../../../../src/core/leases/mount-leases';
import { MemoryStorage, putJSON } from '../../../../src/framework/storage';

const T0 = Date.UTC(2026, 10, 28, 3, 0, 0);
const TTLS = { defaultLeaseTTL: 3600, maxLeaseTTL: 86_400 };
const EXPIRY = 'core/lease-expiry/';

function manager(failRevokes = 0) {
  const storage = new MemoryStorage();
  const revoked: string[] = [];
  const wakes: number[] = [];
  let failures = failRevokes;
  const leases = new LeaseManager(storage, 'creds/', {
    secretType: (name) =>
      name === 'cred'
        ? {
            revoke: async (lease) => {
              if (failures > 0) {
                failures--;
                throw new Error('backend unavailable');
              }
              revoked.push(lease.id);
            },
          }
        : undefined,
    engineStorage: () => storage,
    registerToken: async () => undefined,
    wakeAt: async (at) => void wakes.push(at),
  });
  const issue = (ttl: number, now = T0, path = 'creds/creds/role') => leases.create(storage, path, { type: 'cred', ttl, renewable: true, internal: {} }, '', TTLS, now);
  const index = () => [...storage.data.keys()].filter((k) => k.startsWith(EXPIRY)).sort();
  return { storage, leases, revoked, wakes, issue, index };
}

/** A lease as an earlier release stored it: its expiry entry in a folder of its own millisecond. */
async function legacyLease(storage: MemoryStorage, rel: string, expireTime: number): Promise<LeaseRecord> {
  const lease: LeaseRecord = { id: `creds/${rel}`, path: `creds/${rel.slice(0, rel.lastIndexOf('/'))}`, secretType: 'cred', internal: {}, accessor: '', issueTime: T0 - 1000, expireTime, ttl: 60, lastRenewal: null, renewable: true };
  await putJSON(storage, `core/leases/${rel}`, lease);
  await storage.put(`${EXPIRY}${String(expireTime).padStart(13, '0')}/${encodeURIComponent(rel)}`, new Uint8Array(0));
  return lease;
}

describe('lease expiry index', () => {
  it('keeps one entry per lease in one flat folder: no folder per millisecond', async () => {
    const m = manager();
    const a = await m.issue(60);
    const b = await m.issue(120);
    expect(await m.storage.list(EXPIRY)).toHaveLength(2);
    expect((await m.storage.list(EXPIRY)).some((name) => name.endsWith('/'))).toBe(false);
    const rel = (id: string) => encodeURIComponent(id.slice('creds/'.length));
    expect(m.index()).toEqual([`${EXPIRY}${String(T0 + 60_000).padStart(13, '0')}-${rel(a.id)}`, `${EXPIRY}${String(T0 + 120_000).padStart(13, '0')}-${rel(b.id)}`]);
  });

  it('expires due leases in time order and answers the next expiry', async () => {
    const m = manager();
    const a = await m.issue(60);
    const b = await m.issue(30);
    const c = await m.issue(600);
    expect(await m.leases.tick(T0 + 59_000)).toBe(T0 + 60_000);
    expect(m.revoked).toEqual([b.id]);
    expect(await m.leases.tick(T0 + 60_000)).toBe(T0 + 600_000);
    expect(m.revoked).toEqual([b.id, a.id]);
    expect(await m.leases.get(a.id)).toBeNull();
    expect(await m.leases.get(c.id)).not.toBeNull();
    expect(await m.leases.tick(T0 + 600_000)).toBeNull();
    expect(m.index()).toEqual([]);
  });

  it('pages through more due leases than one scan reads', async () => {
    const m = manager();
    const ids: string[] = [];
    for (let i = 0; i < 250; i++) ids.push((await m.issue(60, T0 + i)).id);
    const later = await m.issue(3600);
    expect(await m.leases.tick(T0 + 120_000)).toBe(later.expireTime);
    expect(m.revoked).toEqual(ids);
    expect(m.index()).toHaveLength(1);
  });

  it('moves a renewed lease\'s entry, and does not end it at its old time', async () => {
    const m = manager();
    const a = await m.issue(60);
    const renewed = await m.leases.renew(a.id, 3600, 86_400, T0 + 10_000);
    expect(m.index()).toHaveLength(1);
    expect(await m.leases.tick(T0 + 61_000)).toBe(renewed.expireTime);
    expect(m.revoked).toEqual([]);
  });

  it('retries a failed revocation at its next attempt and keeps the lease until it succeeds', async () => {
    const m = manager(1);
    const a = await m.issue(60);
    expect(await m.leases.tick(T0 + 60_000)).toBe(T0 + 61_000);
    expect(m.wakes).toEqual([T0 + 61_000]);
    expect((await m.leases.get(a.id))?.revoking?.attempts).toBe(1);
    expect(await m.leases.tick(T0 + 60_500)).toBe(T0 + 61_000);
    expect(await m.leases.tick(T0 + 61_000)).toBeNull();
    expect(m.revoked).toEqual([a.id]);
    expect(m.index()).toEqual([]);
  });

  describe('entries an earlier release wrote (a folder per millisecond)', () => {
    it('ends their due leases and removes the entries', async () => {
      const m = manager();
      await legacyLease(m.storage, 'creds/old/one', T0 + 5_000);
      const fresh = await m.issue(600);
      expect(await m.leases.tick(T0)).toBe(T0 + 5_000);
      expect(await m.leases.tick(T0 + 5_000)).toBe(fresh.expireTime);
      expect(m.revoked).toEqual(['creds/creds/old/one']);
      expect(m.index()).toHaveLength(1);
      expect(await m.storage.list(EXPIRY)).toEqual([m.index()[0].slice(EXPIRY.length)]);
    });

    it('removes the entry a renewal left behind without ending the lease', async () => {
      const m = manager();
      await legacyLease(m.storage, 'creds/old/two', T0 + 5_000);
      const renewed = await m.leases.renew('creds/creds/old/two', 3600, 86_400, T0 + 1_000);
      expect(m.index()).toHaveLength(2);
      expect(await m.leases.tick(T0 + 5_000)).toBe(renewed.expireTime);
      expect(m.revoked).toEqual([]);
      expect(await m.leases.get('creds/creds/old/two')).not.toBeNull();
      expect(m.index()).toEqual([`${EXPIRY}${String(renewed.expireTime).padStart(13, '0')}-${encodeURIComponent('creds/old/two')}`]);
    });

    it('retries a failed revocation of such a lease from its new entry', async () => {
      const m = manager(1);
      await legacyLease(m.storage, 'creds/old/three', T0 + 5_000);
      expect(await m.leases.tick(T0 + 5_000)).toBe(T0 + 6_000);
      expect(await m.leases.tick(T0 + 6_000)).toBeNull();
      expect(m.revoked).toEqual(['creds/creds/old/three']);
      expect(m.index()).toEqual([]);
    });

    it('removes an entry whose lease is gone', async () => {
      const m = manager();
      await m.storage.put(`${EXPIRY}${String(T0 - 1).padStart(13, '0')}/${encodeURIComponent('creds/old/gone')}`, new Uint8Array(0));
      expect(await m.leases.tick(T0)).toBeNull();
      expect(m.index()).toEqual([]);
    });
  });
});
