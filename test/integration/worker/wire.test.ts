// The HTTP wire layer (reference §1): URL space, verbs, bodies, limits, envelopes, headers.
import { SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, initCluster, PERMISSION_DENIED, type Cluster } from '../../helpers/api';

let c: Cluster;
beforeAll(async () => {
  c = await initCluster();
  expect((await api('POST', 'sys/mounts/secret', { token: c.root, body: { type: 'kv' } })).status).toBe(204);
});

describe('URL space', () => {
  it.each(['/', '/ui', '/v2/secret/foo', '/v1'])('answers %s outside /v1/ with 404 and an empty error list', async (path) => {
    const r = await api('GET', path);
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ errors: [] });
  });

  it('answers a path with no mount with "no handler for route"', async () => {
    const r = await api('GET', 'nomount/foo', { token: c.root });
    expect(r.status).toBe(404);
    expect(r.body.errors).toEqual(['no handler for route "nomount/foo". route entry not found.']);
  });

  it('answers a mount without such a route with "unsupported path"', async () => {
    const r = await api('GET', 'identity/nothing-here', { token: c.root });
    expect(r.status).toBe(404);
    expect(r.body.errors).toEqual(['1 error occurred:\n\t* unsupported path\n\n']);
  });

  it('answers an operation the route lacks with 405 "unsupported operation"', async () => {
    const r = await api('DELETE', 'sys/key-status', { token: c.root });
    expect(r.status).toBe(405);
    expect(r.body.errors).toEqual(['1 error occurred:\n\t* unsupported operation\n\n']);
  });

  it.each(['PROPFIND', 'MKCOL', 'OPTIONS'])('answers the %s verb with 405', async (method) => {
    const r = await api(method, 'secret/foo', { token: c.root });
    expect(r.status).toBe(405);
    expect(r.body).toEqual({ errors: [] });
  });

  it('refuses dot segments that survive URL parsing', async () => {
    const r = await SELF.fetch('http://coffer.test/v1/secret/%252e%252e/x', { headers: { 'X-Vault-Token': c.root } });
    // %252e decodes once to the literal text "%2e", a harmless key name, never to "..".
    expect(r.status).toBe(404);
    const r2 = await api('GET', 'secret//foo', { token: c.root });
    expect(r2.status).toBe(400);
    expect(r2.body.errors[0]).toContain('empty segments');
  });

  it('refuses empty segments everywhere but the tail of a PKI OCSP GET', async () => {
    await api('POST', 'sys/mounts/ocsp-pki', { token: c.root, body: { type: 'pki' } });
    await api('POST', 'sys/mounts/ocsp-kv', { token: c.root, body: { type: 'kv' } });
    // Encoded or not, a slash is a separator: "%2F%2F" makes an empty segment too.
    for (const [method, path] of [
      ['GET', 'secret/%2F/foo'],
      ['GET', 'ocsp-kv/ocsp/a//b'],
      ['GET', 'ocsp-pki/cert//x'],
      ['GET', 'ocsp-pki//ocsp/x'],
      ['POST', 'ocsp-pki/ocsp/a//b'],
      ['GET', 'no-such-mount/ocsp/a%2F%2Fb'],
      ['GET', 'sys/mounts//x'],
      ['GET', 'auth/token/lookup//x'],
    ]) {
      const r = await api(method, path, { token: c.root });
      expect([path, r.status, r.body.errors?.[0]]).toEqual([path, 400, 'invalid request path: empty segments are not allowed']);
    }
  });
});

describe('tokens', () => {
  it('accepts X-Vault-Token and Authorization: Bearer', async () => {
    await api('PUT', 'secret/tok', { token: c.root, body: { v: 1 } });
    expect((await api('GET', 'secret/tok', { token: c.root })).status).toBe(200);
    expect((await api('GET', 'secret/tok', { headers: { Authorization: `Bearer ${c.root}` } })).status).toBe(200);
  });

  it('ignores other Authorization schemes', async () => {
    const r = await api('GET', 'secret/tok', { headers: { Authorization: `Basic ${btoa(`x:${c.root}`)}` } });
    expect(r.status).toBe(403);
    expect(r.body.errors).toEqual([PERMISSION_DENIED]);
  });

  it('answers an unknown token with 403 "permission denied" and "invalid token"', async () => {
    const r = await api('GET', 'secret/tok', { token: 'hvs.notarealtoken000000000000' });
    expect(r.status).toBe(403);
    expect(r.body.errors).toEqual(['2 errors occurred:\n\t* permission denied\n\t* invalid token\n\n']);
  });

  it('answers a missing token on a protected path with 403', async () => {
    for (const path of ['secret/tok', 'sys/mounts', 'nomount/x']) {
      const r = await api('GET', path);
      expect(r.status).toBe(403);
      expect(r.body.errors).toEqual([PERMISSION_DENIED]);
    }
  });
});

describe('operations and bodies', () => {
  it('treats PUT and POST alike', async () => {
    expect((await api('PUT', 'secret/m', { token: c.root, body: { via: 'put' } })).status).toBe(204);
    expect((await api('GET', 'secret/m', { token: c.root })).body.data).toEqual({ via: 'put' });
    expect((await api('POST', 'secret/m', { token: c.root, body: { via: 'post' } })).status).toBe(204);
    expect((await api('GET', 'secret/m', { token: c.root })).body.data).toEqual({ via: 'post' });
  });

  it('lists with GET ?list=true and ?list=1, and refuses a non-boolean list value', async () => {
    await api('PUT', 'secret/l/a', { token: c.root, body: { x: 1 } });
    for (const q of ['true', '1', 'T']) expect((await api('GET', `secret/l?list=${q}`, { token: c.root })).body.data.keys).toEqual(['a']);
    const bad = await api('GET', 'secret/l?list=maybe', { token: c.root });
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ errors: [] });
    // list=false is a plain read.
    expect((await api('GET', 'secret/l/a?list=false', { token: c.root })).body.data).toEqual({ x: 1 });
    // Only reads look at list: a write ignores it, as Vault's does.
    expect((await api('PUT', 'secret/l/b?list=maybe', { token: c.root, body: { y: 2 } })).status).toBe(204);
    expect((await api('GET', 'secret/l/b', { token: c.root })).body.data).toEqual({ y: 2 });
  });

  // A GET carrying a JSON body (hvac sends one) cannot be built with fetch; the e2e suite sends it raw.

  it('accepts form-encoded bodies, but JSON when the body looks like JSON', async () => {
    const form = { 'Content-Type': 'application/x-www-form-urlencoded' };
    expect((await api('POST', 'secret/form', { token: c.root, raw: 'a=b&c=d+e', headers: form })).status).toBe(204);
    expect((await api('GET', 'secret/form', { token: c.root })).body.data).toEqual({ a: 'b', c: 'd e' });
    expect((await api('POST', 'secret/form2', { token: c.root, raw: '{"j":1}', headers: form })).status).toBe(204);
    expect((await api('GET', 'secret/form2', { token: c.root })).body.data).toEqual({ j: 1 });
  });

  it('accepts an empty body as no data', async () => {
    const r = await api('POST', 'secret/empty', { token: c.root });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['missing data fields']);
  });

  it('requires application/merge-patch+json for PATCH', async () => {
    const r = await api('PATCH', 'secret/m', { token: c.root, body: { a: 1 } });
    expect(r.status).toBe(415);
    expect(r.body.errors).toEqual(['PATCH requires Content-Type of application/merge-patch+json, provided application/json']);
    const ok = await api('PATCH', 'secret/m', { token: c.root, body: { a: 1 }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    // KV v1 has no patch operation.
    expect(ok.status).toBe(405);
  });

  it('answers malformed JSON with 400 "error parsing JSON" and writes nothing', async () => {
    const r = await api('POST', 'secret/bad', { token: c.root, raw: '{"a":', headers: { 'Content-Type': 'application/json' } });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['error parsing JSON']);
    expect((await api('GET', 'secret/bad', { token: c.root })).status).toBe(404);
  });

  it('refuses hostile JSON structure with 400', async () => {
    const deep = await api('POST', 'secret/deep', { token: c.root, raw: `{"a":${'['.repeat(600)}${']'.repeat(600)}}` });
    expect(deep.status).toBe(400);
    expect(deep.body.errors[1]).toBe('JSON nesting depth exceeds 500');
    const wide = await api('POST', 'secret/wide', { token: c.root, body: Object.fromEntries(Array.from({ length: 10_001 }, (_, i) => [`k${i}`, 1])) });
    expect(wide.status).toBe(400);
    expect(wide.body.errors[1]).toBe('JSON object with more than 10000 entries');
  });

  it('refuses bodies over 32 MiB with 413, by Content-Length or while streaming', async () => {
    const big = `{"a":"${'x'.repeat(32 * 1024 * 1024)}"}`;
    const r = await api('POST', 'secret/huge', { token: c.root, raw: big, headers: { 'Content-Type': 'application/json' } });
    expect(r.status).toBe(413);
    expect(r.body.errors[0]).toBe('error parsing JSON');
    const chunk = new TextEncoder().encode('x'.repeat(1024 * 1024));
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(ctrl) {
        if (sent++ < 40) ctrl.enqueue(chunk);
        else ctrl.close();
      },
    });
    const streamed = await SELF.fetch('http://coffer.test/v1/secret/huge', { method: 'POST', body: stream, headers: { 'X-Vault-Token': c.root } });
    expect(streamed.status).toBe(413);
  });

  it('refuses a negative wrap TTL', async () => {
    const r = await api('GET', 'secret/m', { token: c.root, headers: { 'X-Vault-Wrap-TTL': '-5s' } });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['error parsing X-Vault-Wrap-TTL header: requested wrap ttl cannot be negative']);
  });
});

describe('?help=1', () => {
  it('describes a path instead of executing the request', async () => {
    const r = await api('POST', 'secret/help-target?help=1', { token: c.root, body: { would: 'be written' } });
    expect(r.status).toBe(200);
    expect(r.body.see_also).toBeNull();
    expect(r.body.help).toContain('## PATH\n\nsecret/help-target (kv)');
    expect(r.body.help).toContain('create, delete, list, read, update');
    expect((await api('GET', 'secret/help-target', { token: c.root })).status).toBe(404);
  });

  it('lists the fields of a path with their types', async () => {
    const r = await api('GET', 'sys/mounts/anything?help=1', { token: c.root });
    expect(r.body.help).toContain('type (string)');
    expect(r.body.help).toContain('options (string-map)');
  });

  it('needs a valid token except on unauthenticated paths', async () => {
    expect((await api('GET', 'secret/x?help=1')).status).toBe(403);
    expect((await api('GET', 'sys/mounts?help=1')).status).toBe(403);
    expect((await api('GET', 'sys/health?help=1')).body.help).toContain('sys/health (system)');
  });
});

describe('responses', () => {
  it('sends Content-Type application/json and Cache-Control no-store on every kind of response', async () => {
    const responses = [
      await SELF.fetch('http://coffer.test/v1/secret/m', { headers: { 'X-Vault-Token': c.root } }),
      await SELF.fetch('http://coffer.test/v1/secret/x', { method: 'PUT', body: '{"a":1}', headers: { 'X-Vault-Token': c.root } }),
      await SELF.fetch('http://coffer.test/v1/nothing'),
      await SELF.fetch('http://coffer.test/v1/sys/health'),
    ];
    expect(responses.map((r) => r.status)).toEqual([200, 204, 403, 200]);
    for (const r of responses) {
      expect(r.headers.get('content-type')).toBe('application/json');
      expect(r.headers.get('cache-control')).toBe('no-store');
    }
  });

  it('uses the full success envelope, Go-style escaping and a trailing newline', async () => {
    await api('PUT', 'secret/html', { token: c.root, body: { v: '<a href="x">&</a>' } });
    const r = await api('GET', 'secret/html', { token: c.root });
    expect(r.text.endsWith('}\n')).toBe(true);
    expect(r.text).toContain('\\u003ca href=\\"x\\"\\u003e\\u0026\\u003c/a\\u003e');
    expect(Object.keys(r.body)).toEqual(['request_id', 'lease_id', 'renewable', 'lease_duration', 'data', 'wrap_info', 'warnings', 'auth', 'mount_type']);
    expect(r.body.request_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(r.body.mount_type).toBe('kv');
    expect(r.body.data.v).toBe('<a href="x">&</a>');
  });

  it('returns a 204 with no body for an empty result', async () => {
    const r = await api('PUT', 'secret/x', { token: c.root, body: { a: 1 } });
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
  });

  it('returns warnings for unrecognised parameters in an envelope', async () => {
    const r = await api('POST', 'sys/mounts/warned', { token: c.root, body: { type: 'kv', bogus: true } });
    expect(r.status).toBe(200);
    expect(r.body.warnings).toEqual(['Endpoint ignored these unrecognized parameters: [bogus]']);
  });

  it('answers HEAD only on sys/health, with no body', async () => {
    const h = await SELF.fetch('http://coffer.test/v1/sys/health', { method: 'HEAD' });
    expect(h.status).toBe(200);
    expect(await h.text()).toBe('');
    const other = await SELF.fetch('http://coffer.test/v1/secret/m', { method: 'HEAD', headers: { 'X-Vault-Token': c.root } });
    expect(other.status).toBe(405);
  });
});
