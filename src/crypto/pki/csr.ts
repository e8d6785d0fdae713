// PKCS#10 certificate requests: building (intermediate CSRs) and parsing with signature check,
// using Vault's error texts.

import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { Attributes, CertificationRequest, CertificationRequestInfo } from '@peculiar/asn1-csr';
import {
  Attribute,
  BasicConstraints,
  Extension,
  Extensions,
  KeyUsage,
  SubjectAlternativeName,
  SubjectPublicKeyInfo,
  id_ce_basicConstraints,
  id_ce_keyUsage,
  id_ce_subjectAltName,
} from '@peculiar/asn1-x509';
import { CryptoInputError } from '../errors';
import { pemBlocks } from '../pem';
import { decodeExtensions, keyUsageFlags, sanGeneralNames, type SanSet } from './certificate';
import { csrParts, ID_EXTENSION_REQUEST, type CsrParts } from './csr-parts';
import { parsedKeyInfo, verifySignature, type PkiKey, type Signer } from './keys';
import { buildName, subjectFields, type SubjectFields } from './names';

export interface CsrTemplate {
  subject: SubjectFields;
  sans: SanSet;
  /** Empty = no key usage extension. */
  keyUsage: string[];
  /** add_basic_constraints: a critical CA:TRUE extension. */
  basicConstraintsCA: boolean;
}

const ext = (extnID: string, critical: boolean, value: unknown): Extension =>
  new Extension({ extnID, critical, extnValue: new OctetString(AsnConvert.serialize(value)) });

/** CSR DER signed by `signer` (which must belong to `key`). */
export async function buildCsr(t: CsrTemplate, key: PkiKey, signer: Signer): Promise<Uint8Array> {
  const subject = buildName(t.subject);
  const exts: Extension[] = [];
  const sans = sanGeneralNames(t.sans);
  if (sans.length > 0) exts.push(ext(id_ce_subjectAltName, subject.length === 0, new SubjectAlternativeName(sans)));
  if (t.basicConstraintsCA) exts.push(ext(id_ce_basicConstraints, true, new BasicConstraints({ cA: true })));
  const ku = keyUsageFlags(t.keyUsage);
  if (ku !== 0) exts.push(ext(id_ce_keyUsage, true, new KeyUsage(ku)));

  const attributes = new Attributes(
    exts.length > 0 ? [new Attribute({ type: ID_EXTENSION_REQUEST, values: [AsnConvert.serialize(new Extensions(exts))] })] : [],
  );
  const info = new CertificationRequestInfo({
    version: 0,
    subject,
    subjectPKInfo: AsnConvert.parse(key.spki, SubjectPublicKeyInfo),
    attributes,
  });
  const infoDer = new Uint8Array(AsnConvert.serialize(info));
  const signature = await signer.sign(infoDer);
  const csr = new CertificationRequest({
    certificationRequestInfo: info,
    signatureAlgorithm: signer.signatureAlgorithm,
    signature: new Uint8Array(signature).buffer as ArrayBuffer,
  });
  return new Uint8Array(AsnConvert.serialize(csr));
}

export interface ParsedCsr {
  der: Uint8Array;
  subject: SubjectFields;
  subjectDer: Uint8Array;
  sans: SanSet;
  spki: Uint8Array;
  /** The public key's type and size (publicKeyInfo of spki). */
  keyInfo: { type: PkiKey['type']; bits: number };
  /** null: no key usage extension. */
  keyUsage: string[] | null;
  extKeyUsage: string[] | null;
  extKeyUsageOids: string[];
  basicConstraints: { ca: boolean; pathLen: number } | null;
  /** Full Extension DERs from the extensionRequest attribute. */
  extensions: { oid: string; der: Uint8Array }[];
}

const parseError = (e: unknown): never => {
  throw new CryptoInputError(`certificate request could not be parsed: ${e instanceof Error ? e.message : String(e)}`);
};

/** Parses a PEM CSR and checks its self-signature. */
export async function parseCsr(pem: string): Promise<ParsedCsr> {
  if (pem.trim() === '') throw new CryptoInputError('"csr" is empty');
  // Like Go's pem.Decode: the first block, whatever its label.
  const block = pemBlocks(pem)[0];
  if (!block) throw new CryptoInputError('csr contains no data');

  let parts: CsrParts;
  try {
    parts = csrParts(new Uint8Array(block.der));
  } catch (e) {
    return parseError(e);
  }
  const { infoDer, subjectDer, spki } = parts;

  let keyInfo: ParsedCsr['keyInfo'];
  try {
    keyInfo = parsedKeyInfo(parts.publicKey);
  } catch {
    throw new CryptoInputError(
      'Refusing to sign CSR with empty PublicKey. This usually means the SubjectPublicKeyInfo field has an OID not recognized by Go, such as 1.2.840.113549.1.1.10 for rsaPSS.',
    );
  }
  if (!(await verifySignature(spki, parts.signatureAlgorithm, infoDer, parts.signature, keyInfo))) {
    throw new CryptoInputError('request signature invalid');
  }

  let decoded: ReturnType<typeof decodeExtensions>;
  try {
    decoded = decodeExtensions(parts.extensions);
  } catch (e) {
    return parseError(e);
  }
  return {
    der: new Uint8Array(block.der),
    subject: subjectFields(parts.subject),
    subjectDer,
    sans: decoded.sans,
    spki,
    keyInfo,
    keyUsage: decoded.keyUsage,
    extKeyUsage: decoded.extKeyUsage,
    extKeyUsageOids: decoded.extKeyUsageOids,
    basicConstraints: decoded.basicConstraints,
    extensions: decoded.list,
  };
}
