// OCSP: requests built as clients build them, answered good/revoked/unknown, responses parsed back
// with @peculiar/asn1-ocsp and their signatures checked against the issuer key.
import { beforeAll, describe, expect, it } from 'vitest';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, Extension, SubjectPublicKeyInfo } from '@peculiar/asn1-x509';
import {
  BasicOCSPResponse,
  CertID,
  OCSPRequest,
  OCSPResponse,
  OCSPResponseStatus,
  Request,
  TBSRequest,
  id_pkix_ocsp_basic,
  id_pkix_ocsp_nonce,
} from '@peculiar/asn1-ocsp';
import {
  OCSP_HASH_OIDS,
  OcspError,
  buildOcspResponse,
  certIdMatches,
  ocspErrorResponse,
  parseOcspRequest,
  responderKeyHash,
  type OcspCertId,
} from '../../../../src/crypto/pki/ocsp';
import { generateKey, signerFor, verifySignature, type PkiKey } from '../../../../src/crypto/pki/keys';
import { serialBytes } from '../../../../src/crypto/pki/serial';
import * as x509 from '../../../../src/crypto/pki/x509';

interface Issuer {
  key: PkiKey;
  subjectDer: Uint8Array;
}

async function issuer(type: 'rsa' | 'ec', cn: string): Promise<Issuer> {
  const key = await generateKey(type, 0);
  return { key, subjectDer: new Uint8Array(new x509.Name(`CN=${cn}, O=Coffer`).toArrayBuffer()) };
}

const sha = async (name: string, data: Uint8Array) => new Uint8Array(await crypto.subtle.digest(name, data));
const keyBits = (spki: Uint8Array) => new Uint8Array(AsnConvert.parse(spki, SubjectPublicKeyInfo).subjectPublicKey);
const HASH_NAMES: Record<string, string> = {
  [OCSP_HASH_OIDS.sha1]: 'SHA-1',
  [OCSP_HASH_OIDS.sha256]: 'SHA-256',
  [OCSP_HASH_OIDS.sha384]: 'SHA-384',
  [OCSP_HASH_OIDS.sha512]: 'SHA-512',
};

/** A CertID as a client computes it; SHA-1 ones carry NULL parameters like OpenSSL's, others none. */
async function certId(iss: Issuer, serial: string, hashOid: string): Promise<CertID> {
  const h = HASH_NAMES[hashOid];
  return new CertID({
    hashAlgorithm: new AlgorithmIdentifier({ algorithm: hashOid, parameters: hashOid === OCSP_HASH_OIDS.sha1 ? null : undefined }),
    issuerNameHash: new OctetString(await sha(h, iss.subjectDer)),
    issuerKeyHash: new OctetString(await sha(h, keyBits(iss.key.spki))),
    serialNumber: serialBytes(serial).slice().buffer,
  });
}

function request(ids: CertID[], nonce = false): Uint8Array {
  const tbsRequest = new TBSRequest({ requestList: ids.map((reqCert) => new Request({ reqCert })) });
  if (nonce) {
    const value = AsnConvert.serialize(new OctetString(crypto.getRandomValues(new Uint8Array(16))));
    tbsRequest.requestExtensions = [new Extension({ extnID: id_pkix_ocsp_nonce, critical: false, extnValue: new OctetString(value) })];
  }
  return new Uint8Array(AsnConvert.serialize(new OCSPRequest({ tbsRequest })));
}

function parseResponse(der: Uint8Array) {
  const resp = AsnConvert.parse(der, OCSPResponse);
  expect(resp.responseStatus).toBe(OCSPResponseStatus.successful);
  expect(resp.responseBytes?.responseType).toBe(id_pkix_ocsp_basic);
  const basic = AsnConvert.parse(resp.responseBytes!.response, BasicOCSPResponse);
  return { basic, single: basic.tbsResponseData.responses[0], tbs: new Uint8Array(basic.tbsResponseDataRaw!) };
}

let rsa: Issuer;
let ec: Issuer;
beforeAll(async () => {
  [rsa, ec] = await Promise.all([issuer('rsa', 'RSA CA'), issuer('ec', 'EC CA')]);
});

describe('parseOcspRequest and certIdMatches', () => {
  it('reads a SHA-1 request with a nonce (first cert ID only) and matches it to its issuer', async () => {
    const first = await certId(rsa, '3a:bc:01', OCSP_HASH_OIDS.sha1);
    const der = request([first, await certId(ec, '99', OCSP_HASH_OIDS.sha1)], true);
    const id = parseOcspRequest(der);
    expect(id.hashAlgorithm).toBe(OCSP_HASH_OIDS.sha1);
    expect(id.serial).toBe('3a:bc:01');
    expect(id.issuerNameHash).toEqual(new Uint8Array(first.issuerNameHash.buffer));
    expect(id.der).toEqual(new Uint8Array(AsnConvert.serialize(first)));
    expect(await certIdMatches(id, rsa.subjectDer, rsa.key.spki)).toBe(true);
    expect(await certIdMatches(id, ec.subjectDer, ec.key.spki)).toBe(false);
    // Right name, wrong key and the reverse.
    expect(await certIdMatches(id, rsa.subjectDer, ec.key.spki)).toBe(false);
    expect(await certIdMatches(id, ec.subjectDer, rsa.key.spki)).toBe(false);
  });

  it.each([
    ['SHA-256', OCSP_HASH_OIDS.sha256],
    ['SHA-384', OCSP_HASH_OIDS.sha384],
    ['SHA-512', OCSP_HASH_OIDS.sha512],
  ])('matches %s cert IDs built by hand', async (_name, oid) => {
    const id = parseOcspRequest(request([await certId(ec, '80:00:01', oid)]));
    expect(id.hashAlgorithm).toBe(oid);
    expect(id.serial).toBe('80:00:01');
    expect(await certIdMatches(id, ec.subjectDer, ec.key.spki)).toBe(true);
    expect(await certIdMatches(id, rsa.subjectDer, rsa.key.spki)).toBe(false);
  });

  it('keeps a positive serial whose top bit is set in its colon form', async () => {
    const reqCert = await certId(rsa, '01', OCSP_HASH_OIDS.sha1);
    reqCert.serialNumber = new Uint8Array([0x00, 0xff, 0x10]).buffer; // DER of 0xff10
    expect(parseOcspRequest(request([reqCert])).serial).toBe('ff:10');
  });

  it('answers malformedRequest for bytes that are not a usable request', async () => {
    const good = request([await certId(rsa, '01', OCSP_HASH_OIDS.sha1)]);
    const md5 = await certId(rsa, '01', OCSP_HASH_OIDS.sha1);
    md5.hashAlgorithm = new AlgorithmIdentifier({ algorithm: '1.2.840.113549.2.5', parameters: null });
    const trailing = new Uint8Array(good.length + 1);
    trailing.set(good);
    const huge = await certId(rsa, '01', OCSP_HASH_OIDS.sha1);
    const bad: [string, Uint8Array][] = [
      ['empty', new Uint8Array(0)],
      ['junk', new TextEncoder().encode('this is not DER at all')],
      ['truncated', good.subarray(0, good.length - 3)],
      ['trailing data', trailing],
      ['a certificate ID alone', new Uint8Array(AsnConvert.serialize(huge))],
      ['no requests', request([])],
      ['unknown hash', request([md5])],
      ['over 2048 bytes', request(Array.from({ length: 40 }, () => huge))],
    ];
    for (const [why, der] of bad) {
      let err: unknown;
      try {
        parseOcspRequest(der);
      } catch (e) {
        err = e;
      }
      expect(err, why).toBeInstanceOf(OcspError);
      expect((err as OcspError).status, why).toBe('malformedRequest');
    }
    expect(request(Array.from({ length: 40 }, () => huge)).length).toBeGreaterThan(2048);
  });
});

describe('buildOcspResponse', () => {
  const thisUpdate = new Date('2026-03-04T05:06:07.890Z');
  const nextUpdate = new Date('2026-03-04T17:06:07Z');
  const now = new Date('2026-03-04T05:06:59.500Z');

  async function answer(iss: Issuer, status: 'good' | 'revoked' | 'unknown', extra: Partial<Parameters<typeof buildOcspResponse>[0]> = {}) {
    const id: OcspCertId = parseOcspRequest(request([await certId(iss, '0a:0b', OCSP_HASH_OIDS.sha1)], true));
    const der = await buildOcspResponse({
      id,
      status,
      responderKeyHash: await responderKeyHash(iss.key.spki),
      signer: await signerFor(iss.key, 0, false),
      thisUpdate,
      nextUpdate,
      now,
      ...extra,
    });
    return { id, der, ...parseResponse(der) };
  }

  it.each(['rsa', 'ec'] as const)('answers good, signed by the %s issuer (responder by key hash, no certs)', async (t) => {
    const iss = t === 'rsa' ? rsa : ec;
    const { id, basic, single, tbs } = await answer(iss, 'good');
    const data = basic.tbsResponseData;
    expect(data.version).toBe(0);
    expect(new Uint8Array(data.responderID.byKey!.buffer)).toEqual(await sha('SHA-1', keyBits(iss.key.spki)));
    expect(data.responderID.byName).toBeUndefined();
    expect(data.producedAt.toISOString()).toBe('2026-03-04T05:06:00.000Z');
    expect(data.responses).toHaveLength(1);
    expect(data.responseExtensions).toBeUndefined(); // the nonce is not echoed
    expect(new Uint8Array(AsnConvert.serialize(single.certID))).toEqual(id.der);
    expect(single.certStatus.good).toBeNull();
    expect(single.certStatus.revoked).toBeUndefined();
    expect(single.thisUpdate.toISOString()).toBe('2026-03-04T05:06:07.000Z');
    expect(single.nextUpdate?.toISOString()).toBe('2026-03-04T17:06:07.000Z');
    expect(basic.certs).toBeUndefined();
    expect(basic.signatureAlgorithm.algorithm).toBe(t === 'rsa' ? '1.2.840.113549.1.1.11' : '1.2.840.10045.4.3.2');

    const sig = new Uint8Array(basic.signature);
    expect(await verifySignature(iss.key.spki, basic.signatureAlgorithm, tbs, sig)).toBe(true);
    const other = iss === rsa ? await generateKey('rsa', 0) : await generateKey('ec', 0);
    expect(await verifySignature(other.spki, basic.signatureAlgorithm, tbs, sig)).toBe(false);
    const tampered = tbs.slice();
    tampered[tampered.length - 1] ^= 1;
    expect(await verifySignature(iss.key.spki, basic.signatureAlgorithm, tampered, sig)).toBe(false);
  });

  it('answers revoked with the revocation time and no reason code', async () => {
    const { single, basic, tbs } = await answer(ec, 'revoked', { revocationTime: new Date('2026-02-01T10:20:30.456Z') });
    expect(single.certStatus.good).toBeUndefined();
    expect(single.certStatus.revoked?.revocationTime.toISOString()).toBe('2026-02-01T10:20:30.000Z');
    expect(single.certStatus.revoked?.revocationReason).toBeUndefined();
    expect(await verifySignature(ec.key.spki, basic.signatureAlgorithm, tbs, new Uint8Array(basic.signature))).toBe(true);
    await expect(answer(ec, 'revoked')).rejects.toThrow(/revocationTime/);
  });

  it('answers unknown, and leaves nextUpdate out when it is null', async () => {
    const { single, basic, tbs } = await answer(rsa, 'unknown', { nextUpdate: null });
    expect(single.certStatus.unknown).toBeNull();
    expect(single.certStatus.good).toBeUndefined();
    expect(single.nextUpdate).toBeUndefined();
    expect(await verifySignature(rsa.key.spki, basic.signatureAlgorithm, tbs, new Uint8Array(basic.signature))).toBe(true);
  });

  it('echoes a SHA-256 cert ID exactly as requested', async () => {
    const reqCert = await certId(rsa, '01:02:03:04', OCSP_HASH_OIDS.sha256);
    const id = parseOcspRequest(request([reqCert]));
    const der = await buildOcspResponse({
      id,
      status: 'good',
      responderKeyHash: await responderKeyHash(rsa.key.spki),
      signer: await signerFor(rsa.key, 0, false),
      thisUpdate,
      nextUpdate,
    });
    const { single, basic } = parseResponse(der);
    expect(new Uint8Array(AsnConvert.serialize(single.certID))).toEqual(new Uint8Array(AsnConvert.serialize(reqCert)));
    expect(single.certID.hashAlgorithm.parameters).toBeUndefined();
    // producedAt defaults to now (to the minute).
    expect(Math.abs(basic.tbsResponseData.producedAt.getTime() - Date.now())).toBeLessThan(61_000);
  });
});

describe('ocspErrorResponse', () => {
  it.each([
    ['malformedRequest', 1],
    ['internalError', 2],
    ['unauthorized', 6],
  ] as const)('encodes %s as just the response status', (status, code) => {
    const der = ocspErrorResponse(status);
    expect([...der]).toEqual([0x30, 0x03, 0x0a, 0x01, code]);
    const parsed = AsnConvert.parse(der, OCSPResponse);
    expect(parsed.responseStatus).toBe(code);
    expect(parsed.responseBytes).toBeUndefined();
  });
});
