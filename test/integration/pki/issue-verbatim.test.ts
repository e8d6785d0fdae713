// sign-verbatim(/:role) and issuer/:ref/sign-verbatim(/:role) through the Worker: the CSR's subject
// and SANs as they are, key usage / EKU from the request only when the CSR has none, what a named
// role contributes (ttl, max_ttl, no_store, generate_lease, issuer), and never a CA certificate.
import { beforeAll, describe, expect, it } from 'vitest';
import * as x509 from '../../../src/crypto/pki/x509';
import { caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { call, ok } = caller(() => c.root);
let rootCert: x509.X509Certificate;

let pair: Promise<CryptoKeyPair> | null = null;
const ecKeys = (): Promise<CryptoKeyPair> => (pair ??= crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']) as Promise<CryptoKeyPair>);

async function makeCsr(name: string, extensions: x509.Extension[] = [], keys?: CryptoKeyPair, signingAlgorithm: { name: string; hash?: string } = { name: 'ECDSA', hash: 'SHA-256' }): Promise<string> {
  const req = await x509.Pkcs10CertificateRequestGenerator.create({ name, keys: keys ?? (await ecKeys()), signingAlgorithm, extensions });
  return req.toString('pem');
}

const unix = (d: Date): number => Math.floor(d.getTime() / 1000);
const now = (): number => Math.floor(Date.now() / 1000);
const sanItems = (cert: x509.X509Certificate) =>
  cert.getExtension(x509.SubjectAlternativeNameExtension)?.names.items.map((n) => [n.type, n.value]) ?? [];

async function listCerts(): Promise<string[]> {
  const r = await call('GET', 'pki/certs?list=true');
  return r.status === 404 ? [] : r.body.data.keys;
}

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/pki', { type: 'pki', config: { default_lease_ttl: '1h', max_lease_ttl: '48h' } });
  // not_after: a root that outlives the mount's 48h maximum, so leaves are capped by the mount.
  const r = await ok('POST', 'pki/root/generate/internal', { common_name: 'Verbatim Root', not_after: '2099-01-01T00:00:00Z', issuer_name: 'root-a' });
  rootCert = new x509.X509Certificate(r.body.data.certificate);
});

describe('sign-verbatim: values from the CSR', () => {
  it('copies the subject and every SAN, adds the default key usages and no EKU', async () => {
    const csr = await makeCsr('CN=Anything Goes #1, O=CSR Org, OU=Team A, C=NL', [
      new x509.SubjectAlternativeNameExtension([
        { type: 'dns', value: 'not-checked.evil.test' },
        { type: 'dns', value: '*.wild.test' },
        { type: 'email', value: 'who@ever.test' },
        { type: 'ip', value: '192.0.2.7' },
        { type: 'url', value: 'https://any.uri/path' },
        { type: 'upn', value: 'someone@corp' },
      ]),
    ]);
    const r = await ok('POST', 'pki/sign-verbatim', { csr });
    const d = r.body.data;
    expect(Object.keys(d).sort()).toEqual(['ca_chain', 'certificate', 'expiration', 'issuing_ca', 'serial_number']);
    const cert = new x509.X509Certificate(d.certificate);
    const csrSubject = new x509.Pkcs10CertificateRequest(csr).subjectName;
    expect(cert.subject).toBe(csrSubject.toString());
    expect(cert.subjectName.getField('OU')).toEqual(['Team A']);
    const sans = sanItems(cert);
    expect(sans).toEqual(
      expect.arrayContaining([
        ['dns', 'not-checked.evil.test'],
        ['dns', '*.wild.test'],
        ['email', 'who@ever.test'],
        ['ip', '192.0.2.7'],
        ['url', 'https://any.uri/path'],
        ['upn', 'someone@corp'],
      ]),
    );
    expect(sans).toHaveLength(6);
    expect(cert.getExtension(x509.KeyUsagesExtension)!.usages).toBe(
      x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyAgreement | x509.KeyUsageFlags.keyEncipherment,
    );
    expect(cert.getExtension(x509.ExtendedKeyUsageExtension)).toBeNull();
    expect(cert.getExtension(x509.BasicConstraintsExtension)).toBeNull();
    expect(await cert.verify({ publicKey: rootCert.publicKey, signatureOnly: true })).toBe(true);
    // Mount default TTL (1h), backdated 30 s.
    expect(unix(cert.notAfter) - now()).toBeGreaterThan(3600 - 5);
    expect(unix(cert.notAfter) - now()).toBeLessThanOrEqual(3600);
    expect(now() - unix(cert.notBefore)).toBeGreaterThanOrEqual(29);
    expect((await ok('GET', `pki/cert/${d.serial_number}`)).body.data.certificate).toBe(d.certificate);
  });

  it('uses the request key_usage / ext_key_usage / ext_key_usage_oids when the CSR has none', async () => {
    const r = await ok('POST', 'pki/sign-verbatim', {
      csr: await makeCsr('CN=req-usages'),
      key_usage: 'DigitalSignature',
      ext_key_usage: 'ServerAuth,ClientAuth',
      ext_key_usage_oids: '1.3.6.1.5.5.7.3.17',
    });
    const cert = new x509.X509Certificate(r.body.data.certificate);
    expect(cert.getExtension(x509.KeyUsagesExtension)!.usages).toBe(x509.KeyUsageFlags.digitalSignature);
    expect(cert.getExtension(x509.ExtendedKeyUsageExtension)!.usages).toEqual([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth, '1.3.6.1.5.5.7.3.17']);
    const none = new x509.X509Certificate((await ok('POST', 'pki/sign-verbatim', { csr: await makeCsr('CN=no-usages'), key_usage: [] })).body.data.certificate);
    expect(none.getExtension(x509.KeyUsagesExtension)).toBeNull();
  });

  it("keeps the CSR's own key usage and EKU over the request's", async () => {
    const csr = await makeCsr('CN=csr-usages', [
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.nonRepudiation, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.codeSigning]),
    ]);
    const r = await ok('POST', 'pki/sign-verbatim', { csr, key_usage: 'KeyEncipherment', ext_key_usage: 'ServerAuth' });
    const cert = new x509.X509Certificate(r.body.data.certificate);
    expect(cert.getExtension(x509.KeyUsagesExtension)!.usages).toBe(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.nonRepudiation);
    expect(cert.getExtension(x509.ExtendedKeyUsageExtension)!.usages).toEqual([x509.ExtendedKeyUsage.codeSigning]);
  });

  it("adds the request's other_sans to the CSR's SANs", async () => {
    const csr = await makeCsr('CN=with-other', [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'dns.test' }])]);
    const cert = new x509.X509Certificate((await ok('POST', 'pki/sign-verbatim', { csr, other_sans: '1.3.6.1.4.1.311.20.2.3;UTF8:extra@corp' })).body.data.certificate);
    expect(sanItems(cert)).toEqual(expect.arrayContaining([['dns', 'dns.test'], ['upn', 'extra@corp']]));
    expect(sanItems(cert)).toHaveLength(2);
  });

  it('signs a CSR with no subject at all, and RSA and Ed25519 keys', async () => {
    const empty = new x509.X509Certificate(
      (await ok('POST', 'pki/sign-verbatim', { csr: await makeCsr('', [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'only-san.test' }])]) })).body.data.certificate,
    );
    expect(empty.subject).toBe('');
    expect(sanItems(empty)).toEqual([['dns', 'only-san.test']]);
    const rsa = (await crypto.subtle.generateKey(
      { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
      true,
      ['sign', 'verify'],
    )) as CryptoKeyPair;
    const rsaCert = new x509.X509Certificate((await ok('POST', 'pki/sign-verbatim', { csr: await makeCsr('CN=rsa', [], rsa, { name: 'RSASSA-PKCS1-v1_5' }) })).body.data.certificate);
    expect(rsaCert.publicKey.algorithm).toMatchObject({ name: 'RSASSA-PKCS1-v1_5' });
    const ed = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify'])) as CryptoKeyPair;
    const edCert = new x509.X509Certificate((await ok('POST', 'pki/sign-verbatim', { csr: await makeCsr('CN=ed', [], ed, { name: 'Ed25519' }) })).body.data.certificate);
    expect(edCert.publicKey.algorithm).toMatchObject({ name: 'Ed25519' });
  });

  it('caps the ttl at the mount maximum with a warning', async () => {
    const r = await ok('POST', 'pki/sign-verbatim', { csr: await makeCsr('CN=long'), ttl: '100h' });
    expect(r.body.warnings).toContain('TTL "100h0m0s" is longer than permitted maxTTL "48h0m0s", so maxTTL is being used');
    const cert = new x509.X509Certificate(r.body.data.certificate);
    expect(unix(cert.notAfter) - now()).toBeLessThanOrEqual(48 * 3600);
    expect(unix(cert.notAfter) - now()).toBeGreaterThan(48 * 3600 - 5);
  });
});

describe('sign-verbatim: never an intermediate CA', () => {
  it('refuses a CSR asking for CA:TRUE, storing nothing', async () => {
    const before = await listCerts();
    const r = await call('POST', 'pki/sign-verbatim', { csr: await makeCsr('CN=Sneaky Intermediate', [new x509.BasicConstraintsExtension(true, 0, true)]) });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['sign-verbatim refuses to issue an intermediate CA: the CSR asks for CA:TRUE basic constraints (use sign-intermediate)']);
    expect(await listCerts()).toEqual(before);
  });

  it('drops CA:FALSE basic constraints from the CSR with a warning', async () => {
    const r = await ok('POST', 'pki/sign-verbatim', { csr: await makeCsr('CN=plain leaf', [new x509.BasicConstraintsExtension(false, undefined, true)]) });
    expect(r.body.warnings).toContain('specified CSR contained a Basic Constraints extension that was ignored during issuance');
    expect(new x509.X509Certificate(r.body.data.certificate).getExtension(x509.BasicConstraintsExtension)).toBeNull();
  });

  it('refuses a small RSA key', async () => {
    const small = (await crypto.subtle.generateKey(
      { name: 'RSASSA-PKCS1-v1_5', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
      true,
      ['sign', 'verify'],
    )) as CryptoKeyPair;
    const r = await call('POST', 'pki/sign-verbatim', { csr: await makeCsr('CN=small', [], small, { name: 'RSASSA-PKCS1-v1_5' }) });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['RSA keys < 2048 bits are unsafe and not supported']);
  });
});

describe('sign-verbatim/:role', () => {
  it("takes the role's ttl, max_ttl and issuer, nothing else", async () => {
    const second = await ok('POST', 'pki/root/generate/internal', { common_name: 'Second Root', not_after: '2099-01-01T00:00:00Z', issuer_name: 'second' });
    const secondCert = new x509.X509Certificate(second.body.data.certificate);
    // The role's name rules and subject fields do not apply to sign-verbatim.
    await ok('POST', 'pki/roles/vb', { allowed_domains: 'example.com', organization: 'Role Org', ttl: '30m', max_ttl: '2h', issuer_ref: 'second' });
    const r = await ok('POST', 'pki/sign-verbatim/vb', { csr: await makeCsr('CN=outside.the.role') });
    const cert = new x509.X509Certificate(r.body.data.certificate);
    expect(cert.subjectName.getField('CN')).toEqual(['outside.the.role']);
    expect(cert.subjectName.getField('O')).toEqual([]);
    expect(cert.issuer).toBe(secondCert.subject);
    expect(unix(cert.notAfter) - now()).toBeGreaterThan(1800 - 5);
    expect(unix(cert.notAfter) - now()).toBeLessThanOrEqual(1800);
    const capped = await ok('POST', 'pki/sign-verbatim/vb', { csr: await makeCsr('CN=capped'), ttl: '5h' });
    expect(capped.body.warnings).toContain('TTL "5h0m0s" is longer than permitted maxTTL "2h0m0s", so maxTTL is being used');
    // issuer/:ref/sign-verbatim/:role: the path's issuer wins over the role's.
    const viaPath = new x509.X509Certificate((await ok('POST', 'pki/issuer/root-a/sign-verbatim/vb', { csr: await makeCsr('CN=path') })).body.data.certificate);
    expect(viaPath.issuer).toBe(rootCert.subject);
    const noRole = new x509.X509Certificate((await ok('POST', 'pki/issuer/second/sign-verbatim', { csr: await makeCsr('CN=path2') })).body.data.certificate);
    expect(noRole.issuer).toBe(secondCert.subject);
  });

  it("honours the role's no_store and generate_lease", async () => {
    await ok('POST', 'pki/roles/vb-nostore', { no_store: true });
    const before = await listCerts();
    const d = (await ok('POST', 'pki/sign-verbatim/vb-nostore', { csr: await makeCsr('CN=unstored') })).body.data;
    expect((await call('GET', `pki/cert/${d.serial_number}`)).status).toBe(404);
    expect(await listCerts()).toEqual(before);
    await ok('POST', 'pki/roles/vb-lease', { generate_lease: true, ttl: '20m' });
    const leased = await ok('POST', 'pki/sign-verbatim/vb-lease', { csr: await makeCsr('CN=leased') });
    expect(leased.body.lease_id).toMatch(/^pki\/sign-verbatim\/vb-lease\/[A-Za-z0-9]+$/);
    expect(leased.body.lease_duration).toBeGreaterThan(1200 - 10);
    expect(leased.body.lease_duration).toBeLessThanOrEqual(1200);
  });

  it('refuses an unknown role', async () => {
    const r = await call('POST', 'pki/sign-verbatim/nope', { csr: await makeCsr('CN=x') });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['unknown role: nope']);
  });
});
