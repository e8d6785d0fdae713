// sys/mounts, sys/auth, tune, remount and sys/internal/ui/mounts (reference §2.5, 2.6, 2.11).
import type { RouteEntry } from '../../../src/core/mounts/table';
import { env, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const get = (path: string) => api('GET', path, { token: c.root });
const post = (path: string, body: unknown) => api('POST', path, { token: c.root, body });
const del = (path: string) => api('DELETE', path, { token: c.root });

beforeAll(async () => {
  c = await initCluster();
});

describe('built-in mounts', () => {
  it('lists cubbyhole/, identity/ and sys/ with Vault\'s shape, also at the top level', async () => {
    const r = await get('sys/mounts');
    expect(Object.keys(r.body.data)).toEqual(['cubbyhole/', 'identity/', 'sys/']);
    const cubby = r.body.data['cubbyhole/'];
    expect(cubby).toMatchObject({ type: 'cubbyhole', local: true, seal_wrap: false, options: null, description: 'per-token private secret storage' });
    expect(cubby.accessor).toMatch(/^cubbyhole_[0-9a-f]{8}$/);
    expect(cubby.uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(cubby.config).toEqual({ default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false });
    expect(r.body.data['sys/'].config.passthrough_request_headers).toEqual(['Accept']);
    expect(r.body['sys/']).toEqual(r.body.data['sys/']);
  });

  it('lists token/ in sys/auth', async () => {
    const r = await get('sys/auth');
    expect(Object.keys(r.body.data)).toEqual(['token/']);
    expect(r.body.data['token/']).toMatchObject({ type: 'token', description: 'token based credentials' });
    expect(r.body.data['token/'].accessor).toMatch(/^auth_token_[0-9a-f]{8}$/);
    expect(r.body.data['token/'].config.token_type).toBe('default-service');
    expect((await get('sys/auth/token/tune')).body.data).toMatchObject({ default_lease_ttl: 2764800, max_lease_ttl: 2764800, token_type: 'default-service' });
  });

  it.each([
    ['DELETE', 'sys/mounts/sys', 'cannot unmount "sys/"'],
    ['DELETE', 'sys/mounts/cubbyhole', 'cannot unmount "cubbyhole/"'],
    ['DELETE', 'sys/mounts/identity', 'cannot unmount "identity/"'],
    ['DELETE', 'sys/auth/token', 'token credential backend cannot be disabled'],
    ['POST', 'sys/mounts/sys/tune', 'cannot tune "sys/"'],
    ['POST', 'sys/mounts/cubbyhole/tune', 'cannot tune "cubbyhole/"'],
    ['POST', 'sys/auth/token/tune', "'token_type' cannot be set on the token auth backend"],
  ])('refuses %s %s', async (method, path, message) => {
    const r = await api(method, path, { token: c.root, body: method === 'POST' ? { token_type: 'batch', default_lease_ttl: '1h' } : undefined });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
  });
});

describe('enabling secrets engines', () => {
  it('enables kv with description, config, options and flags', async () => {
    const r = await post('sys/mounts/team/kv', {
      type: 'kv',
      description: 'team secrets',
      local: true,
      seal_wrap: true,
      options: { version: '1' },
      config: { default_lease_ttl: '1h', max_lease_ttl: 7200, listing_visibility: 'unauth', passthrough_request_headers: 'X-A,X-B', audit_non_hmac_request_keys: ['a'] },
    });
    expect(r.status).toBe(204);
    const info = (await get('sys/mounts/team/kv')).body.data;
    expect(info).toMatchObject({ type: 'kv', description: 'team secrets', local: true, seal_wrap: true, options: { version: '1' } });
    expect(info.accessor).toMatch(/^kv_[0-9a-f]{8}$/);
    expect(info.config).toEqual({
      default_lease_ttl: 3600,
      max_lease_ttl: 7200,
      force_no_cache: false,
      listing_visibility: 'unauth',
      passthrough_request_headers: ['X-A', 'X-B'],
      audit_non_hmac_request_keys: ['a'],
    });
    expect((await get('sys/mounts')).body.data['team/kv/'].uuid).toBe(info.uuid);
    expect((await api('PUT', 'team/kv/x', { token: c.root, body: { a: 1 } })).status).toBe(204);
  });

  it('accepts the kv-v1 alias', async () => {
    expect((await post('sys/mounts/alias', { type: 'kv-v1' })).status).toBe(204);
    expect((await get('sys/mounts/alias')).body.data).toMatchObject({ type: 'kv', options: { version: '1' } });
  });

  it.each([
    ['nothing', {}, 'backend type must be specified as a string'],
    ['unknown', { type: 'nosuch' }, 'plugin not found in the catalog: nosuch'],
    ['authtype', { type: 'token' }, 'plugin not found in the catalog: token'],
    ['builtin', { type: 'cubbyhole' }, 'cubbyhole secrets backend cannot be instantiated at another path'],
    ['kvbad', { type: 'kv', options: { version: '3' } }, 'invalid kv version "3": versions 1 and 2 are supported'],
    ['ttl', { type: 'kv', config: { default_lease_ttl: '2h', max_lease_ttl: '1h' } }, 'given default lease TTL greater than given max lease TTL'],
    ['ttlmax', { type: 'kv', config: { default_lease_ttl: '800h' } }, 'given default lease TTL greater than system max lease TTL of 2764800'],
    ['ttlbad', { type: 'kv', config: { default_lease_ttl: 'soon' } }, 'error converting input "soon" for field "default_lease_ttl": time: invalid duration "soon"'],
    ['vis', { type: 'kv', config: { listing_visibility: 'public' } }, 'invalid listing_visibility "public"'],
    ['tt', { type: 'kv', config: { token_type: 'batch' } }, "'token_type' can only be modified on auth mounts"],
    ['sys', { type: 'kv' }, 'cannot mount "sys/"'],
    ['sys/inner', { type: 'kv' }, 'cannot mount "sys/inner/"'],
    ['cubbyhole/x', { type: 'kv' }, 'cannot mount "cubbyhole/x/"'],
    ['identity', { type: 'kv' }, 'cannot mount "identity/"'],
    ['auth', { type: 'kv' }, 'cannot mount "auth/"'],
    ['audit/x', { type: 'kv' }, 'cannot mount "audit/x/"'],
    ['team/kv', { type: 'kv' }, 'path is already in use at team/kv/'],
    ['team/kv/deeper', { type: 'kv' }, 'existing mount at team/kv/'],
    ['team', { type: 'kv' }, 'path is already in use at team/kv/'],
    ['bad*path', { type: 'kv' }, 'invalid mount path "bad*path": contains a control character, space, "*" or "+"'],
    ['a+b', { type: 'kv' }, 'invalid mount path "a+b": contains a control character, space, "*" or "+"'],
  ])('refuses sys/mounts/%s %j', async (path, body, message) => {
    const before = await get('sys/mounts');
    const r = await post(`sys/mounts/${path}`, body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
    expect((await get('sys/mounts')).body.data).toEqual(before.body.data);
  });

  it('answers reads of a missing mount with 400', async () => {
    const r = await get('sys/mounts/nope');
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['No secret engine mount at nope/']);
    expect((await get('sys/auth/nope')).body.errors).toEqual(['No auth engine at auth/nope/']);
    expect((await get('sys/mounts/nope/tune')).status).toBe(400);
  });
});

describe('tuning', () => {
  it('reads effective settings and tunes TTLs, description and lists', async () => {
    expect((await get('sys/mounts/alias/tune')).body.data).toEqual({
      default_lease_ttl: 2764800,
      description: '',
      force_no_cache: false,
      max_lease_ttl: 2764800,
      options: { version: '1' },
    });
    const r = await post('sys/mounts/alias/tune', {
      default_lease_ttl: '30m',
      max_lease_ttl: '1h',
      description: 'tuned',
      allowed_response_headers: 'X-Out',
      audit_non_hmac_response_keys: ['k1', 'k2'],
    });
    expect(r.status).toBe(204);
    const t = (await get('sys/mounts/alias/tune')).body.data;
    expect(t).toMatchObject({ default_lease_ttl: 1800, max_lease_ttl: 3600, description: 'tuned', allowed_response_headers: ['X-Out'], audit_non_hmac_response_keys: ['k1', 'k2'] });
    // KV v1 reads report the tuned default TTL.
    await api('PUT', 'alias/s', { token: c.root, body: { v: 1 } });
    expect((await api('GET', 'alias/s', { token: c.root })).body.lease_duration).toBe(1800);
    // "system" resets a TTL to the system default.
    await post('sys/mounts/alias/tune', { default_lease_ttl: 'system', max_lease_ttl: 'system' });
    expect((await get('sys/mounts/alias/tune')).body.data.default_lease_ttl).toBe(2764800);
  });

  it('merges options, removes empty ones, and refuses a kv downgrade or a bad version', async () => {
    await post('sys/mounts/alias/tune', { options: { custom: 'x' } });
    expect((await get('sys/mounts/alias')).body.data.options).toEqual({ version: '1', custom: 'x' });
    await post('sys/mounts/alias/tune', { options: { custom: '' } });
    expect((await get('sys/mounts/alias')).body.data.options).toEqual({ version: '1' });
    expect((await post('sys/mounts/alias/tune', { options: { version: '9' } })).body.errors).toEqual(['invalid kv version "9": versions 1 and 2 are supported']);
  });

  it.each([
    [{ default_lease_ttl: '2h', max_lease_ttl: '1h' }, 'given default lease TTL greater than given max lease TTL'],
    [{ default_lease_ttl: '1000h', max_lease_ttl: '0' }, 'given default lease TTL greater than system max lease TTL of 2764800'],
    [{ listing_visibility: 'loud' }, 'invalid listing_visibility "loud"'],
    [{ token_type: 'batch' }, "'token_type' can only be modified on auth mounts"],
  ])('refuses tune %j and leaves the mount unchanged', async (body, message) => {
    const before = (await get('sys/mounts/alias/tune')).body.data;
    const r = await post('sys/mounts/alias/tune', body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
    expect((await get('sys/mounts/alias/tune')).body.data).toEqual(before);
  });

  it('lets a mount\'s max lease TTL exceed the system max (a CA mount tuned to ten years)', async () => {
    expect((await post('sys/mounts/longca', { type: 'kv', config: { max_lease_ttl: '87600h' } })).status).toBe(204);
    expect((await get('sys/mounts/longca/tune')).body.data).toMatchObject({ max_lease_ttl: 315360000 });
    expect((await post('sys/mounts/longca/tune', { max_lease_ttl: '175200h', default_lease_ttl: '8760h' })).status).toBe(204);
    expect((await get('sys/mounts/longca/tune')).body.data).toMatchObject({ max_lease_ttl: 630720000, default_lease_ttl: 31536000 });
  });

  it('refuses to tune a mount that does not exist', async () => {
    expect((await post('sys/mounts/ghost/tune', { description: 'x' })).body.errors).toEqual(['no mount at "ghost/"']);
  });
});

describe('auth methods', () => {
  it.each([
    [{ type: 'kv' }, 'plugin not found in the catalog: kv'],
    [{ type: 'token' }, 'token credential backend cannot be instantiated at another path'],
    [{ type: 'nosuch' }, 'plugin not found in the catalog: nosuch'],
  ])('refuses sys/auth/other %j', async (body, message) => {
    const r = await post('sys/auth/other', body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
  });
});

describe('remount', () => {
  it('moves a mount with its data and records the move', async () => {
    await post('sys/mounts/old/place', { type: 'kv' });
    await api('PUT', 'old/place/k', { token: c.root, body: { moved: true } });
    const r = await post('sys/remount', { from: 'old/place', to: 'new/place' });
    expect(r.status).toBe(200);
    expect(r.body.data.migration_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body.migration_id).toBe(r.body.data.migration_id);
    expect(r.body.warnings).toHaveLength(1);
    expect((await api('GET', 'old/place/k', { token: c.root })).status).toBe(404);
    expect((await api('GET', 'new/place/k', { token: c.root })).body.data).toEqual({ moved: true });
    const status = await get(`sys/remount/status/${r.body.data.migration_id}`);
    expect(status.body.data.migration_info).toMatchObject({ source_mount: 'old/place/', target_mount: 'new/place/', status: 'success' });
  });

  it.each([
    [{ from: 'missing', to: 'x' }, 'no matching mount at "missing/"'],
    [{ from: 'new/place', to: 'team/kv' }, 'path is already in use at team/kv/'],
    [{ from: 'sys', to: 'system2' }, 'cannot remount "sys/"'],
    [{ from: 'new/place', to: 'sys/x' }, 'cannot remount to "sys/x/"'],
    [{ from: 'new/place', to: 'auth/x' }, 'cannot remount non-auth mount to auth mount'],
    [{ from: 'auth/token', to: 'auth/tok' }, 'cannot remount "auth/token/"'],
    [{ from: 'new/place' }, 'missing required field "to"'],
  ])('refuses remount %j', async (body, message) => {
    const r = await post('sys/remount', body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
  });

  it('answers an unknown migration id with 400', async () => {
    expect((await get('sys/remount/status/00000000-0000-0000-0000-000000000000')).status).toBe(400);
  });
});

describe('disabling', () => {
  it('erases the mount object\'s data and alarm, and the path stops routing', async () => {
    await post('sys/mounts/doomed', { type: 'kv' });
    await api('PUT', 'doomed/secret', { token: c.root, body: { v: 1 } });
    const uuid = (await get('sys/mounts/doomed')).body.data.uuid;
    const stub = env.MOUNTS.get(env.MOUNTS.idFromName(uuid));
    await runInDurableObject(stub, (_o, state) => state.storage.setAlarm(Date.now() + 3_600_000));
    expect((await del('sys/mounts/doomed')).status).toBe(204);
    await runInDurableObject(stub, async (_o, state) => {
      expect(state.storage.sql.exec('SELECT count(*) AS n FROM coffer_kv').one().n).toBe(0);
      expect(await state.storage.getAlarm()).toBeNull();
    });
    const r = await api('GET', 'doomed/secret', { token: c.root });
    expect(r.status).toBe(404);
    expect(r.body.errors).toEqual(['no handler for route "doomed/secret". route entry not found.']);
    // Disabling again is not an error; enabling again starts empty.
    expect((await del('sys/mounts/doomed')).status).toBe(204);
    await post('sys/mounts/doomed', { type: 'kv' });
    expect((await api('GET', 'doomed/secret', { token: c.root })).status).toBe(404);
  });

  it('a mount object answers "gone" to a route that is out of date', async () => {
    const uuid = (await get('sys/mounts/team/kv')).body.data.uuid;
    const stub = env.MOUNTS.get(env.MOUNTS.idFromName(uuid));
    const wire = (path: string) => ({ id: 'x', operation: 'read' as const, path, data: {}, auth: null, clientIP: '127.0.0.1', headers: {}, wrapTTL: 0 });
    const { revision } = ((await env.SYSTEM.get(env.SYSTEM.idFromName('system')).routes()) as RouteEntry[]).find((r) => r.uuid === uuid)!;
    // Another prefix (the mount moved), then an older revision (the mount was tuned since).
    expect(await stub.handle('other/', revision, wire('other/x'), c.root)).toEqual({ kind: 'gone' });
    await post('sys/mounts/team/kv/tune', { description: 'retuned' });
    expect(await stub.handle('team/kv/', revision, wire('team/kv/x'), c.root)).toEqual({ kind: 'gone' });
    const current = await stub.handle('team/kv/', revision + 1, wire('team/kv/x'), c.root);
    expect(current.kind).toBe('ok');
    await post('sys/mounts/team/kv/tune', { description: 'team secrets' });
  });
});

describe('sys/internal/ui/mounts', () => {
  it('shows only unauth-visible mounts, briefly, without a token', async () => {
    const r = await api('GET', 'sys/internal/ui/mounts');
    expect(r.status).toBe(200);
    expect(r.body.data.secret).toEqual({ 'team/kv/': { type: 'kv', description: 'team secrets', options: { version: '1' } } });
    expect(r.body.data.auth).toEqual({});
  });

  it('shows every mount in full to a root token', async () => {
    const r = await get('sys/internal/ui/mounts');
    expect(Object.keys(r.body.data.secret)).toEqual(expect.arrayContaining(['cubbyhole/', 'team/kv/', 'alias/', 'sys/']));
    expect(r.body.data.secret['alias/'].accessor).toMatch(/^kv_/);
    expect(Object.keys(r.body.data.auth)).toEqual(['token/']);
  });

  it('resolves the mount of a path, with its prefix as "path"', async () => {
    const r = await get('sys/internal/ui/mounts/team/kv/some/secret');
    expect(r.body.data).toMatchObject({ type: 'kv', path: 'team/kv/', options: { version: '1' } });
    expect((await get('sys/internal/ui/mounts/auth/token/lookup-self')).body.data).toMatchObject({ type: 'token', path: 'auth/token/' });
  });

  it('answers 403 with the preflight message without access or without a mount', async () => {
    for (const [path, token] of [
      ['team/kv/x', undefined],
      ['nomount/x', c.root],
    ] as const) {
      const r = await api('GET', `sys/internal/ui/mounts/${path}`, { token });
      expect(r.status).toBe(403);
      expect(r.body.errors).toEqual([`preflight capability check returned 403, please ensure client's policies grant access to path "${path}/"`]);
    }
  });
});
