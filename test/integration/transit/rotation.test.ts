// Transit timers and ordering in the Mount DO: automatic rotation runs from the object's alarm,
// scheduled from the stored keys (so it survives restarts and lost alarms), exactly once per
// period; and encrypts racing rotations always see a whole key.
import { runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { caller, initCluster, type Cluster } from '../../helpers/api';
import { mountObject } from '../../helpers/kv2';

let c: Cluster;
const { call, ok } = caller(() => c.root);
const HOUR = 3_600_000;

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/transit', { type: 'transit' });
});

const alarmOf = async () => runInDurableObject(await mountObject(c.root, 'transit'), (_o, state) => state.storage.getAlarm());

/**
 * Restores `name` from a backup of `source` whose versions were made `ageMs` ago, with the given
 * rotation period: the only way through the API to hold a key older than the one-hour minimum.
 */
async function restoreAged(source: string, name: string, ageMs: number, period: string): Promise<void> {
  const backup = JSON.parse(atob((await ok('GET', `transit/backup/${source}`)).body.data.backup));
  const then = Date.now() - ageMs;
  for (const entry of Object.values(backup.policy.keys) as { time: string; creation_time: number }[]) {
    entry.time = new Date(then).toISOString();
    entry.creation_time = Math.floor(then / 1000);
  }
  backup.policy.auto_rotate_period = 0;
  await ok('POST', `transit/restore/${name}`, { backup: btoa(JSON.stringify(backup)) });
  await ok('POST', `transit/keys/${name}/config`, { auto_rotate_period: period });
}

describe('automatic rotation', () => {
  beforeAll(async () => {
    await ok('POST', 'transit/keys/template', { exportable: true, allow_plaintext_backup: true });
  });

  it('setting a period arms the alarm for the next rotation', async () => {
    await ok('POST', 'transit/keys/fresh', { auto_rotate_period: '1h' });
    const created = (await ok('GET', 'transit/keys/fresh')).body.data.keys['1'] * 1000;
    const alarm = await alarmOf();
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeLessThanOrEqual(created + HOUR + 1000);
  });

  it('the alarm rotates a key whose period has passed, once, then schedules the next', async () => {
    await restoreAged('template', 'overdue', 2 * HOUR, '1h');
    // Running the alarm twice (a retried alarm) rotates once: the new version is not due.
    expect(await runDurableObjectAlarm(await mountObject(c.root, 'transit'))).toBe(true);
    await runDurableObjectAlarm(await mountObject(c.root, 'transit'));
    const key = (await ok('GET', 'transit/keys/overdue')).body.data;
    expect(key.latest_version).toBe(2);
    const v2 = key.keys['2'] * 1000;
    expect(Date.now() - v2).toBeLessThan(60_000);
    const alarm = await alarmOf();
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeLessThanOrEqual(v2 + HOUR + 1000);
    // Data encrypted before the rotation still decrypts; new data uses version 2.
    expect((await ok('POST', 'transit/encrypt/overdue', { plaintext: btoa('x') })).body.data.key_version).toBe(2);
  });

  it('the schedule lives in the stored keys: a lost alarm is rebuilt from them at the next run', async () => {
    const stub = await mountObject(c.root, 'transit');
    const overdueNext = (await ok('GET', 'transit/keys/overdue')).body.data.keys['2'] * 1000 + HOUR;
    // As after a restart that lost the alarm: nothing in memory says when to rotate next.
    await runInDurableObject(stub, (_o, state) => state.storage.deleteAlarm());
    expect(await alarmOf()).toBeNull();
    // Any later scheduling write arms it again; its run recomputes every key's next rotation.
    await ok('POST', 'transit/keys/later', { auto_rotate_period: '3h' });
    expect(await alarmOf()).not.toBeNull();
    // Scheduled ahead, so only runDurableObjectAlarm runs it (one due now may fire on its own first).
    await runInDurableObject(stub, (_o, state) => state.storage.setAlarm(Date.now() + 60_000));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    const alarm = await alarmOf();
    expect(alarm).not.toBeNull();
    expect(alarm!).toBeLessThanOrEqual(overdueNext + 1000);
    // Nothing was rotated early.
    expect((await ok('GET', 'transit/keys/overdue')).body.data.latest_version).toBe(2);
    expect((await ok('GET', 'transit/keys/later')).body.data.latest_version).toBe(1);
  });

  it('keys without a period, and imported keys that may not rotate, are left alone', async () => {
    await restoreAged('template', 'no-period', 5 * HOUR, '0');
    await runInDurableObject(await mountObject(c.root, 'transit'), (_o, state) => state.storage.setAlarm(Date.now() + 60_000));
    expect(await runDurableObjectAlarm(await mountObject(c.root, 'transit'))).toBe(true);
    expect((await ok('GET', 'transit/keys/no-period')).body.data.latest_version).toBe(1);
  });
});

describe('ordering inside the Mount DO', () => {
  it('encrypts racing rotations always use a whole key version that decrypts', async () => {
    await ok('POST', 'transit/keys/race');
    const plaintext = btoa('racing');
    const work: Promise<{ status: number; body: { data?: { ciphertext?: string; key_version?: number } } }>[] = [];
    for (let i = 0; i < 40; i++) {
      work.push(call('POST', 'transit/encrypt/race', { plaintext }));
      if (i % 4 === 0) work.push(call('POST', 'transit/keys/race/rotate'));
    }
    const results = await Promise.all(work);
    expect(results.every((r) => r.status === 200)).toBe(true);
    const latest = (await ok('GET', 'transit/keys/race')).body.data.latest_version;
    expect(latest).toBe(11);
    const ciphertexts = results.map((r) => r.body.data?.ciphertext).filter((ct): ct is string => typeof ct === 'string' && ct.startsWith('vault:'));
    expect(ciphertexts.length).toBe(40);
    for (const ciphertext of ciphertexts) {
      expect((await ok('POST', 'transit/decrypt/race', { ciphertext })).body.data.plaintext).toBe(plaintext);
    }
    // Versions only ever grow: every ciphertext names a version that existed.
    const versions = new Set(ciphertexts.map((ct) => Number(/^vault:v(\d+):/.exec(ct)![1])));
    for (const v of versions) expect(v).toBeLessThanOrEqual(latest);
  });

  it('concurrent first reads of the wrapping key agree on one key', async () => {
    await ok('POST', 'sys/mounts/transit-wrap', { type: 'transit' });
    const keys = await Promise.all(Array.from({ length: 4 }, () => ok('GET', 'transit-wrap/wrapping_key')));
    expect(new Set(keys.map((r) => r.body.data.public_key)).size).toBe(1);
    expect((await ok('GET', 'transit-wrap/wrapping_key')).body.data.public_key).toBe(keys[0].body.data.public_key);
  });
});
