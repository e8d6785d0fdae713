// sys/init, seal-status, health, seal, unseal, key-status, rotate (reference §2.1–2.3).
// Tests in this file run in order against one cluster.
import { env, evictDurableObject, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { fromHex, toBase64 } from '../../../src/crypto/encoding';
import { api, PERMISSION_DENIED } from '../../helpers/api';

const system = () => env.SYSTEM.get(env.SYSTEM.idFromName('system'));
let root = '';
let keys: string[] = [];

describe('before initialisation', () => {
  it('reports an uninitialised, sealed cluster', async () => {
    const s = await api('GET', 'sys/seal-status');
    expect(s.status).toBe(200);
    expect(s.body).toMatchObject({ type: 'static', initialized: false, sealed: true, t: 0, n: 0, progress: 0, nonce: '', recovery_seal: true, recovery_seal_type: 'shamir' });
    expect(s.body.version).toMatch(/^1\.21\.0\+coffer\./);
    expect(s.body.cluster_id).toBeUndefined();
    expect((await api('GET', 'sys/init')).body).toEqual({ initialized: false });
  });

  it('answers sys/health with 501 by default and honours uninitcode', async () => {
    const h = await api('GET', 'sys/health');
    expect(h.status).toBe(501);
    expect(h.body).toMatchObject({ initialized: false, sealed: true, standby: false });
    expect((await api('GET', 'sys/health?uninitcode=200')).status).toBe(200);
  });

  it('answers everything else with 503 "Vault is sealed"', async () => {
    for (const path of ['sys/mounts', 'secret/foo', 'auth/token/lookup-self', 'sys/key-status']) {
      const r = await api('GET', path, { token: 'hvs.whatever' });
      expect(r.status).toBe(503);
      expect(r.body.errors).toEqual(['Vault is sealed']);
    }
  });

  it.each([
    [{ recovery_shares: 0, recovery_threshold: 0 }, 'recovery_shares must be at least 1'],
    [{ recovery_shares: 3, recovery_threshold: 5 }, 'recovery_threshold cannot be greater than recovery_shares'],
    [{ recovery_shares: 3, recovery_threshold: 1 }, 'recovery_threshold must be at least 2'],
    [{ recovery_shares: 'three', recovery_threshold: 2 }, 'error converting input "three" for field "recovery_shares"'],
    [{ recovery_shares: 1, recovery_threshold: 1, pgp_keys: ['abc'] }, 'PGP-encrypted key shares are not supported'],
  ])('refuses init with %j', async (body, message) => {
    const r = await api('PUT', 'sys/init', { body });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toContain(message);
    expect((await api('GET', 'sys/init')).body).toEqual({ initialized: false });
  });

  it('initialises with recovery keys (and accepts the CLI\'s secret_* spelling)', async () => {
    const r = await api('PUT', 'sys/init', { body: { secret_shares: 3, secret_threshold: 2 } });
    expect(r.status).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(['keys', 'keys_base64', 'recovery_keys', 'recovery_keys_base64', 'root_token']);
    expect(r.body.keys).toEqual([]);
    expect(r.body.recovery_keys).toHaveLength(3);
    r.body.recovery_keys.forEach((k: string, i: number) => {
      expect(k).toMatch(/^[0-9a-f]{66}$/);
      expect(r.body.recovery_keys_base64[i]).toBe(toBase64(fromHex(k)!));
    });
    expect(r.body.root_token).toMatch(/^hvs\.[A-Za-z0-9]{24}$/);
    root = r.body.root_token;
    keys = r.body.recovery_keys;
    const again = await api('PUT', 'sys/init', { body: { recovery_shares: 1, recovery_threshold: 1 } });
    expect(again.status).toBe(400);
    expect(again.body.errors).toEqual(['Vault is already initialized']);
  });
});

describe('unsealed', () => {
  it('reports status, cluster identity and health', async () => {
    const s = await api('GET', 'sys/seal-status');
    expect(s.body).toMatchObject({ initialized: true, sealed: false, t: 2, n: 3, progress: 0 });
    expect(s.body.cluster_name).toMatch(/^vault-cluster-[0-9a-f]{8}$/);
    expect(s.body.cluster_id).toMatch(/^[0-9a-f-]{36}$/);
    const h = await api('GET', 'sys/health');
    expect(h.status).toBe(200);
    expect(h.body).toMatchObject({ initialized: true, sealed: false, cluster_id: s.body.cluster_id, replication_dr_mode: 'disabled' });
    expect(Math.abs(h.body.server_time_utc - Date.now() / 1000)).toBeLessThan(60);
  });

  it('honours health status-code parameters and refuses bad ones', async () => {
    expect((await api('GET', 'sys/health?activecode=299')).status).toBe(299);
    expect((await api('GET', 'sys/health?standbyok=true&perfstandbyok=true')).status).toBe(200);
    const bad = await api('GET', 'sys/health?activecode=abc');
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toContain('unable to parse activecode');
    expect((await api('GET', 'sys/health?sealedcode=1000')).status).toBe(400);
  });

  it('answers sys/leader for HA-aware clients', async () => {
    expect((await api('GET', 'sys/leader')).body).toMatchObject({ ha_enabled: false, is_self: false });
  });

  it('reports the keyring term, also at the top level', async () => {
    const r = await api('GET', 'sys/key-status', { token: root });
    expect(r.body.data.term).toBe(1);
    expect(r.body.term).toBe(1);
    expect(r.body.data.install_time).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('ignores unseal and refuses reset while unsealed', async () => {
    expect((await api('PUT', 'sys/unseal', { body: { key: keys[0] } })).body.sealed).toBe(false);
    const r = await api('PUT', 'sys/unseal', { body: { reset: true } });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['vault is unsealed']);
  });
});

describe('rotate', () => {
  async function termOfStoredValue(mountUuid: string, key: string): Promise<number> {
    return runInDurableObject(env.MOUNTS.get(env.MOUNTS.idFromName(mountUuid)), async (_o, state) => {
      const row = state.storage.sql.exec<{ value: ArrayBuffer }>('SELECT value FROM coffer_kv WHERE key = ?', key).one();
      return new DataView(row.value).getUint32(0);
    });
  }

  it('needs a token', async () => {
    expect((await api('POST', 'sys/rotate')).status).toBe(403);
  });

  it('adds a keyring term: new writes use it, older values still decrypt', async () => {
    expect((await api('POST', 'sys/mounts/secret', { token: root, body: { type: 'kv' } })).status).toBe(204);
    const uuid = (await api('GET', 'sys/mounts/secret', { token: root })).body.data.uuid;
    await api('PUT', 'secret/before', { token: root, body: { v: 'old' } });
    expect(await termOfStoredValue(uuid, 'logical/before')).toBe(1);
    expect((await api('POST', 'sys/rotate', { token: root })).status).toBe(204);
    expect((await api('GET', 'sys/key-status', { token: root })).body.data.term).toBe(2);
    await api('PUT', 'secret/after', { token: root, body: { v: 'new' } });
    expect(await termOfStoredValue(uuid, 'logical/after')).toBe(2);
    expect((await api('GET', 'secret/before', { token: root })).body.data).toEqual({ v: 'old' });
    expect((await api('GET', 'secret/after', { token: root })).body.data).toEqual({ v: 'new' });
  });
});

describe('seal and unseal', () => {
  it('refuses sys/seal without a token', async () => {
    const r = await api('PUT', 'sys/seal');
    expect(r.status).toBe(403);
    expect(r.body.errors).toEqual([PERMISSION_DENIED]);
  });

  it('seals: every request but the seal endpoints answers 503', async () => {
    await api('PUT', 'secret/kept', { token: root, body: { survives: 'the seal' } });
    expect((await api('PUT', 'sys/seal', { token: root })).status).toBe(204);
    expect((await api('GET', 'sys/seal-status')).body).toMatchObject({ sealed: true, progress: 0, t: 2, n: 3 });
    expect((await api('GET', 'sys/health')).status).toBe(503);
    expect((await api('GET', 'sys/health?sealedcode=200')).status).toBe(200);
    for (const [method, path] of [
      ['GET', 'secret/kept'],
      ['GET', 'sys/mounts'],
      ['GET', 'auth/token/lookup-self'],
      ['POST', 'sys/rotate'],
      ['GET', 'sys/generate-root/attempt'],
    ]) {
      const r = await api(method, path, { token: root });
      expect(r.status, path).toBe(503);
      expect(r.body.errors).toEqual(['Vault is sealed']);
    }
  });

  it('stays sealed when the system object restarts', async () => {
    await evictDurableObject(system()).catch(() => undefined);
    expect((await api('GET', 'sys/seal-status')).body.sealed).toBe(true);
    expect((await api('GET', 'secret/kept', { token: root })).status).toBe(503);
  });

  it.each([
    [{}, "'key' must be specified in request body as JSON, or 'reset' set to true"],
    [{ key: 'not hex or base64!' }, "'key' must be a valid hex or base64 string"],
    [{ key: 'abcd' }, "'key' must be a valid hex or base64 string"],
    [{ key: 'ab'.repeat(33) }, "recovery key verification failed: the key is not a share of this cluster's recovery key"],
  ])('refuses unseal with %j', async (body, message) => {
    const r = await api('PUT', 'sys/unseal', { body });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
    expect((await api('GET', 'sys/seal-status')).body.progress).toBe(0);
  });

  it('counts shares with a nonce, refuses repeats, and resets on request', async () => {
    const first = await api('PUT', 'sys/unseal', { body: { key: keys[0] } });
    expect(first.body).toMatchObject({ sealed: true, progress: 1, t: 2 });
    expect(first.body.nonce).toMatch(/^[0-9a-f-]{36}$/);
    const dup = await api('PUT', 'sys/unseal', { body: { key: keys[0] } });
    expect(dup.status).toBe(400);
    expect(dup.body.errors).toEqual(['given key has already been provided during this operation']);
    const reset = await api('PUT', 'sys/unseal', { body: { reset: true } });
    expect(reset.body).toMatchObject({ sealed: true, progress: 0, nonce: '' });
  });

  it('keeps unseal progress across a restart of the system object', async () => {
    await api('PUT', 'sys/unseal', { body: { key: keys[1] } });
    await evictDurableObject(system()).catch(() => undefined);
    expect((await api('GET', 'sys/seal-status')).body.progress).toBe(1);
  });

  it('unseals at the threshold (base64 shares work too) and the data is back', async () => {
    const b64 = toBase64(fromHex(keys[2])!);
    const done = await api('PUT', 'sys/unseal', { body: { key: b64 } });
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ sealed: false, progress: 0, nonce: '' });
    expect((await api('GET', 'secret/kept', { token: root })).body.data).toEqual({ survives: 'the seal' });
    expect((await api('GET', 'sys/health')).status).toBe(200);
  });

  it('field names of sys/unseal are weakly typed like every other endpoint', async () => {
    const r = await api('PUT', 'sys/unseal', { body: { reset: 'maybe' } });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toContain('field "reset"');
  });
});
