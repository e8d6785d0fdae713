// OCSP (RFC 6960) as Vault answers it: the first CertID of a request is looked at, extensions
// (nonce) are ignored, and the issuer itself signs a BasicOCSPResponse (responder ID by key hash,
// no certificates embedded). Request parsing follows Go's ocsp.ParseRequest: unknown hash
// algorithms, an empty request list or trailing bytes make the request malformed.

import { bytesEqual } from '../encoding';
import * as asn1js from 'asn1js';
import { AsnConvert, AsnParser, OctetString } from '@peculiar/asn1-schema';
import { SubjectPublicKeyInfo } from '@peculiar/asn1-x509';
import {
  BasicOCSPResponse,
  CertID,
  CertStatus,
  KeyHash,
  OCSPRequest,
  OCSPResponse,
  OCSPResponseStatus,
  ResponderID,
  ResponseBytes,
  ResponseData,
  RevokedInfo,
  SingleResponse,
  id_pkix_ocsp_basic,
} from '@peculiar/asn1-ocsp';
import type { Signer } from './keys';
import { serialFromBytes } from './serial';

/** Vault refuses bigger requests (a plain one is under 100 bytes). */
export const OCSP_MAX_REQUEST_BYTES = 2048;

export type OcspFailureStatus = 'malformedRequest' | 'internalError' | 'unauthorized';

export class OcspError extends Error {
  constructor(
    readonly status: OcspFailureStatus,
    message: string = status,
  ) {
    super(message);
  }
}

export interface OcspCertId {
  hashAlgorithm: string /* OID */;
  issuerNameHash: Uint8Array;
  issuerKeyHash: Uint8Array;
  serial: string /* colon */;
  der: Uint8Array /* the CertID, echoed in the response so clients can match it */;
}

/** The hashes a CertID may use (Go's ocsp package supports exactly these). */
const HASHES: Record<string, string> = {
  '1.3.14.3.2.26': 'SHA-1',
  '2.16.840.1.101.3.4.2.1': 'SHA-256',
  '2.16.840.1.101.3.4.2.2': 'SHA-384',
  '2.16.840.1.101.3.4.2.3': 'SHA-512',
};
export const OCSP_HASH_OIDS = { sha1: '1.3.14.3.2.26', sha256: '2.16.840.1.101.3.4.2.1', sha384: '2.16.840.1.101.3.4.2.2', sha512: '2.16.840.1.101.3.4.2.3' } as const;

const malformed = (why: string) => new OcspError('malformedRequest', `malformed OCSP request: ${why}`);

/** The first CertID of a DER OCSPRequest; OcspError('malformedRequest') for anything unusable. */
export function parseOcspRequest(der: Uint8Array): OcspCertId {
  if (der.length === 0) throw malformed('empty');
  if (der.length > OCSP_MAX_REQUEST_BYTES) throw malformed('too large');
  let req: OCSPRequest;
  try {
    // asn1js's default node/depth limits apply: this is untrusted input.
    const parsed = asn1js.fromBER(der);
    if (parsed.offset === -1 || parsed.result.error) throw new Error(parsed.result.error || 'undecodable');
    if (parsed.offset !== der.length) throw new Error('trailing data');
    req = AsnParser.fromASN(parsed.result, OCSPRequest);
  } catch (e) {
    throw malformed(e instanceof Error ? e.message : String(e));
  }
  const first = req.tbsRequest?.requestList?.[0];
  if (!first) throw malformed('no request in the list');
  const id = first.reqCert;
  if (!HASHES[id.hashAlgorithm.algorithm]) throw malformed(`unknown hash algorithm ${id.hashAlgorithm.algorithm}`);
  return {
    hashAlgorithm: id.hashAlgorithm.algorithm,
    issuerNameHash: new Uint8Array(id.issuerNameHash.buffer),
    issuerKeyHash: new Uint8Array(id.issuerKeyHash.buffer),
    serial: serialFromBytes(new Uint8Array(id.serialNumber)),
    der: new Uint8Array(AsnConvert.serialize(id)),
  };
}

async function digest(hashOid: string, data: Uint8Array): Promise<Uint8Array> {
  const name = HASHES[hashOid];
  if (!name) throw new Error(`unsupported OCSP hash algorithm ${hashOid}`);
  return new Uint8Array(await crypto.subtle.digest(name, data));
}

/** The subjectPublicKey BIT STRING contents of an SPKI: what OCSP key hashes cover. */
const publicKeyBits = (spki: Uint8Array): Uint8Array =>
  new Uint8Array(AsnConvert.parse(spki, SubjectPublicKeyInfo).subjectPublicKey);


/** Whether the CertID names this issuer: its subject Name DER and public key, hashed as the request says. */
export async function certIdMatches(id: OcspCertId, issuerSubjectDer: Uint8Array, issuerSpki: Uint8Array): Promise<boolean> {
  if (!HASHES[id.hashAlgorithm]) return false;
  const [nameHash, keyHash] = await Promise.all([
    digest(id.hashAlgorithm, issuerSubjectDer),
    digest(id.hashAlgorithm, publicKeyBits(issuerSpki)),
  ]);
  return bytesEqual(nameHash, id.issuerNameHash) && bytesEqual(keyHash, id.issuerKeyHash);
}

/** SHA-1 of the issuer's public key bits: the ResponderID byKey value. */
export async function responderKeyHash(issuerSpki: Uint8Array): Promise<Uint8Array> {
  return await digest(OCSP_HASH_OIDS.sha1, publicKeyBits(issuerSpki));
}

/** GeneralizedTime carries no fractions here, as Go writes it. */
const wholeSeconds = (d: Date): Date => new Date(Math.floor(d.getTime() / 1000) * 1000);

export interface OcspResponseParams {
  id: OcspCertId;
  status: 'good' | 'revoked' | 'unknown';
  revocationTime?: Date /* required for 'revoked' */;
  responderKeyHash: Uint8Array;
  /**
   * The issuer's signer. Vault never signs OCSP with RSA-PSS: when the issuer's
   * revocation_signature_algorithm is PSS, the caller must pass the PKCS#1 v1.5 signer with the
   * same hash instead (signerForGoName(key, 'SHA256WithRSA') etc.). Ed25519 issuers are refused
   * by Vault before getting here.
   */
  signer: Signer;
  thisUpdate: Date;
  nextUpdate: Date | null /* null: omitted (ocsp_expiry 0) */;
  /** producedAt; defaults to now. */
  now?: Date;
}

function certStatus(p: OcspResponseParams): CertStatus {
  switch (p.status) {
    case 'good':
      return new CertStatus({ good: null });
    case 'unknown':
      return new CertStatus({ unknown: null });
    case 'revoked':
      if (!p.revocationTime) throw new Error('a revoked OCSP status needs revocationTime');
      // Reason "unspecified" is left out, as Go's encoder omits the zero value.
      return new CertStatus({ revoked: new RevokedInfo({ revocationTime: wholeSeconds(p.revocationTime) }) });
  }
}

/** A successful OCSPResponse (DER) with one SingleResponse echoing the request's CertID. */
export async function buildOcspResponse(p: OcspResponseParams): Promise<Uint8Array> {
  const now = p.now ?? new Date();
  const single = new SingleResponse({
    certID: AsnConvert.parse(p.id.der, CertID),
    certStatus: certStatus(p),
    thisUpdate: wholeSeconds(p.thisUpdate),
    nextUpdate: p.nextUpdate ? wholeSeconds(p.nextUpdate) : undefined,
  });
  const tbsResponseData = new ResponseData({
    responderID: new ResponderID({ byKey: new KeyHash(p.responderKeyHash) }),
    producedAt: new Date(Math.floor(now.getTime() / 60_000) * 60_000), // Go truncates to the minute
    responses: [single],
  });
  const signature = await p.signer.sign(new Uint8Array(AsnConvert.serialize(tbsResponseData)));
  const basic = new BasicOCSPResponse({
    tbsResponseData,
    signatureAlgorithm: p.signer.signatureAlgorithm,
    signature: signature.slice().buffer,
  });
  const response = new OCSPResponse({
    responseStatus: OCSPResponseStatus.successful,
    responseBytes: new ResponseBytes({ responseType: id_pkix_ocsp_basic, response: new OctetString(AsnConvert.serialize(basic)) }),
  });
  return new Uint8Array(AsnConvert.serialize(response));
}

/** An OCSPResponse carrying only a failure status (no responseBytes), as RFC 6960 requires. */
export function ocspErrorResponse(status: OcspFailureStatus): Uint8Array {
  return new Uint8Array(AsnConvert.serialize(new OCSPResponse({ responseStatus: OCSPResponseStatus[status] })));
}
