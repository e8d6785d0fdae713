// node-vault against PKI issuers on managed keys (root|intermediate|keys/generate/kms), backed by
// pkcs11 managed keys on the launcher's SoftHSM2 token, through its generic write/read (it has
// no PKI methods) and its mount method. Certificates, the CRL and the OCSP answer are checked
// with node:crypto and openssl, against the public key the engine's own reads never provide.
import { execFileSync, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { coffer, failure, unique, vault } from './client';

const root = vault();
const hsm = inject('cofferHsm');
const ec = unique('pki-ec');
const rsa = unique('pki-rsa');
const rootMount = unique('nv-pki-kms');
const intMount = unique('nv-pki-kms-int');
const ids: Record<string, string> = {};

const dir = mkdtempSync(path.join(os.tmpdir(), 'coffer-nv-pki-kms-'));
const file = (name: string, content: string | Uint8Array) => {
  writeFileSync(path.join(dir, name), content);
  return name;
};
/** openssl's stdout and stderr together, whether it succeeded or not. */
const openssl = (...args: string[]) => {
  const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
  return `${r.stdout}${r.stderr}`;
};

async function pkcs11Key(name: string, fields: Record<string, unknown>): Promise<void> {
  await root.write(`sys/managed-keys/pkcs11/${name}`, { library: hsm.library, token_label: hsm.tokenLabel, pin: hsm.pin, key_label: name, allow_generate_key: true, ...fields });
  ids[name] = (await root.read(`sys/managed-keys/pkcs11/${name}`)).data.UUID;
}

let rootPem = '';
let rootKeyId = '';
beforeAll(async () => {
  await pkcs11Key(ec, { mechanism: '0x1041', curve: 'P256' });
  await pkcs11Key(rsa, { mechanism: '0x0001', key_bits: 2048 });
  await root.mount({ mount_point: rootMount, type: 'pki', config: { max_lease_ttl: '87600h', allowed_managed_keys: [ec] } });
  await root.mount({ mount_point: intMount, type: 'pki', config: { max_lease_ttl: '87600h' } });
  await root.write(`sys/mounts/${intMount}/tune`, { allowed_managed_keys: [rsa] });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('PKI on managed keys through node-vault', () => {
  it('root/generate/kms by name: an EC root, self-signed at the HSM, no private key', async () => {
    const r = await root.write(`${rootMount}/root/generate/kms`, { managed_key_name: ec, common_name: 'node-vault HSM Root', ttl: '87600h', issuer_name: 'hsm' });
    expect(r.data.private_key).toBeUndefined();
    rootPem = r.data.certificate;
    rootKeyId = r.data.key_id;
    const x = new X509Certificate(rootPem);
    expect(x.publicKey.asymmetricKeyType).toBe('ec');
    expect(x.verify(x.publicKey)).toBe(true);
    const key = (await root.read(`${rootMount}/key/${r.data.key_id}`)).data;
    expect(key).toMatchObject({ key_type: 'ec', managed_key_id: ids[ec], managed_key_name: ec });
    expect(key.private_key).toBeUndefined();
  });

  it('intermediate/generate/kms by id: an RSA CSR signed at the HSM, signed by the root, set-signed, issuing', async () => {
    const csr = (await root.write(`${intMount}/intermediate/generate/kms`, { managed_key_id: ids[rsa], common_name: 'node-vault HSM Intermediate' })).data;
    expect(Object.keys(csr).sort()).toEqual(['csr', 'key_id']);
    file('int.csr', csr.csr);
    expect(openssl('req', '-in', 'int.csr', '-noout', '-verify')).toMatch(/verify OK/i);
    const signed = (await root.write(`${rootMount}/root/sign-intermediate`, { csr: csr.csr, ttl: '43800h' })).data;
    await root.write(`${intMount}/intermediate/set-signed`, { certificate: signed.certificate });
    await root.write(`${intMount}/roles/svc`, { allowed_domains: 'svc.internal', allow_subdomains: true, key_type: 'ec', max_ttl: '24h' });
    const leaf = (await root.write(`${intMount}/issue/svc`, { common_name: 'a.svc.internal' })).data;
    const intCert = new X509Certificate(signed.certificate);
    expect(new X509Certificate(leaf.certificate).verify(intCert.publicKey)).toBe(true);
    expect(intCert.verify(new X509Certificate(rootPem).publicKey)).toBe(true);
    file('root.pem', rootPem);
    file('int.pem', signed.certificate);
    file('leaf.pem', leaf.certificate);
    expect(openssl('verify', '-CAfile', 'root.pem', '-untrusted', 'int.pem', 'leaf.pem')).toContain('leaf.pem: OK');

    // Revoked: the CRL and the OCSP answer are signed by the intermediate's HSM key.
    await root.write(`${intMount}/revoke`, { serial_number: leaf.serial_number });
    const crl = await fetch(`${coffer.url}/v1/${intMount}/crl/pem`);
    file('int.crl.pem', await crl.text());
    expect(openssl('crl', '-in', 'int.crl.pem', '-CAfile', 'int.pem', '-noout')).toContain('verify OK');
    expect(execFileSync('openssl', ['crl', '-in', path.join(dir, 'int.crl.pem'), '-noout', '-text'], { encoding: 'utf8' })).toContain(leaf.serial_number.replace(/:/g, '').toUpperCase());
    file('chain.pem', `${signed.certificate}\n${rootPem}\n`);
    const ocsp = openssl('ocsp', '-issuer', 'int.pem', '-cert', 'leaf.pem', '-url', `${coffer.url}/v1/${intMount}/ocsp`, '-CAfile', 'chain.pem', '-no_nonce');
    expect(ocsp).toContain('Response verify OK');
    expect(ocsp).toMatch(/leaf\.pem: revoked/);
  });

  it('keys/generate/kms (the root key again), root/generate/existing on it; refusals come back as node-vault errors', async () => {
    // The managed key the root uses is that same PKI key.
    const key = (await root.write(`${rootMount}/keys/generate/kms`, { managed_key_id: ids[ec] })).data;
    expect(key).toEqual({ key_id: rootKeyId, key_name: '', key_type: 'ec' });
    const again = (await root.write(`${rootMount}/root/generate/existing`, { key_ref: key.key_id, common_name: 'Again' })).data;
    expect(again.key_id).toBe(rootKeyId);
    const x = new X509Certificate(again.certificate);
    expect(x.verify(new X509Certificate(rootPem).publicKey)).toBe(true);
    expect(x.verify(x.publicKey)).toBe(true);

    expect(await failure(root.write(`${rootMount}/root/generate/kms`, { common_name: 'x' }))).toEqual({ status: 400, errors: ['missing argument managed_key_name or managed_key_id'] });
    expect(await failure(root.write(`${rootMount}/root/generate/kms`, { common_name: 'x', managed_key_name: ec, key_type: 'ec' }))).toEqual({
      status: 400,
      errors: ['invalid parameter for the kms/existing path parameter, key_type nor key_bits arguments can be set in this mode'],
    });
    const notAllowed = await failure(root.write(`${rootMount}/keys/generate/kms`, { managed_key_name: rsa }));
    expect(notAllowed.status).toBe(400);
    expect(notAllowed.errors[0]).toMatch(/is not allowed on this mount/);
  });
});
