// pkcs11 managed keys against a real HSM bridge (hsm-bridge/) on SoftHSM2, through the Worker:
// the bridge runs in Node (test/global/hsm-bridge-setup.ts) and the Worker reaches it through
// HSM_BRIDGE, a Miniflare network service doing mutual TLS with the client certificate.
// test/sign generates the key when allowed, signs a digest at the HSM, has the HSM verify it, and
// verifies it again with the public key (src/managed-keys/self-test.ts): RSA PKCS#1 v1.5 and PSS,
// ECDSA P-256 and P-384, several hashes. Also: an existing key used without allow_generate_key, a
// missing one refused, the bridge's refusals (wrong PIN, unknown library or token) as Coffer 4xx,
// and the PIN never in a read.
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { api, initCluster, type ApiResult, type Cluster } from '../../helpers/api';

let c: Cluster;
const root = (method: string, path: string, body?: unknown) => api(method, path, { token: c.root, body });

const LIBRARY = inject('hsmBridgeLibrary');
const TOKEN = inject('hsmBridgeTokenLabel');
const SLOT = inject('hsmBridgeSlot');
const PIN = inject('hsmBridgePin');

/** Labels unique to this run, so that a re-run against the same token never finds old keys. */
const run = Math.random().toString(36).slice(2, 8);
const label = (name: string) => `mk-${run}-${name}`;

async function create(name: string, fields: Record<string, unknown>): Promise<void> {
  const r = await root('POST', `sys/managed-keys/pkcs11/${name}`, { library: LIBRARY, token_label: TOKEN, pin: PIN, ...fields });
  if (r.status !== 204) throw new Error(`create ${name}: ${r.status} ${r.text}`);
}
const testSign = (name: string, body: Record<string, unknown> = {}): Promise<ApiResult> => root('POST', `sys/managed-keys/pkcs11/${name}/test/sign`, body);
const ok = (r: ApiResult) => expect({ status: r.status, body: r.text }).toEqual({ status: 204, body: '' });

beforeAll(async () => {
  c = await initCluster();
});

describe('the bridge binding', () => {
  it('is a mutual-TLS binding: the bridge answers through HSM_BRIDGE, and refuses a plain fetch', async () => {
    expect(env.HSM_BRIDGE_URL).toBe(inject('hsmBridgeUrl'));
    expect(env.HSM_BRIDGE_URL).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const health = await env.HSM_BRIDGE!.fetch(`${env.HSM_BRIDGE_URL}/v1/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { libraries: unknown }).libraries).toEqual([
      { name: LIBRARY, loaded: true },
      { name: 'missing', loaded: false },
    ]);
    // Without the binding: no client certificate (and a CA workerd does not trust).
    await expect(fetch(`${env.HSM_BRIDGE_URL}/v1/health`)).rejects.toThrow();
  });
});

describe('test/sign generates the key and signs', () => {
  it('RSA 2048 PKCS#1 v1.5 (0x0001): sha2-256, sha2-384, sha2-512, sha3-256', async () => {
    await create('rsa-pkcs1', { key_label: label('rsa-pkcs1'), mechanism: '0x0001', key_bits: 2048, allow_generate_key: true });
    for (const hash of ['sha2-256', 'sha2-384', 'sha2-512', 'sha3-256']) ok(await testSign('rsa-pkcs1', { hash_algorithm: hash }));
    // The default hash (sha2-256) and PSS with the same key.
    ok(await testSign('rsa-pkcs1'));
    ok(await testSign('rsa-pkcs1', { use_pss: true, hash_algorithm: 'sha2-384' }));
  });

  it('RSA 3072 PSS (0x000D), by slot: sha2-256, sha2-384, sha2-512 (sha3-256: refused by SoftHSM2)', async () => {
    await create('rsa-pss', { token_label: '', slot: SLOT, key_label: label('rsa-pss'), mechanism: '0x000D', key_bits: 3072, allow_generate_key: true });
    for (const hash of ['sha2-256', 'sha2-384', 'sha2-512']) ok(await testSign('rsa-pss', { use_pss: true, hash_algorithm: hash }));
    // SoftHSM2 has no SHA-3 in CK_RSA_PKCS_PSS_PARAMS (PKCS#1 v1.5 with SHA-3 works, above: the
    // bridge builds the DigestInfo itself): the HSM's refusal comes back as a clear 400.
    const sha3 = await testSign('rsa-pss', { use_pss: 'true', hash_algorithm: 'sha3-256' });
    expect(sha3.status).toBe(400);
    expect(sha3.body.errors).toEqual([expect.stringMatching(/^HSM bridge: CKR_ARGUMENTS_BAD from C_SignInit: .*\(CKR_ARGUMENTS_BAD\)$/)]);
    ok(await testSign('rsa-pss', { use_pss: false }));
  });

  it('ECDSA P-256 (0x1041): sha2-256, sha2-384, sha2-512', async () => {
    await create('ec-p256', { key_label: label('ec-p256'), mechanism: '0x1041', curve: 'P256', allow_generate_key: true });
    for (const hash of ['sha2-256', 'sha2-384', 'sha2-512']) ok(await testSign('ec-p256', { hash_algorithm: hash }));
    // PSS is for RSA keys only.
    const pss = await testSign('ec-p256', { use_pss: true });
    expect(pss.status).toBe(400);
    expect(pss.body.errors).toEqual(['use_pss applies only to RSA keys']);
  });

  it('ECDSA P-384 (0x1041, curve given as P-384): sha2-384, sha2-256, sha2-512', async () => {
    await create('ec-p384', { key_label: label('ec-p384'), mechanism: '0x1041', curve: 'P-384', allow_generate_key: true });
    for (const hash of ['sha2-384', 'sha2-256', 'sha2-512']) ok(await testSign('ec-p384', { hash_algorithm: hash }));
  });
});

describe('existing and missing keys', () => {
  it('finds and uses a key that exists when allow_generate_key is false', async () => {
    // Keys made through the entries above; new entries name them without allow_generate_key.
    await create('rsa-existing', { key_label: label('rsa-pkcs1'), mechanism: '0x0001' });
    ok(await testSign('rsa-existing', { hash_algorithm: 'sha2-512' }));
    await create('ec-existing', { key_label: label('ec-p256'), mechanism: '0x1041' });
    ok(await testSign('ec-existing'));
  });

  it('refuses a key that is absent when allow_generate_key is false', async () => {
    await create('absent', { key_label: label('absent'), mechanism: '0x0001' });
    const r = await testSign('absent');
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['managed key "absent": no key was found in the pkcs11 backend, and allow_generate_key is false']);
    // Nothing was generated: it is still absent.
    expect((await testSign('absent')).body.errors).toEqual(r.body.errors);
  });
});

describe("the bridge's refusals", () => {
  it('a wrong PIN: 400 naming CKR_PIN_INCORRECT; the right PIN still works afterwards', async () => {
    await create('wrong-pin', { key_label: label('ec-p256'), mechanism: '0x1041', pin: 'not-the-pin-4d1e' });
    const r = await testSign('wrong-pin');
    expect(r.status).toBe(400);
    expect(r.body.errors).toHaveLength(1);
    expect(r.body.errors[0]).toMatch(/CKR_PIN_INCORRECT/);
    expect(r.text).not.toContain('not-the-pin-4d1e');
    ok(await testSign('ec-existing'));
  });

  it('an unknown library: 400', async () => {
    await create('no-library', { library: 'no-such-library', key_label: label('ec-p256'), mechanism: '0x1041' });
    const r = await testSign('no-library');
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/unknown_library/);
  });

  it('a library the bridge could not load: 502', async () => {
    await create('unloaded-library', { library: 'missing', key_label: label('ec-p256'), mechanism: '0x1041' });
    const r = await testSign('unloaded-library');
    expect(r.status).toBe(502);
    expect(r.body.errors[0]).toMatch(/library_unavailable/);
  });

  it('an unknown token: 400', async () => {
    await create('no-token', { token_label: 'no-such-token', key_label: label('ec-p256'), mechanism: '0x1041' });
    const r = await testSign('no-token');
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/token_not_found/);
  });
});

describe('the read view', () => {
  it('never shows the PIN', async () => {
    for (const name of ['rsa-pkcs1', 'rsa-pss', 'ec-p256', 'wrong-pin']) {
      const r = await root('GET', `sys/managed-keys/pkcs11/${name}`);
      expect(r.status).toBe(200);
      expect(r.body.data.pin).toBe('redacted');
      expect(r.text).not.toContain(PIN);
      expect(r.text).not.toContain('not-the-pin-4d1e');
    }
  });
});
