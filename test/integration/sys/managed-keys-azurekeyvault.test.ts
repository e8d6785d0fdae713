// cloudbkeyvault (azurekeyvault) managed keys against the Azure emulator (test/emulators/
// azure-keyvault/): the Worker reaches its token endpoint as AZURE_AUTHORITY_HOST and its vaults as
// AZURE_KEYVAULT_URL (vitest.config.ts). test/sign generates RSA-HSM keys of every size and signs
// PKCS#1 v1.5 and PSS with SHA-256/384/512; keys made outside (RSA, EC P-256/P-384/P-521) are used
// as they are. The emulator's state and call log show what was created and asked; its refusals
// (Entra ID's AADSTS codes, Key Vault's error documents, throttling, an unreachable vault) come back
// as clear 4xx/502 without the client secret. Then transit and PKI on keys held in the vault, with
// every signature checked here by WebCrypto / @peculiar/x509 against the vault's public key.
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import * as x509 from '../../../src/crypto/pki/x509';
import { caller, initCluster, type ApiResult, type Cluster } from '../../helpers/api';
import { azureEmulator, type CallRecord, type KeyVersionView } from '../../emulators/azure-keyvault/client';

let c: Cluster;
const { call, ok } = caller(() => c.root);

const URL_BASE = inject('azureKeyVaultUrl');
/** Names unique to this run (vault names are global in the emulator, as in Azure). */
const run = Math.random().toString(36).slice(2, 8);
const TENANT = crypto.randomUUID();
const OTHER_TENANT = crypto.randomUUID();
const CLIENT = crypto.randomUUID();
const READER = crypto.randomUUID();
const SECRET = `kv-secret~${run}-9f2c4e7a`;
const READER_SECRET = `kv-reader~${run}-51d0`;
const WRONG_SECRET = `kv-wrong~${run}-77aa`;
const VAULT = `cofmk${run}`;
const OTHER_VAULT = `cofother${run}`;
const emu = azureEmulator(URL_BASE, TENANT);
const other = azureEmulator(URL_BASE, OTHER_TENANT);

const b64 = (b: ArrayBuffer | Uint8Array) => btoa(String.fromCharCode(...new Uint8Array(b)));
const bytes = (s: string) => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0));
const fromB64Url = (s: string) => bytes(s.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(s.length / 4) * 4, '='));
const der = (pem: string) => bytes(pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''));
const utf8 = (s: string) => new TextEncoder().encode(s);

/** An azurekeyvault managed key on this file's vault and client. */
async function create(name: string, fields: Record<string, unknown>): Promise<void> {
  const r = await call('POST', `sys/managed-keys/azurekeyvault/${name}`, { tenant_id: TENANT, client_id: CLIENT, client_secret: SECRET, vault_name: VAULT, key_type: 'RSA-HSM', key_name: name, ...fields });
  if (r.status !== 204) throw new Error(`create ${name}: ${r.status} ${r.text}`);
}
const testSign = (name: string, body: Record<string, unknown> = {}): Promise<ApiResult> => call('POST', `sys/managed-keys/azurekeyvault/${name}/test/sign`, body);
const signed = (r: ApiResult) => expect({ status: r.status, body: r.text }).toEqual({ status: 204, body: '' });
const refused = (r: ApiResult, status: number, message: string | RegExp) =>
  expect({ status: r.status, errors: r.body?.errors }).toEqual({ status, errors: [typeof message === 'string' ? message : expect.stringMatching(message)] });

async function versions(key: string): Promise<KeyVersionView[]> {
  return (await emu.state()).vaults.find((v) => v.name === VAULT)!.keys[key.toLowerCase()] ?? [];
}
/** The calls made since `from` (an index into the call log). */
const callsSince = async (from: number): Promise<CallRecord[]> => (await emu.calls()).slice(from);
const mark = async (): Promise<number> => (await emu.calls()).length;

beforeAll(async () => {
  c = await initCluster();
  await emu.register({
    clients: [
      { client_id: CLIENT, client_secret: SECRET },
      { client_id: READER, client_secret: READER_SECRET },
    ],
    vaults: [{ name: VAULT, access: { [CLIENT]: ['get', 'create', 'sign', 'verify', 'encrypt', 'decrypt'], [READER]: ['get', 'sign'] } }],
  });
  await other.register({ clients: [{ client_id: CLIENT, client_secret: SECRET }], vaults: [{ name: OTHER_VAULT }] });
});

describe('the endpoints', () => {
  it('the Worker is pointed at the emulator', () => {
    expect(env.AZURE_AUTHORITY_HOST).toBe(URL_BASE);
    expect(env.AZURE_KEYVAULT_URL).toBe(`${URL_BASE}/vaults/{vault_name}`);
  });
});

describe('test/sign generates RSA-HSM keys and signs', () => {
  it.each([2048, 3072, 4096])('RSA %i: created once with the configured spec; PKCS#1 v1.5 and PSS with SHA-256, SHA-384, SHA-512', async (bits) => {
    const name = `rsa-${bits}`;
    await create(name, { key_bits: String(bits), allow_generate_key: true });
    const from = await mark();
    signed(await testSign(name));
    const made = await versions(name);
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ kty: 'RSA-HSM', key_size: bits, key_ops: ['sign', 'verify'], enabled: true });
    const created = (await callsSince(from)).filter((x) => x.op === 'create');
    expect(created).toEqual([expect.objectContaining({ kty: 'RSA-HSM', key_size: bits, key_ops: ['sign', 'verify'], client_id: CLIENT, status: 200, api_version: '7.4' })]);

    const before = await mark();
    for (const hash of ['sha2-256', 'sha2-384', 'sha2-512']) {
      signed(await testSign(name, { hash_algorithm: hash }));
      signed(await testSign(name, { hash_algorithm: hash, use_pss: true }));
    }
    const ops = (await callsSince(before)).filter((x) => x.op === 'sign' || x.op === 'verify');
    // Each test/sign: a signature at the vault, then the vault's verification of it, on the version read.
    expect(ops.map((x) => `${x.op}:${x.alg}:${x.status}`)).toEqual(
      ['RS256', 'PS256', 'RS384', 'PS384', 'RS512', 'PS512'].flatMap((alg) => [`sign:${alg}:200`, `verify:${alg}:200`]),
    );
    expect(new Set(ops.map((x) => x.version))).toEqual(new Set([made[0].version]));
    // Still the one key: nothing was generated again.
    expect(await versions(name)).toHaveLength(1);
  }, 60_000);

  it('key_ops follow the usages: a key for sign, verify, encrypt and decrypt', async () => {
    await create('rsa-all', { key_bits: '2048', allow_generate_key: true, usages: 'sign,verify,encrypt,decrypt' });
    signed(await testSign('rsa-all'));
    expect((await versions('rsa-all'))[0].key_ops).toEqual(['sign', 'verify', 'encrypt', 'decrypt']);
  });

  it('refuses the hashes Key Vault cannot sign with', async () => {
    for (const hash of ['sha1', 'sha2-224', 'sha3-256', 'sha3-512']) {
      refused(await testSign('rsa-2048', { hash_algorithm: hash }), 400, `Azure Key Vault signs only SHA-2 digests (sha2-256, sha2-384, sha2-512), not ${hash}`);
    }
  });
});

describe('keys made outside Coffer', () => {
  it.each([
    ['P-256', 'sha2-256'],
    ['P-384', 'sha2-384'],
    ['P-521', 'sha2-512'],
  ] as const)('EC %s: used as it is (ES with %s), without allow_generate_key', async (crv, hash) => {
    const name = `ext-ec-${crv.slice(2)}`;
    await emu.createKey(VAULT, name, { kty: 'EC-HSM', crv });
    await create(name, {});
    const from = await mark();
    signed(await testSign(name, { hash_algorithm: hash }));
    const algs = (await callsSince(from)).filter((x) => x.op === 'sign').map((x) => x.alg);
    expect(algs).toEqual([`ES${hash.slice(5)}`]);
    // Key Vault pairs each curve with one hash.
    const other = hash === 'sha2-256' ? 'sha2-384' : 'sha2-256';
    refused(await testSign(name, { hash_algorithm: other }), 400, new RegExp(`^Azure Key Vault signs with a ${crv} key only ${hash} digests \\(ES\\d+\\), not ${other}$`));
    refused(await testSign(name, { hash_algorithm: hash, use_pss: true }), 400, 'use_pss applies only to RSA keys');
    expect(await versions(name)).toHaveLength(1);
  });

  it('RSA (software-protected, 3072): the latest version is used', async () => {
    await emu.createKey(VAULT, 'ext-rsa', { kty: 'RSA', key_size: 2048 });
    const latest = await emu.createKey(VAULT, 'ext-rsa', { kty: 'RSA', key_size: 3072 });
    await create('ext-rsa', {});
    const from = await mark();
    signed(await testSign('ext-rsa', { use_pss: true, hash_algorithm: 'sha2-512' }));
    expect((await callsSince(from)).filter((x) => x.op === 'sign').map((x) => [x.version, x.alg])).toEqual([[latest.version, 'PS512']]);
  });

  it('a missing key without allow_generate_key: 400, and nothing is created', async () => {
    await create('absent', {});
    const from = await mark();
    refused(await testSign('absent'), 400, 'managed key "absent": no key was found in the cloudbkeyvault (azurekeyvault) backend, and allow_generate_key is false');
    expect((await callsSince(from)).map((x) => `${x.op}:${x.status}:${x.code ?? ''}`)).toEqual(['get:404:KeyNotFound']);
    expect(await versions('absent')).toEqual([]);
  });

  it('a disabled key: 400 naming KeyDisabled', async () => {
    await emu.createKey(VAULT, 'disabled', { kty: 'RSA-HSM', key_size: 2048 });
    await emu.setEnabled(VAULT, 'disabled', false);
    await create('disabled', { allow_generate_key: true, key_bits: '2048' });
    refused(await testSign('disabled'), 400, /^Azure Key Vault refused to read key "disabled" in vault "cofmk\w+": Operation get is not allowed on a disabled key\. \(Forbidden\/KeyDisabled, HTTP 403\)$/);
    // A disabled key is not a missing one: allow_generate_key made no new version.
    expect(await versions('disabled')).toHaveLength(1);
  });
});

describe('credentials and access', () => {
  const secretFree = (r: ApiResult) => {
    for (const s of [SECRET, WRONG_SECRET, READER_SECRET]) expect(r.text).not.toContain(s);
  };

  it('a wrong client secret: 400 naming AADSTS7000215, without the secret', async () => {
    await create('wrong-secret', { key_name: 'rsa-2048', client_secret: WRONG_SECRET });
    const r = await testSign('wrong-secret');
    refused(r, 400, `Azure AD refused the token request of client "${CLIENT}" in tenant "${TENANT}": invalid client secret (invalid_client, AADSTS7000215)`);
    secretFree(r);
    const last = (await emu.calls()).at(-1)!;
    expect(last).toMatchObject({ api: 'aad', op: 'token', client_id: CLIENT, status: 401, code: 'invalid_client/AADSTS7000215' });
  });

  it('an unknown client: AADSTS700016; an unknown tenant: AADSTS90002', async () => {
    const stranger = crypto.randomUUID();
    await create('unknown-client', { key_name: 'rsa-2048', client_id: stranger });
    refused(await testSign('unknown-client'), 400, `Azure AD refused the token request of client "${stranger}" in tenant "${TENANT}": unknown client: no such application in the tenant (unauthorized_client, AADSTS700016)`);
    const nowhere = crypto.randomUUID();
    await create('unknown-tenant', { key_name: 'rsa-2048', tenant_id: nowhere });
    const r = await testSign('unknown-tenant');
    refused(r, 400, `Azure AD refused the token request of client "${CLIENT}" in tenant "${nowhere}": unknown tenant (invalid_request, AADSTS90002)`);
    secretFree(r);
  });

  it("the vault's access policy: a client without create permission cannot generate, but may sign", async () => {
    await create('reader-new', { client_id: READER, client_secret: READER_SECRET, key_bits: '2048', allow_generate_key: true });
    const r = await testSign('reader-new');
    refused(r, 400, new RegExp(`^Azure Key Vault refused to create key "reader-new" in vault "${VAULT}": The user, group or application 'appid=${READER};.* does not have keys create permission on key vault '${VAULT};.*\\(Forbidden/AccessDenied, HTTP 403\\)$`));
    secretFree(r);
    // sign yes, verify no: test/sign stops at the vault's verification (the key's usages include verify).
    await create('reader-old', { client_id: READER, client_secret: READER_SECRET, key_name: 'rsa-2048' });
    refused(await testSign('reader-old'), 400, /^Azure Key Vault refused to verify with key "rsa-2048" .*does not have keys verify permission.*\(Forbidden\/AccessDenied, HTTP 403\)$/);
    await create('reader-sign-only', { client_id: READER, client_secret: READER_SECRET, key_name: 'rsa-2048', usages: 'sign' });
    signed(await testSign('reader-sign-only'));
  });

  it("a vault of another tenant refuses this tenant's token (AKV10032)", async () => {
    await other.createKey(OTHER_VAULT, 'theirs', { kty: 'RSA-HSM', key_size: 2048 });
    await create('foreign-vault', { vault_name: OTHER_VAULT, key_name: 'theirs' });
    refused(await testSign('foreign-vault'), 400, /^Azure Key Vault refused to read key "theirs" in vault "cofother\w+": AKV10032: Invalid issuer\. .*\(Unauthorized, HTTP 401\)$/);
  });

  it('the environment picks the token scope: AZURECHINACLOUD asks for https://vault.azure.cn, which this vault refuses (AKV10022)', async () => {
    await create('china', { key_name: 'rsa-2048', environment: 'AZURECHINACLOUD' });
    const from = await mark();
    refused(await testSign('china'), 400, /^Azure Key Vault refused to read key "rsa-2048" in vault "cofmk\w+": AKV10022: Invalid audience\. Expected https:\/\/vault\.azure\.net, found: https:\/\/vault\.azure\.cn\. \(Unauthorized, HTTP 401\)$/);
    expect((await callsSince(from)).filter((x) => x.op === 'token').map((x) => x.scope)).toEqual(['https://vault.azure.cn/.default']);
  });

  it('reads show the client secret as "redacted"', async () => {
    for (const name of ['rsa-2048', 'wrong-secret', 'reader-new']) {
      const r = await ok('GET', `sys/managed-keys/azurekeyvault/${name}`);
      expect(r.body.data.client_secret).toBe('redacted');
      expect(r.body.data).toMatchObject({ tenant_id: TENANT, vault_name: expect.any(String), key_type: 'RSA-HSM', environment: 'AZUREPUBLICCLOUD', resource: 'vault.azure.net' });
      secretFree(r);
    }
  });
});

describe('tokens', () => {
  it('one token per credential, reused until revoked; a refused cached token is replaced once', async () => {
    const issued = async () => (await emu.state()).tokens_issued[CLIENT] ?? 0;
    // (A refusal elsewhere may have dropped the cached token: the first call may need a new one.)
    signed(await testSign('rsa-2048'));
    const before = await issued();
    for (let i = 0; i < 3; i++) signed(await testSign('rsa-2048'));
    expect(await issued()).toBe(before);
    await emu.revokeTokens();
    const from = await mark();
    signed(await testSign('rsa-2048'));
    expect(await issued()).toBe(before + 1);
    expect((await callsSince(from)).map((x) => `${x.op}:${x.status}`).slice(0, 3)).toEqual(['get:401', 'token:200', 'get:200']);
  });
});

describe('the cloud failing', () => {
  it('throttling (429) is waited out as Retry-After says, twice', async () => {
    await emu.faults([{ op: 'sign', status: 429, retry_after: 0, times: 2 }]);
    const from = await mark();
    signed(await testSign('rsa-2048'));
    expect((await callsSince(from)).filter((x) => x.op === 'sign').map((x) => `${x.status}:${x.code ?? ''}`)).toEqual(['429:Throttled', '429:Throttled', '200:']);
  });

  it('throttling that lasts, a server error, an unreachable vault, a failing token endpoint: 502', async () => {
    await emu.faults([{ op: 'sign', status: 429, retry_after: 0, times: 3 }]);
    refused(await testSign('rsa-2048'), 502, /^Azure Key Vault refused to sign with key "rsa-2048" in vault "cofmk\w+": .*\(Throttled, HTTP 429\)$/);
    await emu.faults([{ op: 'get', status: 503, code: 'ServiceUnavailable', message: 'The service is unavailable.' }]);
    refused(await testSign('rsa-2048'), 502, /^Azure Key Vault refused to read key "rsa-2048" in vault "cofmk\w+": The service is unavailable\. \(ServiceUnavailable, HTTP 503\)$/);
    await emu.faults([{ op: 'get', drop: true }]);
    refused(await testSign('rsa-2048'), 502, /^Azure Key Vault cannot be reached at http:\/\/127\.0\.0\.1:\d+\/vaults\/cofmk\w+: /);
    await emu.revokeTokens();
    await emu.faults([{ op: 'token', status: 503, code: 'temporarily_unavailable', aadsts: 50000 }]);
    // The revoked cached token is refused (401), and the new one cannot be had.
    refused(await testSign('rsa-2048'), 502, new RegExp(`^Azure AD refused the token request of client "${CLIENT}" in tenant "${TENANT}": .*\\(temporarily_unavailable, AADSTS50000\\)$`));
    await emu.faults([]);
    signed(await testSign('rsa-2048'));
  });
});

describe('transit on Key Vault keys', () => {
  let pubRsa = '';
  let pubEc = '';
  beforeAll(async () => {
    await ok('POST', 'sys/mounts/transit', { type: 'transit' });
    await create('transit-rsa', { key_bits: '2048', allow_generate_key: true, usages: 'sign,verify,encrypt,decrypt' });
    await emu.createKey(VAULT, 'transit-ec', { kty: 'EC-HSM', crv: 'P-256' });
    await create('transit-ec', {});
    await ok('POST', 'sys/mounts/transit/tune', { allowed_managed_keys: ['transit-rsa', 'transit-ec'] });
    await ok('POST', 'transit/keys/rsa', { type: 'managed_key', managed_key_name: 'transit-rsa' });
    await ok('POST', 'transit/keys/ec', { type: 'managed_key', managed_key_name: 'transit-ec' });
    pubRsa = (await ok('GET', 'transit/keys/rsa')).body.data.keys['1'].public_key;
    pubEc = (await ok('GET', 'transit/keys/ec')).body.data.keys['1'].public_key;
  }, 60_000);

  const input = btoa('message to sign');
  const sig = (s: string) => bytes(s.split(':')[2]);

  it("the transit keys' public keys are the vault's", async () => {
    expect(b64(der(pubRsa))).toBe(b64(der((await versions('transit-rsa'))[0].public_key)));
    expect(b64(der(pubEc))).toBe(b64(der((await versions('transit-ec'))[0].public_key)));
  });

  it('RSA: PKCS#1 v1.5 and PSS (salt = hash length) signatures verify with WebCrypto (the default salt is the hash length); the largest salt is refused', async () => {
    const pkcs1 = await crypto.subtle.importKey('spki', der(pubRsa), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-384' }, false, ['verify']);
    const s1 = (await ok('POST', 'transit/sign/rsa/sha2-384', { input, signature_algorithm: 'pkcs1v15' })).body.data.signature;
    expect(await crypto.subtle.verify('RSASSA-PKCS1-v1_5', pkcs1, sig(s1), utf8('message to sign'))).toBe(true);
    expect(await crypto.subtle.verify('RSASSA-PKCS1-v1_5', pkcs1, sig(s1), utf8('another message'))).toBe(false);

    const pss = await crypto.subtle.importKey('spki', der(pubRsa), { name: 'RSA-PSS', hash: 'SHA-256' }, false, ['verify']);
    const s2 = (await ok('POST', 'transit/sign/rsa', { input, signature_algorithm: 'pss', salt_length: 'hash' })).body.data.signature;
    expect(await crypto.subtle.verify({ name: 'RSA-PSS', saltLength: 32 }, pss, sig(s2), utf8('message to sign'))).toBe(true);
    expect((await ok('POST', 'transit/verify/rsa', { input, signature: s2, signature_algorithm: 'pss', salt_length: 'hash' })).body.data.valid).toBe(true);

    // The default salt of a managed key is the hash length: signed; the largest salt is refused.
    const byDefault = (await ok('POST', 'transit/sign/rsa', { input, signature_algorithm: 'pss' })).body.data.signature;
    expect(await crypto.subtle.verify({ name: 'RSA-PSS', saltLength: 32 }, pss, sig(byDefault), utf8('message to sign'))).toBe(true);
    const largest = await call('POST', 'transit/sign/rsa', { input, signature_algorithm: 'pss', salt_length: 222 });
    refused(largest, 400, "Azure Key Vault's PSS signatures use a salt as long as the hash (32 bytes), not 222");
  });

  it('ECDSA P-256: ASN.1 and JWS signatures verify with WebCrypto', async () => {
    const key = await crypto.subtle.importKey('spki', der(pubEc), { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
    const jws = (await ok('POST', 'transit/sign/ec', { input, marshaling_algorithm: 'jws' })).body.data.signature as string;
    const raw = fromB64Url(jws.split(':')[2]);
    expect(raw.length).toBe(64);
    expect(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, raw, utf8('message to sign'))).toBe(true);
    const asn1 = (await ok('POST', 'transit/sign/ec', { input })).body.data.signature as string;
    const p1363 = new Uint8Array(new x509.AsnEcSignatureFormatter().toWebSignature({ name: 'ECDSA', namedCurve: 'P-256' }, sig(asn1))!);
    expect(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, p1363, utf8('message to sign'))).toBe(true);
    expect((await ok('POST', 'transit/verify/ec', { input, signature: asn1 })).body.data.valid).toBe(true);
  });

  it('RSA-OAEP: a ciphertext made here with the public key decrypts through transit, and back', async () => {
    const key = await crypto.subtle.importKey('spki', der(pubRsa), { name: 'RSA-OAEP', hash: 'SHA-1' }, false, ['encrypt']);
    const plaintext = btoa('the data key');
    const ct = new Uint8Array(await crypto.subtle.encrypt({ name: 'RSA-OAEP' }, key, utf8('the data key')));
    const from = await mark();
    expect((await ok('POST', 'transit/decrypt/rsa', { ciphertext: `vault:v1:${b64(ct)}` })).body.data.plaintext).toBe(plaintext);
    const enc = (await ok('POST', 'transit/encrypt/rsa', { plaintext })).body.data.ciphertext;
    expect((await ok('POST', 'transit/decrypt/rsa', { ciphertext: enc })).body.data.plaintext).toBe(plaintext);
    expect((await callsSince(from)).filter((x) => x.op === 'encrypt' || x.op === 'decrypt').map((x) => `${x.op}:${x.alg}:${x.status}`)).toEqual([
      'decrypt:RSA-OAEP:200',
      'encrypt:RSA-OAEP:200',
      'decrypt:RSA-OAEP:200',
    ]);
  });
});

describe('PKI on Key Vault keys', () => {
  beforeAll(async () => {
    await ok('POST', 'sys/mounts/pki-azure', { type: 'pki', config: { max_lease_ttl: '87600h' } });
    await create('pki-rsa', { key_bits: '3072', allow_generate_key: true });
    await emu.createKey(VAULT, 'pki-ec', { kty: 'EC-HSM', crv: 'P-256' });
    await create('pki-ec', {});
    await ok('POST', 'sys/mounts/pki-azure/tune', { allowed_managed_keys: ['pki-rsa', 'pki-ec'] });
  }, 60_000);

  const cert = (pem: string) => new x509.X509Certificate(pem);

  it.each([
    ['pki-rsa', 'RSASSA-PKCS1-v1_5'],
    ['pki-ec', 'ECDSA'],
  ])("root/generate/kms with %s: the root's public key is the vault's, and its self-signature verifies", async (name, algorithm) => {
    const r = await ok('POST', 'pki-azure/root/generate/kms', { managed_key_name: name, common_name: `Azure ${name}`, issuer_name: name });
    const pem = r.body.data.certificate as string;
    expect(r.text).not.toContain('PRIVATE KEY');
    const vaultKey = (await versions(name))[0];
    expect(b64(cert(pem).publicKey.rawData)).toBe(b64(der(vaultKey.public_key)));
    expect(cert(pem).signatureAlgorithm).toMatchObject({ name: algorithm, hash: { name: 'SHA-256' } });
    expect(await cert(pem).verify({ publicKey: cert(pem).publicKey, signatureOnly: true })).toBe(true);
  });
});
