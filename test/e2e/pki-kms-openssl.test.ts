// PKI on managed keys, checked by openssl against the launcher with its SoftHSM2 bridge
// (COFFER_HSM_BRIDGE=softhsm2): a root on an HSM EC P-256 key and an intermediate on an HSM RSA
// 2048 key (its CSR and everything it signs signed at the HSM). openssl verifies the chain
// root → intermediate → leaf, the CRLs both issue after a revocation, and the OCSP answers of
// both. node-vault drives the JSON API.
import { execFileSync, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import nodeVault from 'node-vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLauncher, tempDir, type Server } from './processes';

const ROOT_TOKEN = 'hvs.e2eRootTokenForPkiKmsOpenssl';
type Client = ReturnType<typeof nodeVault>;

describe('PKI on HSM keys, checked with openssl', () => {
  let server: Server;
  let vault: Client;
  const dir = tempDir('coffer-e2e-pki-kms-');
  const dataDir = tempDir('coffer-e2e-pki-kms-data-');
  const file = (name: string, content: string | Uint8Array) => {
    writeFileSync(path.join(dir, name), content);
    return name;
  };
  const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  /** openssl's stdout and stderr together, whether it succeeded or not (verify failures exit non-zero). */
  const opensslAny = (...args: string[]): string => {
    const r = spawnSync('openssl', args, { cwd: dir, encoding: 'utf8' });
    return `${r.stdout}${r.stderr}`;
  };
  const raw = async (p: string) => new Uint8Array(await (await fetch(`${server.url}/v1/${p}`)).arrayBuffer());

  let leaf: { certificate: string; serial_number: string };
  let other: { certificate: string; serial_number: string };
  let rootLeaf: { certificate: string; serial_number: string };

  beforeAll(async () => {
    server = await startLauncher(dataDir, { COFFER_HSM_BRIDGE: 'softhsm2', COFFER_DEV_ROOT_TOKEN: ROOT_TOKEN });
    vault = nodeVault({ endpoint: server.url, token: ROOT_TOKEN, noCustomHTTPVerbs: true });
    const pin = readFileSync(path.join(dataDir, 'hsm', 'pin'), 'utf8');
    const hsm = { library: 'softhsm', token_label: 'coffer', pin, allow_generate_key: true };
    await vault.write('sys/managed-keys/pkcs11/root-ec', { ...hsm, key_label: 'pki-root-ec', mechanism: '0x1041', curve: 'P256' });
    await vault.write('sys/managed-keys/pkcs11/int-rsa', { ...hsm, key_label: 'pki-int-rsa', mechanism: '0x0001', key_bits: 2048 });

    await vault.mount({ mount_point: 'pki', type: 'pki', config: { max_lease_ttl: '87600h' } });
    await vault.mount({ mount_point: 'pki_int', type: 'pki', config: { max_lease_ttl: '43800h' } });
    await vault.write('sys/mounts/pki/tune', { allowed_managed_keys: ['root-ec'] });
    await vault.write('sys/mounts/pki_int/tune', { allowed_managed_keys: ['int-rsa'] });

    const root = await vault.write('pki/root/generate/kms', { managed_key_name: 'root-ec', common_name: 'Coffer HSM Root', ttl: '87600h' });
    expect(root.data.private_key).toBeUndefined();
    file('root.pem', `${root.data.certificate}\n`);
    for (const m of ['pki', 'pki_int']) {
      await vault.write(`${m}/config/urls`, { issuing_certificates: `${server.url}/v1/${m}/ca`, crl_distribution_points: `${server.url}/v1/${m}/crl`, ocsp_servers: `${server.url}/v1/${m}/ocsp` });
    }

    const csr = await vault.write('pki_int/intermediate/generate/kms', { managed_key_name: 'int-rsa', common_name: 'Coffer HSM Intermediate' });
    file('int.csr', `${csr.data.csr}\n`);
    const signed = await vault.write('pki/root/sign-intermediate', { csr: csr.data.csr, ttl: '43800h' });
    file('int.pem', `${signed.data.certificate}\n`);
    file('chain.pem', `${signed.data.certificate}\n${root.data.certificate}\n`);
    await vault.write('pki_int/intermediate/set-signed', { certificate: signed.data.certificate });

    await vault.write('pki_int/roles/web', { allowed_domains: 'example.com', allow_subdomains: true, key_type: 'ec', max_ttl: '72h' });
    await vault.write('pki/roles/direct', { allow_any_name: true, key_type: 'rsa', max_ttl: '72h' });
    leaf = (await vault.write('pki_int/issue/web', { common_name: 'www.example.com', ttl: '24h' })).data;
    other = (await vault.write('pki_int/issue/web', { common_name: 'mail.example.com', ttl: '24h' })).data;
    rootLeaf = (await vault.write('pki/issue/direct', { common_name: 'direct.example.com', ttl: '24h' })).data;
    file('leaf.pem', `${leaf.certificate}\n`);
    file('other.pem', `${other.certificate}\n`);
    file('root-leaf.pem', `${rootLeaf.certificate}\n`);
  });
  afterAll(async () => {
    await server?.stop('SIGTERM');
  });

  it('openssl verifies the CSR and the chain root(HSM EC) → intermediate(HSM RSA) → leaf', () => {
    expect(opensslAny('req', '-in', 'int.csr', '-noout', '-verify')).toMatch(/verify OK/i);
    expect(openssl('x509', '-in', 'root.pem', '-noout', '-text')).toContain('ecdsa-with-SHA256');
    expect(openssl('x509', '-in', 'int.pem', '-noout', '-text')).toMatch(/Public-Key: \(2048 bit\)/);
    expect(openssl('x509', '-in', 'leaf.pem', '-noout', '-text')).toContain('sha256WithRSAEncryption');
    expect(openssl('verify', '-CAfile', 'root.pem', 'int.pem')).toContain('int.pem: OK');
    expect(openssl('verify', '-CAfile', 'root.pem', '-untrusted', 'int.pem', 'leaf.pem')).toContain('leaf.pem: OK');
    expect(openssl('verify', '-CAfile', 'root.pem', 'root-leaf.pem')).toContain('root-leaf.pem: OK');
  });

  it('revokes: both CRLs are signed at the HSM, openssl checks them and refuses the revoked leaves', async () => {
    await vault.write('pki_int/revoke', { serial_number: leaf.serial_number });
    await vault.write('pki/revoke', { serial_number: rootLeaf.serial_number });
    file('int.crl', await raw('pki_int/crl'));
    file('root.crl', await raw('pki/crl'));
    openssl('crl', '-inform', 'DER', '-in', 'int.crl', '-out', 'int.crl.pem');
    openssl('crl', '-inform', 'DER', '-in', 'root.crl', '-out', 'root.crl.pem');
    expect(opensslAny('crl', '-in', 'int.crl.pem', '-CAfile', 'chain.pem', '-noout')).toMatch(/verify OK/);
    expect(opensslAny('crl', '-in', 'root.crl.pem', '-CAfile', 'root.pem', '-noout')).toMatch(/verify OK/);
    expect(openssl('crl', '-in', 'int.crl.pem', '-noout', '-text')).toContain(leaf.serial_number.replace(/:/g, '').toUpperCase());
    expect(openssl('crl', '-in', 'root.crl.pem', '-noout', '-text')).toContain(rootLeaf.serial_number.replace(/:/g, '').toUpperCase());

    const check = (cert: string) => opensslAny('verify', '-crl_check_all', '-CAfile', 'root.pem', '-untrusted', 'int.pem', '-CRLfile', 'int.crl.pem', '-CRLfile', 'root.crl.pem', cert);
    expect(check('leaf.pem')).toContain('certificate revoked');
    expect(check('root-leaf.pem')).toContain('certificate revoked');
    expect(check('other.pem')).toContain('other.pem: OK');
  });

  it('answers openssl ocsp with responses signed at the HSM (RSA intermediate, EC root)', () => {
    const ask = (mount: string, issuer: string, cert: string) =>
      opensslAny('ocsp', '-issuer', issuer, '-cert', cert, '-url', `${server.url}/v1/${mount}/ocsp`, '-CAfile', 'chain.pem', '-no_nonce');
    const revoked = ask('pki_int', 'int.pem', 'leaf.pem');
    expect(revoked).toContain('Response verify OK');
    expect(revoked).toMatch(/leaf\.pem: revoked/);
    const good = ask('pki_int', 'int.pem', 'other.pem');
    expect(good).toContain('Response verify OK');
    expect(good).toMatch(/other\.pem: good/);
    const byRoot = ask('pki', 'root.pem', 'root-leaf.pem');
    expect(byRoot).toContain('Response verify OK');
    expect(byRoot).toMatch(/root-leaf\.pem: revoked/);
  });
});
