// sign/:role and issuer/:ref/sign/:role through the Worker, with CSRs made by @peculiar/x509: every
// key type, the role's key type and size checks, CSR names versus request names (use_csr_*), the
// CVE class (a CSR carrying a SAN, IP, URI, other SAN, serial number or user id the role forbids
// is refused as a whole and nothing is stored), and malformed CSRs.
import { Buffer } from 'node:buffer';
import { beforeAll, describe, expect, it } from 'vitest';
import * as x509 from '../../../src/crypto/pki/x509';
import { caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { call, ok } = caller(() => c.root);
let rootCert: x509.X509Certificate;
let rootPem: string;

type Kind = 'rsa1024' | 'rsa2048' | 'rsa3072' | 'ec256' | 'ec384' | 'ec521' | 'ed25519';
const keyCache = new Map<Kind, Promise<CryptoKeyPair>>();

function keys(kind: Kind): Promise<CryptoKeyPair> {
  let p = keyCache.get(kind);
  if (!p) {
    const alg = kind.startsWith('rsa')
      ? { name: 'RSASSA-PKCS1-v1_5', modulusLength: Number(kind.slice(3)), publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }
      : kind.startsWith('ec')
        ? { name: 'ECDSA', namedCurve: `P-${kind.slice(2)}` }
        : { name: 'Ed25519' };
    p = crypto.subtle.generateKey(alg, true, ['sign', 'verify']) as Promise<CryptoKeyPair>;
    keyCache.set(kind, p);
  }
  return p;
}

const signing = (kind: Kind) =>
  kind.startsWith('rsa') ? { name: 'RSASSA-PKCS1-v1_5' } : kind.startsWith('ec') ? { name: 'ECDSA', hash: 'SHA-256' } : { name: 'Ed25519' };

async function makeCsr(kind: Kind, name: string, extensions: x509.Extension[] = []): Promise<string> {
  const req = await x509.Pkcs10CertificateRequestGenerator.create({ name, keys: await keys(kind), signingAlgorithm: signing(kind), extensions });
  return req.toString('pem');
}

const sanExt = (names: { type: x509.GeneralNameType; value: string }[]) => new x509.SubjectAlternativeNameExtension(names);
const hex = (b: ArrayBuffer): string => Buffer.from(new Uint8Array(b)).toString('hex');
const sanItems = (cert: x509.X509Certificate) =>
  cert.getExtension(x509.SubjectAlternativeNameExtension)?.names.items.map((n) => [n.type, n.value]) ?? [];

async function listCerts(): Promise<string[]> {
  const r = await call('GET', 'pki/certs?list=true');
  return r.status === 404 ? [] : r.body.data.keys;
}

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/pki', { type: 'pki', config: { max_lease_ttl: '87600h' } });
  const r = await ok('POST', 'pki/root/generate/internal', { common_name: 'Sign Test Root', ttl: '8760h', issuer_name: 'root-a' });
  rootPem = r.body.data.certificate;
  rootCert = new x509.X509Certificate(rootPem);
  await ok('POST', 'pki/roles/any', {
    allowed_domains: 'example.com',
    allow_subdomains: true,
    key_type: 'any',
    allowed_uri_sans: 'spiffe://corp/*',
    allowed_other_sans: '1.3.6.1.4.1.311.20.2.3;UTF8:*@corp',
    allowed_serial_numbers: 'SN-*',
    allowed_user_ids: 'alice',
    organization: 'Role Org',
    ttl: '1h',
  });
});

describe('sign: every key type', () => {
  it.each<Kind>(['rsa2048', 'ec256', 'ec384', 'ec521', 'ed25519'])('%s', async (kind) => {
    const csr = await makeCsr(kind, 'CN=signed.example.com, O=Ignored Org');
    const r = await ok('POST', 'pki/sign/any', { csr });
    const d = r.body.data;
    expect(Object.keys(d).sort()).toEqual(['ca_chain', 'certificate', 'expiration', 'issuing_ca', 'serial_number']);
    expect(d.issuing_ca).toBe(rootPem);
    expect(d.ca_chain).toEqual([rootPem]);
    const cert = new x509.X509Certificate(d.certificate);
    // The CSR's public key, the CSR's CN; the subject's other fields come from the role.
    expect(hex(cert.publicKey.rawData)).toBe(hex(new x509.Pkcs10CertificateRequest(csr).publicKey.rawData));
    expect(cert.subjectName.getField('CN')).toEqual(['signed.example.com']);
    expect(cert.subjectName.getField('O')).toEqual(['Role Org']);
    expect(sanItems(cert)).toEqual([['dns', 'signed.example.com']]);
    expect(await cert.verify({ publicKey: rootCert.publicKey, signatureOnly: true })).toBe(true);
    expect(cert.getExtension(x509.BasicConstraintsExtension)).toBeNull();
    expect((await ok('GET', `pki/cert/${d.serial_number}`)).body.data.certificate).toBe(d.certificate);
  });
});

describe("sign: the CSR key against the role's key_type and key_bits", () => {
  it.each<[string, Record<string, unknown>, Kind, string]>([
    ['an EC key for an RSA role', { key_type: 'rsa' }, 'ec256', 'role requires keys of type rsa'],
    ['an RSA key for an EC role', { key_type: 'ec' }, 'rsa2048', 'role requires keys of type ec'],
    ['an RSA key for an ed25519 role', { key_type: 'ed25519' }, 'rsa2048', 'role requires keys of type ed25519'],
    ['a P-256 key for a P-384 role', { key_type: 'ec', key_bits: 384 }, 'ec256', "role requires a minimum of a 384-bit key, but CSR's key is 256 bits"],
    ['a 2048-bit key for a 3072-bit role', { key_type: 'rsa', key_bits: 3072 }, 'rsa2048', "role requires a minimum of a 3072-bit key, but CSR's key is 2048 bits"],
    ['a 1024-bit key for an any role', { key_type: 'any' }, 'rsa1024', 'RSA keys < 2048 bits are unsafe and not supported'],
    ['a 1024-bit key for an RSA role', { key_type: 'rsa' }, 'rsa1024', "role requires a minimum of a 2048-bit key, but CSR's key is 1024 bits"],
  ])('refuses %s', async (_label, keyFields, kind, message) => {
    const role = `keys-${Object.values(keyFields).join('-')}`;
    await ok('POST', `pki/roles/${role}`, { allow_any_name: true, ...keyFields });
    const before = await listCerts();
    const r = await call('POST', `pki/sign/${role}`, { csr: await makeCsr(kind, 'CN=k.test') });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
    expect(await listCerts()).toEqual(before);
  });

  it('accepts a larger key than the role minimum', async () => {
    await ok('POST', 'pki/roles/ec256', { allow_any_name: true, key_type: 'ec' });
    const cert = new x509.X509Certificate((await ok('POST', 'pki/sign/ec256', { csr: await makeCsr('ec384', 'CN=k.test') })).body.data.certificate);
    expect(cert.publicKey.algorithm).toMatchObject({ name: 'ECDSA', namedCurve: 'P-384' });
  });
});

describe('sign: names from the CSR or from the request', () => {
  it('uses the CSR CN and SANs, warning that common_name and alt_names were ignored', async () => {
    const csr = await makeCsr('ec256', 'CN=csr.example.com', [
      sanExt([
        { type: 'dns', value: 'b.example.com' },
        { type: 'dns', value: 'a.example.com' },
        { type: 'ip', value: '10.1.2.3' },
        { type: 'url', value: 'spiffe://corp/svc' },
        { type: 'upn', value: 'svc@corp' },
      ]),
    ]);
    const r = await ok('POST', 'pki/sign/any', { csr, common_name: 'req.example.com', alt_names: 'other.example.com', ip_sans: '10.9.9.9' });
    expect(r.body.warnings).toEqual(
      expect.arrayContaining([
        'the common_name field was provided but the role is set with "use_csr_common_name" set to true',
        'the alt_names field was provided but the role is set with "use_csr_sans" set to true',
      ]),
    );
    const cert = new x509.X509Certificate(r.body.data.certificate);
    expect(cert.subjectName.getField('CN')).toEqual(['csr.example.com']);
    const sans = sanItems(cert);
    expect(sans.filter(([t]) => t === 'dns').map(([, v]) => v)).toEqual(['a.example.com', 'b.example.com', 'csr.example.com']);
    expect(sans.filter(([t]) => t === 'ip').map(([, v]) => v)).toEqual(['10.1.2.3']);
    expect(sans.filter(([t]) => t === 'url').map(([, v]) => v)).toEqual(['spiffe://corp/svc']);
    expect(sans.filter(([t]) => t === 'upn').map(([, v]) => v)).toEqual(['svc@corp']);
  });

  it('uses the request values when the role turns use_csr_common_name / use_csr_sans off', async () => {
    await ok('POST', 'pki/roles/request-names', { allowed_domains: 'example.com', allow_subdomains: true, use_csr_common_name: false, use_csr_sans: false, key_type: 'ec' });
    const csr = await makeCsr('ec256', 'CN=csr.example.com', [sanExt([{ type: 'dns', value: 'csr-alt.example.com' }])]);
    const r = await ok('POST', 'pki/sign/request-names', { csr, common_name: 'req.example.com', alt_names: 'alt.example.com' });
    expect(r.body.warnings ?? []).not.toContain('the common_name field was provided but the role is set with "use_csr_common_name" set to true');
    const cert = new x509.X509Certificate(r.body.data.certificate);
    expect(cert.subjectName.getField('CN')).toEqual(['req.example.com']);
    expect(sanItems(cert)).toEqual([
      ['dns', 'alt.example.com'],
      ['dns', 'req.example.com'],
    ]);
  });

  it("takes the subject serial number and user id from the CSR when they are allowed", async () => {
    const csr = await makeCsr('ec256', 'CN=sn.example.com, 2.5.4.5=SN-77, 0.9.2342.19200300.100.1.1=alice');
    const cert = new x509.X509Certificate((await ok('POST', 'pki/sign/any', { csr })).body.data.certificate);
    expect(cert.subjectName.getField('2.5.4.5')).toEqual(['SN-77']);
    expect(cert.subjectName.getField('0.9.2342.19200300.100.1.1')).toEqual(['alice']);
  });

  it('ignores basic constraints in the CSR with a warning: the leaf is never a CA', async () => {
    const csr = await makeCsr('ec256', 'CN=ca-wannabe.example.com', [new x509.BasicConstraintsExtension(true, undefined, true)]);
    const r = await ok('POST', 'pki/sign/any', { csr });
    expect(r.body.warnings).toContain('specified CSR contained a Basic Constraints extension that was ignored during issuance');
    expect(new x509.X509Certificate(r.body.data.certificate).getExtension(x509.BasicConstraintsExtension)).toBeNull();
  });
});

describe('sign: a CSR carrying anything the role forbids is refused as a whole, storing nothing', () => {
  it.each<[string, string, x509.Extension[], string]>([
    ['a forbidden CN', 'CN=www.evil.com', [], 'common name www.evil.com not allowed by this role'],
    ['a forbidden DNS SAN', 'CN=ok.example.com', [sanExt([{ type: 'dns', value: 'ok2.example.com' }, { type: 'dns', value: 'login.bank.test' }])], 'subject alternate name login.bank.test not allowed by this role'],
    ['a forbidden email SAN', 'CN=ok.example.com', [sanExt([{ type: 'email', value: 'ceo@evil.com' }])], 'email address ceo@evil.com not allowed by this role'],
    ['a forbidden URI SAN', 'CN=ok.example.com', [sanExt([{ type: 'url', value: 'spiffe://evil/admin' }])], 'URI Subject Alternative Names were provided via CSR which are not valid for this role'],
    ['a forbidden other SAN', 'CN=ok.example.com', [sanExt([{ type: 'upn', value: 'admin@evil' }])], 'other SAN admin@evil not allowed for OID 1.3.6.1.4.1.311.20.2.3 by this role'],
    ['a forbidden subject serial number', 'CN=ok.example.com, 2.5.4.5=EVIL-1', [], 'serial_number EVIL-1 not allowed by this role'],
    ['a forbidden user id', 'CN=ok.example.com, 0.9.2342.19200300.100.1.1=root', [], 'user_id root is not allowed by this role'],
  ])('%s', async (_label, name, exts, message) => {
    const before = await listCerts();
    const r = await call('POST', 'pki/sign/any', { csr: await makeCsr('ec256', name, exts) });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
    expect(await listCerts()).toEqual(before);
  });

  it('an IP SAN when the role allows none', async () => {
    await ok('POST', 'pki/roles/no-ip', { allowed_domains: 'example.com', allow_subdomains: true, allow_ip_sans: false, key_type: 'ec' });
    const before = await listCerts();
    const r = await call('POST', 'pki/sign/no-ip', { csr: await makeCsr('ec256', 'CN=ok.example.com', [sanExt([{ type: 'ip', value: '169.254.169.254' }])]) });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['IP Subject Alternative Names are not allowed in this role, but was provided some via CSR']);
    expect(await listCerts()).toEqual(before);
  });

  it('a URI SAN when the role allows none', async () => {
    await ok('POST', 'pki/roles/no-uri', { allowed_domains: 'example.com', allow_subdomains: true, key_type: 'ec' });
    const r = await call('POST', 'pki/sign/no-uri', { csr: await makeCsr('ec256', 'CN=ok.example.com', [sanExt([{ type: 'url', value: 'https://x' }])]) });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['URI Subject Alternative Names are not allowed in this role, but were provided via CSR']);
  });

  it('CSR SANs are checked even when the role ignores the CSR common name', async () => {
    await ok('POST', 'pki/roles/csr-sans-only', { allowed_domains: 'example.com', allow_subdomains: true, use_csr_common_name: false, key_type: 'ec' });
    const csr = await makeCsr('ec256', 'CN=ignored.example.com', [sanExt([{ type: 'dns', value: 'evil.org' }])]);
    const r = await call('POST', 'pki/sign/csr-sans-only', { csr, common_name: 'ok.example.com' });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['subject alternate name evil.org not allowed by this role']);
  });
});

describe('sign: malformed CSRs and unknown roles', () => {
  it('refuses an empty, unparsable or forged CSR', async () => {
    const empty = await call('POST', 'pki/sign/any', { csr: '' });
    expect(empty.body.errors).toEqual(['"csr" is empty']);
    const missing = await call('POST', 'pki/sign/any', {});
    expect(missing.body.errors).toEqual(['"csr" is empty']);
    const noPem = await call('POST', 'pki/sign/any', { csr: 'not a pem' });
    expect(noPem.status).toBe(400);
    expect(noPem.body.errors).toEqual(['csr contains no data']);
    const junk = await call('POST', 'pki/sign/any', { csr: '-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----' });
    expect(junk.status).toBe(400);
    expect(junk.body.errors[0]).toMatch(/^certificate request could not be parsed: /);
    const good = await makeCsr('ec256', 'CN=forged.example.com');
    const der = new Uint8Array(x509.PemConverter.decodeFirst(good));
    der[der.length - 5] ^= 0xff; // inside the signature
    const forged = x509.PemConverter.encode(der.buffer, 'CERTIFICATE REQUEST');
    const r = await call('POST', 'pki/sign/any', { csr: forged });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['request signature invalid']);
  });

  it('refuses an unknown role', async () => {
    const r = await call('POST', 'pki/sign/nope', { csr: await makeCsr('ec256', 'CN=x.example.com') });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['unknown role: nope']);
  });
});

describe('sign: choosing the issuer', () => {
  it('signs with the issuer the path names on issuer/:ref/sign/:role', async () => {
    const second = await ok('POST', 'pki/root/generate/internal', { common_name: 'Second Root', key_type: 'ec', ttl: '8760h', issuer_name: 'second' });
    const secondCert = new x509.X509Certificate(second.body.data.certificate);
    const csr = await makeCsr('ec256', 'CN=path.example.com');
    const viaPath = await ok('POST', 'pki/issuer/second/sign/any', { csr });
    const cert = new x509.X509Certificate(viaPath.body.data.certificate);
    expect(cert.issuer).toBe(secondCert.subject);
    expect(viaPath.body.data.issuing_ca).toBe(second.body.data.certificate);
    expect(await cert.verify({ publicKey: secondCert.publicKey, signatureOnly: true })).toBe(true);
    const viaRole = new x509.X509Certificate((await ok('POST', 'pki/sign/any', { csr })).body.data.certificate);
    expect(viaRole.issuer).toBe(rootCert.subject);
  });
});
