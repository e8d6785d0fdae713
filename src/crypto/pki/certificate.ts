// X.509 certificates: building (TBSCertificate with the extensions Vault writes, in Go's order)
// and parsing back into Vault's vocabulary (key usage / EKU names, SANs, subject fields).

import * as asn1js from 'asn1js';
import { AsnConvert, AsnIntegerArrayBufferConverter, AsnProp, AsnPropTypes, AsnType, AsnTypeTypes, OctetString } from '@peculiar/asn1-schema';
import {
  AccessDescription,
  AlgorithmIdentifier,
  AuthorityInfoAccessSyntax,
  AuthorityKeyIdentifier,
  BasicConstraints,
  CRLDistributionPoints,
  Certificate,
  CertificatePolicies,
  DisplayText,
  DistributionPoint,
  DistributionPointName,
  Extension,
  ExtendedKeyUsage,
  FreshestCRL,
  GeneralName,
  GeneralSubtree,
  GeneralSubtrees,
  KeyIdentifier,
  KeyUsage,
  NameConstraints,
  OtherName,
  PolicyInformation,
  PolicyQualifierInfo,
  SubjectAlternativeName,
  SubjectKeyIdentifier,
  SubjectPublicKeyInfo,
  UserNotice,
  Validity,
  Version,
  id_ad_caIssuers,
  id_ad_ocsp,
  id_ce_authorityKeyIdentifier,
  id_ce_basicConstraints,
  id_ce_cRLDistributionPoints,
  id_ce_certificatePolicies,
  id_ce_extKeyUsage,
  id_ce_freshestCRL,
  id_ce_keyUsage,
  id_ce_nameConstraints,
  id_ce_subjectAltName,
  id_ce_subjectKeyIdentifier,
  id_pe_authorityInfoAccess,
  id_qt_csp,
  id_qt_unotice,
  DirectoryString,
} from '@peculiar/asn1-x509';
import { RsaSaPssParams, id_RSASSA_PSS } from '@peculiar/asn1-rsa';
import { CryptoInputError } from '../errors';
import { bytesEqual, toHex } from '../encoding';
import { pemBlocks, toPem } from '../pem';
import { subjectKeyId, verifySignature, type Signer } from './keys';
import { EncodedSequence, encodedSequenceOf, joinChunks, readTlv, sequenceContent, signedDer, unsignedIntegerContent } from './encoded-sequence';
import { EncodingCache, templated, type DerTemplate, type Slot } from './der-template';
import { buildName, subjectFieldsFromDer, type SubjectFields } from './names';
import { serialBytes, serialFromBytes } from './serial';

export type { SubjectFields } from './names';
export { emptySubject } from './names';

export interface SanSet {
  dnsNames: string[];
  emails: string[];
  ips: string[];
  uris: string[];
  otherNames: { oid: string; value: string }[];
}
export const emptySans = (): SanSet => ({ dnsNames: [], emails: [], ips: [], uris: [], otherNames: [] });

export interface CertTemplate {
  /** Colon hex. */
  serial: string;
  /** Fields, or a Name DER to copy verbatim (CSR subject, self-issued). */
  subject: SubjectFields | { der: Uint8Array };
  sans: SanSet;
  notBefore: Date;
  notAfter: Date;
  /** Subject public key (SPKI DER). */
  spki: Uint8Array;
  isCA: boolean;
  /** -1 = absent. */
  maxPathLength: number;
  basicConstraintsForNonCA: boolean;
  /** Vault names, case-insensitive (DigitalSignature, KeyEncipherment, CertSign, ...). A CA keeps only DigitalSignature of these. */
  keyUsage: string[];
  /** CA only: usages added to CertSign|CRLSign as given (sign-intermediate's use_csr_values: the CSR's usages). */
  caKeyUsageExtra?: string[];
  /** Vault names, case-insensitive (ServerAuth, ClientAuth, Any, ...). */
  extKeyUsage: string[];
  extKeyUsageOids: string[];
  permittedDnsDomains: string[];
  /** OIDs, or JSON `{"oid":..,"cps":..,"notice":..}` strings (Vault's stored form). */
  policyIdentifiers: string[];
  issuingCertificates: string[];
  ocspServers: string[];
  crlDistributionPoints: string[];
  deltaCrlDistributionPoints: string[];
  /** Override; default subjectKeyId(spki). */
  skid?: Uint8Array;
  /** Extension DERs copied as-is, skipped when the template already sets that OID. */
  extraExtensions?: Uint8Array[];
  /**
   * Go's ExtraExtensions semantics instead: an extra extension replaces the template's own one of the
   * same OID (what Vault's sign-intermediate with use_csr_values does with the CSR's extensions).
   */
  extraExtensionsOverride?: boolean;
}

export interface IssuerForSigning {
  /** null = self-signed: issuer = subject, AKID = own SKID. */
  subjectDer: Uint8Array | null;
  skid: Uint8Array;
  signer: Signer;
}

// ---------------------------------------------------------------------------------------------
// Vault's names for key usages and extended key usages

const KEY_USAGES: [string, number][] = [
  ['DigitalSignature', 1],
  ['ContentCommitment', 2],
  ['KeyEncipherment', 4],
  ['DataEncipherment', 8],
  ['KeyAgreement', 16],
  ['CertSign', 32],
  ['CRLSign', 64],
  ['EncipherOnly', 128],
  ['DecipherOnly', 256],
];

export const EXT_KEY_USAGES: [string, string][] = [
  ['Any', '2.5.29.37.0'],
  ['ServerAuth', '1.3.6.1.5.5.7.3.1'],
  ['ClientAuth', '1.3.6.1.5.5.7.3.2'],
  ['CodeSigning', '1.3.6.1.5.5.7.3.3'],
  ['EmailProtection', '1.3.6.1.5.5.7.3.4'],
  ['IPSECEndSystem', '1.3.6.1.5.5.7.3.5'],
  ['IPSECTunnel', '1.3.6.1.5.5.7.3.6'],
  ['IPSECUser', '1.3.6.1.5.5.7.3.7'],
  ['TimeStamping', '1.3.6.1.5.5.7.3.8'],
  ['OCSPSigning', '1.3.6.1.5.5.7.3.9'],
  ['MicrosoftServerGatedCrypto', '1.3.6.1.4.1.311.10.3.3'],
  ['NetscapeServerGatedCrypto', '2.16.840.1.113730.4.1'],
  ['MicrosoftCommercialCodeSigning', '1.3.6.1.4.1.311.2.1.22'],
  ['MicrosoftKernelCodeSigning', '1.3.6.1.4.1.311.61.1.1'],
];

/** Bit flags of Vault key usage names (case-insensitive; unknown names are ignored, as Vault does). */
export function keyUsageFlags(names: string[]): number {
  let flags = 0;
  for (const n of names) {
    const hit = KEY_USAGES.find(([k]) => k.toLowerCase() === n.trim().toLowerCase());
    if (hit) flags |= hit[1];
  }
  return flags;
}

export const keyUsageNames = (flags: number): string[] => KEY_USAGES.filter(([, f]) => flags & f).map(([k]) => k);

/** OID of a Vault EKU name (case-insensitive), or undefined. */
export const extKeyUsageOid = (name: string): string | undefined =>
  EXT_KEY_USAGES.find(([k]) => k.toLowerCase() === name.trim().toLowerCase())?.[1];

const OID_RE = /^[0-2](\.(0|[1-9][0-9]*))+$/;
export const isOid = (s: string): boolean => OID_RE.test(s);

// ---------------------------------------------------------------------------------------------
// Building

const der = (v: unknown): Uint8Array => new Uint8Array(AsnConvert.serialize(v));

/** An extension as the DER it goes into the certificate as. */
interface EncodedExt {
  oid: string;
  der: Uint8Array;
}

const ext = (extnID: string, critical: boolean, value: unknown): EncodedExt => ({
  oid: extnID,
  der: der(new Extension({ extnID, critical, extnValue: new OctetString(AsnConvert.serialize(value)) })),
});

// Encodings that repeat from one issuance to the next are kept per isolate (der-template.ts):
// extensions (key usage, EKU, AKID, AIA, CRL DP, and the SANs of names asked for again), subjects
// and validities by what they encode; the TBS, the signed certificate and the SKID extension as
// templates of their shape that each certificate's own bytes are copied into.
const extCache = new EncodingCache<EncodedExt>(512);
const cachedExt = (key: string, build: () => EncodedExt): EncodedExt => extCache.get(key, build);
const subjectCache = new EncodingCache<Uint8Array>(512);
const validityCache = new EncodingCache<Uint8Array>(64);
const shapes = new EncodingCache<DerTemplate>(256);

// Where the TBS's variable parts go: the serial's INTEGER, the issuer, validity, subject and public
// key SEQUENCEs (children 1, 3-6), and the SEQUENCE inside [3] extensions.
const TBS_SLOTS: Slot[] = [{ path: [1] }, { path: [3] }, { path: [4] }, { path: [5] }, { path: [6] }, { path: [7, 0] }];
// The certificate's TBS, and its signature after the BIT STRING's unused-bits byte.
const CERT_SLOTS: Slot[] = [{ path: [0] }, { path: [2], skip: 1 }];
// The key identifier: the OCTET STRING inside extnValue (child 1: critical is FALSE, so omitted).
const SKID_SLOTS: Slot[] = [{ path: [1, 0] }];

/** DER times hold whole seconds: the encoding of a validity depends on nothing finer. */
const wholeSeconds = (d: Date): number => Math.floor(d.getTime() / 1000);

function validityContent(notBefore: Date, notAfter: Date): Uint8Array {
  const from = wholeSeconds(notBefore);
  const to = wholeSeconds(notAfter);
  return validityCache.get(`${from}|${to}`, () =>
    sequenceContent(der(new Validity({ notBefore: new Date(from * 1000), notAfter: new Date(to * 1000) }))),
  );
}

const subjectNameDer = (fields: SubjectFields): Uint8Array => subjectCache.get(JSON.stringify(fields), () => der(buildName(fields)));

const subjectKeyIdExt = (skid: Uint8Array): EncodedExt => ({
  oid: id_ce_subjectKeyIdentifier,
  der: templated(shapes, 'skid', SKID_SLOTS, [skid], ([k]) => ext(id_ce_subjectKeyIdentifier, false, new SubjectKeyIdentifier(k)).der),
});

const uriName = (u: string): GeneralName => new GeneralName({ uniformResourceIdentifier: u });

function distributionPoints(urls: string[]): DistributionPoint[] {
  // One distribution point per URL, as Go writes them.
  return urls.map(
    (u) => new DistributionPoint({ distributionPoint: new DistributionPointName({ fullName: [uriName(u)] }) }),
  );
}

/** UTF8String DER, the otherName value form OpenSSL writes for `otherName:OID;UTF8:value`. */
const utf8StringDer = (value: string): ArrayBuffer => AsnConvert.serialize(new DirectoryString({ utf8String: value }));

export function sanGeneralNames(sans: SanSet): GeneralName[] {
  const names: GeneralName[] = [];
  // Vault puts other names first, then Go's DNS, email, IP, URI order.
  for (const o of sans.otherNames) {
    if (!isOid(o.oid)) throw new CryptoInputError(`invalid other SAN OID: ${o.oid}`);
    names.push(new GeneralName({ otherName: new OtherName({ typeId: o.oid, value: utf8StringDer(o.value) }) }));
  }
  for (const d of sans.dnsNames) names.push(new GeneralName({ dNSName: d }));
  for (const e of sans.emails) names.push(new GeneralName({ rfc822Name: e }));
  for (const ip of sans.ips) {
    const g = new GeneralName({ iPAddress: ip });
    try {
      der(g); // the IP converter throws on malformed input
    } catch {
      throw new CryptoInputError(`the value "${ip}" is not a valid IP address`);
    }
    names.push(g);
  }
  for (const u of sans.uris) names.push(uriName(u));
  return names;
}

export const sanCount = (s: SanSet): number =>
  s.dnsNames.length + s.emails.length + s.ips.length + s.uris.length + s.otherNames.length;

interface PolicyEntry {
  oid: string;
  cps?: string;
  notice?: string;
}

/** Vault's stored policy strings: a bare OID or a JSON entry; unusable entries are skipped, as Vault does. */
function policyEntries(ids: string[]): PolicyEntry[] {
  const out: PolicyEntry[] = [];
  for (const raw of ids) {
    const s = raw.trim();
    if (s === '') continue;
    if (isOid(s)) {
      out.push({ oid: s });
      continue;
    }
    try {
      const j = JSON.parse(s) as Partial<Record<'oid' | 'cps' | 'notice', unknown>>;
      if (typeof j.oid === 'string' && isOid(j.oid)) {
        out.push({
          oid: j.oid,
          cps: typeof j.cps === 'string' && j.cps !== '' ? j.cps : undefined,
          notice: typeof j.notice === 'string' && j.notice !== '' ? j.notice : undefined,
        });
      }
    } catch {
      // neither an OID nor JSON: dropped
    }
  }
  return out;
}

function policyInformation(p: PolicyEntry): PolicyInformation {
  const qualifiers: PolicyQualifierInfo[] = [];
  if (p.cps) {
    qualifiers.push(new PolicyQualifierInfo({ policyQualifierId: id_qt_csp, qualifier: AsnConvert.serialize(new DisplayText({ ia5String: p.cps })) }));
  }
  if (p.notice) {
    const notice = new UserNotice({ explicitText: new DisplayText({ utf8String: p.notice }) });
    qualifiers.push(new PolicyQualifierInfo({ policyQualifierId: id_qt_unotice, qualifier: AsnConvert.serialize(notice) }));
  }
  return new PolicyInformation({ policyIdentifier: p.oid, policyQualifiers: qualifiers.length ? qualifiers : undefined });
}

export function extKeyUsageOids(names: string[], oids: string[]): string[] {
  const out: string[] = [];
  for (const n of names) {
    const oid = extKeyUsageOid(n);
    if (oid && !out.includes(oid)) out.push(oid);
  }
  for (const o of oids) {
    if (!isOid(o)) throw new CryptoInputError(`${JSON.stringify(o)} could not be parsed as a valid oid for an extended key usage`);
    if (!out.includes(o)) out.push(o);
  }
  return out;
}

/** Signs a certificate for the template. Extensions follow Go's CreateCertificate order. */
export async function buildCertificate(t: CertTemplate, issuer: IssuerForSigning): Promise<Uint8Array> {
  // Names and the public key go in as the DER they already are (no parse, no re-encoding).
  const subjectDer = 'der' in t.subject ? t.subject.der : subjectNameDer(t.subject);
  const subjectEmpty = subjectDer.length === 2; // SEQUENCE {}
  const issuerDer = issuer.subjectDer ?? subjectDer;
  let skid: Uint8Array;
  try {
    // Computing the SKID parses the key; with an SKID given, parse it just to check it.
    if (t.skid) AsnConvert.parse(t.spki, SubjectPublicKeyInfo);
    skid = t.skid ?? (await subjectKeyId(t.spki));
  } catch {
    throw new CryptoInputError('failed to parse public key');
  }
  const akid = issuer.subjectDer ? issuer.skid : skid;

  const exts: EncodedExt[] = [];
  // A CA gets CertSign|CRLSign, plus DigitalSignature only when asked; other usages are dropped.
  const ku = t.isCA ? 32 | 64 | (keyUsageFlags(t.keyUsage) & 1) | keyUsageFlags(t.caKeyUsageExtra ?? []) : keyUsageFlags(t.keyUsage);
  if (ku !== 0) exts.push(cachedExt(`ku|${ku}`, () => ext(id_ce_keyUsage, true, new KeyUsage(ku))));

  const ekus = extKeyUsageOids(t.extKeyUsage, t.extKeyUsageOids);
  if (ekus.length > 0) exts.push(cachedExt(`eku|${ekus.join(',')}`, () => ext(id_ce_extKeyUsage, false, new ExtendedKeyUsage(ekus))));

  if (t.isCA) {
    const bc = new BasicConstraints({ cA: true });
    if (t.maxPathLength >= 0) bc.pathLenConstraint = t.maxPathLength;
    exts.push(ext(id_ce_basicConstraints, true, bc));
  } else if (t.basicConstraintsForNonCA) {
    exts.push(ext(id_ce_basicConstraints, true, new BasicConstraints({ cA: false })));
  }

  exts.push(subjectKeyIdExt(skid));
  exts.push(cachedExt(`akid|${toHex(akid)}`, () => ext(id_ce_authorityKeyIdentifier, false, new AuthorityKeyIdentifier({ keyIdentifier: new KeyIdentifier(akid) }))));

  if (t.ocspServers.length > 0 || t.issuingCertificates.length > 0) {
    const aia = [
      ...t.ocspServers.map((u) => new AccessDescription({ accessMethod: id_ad_ocsp, accessLocation: uriName(u) })),
      ...t.issuingCertificates.map((u) => new AccessDescription({ accessMethod: id_ad_caIssuers, accessLocation: uriName(u) })),
    ];
    exts.push(cachedExt(`aia|${t.ocspServers.join(' ')}|${t.issuingCertificates.join(' ')}`, () => ext(id_pe_authorityInfoAccess, false, new AuthorityInfoAccessSyntax(aia))));
  }

  // RFC 5280 4.2.1.6: with an empty subject the SAN extension is critical.
  if (sanCount(t.sans) > 0) {
    const key = `san|${subjectEmpty}|${JSON.stringify(t.sans)}`;
    exts.push(cachedExt(key, () => ext(id_ce_subjectAltName, subjectEmpty, new SubjectAlternativeName(sanGeneralNames(t.sans)))));
  }

  if (t.permittedDnsDomains.length > 0) {
    const permitted = new GeneralSubtrees(
      t.permittedDnsDomains.map((d) => new GeneralSubtree({ base: new GeneralName({ dNSName: d }) })),
    );
    exts.push(ext(id_ce_nameConstraints, true, new NameConstraints({ permittedSubtrees: permitted })));
  }

  if (t.crlDistributionPoints.length > 0) {
    exts.push(cachedExt(`crl|${t.crlDistributionPoints.join(' ')}`, () => ext(id_ce_cRLDistributionPoints, false, new CRLDistributionPoints(distributionPoints(t.crlDistributionPoints)))));
  }

  const policies = policyEntries(t.policyIdentifiers);
  if (policies.length > 0) {
    exts.push(ext(id_ce_certificatePolicies, false, new CertificatePolicies(policies.map(policyInformation))));
  }

  if (t.deltaCrlDistributionPoints.length > 0) {
    exts.push(ext(id_ce_freshestCRL, false, new FreshestCRL(distributionPoints(t.deltaCrlDistributionPoints))));
  }

  for (const raw of t.extraExtensions ?? []) {
    let oid: string;
    try {
      oid = AsnConvert.parse(raw, Extension).extnID;
    } catch {
      throw new CryptoInputError('invalid extension in request');
    }
    const at = exts.findIndex((x) => x.oid === oid);
    if (at >= 0 && !t.extraExtensionsOverride) continue;
    if (at >= 0) exts.splice(at, 1);
    exts.push({ oid, der: raw });
  }

  const { goName } = issuer.signer;
  const parts = [
    unsignedIntegerContent(serialBytes(t.serial)),
    sequenceContent(issuerDer),
    validityContent(t.notBefore, t.notAfter),
    sequenceContent(subjectDer),
    sequenceContent(t.spki),
    joinChunks(exts.map((e) => e.der), exts.reduce((n, e) => n + e.der.length, 0)),
  ];
  const tbsDer = templated(shapes, `tbs|${goName}`, TBS_SLOTS, parts, ([serial, issuerName, validity, subject, spki, extensions]) =>
    der(
      new CertTbs({
        serialNumber: serial.slice().buffer,
        signature: algorithmDer(issuer.signer),
        issuer: new EncodedSequence(issuerName),
        validity: new EncodedSequence(validity),
        subject: new EncodedSequence(subject),
        subjectPublicKeyInfo: new EncodedSequence(spki),
        extensions: new EncodedSequence(extensions),
      }),
    ),
  );
  const signature = await issuer.signer.sign(tbsDer);
  // The certificate wraps the bytes just signed (serializing the TBS again would cost as much).
  const tbsContent = tbsDer.subarray(readTlv(tbsDer, 0, tbsDer.length).contentStart);
  return templated(shapes, `cert|${goName}`, CERT_SLOTS, [tbsContent, signature], ([tbs, sig]) =>
    signedDer(der(new EncodedSequence(tbs)), issuer.signer.signatureAlgorithm, sig),
  );
}

// A signer's AlgorithmIdentifier, encoded once per algorithm (the Go name includes the hash and,
// for PSS, fixes the parameters).
const algorithms = new Map<string, EncodedSequence>();

function algorithmDer(signer: Signer): EncodedSequence {
  let e = algorithms.get(signer.goName);
  if (!e) {
    e = encodedSequenceOf(der(signer.signatureAlgorithm));
    algorithms.set(signer.goName, e);
  }
  return e;
}

/**
 * TBSCertificate with the issuer, subject, public key and extensions as ready DER (asn1-x509's
 * class would parse and re-encode them on every issuance). Signing only: never parsed with this schema.
 */
class CertTbs {
  version = Version.v3;
  serialNumber: ArrayBuffer = new ArrayBuffer(0);
  signature = new EncodedSequence();
  issuer = new EncodedSequence();
  validity = new EncodedSequence();
  subject = new EncodedSequence();
  subjectPublicKeyInfo = new EncodedSequence();
  extensions?: EncodedSequence;
  constructor(params: Partial<CertTbs> = {}) {
    Object.assign(this, params);
  }
}
// Decorators applied as calls: the project compiles without experimentalDecorators.
AsnProp({ type: AsnPropTypes.Integer, context: 0, defaultValue: Version.v1 })(CertTbs.prototype, 'version');
AsnProp({ type: AsnPropTypes.Integer, converter: AsnIntegerArrayBufferConverter })(CertTbs.prototype, 'serialNumber');
AsnProp({ type: EncodedSequence })(CertTbs.prototype, 'signature');
AsnProp({ type: EncodedSequence })(CertTbs.prototype, 'issuer');
AsnProp({ type: EncodedSequence })(CertTbs.prototype, 'validity');
AsnProp({ type: EncodedSequence })(CertTbs.prototype, 'subject');
AsnProp({ type: EncodedSequence })(CertTbs.prototype, 'subjectPublicKeyInfo');
AsnProp({ type: EncodedSequence, context: 3, optional: true })(CertTbs.prototype, 'extensions');
AsnType({ type: AsnTypeTypes.Sequence })(CertTbs);

export const certPem = (d: Uint8Array): string => toPem('CERTIFICATE', d).trim();

// ---------------------------------------------------------------------------------------------
// Parsing

export interface ParsedCert {
  der: Uint8Array;
  /** Trimmed. */
  pem: string;
  /** Colon hex. */
  serial: string;
  subjectDer: Uint8Array;
  issuerDer: Uint8Array;
  subject: SubjectFields;
  sans: SanSet;
  notBefore: Date;
  notAfter: Date;
  isCA: boolean;
  /** -1 none. */
  pathLen: number;
  /** Vault names. */
  keyUsage: string[];
  extKeyUsage: string[];
  extKeyUsageOids: string[];
  skid: Uint8Array | null;
  akid: Uint8Array | null;
  spki: Uint8Array;
  /** subject == issuer bytes. */
  selfIssued: boolean;
  /** SHA256WithRSA, ECDSAWithSHA256, PureEd25519, ... ('' when not one of Go's usual ones). */
  signatureGoName: string;
  /** Full Extension DERs, in certificate order. */
  extensions: { oid: string; der: Uint8Array }[];
  /** Permitted DNS name constraints (empty when none). */
  permittedDnsDomains: string[];
  /** For signature checks. */
  tbs: Uint8Array;
  signatureAlgorithmDer: Uint8Array;
  signature: Uint8Array;
}

const u8 = (b: ArrayBuffer | ArrayBufferView): Uint8Array =>
  b instanceof Uint8Array ? b : ArrayBuffer.isView(b) ? new Uint8Array(b.buffer, b.byteOffset, b.byteLength) : new Uint8Array(b);

const SIG_GO_NAMES: Record<string, string> = {
  '1.2.840.113549.1.1.5': 'SHA1WithRSA',
  '1.2.840.113549.1.1.11': 'SHA256WithRSA',
  '1.2.840.113549.1.1.12': 'SHA384WithRSA',
  '1.2.840.113549.1.1.13': 'SHA512WithRSA',
  '1.2.840.10045.4.1': 'ECDSAWithSHA1',
  '1.2.840.10045.4.3.2': 'ECDSAWithSHA256',
  '1.2.840.10045.4.3.3': 'ECDSAWithSHA384',
  '1.2.840.10045.4.3.4': 'ECDSAWithSHA512',
  '1.3.101.112': 'PureEd25519',
};
const PSS_HASHES: Record<string, string> = {
  '2.16.840.1.101.3.4.2.1': 'SHA256WithRSAPSS',
  '2.16.840.1.101.3.4.2.2': 'SHA384WithRSAPSS',
  '2.16.840.1.101.3.4.2.3': 'SHA512WithRSAPSS',
};

/** Go's name of a signature AlgorithmIdentifier ('' when not one we know). */
export function goNameOf(alg: AlgorithmIdentifier): string {
  if (SIG_GO_NAMES[alg.algorithm]) return SIG_GO_NAMES[alg.algorithm];
  if (alg.algorithm === id_RSASSA_PSS && alg.parameters) {
    return PSS_HASHES[AsnConvert.parse(alg.parameters, RsaSaPssParams).hashAlgorithm.algorithm] ?? '';
  }
  return '';
}

/** Exact DER of each element of a SEQUENCE (for byte-for-byte copies and comparisons). */
export function rawSequenceItems(seqDer: Uint8Array): { der: Uint8Array; contextTagged: boolean }[] {
  const parsed = asn1js.fromBER(seqDer);
  if (parsed.offset === -1) throw new Error(parsed.result.error);
  return (parsed.result as asn1js.Sequence).valueBlock.value.map((item) => ({
    der: new Uint8Array(item.valueBeforeDecodeView),
    contextTagged: item.idBlock.tagClass === 3,
  }));
}

/** Raw DER of the tbsCertificate's issuer, subject and SPKI. */
function rawTbsParts(tbs: Uint8Array): { issuer: Uint8Array; subject: Uint8Array; spki: Uint8Array } {
  const items = rawSequenceItems(tbs);
  // version is an optional [0]; then serial, signature, issuer, validity, subject, spki
  const base = items[0].contextTagged ? 1 : 0;
  return { issuer: items[base + 2].der, subject: items[base + 4].der, spki: items[base + 5].der };
}

export function parseSans(names: GeneralName[]): SanSet {
  const s = emptySans();
  for (const g of names) {
    if (g.dNSName !== undefined) s.dnsNames.push(g.dNSName);
    else if (g.rfc822Name !== undefined) s.emails.push(g.rfc822Name);
    else if (g.iPAddress !== undefined) s.ips.push(g.iPAddress);
    else if (g.uniformResourceIdentifier !== undefined) s.uris.push(g.uniformResourceIdentifier);
    else if (g.otherName) {
      let value: string;
      try {
        value = AsnConvert.parse(g.otherName.value, DirectoryString).toString();
      } catch {
        value = '';
      }
      s.otherNames.push({ oid: g.otherName.typeId, value });
    }
  }
  return s;
}

/** Decoded view of an Extensions list, shared with CSR parsing. */
export interface DecodedExtensions {
  sans: SanSet;
  keyUsage: string[] | null;
  extKeyUsage: string[] | null;
  extKeyUsageOids: string[];
  basicConstraints: { ca: boolean; pathLen: number } | null;
  skid: Uint8Array | null;
  akid: Uint8Array | null;
  permittedDnsDomains: string[];
  list: { oid: string; der: Uint8Array }[];
}

export function decodeExtensions(exts: Extension[]): DecodedExtensions {
  const d: DecodedExtensions = {
    sans: emptySans(),
    keyUsage: null,
    extKeyUsage: null,
    extKeyUsageOids: [],
    basicConstraints: null,
    skid: null,
    akid: null,
    permittedDnsDomains: [],
    list: [],
  };
  for (const e of exts) {
    d.list.push({ oid: e.extnID, der: der(e) });
    const value = e.extnValue.buffer;
    switch (e.extnID) {
      case id_ce_subjectAltName:
        d.sans = parseSans(AsnConvert.parse(value, SubjectAlternativeName));
        break;
      case id_ce_keyUsage:
        d.keyUsage = keyUsageNames(AsnConvert.parse(value, KeyUsage).toNumber());
        break;
      case id_ce_extKeyUsage: {
        d.extKeyUsage = [];
        for (const oid of AsnConvert.parse(value, ExtendedKeyUsage)) {
          const name = EXT_KEY_USAGES.find(([, o]) => o === oid)?.[0];
          if (name) d.extKeyUsage.push(name);
          else d.extKeyUsageOids.push(oid);
        }
        break;
      }
      case id_ce_basicConstraints: {
        const bc = AsnConvert.parse(value, BasicConstraints);
        d.basicConstraints = { ca: bc.cA, pathLen: bc.pathLenConstraint ?? -1 };
        break;
      }
      case id_ce_subjectKeyIdentifier:
        d.skid = u8(AsnConvert.parse(value, SubjectKeyIdentifier).buffer).slice();
        break;
      case id_ce_authorityKeyIdentifier: {
        const kid = AsnConvert.parse(value, AuthorityKeyIdentifier).keyIdentifier;
        d.akid = kid ? u8(kid.buffer).slice() : null;
        break;
      }
      case id_ce_nameConstraints: {
        const nc = AsnConvert.parse(value, NameConstraints);
        for (const st of nc.permittedSubtrees ?? []) if (st.base.dNSName !== undefined) d.permittedDnsDomains.push(st.base.dNSName);
        break;
      }
    }
  }
  return d;
}

function certDerFrom(input: string | Uint8Array): Uint8Array {
  if (typeof input !== 'string') return input;
  const block = pemBlocks(input, 'CERTIFICATE')[0];
  if (!block) throw new CryptoInputError('unable to parse certificate: no CERTIFICATE PEM block found');
  return block.der;
}

/** PEM (first CERTIFICATE block) or DER; 400 on garbage. */
export function parseCertificate(input: string | Uint8Array): ParsedCert {
  const d = certDerFrom(input);
  try {
    const cert = AsnConvert.parse(d, Certificate);
    const tbs = new Uint8Array(cert.tbsCertificateRaw ?? AsnConvert.serialize(cert.tbsCertificate));
    const raw = rawTbsParts(tbs);
    const t = cert.tbsCertificate;
    const exts = decodeExtensions(t.extensions ?? []);
    const certDer = new Uint8Array(d);
    return {
      der: certDer,
      pem: certPem(certDer),
      serial: serialFromBytes(u8(t.serialNumber)),
      subjectDer: raw.subject,
      issuerDer: raw.issuer,
      subject: subjectFieldsFromDer(raw.subject),
      sans: exts.sans,
      notBefore: t.validity.notBefore.getTime(),
      notAfter: t.validity.notAfter.getTime(),
      isCA: exts.basicConstraints?.ca ?? false,
      pathLen: exts.basicConstraints?.ca ? exts.basicConstraints.pathLen : -1,
      keyUsage: exts.keyUsage ?? [],
      extKeyUsage: exts.extKeyUsage ?? [],
      extKeyUsageOids: exts.extKeyUsageOids,
      skid: exts.skid,
      akid: exts.akid,
      spki: raw.spki,
      selfIssued: bytesEqual(raw.subject, raw.issuer),
      signatureGoName: goNameOf(cert.signatureAlgorithm),
      extensions: exts.list,
      permittedDnsDomains: exts.permittedDnsDomains,
      tbs,
      signatureAlgorithmDer: der(cert.signatureAlgorithm),
      signature: u8(cert.signatureValue).slice(),
    };
  } catch (e) {
    if (e instanceof Error && 'status' in e) throw e;
    throw new CryptoInputError(`unable to parse certificate: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Every CERTIFICATE block of a PEM bundle, in order. */
export function parseCertificates(pemBundle: string): ParsedCert[] {
  return pemBlocks(pemBundle, 'CERTIFICATE').map((b) => parseCertificate(b.der));
}


/** Whether `child` carries a valid signature by the key `issuerSpki`. */
export async function verifySignedBy(child: ParsedCert, issuerSpki: Uint8Array): Promise<boolean> {
  const alg = AsnConvert.parse(child.signatureAlgorithmDer, AlgorithmIdentifier);
  return await verifySignature(issuerSpki, alg, child.tbs, child.signature);
}
