// The azurekeyvault backend by itself (src/managed-keys/azurekeyvault.ts and its azure-* helpers),
// driven directly against the Azure emulator with a recording fetch: the URLs per environment, what
// goes over the wire (the secret only in the token request's form body), the token cache, ECDSA's
// r‖s ↔ DER, the algorithm choices and refusals, and how Retry-After is honoured.
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { azureTarget, keyUrl } from '../../../src/managed-keys/azure-endpoints';
import { clearAzureTokenCache } from '../../../src/managed-keys/azure-token';
import { azureKeyVaultBackend } from '../../../src/managed-keys/azurekeyvault';
import type { AzureKeyVaultConfig, BackendDeps, ManagedKeyEntry } from '../../../src/managed-keys/types';
import { azureEmulator } from '../../emulators/azure-keyvault/client';

const BASE = inject('azureKeyVaultUrl');
const run = Math.random().toString(36).slice(2, 8);
const TENANT = crypto.randomUUID();
const CLIENT = crypto.randomUUID();
const SECRET = `unit-secret~${run}`;
const VAULT = `cofunit${run}`;
const emu = azureEmulator(BASE, TENANT);

interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string;
}
const sent: Sent[] = [];
const deps: BackendDeps = {
  fetch: async (input, init) => {
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    sent.push({ url: String(input), method: init?.method ?? 'GET', headers, body: typeof init?.body === 'string' ? init.body : '' });
    return fetch(input, init);
  },
  endpoints: { azureAuthority: BASE, azureKeyVault: `${BASE}/vaults/{vault_name}` },
};

const config = (over: Partial<AzureKeyVaultConfig> = {}): AzureKeyVaultConfig => ({
  tenant_id: TENANT,
  client_id: CLIENT,
  client_secret: SECRET,
  environment: 'AZUREPUBLICCLOUD',
  vault_name: VAULT,
  key_name: 'k',
  resource: 'vault.azure.net',
  key_bits: '2048',
  key_type: 'RSA-HSM',
  ...over,
});
const entry = (over: Partial<AzureKeyVaultConfig> = {}, usages: ManagedKeyEntry['usages'] = ['sign', 'verify', 'encrypt', 'decrypt']): ManagedKeyEntry => ({
  uuid: crypto.randomUUID(),
  name: 'unit',
  type: 'cloudbkeyvault',
  allowGenerateKey: true,
  allowReplaceKey: false,
  allowStoreKey: false,
  anyMount: false,
  usages,
  config: config(over),
});
const backend = (over: Partial<AzureKeyVaultConfig> = {}) => azureKeyVaultBackend(entry(over), deps);
const sha = async (alg: string, s: string) => new Uint8Array(await crypto.subtle.digest(alg, new TextEncoder().encode(s)));

beforeAll(async () => {
  await emu.register({ clients: [{ client_id: CLIENT, client_secret: SECRET }], vaults: [{ name: VAULT }] });
  await emu.createKey(VAULT, 'ec256', { kty: 'EC-HSM', crv: 'P-256' });
  await emu.createKey(VAULT, 'rsa', { kty: 'RSA-HSM', key_size: 2048 });
});

describe('endpoints', () => {
  it('the public cloud by default; each national cloud its authority and key store suffix', () => {
    expect(azureTarget(config(), undefined)).toEqual({
      tokenUrl: `https://login.microsoftonline.com/${TENANT}/oauth2/v2.0/token`,
      authority: 'https://login.microsoftonline.com',
      scope: 'https://vault.azure.net/.default',
      vaultUrl: `https://${VAULT}.vault.azure.net`,
    });
    expect(azureTarget(config({ environment: 'AZURECHINACLOUD' }), undefined)).toMatchObject({
      authority: 'https://login.chinacloudapi.cn',
      scope: 'https://vault.azure.cn/.default',
      vaultUrl: `https://${VAULT}.vault.azure.cn`,
    });
    expect(azureTarget(config({ environment: 'AZUREUSGOVERNMENTCLOUD' }), undefined)).toMatchObject({ authority: 'https://login.microsoftonline.us', scope: 'https://vault.usgovcloudapi.net/.default' });
    expect(azureTarget(config({ environment: 'AZUREGERMANCLOUD' }), undefined)).toMatchObject({ authority: 'https://login.microsoftonline.de', scope: 'https://vault.microsoftazure.de/.default' });
    // A resource of its own (a Managed HSM, a private suffix) is kept.
    expect(azureTarget(config({ resource: 'managedhsm.azure.net' }), undefined)).toMatchObject({ scope: 'https://managedhsm.azure.net/.default', vaultUrl: `https://${VAULT}.managedhsm.azure.net` });
  });

  it('the overrides replace the hosts, {vault_name} included; keys are addressed with api-version 7.4', () => {
    const t = azureTarget(config(), { azureAuthority: 'http://127.0.0.1:1/', azureKeyVault: 'http://127.0.0.1:2/vaults/{vault_name}/' });
    expect(t).toEqual({ tokenUrl: `http://127.0.0.1:1/${TENANT}/oauth2/v2.0/token`, authority: 'http://127.0.0.1:1', scope: 'https://vault.azure.net/.default', vaultUrl: `http://127.0.0.1:2/vaults/${VAULT}` });
    expect(keyUrl(t, 'my-key')).toBe(`http://127.0.0.1:2/vaults/${VAULT}/keys/my-key?api-version=7.4`);
    expect(keyUrl(t, 'my-key', 'abc', 'sign')).toBe(`http://127.0.0.1:2/vaults/${VAULT}/keys/my-key/abc/sign?api-version=7.4`);
  });
});

describe('the wire', () => {
  it('a client-credentials token, then bearer calls; the secret travels only in the token request', async () => {
    clearAzureTokenCache();
    sent.length = 0;
    const key = backend({ key_name: 'rsa' });
    await key.publicKey();
    expect(sent.map((s) => `${s.method} ${s.url}`)).toEqual([`POST ${BASE}/${TENANT}/oauth2/v2.0/token`, `GET ${BASE}/vaults/${VAULT}/keys/rsa?api-version=7.4`]);
    expect(sent[0].headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(Object.fromEntries(new URLSearchParams(sent[0].body))).toEqual({ grant_type: 'client_credentials', client_id: CLIENT, client_secret: SECRET, scope: 'https://vault.azure.net/.default' });
    expect(sent[1].headers.authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    for (const s of sent.slice(1)) expect(JSON.stringify(s)).not.toContain(SECRET);
  });

  it('tokens are cached per credential: another key reuses it, another secret does not', async () => {
    clearAzureTokenCache();
    const issued = async () => (await emu.state()).tokens_issued[CLIENT] ?? 0;
    const start = await issued();
    await backend({ key_name: 'rsa' }).publicKey();
    await backend({ key_name: 'ec256' }).publicKey();
    expect(await issued()).toBe(start + 1);
    await expect(backend({ key_name: 'rsa', client_secret: 'another' }).publicKey()).rejects.toThrow(/AADSTS7000215/);
    expect(await issued()).toBe(start + 1);
  });

  it('generate: POST …/create with the configured type and size, and key_ops from the usages', async () => {
    sent.length = 0;
    const info = await azureKeyVaultBackend(entry({ key_name: 'made', key_bits: '3072' }, ['sign', 'verify', 'wrap', 'mac']), deps).generate();
    expect(info).toMatchObject({ keyType: 'rsa', bits: 3072 });
    const create = sent.find((s) => s.url.includes('/create'))!;
    expect(JSON.parse(create.body)).toEqual({ kty: 'RSA-HSM', key_size: 3072, key_ops: ['sign', 'verify', 'wrapKey'] });
  });
});

describe('signatures', () => {
  it('ECDSA: Key Vault answers r‖s, the backend gives DER; DER is turned back for verify; garbage does not reach the vault', async () => {
    const key = backend({ key_name: 'ec256' });
    const pub = await key.publicKey();
    expect(pub).toMatchObject({ keyType: 'ec', curve: 'P-256' });
    const digest = await sha('SHA-256', 'data');
    const sig = await key.sign(digest, { hash: 'sha2-256' });
    expect(sig[0]).toBe(0x30);
    const spki = await crypto.subtle.importKey('spki', pemDer(pub.pem), { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
    const { AsnEcSignatureFormatter } = await import('../../../src/crypto/pki/x509');
    const raw = new Uint8Array(new AsnEcSignatureFormatter().toWebSignature({ name: 'ECDSA', namedCurve: 'P-256' }, sig)!);
    expect(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, spki, raw, new TextEncoder().encode('data'))).toBe(true);
    expect(await key.verify(digest, sig, { hash: 'sha2-256' })).toBe(true);
    expect(await key.verify(await sha('SHA-256', 'other'), sig, { hash: 'sha2-256' })).toBe(false);
    sent.length = 0;
    expect(await key.verify(digest, new Uint8Array([1, 2, 3]), { hash: 'sha2-256' })).toBe(false);
    expect(sent).toEqual([]);
  });

  it('RSA: PKCS#1 v1.5 and PSS; PSS salt other than the hash length, non-SHA-2 hashes, wrong digest sizes: 400', async () => {
    const key = backend({ key_name: 'rsa' });
    const pub = await key.publicKey();
    const digest = await sha('SHA-384', 'data');
    const pss = await key.sign(digest, { hash: 'sha2-384', pss: true, saltLength: 48 });
    const spki = await crypto.subtle.importKey('spki', pemDer(pub.pem), { name: 'RSA-PSS', hash: 'SHA-384' }, false, ['verify']);
    expect(await crypto.subtle.verify({ name: 'RSA-PSS', saltLength: 48 }, spki, pss, new TextEncoder().encode('data'))).toBe(true);
    const tampered = pss.slice();
    tampered[10] ^= 1;
    expect(await key.verify(digest, tampered, { hash: 'sha2-384', pss: true })).toBe(false);
    await expect(key.sign(digest, { hash: 'sha2-384', pss: true, saltLength: 20 })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/salt as long as the hash \(48 bytes\), not 20/) });
    await expect(key.sign(await sha('SHA-1', 'x'), { hash: 'sha1' })).rejects.toMatchObject({ status: 400 });
    await expect(key.sign(digest, { hash: 'sha2-256' })).rejects.toMatchObject({ status: 400, message: 'a sha2-256 digest is 32 bytes, not 48' });
  });

  it('RSA-OAEP with SHA-1 or SHA-256 round-trips; other hashes and EC keys: 400', async () => {
    const key = backend({ key_name: 'rsa' });
    for (const hash of ['sha1', 'sha2-256'] as const) {
      const ct = await key.encrypt(new TextEncoder().encode('secret data'), { hash });
      expect(new TextDecoder().decode(await key.decrypt(ct, { hash }))).toBe('secret data');
    }
    await expect(key.encrypt(new Uint8Array(4), { hash: 'sha2-512' })).rejects.toMatchObject({ status: 400 });
    await expect(backend({ key_name: 'ec256' }).encrypt(new Uint8Array(4), { hash: 'sha1' })).rejects.toMatchObject({ status: 400, message: 'only RSA keys can encrypt and decrypt' });
  });
});

describe('failures', () => {
  it('Retry-After is honoured', async () => {
    const key = backend({ key_name: 'rsa' });
    await key.publicKey();
    await emu.faults([{ op: 'sign', status: 429, retry_after: 1 }]);
    const started = Date.now();
    await key.sign(await sha('SHA-256', 'x'), { hash: 'sha2-256' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('a dropped connection: 502; a missing key: ManagedKeyMissing', async () => {
    await emu.faults([{ op: 'get', drop: true }]);
    await expect(backend({ key_name: 'rsa' }).publicKey()).rejects.toMatchObject({ status: 502, message: expect.stringMatching(/^Azure Key Vault cannot be reached at /) });
    await expect(backend({ key_name: 'nope' }).publicKey()).rejects.toMatchObject({ name: 'ManagedKeyMissing', status: 400 });
  });
});

function pemDer(pem: string): Uint8Array {
  return Uint8Array.from(atob(pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, '')), (c) => c.charCodeAt(0));
}
