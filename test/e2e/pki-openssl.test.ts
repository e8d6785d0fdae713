// The PKI engine checked by independent tools against the launcher: a root and an intermediate
// (signed by the root, in its own mount), a role, issued leaves; openssl verifies the chain,
// reads every extension, checks revocation through the served CRLs (complete and delta) and asks
// the OCSP responder; Node's X509Certificate checks hosts and signatures. node-vault drives the
// JSON API as a Vault user's scripts would.
import { execFileSync, spawnSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import nodeVault from 'node-vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLauncher, tempDir, type Server } from './processes';

const ROOT_TOKEN = 'hvs.e2eRootTokenForPkiOpensslTst';
type Client = ReturnType<typeof nodeVault>;

describe('PKI checked with openssl and Node', () => {
  let server: Server;
  let vault: Client;
  const dir = tempDir('coffer-e2e-pki-');
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
  const raw = async (p: string) => {
    const res = await fetch(`${server.url}/v1/${p}`);
    return { status: res.status, type: res.headers.get('content-type'), bytes: new Uint8Array(await res.arrayBuffer()) };
  };

  let rootPem = '';
  let intPem = '';
  let leaf: { certificate: string; serial_number: string; private_key: string };
  let other: { certificate: string; serial_number: string };

  beforeAll(async () => {
    server = await startLauncher(tempDir('coffer-e2e-pki-data-'), { COFFER_DEV_ROOT_TOKEN: ROOT_TOKEN });
    vault = nodeVault({ endpoint: server.url, token: ROOT_TOKEN, noCustomHTTPVerbs: true });
    await vault.mount({ mount_point: 'pki', type: 'pki', config: { max_lease_ttl: '87600h' } });
    await vault.mount({ mount_point: 'pki_int', type: 'pki', config: { max_lease_ttl: '43800h' } });

    const root = await vault.write('pki/root/generate/internal', { common_name: 'Coffer E2E Root', key_type: 'rsa', ttl: '87600h', issuer_name: 'root-2026' });
    rootPem = root.data.certificate;
    await vault.write('pki/config/urls', {
      issuing_certificates: `${server.url}/v1/pki/ca`,
      crl_distribution_points: `${server.url}/v1/pki/crl`,
      ocsp_servers: `${server.url}/v1/pki/ocsp`,
    });

    const csr = await vault.write('pki_int/intermediate/generate/internal', { common_name: 'Coffer E2E Intermediate', key_type: 'ec', key_bits: 384 });
    const signed = await vault.write('pki/root/sign-intermediate', {
      csr: csr.data.csr,
      common_name: 'Coffer E2E Intermediate',
      ttl: '43800h',
      max_path_length: 0,
      permitted_dns_domains: 'example.com',
    });
    intPem = signed.data.certificate;
    await vault.write('pki_int/intermediate/set-signed', { certificate: `${intPem}\n${rootPem}` });
    await vault.write('pki_int/config/urls', {
      issuing_certificates: `${server.url}/v1/pki_int/ca`,
      crl_distribution_points: `${server.url}/v1/pki_int/crl`,
      ocsp_servers: `${server.url}/v1/pki_int/ocsp`,
    });
    await vault.write('pki_int/config/crl', { auto_rebuild: true, enable_delta: true });
    await vault.write('pki_int/roles/web', {
      allowed_domains: 'example.com',
      allow_subdomains: true,
      max_ttl: '72h',
      key_type: 'ec',
      key_bits: 256,
      policy_identifiers: '1.3.6.1.4.1.44947.1.1.1',
      code_signing_flag: false,
    });
    leaf = (await vault.write('pki_int/issue/web', { common_name: 'www.example.com', alt_names: 'api.example.com', ip_sans: '127.0.0.1', ttl: '24h' })).data;
    other = (await vault.write('pki_int/issue/web', { common_name: 'mail.example.com', ttl: '24h' })).data;
    file('root.pem', `${rootPem}\n`);
    file('int.pem', `${intPem}\n`);
    file('chain.pem', `${intPem}\n${rootPem}\n`);
    file('leaf.pem', `${leaf.certificate}\n`);
    file('other.pem', `${other.certificate}\n`);
  });
  afterAll(async () => {
    await server?.stop('SIGTERM');
  });

  it('serves a chain openssl verifies, with the issuer reads in their raw formats', async () => {
    expect(openssl('verify', '-CAfile', 'root.pem', '-untrusted', 'int.pem', 'leaf.pem')).toContain('leaf.pem: OK');
    const der = await raw('pki_int/ca');
    expect(der.type).toBe('application/pkix-cert');
    expect(Buffer.from(new X509Certificate(Buffer.from(der.bytes)).raw)).toEqual(new X509Certificate(intPem).raw);
    const chain = await raw('pki_int/ca_chain');
    const text = new TextDecoder().decode(chain.bytes);
    expect(text).toContain(intPem);
    expect(text).toContain(rootPem);
    expect((await raw('pki/ca/pem')).type).toBe('application/pem-certificate-chain');
  });

  it('writes the extensions openssl expects on the root, the intermediate and the leaf', () => {
    const rootText = openssl('x509', '-in', 'root.pem', '-noout', '-text');
    expect(rootText).toMatch(/X509v3 Basic Constraints: critical\s+CA:TRUE/);
    expect(rootText).toMatch(/X509v3 Key Usage: critical\s+Certificate Sign, CRL Sign/);
    expect(rootText).toContain('Subject: CN = Coffer E2E Root');
    expect(rootText).toContain('sha256WithRSAEncryption');

    const intText = openssl('x509', '-in', 'int.pem', '-noout', '-text');
    expect(intText).toMatch(/X509v3 Basic Constraints: critical\s+CA:TRUE, pathlen:0/);
    expect(intText).toMatch(/X509v3 Name Constraints: critical\s+Permitted:\s+DNS:example.com/);
    expect(intText).toMatch(/Authority Information Access:\s+OCSP - URI:http:\/\/127\.0\.0\.1:\d+\/v1\/pki\/ocsp\s+CA Issuers - URI:http:\/\/127\.0\.0\.1:\d+\/v1\/pki\/ca/);
    expect(intText).toMatch(/X509v3 CRL Distribution Points:\s+Full Name:\s+URI:http:\/\/127\.0\.0\.1:\d+\/v1\/pki\/crl/);
    expect(intText).toContain('ASN1 OID: secp384r1');

    const leafText = openssl('x509', '-in', 'leaf.pem', '-noout', '-text');
    expect(leafText).toMatch(/X509v3 Key Usage: critical\s+Digital Signature, Key Encipherment, Key Agreement/);
    expect(leafText).toMatch(/X509v3 Extended Key Usage:\s+TLS Web Server Authentication, TLS Web Client Authentication/);
    // Vault de-duplicates and sorts the DNS names.
    expect(leafText).toMatch(/X509v3 Subject Alternative Name:\s+DNS:api\.example\.com, DNS:www\.example\.com, IP Address:127\.0\.0\.1/);
    expect(leafText).toMatch(/X509v3 Certificate Policies:\s+Policy: 1\.3\.6\.1\.4\.1\.44947\.1\.1\.1/);
    expect(leafText).not.toContain('Basic Constraints');
    expect(leafText).toContain('ecdsa-with-SHA384');
    // AKID of the leaf = SKID of the intermediate.
    const skid = /X509v3 Subject Key Identifier:\s+([0-9A-F:]+)/.exec(intText)?.[1];
    expect(skid).toBeTruthy();
    expect(leafText).toMatch(new RegExp(`X509v3 Authority Key Identifier:\\s+(?:keyid:)?${skid}`));

    const x = new X509Certificate(leaf.certificate);
    expect(x.checkHost('api.example.com')).toBe('api.example.com');
    expect(x.checkHost('evil.example.org')).toBeUndefined();
    expect(x.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(x.verify(new X509Certificate(intPem).publicKey)).toBe(true);
    expect(new X509Certificate(intPem).verify(new X509Certificate(rootPem).publicKey)).toBe(true);
    expect(x.serialNumber.toLowerCase()).toBe(leaf.serial_number.replace(/:/g, ''));
  });

  it('revokes: the served CRLs list the serial and openssl -crl_check refuses only that leaf', async () => {
    const revoked = await vault.write('pki_int/revoke', { serial_number: leaf.serial_number });
    expect(revoked.data.revocation_time).toBeGreaterThan(0);
    // auto_rebuild is on: the complete CRL catches up on its schedule, or now when rotated.
    await vault.read('pki_int/crl/rotate');

    const crl = await raw('pki_int/crl');
    expect(crl.type).toBe('application/pkix-crl');
    file('int.crl', crl.bytes);
    const crlText = openssl('crl', '-inform', 'DER', '-in', 'int.crl', '-noout', '-text');
    expect(crlText).toContain('Version 2');
    expect(crlText).toMatch(/X509v3 CRL Number:\s+\d+/);
    expect(crlText).toContain(leaf.serial_number.replace(/:/g, '').toUpperCase());
    expect(crlText).not.toContain(other.serial_number.replace(/:/g, '').toUpperCase());
    openssl('crl', '-inform', 'DER', '-in', 'int.crl', '-out', 'int.crl.pem');
    file('root.crl.pem', new TextDecoder().decode((await raw('pki/crl/pem')).bytes));
    // The intermediate's CRL is signed by the intermediate: openssl checks that too.
    expect(openssl('crl', '-in', 'int.crl.pem', '-CAfile', 'chain.pem', '-noout')).toBe('');

    const refused = opensslAny('verify', '-crl_check_all', '-CAfile', 'root.pem', '-untrusted', 'int.pem', '-CRLfile', 'int.crl.pem', '-CRLfile', 'root.crl.pem', 'leaf.pem');
    expect(refused).toContain('certificate revoked');
    expect(openssl('verify', '-crl_check_all', '-CAfile', 'root.pem', '-untrusted', 'int.pem', '-CRLfile', 'int.crl.pem', '-CRLfile', 'root.crl.pem', 'other.pem')).toContain('other.pem: OK');
  });

  it('builds delta CRLs openssl reads as such', async () => {
    const third = (await vault.write('pki_int/issue/web', { common_name: 'delta.example.com', ttl: '24h' })).data;
    await vault.write('pki_int/revoke', { serial_number: third.serial_number });
    await vault.read('pki_int/crl/rotate-delta');
    const delta = await raw('pki_int/crl/delta');
    expect(delta.type).toBe('application/pkix-crl');
    file('delta.crl', delta.bytes);
    const text = openssl('crl', '-inform', 'DER', '-in', 'delta.crl', '-noout', '-text');
    expect(text).toMatch(/X509v3 Delta CRL Indicator: critical\s+\d+/);
    expect(text).toContain(third.serial_number.replace(/:/g, '').toUpperCase());
  });

  it('answers openssl ocsp: revoked, good, and over GET', async () => {
    const ask = (cert: string) =>
      opensslAny('ocsp', '-issuer', 'int.pem', '-cert', cert, '-url', `${server.url}/v1/pki_int/ocsp`, '-CAfile', 'chain.pem', '-no_nonce', '-resp_text');
    const revoked = ask('leaf.pem');
    expect(revoked).toContain('Response verify OK');
    expect(revoked).toMatch(/leaf\.pem: revoked/);
    const good = ask('other.pem');
    expect(good).toContain('Response verify OK');
    expect(good).toMatch(/other\.pem: good/);

    openssl('ocsp', '-issuer', 'int.pem', '-cert', 'other.pem', '-no_nonce', '-reqout', 'req.der');
    const reqB64 = execFileSync('base64', ['-w0', path.join(dir, 'req.der')], { encoding: 'utf8' });
    const viaGet = await fetch(`${server.url}/v1/pki_int/ocsp/${encodeURIComponent(reqB64)}`);
    expect(viaGet.status).toBe(200);
    expect(viaGet.headers.get('content-type')).toBe('application/ocsp-response');
    file('resp.der', new Uint8Array(await viaGet.arrayBuffer()));
    const text = opensslAny('ocsp', '-respin', 'resp.der', '-issuer', 'int.pem', '-cert', 'other.pem', '-CAfile', 'chain.pem', '-no_nonce');
    expect(text).toContain('Response verify OK');
    expect(text).toMatch(/other\.pem: good/);
  });
});
