// Handlers handed off to the Worker (src/pipeline/offload.ts), through the Worker as clients call
// it: which requests are granted, settled, answered first or finished in the object (the counters
// of sys/metrics), that refusals and errors stay the object's, that audit devices see each request
// once, and that PKI roles that store certificates go back to the object.
import { beforeAll, describe, expect, it } from 'vitest';
import { api, caller, initCluster, PERMISSION_DENIED, type Cluster } from '../../helpers/api';
import { sink, sinkURL } from '../../helpers/audit-sink';

let c: Cluster;
const { call, ok } = caller(() => c.root);
const b64 = (s: string) => btoa(s);

interface Counts {
  granted: number;
  settled: number;
  resumed: number;
  stale: number;
  /** Answered first: the outcome the Worker computed before it sent the request was taken. */
  answered: number;
  /** Computed first but not taken (the state or the caller's resolution changed): run in the object. */
  recomputed: number;
}

const NAMES = ['granted', 'settled', 'resumed', 'stale', 'answered', 'recomputed'] as const;

/** The offload counters of one mount. */
async function counts(mount: string): Promise<Counts> {
  const list = (await ok('GET', 'sys/metrics')).body.Counters as Array<{ Name: string; Count: number; Labels: Record<string, string> }>;
  const of = (name: string) => list.find((e) => e.Name === `coffer.offload.${name}` && e.Labels.mount === mount)?.Count ?? 0;
  return Object.fromEntries(NAMES.map((n) => [n, of(n)])) as unknown as Counts;
}

/** What happened to `mount`'s counters while `f` ran. */
async function delta(mount: string, f: () => Promise<unknown>): Promise<Counts> {
  const before = await counts(mount);
  await f();
  const after = await counts(mount);
  return Object.fromEntries(NAMES.map((n) => [n, after[n] - before[n]])) as unknown as Counts;
}

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/transit', { type: 'transit' });
  await ok('POST', 'transit/keys/aes', {});
  await ok('POST', 'transit/keys/ec', { type: 'ecdsa-p256' });
});

describe('transit', () => {
  it('runs every crypto path in the Worker: each request granted and settled (or, repeated, answered first), none finished in the object', async () => {
    let ciphertext = '';
    const d = await delta('transit/', async () => {
      ciphertext = (await ok('POST', 'transit/encrypt/aes', { plaintext: b64('hello') })).body.data.ciphertext;
      expect((await ok('POST', 'transit/decrypt/aes', { ciphertext })).body.data.plaintext).toBe(b64('hello'));
      expect((await ok('POST', 'transit/rewrap/aes', { ciphertext })).body.data.ciphertext).toMatch(/^vault:v1:/);
      expect((await ok('POST', 'transit/datakey/plaintext/aes', {})).body.data.plaintext).toMatch(/^[A-Za-z0-9+/]{43}=$/);
      const hmac = (await ok('POST', 'transit/hmac/aes', { input: b64('m') })).body.data.hmac;
      expect((await ok('POST', 'transit/verify/aes', { input: b64('m'), hmac })).body.data.valid).toBe(true);
      const signature = (await ok('POST', 'transit/sign/ec', { input: b64('m') })).body.data.signature;
      expect((await ok('POST', 'transit/verify/ec', { input: b64('m'), signature })).body.data.valid).toBe(true);
      expect((await ok('POST', 'transit/verify/ec', { input: b64('other'), signature })).body.data.valid).toBe(false);
    });
    // The second verify/ec comes from the same caller on the same path: computed first, one call.
    expect(d).toEqual({ granted: 8, settled: 8, resumed: 0, stale: 0, answered: 1, recomputed: 0 });
  });

  it('answers a handler\'s errors from the Worker exactly as the object would', async () => {
    const d = await delta('transit/', async () => {
      const bad = await call('POST', 'transit/decrypt/aes', { ciphertext: 'vault:v1:AAAA' });
      expect(bad.status).toBe(400);
      expect(bad.body.errors).toEqual(['cipher: message authentication failed']);
      const missing = await call('POST', 'transit/decrypt/aes', { ciphertext: null });
      expect(missing.status).toBe(400);
      const unknown = await call('POST', 'transit/sign/no-such-key', { input: b64('m') });
      expect(unknown.status).toBe(400);
      expect(unknown.body.errors).toEqual(['signing key not found']);
    });
    // decrypt/aes was granted to this caller before: its errors are computed first and taken.
    expect(d).toEqual({ granted: 1, settled: 1, resumed: 0, stale: 0, answered: 2, recomputed: 0 });
  });

  it('keeps authorisation in the object: a refused request is never granted', async () => {
    await ok('PUT', 'sys/policies/acl/encrypt-only', { policy: 'path "transit/encrypt/aes" { capabilities = ["update"] }' });
    const token = (await ok('POST', 'auth/token/create', { policies: ['encrypt-only'] })).body.auth.client_token;
    const d = await delta('transit/', async () => {
      const denied = await api('POST', 'transit/decrypt/aes', { token, body: { ciphertext: 'vault:v1:AAAA' } });
      expect(denied.status).toBe(403);
      expect(denied.body.errors).toEqual([PERMISSION_DENIED]);
      expect((await api('POST', 'transit/encrypt/aes', { token, body: { plaintext: b64('x') } })).status).toBe(200);
      // Without create on a missing key, the update answers as Vault does.
      expect((await api('POST', 'transit/encrypt/aes', { token: 'not-a-token', body: { plaintext: b64('x') } })).status).toBe(403);
    });
    expect(d).toEqual({ granted: 1, settled: 1, resumed: 0, stale: 0, answered: 0, recomputed: 0 });
  });

  it('finishes an encrypt that creates its key (upsert) in the object, then hands the key\'s requests off', async () => {
    const first = await delta('transit/', async () => {
      expect((await ok('POST', 'transit/encrypt/made-by-upsert', { plaintext: b64('x') })).body.data.ciphertext).toMatch(/^vault:v1:/);
    });
    expect(first).toEqual({ granted: 1, settled: 0, resumed: 1, stale: 0, answered: 0, recomputed: 0 });
    expect((await ok('GET', 'transit/keys/made-by-upsert')).body.data.latest_version).toBe(1);
    // The resumed request wrote (the object's stamp moved): the Worker does not keep sending the path there.
    expect(await delta('transit/', () => ok('POST', 'transit/encrypt/made-by-upsert', { plaintext: b64('z') }))).toEqual({ granted: 1, settled: 1, resumed: 0, stale: 0, answered: 0, recomputed: 0 });
  });

  it('does not hand off a response-wrapped request (the wrapping token is stored by the object)', async () => {
    const d = await delta('transit/', async () => {
      const r = await api('POST', 'transit/encrypt/aes', { token: c.root, body: { plaintext: b64('w') }, headers: { 'X-Vault-Wrap-TTL': '60' } });
      expect(r.status).toBe(200);
      expect(r.body.wrap_info.token).toMatch(/^hvs\./);
    });
    expect(d).toEqual({ granted: 0, settled: 0, resumed: 0, stale: 0, answered: 0, recomputed: 0 });
  });
});

describe('answer first (a caller repeating a request: the Worker computes, the object takes the outcome in one call)', () => {
  it('takes no outcome computed under a state that changed: after a rotation, the next encrypt is v2', async () => {
    await ok('POST', 'transit/keys/first', {});
    const encrypt = () => ok('POST', 'transit/encrypt/first', { plaintext: b64('p') });
    expect(await delta('transit/', encrypt)).toEqual({ granted: 1, settled: 1, resumed: 0, stale: 0, answered: 0, recomputed: 0 });
    let ciphertext = '';
    expect(await delta('transit/', async () => (ciphertext = (await encrypt()).body.data.ciphertext))).toEqual({ granted: 0, settled: 0, resumed: 0, stale: 0, answered: 1, recomputed: 0 });
    expect(ciphertext).toMatch(/^vault:v1:/);
    expect((await ok('POST', 'transit/decrypt/first', { ciphertext })).body.data.plaintext).toBe(b64('p'));
    await ok('POST', 'transit/keys/first/rotate', {});
    // The Worker still holds v1 and computes with it; the object's state moved, so it encrypts itself.
    expect(await delta('transit/', async () => (ciphertext = (await encrypt()).body.data.ciphertext))).toEqual({ granted: 0, settled: 0, resumed: 0, stale: 0, answered: 0, recomputed: 1 });
    expect(ciphertext).toMatch(/^vault:v2:/);
    // The Worker dropped that state: a grant brings the new one, then one call again.
    expect(await delta('transit/', async () => expect((await encrypt()).body.data.ciphertext).toMatch(/^vault:v2:/))).toEqual({ granted: 1, settled: 1, resumed: 0, stale: 0, answered: 0, recomputed: 0 });
    expect(await delta('transit/', async () => expect((await encrypt()).body.data.ciphertext).toMatch(/^vault:v2:/))).toEqual({ granted: 0, settled: 0, resumed: 0, stale: 0, answered: 1, recomputed: 0 });
  });

  it('keeps authorisation in the object: a withdrawn policy and a revoked token are refused, never answered', async () => {
    await ok('PUT', 'sys/policies/acl/sign-first', { policy: 'path "transit/sign/ec" { capabilities = ["update"] }' });
    const created = (await ok('POST', 'auth/token/create', { policies: ['sign-first'] })).body.auth;
    const sign = () => api('POST', 'transit/sign/ec', { token: created.client_token, body: { input: b64('m') } });
    expect((await sign()).status).toBe(200);
    expect(await delta('transit/', async () => expect((await sign()).status).toBe(200))).toEqual({ granted: 0, settled: 0, resumed: 0, stale: 0, answered: 1, recomputed: 0 });
    await ok('PUT', 'sys/policies/acl/sign-first', { policy: 'path "transit/verify/ec" { capabilities = ["update"] }' });
    const denied = await sign();
    expect(denied.status).toBe(403);
    expect(denied.body.errors).toEqual([PERMISSION_DENIED]);
    expect(denied.body.data).toBeUndefined();
    await ok('PUT', 'sys/policies/acl/sign-first', { policy: 'path "transit/sign/ec" { capabilities = ["update"] }' });
    expect((await sign()).status).toBe(200);
    expect(await delta('transit/', async () => expect((await sign()).status).toBe(200))).toEqual({ granted: 0, settled: 0, resumed: 0, stale: 0, answered: 1, recomputed: 0 });
    await ok('POST', 'auth/token/revoke-accessor', { accessor: created.accessor });
    const revoked = await sign();
    expect(revoked.status).toBe(403);
    expect(revoked.body.data).toBeUndefined();
  });
});

describe('audit devices', () => {
  beforeAll(async () => {
    const r = await ok('PUT', 'sys/audit/offload', { type: 'http', options: { url: sinkURL('offload') } });
    expect(r.status).toBe(204);
  });

  const entriesOf = async (id: string) => (await sink('offload')).entries.filter((e) => e.request.id === id);

  it('record one request and one response entry for a request the Worker ran', async () => {
    const r = await ok('POST', 'transit/encrypt/aes', { plaintext: b64('audited') });
    const entries = await entriesOf(r.body.request_id);
    expect(entries.map((e) => e.type)).toEqual(['request', 'response']);
    expect(entries[1].response.data.ciphertext).toMatch(/^hmac-sha256:/);
    expect(entries[0].request.path).toBe('transit/encrypt/aes');
  });

  it('record an error the Worker answered, once', async () => {
    const r = await call('POST', 'transit/decrypt/aes', { ciphertext: 'vault:v1:AAAA' });
    expect(r.status).toBe(400);
    const all = (await sink('offload')).entries;
    const answered = all.filter((e) => e.type === 'response' && e.request.path === 'transit/decrypt/aes' && e.error === 'cipher: message authentication failed').at(-1);
    expect(answered).toBeDefined();
    expect(all.filter((e) => e.request.id === answered.request.id).map((e) => e.type)).toEqual(['request', 'response']);
  });

  it('record one request and one response entry for a request answered first (the response goes to the object)', async () => {
    const encrypt = () => ok('POST', 'transit/encrypt/aes', { plaintext: b64('first') });
    // The caller's last grant predates the device: whatever the Worker computed, the object records a
    // response it has, so it runs the request itself; the grant after brings the new resolution.
    await encrypt();
    await encrypt();
    let id = '';
    expect(await delta('transit/', async () => (id = (await encrypt()).body.request_id))).toEqual({ granted: 0, settled: 0, resumed: 0, stale: 0, answered: 1, recomputed: 0 });
    const entries = await entriesOf(id);
    expect(entries.map((e) => e.type)).toEqual(['request', 'response']);
    expect(entries[1].response.data.ciphertext).toMatch(/^hmac-sha256:/);
  });

  it('record a request finished in the object once (its request entry is not repeated)', async () => {
    const r = await ok('POST', 'transit/encrypt/upsert-audited', { plaintext: b64('x') });
    const entries = await entriesOf(r.body.request_id);
    expect(entries.map((e) => e.type)).toEqual(['request', 'response']);
  });
});

describe('PKI', () => {
  beforeAll(async () => {
    await ok('POST', 'sys/mounts/pki', { type: 'pki', config: { max_lease_ttl: '87600h' } });
    await ok('POST', 'pki/root/generate/internal', { common_name: 'Offload Root', key_type: 'ec', ttl: '8760h' });
    await ok('POST', 'pki/roles/fast', { allowed_domains: 'example.com', allow_subdomains: true, key_type: 'ec', no_store: true, ttl: '1h' });
    await ok('POST', 'pki/roles/kept', { allowed_domains: 'example.com', allow_subdomains: true, key_type: 'ec', ttl: '1h' });
  });

  const stored = async (serial: string) => (await call('GET', `pki/cert/${serial}`)).status === 200;

  it('issues under a no_store role in the Worker; the certificate is not stored', async () => {
    let serial = '';
    const d = await delta('pki/', async () => {
      const r = await ok('POST', 'pki/issue/fast', { common_name: 'a.example.com' });
      serial = r.body.data.serial_number;
      expect(r.body.data.certificate).toContain('BEGIN CERTIFICATE');
      expect(r.body.data.private_key_type).toBe('ec');
    });
    expect(d).toEqual({ granted: 1, settled: 1, resumed: 0, stale: 0, answered: 0, recomputed: 0 });
    expect(await stored(serial)).toBe(false);
  });

  it('finishes a storing role\'s issue in the object, and does not hand that path off again', async () => {
    const first = await delta('pki/', () => ok('POST', 'pki/issue/kept', { common_name: 'b.example.com' }));
    expect(first).toEqual({ granted: 1, settled: 0, resumed: 1, stale: 0, answered: 0, recomputed: 0 });
    let serial = '';
    const second = await delta('pki/', async () => {
      serial = (await ok('POST', 'pki/issue/kept', { common_name: 'c.example.com' })).body.data.serial_number;
    });
    expect(second).toEqual({ granted: 0, settled: 0, resumed: 0, stale: 0, answered: 0, recomputed: 0 });
    expect(await stored(serial)).toBe(true);
  });

  it('keeps grants current across stored certificates, and sees a role change at once', async () => {
    // A stored issue writes under certs/ (volatile for grants): the no_store path keeps its state.
    const fast = (name: string) => delta('pki/', () => ok('POST', 'pki/issue/fast', { common_name: `${name}.example.com` }));
    // issue/fast was granted to this caller before: answered first, under a state that stays.
    expect(await fast('d')).toEqual({ granted: 0, settled: 0, resumed: 0, stale: 0, answered: 1, recomputed: 0 });
    await ok('POST', 'pki/issue/kept', { common_name: 'e.example.com' });
    expect(await fast('f')).toEqual({ granted: 0, settled: 0, resumed: 0, stale: 0, answered: 1, recomputed: 0 });
    await ok('POST', 'pki/roles/fast', { allowed_domains: 'example.org', key_type: 'ec', no_store: true, ttl: '1h' });
    // The Worker still computes it under the old role (which allowed the name): the object does not take it.
    const d = await delta('pki/', async () => {
      const refused = await call('POST', 'pki/issue/fast', { common_name: 'g.example.com' });
      expect(refused.status).toBe(400);
      expect(refused.body.errors[0]).toContain('g.example.com');
    });
    expect(d).toEqual({ granted: 0, settled: 0, resumed: 0, stale: 0, answered: 0, recomputed: 1 });
    // Its state is over: the next request takes a grant again.
    expect(await delta('pki/', () => call('POST', 'pki/issue/fast', { common_name: 'h.example.org' }))).toEqual({ granted: 1, settled: 1, resumed: 0, stale: 0, answered: 0, recomputed: 0 });
  });
});
