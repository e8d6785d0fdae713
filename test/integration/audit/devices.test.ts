// Audit devices through the Worker: sys/audit enable/list/disable, sys/audit-hash, the entries an
// http device receives (on a real HTTP server, see test/global/audit-sink.ts) from every kind of
// hosting object, the HMAC rules and options, refused and wrapped requests, and the hash chain.
import { beforeAll, describe, expect, it } from 'vitest';
import { verifyLog } from '../../../src/core/audit/verify-chain.mjs';
import { api, initCluster, PERMISSION_DENIED, type Cluster } from '../../helpers/api';
import { sink, sinkURL } from '../../helpers/audit-sink';

let c: Cluster;
const root = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => api(method, path, { token: c.root, body, headers });
const enable = async (path: string, type: string, options: Record<string, unknown>, extra: Record<string, unknown> = {}) => {
  const r = await root('PUT', `sys/audit/${path}`, { type, options, ...extra });
  if (r.status !== 204 && r.status !== 200) throw new Error(`enable ${path}: ${r.status} ${r.text}`);
  return r;
};
const auditHash = async (path: string, input: string): Promise<string> => (await root('PUT', `sys/audit-hash/${path}`, { input })).body.data.hash;
const tokenWith = async (policies: string[]) => (await root('POST', 'auth/token/create', { policies })).body.auth as { client_token: string; accessor: string };
/** Entries of a sink for one request id, by type. */
const byRequest = async (name: string, id: string) => {
  const all = (await sink(name)).entries.filter((e) => e.request.id === id);
  return { request: all.find((e) => e.type === 'request'), response: all.find((e) => e.type === 'response'), count: all.length };
};

beforeAll(async () => {
  c = await initCluster();
  await root('POST', 'sys/mounts/secret', { type: 'kv' });
  // Every kind of object has served (and cached "no devices") before any device exists.
  await root('PUT', 'secret/warmup', { a: 'b' });
  await root('GET', 'auth/token/lookup-self');
  await root('GET', 'sys/mounts');
  await enable('main', 'http', { url: sinkURL('main') }, { description: 'the main sink' });
});

describe('sys/audit', () => {
  it('lists devices as Vault does, with the data copied to the top level, plus the chain head', async () => {
    const r = await root('GET', 'sys/audit');
    expect(r.status).toBe(200);
    const main = r.body.data['main/'];
    expect(main).toMatchObject({ type: 'http', description: 'the main sink', options: { url: sinkURL('main') }, local: false, path: 'main/' });
    expect(main.chain_head).toMatchObject({ device: expect.stringMatching(/^[0-9a-f-]{36}$/), seq: expect.any(Number), hash: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    expect(r.body['main/']).toEqual(main);
  });

  it('enables a file device with a warning for a file path, and disables it', async () => {
    const r = await root('POST', 'sys/audit/to-file', { type: 'file', local: true, options: { file_path: '/var/log/vault_audit.log', hmac_accessor: false } });
    expect(r.status).toBe(200);
    expect(r.body.warnings).toEqual(['a Worker has no file system: entries for "/var/log/vault_audit.log" are written to the Worker log (collected by Workers Logs or Logpush), one JSON line each']);
    // String maps take JSON booleans as "1"/"0", as Vault's weak decoding does.
    expect((await root('GET', 'sys/audit')).body.data['to-file/']).toMatchObject({ type: 'file', local: true, options: { file_path: '/var/log/vault_audit.log', hmac_accessor: '0' }, path: 'to-file/' });
    expect((await root('DELETE', 'sys/audit/to-file')).status).toBe(204);
    expect((await root('GET', 'sys/audit')).body.data['to-file/']).toBeUndefined();
    // Disabling a device that is not there succeeds, as in Vault.
    expect((await root('DELETE', 'sys/audit/to-file')).status).toBe(204);
  });

  it('takes batch as a JSON boolean or null (off), and refuses a batch that is not a boolean', async () => {
    for (const [name, batch, stored] of [
      ['batch-on', true, '1'],
      ['batch-null', null, ''],
    ] as const) {
      const r = await root('POST', `sys/audit/${name}`, { type: 'http', options: { url: sinkURL(name), batch } });
      expect(r.status, name).toBe(204);
      expect((await root('GET', 'sys/audit')).body.data[`${name}/`].options).toEqual({ url: sinkURL(name), batch: stored });
      await root('DELETE', `sys/audit/${name}`);
    }
    const refused = await root('POST', 'sys/audit/batch-bad', { type: 'http', options: { url: sinkURL('x'), batch: 'often' } });
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual([`unable to parse 'batch': "often" is not a boolean`]);
    expect((await root('GET', 'sys/audit')).body.data['batch-bad/']).toBeUndefined();
  });

  it('requires sudo for listing, enabling and disabling', async () => {
    await root('PUT', 'sys/policies/acl/audit-nosudo', { policy: 'path "sys/audit" { capabilities = ["read"] }\npath "sys/audit/*" { capabilities = ["update", "delete"] }' });
    await root('PUT', 'sys/policies/acl/audit-sudo', { policy: 'path "sys/audit" { capabilities = ["read", "sudo"] }\npath "sys/audit/*" { capabilities = ["update", "delete", "sudo"] }' });
    const plain = (await tokenWith(['audit-nosudo'])).client_token;
    const sudo = (await tokenWith(['audit-sudo'])).client_token;
    const body = { type: 'file', options: { file_path: 'discard' } };
    for (const [method, path, b] of [['GET', 'sys/audit', undefined], ['PUT', 'sys/audit/sudo-test', body], ['DELETE', 'sys/audit/main', undefined]] as const) {
      const r = await api(method, path, { token: plain, body: b });
      expect(r.status, `${method} ${path}`).toBe(403);
      expect(r.body.errors).toEqual([PERMISSION_DENIED]);
    }
    expect((await api('GET', 'sys/audit', { token: sudo })).status).toBe(200);
    expect((await api('PUT', 'sys/audit/sudo-test', { token: sudo, body })).status).toBe(204);
    expect((await api('DELETE', 'sys/audit/sudo-test', { token: sudo })).status).toBe(204);
  });

  it.each([
    ['unknown type', 'bad1', { type: 'carrier-pigeon', options: {} }, 'unknown backend type: "carrier-pigeon"'],
    ['missing type', 'bad2', { options: { file_path: 'stdout' } }, 'type is required'],
    ['a Vault type a Worker cannot have', 'bad3', { type: 'socket', options: { address: '127.0.0.1:9090' } }, 'audit device type "socket" is not available: a Worker has no sockets; use "file" or "http"'],
    ['duplicate path', 'main', { type: 'file', options: { file_path: 'stdout' } }, 'path already in use'],
    ['nested path', 'main/inner', { type: 'file', options: { file_path: 'stdout' } }, 'path already in use'],
    ['missing file_path', 'bad4', { type: 'file', options: {} }, 'file_path is required'],
    ['missing url', 'bad5', { type: 'http', options: {} }, 'url is required for an http audit device'],
    ['bad url', 'bad6', { type: 'http', options: { url: 'ftp://127.0.0.1/x' } }, 'url must use http or https, not ftp'],
    ['unparseable url', 'bad7', { type: 'http', options: { url: '::nope' } }, 'url "::nope" is not a valid URL'],
    ['jsonx format', 'bad8', { type: 'file', options: { file_path: 'stdout', format: 'jsonx' } }, 'format "jsonx" is not supported: audit entries are written as "json" only'],
    ['unknown format', 'bad9', { type: 'file', options: { file_path: 'stdout', format: 'xml' } }, 'unknown format type "xml"'],
    ['bad boolean option', 'bad10', { type: 'file', options: { file_path: 'stdout', log_raw: 'sometimes' } }, `unable to parse 'log_raw': "sometimes" is not a boolean`],
    ['options that are not a map', 'bad11', { type: 'file', options: 'file_path' }, undefined],
  ])('refuses %s with a 400 and writes nothing', async (_what, path, body, message) => {
    const before = (await root('GET', 'sys/audit')).body.data;
    const r = await root('PUT', `sys/audit/${path}`, body);
    expect(r.status).toBe(400);
    if (message) expect(r.body.errors).toEqual([message]);
    const after = (await root('GET', 'sys/audit')).body.data;
    expect(Object.keys(after)).toEqual(Object.keys(before));
    expect(after['main/'].options).toEqual(before['main/'].options);
  });

  it('is not readable per device (Vault has no such endpoint)', async () => {
    expect((await root('GET', 'sys/audit/main')).status).toBe(405);
  });
});

describe('sys/audit-hash', () => {
  it('answers the HMAC the device puts in its entries', async () => {
    expect((await root('PUT', 'secret/app', { password: 'hunter2', port: 5432 })).status).toBe(204);
    const { request, response } = await byRequest('main', await lastRequestId('main', 'secret/app'));
    expect(request.request.data.password).toBe(await auditHash('main', 'hunter2'));
    expect(request.request.data.port).toBe(5432);
    expect(request.auth.client_token).toBe(await auditHash('main', c.root));
    expect(response.request.data.password).toBe(request.request.data.password);
    const r = await root('PUT', 'sys/audit-hash/main', { input: 'hunter2' });
    expect(r.body.hash).toBe(r.body.data.hash);
    expect(r.body.hash).toMatch(/^hmac-sha256:[0-9a-f]{64}$/);
  });

  it('refuses an unknown device and an empty input', async () => {
    expect((await root('PUT', 'sys/audit-hash/nope', { input: 'x' })).body.errors).toEqual(['unknown audit backend "nope/"']);
    const empty = await root('PUT', 'sys/audit-hash/main', {});
    expect(empty.status).toBe(400);
    expect(empty.body.errors).toEqual(['the "input" parameter is empty']);
  });

  it('differs between devices: each has its own salt', async () => {
    await enable('second', 'http', { url: sinkURL('second') });
    expect(await auditHash('second', 'same')).not.toBe(await auditHash('main', 'same'));
    await root('DELETE', 'sys/audit/second');
  });
});

/** The id of the newest request on a path in a sink. */
async function lastRequestId(name: string, path: string): Promise<string> {
  const entries = (await sink(name)).entries.filter((e) => e.request.path === path);
  return entries[entries.length - 1].request.id;
}

describe('entries', () => {
  it('come from every kind of hosting object, with Vault’s fields', async () => {
    const t = await tokenWith(['default']);
    await root('GET', 'secret/app');
    const mountId = await lastRequestId('main', 'secret/app');
    const m = await byRequest('main', mountId);
    expect(m.count).toBe(2);
    expect(m.request).toMatchObject({
      type: 'request',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/),
      auth: { display_name: 'root', policies: ['root'], token_policies: ['root'], token_type: 'service' },
      request: { id: mountId, operation: 'read', mount_point: 'secret/', mount_type: 'kv', namespace: { id: 'root' }, path: 'secret/app', remote_address: expect.any(String) },
    });
    expect(m.request.request.mount_accessor).toMatch(/^kv_/);
    expect(m.request.auth.accessor).toMatch(/^hmac-sha256:/);
    expect(m.request.request.client_token_accessor).toBe(m.request.auth.accessor);
    expect(m.response.response).toMatchObject({ mount_point: 'secret/', mount_type: 'kv', data: { password: await auditHash('main', 'hunter2'), port: 5432 } });

    await api('GET', 'auth/token/lookup-self', { token: t.client_token });
    const tok = await byRequest('main', await lastRequestId('main', 'auth/token/lookup-self'));
    expect(tok.request.request).toMatchObject({ mount_point: 'auth/token/', mount_type: 'token', operation: 'read' });
    expect(tok.request.auth).toMatchObject({ policies: ['default'], client_token: await auditHash('main', t.client_token), accessor: await auditHash('main', t.accessor) });
    expect(tok.response.response.data.id).toBe(await auditHash('main', t.client_token));

    await root('GET', 'sys/mounts');
    const sys = await byRequest('main', await lastRequestId('main', 'sys/mounts'));
    expect(sys.request.request).toMatchObject({ mount_point: 'sys/', mount_type: 'system', client_token: await auditHash('main', c.root) });
  });

  it('show the policies a token’s entity adds, apart from the token’s own', async () => {
    await root('PUT', 'sys/policies/acl/audit-entity', { policy: 'path "secret/app" { capabilities = ["read"] }' });
    await root('POST', 'auth/token/roles/audited', { allowed_policies: ['default'], allowed_entity_aliases: ['audited-user'] });
    const t = (await root('POST', 'auth/token/create/audited', { entity_alias: 'audited-user', policies: ['default'] })).body.auth;
    await root('POST', `identity/entity/id/${t.entity_id}`, { policies: ['audit-entity'] });
    expect((await api('GET', 'secret/app', { token: t.client_token })).status).toBe(200);
    const e = await byRequest('main', await lastRequestId('main', 'secret/app'));
    expect(e.request.auth).toMatchObject({
      entity_id: t.entity_id,
      token_policies: ['default'],
      identity_policies: ['audit-entity'],
      policies: ['default', 'audit-entity'],
    });
  });

  it('hash a token handed out in a response', async () => {
    const r = await root('POST', 'auth/token/create', { policies: ['default'], ttl: '1h', meta: { team: 'blue' } });
    const created = await byRequest('main', await lastRequestId('main', 'auth/token/create'));
    expect(created.response.response.auth).toMatchObject({
      client_token: await auditHash('main', r.body.auth.client_token),
      accessor: await auditHash('main', r.body.auth.accessor),
      policies: ['default'],
      metadata: { team: 'blue' },
      token_ttl: 3600,
    });
    expect(JSON.stringify(created.response)).not.toContain(r.body.auth.client_token);
  });

  it('keep the mount’s audit_non_hmac_request_keys and audit_non_hmac_response_keys readable', async () => {
    await root('POST', 'sys/mounts/plain', { type: 'kv' });
    await root('POST', 'sys/mounts/plain/tune', { audit_non_hmac_request_keys: ['username'], audit_non_hmac_response_keys: 'region' });
    await root('PUT', 'plain/db', { username: 'alice', password: 'pw', region: 'eu' });
    await root('GET', 'plain/db');
    const w = (await sink('main')).entries.filter((e) => e.request.path === 'plain/db');
    const write = w.find((e) => e.type === 'request' && e.request.operation !== 'read');
    expect(write.request.data).toEqual({ username: 'alice', password: await auditHash('main', 'pw'), region: await auditHash('main', 'eu') });
    const read = w.filter((e) => e.type === 'response' && e.request.operation === 'read').pop();
    expect(read.response.data).toEqual({ username: await auditHash('main', 'alice'), password: await auditHash('main', 'pw'), region: 'eu' });
  });

  it('follow each device’s options: hmac_accessor, log_raw, elide_list_responses', async () => {
    await enable('opts-accessor', 'http', { url: sinkURL('opts-accessor'), hmac_accessor: false });
    await enable('opts-raw', 'http', { url: sinkURL('opts-raw'), log_raw: true });
    await enable('opts-elide', 'http', { url: sinkURL('opts-elide'), elide_list_responses: 'true' });
    const t = await tokenWith(['default']);
    await api('GET', 'auth/token/lookup-self', { token: t.client_token });
    await root('PUT', 'secret/list/a', { k: 'raw-value' });
    await root('PUT', 'secret/list/b', { k: 'v' });
    await root('GET', 'secret/list?list=true');

    const acc = (await sink('opts-accessor')).entries.find((e) => e.request.path === 'auth/token/lookup-self');
    expect(acc.auth.accessor).toBe(t.accessor);
    expect(acc.request.client_token_accessor).toBe(t.accessor);
    expect(acc.auth.client_token).toBe(await auditHash('opts-accessor', t.client_token));

    const raw = (await sink('opts-raw')).entries;
    expect(raw.find((e) => e.request.path === 'secret/list/a').request.data).toEqual({ k: 'raw-value' });
    expect(raw.find((e) => e.request.path === 'auth/token/lookup-self').auth.client_token).toBe(t.client_token);

    const list = (await sink('opts-elide')).entries.find((e) => e.type === 'response' && e.request.operation === 'list');
    expect(list.response.data).toEqual({ keys: 2 });
    const listMain = (await sink('main')).entries.find((e) => e.type === 'response' && e.request.operation === 'list' && e.request.path === 'secret/list/');
    expect(listMain.response.data.keys).toEqual([await auditHash('main', 'a'), await auditHash('main', 'b')]);

    for (const p of ['opts-accessor', 'opts-raw', 'opts-elide']) await root('DELETE', `sys/audit/${p}`);
  });

  it('record requests refused for permission, with their error and the caller’s auth', async () => {
    const t = await tokenWith(['default']);
    const r = await api('PUT', 'secret/forbidden', { token: t.client_token, body: { v: 'attempt' } });
    expect(r.status).toBe(403);
    const e = await byRequest('main', await lastRequestId('main', 'secret/forbidden'));
    expect(e.request).toMatchObject({ error: PERMISSION_DENIED, auth: { policies: ['default'], client_token: await auditHash('main', t.client_token) } });
    expect(e.request.request.data).toEqual({ v: await auditHash('main', 'attempt') });
    expect(e.response).toMatchObject({ error: PERMISSION_DENIED });
    expect(e.response.response.data).toBeUndefined();

    const sys = await api('GET', 'sys/audit', { token: t.client_token });
    expect(sys.status).toBe(403);
    expect((await byRequest('main', await lastRequestId('main', 'sys/audit'))).request.error).toBe(PERMISSION_DENIED);
  });

  it('record requests with an invalid token, without an auth block', async () => {
    const r = await api('GET', 'secret/app', { token: 'hvs.not-a-real-token' });
    expect(r.status).toBe(403);
    const e = await byRequest('main', await lastRequestId('main', 'secret/app'));
    expect(e.request.auth).toEqual({});
    expect(e.request.error).toContain('invalid token');
    expect(e.request.request.client_token).toBe(await auditHash('main', 'hvs.not-a-real-token'));
    expect(e.response.error).toContain('invalid token');

    // sys/ requests with a bad token are refused by the Worker, and recorded all the same.
    const sys = await api('GET', 'sys/mounts', { token: 'hvs.also-not-real' });
    expect(sys.status).toBe(403);
    expect(sys.body.errors[0]).toContain('invalid token');
    const s = await byRequest('main', await lastRequestId('main', 'sys/mounts'));
    expect(s.request).toMatchObject({ auth: {}, error: sys.body.errors[0], request: { client_token: await auditHash('main', 'hvs.also-not-real'), mount_type: 'system', operation: 'read' } });
    expect(s.response.error).toBe(sys.body.errors[0]);
  });

  it('record requests for paths no mount serves, with the caller when the token is valid', async () => {
    const t = await tokenWith(['default']);
    const r = await api('GET', 'nowhere/probe', { token: t.client_token });
    expect(r.status).toBe(404);
    expect(r.body.errors).toEqual(['no handler for route "nowhere/probe". route entry not found.']);
    const e = await byRequest('main', await lastRequestId('main', 'nowhere/probe'));
    expect(e.request).toMatchObject({ error: r.body.errors[0], auth: { policies: ['default'], client_token: await auditHash('main', t.client_token) } });
    expect(e.response.error).toBe(r.body.errors[0]);

    const bad = await api('PUT', 'nowhere/else', { token: 'hvs.not-a-real-token', body: { v: 'x' } });
    expect(bad.status).toBe(403);
    const b = await byRequest('main', await lastRequestId('main', 'nowhere/else'));
    expect(b.request).toMatchObject({ auth: {}, error: bad.body.errors[0], request: { client_token: await auditHash('main', 'hvs.not-a-real-token') } });

    const anonymous = await api('GET', 'nowhere/anonymous');
    expect(anonymous.status).toBe(403);
    expect((await byRequest('main', await lastRequestId('main', 'nowhere/anonymous'))).request.error).toBe(PERMISSION_DENIED);
  });

  it('record a wrapped response as its wrap_info, with the wrapping token hashed', async () => {
    const r = await root('POST', 'sys/wrapping/wrap', { secret: 'wrapped-value' }, { 'X-Vault-Wrap-TTL': '60' });
    expect(r.status).toBe(200);
    const info = r.body.wrap_info;
    const e = await byRequest('main', await lastRequestId('main', 'sys/wrapping/wrap'));
    expect(e.request.request.wrap_ttl).toBe(60);
    expect(e.response.response.wrap_info).toEqual({
      token: await auditHash('main', info.token),
      accessor: await auditHash('main', info.accessor),
      ttl: 60,
      creation_time: info.creation_time,
      creation_path: 'sys/wrapping/wrap',
    });
    expect(e.response.response.data).toBeUndefined();
    expect(JSON.stringify(e.response)).not.toContain('wrapped-value');
    expect(JSON.stringify(e.response)).not.toContain(info.token);
  });

  it('record the legacy unwrap (a read of cubbyhole/response with the wrapping token)', async () => {
    const info = (await root('POST', 'sys/wrapping/wrap', { secret: 'legacy-value' }, { 'X-Vault-Wrap-TTL': '60' })).body.wrap_info;
    const r = await api('GET', 'cubbyhole/response', { token: info.token });
    expect(r.status).toBe(200);
    const e = await byRequest('main', await lastRequestId('main', 'cubbyhole/response'));
    expect(e.count).toBe(2);
    expect(e.request).toMatchObject({
      auth: { policies: ['response-wrapping'], client_token: await auditHash('main', info.token) },
      request: { operation: 'read', mount_type: 'cubbyhole', path: 'cubbyhole/response' },
    });
    expect(e.response.response.data.response).toBe(await auditHash('main', r.body.data.response));
    expect(JSON.stringify(e.response)).not.toContain('legacy-value');
  });

  it('are not written for seal-status and health (Vault never audits them)', async () => {
    await api('GET', 'sys/seal-status');
    await api('GET', 'sys/health');
    expect((await sink('main')).entries.filter((e) => e.request.path === 'sys/seal-status' || e.request.path === 'sys/health')).toEqual([]);
  });
});

describe('the hash chain', () => {
  it('records concurrent requests from several hosting objects (sent and recorded in batches) once each, in one chain', async () => {
    const requests = await Promise.all(
      Array.from({ length: 45 }, (_, i) => (i % 3 === 0 ? root('PUT', `secret/burst-${i}`, { v: String(i) }) : i % 3 === 1 ? root('GET', 'auth/token/lookup-self') : root('GET', 'sys/mounts'))),
    );
    expect(requests.map((r) => r.status).filter((s) => s !== 200 && s !== 204)).toEqual([]);
    const { entries } = await sink('main');
    for (const [i, r] of requests.entries()) {
      // A write answers 204 without a request id: its entries are found by its path.
      const mine = i % 3 === 0 ? entries.filter((e) => e.request.path === `secret/burst-${i}`) : entries.filter((e) => e.request.id === r.body.request_id);
      expect(mine.map((e) => e.type).sort(), `entries of request ${i}`).toEqual(['request', 'response']);
    }
    const report = await verifyLog((await sink('main')).raw.join('\n'));
    expect(report.ok).toBe(true);
    expect(report.devices[0].redelivered).toBe(0);
  });

  it('with batch=true, delivers groups of entries in one POST each, one entry per line, in one chain', async () => {
    await enable('batched', 'http', { url: sinkURL('batched'), batch: 'true' });
    const requests = await Promise.all(Array.from({ length: 30 }, () => root('GET', 'auth/token/lookup-self')));
    const head = (await root('GET', 'sys/audit')).body.data['batched/'].chain_head;
    const { raw, entries } = await sink('batched');
    for (const r of requests) expect(entries.filter((e) => e.request.id === r.body.request_id).map((e) => e.type)).toEqual(['request', 'response']);
    // Fewer POSTs than entries: those that came while one POST was out went in the next.
    expect(raw.length).toBeLessThan(entries.length);
    expect(raw.every((body) => body.endsWith('\n'))).toBe(true);
    const report = await verifyLog(raw.join(''), { head: head.hash });
    expect(report.ok).toBe(true);
    expect(report.devices[0]).toMatchObject({ firstSeq: 1, count: entries.length });
    await root('DELETE', 'sys/audit/batched');
  });

  it('links every entry a device delivered, up to the head sys/audit shows', async () => {
    const listing = await root('GET', 'sys/audit');
    const head = listing.body.data['main/'].chain_head;
    const { raw } = await sink('main');
    const report = await verifyLog(raw.join('\n'), { head: head.hash });
    expect(report.broken).toBeNull();
    expect(report.ok).toBe(true);
    expect(report.devices).toHaveLength(1);
    expect(report.devices[0]).toMatchObject({ device: head.device, firstSeq: 1, startsAfterGenesis: false });
    // The head was read while its own request was logged: only that request's response follows it.
    expect(report.head).toMatchObject({ found: true, seq: head.seq, after: 1 });
    expect(report.devices[0].count).toBe(raw.length);
  });

  it('starts a new chain for a device enabled again at the same path', async () => {
    await enable('again', 'http', { url: sinkURL('again') });
    const first = (await root('GET', 'sys/audit')).body.data['again/'].chain_head.device;
    await root('DELETE', 'sys/audit/again');
    await enable('again', 'http', { url: sinkURL('again') });
    const second = (await root('GET', 'sys/audit')).body.data['again/'].chain_head.device;
    expect(second).not.toBe(first);
    const report = await verifyLog((await sink('again')).raw.join('\n'));
    expect(report.ok).toBe(true);
    expect(report.devices.map((d) => d.device)).toEqual([first, second]);
    await root('DELETE', 'sys/audit/again');
  });

  it('stops at disable: the device’s object forgets its salt', async () => {
    await enable('gone', 'http', { url: sinkURL('gone') });
    await root('PUT', 'secret/before-disable', { x: 'y' });
    await root('DELETE', 'sys/audit/gone');
    const count = (await sink('gone')).entries.length;
    await root('PUT', 'secret/after-disable', { x: 'y' });
    expect((await sink('gone')).entries.length).toBe(count);
    expect((await sink('gone')).entries.some((e) => e.request.path === 'secret/before-disable')).toBe(true);
    expect((await root('PUT', 'sys/audit-hash/gone', { input: 'x' })).status).toBe(400);
  });
});
