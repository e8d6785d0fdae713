// X.509 v2 CRLs, shaped like Go's x509.CreateRevocationList as Vault uses it: issuer Name copied
// from the issuer certificate, entries of serial + revocation date only, extensions AKID then CRL
// Number, then (for deltas) a critical Delta CRL Indicator and (when given) Freshest CRL.
//
// Scale: the engine builds CRLs of 100,000 entries inside a Durable Object (128 MB). Encoding the
// whole TBSCertList as one asn1-schema/asn1js object tree takes ~300 MB and ~2 s for 100k entries,
// and @peculiar/x509's X509CrlGenerator is slower still (it de-duplicates serials in O(n²): 4,000
// entries take ~0.9 s). So each entry is serialized on its own with asn1-x509's RevokedCertificate
// (its objects are garbage right after), and the list is handed to asn1js as one SEQUENCE whose
// content is those encodings. Parsing walks the same way, one entry at a time.

import * as asn1js from 'asn1js';
import { childrenOf, EncodedSequence, joinChunks, readTlv, signedDer, type Tlv } from './encoded-sequence';
import {
  AsnConvert,
  AsnIntegerBigIntConverter,
  AsnProp,
  AsnPropTypes,
  AsnType,
  AsnTypeTypes,
  BitString,
  OctetString,
  type IAsnConvertible,
} from '@peculiar/asn1-schema';
import {
  AlgorithmIdentifier,
  AuthorityKeyIdentifier,
  DistributionPoint,
  DistributionPointName,
  Extension,
  Extensions,
  FreshestCRL,
  GeneralName,
  KeyIdentifier,
  RevokedCertificate,
  Time,
  Version,
  id_ce_authorityKeyIdentifier,
  id_ce_cRLNumber,
  id_ce_deltaCRLIndicator,
  id_ce_freshestCRL,
} from '@peculiar/asn1-x509';
import type { Signer } from './keys';
import { serialBytes, serialFromBytes } from './serial';

export interface CrlEntry {
  serial: string /* colon */;
  revocationTime: Date;
}

export interface CrlParams {
  issuerDer: Uint8Array /* issuer cert's subject Name */;
  issuerSkid: Uint8Array;
  signer: Signer;
  thisUpdate: Date;
  nextUpdate: Date;
  number: bigint;
  deltaBase?: bigint /* delta CRL: Delta CRL Indicator */;
  freshestCrl?: string[];
}

// ---------------------------------------------------------------------------------------------
// Encoding helpers

/** An INTEGER of any size as a bigint (asn1-x509's CRLNumber is a JS number). */
class BigInteger implements IAsnConvertible<asn1js.Integer> {
  constructor(public value: bigint = 0n) {}
  fromASN(asn: asn1js.Integer): this {
    if (!(asn instanceof asn1js.Integer)) throw new Error('expected an INTEGER');
    this.value = AsnIntegerBigIntConverter.fromASN(asn);
    return this;
  }
  toASN(): asn1js.Integer {
    return AsnIntegerBigIntConverter.toASN(this.value);
  }
  toSchema(name: string): asn1js.BaseBlock {
    return new asn1js.Integer({ name });
  }
}


/** TBSCertList as in RFC 5280, with the issuer copied verbatim and the entry list pre-encoded. */
class CrlTbs {
  version = Version.v2;
  signature = new AlgorithmIdentifier();
  issuer: ArrayBuffer = new ArrayBuffer(0);
  thisUpdate = new Time();
  nextUpdate?: Time;
  revokedCertificates?: EncodedSequence;
  crlExtensions?: Extension[];
  constructor(params: Partial<CrlTbs> = {}) {
    Object.assign(this, params);
  }
}
// Decorators applied as calls: the project compiles without experimentalDecorators.
AsnProp({ type: AsnPropTypes.Integer })(CrlTbs.prototype, 'version');
AsnProp({ type: AlgorithmIdentifier })(CrlTbs.prototype, 'signature');
AsnProp({ type: AsnPropTypes.Any })(CrlTbs.prototype, 'issuer');
AsnProp({ type: Time })(CrlTbs.prototype, 'thisUpdate');
AsnProp({ type: Time, optional: true })(CrlTbs.prototype, 'nextUpdate');
AsnProp({ type: EncodedSequence, optional: true })(CrlTbs.prototype, 'revokedCertificates');
AsnProp({ type: Extension, optional: true, context: 0, repeated: 'sequence' })(CrlTbs.prototype, 'crlExtensions');
AsnType({ type: AsnTypeTypes.Sequence })(CrlTbs);

const der = (obj: unknown): Uint8Array => new Uint8Array(AsnConvert.serialize(obj));

/** CertificateSerialNumber content: a positive INTEGER, so a leading 0x00 when the top bit is set. */
function serialInteger(colon: string): ArrayBuffer {
  const b = serialBytes(colon);
  if (b[0] < 0x80) return b.slice().buffer;
  const out = new Uint8Array(b.length + 1);
  out.set(b, 1);
  return out.buffer;
}

const extension = (oid: string, critical: boolean, value: unknown): Extension =>
  new Extension({ extnID: oid, critical, extnValue: new OctetString(AsnConvert.serialize(value)) });

function crlExtensions(p: CrlParams): Extension[] {
  const exts = [
    extension(id_ce_authorityKeyIdentifier, false, new AuthorityKeyIdentifier({ keyIdentifier: new KeyIdentifier(p.issuerSkid) })),
    extension(id_ce_cRLNumber, false, new BigInteger(p.number)),
  ];
  if (p.deltaBase !== undefined) exts.push(extension(id_ce_deltaCRLIndicator, true, new BigInteger(p.deltaBase)));
  if (p.freshestCrl?.length) {
    // One DistributionPoint per URL, as Go writes CRL distribution points.
    const points = p.freshestCrl.map(
      (url) =>
        new DistributionPoint({
          distributionPoint: new DistributionPointName({ fullName: [new GeneralName({ uniformResourceIdentifier: url })] }),
        }),
    );
    exts.push(extension(id_ce_freshestCRL, false, new FreshestCRL(points)));
  }
  return exts;
}

/** X.509 v2 CRL DER. An empty entry list leaves revokedCertificates out (an empty SEQUENCE is invalid). */
export async function buildCrl(p: CrlParams, entries: Iterable<CrlEntry>): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (const e of entries) {
    const d = der(new RevokedCertificate({ userCertificate: serialInteger(e.serial), revocationDate: new Time(e.revocationTime) }));
    chunks.push(d);
    total += d.length;
  }
  const tbs = der(
    new CrlTbs({
      signature: p.signer.signatureAlgorithm,
      issuer: p.issuerDer.slice().buffer,
      thisUpdate: new Time(p.thisUpdate),
      nextUpdate: new Time(p.nextUpdate),
      revokedCertificates: chunks.length ? new EncodedSequence(joinChunks(chunks, total)) : undefined,
      crlExtensions: crlExtensions(p),
    }),
  );
  chunks.length = 0;
  const signature = await p.signer.sign(tbs);
  return signedDer(tbs, p.signer.signatureAlgorithm, signature);
}

// ---------------------------------------------------------------------------------------------
// Parsing

const isUniversal = (t: Tlv | undefined, tag: number): boolean => t?.tagClass === 1 && t.tagNumber === tag;
const isTime = (t: Tlv | undefined): boolean => isUniversal(t, 23) || isUniversal(t, 24); // UTCTime | GeneralizedTime

export interface ParsedCrl {
  number: bigint | null;
  deltaBase: bigint | null;
  thisUpdate: Date;
  nextUpdate: Date | null;
  serials: string[] /* colon, in CRL order */;
  entries: CrlEntry[];
  issuerDer: Uint8Array;
  akid: Uint8Array | null;
  freshestCrl: string[];
  extensions: { oid: string; critical: boolean; value: Uint8Array }[];
  tbsDer: Uint8Array /* the signed bytes */;
  signatureAlgorithm: AlgorithmIdentifier;
  signature: Uint8Array /* as carried in the BIT STRING (ECDSA: DER) */;
}

/** Parses CRL DER (ours or anyone's), entry by entry so 100k-entry CRLs fit in a Durable Object. Throws on malformed input. */
export function parseCrl(input: Uint8Array): ParsedCrl {
  const outer = readTlv(input, 0, input.length);
  if (!isUniversal(outer, 16) || outer.end !== input.length) throw new Error('not a CRL: expected one SEQUENCE');
  const [tbsTlv, algTlv, sigTlv, extra] = [...childrenOf(input, outer)];
  if (!isUniversal(tbsTlv, 16) || !isUniversal(algTlv, 16) || !isUniversal(sigTlv, 3) || extra) {
    throw new Error('not a CRL: expected tbsCertList, signatureAlgorithm, signature');
  }
  const slice = (t: Tlv): Uint8Array => input.slice(t.start, t.end);
  const signatureAlgorithm = AsnConvert.parse(slice(algTlv), AlgorithmIdentifier);
  const signature = new Uint8Array(AsnConvert.parse(slice(sigTlv), BitString).value);

  const fields = childrenOf(input, tbsTlv);
  const next = (): Tlv | undefined => fields.next().value ?? undefined;
  let f = next();
  if (isUniversal(f, 2)) f = next(); // version
  if (!isUniversal(f, 16)) throw new Error('CRL: missing signature algorithm');
  f = next();
  if (!f || !isUniversal(f, 16)) throw new Error('CRL: missing issuer');
  const issuerDer = slice(f);
  f = next();
  if (!f || !isTime(f)) throw new Error('CRL: missing thisUpdate');
  const thisUpdate = AsnConvert.parse(slice(f), Time).getTime();
  f = next();
  let nextUpdate: Date | null = null;
  if (f && isTime(f)) {
    nextUpdate = AsnConvert.parse(slice(f), Time).getTime();
    f = next();
  }
  const entries: CrlEntry[] = [];
  if (f && isUniversal(f, 16)) {
    for (const e of childrenOf(input, f)) {
      const rc = AsnConvert.parse(input.subarray(e.start, e.end), RevokedCertificate);
      entries.push({ serial: serialFromBytes(new Uint8Array(rc.userCertificate)), revocationTime: rc.revocationDate.getTime() });
    }
    f = next();
  }
  const extensions: ParsedCrl['extensions'] = [];
  if (f && f.tagClass === 3 && f.tagNumber === 0) {
    for (const ext of AsnConvert.parse(input.subarray(f.contentStart, f.end), Extensions)) {
      extensions.push({ oid: ext.extnID, critical: ext.critical, value: new Uint8Array(ext.extnValue.buffer) });
    }
    f = next();
  }
  if (f) throw new Error('CRL: unexpected data after the extensions');

  const ext = (oid: string) => extensions.find((e) => e.oid === oid)?.value;
  const int = (v: Uint8Array | undefined) => (v ? AsnConvert.parse(v, BigInteger).value : null);
  const akidDer = ext(id_ce_authorityKeyIdentifier);
  const akid = akidDer ? AsnConvert.parse(akidDer, AuthorityKeyIdentifier).keyIdentifier : undefined;
  const freshestDer = ext(id_ce_freshestCRL);
  const freshestCrl = freshestDer
    ? AsnConvert.parse(freshestDer, FreshestCRL).flatMap((dp) =>
        (dp.distributionPoint?.fullName ?? []).flatMap((n) => (n.uniformResourceIdentifier ? [n.uniformResourceIdentifier] : [])),
      )
    : [];
  return {
    number: int(ext(id_ce_cRLNumber)),
    deltaBase: int(ext(id_ce_deltaCRLIndicator)),
    thisUpdate,
    nextUpdate,
    serials: entries.map((e) => e.serial),
    entries,
    issuerDer,
    akid: akid ? new Uint8Array(akid.buffer) : null,
    freshestCrl,
    extensions,
    tbsDer: slice(tbsTlv),
    signatureAlgorithm,
    signature,
  };
}
