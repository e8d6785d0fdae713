// The cloudckms backend (src/managed-keys/gcpckms.ts and gcp-*.ts) called directly: what the
// configuration cannot reach through sys/managed-keys yet (RSA_DECRYPT_OAEP_* keys: local OAEP
// encryption, asymmetricDecrypt with CRC32Cs, against the Cloud KMS emulator), the JWT-bearer grant
// as sent (header and claims), the public endpoint when no override is bound, retries of network
// failures, token reuse per credential, and the token endpoint's failures.
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { gcpCkmsBackend } from '../../../src/managed-keys/gcpckms';
import { ManagedKeyError, ManagedKeyMissing, type BackendDeps, type GcpCkmsConfig, type ManagedKeyEntry } from '../../../src/managed-keys/types';
import { gcpKmsEmulator, type ServiceAccountKeyFile } from '../../emulators/gcp-kms/client';

const KMS_URL = inject('gcpKmsUrl');
const emu = gcpKmsEmulator(KMS_URL);
const PROJECT = 'unit-gcpckms';
let sa: ServiceAccountKeyFile;

function entry(config: Partial<GcpCkmsConfig>, credentials: unknown = sa): ManagedKeyEntry {
  return {
    uuid: crypto.randomUUID(),
    name: 'k',
    type: 'cloudckms',
    allowGenerateKey: true,
    allowReplaceKey: false,
    allowStoreKey: false,
    anyMount: true,
    usages: ['encrypt', 'decrypt', 'sign', 'verify'],
    config: { credentials: JSON.stringify(credentials), project: PROJECT, region: 'global', key_ring: 'ring', crypto_key: 'k', crypto_key_version: '1', algorithm: 'EC_SIGN_P256_SHA256', ...config },
  };
}

interface Seen {
  url: string;
  method: string;
  body: string;
}
/** fetch to the emulator, recording each request. */
function recording(through: BackendDeps['fetch'] = (i, init) => fetch(i, init)) {
  const seen: Seen[] = [];
  const deps: BackendDeps = {
    fetch: async (input, init) => {
      const req = new Request(input, init);
      seen.push({ url: req.url, method: req.method, body: new TextDecoder().decode(await req.clone().arrayBuffer()) });
      return await through(req);
    },
    endpoints: { googleCloudKms: KMS_URL },
  };
  return { seen, deps };
}
const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const tokenAnswer = () => json(200, { access_token: 'ya29.fake', expires_in: 3599, token_type: 'Bearer' });
const fromB64Url = (s: string) => JSON.parse(atob(s.replace(/-/g, '+').replace(/_/g, '/'))) as Record<string, unknown>;
const der = (pem: string) => Uint8Array.from(atob(pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '')), (ch) => ch.charCodeAt(0));

beforeAll(async () => {
  await emu.reset(PROJECT, { generationDelayMs: 50 });
  sa = await emu.serviceAccount({ project: PROJECT, name: 'unit' });
  await emu.keyRing(PROJECT, 'global', 'ring');
});

describe('RSA_DECRYPT_OAEP keys', () => {
  it('generates an ASYMMETRIC_DECRYPT key; encrypts here, decrypts at Cloud KMS (SHA-256, SHA-1)', async () => {
    for (const [algorithm, hash, webHash] of [
      ['RSA_DECRYPT_OAEP_2048_SHA256', 'sha2-256', 'SHA-256'],
      ['RSA_DECRYPT_OAEP_2048_SHA1', 'sha1', 'SHA-1'],
    ] as const) {
      const key = gcpCkmsBackend(entry({ crypto_key: algorithm.toLowerCase(), algorithm }), recording().deps);
      await expect(key.publicKey()).rejects.toBeInstanceOf(ManagedKeyMissing);
      const info = await key.generate();
      expect(info).toMatchObject({ keyType: 'rsa', bits: 2048 });
      const state = await emu.state(PROJECT);
      expect(state.keyRings[0].cryptoKeys.find((k) => k.algorithm === algorithm)).toMatchObject({ purpose: 'ASYMMETRIC_DECRYPT', protectionLevel: 'SOFTWARE' });

      const plaintext = new TextEncoder().encode(`secret for ${algorithm}`);
      const ciphertext = await key.encrypt(plaintext, { hash });
      expect(await key.decrypt(ciphertext, { hash })).toEqual(plaintext);
      // A ciphertext made with WebCrypto alone decrypts the same way.
      const web = await crypto.subtle.importKey('spki', der(info.pem), { name: 'RSA-OAEP', hash: webHash }, false, ['encrypt']);
      const other = new Uint8Array(await crypto.subtle.encrypt({ name: 'RSA-OAEP' }, web, plaintext));
      expect(await key.decrypt(other, { hash })).toEqual(plaintext);
      // An empty plaintext (left out of Google's JSON).
      expect(await key.decrypt(await key.encrypt(new Uint8Array(0), { hash }), { hash })).toEqual(new Uint8Array(0));
    }
  });

  it("refuses another hash, signing, and Cloud KMS's refusal of a bad ciphertext", async () => {
    const key = gcpCkmsBackend(entry({ crypto_key: 'rsa_decrypt_oaep_2048_sha256', algorithm: 'RSA_DECRYPT_OAEP_2048_SHA256' }), recording().deps);
    await expect(key.encrypt(new Uint8Array(4), { hash: 'sha2-512' })).rejects.toThrow('Google Cloud KMS algorithm RSA_DECRYPT_OAEP_2048_SHA256 uses OAEP with sha2-256 only, not sha2-512');
    await expect(key.sign(new Uint8Array(32), { hash: 'sha2-256' })).rejects.toThrow('Google Cloud KMS algorithm RSA_DECRYPT_OAEP_2048_SHA256 decrypts: it cannot sign or verify');
    await expect(key.decrypt(new Uint8Array(256), { hash: 'sha2-256' })).rejects.toMatchObject({ status: 400, message: 'Google Cloud KMS: INVALID_ARGUMENT (HTTP 400): Decryption failed: the ciphertext is invalid.' });
    await expect(key.encrypt(new Uint8Array(300), { hash: 'sha2-256' })).rejects.toThrow(/too long for RSA-OAEP/);
  });

  it('a plaintext whose CRC32C does not match: 502', async () => {
    const key = gcpCkmsBackend(entry({ crypto_key: 'rsa_decrypt_oaep_2048_sha256', algorithm: 'RSA_DECRYPT_OAEP_2048_SHA256' }), recording().deps);
    const ciphertext = await key.encrypt(new Uint8Array([1, 2, 3]), { hash: 'sha2-256' });
    await emu.faults(PROJECT, [{ rpc: 'AsymmetricDecrypt', corrupt: true }]);
    await expect(key.decrypt(ciphertext, { hash: 'sha2-256' })).rejects.toMatchObject({ status: 502, message: 'the plaintext from Google Cloud KMS was corrupted on its way (CRC32C mismatch)' });
  });

  it('signing keys do not encrypt', async () => {
    const key = gcpCkmsBackend(entry({ crypto_key: 'ec', algorithm: 'EC_SIGN_P256_SHA256' }), recording().deps);
    await expect(key.encrypt(new Uint8Array(4), { hash: 'sha2-256' })).rejects.toThrow('Google Cloud KMS algorithm EC_SIGN_P256_SHA256 signs: encryption needs an RSA_DECRYPT_OAEP_* key');
  });
});

describe('the token request', () => {
  it('is a JWT-bearer grant: RS256 with the key id; iss, scope, aud = token_uri, an hour long', async () => {
    const fresh = await emu.serviceAccount({ project: PROJECT, name: 'grant-check' });
    const { seen, deps } = recording();
    await expect(gcpCkmsBackend(entry({ crypto_key: 'nothing-here' }, fresh), deps).publicKey()).rejects.toBeInstanceOf(ManagedKeyMissing);
    expect(seen[0]).toMatchObject({ url: fresh.token_uri, method: 'POST' });
    const form = new URLSearchParams(seen[0].body);
    expect([...form.keys()].sort()).toEqual(['assertion', 'grant_type']);
    expect(form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    const [header, claims] = form.get('assertion')!.split('.').slice(0, 2).map(fromB64Url);
    expect(header).toEqual({ alg: 'RS256', typ: 'JWT', kid: fresh.private_key_id });
    expect(claims).toEqual({ iss: fresh.client_email, scope: 'https://www.googleapis.com/auth/cloudkms', aud: fresh.token_uri, iat: expect.any(Number), exp: (claims.iat as number) + 3600 });
    expect(Math.abs((claims.iat as number) - Date.now() / 1000)).toBeLessThan(60);
    // Then Cloud KMS, with the token: the version's public key, and why it is missing.
    expect(seen.slice(1).map((s) => `${s.method} ${s.url}`)).toEqual([
      `GET ${KMS_URL}/v1/projects/${PROJECT}/locations/global/keyRings/ring/cryptoKeys/nothing-here/cryptoKeyVersions/1/publicKey`,
      `GET ${KMS_URL}/v1/projects/${PROJECT}/locations/global/keyRings/ring/cryptoKeys/nothing-here`,
    ]);
  });

  it('one token per credential, reused by later backends; another key of the account gets its own', async () => {
    const fresh = await emu.serviceAccount({ project: PROJECT, name: 'reuse' });
    const { seen, deps } = recording();
    for (let i = 0; i < 3; i++) await expect(gcpCkmsBackend(entry({ crypto_key: 'nothing-here' }, fresh), deps).publicKey()).rejects.toBeInstanceOf(ManagedKeyMissing);
    expect(seen.filter((s) => s.url === fresh.token_uri)).toHaveLength(1);
    const secondKey = await emu.serviceAccount({ project: PROJECT, name: 'reuse' });
    await expect(gcpCkmsBackend(entry({ crypto_key: 'nothing-here' }, secondKey), deps).publicKey()).rejects.toBeInstanceOf(ManagedKeyMissing);
    expect(seen.filter((s) => s.url === fresh.token_uri)).toHaveLength(2);
  });

  it("Google's failures: a 5xx is a 502, an answer without a token a 502; a PEM that is no key a 400 without it", async () => {
    const fake = (tokenStatus: number, tokenBody: string) => ({
      fetch: async () => new Response(tokenBody, { status: tokenStatus }),
      endpoints: { googleCloudKms: 'https://kms.invalid' },
    });
    const fresh = await emu.serviceAccount({ project: PROJECT, name: 'failures' });
    await expect(gcpCkmsBackend(entry({}, fresh), fake(503, '{"error":"internal_failure","error_description":"Backend Error"}')).publicKey()).rejects.toMatchObject({
      status: 502,
      message: `Google refused a token for ${fresh.client_email} (HTTP 503): internal_failure: Backend Error`,
    });
    await expect(gcpCkmsBackend(entry({}, fresh), fake(200, '<html>captive portal</html>')).publicKey()).rejects.toMatchObject({
      status: 502,
      message: `Google's token endpoint answered HTTP 200 without an access token`,
    });
    const broken = { ...fresh, private_key: '-----BEGIN PRIVATE KEY-----\nMIIBVQIBADANBgkqhkiG9w0BAQEFAASCAT8wggE7AgEAAkEAzzz\n-----END PRIVATE KEY-----\n' };
    const e = await gcpCkmsBackend(entry({}, broken), fake(200, '{}'))
      .publicKey()
      .catch((x: unknown) => x);
    expect(e).toBeInstanceOf(ManagedKeyError);
    expect((e as ManagedKeyError).status).toBe(400);
    expect((e as Error).message).toBe(`"credentials": the private_key of ${fresh.client_email} is not a PKCS#8 RSA key`);
  });
});

describe('Cloud KMS endpoint and transport', () => {
  it('without GOOGLE_CLOUDKMS_URL: https://cloudkms.googleapis.com/v1/...', async () => {
    const urls: string[] = [];
    const fresh = await emu.serviceAccount({ project: PROJECT, name: 'public-endpoint' });
    const deps: BackendDeps = {
      fetch: async (input) => {
        const url = new Request(input).url;
        urls.push(url);
        if (url === fresh.token_uri) return tokenAnswer();
        return json(404, { error: { code: 404, message: 'not found', status: 'NOT_FOUND' } });
      },
    };
    await expect(gcpCkmsBackend(entry({ crypto_key: 'k', crypto_key_version: '7' }, fresh), deps).publicKey()).rejects.toBeInstanceOf(ManagedKeyMissing);
    expect(urls.slice(1)).toEqual([
      `https://cloudkms.googleapis.com/v1/projects/${PROJECT}/locations/global/keyRings/ring/cryptoKeys/k/cryptoKeyVersions/7/publicKey`,
      `https://cloudkms.googleapis.com/v1/projects/${PROJECT}/locations/global/keyRings/ring/cryptoKeys/k`,
    ]);
  });

  it('network failures are tried twice more, then a 502', async () => {
    const fresh = await emu.serviceAccount({ project: PROJECT, name: 'flaky' });
    let failures = 0;
    const flaky = (n: number): BackendDeps['fetch'] => async (input, init) => {
      const req = new Request(input, init);
      if (req.url.startsWith(`${KMS_URL}/v1/`) && failures < n) {
        failures++;
        throw new TypeError('Network connection lost.');
      }
      return await fetch(req);
    };
    const signer = gcpCkmsBackend(entry({ crypto_key: 'ec', algorithm: 'EC_SIGN_P256_SHA256' }, fresh), recording(flaky(2)).deps);
    expect(await signer.generate()).toMatchObject({ keyType: 'ec', curve: 'P-256' });
    expect(failures).toBe(2);
    failures = 0;
    const down = gcpCkmsBackend(entry({ crypto_key: 'ec', algorithm: 'EC_SIGN_P256_SHA256' }, fresh), recording(flaky(3)).deps);
    await expect(down.publicKey()).rejects.toMatchObject({ status: 502, message: `Google Cloud KMS (${KMS_URL}) cannot be reached: Network connection lost.` });
  });

  it('verifies locally; a signature of another digest does not verify', async () => {
    const key = gcpCkmsBackend(entry({ crypto_key: 'ec', algorithm: 'EC_SIGN_P256_SHA256' }), recording().deps);
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode('m')));
    const signature = await key.sign(digest, { hash: 'sha2-256' });
    expect(await key.verify(digest, signature, { hash: 'sha2-256' })).toBe(true);
    expect(await key.verify(new Uint8Array(32), signature, { hash: 'sha2-256' })).toBe(false);
    await expect(key.sign(new Uint8Array(20), { hash: 'sha2-256' })).rejects.toThrow('a sha2-256 digest is 32 bytes, not 20');
  });
});
