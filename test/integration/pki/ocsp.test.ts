// The OCSP responder through the Worker (reference §1.11): GET with the base64 request in the
// path and POST with the DER body, unauthenticated; good / revoked / unknown answers signed by the
// issuer (checked with its public key), unknown issuers answered by the default issuer, and the
// failure statuses: malformedRequest 400, unauthorized 401 (OCSP disabled, no ocsp-signing usage).
import { Buffer } from 'node:buffer';
import { SELF } from 'cloudflare:test';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, Certificate } from '@peculiar/asn1-x509';
import { BasicOCSPResponse, CertID, OCSPRequest, OCSPResponse, OCSPResponseStatus, Request, TBSRequest } from '@peculiar/asn1-ocsp';
import { beforeAll, describe, expect, it } from 'vitest';
import { fromHex } from '../../../src/crypto/encoding';
import * as x509 from '../../../src/crypto/pki/x509';
import { api, caller, initCluster, type Cluster } from '../../helpers/api';
import { MERGE_PATCH } from '../../helpers/kv2';

let c: Cluster;
const { ok } = caller(() => c.root);

let rootPem: string;

const SHA1 = '1.3.14.3.2.26';
const SHA256 = '2.16.840.1.101.3.4.2.1';
const pemToDer = (pem: string): Uint8Array => new Uint8Array(x509.PemConverter.decodeFirst(pem));
const sha = async (name: string, data: ArrayBuffer | Uint8Array) => new Uint8Array(await crypto.subtle.digest(name, data));

/** An OCSP request as a client builds it, for `serial` under the issuer certificate `issuerPem`. */
async function ocspRequest(issuerPem: string, serial: string, hashOid = SHA1): Promise<Uint8Array> {
  const issuer = AsnConvert.parse(pemToDer(issuerPem), Certificate).tbsCertificate;
  const hash = hashOid === SHA1 ? 'SHA-1' : 'SHA-256';
  const reqCert = new CertID({
    hashAlgorithm: new AlgorithmIdentifier({ algorithm: hashOid, parameters: null }),
    issuerNameHash: new OctetString(await sha(hash, AsnConvert.serialize(issuer.subject))),
    issuerKeyHash: new OctetString(await sha(hash, issuer.subjectPublicKeyInfo.subjectPublicKey)),
    serialNumber: fromHex(serial.replace(/:/g, ''))!.slice().buffer,
  });
  return new Uint8Array(AsnConvert.serialize(new OCSPRequest({ tbsRequest: new TBSRequest({ requestList: [new Request({ reqCert })] }) })));
}

interface Answer {
  status: number;
  contentType: string | null;
  response: OCSPResponse;
}

async function viaPost(mount: string, body: Uint8Array, contentType = 'application/ocsp-request'): Promise<Answer> {
  const res = await SELF.fetch(`http://coffer.test/v1/${mount}/ocsp`, { method: 'POST', headers: { 'Content-Type': contentType }, body });
  return { status: res.status, contentType: res.headers.get('content-type'), response: AsnConvert.parse(await res.arrayBuffer(), OCSPResponse) };
}

async function viaGet(mount: string, b64: string): Promise<Answer> {
  const res = await SELF.fetch(`http://coffer.test/v1/${mount}/ocsp/${b64}`);
  return { status: res.status, contentType: res.headers.get('content-type'), response: AsnConvert.parse(await res.arrayBuffer(), OCSPResponse) };
}

const b64 = (der: Uint8Array): string => btoa(String.fromCharCode(...der));
/** Base64 as some clients put it in a GET path: '+', '/' and '=' unescaped, "//" runs included. */
const rawPath = b64;

/** The single response of a successful answer, after checking its signature with `signerPem`'s key. */
async function single(a: Answer, signerPem: string) {
  expect(a.status).toBe(200);
  expect(a.contentType).toBe('application/ocsp-response');
  expect(a.response.responseStatus).toBe(OCSPResponseStatus.successful);
  const basic = AsnConvert.parse(a.response.responseBytes!.response, BasicOCSPResponse);
  const signer = new x509.X509Certificate(signerPem);
  const namedCurve = (signer.publicKey.algorithm as { namedCurve: string }).namedCurve;
  const key = await crypto.subtle.importKey('spki', signer.publicKey.rawData, { name: 'ECDSA', namedCurve }, false, ['verify']);
  // ECDSA signatures are DER in OCSP; WebCrypto wants r||s.
  const sig = new x509.AsnEcSignatureFormatter().toWebSignature({ name: 'ECDSA', namedCurve } as Parameters<x509.AsnEcSignatureFormatter['toWebSignature']>[0], basic.signature)!;
  expect(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, sig, basic.tbsResponseDataRaw!)).toBe(true);
  expect(basic.certs ?? []).toEqual([]);
  return basic.tbsResponseData.responses[0];
}

async function issue(mount = 'pki'): Promise<string> {
  return (await ok('POST', `${mount}/issue/leaf`, { common_name: 'ocsp.example.com' })).body.data.serial_number;
}

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/pki', { type: 'pki', config: { max_lease_ttl: '768h' } });
  rootPem = (await ok('POST', 'pki/root/generate/internal', { common_name: 'OCSP Root', ttl: '720h', key_type: 'ec' })).body.data.certificate;
  await ok('POST', 'pki/roles/leaf', { allow_any_name: true, ttl: '1h', key_type: 'ec' });
});

describe('answers', () => {
  it('good for an issued certificate, over POST and GET, with NextUpdate from ocsp_expiry', async () => {
    const serial = await issue();
    const der = await ocspRequest(rootPem, serial);
    for (const a of [await viaPost('pki', der), await viaGet('pki', rawPath(der))]) {
      const s = await single(a, rootPem);
      expect(s.certStatus.good).toBeDefined();
      expect(s.certStatus.revoked).toBeUndefined();
      expect(Buffer.from(s.certID.serialNumber).toString('hex')).toBe(serial.replace(/:/g, ''));
      expect(s.nextUpdate!.getTime() - s.thisUpdate.getTime()).toBe(12 * 3600_000);
    }
    // SHA-256 CertIDs and a percent-encoded GET work too.
    const der256 = await ocspRequest(rootPem, serial, SHA256);
    expect((await single(await viaPost('pki', der256), rootPem)).certStatus.good).toBeDefined();
    expect((await single(await viaGet('pki', encodeURIComponent(b64(der))), rootPem)).certStatus.good).toBeDefined();
  });

  it('revoked, with the revocation time, once the certificate is revoked', async () => {
    const serial = await issue();
    const revoked = (await ok('POST', 'pki/revoke', { serial_number: serial })).body.data;
    const s = await single(await viaPost('pki', await ocspRequest(rootPem, serial)), rootPem);
    expect(s.certStatus.revoked).toBeDefined();
    expect(Math.floor(s.certStatus.revoked!.revocationTime.getTime() / 1000)).toBe(revoked.revocation_time);
  });

  it('over GET when the base64 holds "//", raw or percent-encoded (RFC 6960 A.1), where Vault redirects', async () => {
    // Six 0xff bytes in the serial give "////" in the base64 whatever their alignment.
    const der = await ocspRequest(rootPem, '7f:ff:ff:ff:ff:ff:ff:ff');
    expect(b64(der)).toContain('//');
    for (const path of [rawPath(der), encodeURIComponent(b64(der)), b64(der).replace(/\//g, '%2F').replace('%2F', '/')]) {
      expect((await single(await viaGet('pki', path), rootPem)).certStatus.unknown).toBeDefined();
    }
    // unified-ocsp's tail is opaque too: it reaches the responder (always unauthorized here).
    const unified = await SELF.fetch(`http://coffer.test/v1/pki/unified-ocsp/${rawPath(der)}`);
    expect(unified.status).toBe(401);
    expect(AsnConvert.parse(await unified.arrayBuffer(), OCSPResponse).responseStatus).toBe(OCSPResponseStatus.unauthorized);
  });

  it('unknown for a serial the issuer never issued, and for a foreign issuer (signed by the default)', async () => {
    const s = await single(await viaPost('pki', await ocspRequest(rootPem, '01:02:03:04')), rootPem);
    expect(s.certStatus.unknown).toBeDefined();
    await ok('POST', 'sys/mounts/foreign', { type: 'pki', config: { max_lease_ttl: '768h' } });
    const foreignPem = (await ok('POST', 'foreign/root/generate/internal', { common_name: 'Foreign', ttl: '720h', key_type: 'ec' })).body.data.certificate;
    await ok('POST', 'foreign/roles/leaf', { allow_any_name: true, ttl: '1h', key_type: 'ec' });
    const serial = await issue('foreign');
    const u = await single(await viaPost('pki', await ocspRequest(foreignPem, serial)), rootPem);
    expect(u.certStatus.unknown).toBeDefined();
  });
});

describe('failures', () => {
  const failureOf = (a: Answer) => [a.status, a.contentType, a.response.responseStatus, a.response.responseBytes];

  it('malformedRequest (400) for garbage, an empty or oversized request, or bad base64', async () => {
    const bad = OCSPResponseStatus.malformedRequest;
    expect(failureOf(await viaPost('pki', new Uint8Array([1, 2, 3])))).toEqual([400, 'application/ocsp-response', bad, undefined]);
    expect(failureOf(await viaPost('pki', new Uint8Array(0)))).toEqual([400, 'application/ocsp-response', bad, undefined]);
    expect(failureOf(await viaPost('pki', new Uint8Array(3000)))).toEqual([400, 'application/ocsp-response', bad, undefined]);
    expect(failureOf(await viaGet('pki', 'not*base64'))).toEqual([400, 'application/ocsp-response', bad, undefined]);
    expect(failureOf(await viaGet('pki', 'A'.repeat(2100)))).toEqual([400, 'application/ocsp-response', bad, undefined]);
    // A JSON body is not an OCSP request.
    expect(failureOf(await viaPost('pki', new TextEncoder().encode('{}'), 'application/json'))[0]).toBe(400);
  });

  it('unauthorized (401) when OCSP is disabled, and good again when re-enabled', async () => {
    const serial = await issue();
    const der = await ocspRequest(rootPem, serial);
    await ok('POST', 'pki/config/crl', { ocsp_disable: true });
    expect(failureOf(await viaPost('pki', der))).toEqual([401, 'application/ocsp-response', OCSPResponseStatus.unauthorized, undefined]);
    expect((await viaGet('pki', rawPath(der))).status).toBe(401);
    await ok('POST', 'pki/config/crl', { ocsp_disable: false });
    expect((await single(await viaPost('pki', der), rootPem)).certStatus.good).toBeDefined();
  });

  it('unauthorized (401) when the matching issuer lacks ocsp-signing usage', async () => {
    await ok('POST', 'sys/mounts/nosign', { type: 'pki', config: { max_lease_ttl: '768h' } });
    const pem = (await ok('POST', 'nosign/root/generate/internal', { common_name: 'No OCSP', ttl: '720h', key_type: 'ec' })).body.data.certificate;
    await ok('POST', 'nosign/roles/leaf', { allow_any_name: true, ttl: '1h', key_type: 'ec' });
    const serial = await issue('nosign');
    const patched = await api('PATCH', 'nosign/issuer/default', { token: c.root, body: { usage: 'read-only,issuing-certificates,crl-signing' }, headers: MERGE_PATCH });
    expect(patched.status).toBe(200);
    const a = await viaPost('nosign', await ocspRequest(pem, serial));
    expect(failureOf(a)).toEqual([401, 'application/ocsp-response', OCSPResponseStatus.unauthorized, undefined]);
  });

  it('unauthorized (401) for an unknown issuer when the mount has no default issuer', async () => {
    await ok('POST', 'sys/mounts/bare', { type: 'pki' });
    const a = await viaPost('bare', await ocspRequest(rootPem, '05:06'));
    expect(a.status).toBe(401);
  });
});
