// Tuning a kv mount from version 1 to 2 upgrades its data in place: every plain key becomes
// version 1 of a versioned secret, in chunks driven by the mount's alarm, resumable after the
// object restarts. While it runs, every operation answers Vault's 400. Downgrades are refused.
import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Mutex } from '../../../src/core/mutex';
import { api, initCluster, type Cluster } from '../../helpers/api';
import { mountKv2, mountObject, sleep } from '../../helpers/kv2';

const UPGRADING =
  'Upgrading from non-versioned to versioned data. This backend will be unavailable for a brief period and will resume service shortly.';

let c: Cluster;
const kv = (method: string, path: string, body?: unknown) => api(method, path, { token: c.root, body });

const ODD = ['.hidden', '..0', 'a-b', 'a/b', 'a/b/c', 'odd name/été', 'z~', '😀'];
const secretFor = (key: string) => ({ key, n: key.length, nested: { ok: true } });

async function seedV1(mount: string, keys: string[]): Promise<void> {
  expect((await kv('POST', `sys/mounts/${mount}`, { type: 'kv', options: { version: '1' } })).status).toBe(204);
  for (let i = 0; i < keys.length; i += 50) {
    await Promise.all(keys.slice(i, i + 50).map(async (k) => expect((await kv('PUT', `${mount}/${encodeURI(k)}`, secretFor(k))).status).toBe(204)));
  }
}

/** Plain (v1) keys still in the mount's object. */
async function plainKeyCount(stub: DurableObjectStub): Promise<number> {
  return runInDurableObject(stub, (_o, state) =>
    Number(state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM coffer_kv WHERE key >= 'logical/' AND key < 'logical0' AND substr(key, 1, 11) <> 'logical/../'").one().n),
  );
}

/** Holds the object's write mutex, so neither its alarm nor any write can run: the upgrade stands still. */
async function holdWrites(stub: DurableObjectStub): Promise<() => void> {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  await runInDurableObject(stub, (instance) => {
    void (instance as unknown as { writes: Mutex }).writes.run(() => gate);
  });
  return release;
}

async function waitForUpgrade(stub: DurableObjectStub, mount: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    await runDurableObjectAlarm(stub);
    if ((await kv('GET', `${mount}/config`)).status === 200) return;
    await sleep(20);
  }
  throw new Error('upgrade did not finish');
}

beforeAll(async () => {
  c = await initCluster();
});

describe('v1 → v2 upgrade', () => {
  const keys = [...ODD, ...Array.from({ length: 492 }, (_, i) => `bulk/${String(i).padStart(3, '0')}`)];

  it('answers 400 while it runs, resumes after a restart, and turns every key into version 1', async () => {
    await seedV1('legacy', keys);
    const stub = await mountObject(c.root, 'legacy');
    expect((await kv('POST', 'sys/mounts/legacy/tune', { options: { version: '2' } })).status).toBe(204);
    const release = await holdWrites(stub);
    const remaining = await plainKeyCount(stub);
    expect(remaining).toBeGreaterThan(0);

    for (const path of ['legacy/data/a-b', 'legacy/metadata/a-b', 'legacy/metadata?list=true', 'legacy/subkeys/a-b', 'legacy/config']) {
      const r = await kv('GET', path);
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual([UPGRADING]);
    }

    // A crash and restart (each test file has its own runtime, so only this file's objects go):
    // the object loses what it held in memory (the held mutex, the alarm it was running) and
    // carries on from its storage. The alarm is lost too, the worst case: a request re-arms it.
    await runInDurableObject(stub, (_o, state) => state.storage.deleteAlarm());
    await abortAllDurableObjects();
    release();
    const restarted = await mountObject(c.root, 'legacy');
    expect(await plainKeyCount(restarted)).toBe(remaining);
    expect(await runInDurableObject(restarted, (_o, state) => state.storage.getAlarm())).toBeNull();
    const refused = await kv('POST', 'legacy/data/new', { data: { v: 1 } });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([UPGRADING]);
    expect(await runInDurableObject(restarted, (_o, state) => state.storage.getAlarm())).not.toBeNull();
    await waitForUpgrade(restarted, 'legacy');
    expect(await plainKeyCount(restarted)).toBe(0);

    for (const k of [...ODD, 'bulk/000', 'bulk/491']) {
      const r = await kv('GET', `legacy/data/${encodeURI(k)}`);
      expect(r.status, k).toBe(200);
      expect(r.body.data.data).toEqual(secretFor(k));
      expect(r.body.data.metadata).toMatchObject({ version: 1, deletion_time: '', destroyed: false, custom_metadata: null });
    }
    expect((await kv('GET', 'legacy/metadata/bulk/123')).body.data).toMatchObject({ current_version: 1, oldest_version: 1, versions: { '1': { destroyed: false } } });
    expect((await kv('GET', 'legacy/metadata/bulk?list=true&recursive=true&limit=10000')).body.data.keys).toHaveLength(492);
    expect((await kv('GET', 'legacy/metadata/a?list=true')).body.data.keys).toEqual(['b', 'b/']);
    // The refused write left nothing behind.
    expect((await kv('GET', 'legacy/metadata/new')).status).toBe(404);
  }, 120_000);

  it('then serves as a v2 mount', async () => {
    expect((await kv('POST', 'legacy/data/a-b', { data: { v: 2 }, options: { cas: 1 } })).body.data.version).toBe(2);
    expect((await kv('GET', 'legacy/data/a-b?version=1')).body.data.data).toEqual(secretFor('a-b'));
    expect((await kv('GET', 'legacy/a-b')).status).toBe(404);
    expect((await kv('GET', 'sys/mounts/legacy')).body.data.options).toEqual({ version: '2' });
  });

  it('refuses a downgrade', async () => {
    const r = await kv('POST', 'sys/mounts/legacy/tune', { options: { version: '1' } });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['cannot downgrade mount from version 2']);
    expect((await kv('GET', 'legacy/data/a-b')).status).toBe(200);
  });

  it('an empty v1 mount (version unset) upgrades at once', async () => {
    expect((await kv('POST', 'sys/mounts/empty', { type: 'kv' })).status).toBe(204);
    expect((await kv('POST', 'sys/mounts/empty/tune', { options: { version: '2' } })).status).toBe(204);
    expect((await kv('POST', 'empty/data/x', { data: { v: 1 } })).status).toBe(200);
  });
});

describe('enabling v2', () => {
  it('with the kv-v2 alias or options.version', async () => {
    expect((await kv('POST', 'sys/mounts/alias2', { type: 'kv-v2' })).status).toBe(204);
    expect((await kv('GET', 'sys/mounts/alias2')).body.data).toMatchObject({ type: 'kv', options: { version: '2' } });
    expect((await kv('POST', 'alias2/data/x', { data: { v: 1 } })).status).toBe(200);
    await mountKv2(c.root, 'direct');
    expect((await kv('GET', 'direct/config')).status).toBe(200);
  });
});
