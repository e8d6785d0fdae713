// PKI root and intermediate generation and bare key generation through the Worker (reference §1.4,
// §1.7): every :type, every request field, each format, the response shapes, the stored issuer,
// key and certificate, default-issuer rules, warnings, and every refusal (with nothing written).
// Certificates and CSRs are checked with @peculiar/x509, independently of the engine's own parser.
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import * as x509 from '../../../src/crypto/pki/x509';
import { caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { call, ok } = caller(() => c.root);

const cert = (pem: string) => new x509.X509Certificate(pem);
const spkiOfCert = (pem: string) => new Uint8Array(cert(pem).publicKey.rawData);
const spkiOfPrivateKey = (pem: string) => new Uint8Array(createPublicKey(createPrivateKey(pem)).export({ format: 'der', type: 'spki' }));
const ext = <T extends x509.Extension>(pem: string, type: new (raw: BufferSource) => T): T | null => cert(pem).getExtension(type);
/** A CSR's extension, decoded as `type`. */
function csrExt<T extends x509.Extension>(csr: x509.Pkcs10CertificateRequest, oid: string, type: new (raw: ArrayBuffer) => T): T | null {
  const e = csr.extensions.find((x) => x.type === oid);
  return e ? new type(e.rawData) : null;
}
const b64 = (b: ArrayBuffer | Uint8Array) => btoa(String.fromCharCode(...new Uint8Array(b)));
const colonSerial = (pem: string) => cert(pem).serialNumber.toLowerCase().replace(/^(00)+(?=..)/, '').match(/../g)!.join(':');

async function expectRefused(path: string, body: unknown, message: string | RegExp): Promise<void> {
  const r = await call('POST', path, body);
  expect(r.status, r.text).toBe(400);
  if (typeof message === 'string') expect(r.body.errors).toEqual([message]);
  else expect(r.body.errors[0]).toMatch(message);
}

async function issuerIds(mount: string): Promise<string[]> {
  const r = await call('GET', `${mount}/issuers?list=true`);
  return r.status === 404 ? [] : r.body.data.keys;
}
async function keyIds(mount: string): Promise<string[]> {
  const r = await call('GET', `${mount}/keys?list=true`);
  return r.status === 404 ? [] : r.body.data.keys;
}

/** Runs `fn` and checks that it added no issuer and no key to `mount`. */
async function nothingWritten(mount: string, fn: () => Promise<void>): Promise<void> {
  const before = [await issuerIds(mount), await keyIds(mount)];
  await fn();
  expect([await issuerIds(mount), await keyIds(mount)]).toEqual(before);
}

let n = 0;
/** A fresh PKI mount (the system's 768h maximum lease TTL applies). */
async function mount(): Promise<string> {
  const path = `pki${++n}`;
  await ok('POST', `sys/mounts/${path}`, { type: 'pki' });
  return path;
}

beforeAll(async () => {
  c = await initCluster();
});

describe('root/generate/internal', () => {
  let m: string;
  let r: Awaited<ReturnType<typeof ok>>;
  beforeAll(async () => {
    m = await mount();
    r = await ok('POST', `${m}/root/generate/internal`, { common_name: 'Example Root', ttl: '720h' });
  });

  it('answers the certificate, its serial and expiry, and the new issuer and key; no private key', () => {
    const d = r.body.data;
    expect(Object.keys(d).sort()).toEqual(['certificate', 'expiration', 'issuer_id', 'issuer_name', 'issuing_ca', 'key_id', 'key_name', 'serial_number']);
    expect(d.certificate).toMatch(/^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----$/);
    expect(d.issuing_ca).toBe(d.certificate);
    expect(d.issuer_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(d.key_id).toMatch(/^[0-9a-f-]{36}$/);
    expect([d.issuer_name, d.key_name]).toEqual(['', '']);
    expect(d.serial_number).toBe(colonSerial(d.certificate));
    expect(d.expiration).toBe(Math.floor(cert(d.certificate).notAfter.getTime() / 1000));
    expect(r.body.warnings).toContainEqual(expect.stringMatching(/^This mount hasn't configured any authority information access \(AIA\) fields/));
  });

  it('is a self-signed RSA-2048 CA certificate with Vault\'s CA extensions', async () => {
    const pem = r.body.data.certificate;
    const x = cert(pem);
    expect(x.subject).toBe('CN=Example Root');
    expect(x.issuer).toBe('CN=Example Root');
    expect(await x.verify({ publicKey: x.publicKey, signatureOnly: true })).toBe(true);
    expect(x.signatureAlgorithm).toMatchObject({ name: 'RSASSA-PKCS1-v1_5', hash: { name: 'SHA-256' } });
    expect((x.publicKey.algorithm as { modulusLength?: number }).modulusLength).toBe(2048);
    const bc = ext(pem, x509.BasicConstraintsExtension)!;
    expect([bc.ca, bc.pathLength, bc.critical]).toEqual([true, undefined, true]);
    const ku = ext(pem, x509.KeyUsagesExtension)!;
    expect(ku.usages).toBe(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign);
    expect(ku.critical).toBe(true);
    const skid = ext(pem, x509.SubjectKeyIdentifierExtension)!.keyId;
    expect(ext(pem, x509.AuthorityKeyIdentifierExtension)!.keyId).toBe(skid);
    // "Example Root" is no host name: no SAN.
    expect(ext(pem, x509.SubjectAlternativeNameExtension)).toBeNull();
  });

  it('validity: NotBefore backdated 30s, NotAfter the requested ttl from now', () => {
    const x = cert(r.body.data.certificate);
    const now = Date.now();
    expect(Math.abs(x.notBefore.getTime() - (now - 30_000))).toBeLessThan(60_000);
    expect(Math.abs(x.notAfter.getTime() - (now + 720 * 3600_000))).toBeLessThan(60_000);
  });

  it('stores the issuer (default, with its own signature algorithm for CRLs), the key (default) and the certificate', async () => {
    const d = r.body.data;
    const issuer = (await ok('GET', `${m}/issuer/${d.issuer_id}`)).body.data;
    expect(issuer).toMatchObject({ issuer_id: d.issuer_id, key_id: d.key_id, certificate: d.certificate, ca_chain: [d.certificate], revocation_signature_algorithm: 'SHA256WithRSA' });
    expect((await ok('GET', `${m}/config/issuers`)).body.data).toEqual({ default: d.issuer_id, default_follows_latest_issuer: false });
    expect((await ok('GET', `${m}/config/keys`)).body.data).toEqual({ default: d.key_id });
    expect((await ok('GET', `${m}/key/${d.key_id}`)).body.data).toMatchObject({ key_id: d.key_id, key_type: 'rsa' });
    expect((await ok('GET', `${m}/cert/${d.serial_number}`)).body.data.certificate).toBe(d.certificate);
    expect((await ok('GET', `${m}/certs?list=true`)).body.data.keys).toEqual([d.serial_number]);
  });

  it('a second root is added, not made default', async () => {
    const second = (await ok('POST', `${m}/root/generate/internal`, { common_name: 'Second Root' })).body.data;
    expect(second.issuer_id).not.toBe(r.body.data.issuer_id);
    expect(second.key_id).not.toBe(r.body.data.key_id);
    expect((await ok('GET', `${m}/config/issuers`)).body.data.default).toBe(r.body.data.issuer_id);
    expect((await ok('GET', `${m}/config/keys`)).body.data.default).toBe(r.body.data.key_id);
    expect(await issuerIds(m)).toHaveLength(2);
  });
});

describe('root generation: key sources, formats and key types', () => {
  let m: string;
  beforeAll(async () => {
    m = await mount();
  });

  it('exported: returns the PKCS#1 private key of the certificate', async () => {
    const d = (await ok('POST', `${m}/root/generate/exported`, { common_name: 'exp.example.com' })).body.data;
    expect(d.private_key_type).toBe('rsa');
    expect(d.private_key).toMatch(/^-----BEGIN RSA PRIVATE KEY-----\n[\s\S]+-----END RSA PRIVATE KEY-----$/);
    expect(spkiOfPrivateKey(d.private_key)).toEqual(spkiOfCert(d.certificate));
    expect(ext(d.certificate, x509.SubjectAlternativeNameExtension)!.names.items.map((i) => [i.type, i.value])).toEqual([['dns', 'exp.example.com']]);
  });

  it('exported with private_key_format=pkcs8, an EC P-384 key signed with SHA-384', async () => {
    const d = (await ok('POST', `${m}/root/generate/exported`, { common_name: 'ec', key_type: 'ec', key_bits: 384, private_key_format: 'pkcs8' })).body.data;
    expect(d.private_key_type).toBe('ec');
    expect(d.private_key).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(spkiOfPrivateKey(d.private_key)).toEqual(spkiOfCert(d.certificate));
    const x = cert(d.certificate);
    expect(x.publicKey.algorithm).toMatchObject({ name: 'ECDSA', namedCurve: 'P-384' });
    expect(x.signatureAlgorithm).toMatchObject({ name: 'ECDSA', hash: { name: 'SHA-384' } });
    expect((await ok('GET', `${m}/issuer/${d.issuer_id}`)).body.data.revocation_signature_algorithm).toBe('ECDSAWithSHA384');
  });

  it('ed25519 with format=der: base64 DER certificate and key', async () => {
    const d = (await ok('POST', `${m}/root/generate/exported`, { common_name: 'ed', key_type: 'ed25519', format: 'der' })).body.data;
    expect(d.private_key_type).toBe('ed25519');
    const der = Uint8Array.from(atob(d.certificate), (ch) => ch.charCodeAt(0));
    const x = new x509.X509Certificate(der);
    expect(x.publicKey.algorithm.name).toBe('Ed25519');
    expect(d.issuing_ca).toBe(d.certificate);
    const key = createPrivateKey({ key: Buffer.from(d.private_key, 'base64'), format: 'der', type: 'pkcs8' });
    expect(new Uint8Array(createPublicKey(key).export({ format: 'der', type: 'spki' }))).toEqual(new Uint8Array(x.publicKey.rawData));
    expect(d.serial_number).toBe(colonSerial(x.toString('pem')));
  });

  it('format=pem_bundle: certificate holds the key then the certificate (exported)', async () => {
    const d = (await ok('POST', `${m}/root/generate/exported`, { common_name: 'b', format: 'pem_bundle', key_type: 'ec' })).body.data;
    expect(d.certificate).toBe(`${d.private_key}\n${d.issuing_ca}`);
    expect(d.private_key).toMatch(/^-----BEGIN EC PRIVATE KEY-----/);
    const internal = (await ok('POST', `${m}/root/generate/internal`, { common_name: 'b2', format: 'pem_bundle', key_type: 'ec' })).body.data;
    expect(internal.certificate).toBe(internal.issuing_ca);
    expect(internal.private_key).toBeUndefined();
  });

  it('existing: signs with a key of the mount (key_ref by name or id); key_type/key_bits refused', async () => {
    const k = (await ok('POST', `${m}/keys/generate/internal`, { key_name: 'prepared', key_type: 'ec' })).body.data;
    const byName = (await ok('POST', `${m}/root/generate/existing`, { common_name: 'existing', key_ref: 'prepared' })).body.data;
    expect(byName.key_id).toBe(k.key_id);
    expect(byName.key_name).toBe('prepared');
    const keySpki = await keySpkiFromRead(m, k.key_id);
    expect(b64(spkiOfCert(byName.certificate))).toBe(keySpki);
    const byId = (await ok('POST', `${m}/issuers/generate/root/existing`, { common_name: 'existing2', key_ref: k.key_id })).body.data;
    expect(byId.key_id).toBe(k.key_id);
    await nothingWritten(m, async () => {
      await expectRefused(`${m}/root/generate/existing`, { common_name: 'x', key_ref: 'prepared', key_type: 'rsa' }, 'invalid parameter for the kms/existing path parameter, key_type nor key_bits arguments can be set in this mode');
      await expectRefused(`${m}/root/generate/existing`, { common_name: 'x', key_ref: 'prepared', key_bits: 2048 }, 'invalid parameter for the kms/existing path parameter, key_type nor key_bits arguments can be set in this mode');
      await expectRefused(`${m}/root/generate/existing`, { common_name: 'x', key_ref: 'nope' }, 'unable to find PKI key for reference: nope');
      await expectRefused(`${m}/root/generate/existing`, { common_name: 'x', key_ref: '' }, 'missing argument key_ref for existing type');
    });
  });

  it('existing with key_ref default uses the default key', async () => {
    const m2 = await mount();
    const k = (await ok('POST', `${m2}/keys/generate/internal`, {})).body.data;
    const d = (await ok('POST', `${m2}/root/generate/existing`, { common_name: 'd' })).body.data;
    expect(d.key_id).toBe(k.key_id);
    // The key now has an issuer: the first issuer with a key became the default.
    expect((await ok('GET', `${m2}/config/issuers`)).body.data.default).toBe(d.issuer_id);
  });

  it('kms: the argument checks, and an unknown managed key (managed-keys.test.ts has the rest)', async () => {
    await nothingWritten(m, async () => {
      await expectRefused(`${m}/root/generate/kms`, { common_name: 'k' }, 'missing argument managed_key_name or managed_key_id');
      await expectRefused(`${m}/root/generate/kms`, { common_name: 'k', managed_key_name: 'a', managed_key_id: 'b' }, 'only one argument of managed_key_name or managed_key_id should be specified');
      await expectRefused(`${m}/root/generate/kms`, { common_name: 'k', managed_key_name: 'hsm' }, 'no managed key found with name "hsm"');
      await expectRefused(`${m}/root/generate/kms`, { common_name: 'k', managed_key_name: 'hsm', key_type: 'ec' }, 'invalid parameter for the kms/existing path parameter, key_type nor key_bits arguments can be set in this mode');
    });
  });

  it('refuses an unknown type, format, key type or size, signature_bits, and small RSA keys', async () => {
    await nothingWritten(m, async () => {
      await expectRefused(`${m}/root/generate/bogus`, { common_name: 'x' }, 'the "exported" path parameter must be "internal", "existing", exported" or "kms"');
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', format: 'p12' }, 'the "format" path parameter must be "pem", "der", or "pem_bundle"');
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', key_type: 'dsa' }, /key type/);
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', key_type: 'ec', key_bits: 512 }, /unsupported bit length for EC key: 512/);
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', key_bits: 1024 }, 'RSA keys < 2048 bits are unsafe and not supported');
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', signature_bits: 123 }, 'unsupported hash signature algorithm: 123');
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', private_key_format: 'jks' }, /private_key_format/);
    });
  });
});

describe('root generation: request fields', () => {
  let m: string;
  beforeAll(async () => {
    m = await mount();
  });

  it('subject fields, SANs of every kind, and exclude_cn_from_sans', async () => {
    const d = (
      await ok('POST', `${m}/root/generate/internal`, {
        common_name: 'ca.example.com',
        alt_names: 'b.example.com,a.example.com,admin@example.com',
        ip_sans: '10.0.0.1,::1',
        uri_sans: 'spiffe://example/ca',
        other_sans: '1.3.6.1.4.1.311.20.2.3;UTF8:ca@example.com',
        ou: 'Ops,Sec',
        organization: 'Example Inc',
        country: 'US',
        locality: 'Springfield',
        province: 'IL',
        street_address: '1 Main St',
        postal_code: '12345',
        serial_number: 'SN-1',
        key_type: 'ec',
      })
    ).body.data;
    const x = cert(d.certificate);
    const parts = x.subjectName.toJSON().flatMap((rdn) => Object.entries(rdn).map(([k, v]) => `${k}=${v.join('+')}`));
    // Go's order (C, ST, L, street, postalCode, O, OU, CN, serialNumber); the two OUs share one RDN.
    expect(parts).toEqual(['C=US', 'ST=IL', 'L=Springfield', '2.5.4.9=1 Main St', '2.5.4.17=12345', 'O=Example Inc', 'OU=Ops+Sec', 'CN=ca.example.com', '2.5.4.5=SN-1']);
    const sans = ext(d.certificate, x509.SubjectAlternativeNameExtension)!.names.items.map((i) => [i.type, i.value]);
    expect(sans).toEqual(
      expect.arrayContaining([
        ['dns', 'a.example.com'],
        ['dns', 'b.example.com'],
        ['dns', 'ca.example.com'],
        ['email', 'admin@example.com'],
        ['ip', '10.0.0.1'],
        ['ip', '::1'],
        ['url', 'spiffe://example/ca'],
      ]),
    );
    // The other SAN (a UPN here, which @peculiar/x509 decodes by name) comes first, as Vault writes it.
    expect(sans[0]).toEqual(['upn', 'ca@example.com']);
    expect(sans).toHaveLength(8);

    const excluded = (await ok('POST', `${m}/root/generate/internal`, { common_name: 'only-subject.example.com', exclude_cn_from_sans: true })).body.data;
    expect(ext(excluded.certificate, x509.SubjectAlternativeNameExtension)).toBeNull();
    expect(cert(excluded.certificate).subject).toBe('CN=only-subject.example.com');
  });

  it('refuses malformed SANs', async () => {
    await nothingWritten(m, async () => {
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', ip_sans: '300.1.1.1' }, 'the value "300.1.1.1" is not a valid IP address');
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', other_sans: 'nosemicolon' }, 'could not parse requested other SAN: expected a semicolon in other SAN "nosemicolon"');
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', other_sans: '1.2.3;INT:5' }, /only utf8 other SANs are supported/);
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', alt_names: 'not a host' }, 'subject alternate name not a host is not a valid DNS name and cannot be included as a SAN');
    });
  });

  it('max_path_length and permitted_dns_domains (critical name constraints)', async () => {
    const d = (await ok('POST', `${m}/root/generate/internal`, { common_name: 'pl', max_path_length: 2, permitted_dns_domains: 'example.com,.example.org', key_type: 'ec' })).body.data;
    expect(ext(d.certificate, x509.BasicConstraintsExtension)!.pathLength).toBe(2);
    const nc = cert(d.certificate).getExtension('2.5.29.30')!;
    expect(nc.critical).toBe(true);
    const text = new TextDecoder().decode(nc.value);
    expect(text).toContain('example.com');
    expect(text).toContain('.example.org');

    const zero = await ok('POST', `${m}/root/generate/internal`, { common_name: 'pl0', max_path_length: 0, key_type: 'ec' });
    expect(ext(zero.body.data.certificate, x509.BasicConstraintsExtension)!.pathLength).toBe(0);
    expect(zero.body.warnings).toContain('Max path length of the generated certificate is zero. This certificate cannot be used to issue intermediate CA certificates.');

    await nothingWritten(m, async () => {
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', max_path_length: -2 }, 'requested max_path_length -2 is invalid: must be a non-negative integer or -1 for no constraint');
    });
  });

  it('signature_bits and use_pss choose the RSA signature', async () => {
    const sha384 = (await ok('POST', `${m}/root/generate/internal`, { common_name: 's384', signature_bits: 384 })).body.data;
    expect(cert(sha384.certificate).signatureAlgorithm).toMatchObject({ name: 'RSASSA-PKCS1-v1_5', hash: { name: 'SHA-384' } });
    expect((await ok('GET', `${m}/issuer/${sha384.issuer_id}`)).body.data.revocation_signature_algorithm).toBe('SHA384WithRSA');
    const pss = (await ok('POST', `${m}/root/generate/internal`, { common_name: 'pss', use_pss: true })).body.data;
    expect(cert(pss.certificate).signatureAlgorithm).toMatchObject({ name: 'RSA-PSS' });
    const read = await ok('GET', `${m}/issuer/${pss.issuer_id}`);
    expect(read.body.data.revocation_signature_algorithm).toBe('SHA256WithRSAPSS');
    expect(read.body.warnings).toEqual([expect.stringMatching(/PSS Revocation Signature Algorithm/)]);
    const x = cert(pss.certificate);
    expect(await x.verify({ publicKey: x.publicKey, signatureOnly: true })).toBe(true);
  });

  it('key_usage: DigitalSignature is added to CertSign+CRLSign; other usages are warned about and ignored', async () => {
    const r = await ok('POST', `${m}/root/generate/internal`, { common_name: 'ku', key_type: 'ec', key_usage: 'DigitalSignature,KeyEncipherment,bogus' });
    expect(ext(r.body.data.certificate, x509.KeyUsagesExtension)!.usages).toBe(
      x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
    );
    expect(r.body.warnings).toContain('Invalid key usage will be ignored: key usage KeyEncipherment is only valid for non-Ca certs; unrecognized key usage bogus');
  });

  it('ttl and not_after: one or the other; the mount maximum clamps ttl with a warning', async () => {
    const far = (await ok('POST', `${m}/root/generate/internal`, { common_name: 'far', key_type: 'ec', not_after: '9999-12-31T23:59:59Z' })).body.data;
    expect(cert(far.certificate).notAfter.toISOString()).toBe('9999-12-31T23:59:59.000Z');
    expect(far.expiration).toBe(253402300799);

    const clamped = await ok('POST', `${m}/root/generate/internal`, { common_name: 'long', key_type: 'ec', ttl: '1000h' });
    expect(clamped.body.warnings).toContain('TTL "1000h0m0s" is longer than permitted maxTTL "768h0m0s", so maxTTL is being used');
    expect(Math.abs(cert(clamped.body.data.certificate).notAfter.getTime() - (Date.now() + 768 * 3600_000))).toBeLessThan(60_000);

    await nothingWritten(m, async () => {
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', ttl: '1h', not_after: '2030-01-01T00:00:00Z' }, 'Either ttl or not_after should be provided. Both should not be provided in the same request.');
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', not_after: 'tomorrow' }, /^parsing time "tomorrow"/);
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', not_after: '2001-01-01T00:00:00Z' }, 'notAfter before notBefore');
    });
  });

  it('without ttl a root lives for the mount default lease TTL', async () => {
    const m2 = await mount();
    await ok('POST', `sys/mounts/${m2}/tune`, { default_lease_ttl: '48h' });
    const d = (await ok('POST', `${m2}/root/generate/internal`, { common_name: 'dflt', key_type: 'ec' })).body.data;
    expect(Math.abs(cert(d.certificate).notAfter.getTime() - (Date.now() + 48 * 3600_000))).toBeLessThan(60_000);
  });

  it('not_before_duration backdates NotBefore', async () => {
    const d = (await ok('POST', `${m}/root/generate/internal`, { common_name: 'nb', key_type: 'ec', not_before_duration: '1h' })).body.data;
    expect(Math.abs(cert(d.certificate).notBefore.getTime() - (Date.now() - 3600_000))).toBeLessThan(60_000);
  });

  it('an empty subject is warned about', async () => {
    const r = await ok('POST', `${m}/root/generate/internal`, { key_type: 'ec', alt_names: 'san-only.example.com' });
    expect(cert(r.body.data.certificate).subject).toBe('');
    expect(r.body.warnings).toContain(
      'This issuer certificate was generated without a Subject; this makes it likely that issuing leaf certs with this certificate will cause TLS validation libraries to reject this certificate.',
    );
  });

  it('issuer_name and key_name: set, unique, not "default", valid characters', async () => {
    const d = (await ok('POST', `${m}/root/generate/internal`, { common_name: 'named', key_type: 'ec', issuer_name: 'root-2024', key_name: 'root-key' })).body.data;
    expect([d.issuer_name, d.key_name]).toEqual(['root-2024', 'root-key']);
    expect((await ok('GET', `${m}/issuer/root-2024`)).body.data.issuer_id).toBe(d.issuer_id);
    expect((await ok('GET', `${m}/key/root-key`)).body.data.key_id).toBe(d.key_id);
    await nothingWritten(m, async () => {
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', issuer_name: 'root-2024' }, 'issuer name already in use');
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', key_name: 'root-key' }, 'key name already in use');
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', issuer_name: 'Default' }, "reserved keyword 'default' can not be used as issuer name");
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', key_name: 'default' }, "reserved keyword 'default' can not be used as key name");
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', issuer_name: 'bad name!' }, 'issuer name contained invalid characters');
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', key_name: '-bad' }, 'key name contained invalid characters');
      await expectRefused(`${m}/root/generate/internal`, { common_name: 'x', issuer_name: '' }, 'expected non-empty issuer name');
    });
  });

  it('AIA URLs from config/urls go into the root; an {{issuer_id}} template is skipped with a warning', async () => {
    const m2 = await mount();
    await ok('POST', `${m2}/config/urls`, { issuing_certificates: 'http://ca.example/ca', crl_distribution_points: 'http://ca.example/crl', ocsp_servers: 'http://ca.example/ocsp' });
    const r = await ok('POST', `${m2}/root/generate/internal`, { common_name: 'aia', key_type: 'ec' });
    expect(r.body.warnings ?? []).not.toContainEqual(expect.stringMatching(/AIA/));
    const aia = ext(r.body.data.certificate, x509.AuthorityInfoAccessExtension)!;
    expect(aia.caIssuers.map((g) => g.value)).toEqual(['http://ca.example/ca']);
    expect(aia.ocsp.map((g) => g.value)).toEqual(['http://ca.example/ocsp']);
    const crl = ext(r.body.data.certificate, x509.CRLDistributionPointsExtension)!;
    expect(crl.distributionPoints.map((p) => p.distributionPoint?.fullName?.[0].uniformResourceIdentifier)).toEqual(['http://ca.example/crl']);

    await ok('POST', `${m2}/config/urls`, { enable_templating: true, issuing_certificates: 'http://ca.example/{{issuer_id}}/der' });
    const t = await ok('POST', `${m2}/root/generate/internal`, { common_name: 'aia2', key_type: 'ec' });
    expect(t.body.warnings).toContainEqual(expect.stringMatching(/^When generating root CA, found global AIA configuration with issuer_id template unsuitable/));
    expect(ext(t.body.data.certificate, x509.AuthorityInfoAccessExtension)).toBeNull();

    await ok('POST', `${m2}/config/urls`, { issuing_certificates: '{{cluster_path}}/der' });
    await expectRefused(`${m2}/root/generate/internal`, { common_name: 'aia3' }, /^unable to parse AIA URL information: unable to template AIA URLs as we lack local cluster address information \(path\)/);
  });

  it('default_follows_latest_issuer makes each new root the default', async () => {
    const m2 = await mount();
    const first = (await ok('POST', `${m2}/root/generate/internal`, { common_name: 'one', key_type: 'ec' })).body.data;
    await ok('POST', `${m2}/config/issuers`, { default: first.issuer_id, default_follows_latest_issuer: true });
    const second = (await ok('POST', `${m2}/root/generate/internal`, { common_name: 'two', key_type: 'ec' })).body.data;
    expect((await ok('GET', `${m2}/config/issuers`)).body.data).toEqual({ default: second.issuer_id, default_follows_latest_issuer: true });
  });
});

describe('root/rotate', () => {
  it('names the new root "next" while that name is free, and leaves the default alone', async () => {
    const m = await mount();
    const old = (await ok('POST', `${m}/root/generate/internal`, { common_name: 'old', key_type: 'ec' })).body.data;
    const next = (await ok('POST', `${m}/root/rotate/internal`, { common_name: 'new', key_type: 'ec' })).body.data;
    expect(next.issuer_name).toBe('next');
    expect((await ok('GET', `${m}/config/issuers`)).body.data.default).toBe(old.issuer_id);
    const again = (await ok('POST', `${m}/root/rotate/internal`, { common_name: 'newer', key_type: 'ec' })).body.data;
    expect(again.issuer_name).toBe('');
    const named = (await ok('POST', `${m}/root/rotate/exported`, { common_name: 'newest', key_type: 'ec', issuer_name: 'explicit' })).body.data;
    expect(named.issuer_name).toBe('explicit');
    expect(named.private_key).toMatch(/EC PRIVATE KEY/);
  });
});

describe('intermediate/generate', () => {
  let m: string;
  beforeAll(async () => {
    m = await mount();
  });

  it('internal: a signed CSR for a new stored key; no issuer is created', async () => {
    const r = await ok('POST', `${m}/intermediate/generate/internal`, { common_name: 'Int CA', alt_names: 'int.example.com', ou: 'Ops', organization: 'Example' });
    const d = r.body.data;
    expect(Object.keys(d).sort()).toEqual(['csr', 'key_id']);
    expect(d.csr).toMatch(/^-----BEGIN CERTIFICATE REQUEST-----\n[\s\S]+-----END CERTIFICATE REQUEST-----$/);
    const csr = new x509.Pkcs10CertificateRequest(d.csr);
    expect(await csr.verify()).toBe(true);
    expect(csr.subject).toBe('O=Example, OU=Ops, CN=Int CA');
    expect(csrExt(csr, '2.5.29.17', x509.SubjectAlternativeNameExtension)!.names.items.map((i) => i.value)).toEqual(['int.example.com']);
    // Neither basic constraints nor key usage unless asked for.
    expect(csrExt(csr, '2.5.29.19', x509.BasicConstraintsExtension)).toBeNull();
    expect(csrExt(csr, '2.5.29.15', x509.KeyUsagesExtension)).toBeNull();
    expect(await issuerIds(m)).toEqual([]);
    expect(b64(csr.publicKey.rawData)).toBe(await keySpkiFromRead(m, d.key_id));
    expect((await ok('GET', `${m}/config/keys`)).body.data.default).toBe(d.key_id);
    expect(r.body.warnings).toContainEqual(expect.stringMatching(/Since this certificate is an intermediate, it might be useful to regenerate this certificate/));
  });

  it('add_basic_constraints and key_usage put those extensions in the CSR', async () => {
    const d = (await ok('POST', `${m}/intermediate/generate/internal`, { common_name: 'bc', key_type: 'ec', add_basic_constraints: true, key_usage: 'CertSign,CRLSign' })).body.data;
    const csr = new x509.Pkcs10CertificateRequest(d.csr);
    const bc = csrExt(csr, '2.5.29.19', x509.BasicConstraintsExtension)!;
    expect([bc.ca, bc.critical]).toEqual([true, true]);
    expect(csrExt(csr, '2.5.29.15', x509.KeyUsagesExtension)!.usages).toBe(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign);
  });

  it('exported: the private key, in each format', async () => {
    const pem = (await ok('POST', `${m}/issuers/generate/intermediate/exported`, { common_name: 'e', key_type: 'ec', key_name: 'int-key' })).body.data;
    expect(pem.private_key_type).toBe('ec');
    expect(spkiOfPrivateKey(pem.private_key)).toEqual(new Uint8Array(new x509.Pkcs10CertificateRequest(pem.csr).publicKey.rawData));
    expect((await ok('GET', `${m}/key/int-key`)).body.data.key_id).toBe(pem.key_id);

    const bundle = (await ok('POST', `${m}/intermediate/generate/exported`, { common_name: 'e2', key_type: 'ec', format: 'pem_bundle' })).body.data;
    expect(bundle.csr).toMatch(/^-----BEGIN EC PRIVATE KEY-----[\s\S]+-----END EC PRIVATE KEY-----\n-----BEGIN CERTIFICATE REQUEST-----/);
    expect(bundle.csr.startsWith(bundle.private_key)).toBe(true);

    const der = (await ok('POST', `${m}/intermediate/generate/exported`, { common_name: 'e3', key_type: 'ed25519', format: 'der', private_key_format: 'pkcs8' })).body.data;
    const csr = new x509.Pkcs10CertificateRequest(Uint8Array.from(atob(der.csr), (ch) => ch.charCodeAt(0)));
    expect(await csr.verify()).toBe(true);
    expect(csr.publicKey.algorithm.name).toBe('Ed25519');
    expect(der.private_key).toMatch(/^[A-Za-z0-9+/=]+$/);
  });

  it('refuses what root generation refuses', async () => {
    await nothingWritten(m, async () => {
      await expectRefused(`${m}/intermediate/generate/what`, { common_name: 'x' }, 'the "exported" path parameter must be "internal", "existing", exported" or "kms"');
      await expectRefused(`${m}/intermediate/generate/internal`, { common_name: 'x', format: 'xml' }, 'the "format" path parameter must be "pem", "der", or "pem_bundle"');
      await expectRefused(`${m}/intermediate/generate/internal`, { common_name: 'x', ttl: '1h', not_after: '2030-01-01T00:00:00Z' }, 'Either ttl or not_after should be provided. Both should not be provided in the same request.');
      await expectRefused(`${m}/intermediate/generate/kms`, { common_name: 'x', managed_key_id: 'abc' }, 'no managed key found with uuid "abc"');
      await expectRefused(`${m}/intermediate/generate/internal`, { common_name: 'x', key_bits: 1024 }, 'RSA keys < 2048 bits are unsafe and not supported');
    });
  });

  it('intermediate/cross-sign: a CSR for an existing key (key_ref)', async () => {
    const k = (await ok('POST', `${m}/keys/generate/internal`, { key_type: 'ec', key_name: 'cross' })).body.data;
    const d = (await ok('POST', `${m}/intermediate/cross-sign`, { common_name: 'cross', key_ref: 'cross' })).body.data;
    expect(d.key_id).toBe(k.key_id);
    expect(b64(new x509.Pkcs10CertificateRequest(d.csr).publicKey.rawData)).toBe(await keySpkiFromRead(m, k.key_id));
    await expectRefused(`${m}/intermediate/cross-sign`, { common_name: 'cross', key_ref: 'cross', key_type: 'ec' }, 'invalid parameter for the kms/existing path parameter, key_type nor key_bits arguments can be set in this mode');
  });
});

describe('keys/generate', () => {
  it('internal, exported and kms', async () => {
    const m = await mount();
    const internal = (await ok('POST', `${m}/keys/generate/internal`, { key_name: 'k1' })).body.data;
    expect(internal).toEqual({ key_id: expect.stringMatching(/^[0-9a-f-]{36}$/), key_name: 'k1', key_type: 'rsa' });
    expect((await ok('GET', `${m}/config/keys`)).body.data.default).toBe(internal.key_id);

    const exported = (await ok('POST', `${m}/keys/generate/exported`, { key_type: 'ec', key_bits: 521 })).body.data;
    expect(Object.keys(exported).sort()).toEqual(['key_id', 'key_name', 'key_type', 'private_key']);
    expect(exported.key_type).toBe('ec');
    expect(exported.private_key).toMatch(/^-----BEGIN EC PRIVATE KEY-----/);
    expect(b64(spkiOfPrivateKey(exported.private_key))).toBe(await keySpkiFromRead(m, exported.key_id));
    expect((await ok('GET', `${m}/config/keys`)).body.data.default).toBe(internal.key_id);

    const ed = (await ok('POST', `${m}/keys/generate/internal`, { key_type: 'ed25519' })).body.data;
    expect(ed.key_type).toBe('ed25519');

    await nothingWritten(m, async () => {
      await expectRefused(`${m}/keys/generate/internal`, { key_type: 'dsa' }, /key_type/);
      await expectRefused(`${m}/keys/generate/internal`, { key_bits: 1000 }, /^Validation for key_type, key_bits failed: /);
      await expectRefused(`${m}/keys/generate/internal`, { key_name: 'k1' }, 'key name already in use');
      await expectRefused(`${m}/keys/generate/kms`, {}, 'missing argument managed_key_name or managed_key_id');
      await expectRefused(`${m}/keys/generate/kms`, { managed_key_name: 'hsm' }, 'no managed key found with name "hsm"');
    });
    expect((await call('POST', `${m}/keys/generate/existing`, {})).status).toBe(404);
  });
});

/** The SPKI of a mount key, as base64, read back through a CSR made for it (keys never leave). */
async function keySpkiFromRead(m: string, keyId: string): Promise<string> {
  const csr = (await ok('POST', `${m}/intermediate/cross-sign`, { common_name: 'probe', key_ref: keyId })).body.data.csr;
  return b64(new x509.Pkcs10CertificateRequest(csr).publicKey.rawData);
}
