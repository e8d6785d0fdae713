// Signing CA certificates through the Worker (reference §1.3; spec "Sign-intermediate parameters",
// sign-self-issued): root/ and issuer/:ref/sign-intermediate with every parameter (CSR values on or
// off, path length rules, NotAfter truncation, formats, signature choice, skid, name constraints)
// and root/ and issuer/:ref/sign-self-issued; checked with @peculiar/x509 against the CSR and CA.
import { beforeAll, describe, expect, it } from 'vitest';
import * as x509 from '../../../src/crypto/pki/x509';
import { api, caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { call, ok } = caller(() => c.root);

const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const cert = (pem: string) => new x509.X509Certificate(pem);
const hex = (b: ArrayBufferLike) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, '0')).join('');

let n = 0;
async function mount(): Promise<string> {
  const path = `sign${++n}`;
  await ok('POST', `sys/mounts/${path}`, { type: 'pki' });
  return path;
}

async function expectRefused(path: string, body: unknown, message: string | RegExp): Promise<void> {
  const m = path.split('/')[0];
  const before = await call('GET', `${m}/certs?list=true`);
  const r = await call('POST', path, body);
  expect(r.status, r.text).toBe(400);
  if (typeof message === 'string') expect(r.body.errors).toEqual([message]);
  else expect(r.body.errors[0]).toMatch(message);
  const after = await call('GET', `${m}/certs?list=true`);
  expect(after.body?.data).toEqual(before.body?.data);
}

/** A CSR made outside the engine, with optional SANs, key usage, basic constraints and a custom extension. */
async function externalCsr(opts: { subject?: string; sans?: string[]; keyUsage?: number; bc?: boolean; custom?: boolean; alg?: { name: string } & Record<string, unknown> } = {}) {
  const alg = opts.alg ?? EC;
  const keys = (await crypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const extensions: x509.Extension[] = [];
  if (opts.sans) extensions.push(new x509.SubjectAlternativeNameExtension(opts.sans.map((value) => ({ type: 'dns' as const, value }))));
  if (opts.keyUsage) extensions.push(new x509.KeyUsagesExtension(opts.keyUsage, true));
  if (opts.bc) extensions.push(new x509.BasicConstraintsExtension(true, 7, true));
  if (opts.custom) extensions.push(new x509.Extension('1.3.6.1.4.1.99999.1', false, new Uint8Array([4, 3, 1, 2, 3])));
  const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: opts.subject ?? 'CN=csr.example.com, O=CSR Org, OU=CSR Unit', keys, signingAlgorithm: alg, extensions });
  return { pem: csr.toString('pem'), keys, spki: hex(csr.publicKey.rawData) };
}

beforeAll(async () => {
  c = await initCluster();
});

describe('root/sign-intermediate', () => {
  let m: string;
  let root: Record<string, string>;
  beforeAll(async () => {
    m = await mount();
    root = (await ok('POST', `${m}/root/generate/internal`, { common_name: 'Signing Root', key_type: 'ec', ttl: '720h' })).body.data;
  });

  it('signs the CSR key with the request subject; CA extensions; stored; chain and issuing CA returned', async () => {
    const csr = await externalCsr({ sans: ['from-csr.example.com'] });
    const r = await ok('POST', `${m}/root/sign-intermediate`, { csr: csr.pem, common_name: 'Int CA', ou: 'Ops', organization: 'Example', ttl: '48h' });
    const d = r.body.data;
    expect(Object.keys(d).sort()).toEqual(['ca_chain', 'certificate', 'expiration', 'issuing_ca', 'serial_number']);
    expect(d.issuing_ca).toBe(root.certificate);
    expect(d.ca_chain).toEqual([d.certificate, root.certificate]);
    const x = cert(d.certificate);
    expect(x.subject).toBe('O=Example, OU=Ops, CN=Int CA');
    expect(x.issuer).toBe('CN=Signing Root');
    expect(hex(x.publicKey.rawData)).toBe(csr.spki);
    expect(await x.verify({ publicKey: cert(root.certificate).publicKey, signatureOnly: true })).toBe(true);
    const bc = x.getExtension(x509.BasicConstraintsExtension)!;
    expect([bc.ca, bc.pathLength, bc.critical]).toEqual([true, undefined, true]);
    expect(x.getExtension(x509.KeyUsagesExtension)!.usages).toBe(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign);
    expect(x.getExtension(x509.AuthorityKeyIdentifierExtension)!.keyId).toBe(cert(root.certificate).getExtension(x509.SubjectKeyIdentifierExtension)!.keyId);
    // The CSR's SAN is ignored without use_csr_values; the CN (not a host name) adds none.
    expect(x.getExtension(x509.SubjectAlternativeNameExtension)).toBeNull();
    expect(Math.abs(x.notAfter.getTime() - (Date.now() + 48 * 3600_000))).toBeLessThan(60_000);
    expect(d.expiration).toBe(Math.floor(x.notAfter.getTime() / 1000));
    expect((await ok('GET', `${m}/cert/${d.serial_number}`)).body.data.certificate).toBe(d.certificate);
    expect(r.body.warnings).toContainEqual(expect.stringMatching(/^This mount hasn't configured any authority information access/));
  });

  it('a blank common_name takes the CSR\'s; alt_names/ip_sans/uri_sans/other_sans from the request', async () => {
    const csr = await externalCsr({ subject: 'CN=int.example.com' });
    const d = (await ok('POST', `${m}/root/sign-intermediate`, { csr: csr.pem, alt_names: 'alt.example.com', ip_sans: '192.0.2.1', uri_sans: 'urn:ca:int', other_sans: '1.2.3.4;UTF8:hello' })).body.data;
    const x = cert(d.certificate);
    expect(x.subject).toBe('CN=int.example.com');
    const sans = x.getExtension(x509.SubjectAlternativeNameExtension)!.names.items.map((i) => [i.type, i.value]);
    expect(sans).toEqual(expect.arrayContaining([['dns', 'alt.example.com'], ['dns', 'int.example.com'], ['ip', '192.0.2.1'], ['url', 'urn:ca:int']]));
    // The other name: OID 1.2.3.4 with a UTF8String "hello" (which @peculiar/x509 does not decode by name).
    const sanHex = hex(x.getExtension(x509.SubjectAlternativeNameExtension)!.value);
    expect(sanHex).toContain('06032a0304');
    expect(sanHex).toContain('0c0568656c6c6f');
    const excluded = (await ok('POST', `${m}/root/sign-intermediate`, { csr: csr.pem, exclude_cn_from_sans: true })).body.data;
    expect(cert(excluded.certificate).getExtension(x509.SubjectAlternativeNameExtension)).toBeNull();
  });

  it('use_csr_values: the CSR subject, SANs, key usages and extensions (not its basic constraints)', async () => {
    const csr = await externalCsr({ sans: ['csr-san.example.com'], keyUsage: x509.KeyUsageFlags.digitalSignature, bc: true, custom: true });
    const d = (await ok('POST', `${m}/root/sign-intermediate`, { csr: csr.pem, common_name: 'ignored', use_csr_values: true })).body.data;
    const x = cert(d.certificate);
    expect(x.subject).toBe('CN=csr.example.com, O=CSR Org, OU=CSR Unit');
    expect(x.getExtension(x509.SubjectAlternativeNameExtension)!.names.items.map((i) => i.value)).toEqual(['csr-san.example.com']);
    expect(x.getExtension(x509.KeyUsagesExtension)!.usages).toBe(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign);
    expect(x.getExtension('1.3.6.1.4.1.99999.1')).not.toBeNull();
    expect(x.getExtension(x509.BasicConstraintsExtension)!.pathLength).toBeUndefined();
  });

  it('subject fields, the subject serial number and not_before_duration', async () => {
    const csr = await externalCsr();
    const d = (
      await ok('POST', `${m}/root/sign-intermediate`, {
        csr: csr.pem,
        common_name: 'Subject Int',
        country: 'DE',
        province: 'Berlin',
        locality: 'Berlin',
        street_address: 'Unter den Linden 1',
        postal_code: '10117',
        organization: 'Org',
        ou: 'Unit',
        serial_number: 'INT-7',
        not_before_duration: '5s',
      })
    ).body.data;
    const x = cert(d.certificate);
    const parts = x.subjectName.toJSON().flatMap((rdn) => Object.entries(rdn).map(([k, v]) => `${k}=${v.join('+')}`));
    expect(parts).toEqual(['C=DE', 'ST=Berlin', 'L=Berlin', '2.5.4.9=Unter den Linden 1', '2.5.4.17=10117', 'O=Org', 'OU=Unit', 'CN=Subject Int', '2.5.4.5=INT-7']);
    expect(Math.abs(x.notBefore.getTime() - (Date.now() - 5_000))).toBeLessThan(4_000);
    // NotBefore cannot precede the signer's.
    await expectRefused(`${m}/root/sign-intermediate`, { csr: csr.pem, not_before_duration: '2h' }, "notBefore before signer's notBefore");
    // The certificate serial is random, not the subject serial number.
    expect(d.serial_number).toMatch(/^[0-9a-f]{2}(:[0-9a-f]{2}){7,19}$/);
  });

  it('key_usage DigitalSignature is added; format der and pem_bundle', async () => {
    const csr = await externalCsr();
    const der = (await ok('POST', `${m}/root/sign-intermediate`, { csr: csr.pem, common_name: 'der', format: 'der', key_usage: 'DigitalSignature' })).body.data;
    const x = new x509.X509Certificate(Uint8Array.from(atob(der.certificate), (ch) => ch.charCodeAt(0)));
    expect(x.getExtension(x509.KeyUsagesExtension)!.usages & x509.KeyUsageFlags.digitalSignature).toBeTruthy();
    expect(der.issuing_ca).toBe(btoa(String.fromCharCode(...new Uint8Array(cert(root.certificate).rawData))));
    expect(der.ca_chain).toEqual([der.certificate, der.issuing_ca]);
    const bundle = (await ok('POST', `${m}/root/sign-intermediate`, { csr: csr.pem, common_name: 'bundle', format: 'pem_bundle' })).body.data;
    expect(bundle.certificate).toBe(bundle.ca_chain.join('\n'));
    expect(bundle.ca_chain[1]).toBe(root.certificate);
  });

  it('NotAfter: truncated to the issuer (with a warning) unless enforce_leaf_not_after_behavior', async () => {
    const csr = await externalCsr();
    const long = await ok('POST', `${m}/root/sign-intermediate`, { csr: csr.pem, common_name: 'long', ttl: '760h' });
    expect(cert(long.body.data.certificate).notAfter.getTime()).toBe(cert(root.certificate).notAfter.getTime());
    expect(long.body.warnings).toContain("the signed intermediary CA certificate's notAfter was truncated to the issuer's notAfter");
    await expectRefused(`${m}/root/sign-intermediate`, { csr: csr.pem, common_name: 'long', ttl: '760h', enforce_leaf_not_after_behavior: true }, /^cannot satisfy request, as TTL would result in notAfter of .* that is beyond the expiration of the CA certificate at /);
    await api('PATCH', `/v1/${m}/issuer/default`, { token: c.root, body: { leaf_not_after_behavior: 'permit' }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    const permitted = await ok('POST', `${m}/root/sign-intermediate`, { csr: csr.pem, common_name: 'long', ttl: '760h', enforce_leaf_not_after_behavior: true });
    expect(cert(permitted.body.data.certificate).notAfter.getTime()).toBeGreaterThan(cert(root.certificate).notAfter.getTime());
    expect(permitted.body.warnings).toContainEqual(expect.stringMatching(/^The expiration time for the signed certificate is after the CA's expiration time/));
    await api('PATCH', `/v1/${m}/issuer/default`, { token: c.root, body: { leaf_not_after_behavior: 'err' }, headers: { 'Content-Type': 'application/merge-patch+json' } });
    const fixed = await ok('POST', `${m}/root/sign-intermediate`, { csr: csr.pem, common_name: 'fixed', not_after: '2030-01-01T00:00:00Z' });
    expect(cert(fixed.body.data.certificate).notAfter.getTime()).toBeLessThanOrEqual(cert(root.certificate).notAfter.getTime());
  });

  it('skid and permitted_dns_domains', async () => {
    const csr = await externalCsr();
    const d = (await ok('POST', `${m}/root/sign-intermediate`, { csr: csr.pem, common_name: 'x', skid: '01:02:03:04-05 06', permitted_dns_domains: ['example.com'] })).body.data;
    const x = cert(d.certificate);
    expect(x.getExtension(x509.SubjectKeyIdentifierExtension)!.keyId).toBe('010203040506');
    expect(x.getExtension('2.5.29.30')!.critical).toBe(true);
    await expectRefused(`${m}/root/sign-intermediate`, { csr: csr.pem, common_name: 'x', skid: 'zz' }, /^cannot parse requested SKID value as hex/);
  });

  it('refuses bad CSRs, formats and validity', async () => {
    const csr = await externalCsr();
    await expectRefused(`${m}/root/sign-intermediate`, { csr: '' }, '"csr" is empty');
    await expectRefused(`${m}/root/sign-intermediate`, { csr: 'hello' }, 'csr contains no data');
    await expectRefused(`${m}/root/sign-intermediate`, { csr: `-----BEGIN CERTIFICATE REQUEST-----\n${btoa('garbage garbage')}\n-----END CERTIFICATE REQUEST-----` }, /^certificate request could not be parsed: /);
    // The same CSR with one letter of its subject changed: the signature no longer matches.
    const der = new Uint8Array(new x509.Pkcs10CertificateRequest(csr.pem).rawData);
    const at = hex(der.buffer).indexOf(hex(new TextEncoder().encode('csr.example.com').buffer)) / 2;
    der[at] ^= 1;
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${btoa(String.fromCharCode(...der))}\n-----END CERTIFICATE REQUEST-----`;
    await expectRefused(`${m}/root/sign-intermediate`, { csr: tampered }, 'request signature invalid');
    await expectRefused(`${m}/root/sign-intermediate`, { csr: csr.pem, format: 'jks' }, 'the "format" path parameter must be "pem", "der", or "pem_bundle"');
    await expectRefused(`${m}/root/sign-intermediate`, { csr: csr.pem, ttl: '1h', not_after: '2030-01-01T00:00:00Z' }, 'Either ttl or not_after should be provided. Both should not be provided in the same request.');
    const small = await externalCsr({ alg: { name: 'RSASSA-PKCS1-v1_5', modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' } });
    await expectRefused(`${m}/root/sign-intermediate`, { csr: small.pem }, 'RSA keys < 2048 bits are unsafe and not supported');
  });

  it('no default issuer, or an issuer without issuing usage: refused', async () => {
    const empty = await mount();
    const csr = await externalCsr();
    await expectRefused(`${empty}/root/sign-intermediate`, { csr: csr.pem }, 'could not fetch the CA certificate (was one set?): no default issuer currently configured');
    const m2 = await mount();
    const r = (await ok('POST', `${m2}/root/generate/internal`, { common_name: 'no-issue', key_type: 'ec' })).body.data;
    await ok('POST', `${m2}/issuer/${r.issuer_id}`, { usage: 'crl-signing' });
    await expectRefused(`${m2}/issuer/${r.issuer_id}/sign-intermediate`, { csr: csr.pem }, /^could not fetch the CA certificate \(was one set\?\): requested usage issuing-certificates for issuer/);
  });
});

describe('path length', () => {
  it('one less than the signer\'s by default; within the signer\'s limit when asked; none under a zero', async () => {
    const m = await mount();
    await ok('POST', `${m}/root/generate/internal`, { common_name: 'PL Root', key_type: 'ec', issuer_name: 'pl3', max_path_length: 3 });
    const csr = await externalCsr();
    const dflt = (await ok('POST', `${m}/issuer/pl3/sign-intermediate`, { csr: csr.pem, common_name: 'a' })).body.data;
    expect(cert(dflt.certificate).getExtension(x509.BasicConstraintsExtension)!.pathLength).toBe(2);
    const one = (await ok('POST', `${m}/issuer/pl3/sign-intermediate`, { csr: csr.pem, common_name: 'b', max_path_length: 1 })).body.data;
    expect(cert(one.certificate).getExtension(x509.BasicConstraintsExtension)!.pathLength).toBe(1);
    const msg = (v: number) => `requested max_path_length ${v} is not allowed: the signing CA has a pathLenConstraint of 3, so the intermediate's pathLenConstraint must be a non-negative value less than 3`;
    await expectRefused(`${m}/issuer/pl3/sign-intermediate`, { csr: csr.pem, max_path_length: 3 }, msg(3));
    await expectRefused(`${m}/issuer/pl3/sign-intermediate`, { csr: csr.pem, max_path_length: -1 }, msg(-1));
    await expectRefused(`${m}/issuer/pl3/sign-intermediate`, { csr: csr.pem, max_path_length: -5 }, 'requested max_path_length -5 is invalid: must be a non-negative integer or -1 for no constraint');

    await ok('POST', `${m}/root/generate/internal`, { common_name: 'PL0 Root', key_type: 'ec', issuer_name: 'pl0', max_path_length: 0 });
    await expectRefused(`${m}/issuer/pl0/sign-intermediate`, { csr: csr.pem }, 'signing certificate has a max path length of zero, and cannot issue further CA certificates');

    await ok('POST', `${m}/root/generate/internal`, { common_name: 'Free Root', key_type: 'ec', issuer_name: 'free' });
    const zero = await ok('POST', `${m}/issuer/free/sign-intermediate`, { csr: csr.pem, common_name: 'z', max_path_length: 0 });
    expect(cert(zero.body.data.certificate).getExtension(x509.BasicConstraintsExtension)!.pathLength).toBe(0);
    expect(zero.body.warnings).toContain('Max path length of the signed certificate is zero. This CA certificate cannot be used to issue intermediate CA certificates.');
  });
});

describe('signature choice with an RSA issuer', () => {
  it('signature_bits and use_pss', async () => {
    const m = await mount();
    const root = (await ok('POST', `${m}/root/generate/internal`, { common_name: 'RSA Root' })).body.data;
    const csr = await externalCsr();
    const s512 = (await ok('POST', `${m}/root/sign-intermediate`, { csr: csr.pem, signature_bits: 512 })).body.data;
    expect(cert(s512.certificate).signatureAlgorithm).toMatchObject({ name: 'RSASSA-PKCS1-v1_5', hash: { name: 'SHA-512' } });
    const pss = (await ok('POST', `${m}/root/sign-intermediate`, { csr: csr.pem, use_pss: true })).body.data;
    const x = cert(pss.certificate);
    expect(x.signatureAlgorithm).toMatchObject({ name: 'RSA-PSS' });
    expect(await x.verify({ publicKey: cert(root.certificate).publicKey, signatureOnly: true })).toBe(true);
  });
});

describe('sign-self-issued', () => {
  let m: string;
  let root: Record<string, string>;
  let selfIssued: x509.X509Certificate;
  beforeAll(async () => {
    m = await mount();
    root = (await ok('POST', `${m}/root/generate/internal`, { common_name: 'SI Root', key_type: 'ec', issuer_name: 'si' })).body.data;
    await ok('POST', `${m}/config/urls`, { issuing_certificates: 'http://si.example/ca', crl_distribution_points: 'http://si.example/crl' });
    const keys = (await crypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
    selfIssued = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '0badcafe',
      name: 'CN=Old Root, O=Elsewhere',
      keys,
      signingAlgorithm: EC,
      notBefore: new Date('2020-01-01T00:00:00Z'),
      notAfter: new Date('2040-01-01T00:00:00Z'),
      extensions: [
        new x509.BasicConstraintsExtension(true, 1, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        new x509.Extension('1.3.6.1.4.1.99999.2', false, new Uint8Array([5, 0])),
        new x509.AuthorityInfoAccessExtension({ caIssuers: [new x509.GeneralName('url', 'http://old.example/ca')] }),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
  });

  it('keeps everything but the issuer, AKID and distribution points', async () => {
    const r = await ok('POST', `${m}/root/sign-self-issued`, { certificate: selfIssued.toString('pem') });
    expect(Object.keys(r.body.data).sort()).toEqual(['certificate', 'issuing_ca']);
    expect(r.body.data.issuing_ca).toBe(root.certificate);
    const x = cert(r.body.data.certificate);
    expect(x.serialNumber).toBe(selfIssued.serialNumber);
    expect(x.subject).toBe(selfIssued.subject);
    expect(x.issuer).toBe('CN=SI Root');
    expect([x.notBefore, x.notAfter]).toEqual([selfIssued.notBefore, selfIssued.notAfter]);
    expect(hex(x.publicKey.rawData)).toBe(hex(selfIssued.publicKey.rawData));
    expect(x.getExtension(x509.SubjectKeyIdentifierExtension)!.keyId).toBe(selfIssued.getExtension(x509.SubjectKeyIdentifierExtension)!.keyId);
    expect(x.getExtension(x509.AuthorityKeyIdentifierExtension)!.keyId).toBe(cert(root.certificate).getExtension(x509.SubjectKeyIdentifierExtension)!.keyId);
    expect(x.getExtension(x509.BasicConstraintsExtension)!.pathLength).toBe(1);
    expect(x.getExtension('1.3.6.1.4.1.99999.2')).not.toBeNull();
    expect(x.getExtension(x509.AuthorityInfoAccessExtension)!.caIssuers.map((g) => g.value)).toEqual(['http://si.example/ca']);
    expect(x.getExtension(x509.CRLDistributionPointsExtension)).not.toBeNull();
    expect(await x.verify({ publicKey: cert(root.certificate).publicKey, signatureOnly: true })).toBe(true);
    // Not stored.
    expect((await call('GET', `${m}/cert/${x.serialNumber.match(/../g)!.join(':')}`)).status).toBe(404);
    // The issuer path works too, without sudo.
    const viaIssuer = await ok('POST', `${m}/issuer/si/sign-self-issued`, { certificate: selfIssued.toString('pem') });
    expect(cert(viaIssuer.body.data.certificate).issuer).toBe('CN=SI Root');
  });

  it('another key type: the issuer\'s own algorithm, unless require_matching_certificate_algorithms', async () => {
    const m2 = await mount();
    const rsaRoot = (await ok('POST', `${m2}/root/generate/internal`, { common_name: 'RSA SI' })).body.data;
    const r = await ok('POST', `${m2}/root/sign-self-issued`, { certificate: selfIssued.toString('pem') });
    const x = cert(r.body.data.certificate);
    expect(x.signatureAlgorithm).toMatchObject({ name: 'RSASSA-PKCS1-v1_5', hash: { name: 'SHA-256' } });
    expect(await x.verify({ publicKey: cert(rsaRoot.certificate).publicKey, signatureOnly: true })).toBe(true);
    await expectRefused(
      `${m2}/root/sign-self-issued`,
      { certificate: selfIssued.toString('pem'), require_matching_certificate_algorithms: true },
      "signing certificate's public key algorithm (RSA) does not match submitted certificate's (ECDSA), and require_matching_certificate_algorithms is true",
    );
  });

  it('refuses what is not exactly one self-issued CA certificate', async () => {
    const csr = await externalCsr();
    const issued = (await ok('POST', `${m}/root/sign-intermediate`, { csr: csr.pem, common_name: 'not self' })).body.data.certificate;
    const leafKeys = (await crypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
    const leaf = await x509.X509CertificateGenerator.createSelfSigned({ serialNumber: '01', name: 'CN=leaf', keys: leafKeys, signingAlgorithm: EC, notBefore: new Date(), notAfter: new Date(Date.now() + 86_400_000) });
    await expectRefused(`${m}/root/sign-self-issued`, { certificate: leaf.toString('pem') }, 'given certificate is not a CA certificate');
    await expectRefused(`${m}/root/sign-self-issued`, { certificate: issued }, 'given certificate is not self-issued');
    await expectRefused(`${m}/root/sign-self-issued`, { certificate: `${root.certificate}\n${issued}` }, '2 certificates found in PEM file, expected 1');
    await expectRefused(`${m}/root/sign-self-issued`, { certificate: 'nothing here' }, '0 certificates found in PEM file, expected 1');
    await expectRefused(`${m}/root/sign-self-issued`, { certificate: `-----BEGIN CERTIFICATE-----\n${btoa('junk junk junk')}\n-----END CERTIFICATE-----` }, /^error parsing certificate: /);
  });

  it('root/sign-self-issued needs sudo; issuer/:ref/sign-self-issued does not', async () => {
    await ok('POST', 'sys/policies/acl/si-nosudo', { policy: `path "${m}/*" { capabilities = ["create","update","read"] }` });
    const token = (await ok('POST', 'auth/token/create', { policies: ['si-nosudo'] })).body.auth.client_token;
    const body = { certificate: selfIssued.toString('pem') };
    expect((await api('POST', `/v1/${m}/root/sign-self-issued`, { token, body })).status).toBe(403);
    expect((await api('POST', `/v1/${m}/issuer/si/sign-self-issued`, { token, body })).status).toBe(200);
  });
});
