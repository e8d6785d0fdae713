// The plugin runtime in workerd: a catalog plugin mounted and served from its own isolate (the
// Worker Loader), with the sandbox's promises checked one by one — the bytes are hashed before
// every load, a plugin that throws, loops or hangs answers a clear error and leaves the mount
// serving, it sees only its own mount's storage and env, and no network without the grant.
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { api, initCluster, type ApiResult } from '../../helpers/api';

const bundles = inject('pluginBundles');
let root = '';
const call = (method: string, path: string, body?: unknown): Promise<ApiResult> => api(method, path, { token: root, body });
async function ok(method: string, path: string, body?: unknown): Promise<ApiResult> {
  const r = await call(method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r;
}
const register = (name: string, version: string, envVars: string[] = [], args: string[] = []) =>
  ok('POST', `sys/plugins/catalog/secret/${name}`, { sha256: bundles.misbehave.sha256, command: 'misbehave.js', version, env: envVars, args });
const reload = (plugin: string) => ok('POST', 'sys/plugins/reload/backend', { plugin });

beforeAll(async () => {
  root = (await initCluster()).root;
  await env.PLUGINS!.put('misbehave.js', bundles.misbehave.source);
  await register('misbehave', 'v1.0.0', ['ECHO_VERSION=1']);
  await register('misbehave', 'v2.0.0', ['ECHO_VERSION=2']);
  await register('misbehave', 'v3.0.0', ['ECHO_VERSION=3', 'COFFER_ALLOW_NETWORK=1', 'COFFER_CALL_DEADLINE_MS=1500'], ['--mode', 'strict']);
  await ok('POST', 'sys/mounts/mb', { type: 'misbehave', plugin_version: 'v1.0.0' });
  await ok('POST', 'sys/mounts/mb2', { type: 'misbehave', plugin_version: 'v1.0.0' });
  await ok('POST', 'sys/mounts/mb3', { type: 'misbehave', plugin_version: 'v3.0.0' });
});

describe('serving from the isolate', () => {
  it('runs the Backend: existence checks, create vs update, read, list, delete', async () => {
    await ok('POST', 'mb/item/a', { value: 'one' });
    expect((await ok('GET', 'mb/item/a')).body.data).toEqual({ value: 'one', created: true });
    await ok('POST', 'mb/item/a', { value: 'two' });
    expect((await ok('GET', 'mb/item/a')).body.data).toEqual({ value: 'two', created: false });
    await ok('POST', 'mb/item/b', { value: 'x' });
    expect((await ok('GET', 'mb/item?list=true')).body.data.keys).toEqual(['a', 'b']);
    await ok('DELETE', 'mb/item/b');
    expect((await call('GET', 'mb/item/b')).status).toBe(404);
  });

  it('validates fields in the host as for a built-in engine', async () => {
    const r = await call('POST', 'mb/item/a', { value: { not: 'a string' } });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toContain('value');
    const unknown = await ok('POST', 'mb/item/a', { value: 'v', extra: 1 });
    expect(unknown.body.warnings.join(' ')).toContain('extra');
  });

  it('applies ACLs before the plugin runs', async () => {
    await ok('PUT', 'sys/policies/acl/mb-read', { policy: 'path "mb/item/*" { capabilities = ["read"] }' });
    const t = (await ok('POST', 'auth/token/create', { policies: ['mb-read'] })).body.auth.client_token;
    expect((await api('GET', 'mb/item/a', { token: t })).status).toBe(200);
    expect((await api('POST', 'mb/item/a', { token: t, body: { value: 'no' } })).status).toBe(403);
    const seen = await api('GET', 'mb/version', { token: t });
    expect(seen.status).toBe(403);
  });

  it('gives the plugin the caller without its token', async () => {
    const r = await ok('GET', 'mb/version');
    expect(r.body.data).toEqual({ version: '1', args: '', caller: 'root', policies: ['root'] });
    // A module has no command line: the catalog's args arrive as a JSON list in its env.
    expect((await ok('GET', 'mb3/version')).body.data.args).toBe('["--mode","strict"]');
  });
});

describe('prefetched reads (PathDef.prefetch)', () => {
  it("come with the call, and a key the call writes is read from the host's transaction after", async () => {
    await ok('POST', 'mb/item/pre', { value: 'first' });
    const r = await ok('POST', 'mb/swap/pre', { value: 'second' });
    expect(r.body.data).toEqual({ before: { value: 'first', local: true }, after: { value: 'second', local: false } });
    expect((await ok('GET', 'mb/item/pre')).body.data.value).toBe('second');
    // An absent key comes with the call too.
    const absent = await ok('POST', 'mb/swap/nothing', { value: 'new' });
    expect(absent.body.data).toEqual({ before: { value: null, local: true }, after: { value: 'new', local: false } });
  });

  it('a template the host cannot fill refuses the plugin at load, naming it', async () => {
    await register('misbehave', 'v4.0.0', ['BAD_PREFETCH=1']);
    await ok('POST', 'sys/mounts/mb4', { type: 'misbehave', plugin_version: 'v4.0.0' });
    const r = await call('GET', 'mb4/version');
    expect(r.status).toBe(500);
    expect(r.body.errors).toEqual(['plugin "misbehave" v4.0.0: path "swap/(?<name>\\\\w+)" prefetch template "item/{nope}" names "nope", which is not a string field of the path']);
    expect((await call('GET', 'mb/version')).status).toBe(200);
  });
});

describe('a misbehaving plugin', () => {
  it('a 4xx of its own reaches the client unchanged', async () => {
    const r = await call('GET', 'mb/bad');
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['this plugin refuses that']);
  });

  it('a throw answers a 500 naming the plugin, and the mount keeps serving', async () => {
    const r = await call('GET', 'mb/throw');
    expect(r.status).toBe(500);
    expect(r.body.errors[0]).toBe('plugin "misbehave" v1.0.0 failed during read throw: the plugin gave up');
    expect((await call('GET', 'mb/item/a')).status).toBe(200);
  });

  it('an endless loop is stopped by its step budget, and neither the mount nor the server hangs', async () => {
    const r = await call('GET', 'mb/loop');
    expect(r.status).toBe(500);
    expect(r.body.errors[0]).toContain('exceeded its step budget');
    expect((await call('GET', 'mb/item/a')).status).toBe(200);
    expect((await call('GET', 'sys/health')).status).toBe(200);
  });

  it('a call that never settles meets the deadline its catalog env sets', async () => {
    const r = await call('GET', 'mb3/hang');
    expect(r.status).toBe(500);
    expect(r.body.errors[0]).toBe('plugin "misbehave" v3.0.0 did not finish read hang within 1.5s');
    expect((await call('GET', 'mb3/version')).body.data.version).toBe('3');
  });
});

describe('the sandbox', () => {
  it('no network without the grant; plain fetch with it', async () => {
    const url = `http://127.0.0.1:${inject('transitOraclePort')}/nothing`;
    const denied = await ok('GET', `mb/net?url=${encodeURIComponent(url)}`);
    expect(denied.body.data.reached).toBe(false);
    expect(denied.body.data.error).toContain('not permitted to access the internet');
    const granted = await ok('GET', `mb3/net?url=${encodeURIComponent(url)}`);
    expect(granted.body.data).toEqual({ reached: true, status: 404 });
  });

  it('sees its own mount only: no host keys, no other mount, no bindings, env from the catalog', async () => {
    await ok('POST', 'mb2/item/other', { value: 'mb2 only' });
    const r = await ok('GET', `mb/peek?key=${encodeURIComponent('../core/mount-entry')}`);
    expect(r.body.data).toEqual({ value: null, error: '', top: ['item/'], env: ['ECHO_VERSION'], globals: [], token: false });
    expect((await ok('GET', 'mb/item?list=true')).body.data.keys).not.toContain('other');
    expect((await ok('GET', 'mb2/item?list=true')).body.data.keys).toEqual(['other']);
    for (const key of ['core/mount-entry', '/logical/item/a', 'item//a', '']) {
      const p = await ok('GET', `mb/peek?key=${encodeURIComponent(key)}`);
      expect(p.body.data.value).toBeNull();
    }
  });
});

describe('pinning the bytes and the version', () => {
  it('a replaced bundle is refused at its next load, loudly, and runs again once restored', async () => {
    await env.PLUGINS!.put('misbehave.js', `${bundles.misbehave.source}\n// tampered\n`);
    await reload('misbehave');
    const r = await call('GET', 'mb/version');
    expect(r.status).toBe(500);
    expect(r.body.errors[0]).toMatch(/^plugin "misbehave" v1\.0\.0 refused: the sha256 of "misbehave\.js" is [0-9a-f]{64}, but the catalog entry it runs pins /);
    expect(r.body.errors[0]).toContain(bundles.misbehave.sha256);
    const listed = (await ok('GET', 'sys/mounts')).body.data['mb/'];
    expect(listed.plugin_status).toBe('failed');
    await env.PLUGINS!.put('misbehave.js', bundles.misbehave.source);
    await reload('misbehave');
    expect((await ok('GET', 'mb/version')).body.data.version).toBe('1');
    expect((await ok('GET', 'sys/mounts')).body.data['mb/'].plugin_status).toBe('running');
  });

  it('pins and tune switch versions on reload', async () => {
    await ok('POST', 'sys/mounts/pinned', { type: 'misbehave', plugin_version: 'v3.0.0' });
    expect((await ok('GET', 'pinned/version')).body.data.version).toBe('3');
    await ok('POST', 'sys/mounts/pinned/tune', { plugin_version: 'v1.0.0' });
    // Until the reload the mount keeps running what it loaded.
    expect((await ok('GET', 'pinned/version')).body.data.version).toBe('3');
    await ok('POST', 'sys/plugins/reload/backend', { mounts: ['pinned'] });
    expect((await ok('GET', 'pinned/version')).body.data.version).toBe('1');
    // A pin wins over every mount's own version, at their next reload.
    await ok('POST', 'sys/plugins/pins/secret/misbehave', { version: 'v2.0.0' });
    await reload('misbehave');
    expect((await ok('GET', 'pinned/version')).body.data.version).toBe('2');
    expect((await ok('GET', 'mb/version')).body.data.version).toBe('2');
    const info = (await ok('GET', 'sys/mounts/pinned')).body.data;
    expect(info).toMatchObject({ type: 'misbehave', plugin_version: 'v1.0.0', running_plugin_version: 'v2.0.0', running_sha256: bundles.misbehave.sha256 });
    await ok('DELETE', 'sys/plugins/pins/secret/misbehave');
    await reload('misbehave');
    expect((await ok('GET', 'pinned/version')).body.data.version).toBe('1');
  });
});
