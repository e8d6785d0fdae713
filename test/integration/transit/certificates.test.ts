// Transit keys/:name/csr and set-certificate through the Worker: CSRs signed by each asymmetric
// key type (self-signature and public key checked with @peculiar/x509), a template's subject and
// extensions kept, a CA-issued chain stored and shown by read and export, and every refusal.
// @peculiar/x509's dependency injection (tsyringe) needs the Reflect metadata API first.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { beforeAll, describe, expect, it } from 'vitest';
import { caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { call, ok } = caller(() => c.root);
const SIGNERS = ['ecdsa-p256', 'ecdsa-p384', 'rsa-2048', 'ed25519'] as const;

/** SPKI DER of a key version's public key as key read shows it (PEM, or raw base64 for ed25519). */
async function publicKeyOf(name: string, version = 1): Promise<Uint8Array> {
  const k = (await ok('GET', `transit/keys/${name}`)).body.data.keys[String(version)];
  if (k.name === 'ed25519') {
    const raw = Uint8Array.from(atob(k.public_key), (ch) => ch.charCodeAt(0));
    const key = await crypto.subtle.importKey('raw', raw, { name: 'Ed25519' }, true, ['verify']);
    return new Uint8Array((await crypto.subtle.exportKey('spki', key)) as ArrayBuffer);
  }
  return new Uint8Array(new x509.PublicKey(k.public_key).rawData);
}

/** A certificate for `spki` issued by a throwaway CA: [leaf, ca] PEMs. */
async function issue(spki: Uint8Array, subject: string): Promise<string[]> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const ca = (await crypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const caCert = await x509.X509CertificateGenerator.createSelfSigned({ serialNumber: '01', name: 'CN=Test CA', keys: ca, signingAlgorithm: alg, notBefore: new Date(Date.now() - 60_000), notAfter: new Date(Date.now() + 86_400_000) });
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: '02',
    subject,
    issuer: caCert.subject,
    publicKey: new x509.PublicKey(spki),
    signingKey: ca.privateKey,
    signingAlgorithm: alg,
    notBefore: new Date(Date.now() - 60_000),
    notAfter: new Date(Date.now() + 86_400_000),
  });
  return [leaf.toString('pem'), caCert.toString('pem')];
}

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/transit', { type: 'transit' });
  for (const type of SIGNERS) await ok('POST', `transit/keys/c-${type}`, { type, exportable: true });
  await ok('POST', 'transit/keys/aes');
});

describe('csr', () => {
  it.each(SIGNERS)('%s: a CSR signed by the key version, for its public key', async (type) => {
    const r = await ok('POST', `transit/keys/c-${type}/csr`);
    expect(r.body.data).toEqual({ name: `c-${type}`, version: 1, csr: expect.stringMatching(/^-----BEGIN CERTIFICATE REQUEST-----/) });
    const csr = new x509.Pkcs10CertificateRequest(r.body.data.csr);
    expect(await csr.verify()).toBe(true);
    expect(new Uint8Array(csr.publicKey.rawData)).toEqual(await publicKeyOf(`c-${type}`));
  });

  it('keeps a template\'s subject and extensions, and signs with the version asked for', async () => {
    const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
    const other = (await crypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
    const template = await x509.Pkcs10CertificateRequestGenerator.create({
      name: 'CN=app.example.com, O=Example',
      keys: other,
      signingAlgorithm: alg,
      extensions: [new x509.SubjectAlternativeNameExtension([{ type: 'dns', value: 'app.example.com' }])],
    });
    await ok('POST', 'transit/keys/c-ecdsa-p256/rotate');
    const r = await ok('POST', 'transit/keys/c-ecdsa-p256/csr', { version: 1, csr: template.toString('pem') });
    expect(r.body.data.version).toBe(1);
    const csr = new x509.Pkcs10CertificateRequest(r.body.data.csr);
    expect(csr.subject).toBe('CN=app.example.com, O=Example');
    const san = csr.extensions.find((e) => e.type === '2.5.29.17');
    expect(new x509.SubjectAlternativeNameExtension(san!.rawData).names.toJSON()).toEqual([{ type: 'dns', value: 'app.example.com' }]);
    expect(await csr.verify()).toBe(true);
    expect(new Uint8Array(csr.publicKey.rawData)).toEqual(await publicKeyOf('c-ecdsa-p256', 1));
    const latest = new x509.Pkcs10CertificateRequest((await ok('POST', 'transit/keys/c-ecdsa-p256/csr')).body.data.csr);
    expect(new Uint8Array(latest.publicKey.rawData)).toEqual(await publicKeyOf('c-ecdsa-p256', 2));
  });

  it.each([
    ['transit/keys/aes/csr', {}, 'key type aes256-gcm96 does not support certificates: an asymmetric key is needed'],
    ['transit/keys/ghost/csr', {}, 'no existing key named ghost could be found'],
    ['transit/keys/c-rsa-2048/csr', { version: 7 }, 'could not find version 7 of key c-rsa-2048'],
    ['transit/keys/c-rsa-2048/csr', { csr: 'not a csr' }, 'could not parse the provided CSR template'],
  ])('%s %j is refused', async (path, body, message) => {
    const r = await call('POST', path, body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
  });
});

describe('set-certificate', () => {
  it('keeps a chain whose leaf is the key version\'s, shown by read and export', async () => {
    const chain = await issue(await publicKeyOf('c-rsa-2048'), 'CN=signer');
    expect((await call('POST', 'transit/keys/c-rsa-2048/set-certificate', { certificate_chain: chain.join('') })).status).toBe(204);
    const shown = (await ok('GET', 'transit/keys/c-rsa-2048')).body.data.keys['1'].certificate_chain as string;
    expect(shown).toContain('-----BEGIN CERTIFICATE-----');
    const exported = (await ok('GET', 'transit/export/certificate-chain/c-rsa-2048/1')).body.data.keys['1'] as string;
    const certs = exported.match(/-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g)!;
    expect(certs.map((p) => new x509.X509Certificate(p).subject)).toEqual(['CN=signer', 'CN=Test CA']);
  });

  it('refuses a leaf for another key, and text that is no certificate, storing nothing', async () => {
    const wrong = await issue(await publicKeyOf('c-ecdsa-p384'), 'CN=other');
    const r = await call('POST', 'transit/keys/c-ed25519/set-certificate', { certificate_chain: wrong.join('') });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(["the leaf certificate's public key does not match version 1 of key c-ed25519"]);
    const junk = await call('POST', 'transit/keys/c-ed25519/set-certificate', { certificate_chain: 'hello' });
    expect(junk.body.errors).toEqual(['certificate_chain holds no PEM certificate']);
    expect((await ok('GET', 'transit/keys/c-ed25519')).body.data.keys['1'].certificate_chain).toBe('');
    expect((await call('POST', 'transit/keys/aes/set-certificate', { certificate_chain: wrong.join('') })).status).toBe(400);
  });
});
