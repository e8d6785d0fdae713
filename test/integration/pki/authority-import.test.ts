// Importing CA material through the Worker (reference §1.5): config/ca, issuers/import/bundle,
// issuers/import/cert and intermediate/set-signed; deduplication of differently encoded keys and
// certificates, key↔issuer linking in either order, default issuer/key rules, warnings, and every
// refusal leaving nothing behind. The imported CAs are made here with @peculiar/x509 and WebCrypto.
import { createPrivateKey } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import * as x509 from '../../../src/crypto/pki/x509';
import { caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { call, ok } = caller(() => c.root);

interface Ca {
  cert: string;
  /** PKCS#8 PEM. */
  key: string;
  /** PKCS#1 (RSA) or SEC1 (EC) PEM. */
  legacyKey: string;
  keys: CryptoKeyPair;
}

const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const RSA = { name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' };

async function keyPair(alg: typeof EC | typeof RSA): Promise<{ keys: CryptoKeyPair; key: string; legacyKey: string }> {
  const keys = (await crypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const pkcs8 = new Uint8Array((await crypto.subtle.exportKey('pkcs8', keys.privateKey)) as ArrayBuffer);
  const ko = createPrivateKey({ key: Buffer.from(pkcs8), format: 'der', type: 'pkcs8' });
  const key = ko.export({ format: 'pem', type: 'pkcs8' }) as string;
  const legacyKey = ko.export({ format: 'pem', type: alg.name === 'ECDSA' ? 'sec1' : 'pkcs1' }) as string;
  return { keys, key, legacyKey };
}

let serial = 0x1000;
/** A CA (or, with ca=false, a leaf) certificate, self-signed or signed by `parent`. */
async function makeCert(subject: string, opts: { ca?: boolean; parent?: Ca; alg?: typeof EC | typeof RSA; crlSign?: boolean } = {}): Promise<Ca> {
  const alg = opts.alg ?? EC;
  const kp = await keyPair(alg);
  const isCa = opts.ca ?? true;
  const usages = x509.KeyUsageFlags.keyCertSign | (opts.crlSign === false ? 0 : x509.KeyUsageFlags.cRLSign);
  const extensions: x509.Extension[] = isCa ? [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(usages, true)] : [];
  const common = { serialNumber: (serial++).toString(16), notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 30 * 86_400_000), extensions };
  const c509 = opts.parent
    ? await x509.X509CertificateGenerator.create({
        ...common,
        subject,
        issuer: new x509.X509Certificate(opts.parent.cert).subject,
        publicKey: kp.keys.publicKey,
        signingKey: opts.parent.keys.privateKey,
        signingAlgorithm: EC,
      })
    : await x509.X509CertificateGenerator.createSelfSigned({ ...common, name: subject, keys: kp.keys, signingAlgorithm: alg });
  return { cert: c509.toString('pem'), ...kp };
}

async function list(m: string, what: 'issuers' | 'keys'): Promise<string[]> {
  const r = await call('GET', `${m}/${what}?list=true`);
  return r.status === 404 ? [] : r.body.data.keys;
}

async function expectRefused(path: string, body: unknown, message: string | RegExp): Promise<void> {
  const m = path.split('/')[0];
  const before = [await list(m, 'issuers'), await list(m, 'keys')];
  const r = await call('POST', path, body);
  expect(r.status, r.text).toBe(400);
  if (typeof message === 'string') expect(r.body.errors).toEqual([message]);
  else expect(r.body.errors[0]).toMatch(message);
  expect([await list(m, 'issuers'), await list(m, 'keys')]).toEqual(before);
}

let n = 0;
async function mount(): Promise<string> {
  const path = `imp${++n}`;
  await ok('POST', `sys/mounts/${path}`, { type: 'pki' });
  return path;
}

const AIA_WARNING = /^This mount hasn't configured any authority information access \(AIA\) fields/;

beforeAll(async () => {
  c = await initCluster();
});

describe('bundle import (config/ca, issuers/import/bundle)', () => {
  let m: string;
  let ca: Ca;
  let first: Awaited<ReturnType<typeof ok>>;
  beforeAll(async () => {
    m = await mount();
    ca = await makeCert('CN=Imported RSA Root', { alg: RSA });
    first = await ok('POST', `${m}/config/ca`, { pem_bundle: `${ca.legacyKey}\n${ca.cert}` });
  });

  it('imports the key and the issuer, linked, and makes them the defaults', async () => {
    const d = first.body.data;
    expect(d.imported_issuers).toHaveLength(1);
    expect(d.imported_keys).toHaveLength(1);
    expect(d.existing_issuers).toBeNull();
    expect(d.existing_keys).toBeNull();
    const [issuer] = d.imported_issuers;
    const [key] = d.imported_keys;
    expect(d.mapping).toEqual({ [issuer]: key });
    const read = (await ok('GET', `${m}/issuer/${issuer}`)).body.data;
    expect(read).toMatchObject({ key_id: key, certificate: ca.cert.trim(), usage: 'read-only,issuing-certificates,crl-signing,ocsp-signing', leaf_not_after_behavior: 'err', revocation_signature_algorithm: '' });
    expect((await ok('GET', `${m}/config/issuers`)).body.data.default).toBe(issuer);
    expect((await ok('GET', `${m}/config/keys`)).body.data.default).toBe(key);
    expect((await ok('GET', `${m}/key/${key}`)).body.data.key_type).toBe('rsa');
    expect(first.body.warnings).toContainEqual(expect.stringMatching(AIA_WARNING));
    // Imported issuers are not "issued" certificates.
    expect((await call('GET', `${m}/certs?list=true`)).status).toBe(404);
  });

  it('the same key and certificate, differently encoded, are recognised as existing', async () => {
    const again = (await ok('POST', `${m}/issuers/import/bundle`, { pem_bundle: `${ca.cert}\n${ca.key}` })).body.data;
    expect(again.imported_issuers).toBeNull();
    expect(again.imported_keys).toBeNull();
    expect(again.existing_issuers).toEqual(first.body.data.imported_issuers);
    expect(again.existing_keys).toEqual(first.body.data.imported_keys);
    expect(again.mapping).toEqual(first.body.data.mapping);
    expect(await list(m, 'issuers')).toHaveLength(1);
    expect(await list(m, 'keys')).toHaveLength(1);
  });

  it('the imported issuer signs: sign-intermediate with it works', async () => {
    const csr = (await ok('POST', `${m}/intermediate/generate/internal`, { common_name: 'child', key_type: 'ec' })).body.data.csr;
    const signed = (await ok('POST', `${m}/root/sign-intermediate`, { csr, common_name: 'child' })).body.data.certificate;
    const child = new x509.X509Certificate(signed);
    expect(await child.verify({ publicKey: new x509.X509Certificate(ca.cert).publicKey, signatureOnly: true })).toBe(true);
  });

  it('skips CRLs, EC parameters and text between blocks; keeps every certificate of a chain', async () => {
    const m2 = await mount();
    const root = await makeCert('CN=Chain Root');
    const int = await makeCert('CN=Chain Int', { parent: root });
    const ecParams = '-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----';
    const crl = '-----BEGIN X509 CRL-----\nMAA=\n-----END X509 CRL-----';
    const bundle = `Certificate:\n    Data: human readable dump\n${int.cert}\nsome text\n${root.cert}\n${ecParams}\n${int.legacyKey}\n${crl}\n`;
    const d = (await ok('POST', `${m2}/issuers/import/bundle`, { pem_bundle: bundle })).body.data;
    expect(d.imported_issuers).toHaveLength(2);
    expect(d.imported_keys).toHaveLength(1);
    const [intId, rootId] = d.imported_issuers;
    expect(d.mapping).toEqual({ [intId]: d.imported_keys[0], [rootId]: '' });
    // The intermediate (with its key) is the default; its chain reaches the root.
    expect((await ok('GET', `${m2}/config/issuers`)).body.data.default).toBe(intId);
    expect((await ok('GET', `${m2}/issuer/${intId}`)).body.data.ca_chain).toEqual([int.cert.trim(), root.cert.trim()]);
  });

  it('several new issuers with keys: the first becomes default, with a warning to check it', async () => {
    const m2 = await mount();
    const a = await makeCert('CN=A');
    const b = await makeCert('CN=B');
    const r = await ok('POST', `${m2}/issuers/import/bundle`, { pem_bundle: [a.cert, a.key, b.cert, b.key].join('\n') });
    const [aId, bId] = r.body.data.imported_issuers;
    expect((await ok('GET', `${m2}/config/issuers`)).body.data.default).toBe(aId);
    expect(r.body.data.mapping[bId]).not.toBe('');
    expect(r.body.warnings).toContain(
      'The imported bundle contained multiple certs matching keys, the default issuer that was selected should be verified and manually changed if incorrect.',
    );
  });

  it('default_follows_latest_issuer: one new issuer with a key becomes default; several: a warning, default kept', async () => {
    const m2 = await mount();
    const a = await makeCert('CN=First');
    const aId = (await ok('POST', `${m2}/issuers/import/bundle`, { pem_bundle: `${a.cert}\n${a.key}` })).body.data.imported_issuers[0];
    await ok('POST', `${m2}/config/issuers`, { default: aId, default_follows_latest_issuer: true });
    const b = await makeCert('CN=Second');
    const bId = (await ok('POST', `${m2}/issuers/import/bundle`, { pem_bundle: `${b.cert}\n${b.key}` })).body.data.imported_issuers[0];
    expect((await ok('GET', `${m2}/config/issuers`)).body.data.default).toBe(bId);
    const x = await makeCert('CN=X');
    const y = await makeCert('CN=Y');
    const r = await ok('POST', `${m2}/issuers/import/bundle`, { pem_bundle: [x.cert, x.key, y.cert, y.key].join('\n') });
    expect(r.body.warnings).toContain('Default issuer left unchanged: could not select new issuer automatically as multiple imported issuers had key material in Vault.');
    expect((await ok('GET', `${m2}/config/issuers`)).body.data.default).toBe(bId);
  });

  it('a certificate without CRLSign is imported without the crl-signing usage', async () => {
    const m2 = await mount();
    const nocrl = await makeCert('CN=No CRL', { crlSign: false });
    const id = (await ok('POST', `${m2}/issuers/import/cert`, { pem_bundle: nocrl.cert })).body.data.imported_issuers[0];
    expect((await ok('GET', `${m2}/issuer/${id}`)).body.data.usage).toBe('read-only,issuing-certificates,ocsp-signing');
  });
});

describe('certificate-only import and late keys', () => {
  it('an issuer without key is not made default; importing its key later links it and makes it default', async () => {
    const m = await mount();
    const ca = await makeCert('CN=Keyless');
    const r = await ok('POST', `${m}/issuers/import/cert`, { pem_bundle: ca.cert });
    const id = r.body.data.imported_issuers[0];
    expect(r.body.data.mapping).toEqual({ [id]: '' });
    expect(r.body.data.imported_keys).toBeNull();
    expect((await ok('GET', `${m}/config/issuers`)).body.data.default).toBe('');

    const k = (await ok('POST', `${m}/keys/import`, { pem_bundle: ca.legacyKey, key_name: 'late' })).body.data;
    expect((await ok('GET', `${m}/issuer/${id}`)).body.data.key_id).toBe(k.key_id);
    expect((await ok('GET', `${m}/config/issuers`)).body.data.default).toBe(id);
  });

  it('warns when the default issuer has no key', async () => {
    const m = await mount();
    const ca = await makeCert('CN=Keyless default');
    const id = (await ok('POST', `${m}/issuers/import/cert`, { pem_bundle: ca.cert })).body.data.imported_issuers[0];
    const set = await ok('POST', `${m}/config/issuers`, { default: id });
    expect(set.body.warnings).toEqual([expect.stringMatching(/^This selected default issuer has no key associated with it/)]);
    const again = await ok('POST', `${m}/issuers/import/cert`, { pem_bundle: ca.cert });
    expect(again.body.data.existing_issuers).toEqual([id]);
    expect(again.body.warnings).toContain(
      'The default issuer has no key associated with it. Some operations like issuing certificates and signing CRLs will be unavailable with the requested default issuer until a key is imported or the default issuer is changed.',
    );
  });
});

describe('refusals (nothing is written)', () => {
  let m: string;
  let ca: Ca;
  beforeAll(async () => {
    m = await mount();
    ca = await makeCert('CN=Refusals');
  });

  it('keys on the cert-only paths', async () => {
    await expectRefused(`${m}/issuers/import/cert`, { pem_bundle: `${ca.cert}\n${ca.key}` }, 'private keys found in the PEM bundle but not allowed by the path; use /issuers/import/bundle');
    await expectRefused(`${m}/intermediate/set-signed`, { certificate: `${ca.cert}\n${ca.key}` }, 'private keys found in the PEM bundle but not allowed by the path; use /issuers/import/bundle');
  });

  it('a non-CA certificate, even after a good key in the same bundle', async () => {
    const leaf = await makeCert('CN=leaf', { ca: false });
    const pem = new x509.X509Certificate(leaf.cert).toString('pem');
    await expectRefused(`${m}/issuers/import/bundle`, { pem_bundle: `${leaf.key}\n${leaf.cert}` }, `Error parsing issuer 0: Refusing to import non-CA certificate\n${pem}\n`);
  });

  it('empty, too short, and PEM-less input', async () => {
    await expectRefused(`${m}/config/ca`, {}, "'pem_bundle' and 'certificate' parameters were empty");
    await expectRefused(`${m}/intermediate/set-signed`, { pem_bundle: ca.cert }, "'pem_bundle' and 'certificate' parameters were empty");
    await expectRefused(`${m}/config/ca`, { pem_bundle: '/etc/ca.pem' }, 'provided data for import was too short; perhaps a path was passed to the API rather than the contents of a PEM file');
    await expectRefused(`${m}/config/ca`, { pem_bundle: 'x'.repeat(100) }, 'provided PEM block contained no data');
    await expectRefused(`${m}/config/ca`, { pem_bundle: `${ca.cert}\ntrailing garbage that is no PEM block` }, 'provided PEM block contained no data');
  });

  it('unparseable keys and certificates', async () => {
    await expectRefused(`${m}/config/ca`, { pem_bundle: `-----BEGIN PUBLIC KEY-----\n${btoa('not a key at all, just bytes')}\n-----END PUBLIC KEY-----\n${ca.cert}` }, /^Error parsing key 0: /);
    await expectRefused(`${m}/issuers/import/cert`, { pem_bundle: `-----BEGIN CERTIFICATE-----\n${btoa('definitely not DER, just some bytes')}\n-----END CERTIFICATE-----` }, /^Error parsing issuer 0: /);
  });
});

describe('intermediate/set-signed', () => {
  it('imports the signed intermediate (linked to the CSR key) and its root; the intermediate becomes default', async () => {
    const rootMount = await mount();
    const intMount = await mount();
    const root = (await ok('POST', `${rootMount}/root/generate/internal`, { common_name: 'Set-signed Root', key_type: 'ec' })).body.data;
    const csr = (await ok('POST', `${intMount}/intermediate/generate/internal`, { common_name: 'Set-signed Int', key_type: 'ec' })).body.data;
    const signed = (await ok('POST', `${rootMount}/root/sign-intermediate`, { csr: csr.csr, common_name: 'Set-signed Int', format: 'pem_bundle' })).body.data;
    const r = await ok('POST', `${intMount}/intermediate/set-signed`, { certificate: signed.certificate });
    const [intId, rootId] = r.body.data.imported_issuers;
    expect(r.body.data.mapping).toEqual({ [intId]: csr.key_id, [rootId]: '' });
    expect(r.body.data.imported_keys).toBeNull();
    expect((await ok('GET', `${intMount}/config/issuers`)).body.data.default).toBe(intId);
    const read = (await ok('GET', `${intMount}/issuer/default`)).body.data;
    expect(read.ca_chain).toEqual([signed.ca_chain[0], root.certificate]);
    // It issues: a CSR signed by the new intermediate chains to the root.
    const grand = (await ok('POST', `${intMount}/intermediate/generate/internal`, { common_name: 'grandchild', key_type: 'ec' })).body.data.csr;
    const g = (await ok('POST', `${intMount}/root/sign-intermediate`, { csr: grand })).body.data;
    expect(g.ca_chain.slice(1)).toEqual([signed.ca_chain[0], root.certificate]);
  });
});
