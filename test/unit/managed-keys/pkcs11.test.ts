// The pkcs11 backend (src/managed-keys/pkcs11.ts) against a fake bridge binding: the requests are
// exactly what hsm-bridge/README.md specifies (route, method, JSON body field by field), answers
// become PublicKeyInfo and bytes, and the bridge's refusals and failures become the right
// ManagedKeyErrors (a missing key as ManagedKeyMissing, 4xx as 400, 5xx and an unreachable
// bridge as 502). The real bridge is exercised by test/integration/sys/managed-keys-pkcs11.test.ts.
import { describe, expect, it } from 'vitest';
import { fromBase64, toBase64 } from '../../../src/crypto/encoding';
import { createBackend } from '../../../src/managed-keys/backends';
import { buildEntry } from '../../../src/managed-keys/entry';
import { pkcs11Backend } from '../../../src/managed-keys/pkcs11';
import { ManagedKeyError, ManagedKeyMissing, type BackendDeps, type ManagedKeyEntry } from '../../../src/managed-keys/types';

const URL_BASE = 'https://hsm-bridge.internal:8443';
const PEM = '-----BEGIN PUBLIC KEY-----\nMFkw\n-----END PUBLIC KEY-----\n';

interface Call {
  url: string;
  method: string;
  contentType: string | null;
  body: Record<string, unknown>;
}

/** A fake HSM_BRIDGE binding: records each call and answers with `reply`. */
function fakeBridge(reply: (call: Call) => Response | Promise<Response>) {
  const calls: Call[] = [];
  const authorizations: (string | null)[] = [];
  const hsmBridge = {
    fetch: async (input: RequestInfo | URL, init?: RequestInit) => {
      const req = new Request(input, init);
      const call = { url: req.url, method: req.method, contentType: req.headers.get('content-type'), body: JSON.parse(await req.text()) as Record<string, unknown> };
      authorizations.push(req.headers.get('authorization'));
      calls.push(call);
      return await reply(call);
    },
  };
  return { calls, hsmBridge, authorizations };
}
const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const deps = (hsmBridge: BackendDeps['hsmBridge'], url = URL_BASE): BackendDeps => ({ fetch: () => Promise.reject(new Error('no global fetch')), hsmBridge, hsmBridgeUrl: url });

const entry = (raw: Record<string, unknown>): ManagedKeyEntry =>
  buildEntry({ type: 'pkcs11', name: 'k', raw: { library: 'softhsm', pin: '1234', ...raw }, previous: null, newId: () => '00000000-0000-4000-8000-000000000000' });
const rsaEntry = entry({ token_label: 'tok', key_label: 'rsa', mechanism: '0x0001', key_bits: 2048, allow_generate_key: true });
const ecEntry = entry({ slot: '18446744073709551615', key_id: '0xA1B2', key_label: 'ec', mechanism: '0x1041', curve: 'P-256', allow_generate_key: true, force_rw_session: true, max_parallel: 4 });

/** The key reference every request carries (README: "Fields common to every key operation"). */
const RSA_REF = { library: 'softhsm', token_label: 'tok', pin: '1234', key_label: 'rsa', force_rw_session: false, max_parallel: 1 };
const EC_REF = { library: 'softhsm', slot: '18446744073709551615', pin: '1234', key_label: 'ec', key_id: '0xA1B2', force_rw_session: true, max_parallel: 4 };

async function failure(p: Promise<unknown>): Promise<ManagedKeyError> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(ManagedKeyError);
  return e as ManagedKeyError;
}

describe('requests', () => {
  it('POST /v1/key with the key reference (token label and label); the answer as PublicKeyInfo', async () => {
    const { calls, hsmBridge } = fakeBridge(() => json(200, { key_type: 'rsa', key_bits: 2048, curve: null, key_label: 'rsa', key_id: '0x01', public_key: PEM, slot: '7', token_label: 'tok' }));
    expect(await pkcs11Backend(rsaEntry, deps(hsmBridge)).publicKey()).toEqual({ pem: PEM, keyType: 'rsa', bits: 2048 });
    expect(calls).toEqual([{ url: `${URL_BASE}/v1/key`, method: 'POST', contentType: 'application/json', body: RSA_REF }]);
  });

  it('sends the bridge bearer secret (HSM_BRIDGE_TOKEN) when one is configured, and no Authorization header otherwise', async () => {
    const reply = () => json(200, { key_type: 'rsa', key_bits: 2048, curve: null, public_key: PEM });
    const withToken = fakeBridge(reply);
    await pkcs11Backend(rsaEntry, { ...deps(withToken.hsmBridge), hsmBridgeToken: 's3cret-bearer' }).publicKey();
    expect(withToken.authorizations).toEqual(['Bearer s3cret-bearer']);
    const without = fakeBridge(reply);
    await pkcs11Backend(rsaEntry, deps(without.hsmBridge)).publicKey();
    expect(without.authorizations).toEqual([null]);
  });

  it('names the key by slot (a decimal string beyond 2^53) and id too; EC curves come back as P-256 etc.; a trailing slash of the URL is dropped', async () => {
    const { calls, hsmBridge } = fakeBridge(() => json(200, { key_type: 'ec', key_bits: 256, curve: 'P-256', public_key: PEM }));
    expect(await pkcs11Backend(ecEntry, deps(hsmBridge, `${URL_BASE}/`)).publicKey()).toEqual({ pem: PEM, keyType: 'ec', curve: 'P-256' });
    expect(calls).toEqual([{ url: `${URL_BASE}/v1/key`, method: 'POST', contentType: 'application/json', body: EC_REF }]);
  });

  it('POST /v1/key/generate: key_type and key_bits (RSA) or curve (EC), replace true', async () => {
    const { calls, hsmBridge } = fakeBridge((c) => json(200, c.body.key_type === 'rsa' ? { key_type: 'rsa', key_bits: 2048, curve: null, public_key: PEM } : { key_type: 'ec', key_bits: 384, curve: 'P-384', public_key: PEM }));
    await pkcs11Backend(rsaEntry, deps(hsmBridge)).generate();
    await pkcs11Backend(ecEntry, deps(hsmBridge)).generate();
    expect(calls.map((c) => [c.url, c.body])).toEqual([
      [`${URL_BASE}/v1/key/generate`, { ...RSA_REF, key_type: 'rsa', key_bits: 2048, replace: true }],
      [`${URL_BASE}/v1/key/generate`, { ...EC_REF, key_type: 'ec', curve: 'P256', replace: true }],
    ]);
  });

  it('POST /v1/sign: mechanism 0x0001, 0x000d (with salt_length) or 0x1041, hash, digest in base64; the signature decoded', async () => {
    const signature = new Uint8Array([1, 2, 3, 250]);
    const { calls, hsmBridge } = fakeBridge(() => json(200, { signature: toBase64(signature), mechanism: 'x', hash: 'y' }));
    const digest = new Uint8Array(32).fill(7);
    const d64 = toBase64(digest);
    const rsa = pkcs11Backend(rsaEntry, deps(hsmBridge));
    expect(await rsa.sign(digest, { hash: 'sha2-256' })).toEqual(signature);
    expect(await rsa.sign(digest, { hash: 'sha3-256', pss: true, saltLength: 32 })).toEqual(signature);
    expect(await rsa.sign(digest, { hash: 'sha2-256', pss: true })).toEqual(signature);
    expect(await pkcs11Backend(ecEntry, deps(hsmBridge)).sign(digest, { hash: 'sha2-384' })).toEqual(signature);
    expect(calls.map((c) => [c.url, c.body])).toEqual([
      [`${URL_BASE}/v1/sign`, { ...RSA_REF, mechanism: '0x0001', hash: 'sha2-256', digest: d64 }],
      [`${URL_BASE}/v1/sign`, { ...RSA_REF, mechanism: '0x000d', hash: 'sha3-256', digest: d64, salt_length: 32 }],
      [`${URL_BASE}/v1/sign`, { ...RSA_REF, mechanism: '0x000d', hash: 'sha2-256', digest: d64 }],
      [`${URL_BASE}/v1/sign`, { ...EC_REF, mechanism: '0x1041', hash: 'sha2-384', digest: d64 }],
    ]);
  });

  it('POST /v1/verify: as sign plus the signature in base64; valid true or false', async () => {
    let valid = true;
    const { calls, hsmBridge } = fakeBridge(() => json(200, { valid }));
    const key = pkcs11Backend(ecEntry, deps(hsmBridge));
    const digest = new Uint8Array(48).fill(1);
    const sig = new Uint8Array([48, 6, 2, 1, 1, 2, 1, 1]);
    expect(await key.verify(digest, sig, { hash: 'sha2-384' })).toBe(true);
    valid = false;
    expect(await key.verify(digest, sig, { hash: 'sha2-384' })).toBe(false);
    expect(calls[0]).toEqual({ url: `${URL_BASE}/v1/verify`, method: 'POST', contentType: 'application/json', body: { ...EC_REF, mechanism: '0x1041', hash: 'sha2-384', digest: toBase64(digest), signature: toBase64(sig) } });
  });

  it('POST /v1/encrypt and /v1/decrypt: OAEP (0x0009) with the hash', async () => {
    const { calls, hsmBridge } = fakeBridge((c) => json(200, c.url.endsWith('/v1/encrypt') ? { ciphertext: toBase64(new Uint8Array([9, 9])) } : { plaintext: toBase64(new Uint8Array([1])) }));
    const key = pkcs11Backend(rsaEntry, deps(hsmBridge));
    expect(await key.encrypt(new Uint8Array([1]), { hash: 'sha2-256' })).toEqual(new Uint8Array([9, 9]));
    expect(await key.decrypt(new Uint8Array([9, 9]), { hash: 'sha2-512' })).toEqual(new Uint8Array([1]));
    expect(calls.map((c) => [c.url, c.body])).toEqual([
      [`${URL_BASE}/v1/encrypt`, { ...RSA_REF, mechanism: '0x0009', hash: 'sha2-256', plaintext: 'AQ==' }],
      [`${URL_BASE}/v1/decrypt`, { ...RSA_REF, mechanism: '0x0009', hash: 'sha2-512', ciphertext: 'CQk=' }],
    ]);
  });

  it('is what the backend registry builds for pkcs11', async () => {
    const { calls, hsmBridge } = fakeBridge(() => json(200, { key_type: 'rsa', key_bits: 2048, curve: null, public_key: PEM }));
    await createBackend(rsaEntry, deps(hsmBridge)).publicKey();
    expect(calls).toHaveLength(1);
  });
});

describe('failures', () => {
  it('no binding or no URL: 400 saying so, before any request', async () => {
    for (const d of [deps(undefined), { ...deps(fakeBridge(() => json(200, {})).hsmBridge), hsmBridgeUrl: undefined }]) {
      const e = await failure(Promise.resolve().then(() => pkcs11Backend(rsaEntry, d)));
      expect(e.status).toBe(400);
      expect(e.message).toMatch(/no HSM bridge is bound/);
    }
  });

  it('an unreachable bridge (the binding throws): 502 with the reason', async () => {
    const hsmBridge = { fetch: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.12:8443')) };
    const e = await failure(pkcs11Backend(rsaEntry, deps(hsmBridge)).sign(new Uint8Array(32), { hash: 'sha2-256' }));
    expect(e.status).toBe(502);
    expect(e.message).toBe('the HSM bridge cannot be reached: connect ECONNREFUSED 10.0.0.12:8443');
    expect(e).not.toBeInstanceOf(ManagedKeyMissing);
  });

  it('404 key_not_found and public_key_not_found: ManagedKeyMissing; token_not_found: a plain 400', async () => {
    for (const code of ['key_not_found', 'public_key_not_found']) {
      const { hsmBridge } = fakeBridge(() => json(404, { error: 'no private key matches', code }));
      const e = await failure(pkcs11Backend(rsaEntry, deps(hsmBridge)).publicKey());
      expect(e).toBeInstanceOf(ManagedKeyMissing);
      expect(e.status).toBe(400);
      expect(e.message).toBe(`HSM bridge: no private key matches (${code})`);
    }
    const { hsmBridge } = fakeBridge(() => json(404, { error: 'no initialised token with label "tok"', code: 'token_not_found' }));
    const e = await failure(pkcs11Backend(rsaEntry, deps(hsmBridge)).publicKey());
    expect(e).not.toBeInstanceOf(ManagedKeyMissing);
    expect(e.status).toBe(400);
  });

  it.each([
    [400, 'unknown_library', 400],
    [401, 'CKR_PIN_INCORRECT', 400],
    [403, 'CKR_PIN_LOCKED', 400],
    [409, 'ambiguous_key', 400],
    [413, 'request_too_large', 400],
    [502, 'CKR_DEVICE_ERROR', 502],
    [503, 'library_unavailable', 502],
  ])('bridge %i %s: %i, the message and code passed on', async (status, code, expected) => {
    const { hsmBridge } = fakeBridge(() => json(status, { error: `${code} from C_Something: why`, code }));
    const e = await failure(pkcs11Backend(rsaEntry, deps(hsmBridge)).sign(new Uint8Array(32), { hash: 'sha2-256' }));
    expect(e.status).toBe(expected);
    expect(e.message).toBe(`HSM bridge: ${code} from C_Something: why (${code})`);
    expect(e.message).not.toContain('1234');
  });

  it('answers that are not JSON, or lack the value: 502', async () => {
    const notJson = fakeBridge(() => new Response('<html>bad gateway</html>', { status: 502 }));
    expect((await failure(pkcs11Backend(rsaEntry, deps(notJson.hsmBridge)).publicKey())).status).toBe(502);
    const noSig = fakeBridge(() => json(200, {}));
    const e = await failure(pkcs11Backend(rsaEntry, deps(noSig.hsmBridge)).sign(new Uint8Array(32), { hash: 'sha2-256' }));
    expect(e.status).toBe(502);
    expect(e.message).toBe('the HSM bridge answered without a valid signature');
    const noPub = fakeBridge(() => json(200, { key_type: 'rsa', key_bits: 2048, curve: null, public_key: null }));
    expect((await failure(pkcs11Backend(rsaEntry, deps(noPub.hsmBridge)).publicKey())).status).toBe(400);
  });

  it('decodes base64 exactly', async () => {
    const { hsmBridge } = fakeBridge(() => json(200, { signature: 'AAEC/w==' }));
    expect(await pkcs11Backend(rsaEntry, deps(hsmBridge)).sign(new Uint8Array(32), { hash: 'sha2-256' })).toEqual(fromBase64('AAEC/w=='));
  });
});
