// The Cloud KMS emulator (test/emulators/gcp-kms) and the cloudckms managed-key backend, checked
// with Google's official Node SDK (@google-cloud/kms, REST transport) as an independent client:
//   - the emulator speaks what the SDK speaks: the SDK's self-signed JWTs and its JWT-bearer grant
//     (google-auth-library's own signer) pass its authentication, a wrong key or project does
//     not; key rings, keys and versions in the SDK's shapes (numeric enums included); and the
//     emulator's signatures over digests verify with node:crypto over the original message, for
//     every signing algorithm; its OAEP decryption takes node:crypto's ciphertexts;
//   - Coffer (the launcher, its Worker pointed at the emulator by GOOGLE_CLOUDKMS_URL) generates a
//     key the SDK then reads (same PEM) and signs what node:crypto verifies with the PEM the SDK
//     fetched (transit sign on a managed_key transit key, and a PKI root's self-signature);
//   - Coffer uses a key ring and key the SDK created.
import { KeyManagementServiceClient, type protos } from '@google-cloud/kms';
import { createHash, createPublicKey, constants, publicEncrypt, randomBytes, verify, X509Certificate } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importPKCS8, SignJWT, type JWTPayload } from 'jose';
import { gcpKmsEmulator, type GcpKmsEmulatorControl, type ServiceAccountKeyFile } from '../emulators/gcp-kms/client';
import { crc32c } from '../emulators/gcp-kms/crc32c';
import { startGcpKmsEmulator, type GcpKmsEmulator } from '../emulators/gcp-kms/server';
import { readInit, startLauncher, tempDir, type Server } from './processes';

const PROJECT = 'e2e-gcp-sdk';
const OTHER_PROJECT = 'e2e-gcp-other';
const LOCATION = 'us-east1';
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
type Algorithm = keyof typeof protos.google.cloud.kms.v1.CryptoKeyVersion.CryptoKeyVersionAlgorithm;

let emu: GcpKmsEmulator;
let control: GcpKmsEmulatorControl;
let sa: ServiceAccountKeyFile;

/**
 * The SDK against the emulator: REST transport over http to its port. By default the SDK signs
 * its own JWT per request (what GAPIC libraries do); `grant` makes it get an access token with the
 * JWT-bearer grant instead, at Google's token URL, which the transporter's fetch sends here.
 */
async function sdk(key: ServiceAccountKeyFile, grant = false): Promise<KeyManagementServiceClient> {
  const toEmulator: typeof fetch = (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    return fetch(url === GOOGLE_TOKEN_URL ? `${emu.base}/token` : input, init);
  };
  const client = new KeyManagementServiceClient({
    fallback: true,
    apiEndpoint: '127.0.0.1',
    port: emu.port,
    protocol: 'http',
    credentials: key,
    projectId: key.project_id,
    clientOptions: { transporterOptions: { fetchImplementation: toEmulator } },
  });
  // GAPIC clients turn self-signed JWTs on (on the JWT client the credentials made); off,
  // google-auth-library asks the token endpoint.
  if (grant) ((await client.auth.getClient()) as unknown as { useJWTAccessWithScope: boolean }).useJWTAccessWithScope = false;
  return client;
}

const sha = (alg: string, data: Buffer) => createHash(alg).update(data).digest();
const crc = async (b: Buffer) => crc32c(b);

beforeAll(async () => {
  emu = await startGcpKmsEmulator();
  control = gcpKmsEmulator(emu.base);
  await control.reset(PROJECT, { generationDelayMs: 50 });
  await control.reset(OTHER_PROJECT);
  sa = await control.serviceAccount({ project: PROJECT, name: 'sdk-admin' });
});
afterAll(async () => {
  await emu?.close();
});

/**
 * How an SDK call failed: Google's error document. (Over REST, the SDK rejects with the HTTP
 * client's error, whose message is the document's text.)
 */
async function failure(call: Promise<unknown>): Promise<{ code: number; status: string; message: string }> {
  try {
    await call;
  } catch (e) {
    const text = (e as Error).message;
    try {
      return (JSON.parse(text) as { error: { code: number; status: string; message: string } }).error;
    } catch {
      return { code: 0, status: '', message: text };
    }
  }
  throw new Error('the call succeeded');
}

/** Polls a version until ENABLED through the SDK. */
async function enabled(client: KeyManagementServiceClient, name: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const [v] = await client.getCryptoKeyVersion({ name });
    if (v.state === 'ENABLED') return;
    expect(v.state).toBe('PENDING_GENERATION');
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${name} never became ENABLED`);
}

describe('the SDK against the emulator', () => {
  const ring = `projects/${PROJECT}/locations/${LOCATION}/keyRings/sdk-ring`;

  it('authenticates with self-signed JWTs (the default) and with the JWT-bearer grant', async () => {
    const jwtClient = await sdk(sa);
    const [created] = await jwtClient.createKeyRing({ parent: `projects/${PROJECT}/locations/${LOCATION}`, keyRingId: 'sdk-ring' });
    expect(created.name).toBe(ring);
    const grantClient = await sdk(sa, true);
    const [got] = await grantClient.getKeyRing({ name: ring });
    expect(got.name).toBe(ring);
    const calls = await control.calls(PROJECT);
    expect(calls.map((c) => [c.rpc, c.auth, c.principal, c.status, c.numericEnums])).toEqual([
      ['CreateKeyRing', 'jwt', sa.client_email, 200, true],
      ['Token', 'none', sa.client_email, 200, false],
      ['GetKeyRing', 'token', sa.client_email, 200, true],
    ]);
  });

  it('refuses a key the account does not have, and a project it may not use', async () => {
    const forged = { ...sa, private_key: (await control.serviceAccount({ project: OTHER_PROJECT, name: 'forger' })).private_key };
    expect(await failure((await sdk(forged)).getKeyRing({ name: ring }))).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
    await expect((await sdk(forged, true)).getKeyRing({ name: ring })).rejects.toThrow(/invalid_grant: Invalid JWT Signature\./);
    const outsider = await control.serviceAccount({ project: OTHER_PROJECT, name: 'outsider' });
    expect(await failure((await sdk(outsider, true)).getKeyRing({ name: ring }))).toEqual({
      code: 403,
      status: 'PERMISSION_DENIED',
      message: `Permission 'cloudkms.keyRings.get' denied on resource '${ring}' (or it may not exist).`,
      details: [expect.objectContaining({ reason: 'IAM_PERMISSION_DENIED' })],
    });
  });

  const SIGNING: [Algorithm, string, Record<string, unknown>][] = [
    ['EC_SIGN_P256_SHA256', 'sha256', {}],
    ['EC_SIGN_P384_SHA384', 'sha384', {}],
    ['RSA_SIGN_PKCS1_2048_SHA256', 'sha256', { padding: constants.RSA_PKCS1_PADDING }],
    ['RSA_SIGN_PKCS1_3072_SHA256', 'sha256', { padding: constants.RSA_PKCS1_PADDING }],
    ['RSA_SIGN_PKCS1_4096_SHA512', 'sha512', { padding: constants.RSA_PKCS1_PADDING }],
    ['RSA_SIGN_PSS_2048_SHA256', 'sha256', { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }],
    ['RSA_SIGN_PSS_3072_SHA256', 'sha256', { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 }],
    ['RSA_SIGN_PSS_4096_SHA512', 'sha512', { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 64 }],
  ];

  it("signs digests: every algorithm's signature verifies with node:crypto over the message", async () => {
    const client = await sdk(sa);
    await Promise.all(
      SIGNING.map(async ([algorithm, hash, opts]) => {
        const id = algorithm.toLowerCase().replace(/_/g, '-');
        const [key] = await client.createCryptoKey({ parent: ring, cryptoKeyId: id, cryptoKey: { purpose: 'ASYMMETRIC_SIGN', versionTemplate: { algorithm } } });
        expect(key).toMatchObject({ name: `${ring}/cryptoKeys/${id}`, purpose: 'ASYMMETRIC_SIGN', versionTemplate: { algorithm, protectionLevel: 'SOFTWARE' } });
        const name = `${key.name}/cryptoKeyVersions/1`;
        await enabled(client, name);
        const [pub] = await client.getPublicKey({ name });
        expect(pub).toMatchObject({ algorithm, name });
        expect(Number(pub.pemCrc32c!.value)).toBe(await crc(Buffer.from(pub.pem!)));
        const message = randomBytes(100);
        const digest = sha(hash, message);
        const [signed] = await client.asymmetricSign({ name, digest: { [hash]: digest }, digestCrc32c: { value: await crc(digest) } });
        expect(signed.verifiedDigestCrc32c).toBe(true);
        expect(signed.name).toBe(name);
        const signature = Buffer.from(signed.signature as Uint8Array);
        expect(Number(signed.signatureCrc32c!.value)).toBe(await crc(signature));
        expect(verify(hash, message, { key: createPublicKey(pub.pem!), ...opts }, signature), algorithm).toBe(true);
        expect(verify(hash, randomBytes(100), { key: createPublicKey(pub.pem!), ...opts }, signature)).toBe(false);
      }),
    );
  });

  it('decrypts RSA-OAEP made by node:crypto with the SDK-fetched public key (SHA-256 and SHA-1)', async () => {
    const client = await sdk(sa, true);
    const cases: [Algorithm, string][] = [
      ['RSA_DECRYPT_OAEP_2048_SHA256', 'sha256'],
      ['RSA_DECRYPT_OAEP_2048_SHA1', 'sha1'],
    ];
    for (const [algorithm, hash] of cases) {
      const id = algorithm.toLowerCase().replace(/_/g, '-');
      const [key] = await client.createCryptoKey({ parent: ring, cryptoKeyId: id, cryptoKey: { purpose: 'ASYMMETRIC_DECRYPT', versionTemplate: { algorithm } } });
      const name = `${key.name}/cryptoKeyVersions/1`;
      await enabled(client, name);
      const [pub] = await client.getPublicKey({ name });
      const plaintext = randomBytes(40);
      const ciphertext = publicEncrypt({ key: pub.pem!, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash }, plaintext);
      const [out] = await client.asymmetricDecrypt({ name, ciphertext, ciphertextCrc32c: { value: await crc(ciphertext) } });
      expect(out.verifiedCiphertextCrc32c).toBe(true);
      expect(Buffer.from(out.plaintext as Uint8Array)).toEqual(plaintext);
    }
  });

  it('answers errors as Google does: a missing key, a duplicate, a digest of the wrong hash', async () => {
    const client = await sdk(sa);
    expect(await failure(client.getPublicKey({ name: `${ring}/cryptoKeys/none/cryptoKeyVersions/1` }))).toMatchObject({ code: 404, status: 'NOT_FOUND', message: `CryptoKey ${ring}/cryptoKeys/none not found.` });
    const again = { parent: ring, cryptoKeyId: 'ec-sign-p256-sha256', cryptoKey: { purpose: 'ASYMMETRIC_SIGN' as const, versionTemplate: { algorithm: 'EC_SIGN_P256_SHA256' as const } } };
    expect(await failure(client.createCryptoKey(again))).toMatchObject({ code: 409, status: 'ALREADY_EXISTS' });
    const name = `${ring}/cryptoKeys/ec-sign-p256-sha256/cryptoKeyVersions/1`;
    expect(await failure(client.asymmetricSign({ name, digest: { sha384: randomBytes(48) } }))).toMatchObject({ code: 400, status: 'INVALID_ARGUMENT' });
    expect(await failure(client.asymmetricSign({ name, digest: { sha256: randomBytes(32) }, digestCrc32c: { value: 1 } }))).toMatchObject({
      code: 400,
      status: 'INVALID_ARGUMENT',
      message: 'The checksum in field digest_crc32c did not match the data in field digest.',
    });
    await control.versionState(PROJECT, name, 'DISABLED');
    expect(await failure(client.getPublicKey({ name }))).toMatchObject({ code: 400, status: 'FAILED_PRECONDITION', message: `${name} is not enabled, current state is: DISABLED.` });
    await control.versionState(PROJECT, name, 'ENABLED');
  });
});

describe("the emulator's authentication, request by request", () => {
  const ring = `projects/${PROJECT}/locations/${LOCATION}/keyRings/auth-ring`;
  beforeAll(() => control.keyRing(PROJECT, LOCATION, 'auth-ring'));
  /** An assertion signed with `key`'s private key (a test client's JWT, made with jose). */
  async function assertion(key: ServiceAccountKeyFile, claims: JWTPayload, kid: string | null = key.private_key_id): Promise<string> {
    const iat = Math.floor(Date.now() / 1000);
    return await new SignJWT({ iss: key.client_email, aud: key.token_uri, scope: 'https://www.googleapis.com/auth/cloudkms', iat, exp: iat + 3600, ...claims })
      .setProtectedHeader({ alg: 'RS256', ...(kid ? { kid } : {}) })
      .sign(await importPKCS8(key.private_key, 'RS256'));
  }
  const grant = async (body: Record<string, string>) => {
    const res = await fetch(`${emu.base}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body).toString() });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
  const bearer = (jwt: string) => grant({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: jwt });
  const getRing = async (authorization?: string) => {
    const res = await fetch(`${emu.base}/v1/${ring}`, { headers: authorization ? { authorization } : {} });
    return { status: res.status, wwwAuthenticate: res.headers.get('www-authenticate'), body: (await res.json()) as { error?: { status: string; message: string } } };
  };

  it('the grant: signature, key id, audience, lifetime, scope and grant type are all checked', async () => {
    const invalid = (description: string | RegExp, error = 'invalid_grant') => ({ status: 400, body: { error, error_description: typeof description === 'string' ? description : expect.stringMatching(description) } });
    expect(await bearer(await assertion(sa, { aud: 'https://example.com/token' }))).toEqual(invalid(/^Invalid JWT: Failed audience check/));
    expect(await bearer(await assertion(sa, { exp: Math.floor(Date.now() / 1000) + 7200 }))).toEqual(invalid(/^Invalid JWT: Token must be a short-lived token/));
    expect(await bearer(await assertion(sa, { exp: Math.floor(Date.now() / 1000) - 120, iat: Math.floor(Date.now() / 1000) - 600 }))).toEqual(invalid(/short-lived token/));
    expect(await bearer(await assertion(sa, {}, 'not-a-key-id'))).toEqual(invalid('Invalid JWT Signature.'));
    expect(await bearer(await assertion(sa, { scope: undefined }))).toEqual(invalid('Invalid OAuth scope or ID token audience provided.', 'invalid_scope'));
    expect(await bearer(await assertion(sa, { iss: `nobody@${PROJECT}.iam.gserviceaccount.com` }))).toEqual(invalid('Invalid grant: account not found'));
    expect(await grant({ grant_type: 'client_credentials', assertion: await assertion(sa, {}) })).toEqual(invalid('Invalid grant_type: client_credentials', 'unsupported_grant_type'));
    // Google's own token URL as audience, and no kid (every key of the account is tried): granted.
    const ok = await bearer(await assertion(sa, { aud: GOOGLE_TOKEN_URL }, null));
    expect(ok).toEqual({ status: 200, body: { access_token: expect.stringMatching(/^ya29\./), expires_in: 3599, token_type: 'Bearer' } });
    expect((await getRing(`Bearer ${ok.body.access_token as string}`)).status).toBe(200);
  });

  it('bearer tokens: missing, unknown, expired → 401 UNAUTHENTICATED; without a Cloud KMS scope → 403', async () => {
    const missing = await getRing();
    expect(missing).toMatchObject({ status: 401, body: { error: { status: 'UNAUTHENTICATED', message: expect.stringMatching(/^Request is missing required authentication credential/) } } });
    expect(missing.wwwAuthenticate).toMatch(/^Bearer realm=/);
    expect(await getRing('Bearer ya29.unknown')).toMatchObject({ status: 401, body: { error: { status: 'UNAUTHENTICATED', message: expect.stringMatching(/^Request had invalid authentication credentials/) } } });
    const brief = await control.serviceAccount({ project: PROJECT, name: 'brief', tokenLifetime: 1 });
    const token = (await bearer(await assertion(brief, {}))).body.access_token as string;
    expect((await getRing(`Bearer ${token}`)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    expect(await getRing(`Bearer ${token}`)).toMatchObject({ status: 401, body: { error: { status: 'UNAUTHENTICATED' } } });
    const narrow = (await bearer(await assertion(sa, { scope: 'https://www.googleapis.com/auth/devstorage.read_only' }))).body.access_token as string;
    expect(await getRing(`Bearer ${narrow}`)).toMatchObject({ status: 403, body: { error: { status: 'PERMISSION_DENIED', message: 'Request had insufficient authentication scopes.' } } });
    // A self-signed JWT for another API.
    const other = await assertion(sa, { sub: sa.client_email, aud: 'https://storage.googleapis.com/', scope: undefined });
    expect((await getRing(`Bearer ${other}`)).status).toBe(401);
  });
});

// ---- Coffer through the launcher

describe('Coffer with the cloudckms backend, checked with the SDK', () => {
  let server: Server | undefined;
  let token = '';
  const v1 = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${server!.url}/v1/${path}`, { method, headers: { 'x-vault-token': token, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, text, body: text ? JSON.parse(text) : null };
  };
  const ok = async (method: string, path: string, body?: unknown) => {
    const r = await v1(method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    return r;
  };
  const managedKey = (name: string, fields: Record<string, unknown>) =>
    ok('POST', `sys/managed-keys/gcpckms/${name}`, { credentials: JSON.stringify(sa), project: PROJECT, region: LOCATION, key_ring: 'coffer-ring', any_mount: true, ...fields });

  beforeAll(async () => {
    await control.keyRing(PROJECT, LOCATION, 'coffer-ring');
    const dataDir = tempDir('coffer-e2e-gcp-kms-');
    server = await startLauncher(dataDir, { GOOGLE_CLOUDKMS_URL: emu.base });
    token = readInit(dataDir).root_token;
    await ok('POST', 'sys/mounts/transit', { type: 'transit' });
    await ok('POST', 'sys/mounts/pki', { type: 'pki', config: { max_lease_ttl: '87600h' } });
  });
  afterAll(async () => {
    await server?.stop('SIGTERM');
  });

  it('generates a key the SDK reads, and signs what node:crypto verifies with the PEM the SDK fetched', async () => {
    await managedKey('ec', { crypto_key: 'coffer-ec', algorithm: 'EC_SIGN_P256_SHA256', allow_generate_key: true });
    expect((await v1('POST', 'sys/managed-keys/gcpckms/ec/test/sign', {})).status).toBe(204);
    const keyName = `projects/${PROJECT}/locations/${LOCATION}/keyRings/coffer-ring/cryptoKeys/coffer-ec`;
    const [pub] = await (await sdk(sa, true)).getPublicKey({ name: `${keyName}/cryptoKeyVersions/1` });
    expect(pub.algorithm).toBe('EC_SIGN_P256_SHA256');
    const [made] = await (await sdk(sa)).getCryptoKey({ name: keyName });
    expect(made).toMatchObject({ purpose: 'ASYMMETRIC_SIGN', versionTemplate: { algorithm: 'EC_SIGN_P256_SHA256', protectionLevel: 'SOFTWARE' } });
    // What Coffer sent (string enums, an access token from its own grant), as the emulator saw it.
    const coffer = (await control.calls(PROJECT)).filter((x) => !x.numericEnums && x.rpc !== 'Token' && (x.name.startsWith(keyName) || x.query === 'cryptoKeyId=coffer-ec'));
    expect(coffer.every((x) => x.auth === 'token' && x.principal === sa.client_email)).toBe(true);
    expect(coffer.map((x) => x.rpc)).toEqual(expect.arrayContaining(['CreateCryptoKey', 'GetCryptoKeyVersion', 'GetPublicKey', 'AsymmetricSign']));

    await ok('POST', 'transit/keys/ec', { type: 'managed_key', managed_key_name: 'ec' });
    const read = await ok('GET', 'transit/keys/ec');
    expect(read.body.data.keys['1'].public_key).toBe(pub.pem);
    const input = randomBytes(64);
    const signed = await ok('POST', 'transit/sign/ec', { input: input.toString('base64') });
    const signature = Buffer.from(signed.body.data.signature.split(':')[2], 'base64');
    expect(verify('sha256', input, createPublicKey(pub.pem!), signature)).toBe(true);

    // A PKI root on the same key: its self-signature verifies with the SDK-fetched key.
    const root = await ok('POST', 'pki/root/generate/kms', { managed_key_name: 'ec', common_name: 'gcp root' });
    const cert = new X509Certificate(root.body.data.certificate);
    expect(cert.publicKey.export({ type: 'spki', format: 'pem' })).toBe(pub.pem);
    expect(cert.verify(createPublicKey(pub.pem!))).toBe(true);
  });

  it('uses a key ring and an RSA key the SDK created', async () => {
    const client = await sdk(sa);
    await client.createKeyRing({ parent: `projects/${PROJECT}/locations/${LOCATION}`, keyRingId: 'sdk-made' });
    const [key] = await client.createCryptoKey({
      parent: `projects/${PROJECT}/locations/${LOCATION}/keyRings/sdk-made`,
      cryptoKeyId: 'rsa',
      cryptoKey: { purpose: 'ASYMMETRIC_SIGN', versionTemplate: { algorithm: 'RSA_SIGN_PKCS1_2048_SHA256', protectionLevel: 'HSM' } },
    });
    await enabled(client, `${key.name}/cryptoKeyVersions/1`);
    const [pub] = await client.getPublicKey({ name: `${key.name}/cryptoKeyVersions/1` });
    await managedKey('sdk-rsa', { key_ring: 'sdk-made', crypto_key: 'rsa', algorithm: 'RSA_SIGN_PKCS1_2048_SHA256' });
    expect((await v1('POST', 'sys/managed-keys/gcpckms/sdk-rsa/test/sign', {})).status).toBe(204);
    await ok('POST', 'transit/keys/sdk-rsa', { type: 'managed_key', managed_key_name: 'sdk-rsa' });
    expect((await ok('GET', 'transit/keys/sdk-rsa')).body.data.keys['1'].public_key).toBe(pub.pem);
    const input = randomBytes(64);
    const signed = await ok('POST', 'transit/sign/sdk-rsa', { input: input.toString('base64'), signature_algorithm: 'pkcs1v15' });
    const signature = Buffer.from(signed.body.data.signature.split(':')[2], 'base64');
    expect(verify('sha256', input, { key: createPublicKey(pub.pem!), padding: constants.RSA_PKCS1_PADDING }, signature)).toBe(true);
    // Coffer made no key of its own: the SDK's version is the only one.
    const state = await control.state(PROJECT);
    const made = state.keyRings.find((r) => r.name.endsWith('/sdk-made'))!.cryptoKeys;
    expect(made.map((k) => [k.name, k.versions.length, k.protectionLevel])).toEqual([[key.name, 1, 'HSM']]);
  });
});
