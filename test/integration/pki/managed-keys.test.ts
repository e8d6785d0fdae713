// PKI with managed keys (root|intermediate|keys/generate/kms) against the real HSM bridge on
// SoftHSM2 (test/global/hsm-bridge-setup.ts): the certificates, CSRs, CRLs and OCSP responses of
// an issuer whose key is in the HSM are signed there. Every signature is checked here with
// @peculiar/x509 / WebCrypto and the public key the bridge reports for the HSM key, never with
// the engine's own signer. Also: key reads, the refusals, and what happens when the managed key
// is deleted or no longer allowed on the mount.
import { env, SELF } from 'cloudflare:test';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, Certificate } from '@peculiar/asn1-x509';
import { BasicOCSPResponse, CertID, OCSPRequest, OCSPResponse, OCSPResponseStatus, Request, TBSRequest } from '@peculiar/asn1-ocsp';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { fromHex } from '../../../src/crypto/encoding';
import * as x509 from '../../../src/crypto/pki/x509';
import { caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { call, ok } = caller(() => c.root);

const LIBRARY = inject('hsmBridgeLibrary');
const TOKEN = inject('hsmBridgeTokenLabel');
const PIN = inject('hsmBridgePin');

/** Labels unique to this run: a re-run against the same token never finds old keys. */
const run = Math.random().toString(36).slice(2, 8);
const label = (name: string) => `pki-${run}-${name}`;
const EC = { mechanism: '0x1041', curve: 'P256' };
const RSA = { mechanism: '0x0001', key_bits: 2048 };

/** A pkcs11 managed key named `name` (HSM label `keyLabel`), generated at first use by default. */
async function managedKey(name: string, fields: Record<string, unknown>, keyLabel = label(name)): Promise<string> {
  await ok('POST', `sys/managed-keys/pkcs11/${name}`, { library: LIBRARY, token_label: TOKEN, pin: PIN, key_label: keyLabel, allow_generate_key: true, ...fields });
  return (await ok('GET', `sys/managed-keys/pkcs11/${name}`)).body.data.UUID;
}

/** The HSM key's public key (SPKI DER), asked of the bridge directly. */
async function hsmPublicKey(keyLabel: string): Promise<Uint8Array> {
  const res = await env.HSM_BRIDGE!.fetch(`${env.HSM_BRIDGE_URL}/v1/key`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ library: LIBRARY, token_label: TOKEN, pin: PIN, key_label: keyLabel }),
  });
  expect(res.status).toBe(200);
  const { public_key } = (await res.json()) as { public_key: string };
  return new Uint8Array(x509.PemConverter.decodeFirst(public_key));
}

let n = 0;
/** A fresh PKI mount allowed to use `allowed`. */
async function mount(allowed: string[]): Promise<string> {
  const path = `pkikms${++n}`;
  await ok('POST', `sys/mounts/${path}`, { type: 'pki', config: { max_lease_ttl: '87600h' } });
  if (allowed.length) await ok('POST', `sys/mounts/${path}/tune`, { allowed_managed_keys: allowed });
  return path;
}

const cert = (pem: string) => new x509.X509Certificate(pem);
const b64 = (b: ArrayBuffer | Uint8Array) => btoa(String.fromCharCode(...new Uint8Array(b)));
const spkiOf = (pem: string) => b64(cert(pem).publicKey.rawData);
/** Signature check by @peculiar/x509 with WebCrypto: `pem` signed by `issuerPem`'s key. */
const signedBy = (pem: string, issuerPem: string) => cert(pem).verify({ publicKey: cert(issuerPem).publicKey, signatureOnly: true });

/** Nothing in a kms answer is private key material. */
function noPrivateKey(r: { text: string; body: { data?: Record<string, unknown> } }): void {
  expect(r.body.data).not.toHaveProperty('private_key');
  expect(r.body.data).not.toHaveProperty('private_key_type');
  expect(r.text).not.toContain('PRIVATE KEY');
  expect(r.text).not.toContain(PIN);
}

async function expectRefused(path: string, body: unknown, message: string | RegExp): Promise<void> {
  const r = await call('POST', path, body);
  expect(r.status, r.text).toBe(400);
  if (typeof message === 'string') expect(r.body.errors).toEqual([message]);
  else expect(r.body.errors[0]).toMatch(message);
}

async function keyIds(m: string): Promise<string[]> {
  const r = await call('GET', `${m}/keys?list=true`);
  return r.status === 404 ? [] : r.body.data.keys;
}

let ecUuid: string;
let rsaUuid: string;

beforeAll(async () => {
  c = await initCluster();
  ecUuid = await managedKey('pki-ec', EC);
  rsaUuid = await managedKey('pki-rsa', RSA);
});

describe('root/generate/kms', () => {
  let m: string;
  let root: Awaited<ReturnType<typeof ok>>;
  beforeAll(async () => {
    m = await mount(['pki-ec', 'pki-rsa']);
    root = await ok('POST', `${m}/root/generate/kms`, { managed_key_name: 'pki-ec', common_name: 'HSM Root EC', ttl: '8760h', key_name: 'hsm-ec', issuer_name: 'hsm-root' });
  });

  it("EC P-256: the root's public key is the HSM key's, and its self-signature verifies", async () => {
    const d = root.body.data;
    noPrivateKey(root);
    expect(Object.keys(d).sort()).toEqual(['certificate', 'expiration', 'issuer_id', 'issuer_name', 'issuing_ca', 'key_id', 'key_name', 'serial_number']);
    expect(spkiOf(d.certificate)).toBe(b64(await hsmPublicKey(label('pki-ec'))));
    expect(cert(d.certificate).signatureAlgorithm).toMatchObject({ name: 'ECDSA', hash: { name: 'SHA-256' } });
    expect(await signedBy(d.certificate, d.certificate)).toBe(true);
    expect(cert(d.certificate).subject).toBe('CN=HSM Root EC');
  });

  it('the key reads with its real type, its managed key id and name, and no key material', async () => {
    const r = await ok('GET', `${m}/key/hsm-ec`);
    expect(r.body.data).toEqual({
      key_id: root.body.data.key_id,
      key_name: 'hsm-ec',
      key_type: 'ec',
      subject_key_id: expect.stringMatching(/^([0-9a-f]{2}:){19}[0-9a-f]{2}$/),
      managed_key_id: ecUuid,
      managed_key_name: 'pki-ec',
    });
    expect(r.body.warnings).toBeNull();
    noPrivateKey(r);
    // The SKID is that of the HSM key (SHA-1 of the public key bits, as the certificate carries it).
    const skid = cert(root.body.data.certificate).getExtension(x509.SubjectKeyIdentifierExtension)!.keyId;
    expect(r.body.data.subject_key_id.replace(/:/g, '')).toBe(skid);
  });

  it('RSA 2048: sha256WithRSAEncryption, verified with the HSM key', async () => {
    const m2 = await mount(['pki-rsa']);
    const r = await ok('POST', `${m2}/root/generate/kms`, { managed_key_id: rsaUuid, common_name: 'HSM Root RSA' });
    noPrivateKey(r);
    const pem = r.body.data.certificate;
    expect(spkiOf(pem)).toBe(b64(await hsmPublicKey(label('pki-rsa'))));
    expect(cert(pem).signatureAlgorithm).toMatchObject({ name: 'RSASSA-PKCS1-v1_5', hash: { name: 'SHA-256' } });
    expect(await signedBy(pem, pem)).toBe(true);
    expect((await ok('GET', `${m2}/key/${r.body.data.key_id}`)).body.data).toMatchObject({ key_type: 'rsa', managed_key_id: rsaUuid, managed_key_name: 'pki-rsa' });
  });

  it('RSA with use_pss and signature_bits: RSASSA-PSS, encoded as a local key\'s root encodes it', async () => {
    const m2 = await mount(['pki-rsa']);
    const hsm = (await ok('POST', `${m2}/root/generate/kms`, { managed_key_name: 'pki-rsa', common_name: 'PSS', use_pss: true, signature_bits: 384 })).body.data.certificate;
    const local = (await ok('POST', `${m2}/root/generate/internal`, { common_name: 'PSS local', use_pss: true, signature_bits: 384 })).body.data.certificate;
    const alg = (pem: string) => b64(AsnConvert.serialize(AsnConvert.parse(cert(pem).rawData, Certificate).signatureAlgorithm));
    expect(alg(hsm)).toBe(alg(local));
    expect(cert(hsm).signatureAlgorithm).toMatchObject({ name: 'RSA-PSS', hash: { name: 'SHA-384' } });
    expect(await signedBy(hsm, hsm)).toBe(true);
  });

  it('issuers/generate/root/kms and root/rotate/kms make new issuers on the same key', async () => {
    const a = (await ok('POST', `${m}/issuers/generate/root/kms`, { managed_key_name: 'pki-ec', common_name: 'Again', issuer_name: 'again' })).body.data;
    expect(a.key_id).toBe(root.body.data.key_id);
    const rotated = await ok('POST', `${m}/root/rotate/kms`, { managed_key_name: 'pki-ec', common_name: 'Rotated' });
    noPrivateKey(rotated);
    expect(rotated.body.data.issuer_name).toBe('next');
    expect(rotated.body.data.key_id).toBe(root.body.data.key_id);
    expect(await signedBy(rotated.body.data.certificate, rotated.body.data.certificate)).toBe(true);
  });

  describe('an issuer on the HSM key', () => {
    let leaf: Record<string, string>;
    const rootPem = () => root.body.data.certificate;
    beforeAll(async () => {
      await ok('POST', `${m}/roles/web`, { allowed_domains: 'example.com', allow_subdomains: true, issuer_ref: 'hsm-root', key_type: 'ec' });
      leaf = (await ok('POST', `${m}/issue/web`, { common_name: 'www.example.com' })).body.data;
    });

    it('issues leaves (issue/:role) that chain to the root', async () => {
      expect(leaf.issuing_ca).toBe(rootPem());
      expect(await signedBy(leaf.certificate, rootPem())).toBe(true);
      const chain = await new x509.X509ChainBuilder({ certificates: [cert(rootPem())] }).build(cert(leaf.certificate));
      expect(chain.map((x) => x.subject)).toEqual(['CN=www.example.com', 'CN=HSM Root EC']);
      // The leaf's own key is a new local key, returned as usual.
      expect(leaf.private_key).toMatch(/^-----BEGIN EC PRIVATE KEY-----/);
    });

    it('signs CSRs (sign/:role and sign-verbatim)', async () => {
      const keys = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
      const csr = await x509.Pkcs10CertificateRequestGenerator.create({ name: 'CN=api.example.com', keys, signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' } });
      for (const path of [`${m}/sign/web`, `${m}/issuer/hsm-root/sign-verbatim`]) {
        const signed = (await ok('POST', path, { csr: csr.toString('pem'), common_name: 'api.example.com' })).body.data.certificate;
        expect(await signedBy(signed, rootPem())).toBe(true);
      }
    });

    it('signs a revocation into a CRL signed at the HSM', async () => {
      await ok('POST', `${m}/revoke`, { serial_number: leaf.serial_number });
      const crl = new x509.X509Crl(await crlDer(m, 'hsm-root'));
      expect(await crl.verify({ publicKey: cert(rootPem()).publicKey })).toBe(true);
      expect(crl.signatureAlgorithm).toMatchObject({ name: 'ECDSA', hash: { name: 'SHA-256' } });
      expect(crl.entries.map((e) => e.serialNumber.toLowerCase())).toContain(leaf.serial_number.replace(/:/g, ''));
      // crl/rotate and sign-revocation-list sign there too.
      await ok('GET', `${m}/crl/rotate`);
      const listed = (await ok('POST', `${m}/issuer/hsm-root/sign-revocation-list`, { crl_number: 7, revoked_certs: [{ serial_number: '01:02', revocation_time: 1700000000 }] })).body.data.crl;
      expect(await new x509.X509Crl(listed).verify({ publicKey: cert(rootPem()).publicKey })).toBe(true);
    });

    it('answers OCSP with responses signed at the HSM', async () => {
      const revoked = await ocsp(m, rootPem(), leaf.serial_number);
      expect(revoked.certStatus.revoked).toBeDefined();
      const good = (await ok('POST', `${m}/issue/web`, { common_name: 'good.example.com' })).body.data.serial_number;
      expect((await ocsp(m, rootPem(), good)).certStatus.good).toBeDefined();
    });
  });
});

describe('intermediate/generate/kms', () => {
  it('a CSR signed by the HSM key, signed by another root, set-signed, issuing', async () => {
    const parent = await mount([]);
    await ok('POST', `${parent}/root/generate/internal`, { common_name: 'Parent Root', key_type: 'ec', ttl: '8760h' });
    const m = await mount(['pki-rsa']);
    const r = await ok('POST', `${m}/intermediate/generate/kms`, { managed_key_name: 'pki-rsa', common_name: 'HSM Intermediate', key_name: 'int-key' });
    noPrivateKey(r);
    expect(Object.keys(r.body.data).sort()).toEqual(['csr', 'key_id']);
    const csr = new x509.Pkcs10CertificateRequest(r.body.data.csr);
    expect(await csr.verify()).toBe(true);
    expect(b64(csr.publicKey.rawData)).toBe(b64(await hsmPublicKey(label('pki-rsa'))));

    const signed = (await ok('POST', `${parent}/root/sign-intermediate`, { csr: r.body.data.csr, ttl: '4380h' })).body.data;
    await ok('POST', `${m}/intermediate/set-signed`, { certificate: signed.certificate });
    const issuer = (await ok('GET', `${m}/issuer/default`)).body.data;
    expect(issuer.key_id).toBe(r.body.data.key_id);

    await ok('POST', `${m}/roles/svc`, { allow_any_name: true });
    const leaf = (await ok('POST', `${m}/issue/svc`, { common_name: 'svc.internal' })).body.data;
    expect(await signedBy(leaf.certificate, signed.certificate)).toBe(true);
    expect(await signedBy(signed.certificate, signed.issuing_ca)).toBe(true);
    expect(cert(leaf.certificate).signatureAlgorithm).toMatchObject({ name: 'RSASSA-PKCS1-v1_5', hash: { name: 'SHA-256' } });

    // The HSM intermediate signs a sub-intermediate too.
    const sub = await ok('POST', `${parent}/intermediate/generate/internal`, { common_name: 'Sub', key_type: 'ec' });
    const subCert = (await ok('POST', `${m}/root/sign-intermediate`, { csr: sub.body.data.csr })).body.data.certificate;
    expect(await signedBy(subCert, signed.certificate)).toBe(true);
  });
});

describe('keys/generate/kms', () => {
  it('records the managed key; existing roots and CSRs then sign with it', async () => {
    const m = await mount(['pki-ec']);
    const r = await ok('POST', `${m}/keys/generate/kms`, { managed_key_name: 'pki-ec', key_name: 'bare' });
    expect(r.body.data).toEqual({ key_id: expect.stringMatching(/^[0-9a-f-]{36}$/), key_name: 'bare', key_type: 'ec' });
    noPrivateKey(r);
    expect((await ok('GET', `${m}/key/bare`)).body.data).toMatchObject({ key_type: 'ec', managed_key_id: ecUuid, managed_key_name: 'pki-ec' });
    // The same managed key again is the same PKI key.
    expect((await ok('POST', `${m}/keys/generate/kms`, { managed_key_id: ecUuid })).body.data.key_id).toBe(r.body.data.key_id);

    const root = (await ok('POST', `${m}/root/generate/existing`, { key_ref: 'bare', common_name: 'Existing HSM' })).body.data;
    expect(root.key_id).toBe(r.body.data.key_id);
    expect(spkiOf(root.certificate)).toBe(b64(await hsmPublicKey(label('pki-ec'))));
    expect(await signedBy(root.certificate, root.certificate)).toBe(true);
    const csr = (await ok('POST', `${m}/intermediate/cross-sign`, { key_ref: 'bare', common_name: 'Cross' })).body.data.csr;
    expect(await new x509.Pkcs10CertificateRequest(csr).verify()).toBe(true);
  });
});

describe('refusals', () => {
  let m: string;
  beforeAll(async () => {
    m = await mount(['pki-ec', 'no-sign', 'absent', 'gone']);
    await managedKey('no-sign', { ...EC, usages: 'verify' }, label('pki-ec'));
    await managedKey('absent', { ...EC, allow_generate_key: false });
    await managedKey('not-allowed', EC, label('pki-ec'));
  });

  it('refuses bad arguments, unknown or unusable keys, and writes no key', async () => {
    const before = await keyIds(m);
    for (const path of ['root/generate/kms', 'intermediate/generate/kms', 'keys/generate/kms']) {
      const p = `${m}/${path}`;
      const cn = { common_name: 'x' };
      await expectRefused(p, cn, 'missing argument managed_key_name or managed_key_id');
      await expectRefused(p, { ...cn, managed_key_name: 'pki-ec', managed_key_id: ecUuid }, 'only one argument of managed_key_name or managed_key_id should be specified');
      const typed = 'invalid parameter for the kms/existing path parameter, key_type nor key_bits arguments can be set in this mode';
      await expectRefused(p, { ...cn, managed_key_name: 'pki-ec', key_type: 'ec' }, typed);
      await expectRefused(p, { ...cn, managed_key_name: 'pki-ec', key_bits: 256 }, typed);
      await expectRefused(p, { ...cn, managed_key_name: 'nope' }, 'no managed key found with name "nope"');
      await expectRefused(p, { ...cn, managed_key_id: '00000000-0000-0000-0000-000000000000' }, 'no managed key found with uuid "00000000-0000-0000-0000-000000000000"');
      await expectRefused(p, { ...cn, managed_key_name: 'not-allowed' }, /^managed key "not-allowed" is not allowed on this mount/);
      await expectRefused(p, { ...cn, managed_key_name: 'no-sign' }, 'managed key "no-sign" may not be used to sign: its usages are verify');
      await expectRefused(p, { ...cn, managed_key_name: 'absent' }, 'managed key "absent": no key was found in the pkcs11 backend, and allow_generate_key is false');
    }
    expect(await keyIds(m)).toEqual(before);
    // Nothing was generated for "absent" either.
    await expectRefused(`${m}/keys/generate/kms`, { managed_key_name: 'absent' }, /allow_generate_key is false/);
  });

  it('a key no longer allowed on the mount, or deleted, stops signing with a clear 400', async () => {
    await managedKey('gone', RSA);
    await ok('POST', `${m}/root/generate/kms`, { managed_key_name: 'gone', common_name: 'Gone Root', issuer_name: 'gone-root' });
    await ok('POST', `${m}/roles/r`, { allow_any_name: true, issuer_ref: 'gone-root', key_type: 'ec', ttl: '1h' });
    const serial = (await ok('POST', `${m}/issue/r`, { common_name: 'a' })).body.data.serial_number;
    const crlBefore = await crlDer(m, 'gone-root');

    const allow = (keys: string[]) => ok('POST', `sys/mounts/${m}/tune`, { allowed_managed_keys: keys });
    await allow(['pki-ec']);
    await expectRefused(`${m}/issue/r`, { common_name: 'b' }, /^unable to sign with the managed key of PKI key [0-9a-f-]{36}: managed key "gone" is not allowed on this mount/);
    const read = await ok('GET', `${m}/issuer/gone-root`);
    const key = await ok('GET', `${m}/key/${read.body.data.key_id}`);
    expect(key.body.data.managed_key_name).toBe('');
    expect(key.body.warnings).toEqual([expect.stringMatching(/cannot be found or is not allowed on this mount/)]);
    // A revocation's CRL cannot be signed: crl/rotate says so (Vault's CRL building error), and
    // the CRL read keeps serving the last one signed.
    await ok('POST', `${m}/revoke`, { serial_number: serial });
    const rotate = await call('GET', `${m}/crl/rotate`);
    expect(rotate.status).toBe(400);
    expect(rotate.body.errors[0]).toMatch(/^Error during CRL building: unable to sign with the managed key of PKI key .*"gone" is not allowed on this mount/);
    expect(b64(await crlDer(m, 'gone-root'))).toBe(b64(crlBefore));

    // Allowed again: it signs again, and the pending CRL is built.
    await allow(['pki-ec', 'gone']);
    await ok('POST', `${m}/issue/r`, { common_name: 'c' });
    const crl = new x509.X509Crl(await crlDer(m, 'gone-root'));
    expect(crl.entries.map((e) => e.serialNumber.toLowerCase())).toContain(serial.replace(/:/g, ''));

    await allow(['pki-ec']);
    await ok('DELETE', 'sys/managed-keys/pkcs11/gone');
    await expectRefused(`${m}/issue/r`, { common_name: 'd' }, /^unable to sign with the managed key of PKI key [0-9a-f-]{36}: no managed key found with uuid "[0-9a-f-]{36}"$/);
  });

  it('exported never applies to a managed key: no response carries key material', async () => {
    // The key type comes from the HSM key; existing and kms answers never return a private key.
    const r = await ok('POST', `${m}/keys/generate/kms`, { managed_key_name: 'pki-ec' });
    noPrivateKey(r);
    const root = await ok('POST', `${m}/root/generate/existing`, { key_ref: r.body.data.key_id, common_name: 'E', format: 'pem_bundle' });
    noPrivateKey(root);
    expect(root.body.data.certificate).not.toContain('PRIVATE KEY');
  });
});

// ---- CRL and OCSP ----

async function crlDer(mount: string, issuer: string): Promise<Uint8Array> {
  const res = await SELF.fetch(`http://coffer.test/v1/${mount}/issuer/${issuer}/crl/der`);
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

const pemToDer = (pem: string): Uint8Array => new Uint8Array(x509.PemConverter.decodeFirst(pem));

/** Asks `mount`'s OCSP responder about `serial` under `issuerPem`; checks the response's signature with the issuer's key. */
async function ocsp(mount: string, issuerPem: string, serial: string) {
  const issuer = AsnConvert.parse(pemToDer(issuerPem), Certificate).tbsCertificate;
  const sha1 = async (d: ArrayBuffer) => new OctetString(await crypto.subtle.digest('SHA-1', d));
  const reqCert = new CertID({
    hashAlgorithm: new AlgorithmIdentifier({ algorithm: '1.3.14.3.2.26', parameters: null }),
    issuerNameHash: await sha1(AsnConvert.serialize(issuer.subject)),
    issuerKeyHash: await sha1(issuer.subjectPublicKeyInfo.subjectPublicKey),
    serialNumber: fromHex(serial.replace(/:/g, ''))!.slice().buffer,
  });
  const body = new Uint8Array(AsnConvert.serialize(new OCSPRequest({ tbsRequest: new TBSRequest({ requestList: [new Request({ reqCert })] }) })));
  const res = await SELF.fetch(`http://coffer.test/v1/${mount}/ocsp`, { method: 'POST', headers: { 'Content-Type': 'application/ocsp-request' }, body });
  expect(res.status).toBe(200);
  const answer = AsnConvert.parse(await res.arrayBuffer(), OCSPResponse);
  expect(answer.responseStatus).toBe(OCSPResponseStatus.successful);
  const basic = AsnConvert.parse(answer.responseBytes!.response, BasicOCSPResponse);
  // ECDSA signatures are DER in OCSP; WebCrypto verifies r||s.
  const pub = cert(issuerPem).publicKey;
  const namedCurve = (pub.algorithm as { namedCurve: string }).namedCurve;
  const key = await crypto.subtle.importKey('spki', pub.rawData, { name: 'ECDSA', namedCurve }, false, ['verify']);
  const sig = new x509.AsnEcSignatureFormatter().toWebSignature({ name: 'ECDSA', namedCurve } as Parameters<x509.AsnEcSignatureFormatter['toWebSignature']>[0], basic.signature)!;
  expect(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, sig, basic.tbsResponseDataRaw!)).toBe(true);
  return basic.tbsResponseData.responses[0];
}
