// gcpckms (cloudckms) managed keys against the Cloud KMS emulator (test/emulators/gcp-kms, bound as
// GOOGLE_CLOUDKMS_URL), through the Worker. The emulator checks Google's authentication itself:
// the backend's JWT-bearer grant (signature with the account's public key, audience, lifetime,
// scope) and its bearer tokens, and the account's permissions on the project.
// test/sign generates the crypto key (in an existing key ring) when allowed — every algorithm the
// configuration accepts, with its one hash and padding — and the emulator shows what was created
// and how (polling the version out of PENDING_GENERATION, CRC32C on every payload). Also: keys
// that exist, keys and key rings that do not, later versions, algorithm and state mismatches,
// wrong credentials (no key material in any message), retries and corrupted answers, token reuse
// and renewal, the read view; then transit managed_key keys and a PKI root on these keys, their
// signatures checked with WebCrypto / @peculiar/x509 against the public key the emulator holds.
import { env } from 'cloudflare:test';
import { ECDSASigValue } from '@peculiar/asn1-ecc';
import { AsnConvert } from '@peculiar/asn1-schema';
import { X509Certificate } from '@peculiar/x509';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { caller, initCluster, type Cluster } from '../../helpers/api';
import { gcpKmsEmulator, type CallRecord, type ServiceAccountKeyFile } from '../../emulators/gcp-kms/client';

let c: Cluster;
const { call, ok } = caller(() => c.root);

const KMS_URL = inject('gcpKmsUrl');
const emu = gcpKmsEmulator(KMS_URL);
/** This file's projects: no other test file uses them. */
const PROJECT = 'it-gcpckms-main';
const OTHER = 'it-gcpckms-other';
const LOCATION = 'global';
const RING = `projects/${PROJECT}/locations/${LOCATION}/keyRings/ring`;
const keyName = (id: string, ring = RING) => `${ring}/cryptoKeys/${id}`;

let sa: ServiceAccountKeyFile;

async function create(name: string, fields: Record<string, unknown>, credentials: unknown = sa): Promise<void> {
  const r = await call('POST', `sys/managed-keys/gcpckms/${name}`, { credentials: JSON.stringify(credentials), project: PROJECT, region: LOCATION, key_ring: 'ring', ...fields });
  if (r.status !== 204) throw new Error(`create ${name}: ${r.status} ${r.text}`);
}
const testSign = (name: string, body: Record<string, unknown> = {}) => call('POST', `sys/managed-keys/gcpckms/${name}/test/sign`, body);
const signs = async (name: string, body: Record<string, unknown> = {}) => {
  const r = await testSign(name, body);
  expect({ status: r.status, body: r.text }).toEqual({ status: 204, body: '' });
};
const refused = async (name: string, body: Record<string, unknown>, status: number, message: string | RegExp) => {
  const r = await testSign(name, body);
  expect({ status: r.status, errors: r.body?.errors }).toEqual({ status, errors: [typeof message === 'string' ? message : expect.stringMatching(message)] });
  return r;
};

/** The emulator's view of a crypto key. */
async function emulated(id: string, ring = RING) {
  const state = await emu.state(PROJECT);
  return state.keyRings.find((r) => r.name === ring)?.cryptoKeys.find((k) => k.name === keyName(id, ring));
}
const callsOn = (calls: CallRecord[], id: string) => calls.filter((x) => x.name.startsWith(keyName(id)) || x.query?.includes(`cryptoKeyId=${id}&`) || x.query?.endsWith(`cryptoKeyId=${id}`));

const der = (pem: string) => Uint8Array.from(atob(pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '')), (ch) => ch.charCodeAt(0));
const b64 = (b: Uint8Array) => btoa(String.fromCharCode(...b));
const bytes = (s: string) => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0));

beforeAll(async () => {
  c = await initCluster();
  await emu.reset(PROJECT, { generationDelayMs: 300 });
  await emu.reset(OTHER);
  sa = await emu.serviceAccount({ project: PROJECT, name: 'coffer-it' });
  await emu.keyRing(PROJECT, LOCATION, 'ring');
}, 60_000);

describe('the binding', () => {
  it('points GOOGLE_CLOUDKMS_URL at the emulator; key files name its token endpoint', () => {
    expect(env.GOOGLE_CLOUDKMS_URL).toBe(KMS_URL);
    expect(sa.token_uri).toBe(`${KMS_URL}/token`);
  });
});

const ALGORITHMS: [string, Record<string, unknown>][] = [
  ['EC_SIGN_P256_SHA256', { hash_algorithm: 'sha2-256' }],
  ['EC_SIGN_P384_SHA384', { hash_algorithm: 'sha2-384' }],
  ['RSA_SIGN_PSS_2048_SHA256', { use_pss: true }],
  ['RSA_SIGN_PSS_3072_SHA256', { use_pss: true, hash_algorithm: 'sha2-256' }],
  ['RSA_SIGN_PSS_4096_SHA256', { use_pss: 'true' }],
  ['RSA_SIGN_PSS_4096_SHA512', { use_pss: true, hash_algorithm: 'sha2-512' }],
  ['RSA_SIGN_PKCS1_2048_SHA256', {}],
  ['RSA_SIGN_PKCS1_3072_SHA256', { use_pss: false }],
  ['RSA_SIGN_PKCS1_4096_SHA256', { hash_algorithm: 'sha2-256' }],
  ['RSA_SIGN_PKCS1_4096_SHA512', { hash_algorithm: 'sha2-512' }],
];
const idOf = (algorithm: string) => algorithm.toLowerCase().replace(/_/g, '-');

describe('test/sign generates the crypto key and signs', () => {
  it('every algorithm: created with its purpose and algorithm, used with its hash and padding', async () => {
    // One at a time: the emulator makes real RSA 4096 keys, which takes seconds of CPU each.
    for (const [algorithm, body] of ALGORITHMS) {
      // Lower-case algorithm names are accepted (and stored upper-case).
      await create(idOf(algorithm), { crypto_key: idOf(algorithm), algorithm: algorithm.toLowerCase(), allow_generate_key: true });
      await signs(idOf(algorithm), body);
      expect(await emulated(idOf(algorithm))).toEqual({
        name: keyName(idOf(algorithm)),
        purpose: 'ASYMMETRIC_SIGN',
        algorithm,
        protectionLevel: 'SOFTWARE',
        versions: [{ name: `${keyName(idOf(algorithm))}/cryptoKeyVersions/1`, state: 'ENABLED', algorithm, protectionLevel: 'SOFTWARE', publicKeyPem: expect.stringMatching(/^-----BEGIN PUBLIC KEY-----/) }],
      });
      // Signing again uses the key made (no second crypto key or version).
      await signs(idOf(algorithm), body);
      expect((await emulated(idOf(algorithm)))!.versions).toHaveLength(1);
    }
    expect((await ok('GET', 'sys/managed-keys/gcpckms/ec-sign-p256-sha256')).body.data.algorithm).toBe('EC_SIGN_P256_SHA256');
  }, 300_000);

  it('what the backend sent: the look-up, the creation, polling out of PENDING_GENERATION, signing with CRC32Cs', async () => {
    const calls = callsOn(await emu.calls(PROJECT), 'ec-sign-p384-sha384');
    const rpcs = calls.map((x) => `${x.rpc} ${x.status}`);
    const polls = rpcs.lastIndexOf('GetCryptoKeyVersion 200') - rpcs.indexOf('GetCryptoKeyVersion 200') + 1;
    expect(polls).toBeGreaterThanOrEqual(2);
    expect(rpcs).toEqual([
      'GetPublicKey 404',
      'GetCryptoKey 404',
      'GetCryptoKeyVersion 404',
      'CreateCryptoKey 200',
      ...Array(polls).fill('GetCryptoKeyVersion 200'),
      'GetPublicKey 200',
      'AsymmetricSign 200',
      // The second test/sign: a new backend instance reads the public key again.
      'GetPublicKey 200',
      'AsymmetricSign 200',
    ]);
    const creation = calls.find((x) => x.rpc === 'CreateCryptoKey')!;
    expect(creation).toMatchObject({
      principal: sa.client_email,
      auth: 'token',
      numericEnums: false,
      query: 'cryptoKeyId=ec-sign-p384-sha384',
      body: { purpose: 'ASYMMETRIC_SIGN', versionTemplate: { algorithm: 'EC_SIGN_P384_SHA384', protectionLevel: 'SOFTWARE' } },
    });
    const sign = calls.find((x) => x.rpc === 'AsymmetricSign')!.body as { digest: Record<string, string>; digestCrc32c: string };
    expect(Object.keys(sign.digest)).toEqual(['sha384']);
    expect(bytes(sign.digest.sha384)).toHaveLength(48);
    expect(sign.digestCrc32c).toMatch(/^\d+$/);
  });

  it("refuses a hash or padding other than the algorithm's, naming it", async () => {
    await refused('ec-sign-p256-sha256', { hash_algorithm: 'sha2-384' }, 400, 'Google Cloud KMS algorithm EC_SIGN_P256_SHA256 signs sha2-256 digests only, not sha2-384');
    await refused('ec-sign-p256-sha256', { use_pss: true }, 400, 'use_pss applies only to RSA keys');
    await refused('rsa-sign-pss-2048-sha256', {}, 400, 'Google Cloud KMS algorithm RSA_SIGN_PSS_2048_SHA256 signs with RSA-PSS only: PKCS#1 v1.5 was asked');
    await refused('rsa-sign-pkcs1-2048-sha256', { use_pss: true }, 400, 'Google Cloud KMS algorithm RSA_SIGN_PKCS1_2048_SHA256 signs with PKCS#1 v1.5 only: PSS was asked');
    await refused('rsa-sign-pkcs1-4096-sha512', {}, 400, 'Google Cloud KMS algorithm RSA_SIGN_PKCS1_4096_SHA512 signs sha2-512 digests only, not sha2-256');
    await refused('rsa-sign-pss-4096-sha256', { use_pss: true, hash_algorithm: 'sha3-256' }, 400, /signs sha2-256 digests only, not sha3-256$/);
  });
});

describe('existing, missing and later keys', () => {
  it('uses an existing crypto key without allow_generate_key', async () => {
    await create('existing', { crypto_key: 'ec-sign-p256-sha256', algorithm: 'EC_SIGN_P256_SHA256' });
    await signs('existing');
    // The spec's type name reaches the same key.
    expect((await call('POST', 'sys/managed-keys/cloudckms/existing/test/sign', {})).status).toBe(204);
    expect((await emulated('ec-sign-p256-sha256'))!.versions).toHaveLength(1);
  });

  it('refuses a missing key without allow_generate_key, creating nothing', async () => {
    await create('absent', { crypto_key: 'absent', algorithm: 'EC_SIGN_P256_SHA256' });
    await refused('absent', {}, 400, 'managed key "absent": no key was found in the cloudckms (gcpckms) backend, and allow_generate_key is false');
    expect(await emulated('absent')).toBeUndefined();
    expect(callsOn(await emu.calls(PROJECT), 'absent').map((x) => x.rpc)).toEqual(['GetPublicKey', 'GetCryptoKey']);
  });

  it('refuses to generate in a key ring that does not exist', async () => {
    await create('no-ring', { key_ring: 'no-such-ring', crypto_key: 'k', algorithm: 'EC_SIGN_P256_SHA256', allow_generate_key: true });
    await refused(
      'no-ring',
      {},
      400,
      `Google Cloud KMS key ring projects/${PROJECT}/locations/${LOCATION}/keyRings/no-such-ring does not exist: create the key ring first (this server creates crypto keys, not key rings)`,
    );
  });

  it('generates the next version when crypto_key_version names it; refuses any other', async () => {
    await create('ec-v2', { crypto_key: 'ec-sign-p256-sha256', crypto_key_version: '2', algorithm: 'EC_SIGN_P256_SHA256', allow_generate_key: true });
    await signs('ec-v2');
    const versions = (await emulated('ec-sign-p256-sha256'))!.versions;
    expect(versions.map((v) => [v.name.split('/').pop(), v.state])).toEqual([
      ['1', 'ENABLED'],
      ['2', 'ENABLED'],
    ]);
    expect(versions[1].publicKeyPem).not.toBe(versions[0].publicKeyPem);
    const made = (await emu.calls(PROJECT)).filter((x) => x.rpc === 'CreateCryptoKeyVersion');
    expect(made.map((x) => [x.name, x.status])).toEqual([[keyName('ec-sign-p256-sha256'), 200]]);

    await create('ec-v5', { crypto_key: 'ec-sign-p256-sha256', crypto_key_version: '5', algorithm: 'EC_SIGN_P256_SHA256', allow_generate_key: true });
    await refused(
      'ec-v5',
      {},
      400,
      `Google Cloud KMS crypto key ${keyName('ec-sign-p256-sha256')} can get version 3 next, not 5: set crypto_key_version to 3 to generate a new version`,
    );
    await create('new-v2', { crypto_key: 'never-made', crypto_key_version: '2', algorithm: 'EC_SIGN_P256_SHA256', allow_generate_key: true });
    await refused('new-v2', {}, 400, `Google Cloud KMS has no crypto key ${keyName('never-made')}: set crypto_key_version to 1 to create it`);
    expect((await emulated('ec-sign-p256-sha256'))!.versions).toHaveLength(2);
  });

  it("refuses a key whose algorithm is not the configuration's", async () => {
    await create('mismatch', { crypto_key: 'ec-sign-p256-sha256', algorithm: 'RSA_SIGN_PKCS1_2048_SHA256' });
    await refused(
      'mismatch',
      {},
      400,
      `Google Cloud KMS key version ${keyName('ec-sign-p256-sha256')}/cryptoKeyVersions/1 is EC_SIGN_P256_SHA256, but the managed key's algorithm is RSA_SIGN_PKCS1_2048_SHA256`,
    );
  });

  it('refuses a version that is not ENABLED', async () => {
    await create('disabled', { crypto_key: 'rsa-sign-pkcs1-3072-sha256', algorithm: 'RSA_SIGN_PKCS1_3072_SHA256' });
    const version = `${keyName('rsa-sign-pkcs1-3072-sha256')}/cryptoKeyVersions/1`;
    await emu.versionState(PROJECT, version, 'DISABLED');
    try {
      await refused('disabled', {}, 400, `Google Cloud KMS key version ${version} is DISABLED: only ENABLED versions can be used`);
    } finally {
      await emu.versionState(PROJECT, version, 'ENABLED');
    }
    await signs('disabled');
  });
});

describe('credentials Google refuses', () => {
  it('a key that is not the account\'s: 400 with invalid_grant, and no key material in the answer', async () => {
    const other = await emu.serviceAccount({ project: OTHER, name: 'other' });
    const forged = { ...sa, private_key: other.private_key };
    await create('forged', { crypto_key: 'ec-sign-p256-sha256', algorithm: 'EC_SIGN_P256_SHA256' }, forged);
    const r = await refused('forged', {}, 400, `Google refused a token for ${sa.client_email} (HTTP 400): invalid_grant: Invalid JWT Signature.`);
    expect(r.text).not.toContain('PRIVATE KEY');
    expect(r.text).not.toContain(other.private_key.split('\n')[1]);
  });

  it('an account Google does not know: invalid_grant', async () => {
    const unknown = { ...sa, client_email: `ghost@${PROJECT}.iam.gserviceaccount.com` };
    await create('ghost', { crypto_key: 'ec-sign-p256-sha256', algorithm: 'EC_SIGN_P256_SHA256' }, unknown);
    await refused('ghost', {}, 400, `Google refused a token for ghost@${PROJECT}.iam.gserviceaccount.com (HTTP 400): invalid_grant: Invalid grant: account not found`);
  });

  it('an account without access to the project: PERMISSION_DENIED', async () => {
    const outsider = await emu.serviceAccount({ project: OTHER, name: 'outsider' });
    await create('outsider', { crypto_key: 'ec-sign-p256-sha256', algorithm: 'EC_SIGN_P256_SHA256' }, outsider);
    const version = `${keyName('ec-sign-p256-sha256')}/cryptoKeyVersions/1`;
    await refused(
      'outsider',
      {},
      400,
      `Google Cloud KMS: PERMISSION_DENIED (HTTP 403): Permission 'cloudkms.cryptoKeyVersions.viewPublicKey' denied on resource '${version}' (or it may not exist).`,
    );
  });

  it('an account that may read but not sign: PERMISSION_DENIED on asymmetricSign', async () => {
    const reader = await emu.serviceAccount({ project: PROJECT, name: 'reader', permissions: ['cloudkms.cryptoKeyVersions.viewPublicKey'] });
    await create('reader', { crypto_key: 'ec-sign-p256-sha256', algorithm: 'EC_SIGN_P256_SHA256' }, reader);
    await refused('reader', {}, 400, /^Google Cloud KMS: PERMISSION_DENIED \(HTTP 403\): Permission 'cloudkms\.cryptoKeyVersions\.useToSign' denied/);
  });

  it('a token endpoint that cannot be reached: 502', async () => {
    await create('no-token-endpoint', { crypto_key: 'ec-sign-p256-sha256', algorithm: 'EC_SIGN_P256_SHA256' }, { ...sa, token_uri: 'http://127.0.0.1:9/token' });
    await refused('no-token-endpoint', {}, 502, /^Google's token endpoint http:\/\/127\.0\.0\.1:9\/token cannot be reached: /);
  });

  it('credentials that are not a service-account key: 400 when configured', async () => {
    const r = await call('POST', 'sys/managed-keys/gcpckms/not-json', { credentials: '/path/to/key.json', project: PROJECT, region: LOCATION, key_ring: 'ring', crypto_key: 'k', algorithm: 'EC_SIGN_P256_SHA256' });
    expect(r.status).toBe(400);
    await create('user-creds', { crypto_key: 'ec-sign-p256-sha256', algorithm: 'EC_SIGN_P256_SHA256' }, { ...sa, type: 'authorized_user' });
    await refused('user-creds', {}, 400, '"credentials": a key of type "authorized_user" cannot be used: give a service-account key ("type": "service_account")');
  });
});

describe('tokens', () => {
  it('one token serves many calls; a revoked one is replaced once', async () => {
    const rotating = await emu.serviceAccount({ project: PROJECT, name: 'rotating' });
    await create('rotating', { crypto_key: 'ec-sign-p256-sha256', algorithm: 'EC_SIGN_P256_SHA256' }, rotating);
    for (let i = 0; i < 3; i++) await signs('rotating');
    const mine = async () => (await emu.calls(PROJECT)).filter((x) => x.principal === rotating.client_email);
    expect((await mine()).filter((x) => x.rpc === 'Token')).toHaveLength(1);
    expect((await mine()).filter((x) => x.rpc !== 'Token').every((x) => x.auth === 'token' && x.status === 200)).toBe(true);
    await emu.revokeTokens(rotating.client_email);
    await signs('rotating');
    // The revoked token is refused (401, nobody authenticated), a new one is obtained, the call made again.
    const all = await emu.calls(PROJECT);
    const revokedAt = all.findIndex((x) => x.status === 401);
    expect(all.filter((x) => x.status === 401)).toEqual([expect.objectContaining({ rpc: 'GetPublicKey', principal: null, code: 'UNAUTHENTICATED' })]);
    expect(all.slice(revokedAt + 1).map((x) => `${x.rpc} ${x.status} ${x.principal}`)).toEqual([
      `Token 200 ${rotating.client_email}`,
      `GetPublicKey 200 ${rotating.client_email}`,
      `AsymmetricSign 200 ${rotating.client_email}`,
    ]);
  });
});

describe('busy and corrupted answers', () => {
  it('retries 503 and 429; a lasting outage is a 502 naming UNAVAILABLE', async () => {
    await emu.faults(PROJECT, [
      { rpc: 'AsymmetricSign', status: 503, code: 'UNAVAILABLE', message: 'The service is currently unavailable.' },
      { rpc: 'GetPublicKey', status: 429, code: 'RESOURCE_EXHAUSTED', message: 'Quota exceeded.', after: 0 },
    ]);
    await signs('existing');
    expect((await emu.pendingFaults(PROJECT)).faults).toEqual([]);
    await emu.faults(PROJECT, [{ rpc: 'AsymmetricSign', status: 503, code: 'UNAVAILABLE', message: 'The service is currently unavailable.', times: 3 }]);
    await refused('existing', {}, 502, 'Google Cloud KMS: UNAVAILABLE (HTTP 503): The service is currently unavailable.');
  });

  it('a signature or public key whose CRC32C does not match: 502', async () => {
    await emu.faults(PROJECT, [{ rpc: 'AsymmetricSign', corrupt: true }]);
    await refused('existing', {}, 502, 'the signature from Google Cloud KMS was corrupted on its way (CRC32C mismatch)');
    await emu.faults(PROJECT, [{ rpc: 'GetPublicKey', corrupt: true }]);
    await refused('existing', {}, 502, `the public key of ${keyName('ec-sign-p256-sha256')}/cryptoKeyVersions/1 was corrupted on its way from Google Cloud KMS (CRC32C mismatch)`);
    await signs('existing');
  });
});

describe('the read view', () => {
  it('never shows the credentials', async () => {
    for (const name of ['ec-sign-p256-sha256', 'forged', 'rotating']) {
      const r = await ok('GET', `sys/managed-keys/gcpckms/${name}`);
      expect(r.body.data).toMatchObject({ type: 'gcpckms', credentials: 'redacted', project: PROJECT, region: LOCATION, key_ring: 'ring', crypto_key_version: expect.any(String) });
      expect(r.text).not.toContain('PRIVATE KEY');
      expect(r.text).not.toContain(sa.private_key_id);
    }
  });
});

// ---- engines on these keys

/** The public key the emulator holds for a version, as WebCrypto imports it. */
async function emulatorKey(id: string, alg: Parameters<typeof crypto.subtle.importKey>[2], version = 1): Promise<CryptoKey> {
  const pem = (await emulated(id))!.versions[version - 1].publicKeyPem!;
  return crypto.subtle.importKey('spki', der(pem), alg, false, ['verify']);
}
const sigOf = (s: string) => bytes(s.split(':')[2]);
const b64url = (s: string) => bytes(s.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(s.length / 4) * 4, '='));
function p1363(derSig: Uint8Array, size: number): Uint8Array {
  const v = AsnConvert.parse(derSig, ECDSASigValue);
  const out = new Uint8Array(size * 2);
  [new Uint8Array(v.r), new Uint8Array(v.s)].forEach((n, i) => {
    const trimmed = n.subarray(Math.max(0, n.length - size));
    out.set(trimmed, i * size + size - trimmed.length);
  });
  return out;
}

describe('transit managed_key keys', () => {
  beforeAll(async () => {
    await ok('POST', 'sys/mounts/transit', { type: 'transit' });
    await ok('POST', 'sys/mounts/transit/tune', { allowed_managed_keys: ['ec-sign-p256-sha256', 'ec-v2', 'rsa-sign-pss-2048-sha256', 'ec-sign-p384-sha384'] });
  });

  it('ECDSA P-256: the read shows the Cloud KMS key; asn1 and jws signatures verify with WebCrypto', async () => {
    await ok('POST', 'transit/keys/ec', { type: 'managed_key', managed_key_name: 'ec-sign-p256-sha256' });
    const read = await ok('GET', 'transit/keys/ec');
    expect(read.body.data.keys['1'].public_key).toBe((await emulated('ec-sign-p256-sha256'))!.versions[0].publicKeyPem);
    const key = await emulatorKey('ec-sign-p256-sha256', { name: 'ECDSA', namedCurve: 'P-256' });
    const input = utf8('signed by Cloud KMS');
    const asn1 = (await ok('POST', 'transit/sign/ec', { input: b64(input) })).body.data.signature as string;
    expect(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, p1363(sigOf(asn1), 32), input)).toBe(true);
    const jws = (await ok('POST', 'transit/sign/ec', { input: b64(input), marshaling_algorithm: 'jws' })).body.data.signature as string;
    expect(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, b64url(jws.split(':')[2]), input)).toBe(true);
    expect((await ok('POST', 'transit/verify/ec', { input: b64(input), signature: asn1 })).body.data.valid).toBe(true);
    // Another hash than the key's: refused by the backend.
    const r = await call('POST', 'transit/sign/ec', { input: b64(input), hash_algorithm: 'sha2-512' });
    expect({ status: r.status, errors: r.body.errors }).toEqual({ status: 400, errors: ['Google Cloud KMS algorithm EC_SIGN_P256_SHA256 signs sha2-256 digests only, not sha2-512'] });
  });

  it('RSA-PSS: with the salt Cloud KMS uses (the hash length, the default); another salt is refused', async () => {
    await ok('POST', 'transit/keys/pss', { type: 'managed_key', managed_key_name: 'rsa-sign-pss-2048-sha256' });
    const input = utf8('PSS by Cloud KMS');
    const key = await emulatorKey('rsa-sign-pss-2048-sha256', { name: 'RSA-PSS', hash: 'SHA-256' });
    for (const salt of [{}, { salt_length: 'hash' }, { salt_length: '32' }]) {
      const sig = (await ok('POST', 'transit/sign/pss', { input: b64(input), signature_algorithm: 'pss', ...salt })).body.data.signature as string;
      expect(await crypto.subtle.verify({ name: 'RSA-PSS', saltLength: 32 }, key, sigOf(sig), input)).toBe(true);
    }
    const r = await call('POST', 'transit/sign/pss', { input: b64(input), signature_algorithm: 'pss', salt_length: '64' });
    expect({ status: r.status, errors: r.body.errors }).toEqual({
      status: 400,
      errors: ["Google Cloud KMS algorithm RSA_SIGN_PSS_2048_SHA256 uses a PSS salt of 32 bytes (the digest's length), not 64"],
    });
  });

  it('rotation: onto the next Cloud KMS version through another managed key; never over the same version', async () => {
    await ok('POST', 'transit/keys/ec/rotate', { managed_key_name: 'ec-v2' });
    const read = await ok('GET', 'transit/keys/ec');
    expect(read.body.data.keys['2'].public_key).toBe((await emulated('ec-sign-p256-sha256'))!.versions[1].publicKeyPem);
    const input = utf8('version 2');
    const sig = (await ok('POST', 'transit/sign/ec', { input: b64(input) })).body.data.signature as string;
    expect(sig.startsWith('vault:v2:')).toBe(true);
    const key = await emulatorKey('ec-sign-p256-sha256', { name: 'ECDSA', namedCurve: 'P-256' }, 2);
    expect(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, p1363(sigOf(sig), 32), input)).toBe(true);
    // The same managed key again would replace its version: Cloud KMS versions cannot be.
    await ok('POST', 'sys/managed-keys/gcpckms/ec-v2', { allow_replace_key: true });
    const r = await call('POST', 'transit/keys/ec/rotate', {});
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^Google Cloud KMS key versions cannot be replaced: .*\/cryptoKeyVersions\/2 exists\. To rotate, set crypto_key_version to the next version number/);
  });
});

describe('transit encryption on a Cloud KMS decryption key', () => {
  it('RSA_DECRYPT_OAEP_2048_SHA1: encrypted here with the public key, decrypted by asymmetricDecrypt', async () => {
    await create('rsa-decrypt', { crypto_key: 'rsa-decrypt', algorithm: 'RSA_DECRYPT_OAEP_2048_SHA1', allow_generate_key: true, usages: 'encrypt,decrypt' });
    await ok('POST', 'sys/mounts/transit-decrypt', { type: 'transit', config: { allowed_managed_keys: ['rsa-decrypt'] } });
    const created = await ok('POST', 'transit-decrypt/keys/sealed-box', { type: 'managed_key', managed_key_name: 'rsa-decrypt' });
    expect(created.body.data).toMatchObject({ supports_encryption: true, supports_decryption: true, supports_signing: false });
    expect((await emulated('rsa-decrypt'))!.purpose).toBe('ASYMMETRIC_DECRYPT');
    const plaintext = b64(utf8('kept by Cloud KMS'));
    const ciphertext = (await ok('POST', 'transit-decrypt/encrypt/sealed-box', { plaintext })).body.data.ciphertext as string;
    expect((await ok('POST', 'transit-decrypt/decrypt/sealed-box', { ciphertext })).body.data.plaintext).toBe(plaintext);
    expect(callsOn(await emu.calls(PROJECT), 'rsa-decrypt').map((x) => x.rpc)).toContain('AsymmetricDecrypt');
  });
});

describe('PKI root on a Cloud KMS key', () => {
  for (const [algorithm, name] of [
    ['EC_SIGN_P384_SHA384', 'ec-sign-p384-sha384'],
    ['RSA_SIGN_PKCS1_2048_SHA256', 'rsa-sign-pkcs1-2048-sha256'],
  ]) {
    it(`${algorithm}: the self-signature verifies, the public key is the Cloud KMS key's`, async () => {
      const mount = `pki-${name}`;
      await ok('POST', `sys/mounts/${mount}`, { type: 'pki', config: { max_lease_ttl: '87600h' } });
      await ok('POST', `sys/mounts/${mount}/tune`, { allowed_managed_keys: [name] });
      const r = await ok('POST', `${mount}/root/generate/kms`, { managed_key_name: name, common_name: `${name}.example`, ttl: '8760h' });
      expect(r.text).not.toContain('PRIVATE KEY');
      const cert = new X509Certificate(r.body.data.certificate);
      expect(b64(new Uint8Array(cert.publicKey.rawData))).toBe(b64(der((await emulated(name))!.versions[0].publicKeyPem!)));
      expect(await cert.verify({ signatureOnly: true })).toBe(true);
    });
  }
});

function utf8(s: string): Uint8Array {
  return new TextEncoder().encode(s);
}
