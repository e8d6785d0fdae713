// Response wrapping (reference §1.9, §2.10): X-Vault-Wrap-TTL on any request, sys/wrapping/wrap,
// unwrap (exactly once), lookup, rewrap, wrapping TTL bounds from policies, the legacy
// cubbyhole/response read, and expiry. Also: a token's cubbyhole is erased when the token ends.
import { env, runDurableObjectAlarm, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { shardFor } from '../../../src/core/tokens/entry';
import { api, initCluster, PERMISSION_DENIED, type Cluster } from '../../helpers/api';

let c: Cluster;
const wrapped = (ttl: string | number) => ({ 'X-Vault-Wrap-TTL': String(ttl) });
const root = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => api(method, path, { token: c.root, body, headers });
const unwrap = (wrappingToken: string) => api('POST', 'sys/wrapping/unwrap', { token: wrappingToken });
const wrap = async (data: Record<string, unknown>, ttl: string | number = 300) => {
  const r = await root('POST', 'sys/wrapping/wrap', data, wrapped(ttl));
  if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
  return r.body.wrap_info as { token: string; accessor: string; ttl: number; creation_time: string; creation_path: string; wrapped_accessor?: string };
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  c = await initCluster();
  await root('POST', 'sys/mounts/secret', { type: 'kv' });
  await root('PUT', 'secret/app', { password: 's3cret' });
});

describe('wrapping a response', () => {
  it('answers with only the wrap_info of a new single-use token', async () => {
    const r = await root('POST', 'sys/wrapping/wrap', { foo: 'bar' }, wrapped('5m'));
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      request_id: '',
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      data: null,
      wrap_info: expect.any(Object),
      warnings: null,
      auth: null,
    });
    const info = r.body.wrap_info;
    expect(Object.keys(info)).toEqual(['token', 'accessor', 'ttl', 'creation_time', 'creation_path']);
    expect(info.token).toMatch(/^hvs\.[A-Za-z0-9]{24}$/);
    expect(info.accessor).toMatch(/^[A-Za-z0-9]{24}$/);
    expect(info).toMatchObject({ ttl: 300, creation_path: 'sys/wrapping/wrap' });
    expect(info.creation_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,9})?Z$/);
  });

  it('gives the wrapping token only the response-wrapping policy, one use and the wrap TTL', async () => {
    const info = await wrap({ a: 1 }, 120);
    const l = (await root('POST', 'auth/token/lookup-accessor', { accessor: info.accessor })).body.data;
    expect(l).toMatchObject({ policies: ['response-wrapping'], num_uses: 1, orphan: true, creation_ttl: 120, explicit_max_ttl: 120, renewable: false });
    expect(l.ttl).toBeGreaterThan(115);
  });

  it('wraps any response: a KV read, keeping its envelope for the unwrap', async () => {
    const r = await root('GET', 'secret/app', undefined, wrapped('1m'));
    expect(r.body.data).toBeNull();
    expect(r.body.wrap_info.creation_path).toBe('secret/app');
    const u = await unwrap(r.body.wrap_info.token);
    expect(u.status).toBe(200);
    expect(u.body).toMatchObject({ data: { password: 's3cret' }, mount_type: 'kv', wrap_info: null, auth: null });
    expect(u.body.request_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('reports the accessor of a wrapped token, and the unwrapped token works', async () => {
    const r = await root('POST', 'auth/token/create', { policies: ['default'], ttl: '1h' }, wrapped(60));
    const info = r.body.wrap_info;
    expect(info.wrapped_accessor).toMatch(/^[A-Za-z0-9]{24}$/);
    const auth = (await unwrap(info.token)).body.auth;
    expect(auth.accessor).toBe(info.wrapped_accessor);
    expect((await api('GET', 'auth/token/lookup-self', { token: auth.client_token })).status).toBe(200);
  });

  it('does not wrap an empty (204) answer', async () => {
    const r = await root('PUT', 'secret/other', { k: 'v' }, wrapped(60));
    expect(r.status).toBe(204);
    expect((await root('GET', 'secret/other')).body.data).toEqual({ k: 'v' });
  });

  it('refuses a malformed or negative wrap TTL', async () => {
    const bad = await root('GET', 'secret/app', undefined, wrapped('soon'));
    expect(bad.status).toBe(400);
    const negative = await root('GET', 'secret/app', undefined, wrapped('-5'));
    expect(negative.status).toBe(400);
    expect(negative.body.errors).toEqual(['error parsing X-Vault-Wrap-TTL header: requested wrap ttl cannot be negative']);
  });
});

describe('sys/wrapping/wrap', () => {
  it('needs X-Vault-Wrap-TTL and something to wrap', async () => {
    const plain = await root('POST', 'sys/wrapping/wrap', { foo: 'bar' });
    expect(plain.status).toBe(400);
    expect(plain.body.errors).toEqual(['endpoint requires response wrapping to be used']);
    const empty = await root('POST', 'sys/wrapping/wrap', {}, wrapped(60));
    expect(empty.status).toBe(400);
    expect(empty.body.errors).toEqual(['empty wrap calls are not supported']);
  });
});

describe('unwrapping', () => {
  it('unwraps with the wrapping token itself, exactly once', async () => {
    const info = await wrap({ foo: 'bar', n: 7 });
    const u = await unwrap(info.token);
    expect(u.status).toBe(200);
    expect(u.body).toMatchObject({ data: { foo: 'bar', n: 7 }, mount_type: 'system', lease_id: '', auth: null });
    const again = await unwrap(info.token);
    expect(again.status).toBe(400);
    expect(again.body.errors).toEqual(['wrapping token is not valid or does not exist']);
  });

  it('unwraps a token named in the body for a caller allowed to (the default policy is)', async () => {
    const caller = (await root('POST', 'auth/token/create', { policies: ['default'] })).body.auth.client_token;
    const info = await wrap({ x: 'y' });
    const u = await api('POST', 'sys/wrapping/unwrap', { token: caller, body: { token: info.token } });
    expect(u.body.data).toEqual({ x: 'y' });
    expect((await api('POST', 'sys/wrapping/unwrap', { token: caller, body: { token: info.token } })).status).toBe(400);
  });

  it('refuses callers without update on sys/wrapping/unwrap, and leaves the token unspent', async () => {
    await root('PUT', 'sys/policies/acl/reader', { policy: 'path "secret/*" { capabilities = ["read"] }' });
    const caller = (await root('POST', 'auth/token/create', { policies: ['reader'], no_default_policy: true })).body.auth.client_token;
    const info = await wrap({ x: 'y' });
    const r = await api('POST', 'sys/wrapping/unwrap', { token: caller, body: { token: info.token } });
    expect(r.status).toBe(403);
    expect(r.body.errors).toEqual([PERMISSION_DENIED]);
    expect((await unwrap(info.token)).body.data).toEqual({ x: 'y' });
  });

  it('refuses tokens that are not wrapping tokens', async () => {
    const plain = (await root('POST', 'auth/token/create', { policies: ['default'] })).body.auth.client_token;
    for (const token of [plain, 'hvs.nosuchtokenatall00000000']) {
      const r = await api('POST', 'sys/wrapping/unwrap', { token: c.root, body: { token } });
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual(['wrapping token is not valid or does not exist']);
    }
    expect((await api('POST', 'sys/wrapping/unwrap', { token: c.root })).status).toBe(400);
  });

  it('lets exactly one of many concurrent unwraps succeed', async () => {
    const info = await wrap({ once: true });
    const results = await Promise.all(Array.from({ length: 8 }, () => unwrap(info.token)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status !== 200).every((r) => r.status === 400 || r.status === 403)).toBe(true);
  });

  it('can wrap the unwrapped response again', async () => {
    const info = await wrap({ deep: 'value' });
    const r = await api('POST', 'sys/wrapping/unwrap', { token: info.token, headers: wrapped(60) });
    expect(r.body.wrap_info.creation_path).toBe('sys/wrapping/unwrap');
    expect((await unwrap(r.body.wrap_info.token)).body.data).toEqual({ deep: 'value' });
  });

  it('supports the legacy read of cubbyhole/response with the wrapping token', async () => {
    const info = await wrap({ legacy: 'yes' });
    const r = await api('GET', 'cubbyhole/response', { token: info.token });
    expect(r.status).toBe(200);
    expect(JSON.parse(r.body.data.response).data).toEqual({ legacy: 'yes' });
    expect((await unwrap(info.token)).status).toBe(400);
  });

  it('leaves other tokens\' cubbyhole/response alone', async () => {
    const t = (await root('POST', 'auth/token/create', { policies: ['default'] })).body.auth.client_token;
    await api('PUT', 'cubbyhole/response', { token: t, body: { mine: 'only' } });
    expect((await api('GET', 'cubbyhole/response', { token: t })).body.data).toEqual({ mine: 'only' });
  });
});

describe('lookup and rewrap', () => {
  it('looks up without a token of one\'s own and without spending the wrapping token', async () => {
    const info = await wrap({ k: 'v' }, 600);
    const r = await api('POST', 'sys/wrapping/lookup', { body: { token: info.token } });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ creation_ttl: 600, creation_time: info.creation_time, creation_path: 'sys/wrapping/wrap' });
    const self = await api('POST', 'sys/wrapping/lookup', { token: info.token });
    expect(self.body.data.creation_ttl).toBe(600);
    expect((await unwrap(info.token)).body.data).toEqual({ k: 'v' });
    expect((await api('POST', 'sys/wrapping/lookup', { body: { token: info.token } })).status).toBe(400);
  });

  it('rewraps into a new token with the same TTL and path; the old one stops working', async () => {
    const info = await wrap({ rotate: 'me' }, 900);
    const r = await root('POST', 'sys/wrapping/rewrap', { token: info.token });
    expect(r.status).toBe(200);
    const next = r.body.wrap_info;
    expect(next.token).not.toBe(info.token);
    expect(next).toMatchObject({ ttl: 900, creation_path: 'sys/wrapping/wrap' });
    expect((await unwrap(info.token)).status).toBe(400);
    expect((await unwrap(next.token)).body.data).toEqual({ rotate: 'me' });
    expect((await root('POST', 'sys/wrapping/rewrap', { token: next.token })).status).toBe(400);
  });
});

describe('wrapping TTL bounds from policies', () => {
  it('enforces min_wrapping_ttl and max_wrapping_ttl', async () => {
    await root('PUT', 'sys/policies/acl/wrapped-only', {
      policy: 'path "secret/app" { capabilities = ["read"]\n min_wrapping_ttl = "1m"\n max_wrapping_ttl = "10m" }',
    });
    const t = (await root('POST', 'auth/token/create', { policies: ['wrapped-only'] })).body.auth.client_token;
    expect((await api('GET', 'secret/app', { token: t })).status).toBe(403);
    expect((await api('GET', 'secret/app', { token: t, headers: wrapped('30s') })).status).toBe(403);
    expect((await api('GET', 'secret/app', { token: t, headers: wrapped('1h') })).status).toBe(403);
    const ok = await api('GET', 'secret/app', { token: t, headers: wrapped('5m') });
    expect(ok.status).toBe(200);
    expect((await unwrap(ok.body.wrap_info.token)).body.data).toEqual({ password: 's3cret' });
  });
});

describe('expiry', () => {
  it('a wrapping token expires with its TTL and its response goes with it', async () => {
    const info = await wrap({ short: 'lived' }, 1);
    const shard = env.TOKENS.get(env.TOKENS.idFromName(`token-shard-${shardFor(info.token, 3)}`));
    // Other tests' wrapping tokens may live on the same shard: count ours by difference.
    const stored = () => runInDurableObject(shard, (_o, state) => state.storage.sql.exec("SELECT count(*) AS n FROM coffer_kv WHERE key LIKE 'wrapped/%'").one().n as number);
    const before = await stored();
    await sleep(1100);
    expect((await unwrap(info.token)).status).toBe(400);
    await runDurableObjectAlarm(shard);
    expect(await stored()).toBe(before - 1);
  });
});

describe('cubbyholes end with their tokens', () => {
  it('erases a revoked token\'s cubbyhole', async () => {
    const auth = (await root('POST', 'auth/token/create', { policies: ['default'] })).body.auth;
    await api('PUT', 'cubbyhole/notes/a', { token: auth.client_token, body: { x: 1 } });
    await api('PUT', 'cubbyhole/b', { token: auth.client_token, body: { y: 2 } });
    const uuid = (await root('GET', 'sys/mounts/cubbyhole')).body.data.uuid as string;
    const cubby = env.MOUNTS.get(env.MOUNTS.idFromName(uuid));
    const count = () =>
      runInDurableObject(cubby, (_o, state) => state.storage.sql.exec('SELECT count(*) AS n FROM coffer_kv WHERE key LIKE ?', `logical/${auth.accessor}/%`).one().n);
    expect(await count()).toBe(2);
    await root('POST', 'auth/token/revoke-accessor', { accessor: auth.accessor });
    expect(await count()).toBe(0);
  });
});
