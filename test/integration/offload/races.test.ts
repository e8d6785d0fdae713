// Grants racing the changes they must never outlive. First each race pinned down: a grant is taken
// from the mount's object directly, the change is made through the Worker, and the grant's reads
// and settlement are refused, so its request is finished in the object under the new state. Then
// the same races under load through the Worker: once a rotation, a min_decryption_version change
// or a seal has returned, no request sent afterwards is answered from the old state.
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Grant } from '../../../src/framework/backend';
import type { WireRequest } from '../../../src/pipeline/dispatch';
import type { WireResult } from '../../../src/pipeline/result';
import { mountStub, systemStub } from '../../../src/rpc/stubs';
import { grantStamp } from '../../../src/worker/grants';
import { api, caller, initCluster, type Cluster } from '../../helpers/api';
import { sink, sinkURL } from '../../helpers/audit-sink';

let c: Cluster;
const { call, ok } = caller(() => c.root);
const b64 = (s: string) => btoa(s);

async function routeOf(prefix: string) {
  const routes = await systemStub(env).routes();
  if (!Array.isArray(routes)) throw new Error(`no routes: ${String(routes)}`);
  const route = routes.find((r) => r.prefix === prefix);
  if (!route) throw new Error(`no route ${prefix}`);
  return route;
}

/** A grant for a write to `path`, taken as the Worker would (no state cached yet), with what resumes it. */
async function grantFor(prefix: string, path: string, data: Record<string, unknown>) {
  const route = await routeOf(prefix);
  const stub = mountStub(env, route.uuid);
  const wire: WireRequest = { id: crypto.randomUUID(), operation: 'write', path, data, auth: null, clientIP: '127.0.0.1', headers: {}, wrapTTL: 0, grantStamp: '' };
  const result: WireResult = await stub.handle(route.prefix, route.revision, wire, c.root);
  if (result.kind !== 'grant') throw new Error(`expected a grant, got ${JSON.stringify(result)}`);
  const grant: Grant = result.grant;
  return {
    grant,
    read: (key: string) => stub.grantRead(grant.id, { get: [key], list: [] }),
    settle: (data: Record<string, unknown>) => stub.settleGrant(grant.id, { response: { data } }),
    answered: () => stub.settleGrant(grant.id, { answered: true }),
    /** Finishes the request in the object, as the Worker does (a tuned mount has a new revision). */
    resume: (revision = route.revision): Promise<WireResult> => stub.handle(route.prefix, revision, { ...wire, grantStamp: undefined, resumes: grant.id }, c.root),
  };
}

async function unseal(): Promise<void> {
  for (const key of c.recoveryKeys.slice(0, 2)) await api('PUT', 'sys/unseal', { body: { key } });
  expect((await api('GET', 'sys/seal-status')).body.sealed).toBe(false);
}

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/transit', { type: 'transit' });
});

describe('a grant taken before a change', () => {
  it('is refused after a rotation, and its request answers with the new version', async () => {
    await ok('POST', 'transit/keys/rot', {});
    const g = await grantFor('transit/', 'transit/encrypt/rot', { plaintext: b64('x') });
    expect(await g.read('policy/rot')).not.toBeNull();
    await ok('POST', 'transit/keys/rot/rotate', {});
    expect(await g.read('policy/rot')).toBeNull();
    expect(await g.settle({ ciphertext: 'vault:v1:forged' })).toEqual({ kind: 'stale' });
    const resumed = await g.resume();
    expect(resumed.kind).toBe('ok');
    expect(resumed.kind === 'ok' && resumed.response.data?.ciphertext).toMatch(/^vault:v2:/);
  });

  it('is refused after min_decryption_version rises, and its decrypt is refused', async () => {
    await ok('POST', 'transit/keys/mdv', {});
    const old = (await ok('POST', 'transit/encrypt/mdv', { plaintext: b64('old') })).body.data.ciphertext;
    await ok('POST', 'transit/keys/mdv/rotate', {});
    const g = await grantFor('transit/', 'transit/decrypt/mdv', { ciphertext: old });
    await ok('POST', 'transit/keys/mdv/config', { min_decryption_version: 2 });
    expect(await g.settle({ plaintext: b64('old') })).toEqual({ kind: 'stale' });
    expect(await g.resume()).toMatchObject({ kind: 'error', status: 400, errors: ['ciphertext or signature version is disallowed by policy (too old)'] });
  });

  it('is refused after the key is deleted', async () => {
    await ok('POST', 'transit/keys/gone', { deletion_allowed: true });
    await ok('POST', 'transit/keys/gone/config', { deletion_allowed: true });
    const ciphertext = (await ok('POST', 'transit/encrypt/gone', { plaintext: b64('x') })).body.data.ciphertext;
    const g = await grantFor('transit/', 'transit/decrypt/gone', { ciphertext });
    expect((await call('DELETE', 'transit/keys/gone')).status).toBe(204);
    expect(await g.settle({ plaintext: b64('x') })).toEqual({ kind: 'stale' });
    expect(await g.resume()).toMatchObject({ kind: 'error', status: 400, errors: ['encryption key not found'] });
  });

  it('is refused after the mount is tuned (the grant describes the mount)', async () => {
    await ok('POST', 'transit/keys/tuned', {});
    const g = await grantFor('transit/', 'transit/encrypt/tuned', { plaintext: b64('x') });
    await ok('POST', 'sys/mounts/transit/tune', { default_lease_ttl: '1h' });
    expect(await g.settle({ ciphertext: 'vault:v1:forged' })).toEqual({ kind: 'stale' });
    expect((await g.resume((await routeOf('transit/')).revision)).kind).toBe('ok');
  });

  it('is refused after a seal; its request answers 503 and, unsealed, the key serves again', async () => {
    await ok('POST', 'transit/keys/sealed', {});
    const g = await grantFor('transit/', 'transit/encrypt/sealed', { plaintext: b64('x') });
    expect((await ok('PUT', 'sys/seal')).status).toBe(204);
    expect(await g.read('policy/sealed')).toBeNull();
    expect(await g.settle({ ciphertext: 'vault:v1:forged' })).toEqual({ kind: 'stale' });
    expect(await g.resume()).toMatchObject({ kind: 'error', status: 503 });
    await unseal();
    expect((await ok('POST', 'transit/encrypt/sealed', { plaintext: b64('x') })).body.data.ciphertext).toMatch(/^vault:v1:/);
  });

  it('leaves nothing in the Worker\'s isolate once an object answered "sealed"', async () => {
    await ok('POST', 'transit/keys/held', {});
    await ok('POST', 'transit/encrypt/held', { plaintext: b64('x') });
    const route = await routeOf('transit/');
    // The Worker holds the mount's state (this test shares its isolate): a stamp, not "".
    expect(grantStamp(env, route.uuid, 'transit/encrypt/held', {})).toMatch(/^[0-9a-f-]{36}:\d+$/);
    expect((await ok('PUT', 'sys/seal')).status).toBe(204);
    expect((await call('POST', 'transit/encrypt/held', { plaintext: b64('x') })).status).toBe(503);
    expect(grantStamp(env, route.uuid, 'transit/encrypt/held', {})).toBe('');
    await unseal();
  });

  it('settles once: a second settlement of the same grant is refused', async () => {
    await ok('POST', 'transit/keys/once', {});
    const g = await grantFor('transit/', 'transit/encrypt/once', { plaintext: b64('x') });
    expect(g.grant.audited).toBe(false);
    expect(await g.settle({ ciphertext: 'vault:v1:mine' })).toEqual({ kind: 'ok', response: { data: { ciphertext: 'vault:v1:mine' } } });
    expect(await g.settle({ ciphertext: 'vault:v1:again' })).toEqual({ kind: 'stale' });
    // Without audit devices the response stays in the Worker: the object only confirms.
    const h = await grantFor('transit/', 'transit/encrypt/once', { plaintext: b64('x') });
    expect(await h.answered()).toEqual({ kind: 'settled' });
    expect(await h.answered()).toEqual({ kind: 'stale' });
  });

  it('without a stamp from the Worker (OFFLOAD_HANDLERS=0), runs the handler in the object', async () => {
    await ok('POST', 'transit/keys/here', {});
    const route = await routeOf('transit/');
    const wire: WireRequest = { id: crypto.randomUUID(), operation: 'write', path: 'transit/encrypt/here', data: { plaintext: b64('x') }, auth: null, clientIP: '127.0.0.1', headers: {}, wrapTTL: 0 };
    const result = (await mountStub(env, route.uuid).handle(route.prefix, route.revision, wire, c.root)) as WireResult;
    expect(result.kind === 'ok' && result.response.data?.ciphertext).toMatch(/^vault:v1:/);
  });

  it('while an audit device records, is settled only with the response for its entry', async () => {
    await ok('POST', 'transit/keys/audited', {});
    expect((await ok('PUT', 'sys/audit/races', { type: 'http', options: { url: sinkURL('races') } })).status).toBe(204);
    const g = await grantFor('transit/', 'transit/encrypt/audited', { plaintext: b64('x') });
    expect(g.grant.audited).toBe(true);
    expect(await g.answered()).toEqual({ kind: 'stale' });
    const resumed = await g.resume();
    expect(resumed.kind === 'ok' && resumed.response.data?.ciphertext).toMatch(/^vault:v1:/);
    const entries = (await sink('races')).entries.filter((e) => e.request.path === 'transit/encrypt/audited');
    expect(entries.map((e) => e.type)).toEqual(['request', 'response']);
    expect((await call('DELETE', 'sys/audit/races')).status).toBe(204);
  });

  it('stays current across writes grants never read (PKI certificates), not across a role change', async () => {
    await ok('POST', 'sys/mounts/pki', { type: 'pki' });
    await ok('POST', 'pki/root/generate/internal', { common_name: 'Race Root', key_type: 'ec', ttl: '24h' });
    await ok('POST', 'pki/roles/fast', { allowed_domains: 'example.com', allow_subdomains: true, key_type: 'ec', no_store: true, ttl: '1h' });
    await ok('POST', 'pki/roles/kept', { allowed_domains: 'example.com', allow_subdomains: true, key_type: 'ec', ttl: '1h' });
    const g = await grantFor('pki/', 'pki/issue/fast', { common_name: 'a.example.com' });
    await ok('POST', 'pki/issue/kept', { common_name: 'stored.example.com' });
    expect(await g.read('role/fast')).not.toBeNull();
    // A read of what stored issues write is never granted.
    expect(await g.read('certs/00')).toBeNull();
    const h = await grantFor('pki/', 'pki/issue/fast', { common_name: 'b.example.com' });
    await ok('POST', 'pki/roles/fast', { allowed_domains: 'example.org', key_type: 'ec', no_store: true, ttl: '1h' });
    expect(await h.settle({ certificate: 'forged' })).toEqual({ kind: 'stale' });
    expect(await h.resume()).toMatchObject({ kind: 'error', status: 400 });
  });

  it('is unknown to the object under another id', async () => {
    const route = await routeOf('transit/');
    expect(await mountStub(env, route.uuid).settleGrant(crypto.randomUUID(), { response: {} })).toEqual({ kind: 'stale' });
    expect(await mountStub(env, route.uuid).grantRead(crypto.randomUUID(), { get: ['policy/rot'], list: [] })).toBeNull();
  });
});

/**
 * Requests from `workers` loops at once; once `count` have been answered, `change` runs while they
 * go on, and they stop when `count` more were sent after it returned. Each answer is filed under
 * the phase its request was sent in (after: sent once `change` had returned).
 */
async function underLoad<T>(workers: number, count: number, send: () => Promise<T>, change: () => Promise<unknown>): Promise<{ before: T[]; during: T[]; after: T[] }> {
  let phase: 'before' | 'during' | 'after' = 'before';
  const out = { before: [] as T[], during: [] as T[], after: [] as T[] };
  let warmed: () => void = () => {};
  const warm = new Promise<void>((resolve) => (warmed = resolve));
  let sentAfter = 0;
  const loop = async () => {
    while (phase !== 'after' || sentAfter < count) {
      const sentIn = phase;
      if (sentIn === 'after') sentAfter++;
      const answer = await send();
      out[sentIn].push(answer);
      if (out.before.length >= count) warmed();
    }
  };
  const loops = Array.from({ length: workers }, loop);
  await warm;
  phase = 'during';
  await change();
  phase = 'after';
  await Promise.all(loops);
  return out;
}

describe('under load through the Worker', () => {
  it('no encrypt sent after a rotation returned uses the old version (three rotations)', async () => {
    await ok('POST', 'transit/keys/hot', {});
    for (let version = 2; version <= 4; version++) {
      const { after } = await underLoad(
        12,
        48,
        async () => (await ok('POST', 'transit/encrypt/hot', { plaintext: b64('p') })).body.data.ciphertext as string,
        () => ok('POST', 'transit/keys/hot/rotate', {}),
      );
      expect(after.length).toBeGreaterThan(0);
      expect(after.filter((ct) => !ct.startsWith(`vault:v${version}:`))).toEqual([]);
    }
  });

  it('no decrypt sent after min_decryption_version rose decrypts the old version', async () => {
    await ok('POST', 'transit/keys/hot-mdv', {});
    const old = (await ok('POST', 'transit/encrypt/hot-mdv', { plaintext: b64('p') })).body.data.ciphertext;
    await ok('POST', 'transit/keys/hot-mdv/rotate', {});
    const { before, after } = await underLoad(
      12,
      48,
      async () => (await call('POST', 'transit/decrypt/hot-mdv', { ciphertext: old })).status,
      () => ok('POST', 'transit/keys/hot-mdv/config', { min_decryption_version: 2 }),
    );
    expect(before).toContain(200);
    expect(after.length).toBeGreaterThan(0);
    expect(after.filter((status) => status !== 400)).toEqual([]);
  });

  it('no request sent after a seal returned is answered', async () => {
    await ok('POST', 'transit/keys/hot-seal', {});
    const { before, after } = await underLoad(
      12,
      48,
      async () => (await call('POST', 'transit/encrypt/hot-seal', { plaintext: b64('p') })).status,
      () => ok('PUT', 'sys/seal'),
    );
    expect(before).toContain(200);
    expect(after.length).toBeGreaterThan(0);
    expect(after.filter((status) => status !== 503)).toEqual([]);
    await unseal();
  });
});
