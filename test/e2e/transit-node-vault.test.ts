// Transit as a node-vault user meets it against the launcher: its transit helpers (create, read,
// list, delete keys; encrypt, decrypt, rewrap), generic writes for sign/verify, HMAC and data
// keys, upsert, batches, a token that may encrypt but not decrypt, and a key's CSR and certificate
// checked with openssl.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import nodeVault from 'node-vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLauncher, tempDir, type Server } from './processes';

const ROOT_TOKEN = 'hvs.e2eRootTokenForTransitTest0';
type Client = ReturnType<typeof nodeVault>;
const b64 = (s: string) => Buffer.from(s).toString('base64');

async function failure(call: () => Promise<unknown>): Promise<{ status: number; errors: string[] }> {
  try {
    await call();
  } catch (e) {
    const err = e as { response?: { statusCode: number; body?: { errors?: string[] } } };
    return { status: err.response?.statusCode ?? 0, errors: err.response?.body?.errors ?? [] };
  }
  throw new Error('expected the call to fail');
}

describe('transit with node-vault', () => {
  let server: Server;
  let vault: Client;
  const client = (token?: string) => nodeVault({ endpoint: server.url, token, noCustomHTTPVerbs: true });

  beforeAll(async () => {
    server = await startLauncher(tempDir('coffer-e2e-transit-'), { COFFER_DEV_ROOT_TOKEN: ROOT_TOKEN });
    vault = client(ROOT_TOKEN);
    await vault.mount({ mount_point: 'transit', type: 'transit' });
  });
  afterAll(async () => {
    await server?.stop('SIGTERM');
  });

  it('manages keys and encrypts, decrypts and rewraps through the client helpers', async () => {
    await vault.transitCreateKey({ name: 'orders' });
    const key = await vault.transitReadKey({ name: 'orders' });
    expect(key.data).toMatchObject({ name: 'orders', type: 'aes256-gcm96', latest_version: 1, supports_encryption: true });
    // transitListKeys sends the LIST verb, which never reaches a Worker (README, "The LIST verb").
    expect((await vault.list('transit/keys')).data.keys).toEqual(['orders']);

    const plaintext = b64('card ending 4242');
    const enc = await vault.encryptData({ name: 'orders', plaintext });
    expect(enc.data.ciphertext).toMatch(/^vault:v1:/);
    expect((await vault.decryptData({ name: 'orders', ciphertext: enc.data.ciphertext })).data.plaintext).toBe(plaintext);

    await vault.write('transit/keys/orders/rotate', {});
    const rewrapped = await vault.rewrapData({ name: 'orders', ciphertext: enc.data.ciphertext });
    expect(rewrapped.data).toMatchObject({ key_version: 2, ciphertext: expect.stringMatching(/^vault:v2:/) });
    expect((await vault.decryptData({ name: 'orders', ciphertext: rewrapped.data.ciphertext })).data.plaintext).toBe(plaintext);

    const refused = await failure(() => vault.transitDeleteKey({ name: 'orders' }));
    expect(refused).toEqual({ status: 400, errors: ['deletion is not allowed for this key'] });
    await vault.write('transit/keys/orders/config', { deletion_allowed: true });
    await vault.transitDeleteKey({ name: 'orders' });
    expect((await failure(() => vault.transitReadKey({ name: 'orders' }))).status).toBe(404);
  });

  it('signs and verifies, HMACs, and makes data keys', async () => {
    await vault.write('transit/keys/signer', { type: 'ed25519' });
    const input = b64('release-1.2.3.tar.gz');
    const signed = await vault.write('transit/sign/signer', { input });
    expect(signed.data).toMatchObject({ key_version: 1, signature: expect.stringMatching(/^vault:v1:/) });
    expect((await vault.write('transit/verify/signer', { input, signature: signed.data.signature })).data.valid).toBe(true);
    expect((await vault.write('transit/verify/signer', { input: b64('tampered'), signature: signed.data.signature })).data.valid).toBe(false);

    const mac = await vault.write('transit/hmac/signer/sha2-512', { input });
    expect((await vault.write('transit/verify/signer/sha2-512', { input, hmac: mac.data.hmac })).data.valid).toBe(true);

    await vault.transitCreateKey({ name: 'dek' });
    const dk = await vault.write('transit/datakey/plaintext/dek', { bits: 512 });
    expect(Buffer.from(dk.data.plaintext, 'base64')).toHaveLength(64);
    expect((await vault.decryptData({ name: 'dek', ciphertext: dk.data.ciphertext })).data.plaintext).toBe(dk.data.plaintext);
  });

  it('creates keys on encrypt, handles batches with references, and refuses bad input with 400s', async () => {
    const batch = await vault.encryptData({
      name: 'upserted',
      batch_input: [
        { plaintext: b64('a'), reference: 'first' },
        { plaintext: b64('b'), reference: 'second' },
      ],
    });
    expect(batch.data.batch_results.map((r: { reference: string }) => r.reference)).toEqual(['first', 'second']);
    expect((await vault.transitReadKey({ name: 'upserted' })).data.type).toBe('aes256-gcm96');
    const bad = await failure(() => vault.decryptData({ name: 'upserted', ciphertext: 'not-a-ciphertext' }));
    expect(bad).toEqual({ status: 400, errors: ['invalid ciphertext: no prefix'] });
    const partial = await failure(() =>
      vault.decryptData({ name: 'upserted', batch_input: [{ ciphertext: batch.data.batch_results[0].ciphertext }, { ciphertext: 'nope' }] }),
    );
    expect(partial.status).toBe(400);
  });

  it('makes a CSR openssl verifies, and keeps the certificate an openssl CA issued for it', async () => {
    const dir = tempDir('coffer-e2e-csr-');
    const file = (name: string) => path.join(dir, name);
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    await vault.write('transit/keys/web', { type: 'ecdsa-p256' });
    const csr = (await vault.write('transit/keys/web/csr', {})).data.csr as string;
    writeFileSync(file('web.csr'), csr);
    openssl('req', '-in', 'web.csr', '-verify', '-noout');
    // The CSR carries the key's public key.
    const pub = (await vault.transitReadKey({ name: 'web' })).data.keys['1'].public_key as string;
    expect(openssl('req', '-in', 'web.csr', '-pubkey', '-noout').trim()).toBe(pub.trim());

    openssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '1', '-subj', '/CN=e2e CA');
    openssl('x509', '-req', '-in', 'web.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-out', 'web.pem', '-days', '1', '-subj', '/CN=web.example');
    const chain = readFileSync(file('web.pem'), 'utf8') + readFileSync(file('ca.pem'), 'utf8');
    await vault.write('transit/keys/web/set-certificate', { certificate_chain: chain });
    const exported = (await vault.read('transit/export/certificate-chain/web/1')).data.keys['1'] as string;
    writeFileSync(file('exported.pem'), `${exported.split(/(?<=-----END CERTIFICATE-----)/)[0].trim()}\n`);
    expect(openssl('verify', '-CAfile', 'ca.pem', 'exported.pem')).toContain('exported.pem: OK');
  });

  it('a token that may only encrypt cannot decrypt', async () => {
    await vault.transitCreateKey({ name: 'one-way' });
    await vault.addPolicy({ name: 'encrypt-only', rules: 'path "transit/encrypt/one-way*" { capabilities = ["update"] }' });
    const token = (await client(ROOT_TOKEN).tokenCreate({ policies: ['encrypt-only'] })).auth.client_token;
    const app = client(token);
    const enc = await app.encryptData({ name: 'one-way', plaintext: b64('write only') });
    expect(enc.data.ciphertext).toMatch(/^vault:v1:/);
    const denied = await failure(() => app.decryptData({ name: 'one-way', ciphertext: enc.data.ciphertext }));
    expect(denied).toEqual({ status: 403, errors: ['1 error occurred:\n\t* permission denied\n\n'] });
    // Encrypting under a new name would create a key: update alone may not.
    expect(await failure(() => app.encryptData({ name: 'one-way-2', plaintext: b64('x') }))).toEqual({ status: 400, errors: ['encryption key not found'] });
  });
});
