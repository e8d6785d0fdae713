// node-vault against the secrets engines: its transit methods (which address the engine at
// transit/), KV v2 with destroySecretVersions, and PKI through the generic methods.
import { execFileSync } from 'node:child_process';
import { createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { failure, unique, vault } from './client';

const root = vault();
const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('transit (node-vault\'s transit methods use the mount transit/)', () => {
  beforeAll(async () => {
    await root.mount({ mount_point: 'transit', type: 'transit' });
  });

  it('transitCreateKey, transitReadKey and transitDeleteKey', async () => {
    const name = unique('key');
    await root.transitCreateKey({ name, type: 'ecdsa-p256', exportable: true });
    const key = (await root.transitReadKey({ name })).data;
    expect(key).toMatchObject({ name, type: 'ecdsa-p256', exportable: true, latest_version: 1 });
    expect(key.keys['1'].public_key).toContain('BEGIN PUBLIC KEY');
    expect((await failure(root.transitDeleteKey({ name }))).errors[0]).toContain('deletion is not allowed');
    await root.write(`transit/keys/${name}/config`, { deletion_allowed: true });
    await root.transitDeleteKey({ name });
    expect((await failure(root.transitReadKey({ name }))).status).toBe(404);
  });

  it('ECDSA signatures through write, verified by OpenSSL (node:crypto) against the key read back', async () => {
    for (const [type, hash] of [
      ['ecdsa-p256', 'sha256'],
      ['ecdsa-p384', 'sha384'],
    ] as const) {
      const name = unique('sig');
      await root.transitCreateKey({ name, type });
      const publicKey = createPublicKey((await root.transitReadKey({ name })).data.keys['1'].public_key);
      for (let i = 0; i < 12; i++) {
        const message = `message ${i} for ${type}`;
        const signed = (await root.write(`transit/sign/${name}/sha2-${hash.slice(3)}`, { input: b64(message) })).data.signature as string;
        const der = Buffer.from(signed.split(':')[2], 'base64');
        expect(verify(hash, Buffer.from(message), { key: publicKey, dsaEncoding: 'der' }, der)).toBe(true);
      }
    }
  });

  it('transitCreateKey with a type named like an Object property: 400, and no key (once a 500)', async () => {
    for (const type of ['constructor', '__proto__', 'toString']) {
      const name = unique('proto');
      const refused = await failure(root.transitCreateKey({ name, type }));
      expect(refused.status).toBe(400);
      expect(refused.errors).toEqual([`unknown key type ${type}`]);
      expect((await failure(root.transitReadKey({ name }))).status).toBe(404);
    }
  });

  it('encryptData, decryptData and rewrapData', async () => {
    const name = unique('aes');
    await root.transitCreateKey({ name });
    const ciphertext = (await root.encryptData({ name, plaintext: b64('top secret') })).data.ciphertext;
    expect(ciphertext).toMatch(/^vault:v1:/);
    expect((await root.decryptData({ name, ciphertext })).data.plaintext).toBe(b64('top secret'));
    await root.write(`transit/keys/${name}/rotate`, {});
    const rewrapped = (await root.rewrapData({ name, ciphertext })).data.ciphertext;
    expect(rewrapped).toMatch(/^vault:v2:/);
    expect((await root.decryptData({ name, ciphertext: rewrapped })).data.plaintext).toBe(b64('top secret'));
  });

  it('batch encryption through encryptData', async () => {
    const name = unique('batch');
    await root.transitCreateKey({ name, type: 'chacha20-poly1305' });
    const results = (await root.encryptData({ name, batch_input: [{ plaintext: b64('a'), reference: 'one' }, { plaintext: b64('b') }] })).data.batch_results;
    expect(results.map((r: { reference: string }) => r.reference)).toEqual(['one', '']);
    const back = (await root.decryptData({ name, batch_input: results.map((r: { ciphertext: string }) => ({ ciphertext: r.ciphertext })) })).data.batch_results;
    expect(back.map((r: { plaintext: string }) => r.plaintext)).toEqual([b64('a'), b64('b')]);
  });

  it('lists keys with list("transit/keys") (transitListKeys always sends LIST)', async () => {
    const name = unique('listed');
    await root.transitCreateKey({ name });
    expect((await root.list('transit/keys')).data.keys).toContain(name);
    expect((await failure(root.transitListKeys())).status).toBe(501);
  });
});

describe('KV v2', () => {
  it('versions, check-and-set and destroySecretVersions', async () => {
    const mount = unique('kv2');
    await root.mount({ mount_point: mount, type: 'kv', options: { version: '2' } });
    await root.write(`${mount}/data/app`, { data: { v: '1' } });
    await root.write(`${mount}/data/app`, { data: { v: '2' }, options: { cas: 1 } });
    expect((await failure(root.write(`${mount}/data/app`, { data: { v: '3' }, options: { cas: 1 } }))).errors[0]).toContain('check-and-set parameter did not match');
    await root.destroySecretVersions({ mount_point: mount, path: 'app', versions: [1] });
    const meta = (await root.read(`${mount}/metadata/app`)).data;
    expect(meta.versions['1'].destroyed).toBe(true);
    expect(meta.versions['2'].destroyed).toBe(false);
    expect((await root.read(`${mount}/data/app?version=2`)).data.data).toEqual({ v: '2' });
  });
});

describe('PKI', () => {
  it('generates a root, issues a certificate openssl verifies, and revokes it', async () => {
    const mount = unique('pki');
    await root.mount({ mount_point: mount, type: 'pki', config: { max_lease_ttl: '8760h' } });
    const ca = (await root.write(`${mount}/root/generate/internal`, { common_name: 'node-vault root', ttl: '8760h', key_type: 'ec' })).data.certificate;
    await root.write(`${mount}/roles/web`, { allowed_domains: ['example.com'], allow_subdomains: true, key_type: 'ec' });
    const issued = (await root.write(`${mount}/issue/web`, { common_name: 'www.example.com', ttl: '1h' })).data;
    const text = execFileSync('openssl', ['x509', '-noout', '-subject'], { input: issued.certificate, encoding: 'utf8' });
    expect(text).toContain('CN = www.example.com');
    expect(issued.issuing_ca.trim()).toBe(ca.trim());
    expect((await root.list(`${mount}/certs`)).data.keys).toContain(issued.serial_number);
    expect((await root.write(`${mount}/revoke`, { serial_number: issued.serial_number })).data.revocation_time).toBeGreaterThan(0);
    // Stored serials begin with their time (ms), so certificates issued in turn list in turn.
    const serials: string[] = [];
    for (let i = 0; i < 3; i++) serials.push((await root.write(`${mount}/issue/web`, { common_name: 'order.example.com' })).data.serial_number);
    const listed = ((await root.list(`${mount}/certs`)).data.keys as string[]).filter((k) => serials.includes(k));
    expect(listed).toEqual([...serials].sort());
    const text2 = execFileSync('openssl', ['x509', '-noout', '-serial'], { input: (await root.read(`${mount}/cert/${serials[0]}`)).data.certificate, encoding: 'utf8' });
    expect(text2.trim()).toBe(`serial=${serials[0].replace(/:/g, '').toUpperCase()}`);
    expect(Math.abs(parseInt(serials[0].replace(/:/g, '').slice(0, 12), 16) - Date.now())).toBeLessThan(60_000);
  });

  it('certificates issued in a row by a no_store role each hold what their own request asked', async () => {
    // Issued in the Worker, where certificates of one shape share an encoding and names once
    // encoded are kept: names, lengths, IP SANs and TTLs vary and repeat.
    const mount = unique('pki');
    await root.mount({ mount_point: mount, type: 'pki', config: { max_lease_ttl: '8760h' } });
    const ca = (await root.write(`${mount}/root/generate/internal`, { common_name: 'node-vault row root', ttl: '8760h', key_type: 'ec' })).data.certificate;
    await root.write(`${mount}/roles/row`, { allowed_domains: ['example.com'], allow_subdomains: true, allow_ip_sans: true, key_type: 'ec', no_store: true });
    const dir = mkdtempSync(path.join(os.tmpdir(), 'node-vault-pki-'));
    try {
      const caFile = path.join(dir, 'ca.pem');
      writeFileSync(caFile, ca);
      const openssl = (args: string[], input: string) => execFileSync('openssl', args, { input, encoding: 'utf8' }).trim();
      for (const [i, label] of ['a', 'b'.repeat(40), 'a', 'c'.repeat(63), 'b'.repeat(40)].entries()) {
        const name = `${label}.row.example.com`;
        const ip = `10.0.${i}.${i * 50 + 1}`;
        const issued = (await root.write(`${mount}/issue/row`, { common_name: name, ip_sans: ip, ttl: `${(i % 2) + 1}h` })).data;
        const pem = issued.certificate as string;
        expect(openssl(['verify', '-CAfile', caFile], pem)).toBe('stdin: OK');
        expect(openssl(['x509', '-noout', '-subject', '-nameopt', 'RFC2253'], pem)).toBe(`subject=CN=${name}`);
        expect(openssl(['x509', '-noout', '-ext', 'subjectAltName'], pem).split('\n')[1].trim()).toBe(`DNS:${name}, IP Address:${ip}`);
        expect(openssl(['x509', '-noout', '-serial'], pem)).toBe(`serial=${(issued.serial_number as string).replace(/:/g, '').toUpperCase()}`);
        const dates = Object.fromEntries(openssl(['x509', '-noout', '-dates'], pem).split('\n').map((l) => l.split('=')));
        expect((Date.parse(dates.notAfter) - Date.parse(dates.notBefore)) / 1000).toBe(((i % 2) + 1) * 3600 + 30);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
