// The v1→v2 upgrade in place, over in-memory storage: which keys are plain, chunked migration,
// and resumption after a chunk that never committed and after a restart.
import { describe, expect, it } from 'vitest';
import { fromUtf8, utf8 } from '../../../../../src/crypto/encoding';
import { ROOT } from '../../../../../src/engines/kv/v2/layout';
import { INLINE_MAX } from '../../../../../src/engines/kv/v2/store';
import { plainKeys, UPGRADE_CHUNK, UPGRADE_MESSAGE, UpgradeGate } from '../../../../../src/engines/kv/v2/upgrade';
import { MemoryStorage, StorageTransaction } from '../../../../../src/framework/storage';
import { kv2 } from './harness';

const v1 = async (storage: MemoryStorage, keys: string[]) => {
  for (const k of keys) await storage.put(k, utf8(JSON.stringify({ key: k })));
};

describe('plain keys', () => {
  it('are every key outside ROOT, in key order, on both sides of it', async () => {
    const storage = new MemoryStorage();
    await v1(storage, ['-a', '..0', '.hidden', 'a/b', 'z']);
    await storage.put(`${ROOT}meta/x`, utf8('{}'));
    await storage.put(`${ROOT}ver/x/1`, utf8('{}'));
    expect(await plainKeys(storage, 10)).toEqual(['-a', '..0', '.hidden', 'a/b', 'z']);
    expect(await plainKeys(storage, 2)).toEqual(['-a', '..0']);
    expect(await plainKeys(storage, 4)).toEqual(['-a', '..0', '.hidden', 'a/b']);
  });
});

describe('UpgradeGate', () => {
  it('migrates a chunk per step; every key becomes version 1 with its data', async () => {
    const storage = new MemoryStorage();
    const keys = Array.from({ length: UPGRADE_CHUNK + 30 }, (_, i) => `k/${i}`);
    await v1(storage, keys);
    const gate = new UpgradeGate();
    await expect(gate.check(storage)).rejects.toThrow(UPGRADE_MESSAGE);
    expect(await gate.step(storage, 1000)).toBe(false);
    expect(await plainKeys(storage, 1000)).toHaveLength(30);
    expect(await gate.step(storage, 1000)).toBe(false);
    expect(await gate.step(storage, 1000)).toBe(true);
    await expect(gate.check(storage)).resolves.toBeUndefined();
  });

  it('a chunk that never commits changes nothing; a restarted gate picks up from storage', async () => {
    const storage = new MemoryStorage();
    await v1(storage, Array.from({ length: 250 }, (_, i) => `k${i}`));
    const before = new Map(storage.data);
    const crashed = new StorageTransaction(storage);
    await new UpgradeGate().step(crashed, 1000); // dropped without commit
    expect(storage.data).toEqual(before);

    const first = new StorageTransaction(storage);
    await new UpgradeGate().step(first, 1000);
    await first.commit();
    expect(await plainKeys(storage, 1000)).toHaveLength(150);
    // A new instance (a restarted object) knows only what storage says.
    const restarted = new UpgradeGate();
    await expect(restarted.check(storage)).rejects.toThrow(UPGRADE_MESSAGE);
    while (!(await restarted.step(storage, 2000)));
    expect(await plainKeys(storage, 1000)).toEqual([]);
    expect(storage.data.size).toBe(250); // one record each, holding its small version 1; no index entries
  });

  it('serves the migrated data through the backend', async () => {
    const { storage, call, backend } = kv2();
    await v1(storage, ['app/db', 'top']);
    const large = { key: 'large', blob: 'x'.repeat(INLINE_MAX) };
    await storage.put('large', utf8(JSON.stringify(large)));
    expect(await call('read', 'data/top')).toEqual({ status: 400, errors: [UPGRADE_MESSAGE] });
    expect(await call('read', 'config')).toEqual({ status: 400, errors: [UPGRADE_MESSAGE] });
    while ((await backend.periodic!(storage, Date.now())) !== null);
    const r = await call('read', 'data/app/db');
    expect(r.response?.data).toMatchObject({ data: { key: 'app/db' }, metadata: { version: 1, destroyed: false } });
    expect((await call('read', 'metadata/top')).response?.data).toMatchObject({ current_version: 1, oldest_version: 1 });
    // Small data lives in the secret's record, large data in a row of its own.
    expect(await storage.get(`${ROOT}ver/top/1`)).toBeNull();
    expect(JSON.parse(fromUtf8((await storage.get(`${ROOT}meta/top`))!)).inline).toEqual({ 1: '{"key":"top"}' });
    expect(JSON.parse(fromUtf8((await storage.get(`${ROOT}ver/large/1`))!))).toEqual(large);
    expect((await call('read', 'data/large')).response?.data).toMatchObject({ data: large });
  });
});
