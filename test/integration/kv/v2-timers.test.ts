// delete_version_after: a version's deletion_time (the key's value capped by the engine's), the
// version reading as deleted from that time on, and the mount's alarm recording the deletion
// (the gone/ index behind exclude_deleted) when it comes.
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, initCluster, type Cluster } from '../../helpers/api';
import { mountKv2, mountObject, sleep } from '../../helpers/kv2';

let c: Cluster;
const kv = (method: string, path: string, body?: unknown) => api(method, path, { token: c.root, body });
const write = (mount: string, path: string, data: unknown) => kv('POST', `${mount}/data/${path}`, { data });
const ms = (t: string) => Date.parse(t);

/** The versioned store's own keys, as the mount's object holds them. */
async function engineKeys(mount: string, under: string): Promise<string[]> {
  return runInDurableObject(await mountObject(c.root, mount), (_o, state) =>
    state.storage.sql
      .exec<{ key: string }>('SELECT key FROM coffer_kv WHERE key >= ? AND key < ? ORDER BY key', `logical/../${under}`, `logical/../${under}\u{10FFFF}`)
      .toArray()
      .map((r) => r.key.slice(`logical/../${under}`.length)),
  );
}

beforeAll(async () => {
  c = await initCluster();
  await mountKv2(c.root, 'kv');
  await mountKv2(c.root, 'capped');
  await kv('POST', 'capped/config', { delete_version_after: '1s' });
});

describe('deletion_time', () => {
  it('is created + the key\'s delete_version_after', async () => {
    await kv('POST', 'kv/metadata/t/two', { delete_version_after: '2s' });
    const r = (await write('kv', 't/two', { v: 1 })).body.data;
    expect(ms(r.deletion_time) - ms(r.created_time)).toBe(2000);
  });

  it('is capped by the engine\'s value, and the key\'s value is kept as given', async () => {
    await kv('POST', 'capped/metadata/long', { delete_version_after: '1h' });
    const r = (await write('capped', 'long', { v: 1 })).body.data;
    expect(ms(r.deletion_time) - ms(r.created_time)).toBe(1000);
    expect((await kv('GET', 'capped/metadata/long')).body.data.delete_version_after).toBe('1h0m0s');
    const plain = (await write('capped', 'plain', { v: 1 })).body.data;
    expect(ms(plain.deletion_time) - ms(plain.created_time)).toBe(1000);
  });

  it('is not set when the engine disables delete_version_after', async () => {
    await mountKv2(c.root, 'disabled');
    await kv('POST', 'disabled/config', { delete_version_after: -1 });
    await kv('POST', 'disabled/metadata/k', { delete_version_after: '1s' });
    expect((await write('disabled', 'k', { v: 1 })).body.data.deletion_time).toBe('');
  });

  it('undelete starts the clock again from now', async () => {
    await kv('POST', 'kv/metadata/t/undo', { delete_version_after: '1h' });
    await write('kv', 't/undo', { v: 1 });
    await kv('POST', 'kv/delete/t/undo', { versions: [1] });
    const before = Date.now();
    await kv('POST', 'kv/undelete/t/undo', { versions: [1] });
    const v = (await kv('GET', 'kv/metadata/t/undo')).body.data.versions['1'];
    expect(ms(v.deletion_time) - before).toBeGreaterThanOrEqual(3_600_000);
    expect((await kv('GET', 'kv/data/t/undo')).status).toBe(200);
  });
});

describe('reaching the deletion time', () => {
  it('the version reads as deleted from then on, and the alarm records it', async () => {
    const stub = await mountObject(c.root, 'capped');
    const created = (await write('capped', 'soon', { v: 1 })).body.data;
    const due = ms(created.deletion_time);
    expect((await kv('GET', 'capped/data/soon')).status).toBe(200);
    // The write scheduled the object's alarm for the deletion time (or earlier work).
    const alarm = await runInDurableObject(stub, (_o, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeLessThanOrEqual(due);
    expect(await engineKeys('capped', 'gone/')).not.toContain('soon');

    await sleep(due - Date.now() + 50);
    const r = await kv('GET', 'capped/data/soon');
    expect(r.status).toBe(404);
    expect(r.body.data).toEqual({ data: null, metadata: expect.objectContaining({ version: 1, deletion_time: created.deletion_time, destroyed: false }) });
    // Alarms also fire on their own here; run any still pending so the check is deterministic.
    await runDurableObjectAlarm(stub);
    expect(await engineKeys('capped', 'gone/')).toContain('soon');
    expect((await engineKeys('capped', 'due/')).filter((k) => k.endsWith('/soon'))).toEqual([]);
    const listed = await kv('GET', 'capped/metadata?list=true&exclude_deleted=true');
    expect(listed.status === 404 ? [] : listed.body.data.keys).not.toContain('soon');
    expect((await kv('GET', 'capped/metadata?list=true')).body.data.keys).toContain('soon');
    // A new version is live again (and will be deleted in its turn).
    expect((await write('capped', 'soon', { v: 2 })).status).toBe(200);
    expect(await engineKeys('capped', 'gone/')).not.toContain('soon');
    expect((await kv('GET', 'capped/data/soon')).body.data.data).toEqual({ v: 2 });
  });

  it('lists are exact even before the alarm has run', async () => {
    const stub = await mountObject(c.root, 'capped');
    await write('capped', 'late/one', { v: 1 });
    await write('capped', 'late/two', { v: 1 });
    await kv('POST', 'capped/undelete/late/two', { versions: [1] }); // still due, 1s from now
    // Hold the alarm back: only reads decide, lazily.
    await runInDurableObject(stub, (_o, state) => state.storage.deleteAlarm());
    await sleep(1100);
    expect(await engineKeys('capped', 'gone/')).not.toContain('late/one');
    expect((await kv('GET', 'capped/data/late/one')).status).toBe(404);
    expect((await kv('GET', 'capped/metadata/late?list=true&exclude_deleted=true')).status).toBe(404);
    expect((await kv('GET', 'capped/metadata/late?list=true&recursive=true&exclude_deleted=true')).status).toBe(404);
    expect((await kv('GET', 'capped/metadata/late?list=true')).body.data.keys).toEqual(['one', 'two']);
    // A write that schedules a deletion arms the alarm again, and its run records the overdue ones.
    expect(await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).toBeNull();
    await write('capped', 'later', { v: 1 });
    expect(await runInDurableObject(stub, (_o, state) => state.storage.getAlarm())).not.toBeNull();
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await engineKeys('capped', 'gone/')).toEqual(expect.arrayContaining(['late/one', 'late/two']));
    expect(await engineKeys('capped', 'gone/')).not.toContain('later');
  });
});
