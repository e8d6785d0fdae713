// KV version 1 and cubbyhole: read, write, delete and list with Vault's folder semantics.
import { beforeAll, describe, expect, it } from 'vitest';
import { api, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const kv = (method: string, path: string, body?: unknown, token = c.root) => api(method, path, { token, body });

beforeAll(async () => {
  c = await initCluster();
  expect((await kv('POST', 'sys/mounts/secret', { type: 'kv', options: { version: '1' } })).status).toBe(204);
});

describe('KV v1', () => {
  it('writes, reads and overwrites a secret, keeping JSON types', async () => {
    const secret = { s: 'text', n: 42, f: 1.5, b: true, nil: null, list: [1, 'two'], nested: { deep: { x: 'y' } } };
    expect((await kv('POST', 'secret/app/db', secret)).status).toBe(204);
    const r = await kv('GET', 'secret/app/db');
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ lease_id: '', renewable: false, lease_duration: 2764800, data: secret, mount_type: 'kv' });
    await kv('PUT', 'secret/app/db', { only: 'this' });
    expect((await kv('GET', 'secret/app/db')).body.data).toEqual({ only: 'this' });
  });

  it('reports a lease_duration from the secret\'s ttl or lease field', async () => {
    await kv('PUT', 'secret/ttl/a', { ttl: '1h', v: 1 });
    await kv('PUT', 'secret/ttl/b', { lease: 90, v: 1 });
    await kv('PUT', 'secret/ttl/c', { ttl: 'not a duration', v: 1 });
    expect((await kv('GET', 'secret/ttl/a')).body.lease_duration).toBe(3600);
    expect((await kv('GET', 'secret/ttl/b')).body.lease_duration).toBe(90);
    expect((await kv('GET', 'secret/ttl/c')).body.lease_duration).toBe(2764800);
  });

  it('answers a missing secret with 404 and an empty error list', async () => {
    const r = await kv('GET', 'secret/nope');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ errors: [] });
  });

  it('lists direct children with folders ending in "/"', async () => {
    for (const k of ['list/a', 'list/b/c', 'list/b/d', 'list/e/f/g']) await kv('PUT', `secret/${k}`, { v: k });
    expect((await kv('GET', 'secret/list?list=true')).body.data.keys).toEqual(['a', 'b/', 'e/']);
    expect((await kv('GET', 'secret/list/?list=true')).body.data.keys).toEqual(['a', 'b/', 'e/']);
    expect((await kv('GET', 'secret/list/b?list=true')).body.data.keys).toEqual(['c', 'd']);
    expect((await kv('GET', 'secret/?list=true')).body.data.keys).toEqual(expect.arrayContaining(['app/', 'list/', 'ttl/']));
    expect((await kv('GET', 'secret?list=true')).body.data.keys).toEqual(expect.arrayContaining(['app/', 'list/']));
  });

  it('answers a list with no keys with 404', async () => {
    expect((await kv('GET', 'secret/list/a?list=true')).status).toBe(404);
    expect((await kv('GET', 'secret/nothing/here?list=true')).status).toBe(404);
  });

  it('deletes idempotently, and a folder vanishes with its last key', async () => {
    expect((await kv('DELETE', 'secret/list/e/f/g')).status).toBe(204);
    expect((await kv('DELETE', 'secret/list/e/f/g')).status).toBe(204);
    expect((await kv('GET', 'secret/list/e/f/g')).status).toBe(404);
    expect((await kv('GET', 'secret/list?list=true')).body.data.keys).toEqual(['a', 'b/']);
  });

  it.each([
    ['secret/empty', {}, 'missing data fields'],
    ['secret', { a: 1 }, 'missing key: write to a path below the mount'],
    ['secret/folder/', { a: 1 }, 'cannot write to a path ending in "/"'],
  ])('refuses a write to %s with %j', async (path, body, message) => {
    const r = await kv('PUT', path, body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
  });

  it('refuses a secret over the 1 MiB entry limit with 413 and stores nothing', async () => {
    const r = await kv('PUT', 'secret/huge', { a: 'x'.repeat(600_000), b: 'y'.repeat(600_000) });
    expect(r.status).toBe(413);
    expect(r.body.errors[0]).toMatch(/^put failed due to value being too large; got \d+ bytes, max: 1048576 bytes$/);
    expect((await kv('GET', 'secret/huge')).status).toBe(404);
  });

  it('keeps every one of many concurrent writes', async () => {
    await Promise.all(Array.from({ length: 25 }, (_, i) => kv('PUT', `secret/many/k${i}`, { i })));
    expect((await kv('GET', 'secret/many?list=true')).body.data.keys).toHaveLength(25);
    expect((await kv('GET', 'secret/many/k17')).body.data).toEqual({ i: 17 });
  });

  it('serves keys with spaces and non-ASCII characters', async () => {
    await kv('PUT', 'secret/odd%20name/%C3%A9t%C3%A9', { v: 'summer' });
    expect((await kv('GET', 'secret/odd%20name/%C3%A9t%C3%A9')).body.data).toEqual({ v: 'summer' });
    expect((await kv('GET', 'secret/odd%20name?list=true')).body.data.keys).toEqual(['été']);
  });
});

describe('cubbyhole', () => {
  let other = '';
  beforeAll(async () => {
    // A second root token, minted through generate-root.
    const s = await api('PUT', 'sys/generate-root/attempt', { token: c.root, body: {} });
    await api('PUT', 'sys/generate-root/update', { body: { nonce: s.body.nonce, key: c.recoveryKeys[0] } });
    const d = await api('PUT', 'sys/generate-root/update', { body: { nonce: s.body.nonce, key: c.recoveryKeys[1] } });
    other = (await api('PUT', 'sys/decode-token', { body: { encoded_token: d.body.encoded_token, otp: s.body.otp } })).body.data.token;
  });

  it('gives each token its own private storage', async () => {
    expect((await kv('PUT', 'cubbyhole/note', { mine: true })).status).toBe(204);
    const r = await kv('GET', 'cubbyhole/note');
    expect(r.body.data).toEqual({ mine: true });
    expect(r.body.lease_duration).toBe(0);
    expect((await kv('GET', 'cubbyhole/note', undefined, other)).status).toBe(404);
    expect((await kv('GET', 'cubbyhole?list=true', undefined, other)).status).toBe(404);
    await kv('PUT', 'cubbyhole/note', { theirs: true }, other);
    expect((await kv('GET', 'cubbyhole/note')).body.data).toEqual({ mine: true });
    expect((await kv('GET', 'cubbyhole?list=true')).body.data.keys).toEqual(['note']);
  });

  it('needs a token', async () => {
    expect((await api('GET', 'cubbyhole/note')).status).toBe(403);
  });
});
