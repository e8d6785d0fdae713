// Sealing (and rotating the keyring) reaches audit devices too: a device's object forgets its
// keyring and salt, so while sealed it cannot hash from memory; after unsealing it continues with
// the same salt from its storage.
import { env, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { ok } = caller(() => c.root);

/** The audit device's object (white box: its uuid is internal to the system object). */
async function deviceObject(path: string) {
  const system = env.SYSTEM.get(env.SYSTEM.idFromName('system'));
  const refs = await runInDurableObject(system, (instance) => (instance as unknown as { audit: { refs(): Promise<{ uuid: string; path: string }[]> } }).audit.refs());
  const uuid = refs.find((r) => r.path === path)!.uuid;
  return env.AUDIT.get(env.AUDIT.idFromName(uuid));
}

beforeAll(async () => {
  c = await initCluster();
  await ok('PUT', 'sys/audit/sealtest', { type: 'file', options: { file_path: 'discard' } });
});

describe('audit devices and the seal', () => {
  it('forget their salt when the cluster seals, and keep their chain across an unseal', async () => {
    const device = await deviceObject('sealtest/');
    const first = await device.hash('probe');
    if (!first.ok) throw new Error(first.error);
    const before = first.hash;
    expect(before).toMatch(/^hmac-sha256:/);
    expect((await ok('PUT', 'sys/seal')).status).toBe(204);
    expect(await device.hash('probe')).toEqual({ ok: false, error: 'Vault is sealed' });
    for (const key of c.recoveryKeys.slice(0, 2)) await api('PUT', 'sys/unseal', { body: { key } });
    expect((await api('GET', 'sys/seal-status')).body.sealed).toBe(false);
    expect(await device.hash('probe')).toEqual({ ok: true, hash: before });
    expect((await ok('PUT', 'sys/audit-hash/sealtest', { input: 'probe' })).body.data.hash).toBe(before);
  });
});
