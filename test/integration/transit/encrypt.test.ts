// Transit encryption through the Worker: encrypt/decrypt/rewrap/datakey for every cipher, checked
// against an independent implementation of Vault's formats (test/global/transit-oracle-ops.ts)
// in both directions; derivation, convergence, associated data, versions, batches with
// references and partial failures, upsert by capability, and every refused input.
import { beforeAll, describe, expect, it } from 'vitest';
import { api, caller, initCluster, PERMISSION_DENIED, type Cluster } from '../../helpers/api';
import { oracle } from '../../helpers/transit-oracle';
import { env } from 'cloudflare:test';
import type { WireRequest } from '../../../src/pipeline/dispatch';
import { mountStub, systemStub } from '../../../src/rpc/stubs';

/** The revision the routes give a mount (its object answers "gone" to any other). */
async function routeRevision(prefix: string): Promise<number> {
  const routes = await systemStub(env).routes();
  if (!Array.isArray(routes)) throw new Error('no routes');
  return routes.find((r) => r.prefix === prefix)!.revision;
}

let c: Cluster;
const { call, ok } = caller(() => c.root);
const b64 = (s: string) => btoa(s);
const CIPHERS = ['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305'] as const;

/** The raw key of a version (keys here are made exportable for that). */
async function rawKey(name: string, version = 1): Promise<string> {
  return (await ok('GET', `transit/export/encryption-key/${name}/${version}`)).body.data.keys[String(version)];
}

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/transit', { type: 'transit' });
});

describe.each(CIPHERS)('%s', (type) => {
  const name = `k-${type}`;
  beforeAll(async () => {
    await ok('POST', `transit/keys/${name}`, { type, exportable: true });
  });

  it('round-trips, and the independent implementation agrees both ways', async () => {
    const plaintext = b64('the quick brown fox');
    const enc = await ok('POST', `transit/encrypt/${name}`, { plaintext });
    expect(enc.body.data).toEqual({ ciphertext: expect.stringMatching(/^vault:v1:[A-Za-z0-9+/]+=*$/), key_version: 1 });
    expect((await ok('POST', `transit/decrypt/${name}`, { ciphertext: enc.body.data.ciphertext })).body.data).toEqual({ plaintext });
    const key = await rawKey(name);
    expect((await oracle('decrypt', { type, key, ciphertext: enc.body.data.ciphertext })).plaintext).toBe(plaintext);
    const theirs = await oracle<{ ciphertext: string }>('encrypt', { type, key, plaintext, version: 1 });
    expect((await ok('POST', `transit/decrypt/${name}`, { ciphertext: theirs.ciphertext })).body.data.plaintext).toBe(plaintext);
  });

  it('binds associated data', async () => {
    const associated_data = b64('row-17');
    const plaintext = b64('salary');
    const enc = (await ok('POST', `transit/encrypt/${name}`, { plaintext, associated_data })).body.data.ciphertext;
    expect((await ok('POST', `transit/decrypt/${name}`, { ciphertext: enc, associated_data })).body.data.plaintext).toBe(plaintext);
    const key = await rawKey(name);
    expect((await oracle('decrypt', { type, key, ciphertext: enc, associated_data })).plaintext).toBe(plaintext);
    const wrong = await call('POST', `transit/decrypt/${name}`, { ciphertext: enc, associated_data: b64('row-18') });
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors).toEqual(['cipher: message authentication failed']);
    expect((await call('POST', `transit/decrypt/${name}`, { ciphertext: enc })).status).toBe(400);
  });

  it('derives a key per context, as the independent implementation does', async () => {
    const dname = `d-${type}`;
    await ok('POST', `transit/keys/${dname}`, { type, derived: true, exportable: true });
    const context = b64('user-42');
    const plaintext = b64('derived secret');
    const enc = (await ok('POST', `transit/encrypt/${dname}`, { plaintext, context })).body.data.ciphertext;
    const key = await rawKey(dname);
    expect((await oracle('decrypt', { type, key, ciphertext: enc, derived: true, context })).plaintext).toBe(plaintext);
    const theirs = await oracle<{ ciphertext: string }>('encrypt', { type, key, plaintext, derived: true, context });
    expect((await ok('POST', `transit/decrypt/${dname}`, { ciphertext: theirs.ciphertext, context })).body.data.plaintext).toBe(plaintext);
    const other = await call('POST', `transit/decrypt/${dname}`, { ciphertext: enc, context: b64('user-43') });
    expect(other.status).toBe(400);
    const missing = await call('POST', `transit/encrypt/${dname}`, { plaintext });
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0]).toMatch(/^missing 'context' for key derivation/);
  });

  it('convergent encryption gives the independent implementation\'s exact ciphertext', async () => {
    const cname = `c-${type}`;
    await ok('POST', `transit/keys/${cname}`, { type, derived: true, convergent_encryption: true, exportable: true });
    const context = b64('tenant');
    const plaintext = b64('same in, same out');
    const a = (await ok('POST', `transit/encrypt/${cname}`, { plaintext, context })).body.data.ciphertext;
    const b = (await ok('POST', `transit/encrypt/${cname}`, { plaintext, context })).body.data.ciphertext;
    expect(a).toBe(b);
    const theirs = await oracle<{ ciphertext: string }>('encrypt', { type, key: await rawKey(cname), plaintext, derived: true, convergent: true, context });
    expect(theirs.ciphertext).toBe(a);
    const nonce = await call('POST', `transit/encrypt/${cname}`, { plaintext, context, nonce: b64('123456789012') });
    expect(nonce.status).toBe(400);
    expect(nonce.body.errors).toEqual(['nonce provided when not allowed']);
  });
});

describe('versions', () => {
  beforeAll(async () => {
    await ok('POST', 'transit/keys/ver', { exportable: true });
  });

  it('encrypts with the latest or a chosen version, rewraps, and honours min versions', async () => {
    const plaintext = b64('v');
    const v1 = (await ok('POST', 'transit/encrypt/ver', { plaintext })).body.data.ciphertext as string;
    await ok('POST', 'transit/keys/ver/rotate');
    await ok('POST', 'transit/keys/ver/rotate');
    expect((await ok('POST', 'transit/encrypt/ver', { plaintext })).body.data).toMatchObject({ key_version: 3, ciphertext: expect.stringMatching(/^vault:v3:/) });
    expect((await ok('POST', 'transit/encrypt/ver', { plaintext, key_version: 2 })).body.data.key_version).toBe(2);
    // The independent side decrypts a version-2 ciphertext with version 2's exported key.
    const v2 = (await ok('POST', 'transit/encrypt/ver', { plaintext, key_version: 2 })).body.data.ciphertext;
    expect((await oracle('decrypt', { type: 'aes256-gcm96', key: await rawKey('ver', 2), ciphertext: v2 })).plaintext).toBe(plaintext);

    const rewrapped = (await ok('POST', 'transit/rewrap/ver', { ciphertext: v1 })).body.data;
    expect(rewrapped).toMatchObject({ key_version: 3, ciphertext: expect.stringMatching(/^vault:v3:/) });
    expect((await ok('POST', 'transit/decrypt/ver', { ciphertext: rewrapped.ciphertext })).body.data.plaintext).toBe(plaintext);

    await ok('POST', 'transit/keys/ver/config', { min_decryption_version: 2, min_encryption_version: 3 });
    const old = await call('POST', 'transit/decrypt/ver', { ciphertext: v1 });
    expect(old.status).toBe(400);
    expect(old.body.errors).toEqual(['ciphertext or signature version is disallowed by policy (too old)']);
    const low = await call('POST', 'transit/encrypt/ver', { plaintext, key_version: 2 });
    expect(low.body.errors).toEqual(['requested version for encryption is less than the minimum encryption key version']);
    const high = await call('POST', 'transit/encrypt/ver', { plaintext, key_version: 4 });
    expect(high.body.errors).toEqual(['requested version for encryption is higher than the latest key version']);
    const future = await call('POST', 'transit/decrypt/ver', { ciphertext: v1.replace('vault:v1:', 'vault:v9:') });
    expect(future.body.errors).toEqual(['invalid ciphertext: version is too new']);
  });
});

describe('refused inputs', () => {
  beforeAll(async () => {
    await ok('POST', 'transit/keys/plain');
    await ok('POST', 'transit/keys/signer', { type: 'ed25519' });
  });

  it.each([
    ['encrypt/plain', {}, 'missing plaintext to encrypt'],
    ['encrypt/plain', { plaintext: 'not base64!' }, 'failed to base64-decode plaintext'],
    ['encrypt/plain', { plaintext: b64('x'), associated_data: '%%' }, 'failed to base64-decode associated_data'],
    ['encrypt/plain', { plaintext: b64('x'), nonce: b64('123456789012') }, 'nonce provided when not allowed'],
    ['encrypt/plain', { plaintext: b64('x'), key_version: -1 }, 'key version cannot be negative'],
    ['encrypt/signer', { plaintext: b64('x') }, 'message encryption not supported for key type ed25519'],
    ['decrypt/plain', {}, 'missing ciphertext to decrypt'],
    ['decrypt/plain', { ciphertext: 'abc' }, 'invalid ciphertext: no prefix'],
    ['decrypt/plain', { ciphertext: 'vault:vx:abc' }, 'invalid ciphertext: version number could not be decoded'],
    ['decrypt/plain', { ciphertext: 'vault:v1:!!!' }, 'invalid ciphertext: could not decode base64'],
    ['decrypt/plain', { ciphertext: 'vault:v1:AAAA' }, 'cipher: message authentication failed'],
    ['decrypt/nothing', { ciphertext: 'vault:v1:AAAA' }, 'encryption key not found'],
    ['datakey/plaintext/plain', { bits: 100 }, 'invalid bits value 100: must be 128, 256 or 512'],
    ['datakey/sideways/plain', {}, 'invalid path: data key type must be "plaintext" or "wrapped", not "sideways"'],
  ])('%s %j', async (path, body, message) => {
    const r = await call('POST', `transit/${path}`, body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
  });

  it('a refused upsert creates no key', async () => {
    const r = await call('POST', 'transit/encrypt/new-bad', { plaintext: b64('x'), type: 'rsa-1024' });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['unknown key type rsa-1024']);
    expect((await call('GET', 'transit/keys/new-bad')).status).toBe(404);
  });

  it('an upsert whose type names an Object property is refused in the object too, asking for no key pair', async () => {
    // The tests' Worker hands encrypts off (OFFLOAD_MIN_COST_US=0); the object is asked directly,
    // as it is for every encrypt with OFFLOAD_HANDLERS=0.
    const uuid = (await ok('GET', 'sys/mounts/transit')).body.data.uuid as string;
    const route = { prefix: 'transit/', revision: (await routeRevision('transit/')) };
    for (const type of ['constructor', '__proto__', 'toString']) {
      const wire: WireRequest = { id: crypto.randomUUID(), operation: 'write', path: 'transit/encrypt/proto-bad', data: { plaintext: b64('x'), type }, auth: null, clientIP: '127.0.0.1', headers: {}, wrapTTL: 0 };
      const result = await mountStub(env, uuid).handle(route.prefix, route.revision, wire, c.root);
      expect(result).toMatchObject({ kind: 'error', status: 400, errors: [`unknown key type ${type}`] });
      const r = await call('POST', 'transit/encrypt/proto-bad', { plaintext: b64('x'), type });
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual([`unknown key type ${type}`]);
    }
    expect((await call('GET', 'transit/keys/proto-bad')).status).toBe(404);
  });
});

describe('batches', () => {
  beforeAll(async () => {
    await ok('POST', 'transit/keys/batch', { derived: true });
  });

  it('keeps order and references; a failed item makes it a 400 unless partial_failure_response_code says otherwise', async () => {
    const items = [
      { plaintext: b64('one'), context: b64('a'), reference: 'r1' },
      { plaintext: b64('two'), context: b64('b') },
    ];
    const good = await ok('POST', 'transit/encrypt/batch', { batch_input: items });
    expect(good.body.data.batch_results).toEqual([
      { ciphertext: expect.stringMatching(/^vault:v1:/), key_version: 1, reference: 'r1' },
      { ciphertext: expect.stringMatching(/^vault:v1:/), key_version: 1, reference: '' },
    ]);
    const dec = await ok('POST', 'transit/decrypt/batch', {
      batch_input: good.body.data.batch_results.map((r: { ciphertext: string }, i: number) => ({ ciphertext: r.ciphertext, context: items[i].context, reference: `d${i}` })),
    });
    expect(dec.body.data.batch_results).toEqual([
      { plaintext: b64('one'), reference: 'd0' },
      { plaintext: b64('two'), reference: 'd1' },
    ]);

    const mixed = [{ plaintext: b64('ok'), context: b64('a') }, { plaintext: b64('no context'), reference: 'bad' }];
    const failed = await call('POST', 'transit/encrypt/batch', { batch_input: mixed });
    expect(failed.status).toBe(400);
    expect(failed.body.data.batch_results[0]).toMatchObject({ key_version: 1, reference: '' });
    expect(failed.body.data.batch_results[1]).toEqual({ error: expect.stringMatching(/^missing 'context'/), reference: 'bad' });
    expect(failed.body.errors).toBeUndefined();
    const partial = await call('POST', 'transit/encrypt/batch', { batch_input: mixed, partial_failure_response_code: 207 });
    expect(partial.status).toBe(207);
    const allBad = await call('POST', 'transit/encrypt/batch', { batch_input: [mixed[1]], partial_failure_response_code: 207 });
    expect(allBad.status).toBe(400);
    const decBad = await call('POST', 'transit/decrypt/batch', { batch_input: [{ ciphertext: 'nope', context: b64('a') }] });
    expect(decBad.status).toBe(400);
    expect(decBad.body.data.batch_results).toEqual([{ error: 'invalid ciphertext: no prefix', reference: '' }]);
  });

  it('refuses an empty batch and bad partial failure codes', async () => {
    const empty = await call('POST', 'transit/encrypt/batch', { batch_input: [] });
    expect(empty.status).toBe(400);
    expect(empty.body.errors).toEqual(['missing batch input to process']);
    const code = await call('POST', 'transit/encrypt/batch', { batch_input: [{ plaintext: '' }], partial_failure_response_code: 600 });
    expect(code.status).toBe(400);
  });

  it('creates the key from the first item on upsert (type, convergence, derivation)', async () => {
    const r = await ok('POST', 'transit/encrypt/upsert-batch', {
      batch_input: [
        { plaintext: b64('x'), context: b64('c'), type: 'chacha20-poly1305', convergent_encryption: true },
        { plaintext: b64('x'), context: b64('c') },
      ],
    });
    const [a, b] = r.body.data.batch_results;
    expect(a.ciphertext).toBe(b.ciphertext);
    expect((await ok('GET', 'transit/keys/upsert-batch')).body.data).toMatchObject({ type: 'chacha20-poly1305', derived: true, convergent_encryption: true });
  });
});

describe('data keys', () => {
  it('returns a key and its ciphertext (plaintext) or only the ciphertext (wrapped)', async () => {
    await ok('POST', 'transit/keys/dk');
    for (const bits of [128, 256, 512]) {
      const r = await ok('POST', 'transit/datakey/plaintext/dk', { bits });
      expect(atob(r.body.data.plaintext).length).toBe(bits / 8);
      const back = await ok('POST', 'transit/decrypt/dk', { ciphertext: r.body.data.ciphertext });
      expect(back.body.data.plaintext).toBe(r.body.data.plaintext);
    }
    const wrapped = await ok('POST', 'transit/datakey/wrapped/dk');
    expect(Object.keys(wrapped.body.data).sort()).toEqual(['ciphertext', 'key_version']);
    expect(atob((await ok('POST', 'transit/decrypt/dk', { ciphertext: wrapped.body.data.ciphertext })).body.data.plaintext).length).toBe(32);
  });
});

describe('RSA encryption', () => {
  it('OAEP by default and PKCS#1 v1.5 on request, readable by the independent side', async () => {
    await ok('POST', 'transit/keys/rsa', { type: 'rsa-2048', exportable: true });
    const privatePem = (await ok('GET', 'transit/export/encryption-key/rsa/1')).body.data.keys['1'];
    const plaintext = b64('rsa secret');
    for (const padding_scheme of [undefined, 'oaep', 'pkcs1v15']) {
      const enc = (await ok('POST', 'transit/encrypt/rsa', { plaintext, padding_scheme })).body.data.ciphertext;
      expect((await ok('POST', 'transit/decrypt/rsa', { ciphertext: enc, padding_scheme })).body.data.plaintext).toBe(plaintext);
      expect((await oracle('decrypt', { type: 'rsa-2048', private_key: privatePem, ciphertext: enc, padding_scheme: padding_scheme ?? 'oaep' })).plaintext).toBe(plaintext);
    }
    const ad = await call('POST', 'transit/encrypt/rsa', { plaintext, associated_data: b64('x') });
    expect(ad.body.errors).toEqual(['associated_data is not supported for RSA keys']);
    const pad = await call('POST', 'transit/encrypt/plain', { plaintext, padding_scheme: 'oaep' });
    expect(pad.body.errors).toEqual(['padding_scheme is only supported for RSA keys, not aes256-gcm96']);
  });
});

describe('upsert by capability', () => {
  it('create may make the key; update alone may not', async () => {
    const policy = (caps: string) => `path "transit/encrypt/*" { capabilities = [${caps}] }`;
    await ok('PUT', 'sys/policies/acl/enc-update', { policy: policy('"update"') });
    await ok('PUT', 'sys/policies/acl/enc-create', { policy: policy('"create"') });
    const tok = async (p: string) => (await ok('POST', 'auth/token/create', { policies: [p] })).body.auth.client_token as string;
    const update = await tok('enc-update');
    const create = await tok('enc-create');
    // A missing key makes the write a create; update alone may not create, and is told why.
    const r = await api('POST', 'transit/encrypt/by-update', { token: update, body: { plaintext: b64('x') } });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['encryption key not found']);
    expect((await call('GET', 'transit/keys/by-update')).status).toBe(404);
    expect((await api('POST', 'transit/encrypt/by-create', { token: create, body: { plaintext: b64('x'), context: b64('c') } })).status).toBe(200);
    expect((await ok('GET', 'transit/keys/by-create')).body.data.derived).toBe(true);
    // Once it exists, encrypting is an update: create alone is refused.
    const again = await api('POST', 'transit/encrypt/by-create', { token: create, body: { plaintext: b64('x'), context: b64('c') } });
    expect(again.status).toBe(403);
    expect(again.body.errors).toEqual([PERMISSION_DENIED]);
    expect((await api('POST', 'transit/encrypt/by-create', { token: update, body: { plaintext: b64('x'), context: b64('c') } })).status).toBe(200);
    // Neither create nor update: the usual 403.
    await ok('PUT', 'sys/policies/acl/enc-none', { policy: 'path "transit/encrypt/*" { capabilities = ["read"] }' });
    const none = await api('POST', 'transit/encrypt/by-none', { token: await tok('enc-none'), body: { plaintext: b64('x') } });
    expect(none.status).toBe(403);
    expect(none.body.errors).toEqual([PERMISSION_DENIED]);
  });
});
