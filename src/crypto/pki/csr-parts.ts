// The parts of a PKCS#10 request that signing needs, found by walking its TLVs (asn1js's decoders)
// and parsing only the small pieces with their schemas. Parsing the whole request with the schema
// took ≈ 40% of a CSR signature's CPU; anything the walk does not expect (BER forms, trailing
// bytes, an unusual layout) goes through that full parse instead, so what is accepted and the
// errors given are the full parse's.

import { AsnConvert } from '@peculiar/asn1-schema';
import { CertificationRequest } from '@peculiar/asn1-csr';
import { AlgorithmIdentifier, Attribute, Extension, Extensions, Name, SubjectPublicKeyInfo } from '@peculiar/asn1-x509';
import { childrenOf, readTlv, type Tlv } from './encoded-sequence';
import { rawSequenceItems } from './certificate';

/** PKCS#9 extensionRequest attribute. */
export const ID_EXTENSION_REQUEST = '1.2.840.113549.1.9.14';

export interface CsrParts {
  /** The exact bytes the signature covers. */
  infoDer: Uint8Array;
  subjectDer: Uint8Array;
  subject: Name;
  spki: Uint8Array;
  publicKey: SubjectPublicKeyInfo;
  signatureAlgorithm: AlgorithmIdentifier;
  signature: Uint8Array;
  /** Every extension of every extensionRequest attribute, in order. */
  extensions: Extension[];
}

/** The request's parts: by the walk where it applies, else by the full schema parse. */
export function csrParts(der: Uint8Array): CsrParts {
  try {
    return csrPartsWalked(der);
  } catch {
    return csrPartsParsed(der);
  }
}

const UNIVERSAL = 1;
const CONTEXT = 3;
const SEQUENCE = 16;

/** `t`, if it has that tag, constructed (SEQUENCE, [0] IMPLICIT SET OF) or not (INTEGER, BIT STRING) as DER writes it. */
function expectTag(t: Tlv, tagClass: number, tagNumber: number): Tlv {
  const constructed = tagClass === CONTEXT || tagNumber === SEQUENCE;
  if (t.tagClass !== tagClass || t.tagNumber !== tagNumber || t.constructed !== constructed) throw new Error('unexpected element');
  return t;
}

const bytesOf = (der: Uint8Array, t: Tlv): Uint8Array => der.subarray(t.start, t.end);

/**
 * CertificationRequest ::= SEQUENCE { info, signatureAlgorithm, signature BIT STRING } with
 * info ::= SEQUENCE { version INTEGER, subject Name, subjectPKInfo, [0] IMPLICIT attributes }.
 * Throws on anything else. Exported for the tests that hold it to the full parse.
 */
export function csrPartsWalked(der: Uint8Array): CsrParts {
  const outer = expectTag(readTlv(der, 0, der.length), UNIVERSAL, SEQUENCE);
  if (outer.end !== der.length) throw new Error('trailing bytes');
  const [info, algorithm, bits, ...rest] = childrenOf(der, outer);
  if (!bits || rest.length > 0) throw new Error('unexpected layout');
  expectTag(info, UNIVERSAL, SEQUENCE);
  expectTag(algorithm, UNIVERSAL, SEQUENCE);
  expectTag(bits, UNIVERSAL, 3);
  if (bits.end - bits.contentStart < 1 || der[bits.contentStart] !== 0) throw new Error('signature with unused bits');

  const [version, subject, spki, attributes, ...extra] = childrenOf(der, info);
  if (!attributes || extra.length > 0) throw new Error('unexpected layout');
  expectTag(version, UNIVERSAL, 2);
  expectTag(subject, UNIVERSAL, SEQUENCE);
  expectTag(attributes, CONTEXT, 0);
  expectTag(spki, UNIVERSAL, SEQUENCE);

  const extensions: Extension[] = [];
  for (const a of childrenOf(der, attributes)) {
    const attr = AsnConvert.parse(bytesOf(der, a), Attribute);
    if (attr.type !== ID_EXTENSION_REQUEST) continue;
    for (const v of attr.values) extensions.push(...AsnConvert.parse(v, Extensions));
  }
  const subjectDer = bytesOf(der, subject);
  return {
    infoDer: bytesOf(der, info),
    subjectDer,
    subject: AsnConvert.parse(subjectDer, Name),
    spki: bytesOf(der, spki),
    publicKey: AsnConvert.parse(bytesOf(der, spki), SubjectPublicKeyInfo),
    signatureAlgorithm: AsnConvert.parse(bytesOf(der, algorithm), AlgorithmIdentifier),
    signature: der.slice(bits.contentStart + 1, bits.end),
    extensions,
  };
}

/** The request parsed whole with its schema (what every request went through before the walk). */
export function csrPartsParsed(der: Uint8Array): CsrParts {
  const csr = AsnConvert.parse(der, CertificationRequest);
  const info = csr.certificationRequestInfo;
  const infoDer = new Uint8Array(csr.certificationRequestInfoRaw ?? AsnConvert.serialize(info));
  // version, subject, subjectPKInfo: exact bytes, so a verbatim copy keeps the CSR's encoding
  const raw = rawSequenceItems(infoDer);
  const extensions: Extension[] = [];
  for (const attr of info.attributes ?? []) {
    if (attr.type !== ID_EXTENSION_REQUEST) continue;
    for (const v of attr.values) extensions.push(...AsnConvert.parse(v, Extensions));
  }
  return {
    infoDer,
    subjectDer: raw[1].der,
    subject: info.subject,
    spki: raw[2].der,
    publicKey: info.subjectPKInfo,
    signatureAlgorithm: csr.signatureAlgorithm,
    signature: new Uint8Array(csr.signature),
    extensions,
  };
}
