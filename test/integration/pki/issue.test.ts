// issue/:role and issuer/:ref/issue/:role through the Worker: the response shape, every key type,
// the certificate checked field by field with @peculiar/x509 (subject, SANs, key usage, EKU, basic
// constraints, SKID/AKID, AIA, CRL DP, policies, validity, signature), TTL resolution and warnings,
// formats, storage, no_store, leases, and refusals that store nothing.
import { Buffer } from 'node:buffer';
import { ECParameters } from '@peculiar/asn1-ecc';
import { RSAPublicKey } from '@peculiar/asn1-rsa';
import { AsnConvert } from '@peculiar/asn1-schema';
import { SubjectPublicKeyInfo } from '@peculiar/asn1-x509';
import { beforeAll, describe, expect, it } from 'vitest';
import * as x509 from '../../../src/crypto/pki/x509';
import { caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { call, ok } = caller(() => c.root);

let root: { pem: string; cert: x509.X509Certificate; id: string };

const hex = (b: ArrayBuffer | Uint8Array): string => Buffer.from(b instanceof Uint8Array ? b : new Uint8Array(b)).toString('hex');
const colonSerial = (cert: x509.X509Certificate): string => cert.serialNumber.toLowerCase().replace(/^(00)+(?=..)/, '').match(/../g)!.join(':');
const unix = (d: Date): number => Math.floor(d.getTime() / 1000);
const now = (): number => Math.floor(Date.now() / 1000);

/** SHA-1 of the subjectPublicKey bits (reference §1.15). */
async function skidOf(spkiDer: ArrayBuffer): Promise<string> {
  const spki = AsnConvert.parse(spkiDer, SubjectPublicKeyInfo);
  return hex(await crypto.subtle.digest('SHA-1', spki.subjectPublicKey));
}

/** Key algorithm OID plus the RSA modulus size or the EC curve OID, read from the SPKI. */
function keyInfo(cert: x509.X509Certificate): { alg: string; size?: number; curve?: string } {
  const spki = AsnConvert.parse(cert.publicKey.rawData, SubjectPublicKeyInfo);
  const alg = spki.algorithm.algorithm;
  if (alg === '1.2.840.113549.1.1.1') {
    const n = new Uint8Array(AsnConvert.parse(spki.subjectPublicKey, RSAPublicKey).modulus);
    return { alg, size: (n[0] === 0 ? n.length - 1 : n.length) * 8 };
  }
  if (alg === '1.2.840.10045.2.1') return { alg, curve: AsnConvert.parse(spki.algorithm.parameters!, ECParameters).namedCurve };
  return { alg };
}
const RSA = '1.2.840.113549.1.1.1';
const EC = '1.2.840.10045.2.1';
const ED25519 = '1.3.101.112';

const ext = <T extends x509.Extension>(cert: x509.X509Certificate, type: new (raw: BufferSource) => T): T | null => cert.getExtension(type);
const sanItems = (cert: x509.X509Certificate) => ext(cert, x509.SubjectAlternativeNameExtension)?.names.items.map((n) => [n.type, n.value]) ?? [];

async function listCerts(): Promise<string[]> {
  const r = await call('GET', 'pki/certs?list=true');
  return r.status === 404 ? [] : r.body.data.keys;
}

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/pki', { type: 'pki', config: { default_lease_ttl: '2h', max_lease_ttl: '87600h' } });
  const r = await ok('POST', 'pki/root/generate/internal', { common_name: 'Coffer Test Root', ttl: '8760h', issuer_name: 'root-a' });
  root = { pem: r.body.data.certificate, cert: new x509.X509Certificate(r.body.data.certificate), id: r.body.data.issuer_id };
  await ok('POST', 'pki/config/urls', {
    issuing_certificates: 'http://pki.test/v1/pki/ca',
    crl_distribution_points: 'http://pki.test/v1/pki/crl',
    ocsp_servers: 'http://pki.test/v1/pki/ocsp',
  });
  await ok('POST', 'pki/roles/web', {
    allowed_domains: 'example.com',
    allow_subdomains: true,
    allow_bare_domains: true,
    allowed_uri_sans: 'spiffe://corp/*',
    allowed_other_sans: '1.3.6.1.4.1.311.20.2.3;UTF8:*@corp.example',
    allowed_serial_numbers: 'SN-*',
    allowed_user_ids: 'alice',
    organization: 'Acme',
    ou: 'Web,Ops',
    country: 'DE',
    locality: 'Berlin',
    province: 'BE',
    street_address: 'Main St 1',
    postal_code: '10115',
    ttl: '1h',
    max_ttl: '4h',
  });
});

describe('issue: response and certificate, field by field', () => {
  it('answers with the certificate, its chain and a matching private key', async () => {
    const before = now();
    const r = await ok('POST', 'pki/issue/web', {
      common_name: 'www.example.com',
      alt_names: 'b.example.com,a.example.com,ops@mail.example.com',
      ip_sans: '10.0.0.1,2001:db8::1',
      uri_sans: 'spiffe://corp/ns/web',
      other_sans: '1.3.6.1.4.1.311.20.2.3;UTF8:web@corp.example',
      serial_number: 'SN-42',
      user_ids: 'alice',
      private_key_format: 'pkcs8',
    });
    const d = r.body.data;
    expect(Object.keys(d).sort()).toEqual(['ca_chain', 'certificate', 'expiration', 'issuing_ca', 'private_key', 'private_key_type', 'serial_number']);
    expect(r.body.lease_id).toBe('');
    expect(r.body.lease_duration).toBe(0);
    expect(r.body.renewable).toBe(false);
    expect(d.issuing_ca).toBe(root.pem);
    expect(d.ca_chain).toEqual([root.pem]);
    expect(d.private_key_type).toBe('rsa');
    expect(d.private_key).toMatch(/^-----BEGIN PRIVATE KEY-----\n[\s\S]+\n-----END PRIVATE KEY-----$/);
    expect(d.certificate).toMatch(/^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----$/);

    const cert = new x509.X509Certificate(d.certificate);
    expect(d.serial_number).toBe(colonSerial(cert));
    expect(d.expiration).toBe(unix(cert.notAfter));
    // Subject: the CN, the role's subject fields, serialNumber and UID.
    const subject = cert.subjectName;
    expect(subject.getField('CN')).toEqual(['www.example.com']);
    expect(subject.getField('O')).toEqual(['Acme']);
    // Both OUs share one multi-valued RDN (as Go writes them), so DER orders them.
    expect(subject.getField('OU')).toEqual(['Ops', 'Web']);
    expect(subject.getField('C')).toEqual(['DE']);
    expect(subject.getField('L')).toEqual(['Berlin']);
    expect(subject.getField('ST')).toEqual(['BE']);
    expect(subject.getField('2.5.4.9')).toEqual(['Main St 1']);
    expect(subject.getField('2.5.4.17')).toEqual(['10115']);
    expect(subject.getField('2.5.4.5')).toEqual(['SN-42']);
    expect(subject.getField('0.9.2342.19200300.100.1.1')).toEqual(['alice']);
    expect(cert.issuer).toBe(root.cert.subject);
    // SANs: DNS names sorted with the CN, the email, IPs, the URI and the UPN other name.
    const sans = sanItems(cert);
    expect(sans.filter(([t]) => t === 'dns').map(([, v]) => v)).toEqual(['a.example.com', 'b.example.com', 'www.example.com']);
    expect(sans.filter(([t]) => t === 'email').map(([, v]) => v)).toEqual(['ops@mail.example.com']);
    expect(sans.filter(([t]) => t === 'ip').map(([, v]) => v)).toEqual(['10.0.0.1', '2001:db8::1']);
    expect(sans.filter(([t]) => t === 'url').map(([, v]) => v)).toEqual(['spiffe://corp/ns/web']);
    expect(sans.filter(([t]) => t === 'upn').map(([, v]) => v)).toEqual(['web@corp.example']);
    // Key usage (critical) and EKU from the role defaults; no basic constraints on a leaf.
    const ku = ext(cert, x509.KeyUsagesExtension)!;
    expect(ku.critical).toBe(true);
    expect(ku.usages).toBe(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment | x509.KeyUsageFlags.keyAgreement);
    expect(ext(cert, x509.ExtendedKeyUsageExtension)!.usages).toEqual([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]);
    expect(ext(cert, x509.BasicConstraintsExtension)).toBeNull();
    // SKID from the key, AKID = the root's SKID.
    expect(ext(cert, x509.SubjectKeyIdentifierExtension)!.keyId).toBe(await skidOf(cert.publicKey.rawData));
    expect(ext(cert, x509.AuthorityKeyIdentifierExtension)!.keyId).toBe(ext(root.cert, x509.SubjectKeyIdentifierExtension)!.keyId);
    // AIA and CRL distribution points from config/urls.
    const aia = ext(cert, x509.AuthorityInfoAccessExtension)!;
    expect(aia.caIssuers.map((g) => g.value)).toEqual(['http://pki.test/v1/pki/ca']);
    expect(aia.ocsp.map((g) => g.value)).toEqual(['http://pki.test/v1/pki/ocsp']);
    const dp = ext(cert, x509.CRLDistributionPointsExtension)!;
    expect(dp.distributionPoints.map((p) => p.distributionPoint?.fullName?.[0].uniformResourceIdentifier)).toEqual(['http://pki.test/v1/pki/crl']);
    // Validity: backdated 30 s, the role's 1h ttl.
    expect(unix(cert.notBefore)).toBeGreaterThanOrEqual(before - 31);
    expect(unix(cert.notBefore)).toBeLessThanOrEqual(now() - 29);
    expect(unix(cert.notAfter) - before).toBeGreaterThanOrEqual(3600 - 1);
    expect(unix(cert.notAfter) - now()).toBeLessThanOrEqual(3600);
    // Signed by the root with SHA256WithRSA; the private key belongs to the certificate.
    expect(cert.signatureAlgorithm).toMatchObject({ name: 'RSASSA-PKCS1-v1_5', hash: { name: 'SHA-256' } });
    expect(await cert.verify({ publicKey: root.cert.publicKey, signatureOnly: true })).toBe(true);
    const alg = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
    const priv = await crypto.subtle.importKey('pkcs8', x509.PemConverter.decodeFirst(d.private_key), alg, false, ['sign']);
    const sig = await crypto.subtle.sign(alg, priv, new Uint8Array([1, 2, 3]));
    expect(await crypto.subtle.verify(alg, await cert.publicKey.export(alg, ['verify']), sig, new Uint8Array([1, 2, 3]))).toBe(true);
  });

  it('stores the certificate under its serial (cert/:serial, LIST certs)', async () => {
    const d = (await ok('POST', 'pki/issue/web', { common_name: 'stored.example.com' })).body.data;
    const read = await ok('GET', `pki/cert/${d.serial_number}`);
    expect(read.body.data.certificate).toBe(d.certificate);
    expect(await listCerts()).toContain(d.serial_number);
    const hyphen = await ok('GET', `pki/cert/${d.serial_number.replace(/:/g, '-')}`);
    expect(hyphen.body.data.certificate).toBe(d.certificate);
  });

  it('gives every certificate its own random serial', async () => {
    const serials = new Set<string>();
    for (let i = 0; i < 4; i++) serials.add((await ok('POST', 'pki/issue/web', { common_name: 'serial.example.com' })).body.data.serial_number);
    expect(serials.size).toBe(4);
    for (const s of serials) expect(s).toMatch(/^[0-9a-f]{2}(:[0-9a-f]{2}){0,19}$/);
  });

  it("begins a stored certificate's serial with its time, so serials issued in turn list in turn", async () => {
    const before = Date.now();
    const serials: string[] = [];
    for (let i = 0; i < 4; i++) {
      serials.push((await ok('POST', 'pki/issue/web', { common_name: 'ordered.example.com' })).body.data.serial_number);
      await new Promise((r) => setTimeout(r, 2));
    }
    const after = Date.now();
    for (const s of serials) {
      const bytes = s.split(':');
      expect(bytes).toHaveLength(20);
      const ms = parseInt(bytes.slice(0, 6).join(''), 16);
      expect(ms).toBeGreaterThanOrEqual(before);
      expect(ms).toBeLessThanOrEqual(after);
    }
    const listed = (await listCerts()).filter((k) => serials.includes(k));
    expect(listed).toEqual(serials);
  });
});

describe('issue: key types', () => {
  const cases: [string, Record<string, unknown>, string, RegExp, ReturnType<typeof keyInfo>][] = [
    ['rsa 2048', { key_type: 'rsa' }, 'rsa', /^-----BEGIN RSA PRIVATE KEY-----/, { alg: RSA, size: 2048 }],
    ['rsa 3072', { key_type: 'rsa', key_bits: 3072 }, 'rsa', /^-----BEGIN RSA PRIVATE KEY-----/, { alg: RSA, size: 3072 }],
    ['ec 224', { key_type: 'ec', key_bits: 224 }, 'ec', /^-----BEGIN EC PRIVATE KEY-----/, { alg: EC, curve: '1.3.132.0.33' }],
    ['ec 256', { key_type: 'ec' }, 'ec', /^-----BEGIN EC PRIVATE KEY-----/, { alg: EC, curve: '1.2.840.10045.3.1.7' }],
    ['ec 384', { key_type: 'ec', key_bits: 384 }, 'ec', /^-----BEGIN EC PRIVATE KEY-----/, { alg: EC, curve: '1.3.132.0.34' }],
    ['ec 521', { key_type: 'ec', key_bits: 521 }, 'ec', /^-----BEGIN EC PRIVATE KEY-----/, { alg: EC, curve: '1.3.132.0.35' }],
    ['ed25519', { key_type: 'ed25519' }, 'ed25519', /^-----BEGIN PRIVATE KEY-----/, { alg: ED25519 }],
  ];
  it.each(cases)('%s', async (label, keyFields, type, pemLabel, info) => {
    const role = `k-${label.replace(' ', '-')}`;
    await ok('POST', `pki/roles/${role}`, { allow_any_name: true, ...keyFields });
    const d = (await ok('POST', `pki/issue/${role}`, { common_name: 'key.test' })).body.data;
    expect(d.private_key_type).toBe(type);
    expect(d.private_key).toMatch(pemLabel);
    const cert = new x509.X509Certificate(d.certificate);
    expect(keyInfo(cert)).toEqual(info);
    expect(await cert.verify({ publicKey: root.cert.publicKey, signatureOnly: true })).toBe(true);
    // The SKID is computed from whatever key type the leaf has.
    expect(ext(cert, x509.SubjectKeyIdentifierExtension)!.keyId).toBe(await skidOf(cert.publicKey.rawData));
  });

  it('refuses to issue from a role of key_type any (signing only), storing nothing', async () => {
    await ok('POST', 'pki/roles/anykey', { allow_any_name: true, key_type: 'any' });
    const before = (await call('GET', 'pki/certs?list=true')).body?.data?.keys ?? [];
    for (const body of [{ common_name: 'any.test' }, { common_name: 'any.test', key_type: 'ec', key_bits: 384 }]) {
      const r = await call('POST', 'pki/issue/anykey', body);
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual(['role key type "any" not allowed for issuing certificates, only signing']);
    }
    expect((await call('GET', 'pki/certs?list=true')).body?.data?.keys ?? []).toEqual(before);
  });

  it("ignores key_type/key_bits when the role fixes the key, with a warning", async () => {
    const r = await ok('POST', 'pki/issue/web', { common_name: 'fixed.example.com', key_type: 'ec', key_bits: 384 });
    expect(r.body.data.private_key_type).toBe('rsa');
    expect(r.body.warnings).toContain('parameters key_type and key_bits ignored as role had specific values');
  });
});

describe('issue: signature algorithms', () => {
  it('follows the role signature_bits and use_pss for an RSA issuer', async () => {
    await ok('POST', 'pki/roles/sha512', { allow_any_name: true, signature_bits: 512 });
    const c512 = new x509.X509Certificate((await ok('POST', 'pki/issue/sha512', { common_name: 's.test' })).body.data.certificate);
    expect(c512.signatureAlgorithm).toMatchObject({ name: 'RSASSA-PKCS1-v1_5', hash: { name: 'SHA-512' } });
    expect(await c512.verify({ publicKey: root.cert.publicKey, signatureOnly: true })).toBe(true);
    await ok('POST', 'pki/roles/pss', { allow_any_name: true, use_pss: true, signature_bits: 384 });
    const pss = new x509.X509Certificate((await ok('POST', 'pki/issue/pss', { common_name: 's.test' })).body.data.certificate);
    expect(pss.signatureAlgorithm).toMatchObject({ name: 'RSA-PSS', hash: { name: 'SHA-384' } });
  });

  it('signs with the hash matching an EC issuer curve, whatever the role says', async () => {
    await ok('POST', 'sys/mounts/pki-ec', { type: 'pki' });
    const ecRoot = await ok('POST', 'pki-ec/root/generate/internal', { common_name: 'EC Root', key_type: 'ec', key_bits: 384, ttl: '8760h' });
    await ok('POST', 'pki-ec/roles/r', { allow_any_name: true, signature_bits: 256 });
    const cert = new x509.X509Certificate((await ok('POST', 'pki-ec/issue/r', { common_name: 'ec.test', ttl: '1h' })).body.data.certificate);
    expect(cert.signatureAlgorithm).toMatchObject({ name: 'ECDSA', hash: { name: 'SHA-384' } });
    expect(await cert.verify({ publicKey: new x509.X509Certificate(ecRoot.body.data.certificate).publicKey, signatureOnly: true })).toBe(true);
  });
});

describe('issue: certificate extensions from role settings', () => {
  it('writes custom key usage, EKU names and OIDs, policies and CA:FALSE basic constraints', async () => {
    await ok('POST', 'pki/roles/custom', {
      allow_any_name: true,
      key_usage: 'DigitalSignature,ContentCommitment,unknownusage',
      server_flag: false,
      client_flag: false,
      code_signing_flag: true,
      email_protection_flag: true,
      ext_key_usage: 'TimeStamping,serverauth',
      ext_key_usage_oids: '1.3.6.1.5.5.7.3.17',
      policy_identifiers: '1.3.6.1.4.1.44947.1.2.4',
      basic_constraints_valid_for_non_ca: true,
    });
    const cert = new x509.X509Certificate((await ok('POST', 'pki/issue/custom', { common_name: 'custom.test' })).body.data.certificate);
    expect(ext(cert, x509.KeyUsagesExtension)!.usages).toBe(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.nonRepudiation);
    expect(ext(cert, x509.ExtendedKeyUsageExtension)!.usages).toEqual([
      x509.ExtendedKeyUsage.serverAuth,
      x509.ExtendedKeyUsage.codeSigning,
      x509.ExtendedKeyUsage.emailProtection,
      x509.ExtendedKeyUsage.timeStamping,
      '1.3.6.1.5.5.7.3.17',
    ]);
    expect(ext(cert, x509.CertificatePolicyExtension)!.policies).toEqual(['1.3.6.1.4.1.44947.1.2.4']);
    const bc = ext(cert, x509.BasicConstraintsExtension)!;
    expect(bc.ca).toBe(false);
    expect(bc.critical).toBe(true);
  });

  it('writes qualified policy identifiers (JSON form) as certificate policies', async () => {
    const policies = JSON.stringify([{ oid: '1.3.6.1.4.1.7.8', notice: 'I am a user Notice' }, { oid: '1.3.6.1.4.1.44947.1.2.4', cps: 'https://example.com/cps' }]);
    await ok('POST', 'pki/roles/qualified', { allow_any_name: true, policy_identifiers: policies });
    const cert = new x509.X509Certificate((await ok('POST', 'pki/issue/qualified', { common_name: 'q.test' })).body.data.certificate);
    expect(ext(cert, x509.CertificatePolicyExtension)!.policies).toEqual(['1.3.6.1.4.1.7.8', '1.3.6.1.4.1.44947.1.2.4']);
    const der = Buffer.from(cert.rawData).toString('latin1');
    expect(der).toContain('I am a user Notice');
    expect(der).toContain('https://example.com/cps');
  });

  it('leaves out key usage and EKU when the role asks for none', async () => {
    await ok('POST', 'pki/roles/bare-ext', { allow_any_name: true, key_usage: [], server_flag: false, client_flag: false });
    const cert = new x509.X509Certificate((await ok('POST', 'pki/issue/bare-ext', { common_name: 'bare.test' })).body.data.certificate);
    expect(ext(cert, x509.KeyUsagesExtension)).toBeNull();
    expect(ext(cert, x509.ExtendedKeyUsageExtension)).toBeNull();
  });

  it('keeps the CN out of the SANs with exclude_cn_from_sans', async () => {
    const cert = new x509.X509Certificate(
      (await ok('POST', 'pki/issue/web', { common_name: 'cn.example.com', alt_names: 'alt.example.com', exclude_cn_from_sans: true })).body.data.certificate,
    );
    expect(cert.subjectName.getField('CN')).toEqual(['cn.example.com']);
    expect(sanItems(cert)).toEqual([['dns', 'alt.example.com']]);
  });
});

describe('issue: TTL resolution', () => {
  it('uses the request ttl, capped by the role max_ttl with a warning', async () => {
    const short = new x509.X509Certificate((await ok('POST', 'pki/issue/web', { common_name: 't.example.com', ttl: '10m' })).body.data.certificate);
    expect(unix(short.notAfter) - now()).toBeGreaterThan(600 - 5);
    expect(unix(short.notAfter) - now()).toBeLessThanOrEqual(600);
    const r = await ok('POST', 'pki/issue/web', { common_name: 't.example.com', ttl: '10h' });
    expect(r.body.warnings).toContain('TTL "10h0m0s" is longer than permitted maxTTL "4h0m0s", so maxTTL is being used');
    const capped = new x509.X509Certificate(r.body.data.certificate);
    expect(unix(capped.notAfter) - now()).toBeGreaterThan(4 * 3600 - 5);
    expect(unix(capped.notAfter) - now()).toBeLessThanOrEqual(4 * 3600);
  });

  it('falls back to the mount default ttl, capped by the mount max', async () => {
    await ok('POST', 'pki/roles/mountttl', { allow_any_name: true });
    const cert = new x509.X509Certificate((await ok('POST', 'pki/issue/mountttl', { common_name: 'm.test' })).body.data.certificate);
    expect(unix(cert.notAfter) - now()).toBeGreaterThan(2 * 3600 - 5);
    expect(unix(cert.notAfter) - now()).toBeLessThanOrEqual(2 * 3600);
  });

  it('honours not_after (request or role) instead of a ttl, and refuses both together', async () => {
    const at = new Date(Date.now() + 3 * 3600_000);
    at.setUTCMilliseconds(0);
    const iso = at.toISOString().replace('.000Z', 'Z');
    const cert = new x509.X509Certificate((await ok('POST', 'pki/issue/mountttl', { common_name: 'na.test', not_after: iso })).body.data.certificate);
    expect(cert.notAfter.getTime()).toBe(at.getTime());
    const both = await call('POST', 'pki/issue/mountttl', { common_name: 'na.test', not_after: iso, ttl: '1h' });
    expect(both.status).toBe(400);
    expect(both.body.errors).toEqual(['Either ttl or not_after should be provided. Both should not be provided in the same request.']);
    const bad = await call('POST', 'pki/issue/mountttl', { common_name: 'na.test', not_after: 'tomorrow' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toMatch(/^parsing time "tomorrow"/);
    await ok('POST', 'pki/roles/fixedend', { allow_any_name: true, not_after: iso });
    const fixed = new x509.X509Certificate((await ok('POST', 'pki/issue/fixedend', { common_name: 'na.test' })).body.data.certificate);
    expect(fixed.notAfter.getTime()).toBe(at.getTime());
  });

  it('backdates NotBefore by the role not_before_duration', async () => {
    await ok('POST', 'pki/roles/backdated', { allow_any_name: true, not_before_duration: '5m' });
    const cert = new x509.X509Certificate((await ok('POST', 'pki/issue/backdated', { common_name: 'b.test' })).body.data.certificate);
    expect(now() - unix(cert.notBefore)).toBeGreaterThanOrEqual(300);
    expect(now() - unix(cert.notBefore)).toBeLessThan(310);
  });

  it("applies the issuer's leaf_not_after_behavior beyond the CA's NotAfter", async () => {
    await ok('POST', 'pki/roles/long', { allow_any_name: true, max_ttl: '87600h' });
    const err = await call('POST', 'pki/issue/long', { common_name: 'long.test', ttl: '17520h' });
    expect(err.status).toBe(400);
    expect(err.body.errors[0]).toMatch(
      /^cannot satisfy request, as TTL would result in notAfter of \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z that is beyond the expiration of the CA certificate at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/,
    );
    await ok('POST', 'pki/issuer/root-a', { leaf_not_after_behavior: 'truncate', issuer_name: 'root-a' });
    const truncated = new x509.X509Certificate((await ok('POST', 'pki/issue/long', { common_name: 'long.test', ttl: '17520h' })).body.data.certificate);
    expect(truncated.notAfter.getTime()).toBe(root.cert.notAfter.getTime());
    await ok('POST', 'pki/issuer/root-a', { leaf_not_after_behavior: 'permit', issuer_name: 'root-a' });
    const permitted = new x509.X509Certificate((await ok('POST', 'pki/issue/long', { common_name: 'long.test', ttl: '17520h' })).body.data.certificate);
    expect(permitted.notAfter.getTime()).toBeGreaterThan(root.cert.notAfter.getTime());
    await ok('POST', 'pki/issuer/root-a', { leaf_not_after_behavior: 'err', issuer_name: 'root-a' });
  });
});

describe('issue: response formats', () => {
  it('der: base64 DER certificate, CA, chain and PKCS#1 key', async () => {
    const d = (await ok('POST', 'pki/issue/web', { common_name: 'der.example.com', format: 'der' })).body.data;
    const cert = new x509.X509Certificate(Buffer.from(d.certificate, 'base64'));
    expect(cert.subjectName.getField('CN')).toEqual(['der.example.com']);
    expect(d.issuing_ca).toBe(Buffer.from(root.cert.rawData).toString('base64'));
    expect(d.ca_chain).toEqual([Buffer.from(root.cert.rawData).toString('base64')]);
    expect(d.private_key).toMatch(/^[A-Za-z0-9+/]+=*$/);
    expect(Buffer.from(d.private_key, 'base64')[0]).toBe(0x30);
    expect(d.serial_number).toBe(colonSerial(cert));
  });

  it('pem_bundle: the key then the certificate in `certificate`', async () => {
    const d = (await ok('POST', 'pki/issue/web', { common_name: 'bundle.example.com', format: 'pem_bundle' })).body.data;
    const blocks = d.certificate.split(/\n(?=-----BEGIN)/);
    expect(blocks[0]).toBe(d.private_key);
    expect(blocks[0]).toMatch(/^-----BEGIN RSA PRIVATE KEY-----/);
    expect(new x509.X509Certificate(blocks[1]).subjectName.getField('CN')).toEqual(['bundle.example.com']);
    expect(d.issuing_ca).toBe(root.pem);
  });

  it('refuses an unknown format; remove_roots_from_chain drops the self-signed root', async () => {
    const bad = await call('POST', 'pki/issue/web', { common_name: 'f.example.com', format: 'p12' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(['the "format" path parameter must be "pem", "der", or "pem_bundle"']);
    const d = (await ok('POST', 'pki/issue/web', { common_name: 'f.example.com', remove_roots_from_chain: true })).body.data;
    expect(d.ca_chain).toBeUndefined();
    expect(d.issuing_ca).toBe(root.pem);
  });
});

describe('issue: storage, no_store and leases', () => {
  it('no_store: the certificate is issued but not kept', async () => {
    await ok('POST', 'pki/roles/nostore', { allow_any_name: true, no_store: true });
    const before = await listCerts();
    const d = (await ok('POST', 'pki/issue/nostore', { common_name: 'ns.test' })).body.data;
    expect(new x509.X509Certificate(d.certificate).subjectName.getField('CN')).toEqual(['ns.test']);
    expect((await call('GET', `pki/cert/${d.serial_number}`)).status).toBe(404);
    expect(await listCerts()).toEqual(before);
  });

  it('generate_lease: a pki lease that lasts until NotAfter, not renewable', async () => {
    await ok('POST', 'pki/roles/leased', { allow_any_name: true, generate_lease: true, ttl: '30m' });
    const r = await ok('POST', 'pki/issue/leased', { common_name: 'lease.test' });
    expect(r.body.lease_id).toMatch(/^pki\/issue\/leased\/[A-Za-z0-9]+$/);
    expect(r.body.renewable).toBe(false);
    expect(r.body.lease_duration).toBeGreaterThan(1800 - 10);
    expect(r.body.lease_duration).toBeLessThanOrEqual(1800);
    const lookup = await ok('PUT', 'sys/leases/lookup', { lease_id: r.body.lease_id });
    expect(lookup.body.data.id).toBe(r.body.lease_id);
  });
});

describe('issue: choosing the issuer', () => {
  it("uses the role's issuer_ref on issue/, the path's on issuer/:ref/issue/", async () => {
    const second = await ok('POST', 'pki/root/generate/internal', { common_name: 'Second Root', ttl: '8760h', issuer_name: 'second' });
    const secondCert = new x509.X509Certificate(second.body.data.certificate);
    await ok('POST', 'pki/roles/on-second', { allow_any_name: true, issuer_ref: 'second' });
    const viaRole = new x509.X509Certificate((await ok('POST', 'pki/issue/on-second', { common_name: 'i.test' })).body.data.certificate);
    expect(viaRole.issuer).toBe(secondCert.subject);
    expect(await viaRole.verify({ publicKey: secondCert.publicKey, signatureOnly: true })).toBe(true);
    const viaPath = await ok('POST', `pki/issuer/${root.id}/issue/on-second`, { common_name: 'i.test' });
    expect(new x509.X509Certificate(viaPath.body.data.certificate).issuer).toBe(root.cert.subject);
    expect(viaPath.body.data.issuing_ca).toBe(root.pem);
    const byName = await ok('POST', 'pki/issuer/second/issue/web', { common_name: 'n.example.com' });
    expect(byName.body.data.issuing_ca).toBe(second.body.data.certificate);
  });

  it('refuses an issuer reference that resolves to nothing, storing nothing', async () => {
    await ok('POST', 'pki/roles/ghost-issuer', { allow_any_name: true, issuer_ref: 'ghost' });
    const before = await listCerts();
    const r = await call('POST', 'pki/issue/ghost-issuer', { common_name: 'g.test' });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['could not fetch the CA certificate (was one set?): unable to find PKI issuer for reference: ghost']);
    const p = await call('POST', 'pki/issuer/ghost/issue/web', { common_name: 'g.example.com' });
    expect(p.status).toBe(400);
    expect(await listCerts()).toEqual(before);
  });
});

describe('issue: refusals store nothing', () => {
  it.each<[string, string, Record<string, unknown>, string]>([
    ['an unknown role', 'nope', { common_name: 'x.example.com' }, 'unknown role: nope'],
    ['a CN outside the role', 'web', { common_name: 'www.evil.com' }, 'common name www.evil.com not allowed by this role'],
    ['a SAN outside the role', 'web', { common_name: 'ok.example.com', alt_names: 'ok2.example.com,evil.org' }, 'subject alternate name evil.org not allowed by this role'],
    ['an email outside the role', 'web', { common_name: 'ok.example.com', alt_names: 'me@evil.org' }, 'email address me@evil.org not allowed by this role'],
    ['a bad IP', 'web', { common_name: 'ok.example.com', ip_sans: '300.1.1.1' }, 'the value "300.1.1.1" is not a valid IP address'],
    ['a URI outside the role', 'web', { common_name: 'ok.example.com', uri_sans: 'https://evil' }, 'URI Subject Alternative Names were provided via the API which are not valid for this role'],
    ['an other SAN value outside the role', 'web', { common_name: 'ok.example.com', other_sans: '1.3.6.1.4.1.311.20.2.3;UTF8:root@evil' }, 'other SAN root@evil not allowed for OID 1.3.6.1.4.1.311.20.2.3 by this role'],
    ['an other SAN OID outside the role', 'web', { common_name: 'ok.example.com', other_sans: '1.2.3.4;UTF8:x' }, 'other SAN OID 1.2.3.4 not allowed by this role'],
    ['a serial number outside the role', 'web', { common_name: 'ok.example.com', serial_number: 'XX-1' }, 'serial_number XX-1 not allowed by this role'],
    ['a user id outside the role', 'web', { common_name: 'ok.example.com', user_ids: 'mallory' }, 'user_id mallory is not allowed by this role'],
    ['a missing common name', 'web', {}, 'the common_name field is required, or must be provided in a CSR with "use_csr_common_name" set to true, unless "require_cn" is set to false'],
  ])('refuses %s', async (_label, role, body, message) => {
    const before = await listCerts();
    const r = await call('POST', `pki/issue/${role}`, body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
    expect(await listCerts()).toEqual(before);
  });
});
