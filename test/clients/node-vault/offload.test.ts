// Transit and PKI requests the mount's object hands to the Worker, as node-vault sees them. Its
// generic write/read drive mounts of this file's own, so that sys/metrics' coffer.offload.*
// counters (granted: handed off; settled: answered from the Worker; resumed: finished in the
// object; answered: a caller's repeated request computed in the Worker first and taken in one
// call; recomputed: computed first but run in the object, its state having changed) are exact per
// test. Its transit methods (encryptData, decryptData, ...) check behaviour
// under concurrency: no request sent after a rotation or a min_decryption_version change has
// resolved may be answered from the state before it. Those methods always address transit/;
// secrets.test.ts mounts transit/ and fails if it is already there, so this file never touches it:
// node-vault's pathPrefix points them at <unique>/transit/ instead.
import { execFileSync } from 'node:child_process';
import { createHmac, createPublicKey, verify, X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import nodeVault from 'node-vault';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { coffer, failure, unique, vault } from './client';

const root = vault();
const b64 = (s: string | Buffer) => Buffer.from(s).toString('base64');
const TOO_OLD = 'ciphertext or signature version is disallowed by policy (too old)';

interface Counts {
  granted: number;
  settled: number;
  resumed: number;
  stale: number;
  answered: number;
  recomputed: number;
}
const none: Counts = { granted: 0, settled: 0, resumed: 0, stale: 0, answered: 0, recomputed: 0 };
/** Requests offered to the Worker: each is granted, answered first, or computed first and run in the object. */
const offered = (c: Counts): number => c.granted + c.answered + c.recomputed;

/** A mount's coffer.offload.* counters (absent ones are 0). */
async function counts(mount: string): Promise<Counts> {
  const metrics = (await root.read('sys/metrics')) as { Counters: { Name: string; Count: number; Labels: Record<string, string> }[] };
  const out = { ...none };
  for (const c of metrics.Counters) {
    const kind = c.Name.replace(/^coffer\.offload\./, '') as keyof Counts;
    if (kind !== c.Name && kind in out && c.Labels.mount === `${mount}/`) out[kind] = c.Count;
  }
  return out;
}
const keyringTerm = async (): Promise<number> => (await root.read('sys/key-status')).data.term;
let termAtStart = 0;
beforeEach(async () => {
  termAtStart = await keyringTerm();
});

/**
 * The counters are as expected, unless another suite on the shared server rotated the keyring
 * meanwhile: every object then forgets its grants and its state, so requests move from one kind to
 * another (a grant goes stale and resumes, an answer computed first is run in the object, the
 * next request takes a grant); each is still offered once.
 */
async function expectCounts(mount: string, expected: Partial<Counts>): Promise<void> {
  const want = { ...none, ...expected };
  const got = await counts(mount);
  if ((await keyringTerm()) !== termAtStart) expect(offered(got)).toBe(offered(want));
  else expect(got).toEqual(want);
}

async function transitMount(): Promise<string> {
  const mount = unique('nv-offload-transit');
  await root.mount({ mount_point: mount, type: 'transit' });
  return mount;
}

/** A token holding only `policy` (made on a client of its own: tokenCreate switches to the new token). */
async function tokenWith(rules: string): Promise<string> {
  const name = unique('nv-offload-policy');
  await root.addPolicy({ name, rules });
  return (await vault().tokenCreate({ policies: [name], ttl: '15m' })).auth.client_token;
}

describe('transit on a mount of its own (exact offload counters)', () => {
  it('encrypt, decrypt, rewrap, datakey, hmac, sign and verify are each granted and settled, or answered first when repeated', async () => {
    const mount = await transitMount();
    const aes = unique('aes');
    const signer = unique('ed25519');
    await root.write(`${mount}/keys/${aes}`, { exportable: true });
    await root.write(`${mount}/keys/${signer}`, { type: 'ed25519' });
    const hmacKey = Buffer.from((await root.read(`${mount}/export/hmac-key/${aes}`)).data.keys['1'], 'base64');
    const raw = Buffer.from((await root.read(`${mount}/keys/${signer}`)).data.keys['1'].public_key, 'base64');
    const publicKey = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw.toString('base64url') }, format: 'jwk' });
    await expectCounts(mount, {});

    const plaintext = b64('handed to the worker');
    const data = Buffer.from('authenticate me');
    const ciphertext = (await root.write(`${mount}/encrypt/${aes}`, { plaintext })).data.ciphertext;
    expect(ciphertext).toMatch(/^vault:v1:/);
    expect((await root.write(`${mount}/decrypt/${aes}`, { ciphertext })).data.plaintext).toBe(plaintext);
    const rewrapped = (await root.write(`${mount}/rewrap/${aes}`, { ciphertext })).data;
    expect(rewrapped.key_version).toBe(1);
    expect(rewrapped.ciphertext).not.toBe(ciphertext);
    expect((await root.write(`${mount}/decrypt/${aes}`, { ciphertext: rewrapped.ciphertext })).data.plaintext).toBe(plaintext);
    const datakey = (await root.write(`${mount}/datakey/plaintext/${aes}`, { bits: 512 })).data;
    expect(Buffer.from(datakey.plaintext, 'base64')).toHaveLength(64);
    expect((await root.write(`${mount}/decrypt/${aes}`, { ciphertext: datakey.ciphertext })).data.plaintext).toBe(datakey.plaintext);
    const mac = (await root.write(`${mount}/hmac/${aes}`, { input: b64(data) })).data.hmac;
    expect(mac).toBe(`vault:v1:${createHmac('sha256', hmacKey).update(data).digest('base64')}`);
    expect((await root.write(`${mount}/verify/${aes}`, { input: b64(data), hmac: mac })).data.valid).toBe(true);
    const signature = (await root.write(`${mount}/sign/${signer}`, { input: b64(data) })).data.signature;
    expect(verify(null, data, publicKey, Buffer.from(signature.split(':')[2], 'base64'))).toBe(true);
    expect((await root.write(`${mount}/verify/${signer}`, { input: b64(data), signature })).data.valid).toBe(true);
    expect((await root.write(`${mount}/verify/${signer}`, { input: b64('other'), signature })).data.valid).toBe(false);

    // encrypt, 3 decrypts, rewrap, datakey, hmac, sign, 3 verifies: the second and third decrypt and
    // the second verify of the signer repeat a granted request of the same caller.
    await expectCounts(mount, { granted: 8, settled: 8, answered: 3 });
  });

  it('a rotation, min_decryption_version, a deletion and disable_upsert are seen by the very next request', async () => {
    const mount = await transitMount();
    const name = unique('key');
    await root.write(`${mount}/keys/${name}`, {});
    const plaintext = b64('before and after');
    const v1 = (await root.write(`${mount}/encrypt/${name}`, { plaintext })).data.ciphertext;
    expect(v1).toMatch(/^vault:v1:/);

    await root.write(`${mount}/keys/${name}/rotate`, {});
    const v2 = (await root.write(`${mount}/encrypt/${name}`, { plaintext })).data;
    expect(v2).toMatchObject({ key_version: 2, ciphertext: expect.stringMatching(/^vault:v2:/) });

    await root.write(`${mount}/keys/${name}/config`, { min_decryption_version: 2 });
    expect(await failure(root.write(`${mount}/decrypt/${name}`, { ciphertext: v1 }))).toEqual({ status: 400, errors: [TOO_OLD] });
    expect((await root.write(`${mount}/decrypt/${name}`, { ciphertext: v2.ciphertext })).data.plaintext).toBe(plaintext);

    await root.write(`${mount}/keys/${name}/config`, { deletion_allowed: true });
    await root.delete(`${mount}/keys/${name}`);
    expect(await failure(root.write(`${mount}/decrypt/${name}`, { ciphertext: v2.ciphertext }))).toEqual({ status: 400, errors: ['encryption key not found'] });

    // Upsert is on by default: the next encrypt makes a new key, which cannot open the old ciphertexts.
    expect((await root.read(`${mount}/config/keys`)).data).toEqual({ disable_upsert: false });
    const again = (await root.write(`${mount}/encrypt/${name}`, { plaintext })).data.ciphertext;
    expect(again).toMatch(/^vault:v1:/);
    expect((await root.read(`${mount}/keys/${name}`)).data.latest_version).toBe(1);
    expect(await failure(root.write(`${mount}/decrypt/${name}`, { ciphertext: v1 }))).toEqual({ status: 400, errors: ['cipher: message authentication failed'] });
    expect((await root.write(`${mount}/decrypt/${name}`, { ciphertext: again })).data.plaintext).toBe(plaintext);

    await root.write(`${mount}/config/keys`, { disable_upsert: true });
    const missing = unique('missing');
    expect(await failure(root.write(`${mount}/encrypt/${missing}`, { plaintext }))).toEqual({ status: 400, errors: ['encryption key not found'] });
    expect((await failure(root.read(`${mount}/keys/${missing}`))).status).toBe(404);

    // Granted: the first encrypt, the first decrypt after each change, the upserting encrypt (finished
    // in the object) and the encrypt of a missing key. Answered first: the decrypts that repeat one
    // under an unchanged state. Computed first under a state that had changed (the rotation, the
    // deletion), so run in the object: the encrypt after the rotation, the decrypt after the deletion.
    await expectCounts(mount, { granted: 5, settled: 4, resumed: 1, answered: 2, recomputed: 2 });
  });

  it('an encrypt that creates its key (upsert) is finished in the object', async () => {
    const mount = await transitMount();
    const name = unique('upsert');
    const ciphertext = (await root.write(`${mount}/encrypt/${name}`, { plaintext: b64('first use') })).data.ciphertext;
    expect(ciphertext).toMatch(/^vault:v1:/);
    expect((await root.read(`${mount}/keys/${name}`)).data).toMatchObject({ type: 'aes256-gcm96', latest_version: 1 });
    await expectCounts(mount, { granted: 1, resumed: 1 });
    expect((await root.write(`${mount}/decrypt/${name}`, { ciphertext })).data.plaintext).toBe(b64('first use'));
  });

  it('the encrypt after an upsert is handed off again', async () => {
    const mount = await transitMount();
    const name = unique('upsert');
    await root.write(`${mount}/encrypt/${name}`, { plaintext: b64('first use') });
    expect((await root.read(`${mount}/keys/${name}`)).data.latest_version).toBe(1);
    await expectCounts(mount, { granted: 1, resumed: 1 });
    expect((await root.write(`${mount}/encrypt/${name}`, { plaintext: b64('second use') })).data.ciphertext).toMatch(/^vault:v1:/);
    await expectCounts(mount, { granted: 2, settled: 1, resumed: 1 });
  });

  it('bad input answers Vault\'s 400s; a policy-limited token is refused before anything is handed off', async () => {
    const mount = await transitMount();
    const name = unique('key');
    await root.write(`${mount}/keys/${name}`, {});
    const good: string = (await root.write(`${mount}/encrypt/${name}`, { plaintext: b64('x'.repeat(40)) })).data.ciphertext;
    const payload = Buffer.from(good.split(':')[2], 'base64');
    payload[payload.length - 1] ^= 1;
    for (const [ciphertext, message] of [
      ['garbage', 'invalid ciphertext: no prefix'],
      ['vault:v1:%%%', 'invalid ciphertext: could not decode base64'],
      [`vault:v9:${good.split(':')[2]}`, 'invalid ciphertext: version is too new'],
      [`vault:v1:${payload.toString('base64')}`, 'cipher: message authentication failed'],
    ]) {
      expect(await failure(root.write(`${mount}/decrypt/${name}`, { ciphertext }))).toEqual({ status: 400, errors: [message] });
    }
    // JSON null is the zero value: an empty plaintext, which encrypts (and decrypts to "") as in Vault.
    const empty = (await root.write(`${mount}/encrypt/${name}`, { plaintext: null })).data.ciphertext;
    expect(empty).toMatch(/^vault:v1:/);
    expect((await root.write(`${mount}/decrypt/${name}`, { ciphertext: empty })).data.plaintext).toBe('');
    // The encrypt and the first decrypt were granted; the other decrypts and the second encrypt repeat them.
    await expectCounts(mount, { granted: 2, settled: 2, answered: 5 });

    const limited = vault(await tokenWith(`path "${mount}/encrypt/${name}" { capabilities = ["update"] }`));
    const mine = (await limited.write(`${mount}/encrypt/${name}`, { plaintext: b64('allowed') })).data.ciphertext;
    expect(mine).toMatch(/^vault:v1:/);
    const denied = await failure(limited.write(`${mount}/decrypt/${name}`, { ciphertext: mine }));
    expect(denied.status).toBe(403);
    expect(denied.errors[0]).toContain('permission denied');
    expect((await root.write(`${mount}/decrypt/${name}`, { ciphertext: mine })).data.plaintext).toBe(b64('allowed'));
    // The refused decrypt was never handed off (nor computed first: that caller had no grant for it).
    await expectCounts(mount, { granted: 3, settled: 3, answered: 6 });
  });
});

describe('PKI on a mount of its own (exact offload counters)', () => {
  /** A PKI mount with an EC root; the root's certificate. */
  async function pkiMount(): Promise<{ mount: string; rootPem: string }> {
    const mount = unique('nv-offload-pki');
    await root.mount({ mount_point: mount, type: 'pki', config: { max_lease_ttl: '87600h' } });
    const rootPem = (await root.write(`${mount}/root/generate/internal`, { common_name: 'node-vault offload root', ttl: '87600h', key_type: 'ec', key_bits: 256 })).data.certificate;
    return { mount, rootPem };
  }
  const role = (mount: string, name: string, fields: Record<string, unknown>) =>
    root.write(`${mount}/roles/${name}`, { allowed_domains: ['example.com'], allow_subdomains: true, key_type: 'ec', key_bits: 256, ...fields });

  /** openssl verify of `pem` against `rootPem`, in a directory removed afterwards. */
  function opensslVerify(pem: string, rootPem: string): string {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'coffer-nv-offload-'));
    try {
      writeFileSync(path.join(dir, 'root.pem'), rootPem);
      return execFileSync('openssl', ['verify', '-CAfile', path.join(dir, 'root.pem')], { input: pem, encoding: 'utf8' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  const serials = async (mount: string): Promise<string[]> => (await root.list(`${mount}/certs`)).data.keys;

  it('an issue under a no_store role is granted and settled, and not stored', async () => {
    const { mount, rootPem } = await pkiMount();
    await role(mount, 'ephemeral', { no_store: true, max_ttl: '72h' });
    const issued = (await root.write(`${mount}/issue/ephemeral`, { common_name: 'eph.example.com' })).data;
    expect(opensslVerify(issued.certificate, rootPem)).toContain('OK');
    expect(new X509Certificate(issued.certificate).subject).toBe('CN=eph.example.com');
    expect(issued.private_key).toContain('PRIVATE KEY');
    expect(await serials(mount)).not.toContain(issued.serial_number);
    await expectCounts(mount, { granted: 1, settled: 1 });
  });

  it('an issue under a role that stores is resumed the first time, then not handed off again', async () => {
    const { mount, rootPem } = await pkiMount();
    await role(mount, 'stored', { max_ttl: '72h' });
    // Back to back: the Worker sends a path that needed the object straight there for a while.
    const first = (await root.write(`${mount}/issue/stored`, { common_name: 'one.example.com' })).data;
    const second = (await root.write(`${mount}/issue/stored`, { common_name: 'two.example.com' })).data;
    // Only the first was handed off (and finished in the object, which stores it).
    await expectCounts(mount, { granted: 1, resumed: 1 });
    const listed = await serials(mount);
    for (const issued of [first, second]) {
      expect(opensslVerify(issued.certificate, rootPem)).toContain('OK');
      expect(listed).toContain(issued.serial_number);
      expect((await root.read(`${mount}/cert/${issued.serial_number}`)).data.certificate.trim()).toBe(issued.certificate.trim());
    }
  });

  it('a change of the no_store role is seen by the very next issue', async () => {
    const { mount, rootPem } = await pkiMount();
    await role(mount, 'ephemeral', { no_store: true, max_ttl: '72h' });
    let started = Date.now();
    const long = await root.write(`${mount}/issue/ephemeral`, { common_name: 'a.example.com', ttl: '48h' });
    expect(Date.parse(new X509Certificate(long.data.certificate).validTo)).toBeGreaterThan(started + 47 * 3600_000);
    expect(long.warnings).toBeNull();

    await role(mount, 'ephemeral', { no_store: true, max_ttl: '1h' });
    started = Date.now();
    const capped = await root.write(`${mount}/issue/ephemeral`, { common_name: 'a.example.com', ttl: '48h' });
    expect(opensslVerify(capped.data.certificate, rootPem)).toContain('OK');
    const notAfter = Date.parse(new X509Certificate(capped.data.certificate).validTo);
    expect(notAfter).toBeLessThanOrEqual(started + 3600_000 + 5_000);
    expect(notAfter).toBeGreaterThan(started + 59 * 60_000);
    expect(capped.warnings).toEqual(['TTL "48h0m0s" is longer than permitted maxTTL "1h0m0s", so maxTTL is being used']);
    expect((await counts(mount)).stale).toBe(0);
  });
});

describe('node-vault\'s transit methods (on <unique>/transit/ through pathPrefix)', () => {
  const prefix = unique('nv-offload');
  // Every request of this client goes under /v1/<prefix>/: its transit methods reach <prefix>/transit/.
  const transit = nodeVault({ endpoint: coffer.url, token: coffer.rootToken, noCustomHTTPVerbs: true, pathPrefix: `/${prefix}` });
  beforeAll(async () => {
    await root.mount({ mount_point: `${prefix}/transit`, type: 'transit' });
  });

  /**
   * Each of `n` requests racing a change was handed off and then answered exactly once: from the
   * Worker (settled) or, its state having changed, from the object (resumed).
   */
  async function expectEachAnsweredOnce(before: Counts, n: number) {
    const after = await counts(`${prefix}/transit`);
    const d = Object.fromEntries(Object.keys(none).map((k) => [k, after[k as keyof Counts] - before[k as keyof Counts]])) as unknown as Counts;
    expect(offered(d)).toBe(n);
    // Answered once each: from the Worker (settled, answered) or by the object (resumed, recomputed).
    expect(d.settled + d.answered + d.resumed + d.recomputed).toBe(n);
    expect(d.stale).toBeLessThanOrEqual(d.resumed);
  }

  interface Outcome {
    /** The call was made after the concurrent change had resolved. */
    after: boolean;
    status: number;
    body: { data?: { batch_results?: Record<string, string>[] }; errors?: string[] };
  }

  /**
   * Runs `change` among `n` calls of `call`: half of them made 1 ms apart (the change starts after
   * the first few), the other half the moment the change resolves, while earlier ones may still be
   * running in the Worker.
   */
  async function around(n: number, change: () => Promise<unknown>, call: () => Promise<Outcome['body']>): Promise<Outcome[]> {
    let resolved = false;
    const outcomes: Promise<Outcome>[] = [];
    const fire = () => {
      const after = resolved;
      outcomes.push(
        call().then(
          (body) => ({ after, status: 200, body }),
          (e: { response?: { statusCode: number; body?: Outcome['body'] } }) => {
            if (!e.response) throw e;
            return { after, status: e.response.statusCode, body: e.response.body ?? {} };
          },
        ),
      );
    };
    let changed: Promise<void> | undefined;
    for (let i = 0; i < n / 2; i++) {
      fire();
      if (i === n / 8) {
        changed = change().then(() => {
          resolved = true;
          for (let j = 0; j < n / 2; j++) fire();
        });
      }
      await new Promise((r) => setTimeout(r, 1));
    }
    await changed;
    return Promise.all(outcomes);
  }

  /** Batches of 100 keep each handler busy long enough for the change to land while some run. */
  const BATCH = 100;
  const batch = <T>(item: T): T[] => Array.from({ length: BATCH }, () => item);

  it('encryptData, decryptData and rewrapData see a rotation and min_decryption_version at once', async () => {
    const name = unique('nv-offload');
    await transit.transitCreateKey({ name });
    const plaintext = b64('through transit/');
    const v1 = (await transit.encryptData({ name, plaintext })).data.ciphertext;
    expect(v1).toMatch(/^vault:v1:/);
    await transit.write(`transit/keys/${name}/rotate`, {});
    expect((await transit.encryptData({ name, plaintext })).data.ciphertext).toMatch(/^vault:v2:/);
    const rewrapped = (await transit.rewrapData({ name, ciphertext: v1 })).data.ciphertext;
    expect(rewrapped).toMatch(/^vault:v2:/);
    await transit.write(`transit/keys/${name}/config`, { min_decryption_version: 2 });
    expect(await failure(transit.decryptData({ name, ciphertext: v1 }))).toEqual({ status: 400, errors: [TOO_OLD] });
    expect((await transit.decryptData({ name, ciphertext: rewrapped })).data.plaintext).toBe(plaintext);
  });

  it('every encrypt sent after a rotation resolved uses the new version (40 in parallel, 3 rotations)', async () => {
    const name = unique('nv-offload-race');
    await transit.transitCreateKey({ name });
    const plaintext = b64('racing');
    for (const version of [2, 3, 4]) {
      const before = await counts(`${prefix}/transit`);
      const outcomes = await around(
        40,
        () => transit.write(`transit/keys/${name}/rotate`, {}),
        () => transit.encryptData({ name, batch_input: batch({ plaintext }) }),
      );
      for (const o of outcomes) {
        expect(o.status).toBe(200);
        // One request encrypts all its items with one version.
        const used = [...new Set(o.body.data!.batch_results!.map((r) => Number(/^vault:v(\d+):/.exec(r.ciphertext)?.[1])))];
        if (o.after) expect(used).toEqual([version]);
        else expect([[version - 1], [version]]).toContainEqual(used);
      }
      expect(outcomes.filter((o) => o.after).length).toBeGreaterThanOrEqual(20);
      await expectEachAnsweredOnce(before, 40);
      expect((await transit.transitReadKey({ name })).data.latest_version).toBe(version);
    }
  });

  it('every decrypt sent after min_decryption_version resolved is refused (40 in parallel, 3 rounds)', async () => {
    const name = unique('nv-offload-race');
    await transit.transitCreateKey({ name });
    for (let i = 0; i < 3; i++) await transit.write(`transit/keys/${name}/rotate`, {});
    const plaintext = b64('racing');
    const old: string[] = [];
    for (const key_version of [1, 2, 3]) old.push((await transit.encryptData({ name, plaintext, key_version })).data.ciphertext);
    for (const [i, ciphertext] of old.entries()) {
      const min = i + 2;
      expect(ciphertext).toMatch(new RegExp(`^vault:v${min - 1}:`));
      const before = await counts(`${prefix}/transit`);
      const outcomes = await around(
        40,
        () => transit.write(`transit/keys/${name}/config`, { min_decryption_version: min }),
        () => transit.decryptData({ name, batch_input: batch({ ciphertext }) }),
      );
      const refused = batch({ error: TOO_OLD, reference: '' });
      for (const o of outcomes) {
        // Every item failing makes the batch a 400 (as in Vault), with the items' errors in data.
        if (o.after || o.status !== 200) expect(o).toMatchObject({ status: 400, body: { data: { batch_results: refused } } });
        else expect(o.body.data!.batch_results!.map((r) => r.plaintext)).toEqual(batch(plaintext));
      }
      expect(outcomes.filter((o) => o.after).length).toBeGreaterThanOrEqual(20);
      await expectEachAnsweredOnce(before, 40);
      expect((await transit.transitReadKey({ name })).data.min_decryption_version).toBe(min);
    }
  });
});
