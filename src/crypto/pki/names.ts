// Distinguished names: Vault's subject fields ⇄ X.501 Name, laid out the way Go's pkix.Name
// marshals them (so our certificates' subjects match Vault's byte for byte).

import { AsnConvert } from '@peculiar/asn1-schema';
import { AttributeTypeAndValue, AttributeValue, Name, RelativeDistinguishedName } from '@peculiar/asn1-x509';
import { CryptoInputError } from '../errors';

export interface SubjectFields {
  commonName: string;
  ou: string[];
  organization: string[];
  country: string[];
  locality: string[];
  province: string[];
  streetAddress: string[];
  postalCode: string[];
  /** The subject serialNumber attribute (not the certificate serial). */
  serialNumber: string;
  /** UID attributes (0.9.2342.19200300.100.1.1). */
  userIds: string[];
}

export const OID_CN = '2.5.4.3';
export const OID_SERIAL_NUMBER = '2.5.4.5';
export const OID_C = '2.5.4.6';
export const OID_L = '2.5.4.7';
export const OID_ST = '2.5.4.8';
export const OID_STREET = '2.5.4.9';
export const OID_O = '2.5.4.10';
export const OID_OU = '2.5.4.11';
export const OID_POSTAL_CODE = '2.5.4.17';
export const OID_UID = '0.9.2342.19200300.100.1.1';

export const emptySubject = (): SubjectFields => ({
  commonName: '',
  ou: [],
  organization: [],
  country: [],
  locality: [],
  province: [],
  streetAddress: [],
  postalCode: [],
  serialNumber: '',
  userIds: [],
});

// Go's asn1 picks PrintableString when every character allows it ('*' and '&' do not), else UTF8String.
const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;
type MaybeWellFormed = string & { isWellFormed(): boolean };
function attributeValue(s: string): AttributeValue {
  // A lone surrogate (a JSON escape such as "\ud800" can make one) has no UTF-8 encoding.
  if (!(s as MaybeWellFormed).isWellFormed()) throw new CryptoInputError(`subject value ${JSON.stringify(s)} is not valid Unicode`);
  return new AttributeValue(PRINTABLE.test(s) ? { printableString: s } : { utf8String: s });
}

const derOf = (v: unknown): Uint8Array => new Uint8Array(AsnConvert.serialize(v));

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/** One RDN holding every value of a type (a multi-valued RDN, as Go writes it), DER SET OF order. */
function rdn(oid: string, values: string[]): RelativeDistinguishedName {
  const atvs = values.map((v) => new AttributeTypeAndValue({ type: oid, value: attributeValue(v) }));
  if (atvs.length > 1) {
    const encoded = atvs.map((a) => ({ a, der: derOf(a) }));
    encoded.sort((x, y) => compareBytes(x.der, y.der));
    return new RelativeDistinguishedName(encoded.map((e) => e.a));
  }
  return new RelativeDistinguishedName(atvs);
}

/** Go's pkix.Name.ToRDNSequence order: C, ST, L, street, postalCode, O, OU, CN, serialNumber, then UID (ExtraNames). */
export function buildName(s: SubjectFields): Name {
  const rdns: RelativeDistinguishedName[] = [];
  const add = (oid: string, values: string[]): void => {
    const vs = values.filter((v) => v !== '');
    if (vs.length > 0) rdns.push(rdn(oid, vs));
  };
  add(OID_C, s.country);
  add(OID_ST, s.province);
  add(OID_L, s.locality);
  add(OID_STREET, s.streetAddress);
  add(OID_POSTAL_CODE, s.postalCode);
  add(OID_O, s.organization);
  add(OID_OU, s.ou);
  add(OID_CN, [s.commonName]);
  add(OID_SERIAL_NUMBER, [s.serialNumber]);
  for (const uid of s.userIds.filter((u) => u !== '')) rdns.push(rdn(OID_UID, [uid]));
  return new Name(rdns);
}

export const nameDer = (s: SubjectFields): Uint8Array => derOf(buildName(s));

export function parseNameDer(der: Uint8Array): Name {
  return AsnConvert.parse(der, Name);
}

/** The text of an attribute value, whatever string type carries it. */
export function attributeText(v: AttributeValue): string {
  return v.utf8String ?? v.printableString ?? v.ia5String ?? v.teletexString ?? v.bmpString ?? v.universalString ?? v.toString();
}

/** Subject fields of a Name; for CN and serialNumber the last one wins, as in Go's FillFromRDNSequence. */
export function subjectFields(name: Name): SubjectFields {
  const s = emptySubject();
  for (const rdnSet of name) {
    for (const atv of rdnSet) {
      const v = attributeText(atv.value);
      switch (atv.type) {
        case OID_CN:
          s.commonName = v; // Go keeps the last CN seen
          break;
        case OID_SERIAL_NUMBER:
          s.serialNumber = v;
          break;
        case OID_C:
          s.country.push(v);
          break;
        case OID_L:
          s.locality.push(v);
          break;
        case OID_ST:
          s.province.push(v);
          break;
        case OID_STREET:
          s.streetAddress.push(v);
          break;
        case OID_O:
          s.organization.push(v);
          break;
        case OID_OU:
          s.ou.push(v);
          break;
        case OID_POSTAL_CODE:
          s.postalCode.push(v);
          break;
        case OID_UID:
          s.userIds.push(v);
          break;
      }
    }
  }
  return s;
}

export const subjectFieldsFromDer = (der: Uint8Array): SubjectFields => subjectFields(parseNameDer(der));

const SHORT_NAMES: Record<string, string> = {
  [OID_CN]: 'CN',
  [OID_SERIAL_NUMBER]: 'SERIALNUMBER',
  [OID_C]: 'C',
  [OID_L]: 'L',
  [OID_ST]: 'ST',
  [OID_STREET]: 'STREET',
  [OID_O]: 'O',
  [OID_OU]: 'OU',
  [OID_POSTAL_CODE]: 'POSTALCODE',
  [OID_UID]: 'UID',
};

// RFC 2253 escaping, like Go's pkix attribute String().
function escapeValue(v: string): string {
  let out = '';
  for (let i = 0; i < v.length; i++) {
    const c = v[i];
    if (',+"\\<>;'.includes(c) || (i === 0 && (c === ' ' || c === '#')) || (i === v.length - 1 && c === ' ')) out += `\\${c}`;
    else out += c;
  }
  return out;
}

/** RFC 2253-style text of a Name (last RDN first), as Go's pkix.Name.String() prints it. */
export function nameString(der: Uint8Array): string {
  const name = parseNameDer(der);
  const parts: string[] = [];
  for (let i = name.length - 1; i >= 0; i--) {
    parts.push(
      Array.from(name[i], (atv) => `${SHORT_NAMES[atv.type] ?? atv.type}=${escapeValue(attributeText(atv.value))}`).join('+'),
    );
  }
  return parts.join(',');
}
