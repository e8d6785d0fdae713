// Certificates: built with our code, then read back with independent parsers (@peculiar/x509's
// classes and node:crypto's X509Certificate) and checked extension by extension.

import * as nc from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import {
  AttributeTypeAndValue,
  AttributeValue,
  Extension as AsnExtension,
  FreshestCRL,
  Name as AsnName,
  NameConstraints,
  RelativeDistinguishedName,
  UserNotice,
  CertificatePolicies,
  Certificate as AsnCertificate,
  Validity,
} from '@peculiar/asn1-x509';
import { asCofferError, CofferError } from '../../../../src/framework/errors';
import { toHex } from '../../../../src/crypto/encoding';
import { pemBlocks } from '../../../../src/crypto/pem';
import {
  buildCertificate,
  certPem,
  emptySans,
  emptySubject,
  parseCertificate,
  parseCertificates,
  verifySignedBy,
  type CertTemplate,
  type IssuerForSigning,
  type SubjectFields,
} from '../../../../src/crypto/pki/certificate';
import { encodePrivateKey, generateKey, signerFor, subjectKeyId, type PkiKey, type PkiKeyType } from '../../../../src/crypto/pki/keys';
import { randomSerial } from '../../../../src/crypto/pki/serial';
import { certTemplate } from '../../../helpers/pki';
import { Rng } from '../../../helpers/fuzz/random';
import {
  AuthorityInfoAccessExtension,
  AuthorityKeyIdentifierExtension,
  BasicConstraintsExtension,
  CRLDistributionPointsExtension,
  CertificatePolicyExtension,
  ExtendedKeyUsageExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  Pkcs10CertificateRequestGenerator,
  SubjectAlternativeNameExtension,
  SubjectKeyIdentifierExtension,
  X509Certificate,
  X509CertificateGenerator,
} from '../../../../src/crypto/pki/x509';

/** Crypto throws its own error type; what a client gets is the framework's mapping of it. */
async function expect400(p: Promise<unknown> | (() => unknown), text: string): Promise<void> {
  let err: unknown;
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    err = asCofferError(e);
  }
  expect(err).toBeInstanceOf(CofferError);
  expect((err as CofferError).status).toBe(400);
  expect((err as CofferError).errors[0]).toContain(text);
}

const template = (key: PkiKey, over: Partial<CertTemplate> = {}): CertTemplate => certTemplate(key.spki, over);

async function selfSigned(key: PkiKey, over: Partial<CertTemplate> = {}, bits = 0, pss = false): Promise<Uint8Array> {
  const issuer: IssuerForSigning = { subjectDer: null, skid: await subjectKeyId(key.spki), signer: await signerFor(key, bits, pss) };
  return await buildCertificate(template(key, { isCA: true, ...over }), issuer);
}

async function issuerFor(certDer: Uint8Array, key: PkiKey): Promise<IssuerForSigning> {
  const p = parseCertificate(certDer);
  return { subjectDer: p.subjectDer, skid: p.skid!, signer: await signerFor(key, 0, false) };
}

/** Signature check by node:crypto over the raw TBS (works for P-224 too, unlike X509Certificate.publicKey). */
function nodeVerifies(certDer: Uint8Array, spki: Uint8Array): boolean {
  const p = parseCertificate(certDer);
  const pub = { key: Buffer.from(spki), format: 'der', type: 'spki' } as const;
  if (p.signatureGoName === 'PureEd25519') return nc.verify(null, p.tbs, pub, p.signature);
  const hash = /SHA(\d{3})/.exec(p.signatureGoName)![1];
  return nc.verify(`sha${hash}`, p.tbs, pub, p.signature);
}

describe('self-signed CA for every key type', () => {
  const cases: [PkiKeyType, number, number, boolean, string][] = [
    ['rsa', 2048, 0, false, 'SHA256WithRSA'],
    ['rsa', 2048, 512, false, 'SHA512WithRSA'],
    ['rsa', 2048, 384, true, 'SHA384WithRSAPSS'],
    ['ec', 224, 0, false, 'ECDSAWithSHA256'],
    ['ec', 256, 0, false, 'ECDSAWithSHA256'],
    ['ec', 384, 0, false, 'ECDSAWithSHA384'],
    ['ec', 521, 0, false, 'ECDSAWithSHA512'],
    ['ed25519', 0, 0, false, 'PureEd25519'],
  ];
  for (const [type, bits, sigBits, pss, goName] of cases) {
    it(`${type} ${bits} ${goName}`, async () => {
      const key = await generateKey(type, bits);
      const other = await generateKey(type, bits);
      const serial = randomSerial();
      const der = await selfSigned(key, { serial, maxPathLength: 1 }, sigBits, pss);
      const p = parseCertificate(der);
      expect(p.signatureGoName).toBe(goName);
      expect(p.serial).toBe(serial);
      expect(p.selfIssued).toBe(true);
      expect(p.isCA).toBe(true);
      expect(p.pathLen).toBe(1);
      const skid = await subjectKeyId(key.spki);
      expect(toHex(p.skid!)).toBe(toHex(skid));
      expect(toHex(p.akid!)).toBe(toHex(skid));
      expect(toHex(p.spki)).toBe(toHex(key.spki));
      expect(await verifySignedBy(p, key.spki)).toBe(true);
      expect(await verifySignedBy(p, other.spki)).toBe(false);

      // node:crypto (OpenSSL-based X.509 parsing) accepts it
      const n = new nc.X509Certificate(der);
      expect(n.ca).toBe(true);
      expect(n.checkIssued(n)).toBe(true);
      expect(n.serialNumber.toLowerCase()).toBe(serial.replace(/:/g, ''));
      if (pss) {
        // workerd's node:crypto can't do PSS; @peculiar/x509 reads the PSS parameters itself
        expect(await new X509Certificate(der).verify({ signatureOnly: true })).toBe(true);
      } else if (bits === 224) {
        expect(nodeVerifies(der, key.spki)).toBe(true);
        expect(nodeVerifies(der, other.spki)).toBe(false);
      } else {
        expect(n.verify(n.publicKey)).toBe(true);
        expect(n.verify(new nc.X509Certificate(await selfSigned(other)).publicKey)).toBe(false);
        expect(await new X509Certificate(der).verify({ signatureOnly: true })).toBe(true);
      }
    });
  }
});

describe('chains', () => {
  it('root → intermediate → leaf: issuer names, AKIDs and signatures line up', async () => {
    const rootKey = await generateKey('ec', 384);
    const intKey = await generateKey('rsa', 2048);
    const leafKey = await generateKey('ed25519', 0);
    const rootDer = await selfSigned(rootKey, { subject: { ...emptySubject(), commonName: 'Root', organization: ['Coffer'] } });
    const intDer = await buildCertificate(
      template(intKey, { isCA: true, maxPathLength: 0, subject: { ...emptySubject(), commonName: 'Intermediate' } }),
      await issuerFor(rootDer, rootKey),
    );
    const leafDer = await buildCertificate(
      template(leafKey, { subject: { ...emptySubject(), commonName: 'leaf.example.com' }, sans: { ...emptySans(), dnsNames: ['leaf.example.com'] } }),
      await issuerFor(intDer, intKey),
    );
    const [root, int, leaf] = [rootDer, intDer, leafDer].map((d) => parseCertificate(d));
    expect(toHex(int.issuerDer)).toBe(toHex(root.subjectDer));
    expect(toHex(leaf.issuerDer)).toBe(toHex(int.subjectDer));
    expect(toHex(int.akid!)).toBe(toHex(root.skid!));
    expect(toHex(leaf.akid!)).toBe(toHex(int.skid!));
    expect(int.selfIssued).toBe(false);
    expect(int.pathLen).toBe(0);
    expect(int.signatureGoName).toBe('ECDSAWithSHA384');
    expect(leaf.signatureGoName).toBe('SHA256WithRSA');
    expect(await verifySignedBy(int, root.spki)).toBe(true);
    expect(await verifySignedBy(leaf, int.spki)).toBe(true);
    expect(await verifySignedBy(leaf, root.spki)).toBe(false);

    const [nRoot, nInt, nLeaf] = [rootDer, intDer, leafDer].map((d) => new nc.X509Certificate(d));
    expect(nInt.checkIssued(nRoot)).toBe(true);
    expect(nLeaf.checkIssued(nInt)).toBe(true);
    expect(nLeaf.checkIssued(nRoot)).toBe(false);
    expect(nInt.verify(nRoot.publicKey)).toBe(true);
    expect(nLeaf.verify(nInt.publicKey)).toBe(true);
    expect(nLeaf.ca).toBe(false);
  });

  it('a skid override is written, and children use the issuer skid as AKID', async () => {
    const key = await generateKey('ec', 256);
    const skid = new Uint8Array(20).fill(7);
    const der = await selfSigned(key, { skid });
    const p = parseCertificate(der);
    expect(toHex(p.skid!)).toBe('07'.repeat(20));
    expect(toHex(p.akid!)).toBe('07'.repeat(20));
    const leaf = parseCertificate(await buildCertificate(template(await generateKey('ec', 256)), await issuerFor(der, key)));
    expect(toHex(leaf.akid!)).toBe('07'.repeat(20));
  });
});

describe('extensions', () => {
  it('writes every extension type the way Vault/Go do, in Go’s order', async () => {
    const key = await generateKey('ec', 256);
    const der = await selfSigned(key, {
      subject: {
        commonName: 'ca.example.com',
        ou: ['Unit'],
        organization: ['Org B', 'Org A'],
        country: ['US'],
        locality: ['Springfield'],
        province: ['State'],
        streetAddress: ['1 Main St'],
        postalCode: ['12345'],
        serialNumber: 'SN-42',
        userIds: ['uid-1', 'uid-2'],
      },
      sans: {
        dnsNames: ['ca.example.com', '*.example.com'],
        emails: ['ops@example.com'],
        ips: ['192.0.2.1', '2001:db8::5'],
        uris: ['spiffe://example.com/ca'],
        otherNames: [{ oid: '1.3.6.1.4.1.311.20.2.3', value: 'upn@example.com' }],
      },
      maxPathLength: 3,
      keyUsage: ['digitalsignature', 'KeyEncipherment'],
      extKeyUsage: ['ServerAuth', 'clientauth', 'OCSPSigning'],
      extKeyUsageOids: ['1.2.3.4.5'],
      permittedDnsDomains: ['.example.com', 'example.org'],
      policyIdentifiers: ['1.2.3.4', '{"oid":"1.2.3.5","cps":"https://example.com/cps","notice":"Be nice"}', 'not-an-oid'],
      issuingCertificates: ['http://pki.example.com/ca'],
      ocspServers: ['http://ocsp.example.com'],
      crlDistributionPoints: ['http://pki.example.com/crl', 'http://backup.example.com/crl'],
      deltaCrlDistributionPoints: ['http://pki.example.com/delta'],
    });
    const x = new X509Certificate(der);

    expect(x.extensions.map((e) => e.type)).toEqual([
      '2.5.29.15', // key usage
      '2.5.29.37', // EKU
      '2.5.29.19', // basic constraints
      '2.5.29.14', // SKID
      '2.5.29.35', // AKID
      '1.3.6.1.5.5.7.1.1', // AIA
      '2.5.29.17', // SAN
      '2.5.29.30', // name constraints
      '2.5.29.31', // CRL DP
      '2.5.29.32', // policies
      '2.5.29.46', // freshest CRL
    ]);

    const ku = x.getExtension(KeyUsagesExtension)!;
    expect(ku.critical).toBe(true);
    // a CA gets CertSign|CRLSign, plus DigitalSignature when listed (KeyEncipherment is dropped)
    expect(ku.usages).toBe(KeyUsageFlags.digitalSignature | KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign);

    const eku = x.getExtension(ExtendedKeyUsageExtension)!;
    expect(eku.critical).toBe(false);
    expect(eku.usages).toEqual(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2', '1.3.6.1.5.5.7.3.9', '1.2.3.4.5']);

    const bc = x.getExtension(BasicConstraintsExtension)!;
    expect([bc.critical, bc.ca, bc.pathLength]).toEqual([true, true, 3]);

    const skid = toHex(await subjectKeyId(key.spki));
    expect(x.getExtension(SubjectKeyIdentifierExtension)!.keyId).toBe(skid);
    expect(x.getExtension(AuthorityKeyIdentifierExtension)!.keyId).toBe(skid);

    const aia = x.getExtension(AuthorityInfoAccessExtension)!;
    expect(aia.ocsp.map((g) => g.value)).toEqual(['http://ocsp.example.com']);
    expect(aia.caIssuers.map((g) => g.value)).toEqual(['http://pki.example.com/ca']);

    const san = x.getExtension(SubjectAlternativeNameExtension)!;
    expect(san.critical).toBe(false);
    expect(san.names.items.map((g) => [g.type, g.value])).toEqual([
      ['upn', 'upn@example.com'],
      ['dns', 'ca.example.com'],
      ['dns', '*.example.com'],
      ['email', 'ops@example.com'],
      ['ip', '192.0.2.1'],
      ['ip', '2001:db8::5'],
      ['url', 'spiffe://example.com/ca'],
    ]);

    const nce = x.getExtension('2.5.29.30')!;
    expect(nce.critical).toBe(true);
    const nameConstraints = AsnConvert.parse(nce.value, NameConstraints);
    expect(nameConstraints.permittedSubtrees!.map((s) => s.base.dNSName)).toEqual(['.example.com', 'example.org']);
    expect(nameConstraints.excludedSubtrees).toBeUndefined();

    const crl = x.getExtension(CRLDistributionPointsExtension)!;
    expect(crl.distributionPoints.map((dp) => dp.distributionPoint!.fullName!.map((g) => g.uniformResourceIdentifier))).toEqual([
      ['http://pki.example.com/crl'],
      ['http://backup.example.com/crl'],
    ]);

    const pol = x.getExtension(CertificatePolicyExtension)!;
    expect(pol.policies).toEqual(['1.2.3.4', '1.2.3.5']);
    const policies = AsnConvert.parse(pol.value, CertificatePolicies);
    expect(policies[0].policyQualifiers).toBeUndefined();
    const [cps, notice] = policies[1].policyQualifiers!;
    expect(cps.policyQualifierId).toBe('1.3.6.1.5.5.7.2.1');
    expect(notice.policyQualifierId).toBe('1.3.6.1.5.5.7.2.2');
    expect(AsnConvert.parse(notice.qualifier, UserNotice).explicitText!.utf8String).toBe('Be nice');

    const fresh = x.getExtension('2.5.29.46')!;
    expect(fresh.critical).toBe(false);
    expect(AsnConvert.parse(fresh.value, FreshestCRL)[0].distributionPoint!.fullName![0].uniformResourceIdentifier).toBe('http://pki.example.com/delta');

    // subject: Go's pkix.Name order, multi-valued O, serialNumber, then UIDs
    expect(new nc.X509Certificate(der).subject.split('\n')).toEqual([
      'C=US',
      'ST=State',
      'L=Springfield',
      'street=1 Main St',
      'postalCode=12345',
      'O=Org A + O=Org B',
      'OU=Unit',
      'CN=ca.example.com',
      'serialNumber=SN-42',
      'UID=uid-1',
      'UID=uid-2',
    ]);

    // and our parser maps it all back to Vault's vocabulary
    const p = parseCertificate(der);
    expect(p.subject).toEqual({
      commonName: 'ca.example.com',
      ou: ['Unit'],
      organization: ['Org A', 'Org B'],
      country: ['US'],
      locality: ['Springfield'],
      province: ['State'],
      streetAddress: ['1 Main St'],
      postalCode: ['12345'],
      serialNumber: 'SN-42',
      userIds: ['uid-1', 'uid-2'],
    });
    expect(p.keyUsage).toEqual(['DigitalSignature', 'CertSign', 'CRLSign']);
    expect(p.extKeyUsage).toEqual(['ServerAuth', 'ClientAuth', 'OCSPSigning']);
    expect(p.extKeyUsageOids).toEqual(['1.2.3.4.5']);
    expect(p.sans).toEqual({
      dnsNames: ['ca.example.com', '*.example.com'],
      emails: ['ops@example.com'],
      ips: ['192.0.2.1', '2001:db8::5'],
      uris: ['spiffe://example.com/ca'],
      otherNames: [{ oid: '1.3.6.1.4.1.311.20.2.3', value: 'upn@example.com' }],
    });
    expect(p.permittedDnsDomains).toEqual(['.example.com', 'example.org']);
    expect(p.extensions.map((e) => e.oid)).toEqual(x.extensions.map((e) => e.type));
    expect(toHex(p.extensions[0].der)).toBe(toHex(new Uint8Array(x.extensions[0].rawData)));
  });

  it('otherName values use [0] EXPLICIT UTF8String (OpenSSL’s form)', async () => {
    const key = await generateKey('ec', 256);
    const der = await selfSigned(key, { sans: { ...emptySans(), otherNames: [{ oid: '1.2.3.4', value: 'héllo' }] } });
    const san = new X509Certificate(der).getExtension(SubjectAlternativeNameExtension)!;
    const raw = new Uint8Array(san.value);
    // SEQUENCE { [0] { OID 1.2.3.4, [0] { UTF8String "héllo" } } }
    expect(toHex(raw)).toBe(`3011a00f06032a0304a008${'0c06'}${toHex(new TextEncoder().encode('héllo'))}`);
  });

  it('leaf defaults: no basic constraints, EKU, SAN or key usage unless asked; CA:FALSE on request', async () => {
    const caKey = await generateKey('ec', 256);
    const ca = await selfSigned(caKey);
    const issuer = await issuerFor(ca, caKey);
    const plain = new X509Certificate(await buildCertificate(template(await generateKey('ec', 256)), issuer));
    expect(plain.extensions.map((e) => e.type)).toEqual(['2.5.29.14', '2.5.29.35']);

    const withBc = new X509Certificate(
      await buildCertificate(template(await generateKey('ec', 256), { basicConstraintsForNonCA: true, keyUsage: ['DigitalSignature', 'bogus'] }), issuer),
    );
    const bc = withBc.getExtension(BasicConstraintsExtension)!;
    expect([bc.critical, bc.ca, bc.pathLength]).toEqual([true, false, undefined]);
    expect(toHex(new Uint8Array(bc.value))).toBe('3000'); // empty SEQUENCE, as Go writes CA:FALSE
    expect(withBc.getExtension(KeyUsagesExtension)!.usages).toBe(KeyUsageFlags.digitalSignature);
  });

  it('a CA without DigitalSignature in its list gets just CertSign|CRLSign; a leaf gets its list as given', async () => {
    const key = await generateKey('ec', 256);
    const ca = new X509Certificate(await selfSigned(key, { keyUsage: ['KeyAgreement', 'DataEncipherment'] }));
    expect(ca.getExtension(KeyUsagesExtension)!.usages).toBe(KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign);
    const withCsrUsages = new X509Certificate(await selfSigned(key, { keyUsage: [], caKeyUsageExtra: ['KeyAgreement'] }));
    expect(withCsrUsages.getExtension(KeyUsagesExtension)!.usages).toBe(KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign | KeyUsageFlags.keyAgreement);
    const leafDer = await buildCertificate(
      template(await generateKey('ec', 256), { keyUsage: ['KeyAgreement', 'DataEncipherment', 'EncipherOnly', 'DecipherOnly', 'ContentCommitment'] }),
      await issuerFor(await selfSigned(key), key),
    );
    const leaf = new X509Certificate(leafDer);
    expect(leaf.getExtension(KeyUsagesExtension)!.usages).toBe(
      KeyUsageFlags.keyAgreement | KeyUsageFlags.dataEncipherment | KeyUsageFlags.encipherOnly | KeyUsageFlags.decipherOnly | KeyUsageFlags.nonRepudiation,
    );
    expect(parseCertificate(leafDer).keyUsage).toEqual(['ContentCommitment', 'DataEncipherment', 'KeyAgreement', 'EncipherOnly', 'DecipherOnly']);
  });

  it('path length 0 is written explicitly and -1 leaves it out', async () => {
    const key = await generateKey('ec', 256);
    const zero = new X509Certificate(await selfSigned(key, { maxPathLength: 0 })).getExtension(BasicConstraintsExtension)!;
    expect(zero.pathLength).toBe(0);
    const none = new X509Certificate(await selfSigned(key, { maxPathLength: -1 })).getExtension(BasicConstraintsExtension)!;
    expect(none.pathLength).toBeUndefined();
    expect(parseCertificate(await selfSigned(key, { maxPathLength: -1 })).pathLen).toBe(-1);
  });

  it('marks the SAN critical when the subject is empty', async () => {
    const key = await generateKey('ec', 256);
    const der = await selfSigned(key, { subject: emptySubject(), sans: { ...emptySans(), dnsNames: ['x.example.com'] } });
    const x = new X509Certificate(der);
    expect(x.subject).toBe('');
    expect(x.getExtension(SubjectAlternativeNameExtension)!.critical).toBe(true);
  });

  it('the same SANs are critical or not by the subject of each certificate, in either order', async () => {
    const key = await generateKey('ec', 256);
    const sans = { ...emptySans(), dnsNames: ['same-sans.example.com'] };
    const critical = async (subject: SubjectFields): Promise<boolean> =>
      new X509Certificate(await selfSigned(key, { subject, sans })).getExtension(SubjectAlternativeNameExtension)!.critical;
    const named = { ...emptySubject(), commonName: 'named' };
    expect([await critical(named), await critical(emptySubject()), await critical(named), await critical(emptySubject())]).toEqual([false, true, false, true]);
  });

  it('copies extra extensions unless the template already sets that OID', async () => {
    const key = await generateKey('ec', 256);
    const custom = new AsnExtension({ extnID: '1.2.3.99', critical: false, extnValue: new OctetString(new Uint8Array([5, 0])) });
    const ku = new AsnExtension({ extnID: '2.5.29.15', critical: true, extnValue: new OctetString(new Uint8Array([3, 2, 7, 128])) });
    const der = await selfSigned(key, {
      keyUsage: ['CRLSign'],
      extraExtensions: [new Uint8Array(AsnConvert.serialize(custom)), new Uint8Array(AsnConvert.serialize(ku))],
    });
    const x = new X509Certificate(der);
    expect(x.extensions.filter((e) => e.type === '2.5.29.15')).toHaveLength(1);
    expect(x.getExtension(KeyUsagesExtension)!.usages).toBe(KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign);
    expect(toHex(new Uint8Array(x.getExtension('1.2.3.99')!.value))).toBe('0500');
    expect(x.extensions.at(-1)!.type).toBe('1.2.3.99');

    // Go's ExtraExtensions semantics on request: the extra one replaces the template's and goes last
    const over = new X509Certificate(
      await selfSigned(key, { keyUsage: ['CRLSign'], extraExtensionsOverride: true, extraExtensions: [new Uint8Array(AsnConvert.serialize(ku))] }),
    );
    expect(over.extensions.filter((e) => e.type === '2.5.29.15')).toHaveLength(1);
    expect(over.extensions.at(-1)!.type).toBe('2.5.29.15');
    expect(over.getExtension(KeyUsagesExtension)!.usages).toBe(KeyUsageFlags.digitalSignature);
  });
});

describe('subject names', () => {
  it('uses PrintableString where Go does and UTF8String otherwise (e.g. wildcards)', async () => {
    const key = await generateKey('ec', 256);
    const tags = async (cn: string): Promise<string[]> => {
      const p = parseCertificate(await selfSigned(key, { subject: { ...emptySubject(), commonName: cn } }));
      const name = AsnConvert.parse(p.subjectDer, AsnName);
      return name.flatMap((rdn) => rdn.map((atv) => (atv.value.printableString !== undefined ? 'printable' : atv.value.utf8String !== undefined ? 'utf8' : '?')));
    };
    expect(await tags('www.example.com')).toEqual(['printable']);
    expect(await tags('*.example.com')).toEqual(['utf8']);
    expect(await tags('A & B')).toEqual(['utf8']);
    expect(await tags('Zürich')).toEqual(['utf8']);
  });

  it('copies a verbatim subject Name byte for byte', async () => {
    const key = await generateKey('ec', 256);
    // CN before C, a TeletexString and a multi-valued RDN: nothing our own builder would produce
    const name = new AsnName([
      new RelativeDistinguishedName([new AttributeTypeAndValue({ type: '2.5.4.3', value: new AttributeValue({ teletexString: 'Odd CA' }) })]),
      new RelativeDistinguishedName([
        new AttributeTypeAndValue({ type: '2.5.4.10', value: new AttributeValue({ utf8String: 'Z' }) }),
        new AttributeTypeAndValue({ type: '2.5.4.11', value: new AttributeValue({ utf8String: 'A' }) }),
      ]),
      new RelativeDistinguishedName([new AttributeTypeAndValue({ type: '2.5.4.6', value: new AttributeValue({ printableString: 'DE' }) })]),
    ]);
    const nameDer = new Uint8Array(AsnConvert.serialize(name));
    const p = parseCertificate(await selfSigned(key, { subject: { der: nameDer } }));
    expect(toHex(p.subjectDer)).toBe(toHex(nameDer));
    expect(toHex(p.issuerDer)).toBe(toHex(nameDer));
    expect(p.subject.commonName).toBe('Odd CA');
    expect(p.subject.organization).toEqual(['Z']);
    expect(p.subject.ou).toEqual(['A']);
  });
});

describe('serials and validity', () => {
  it('encodes serials with a high first bit as positive integers', async () => {
    const key = await generateKey('ec', 256);
    const der = await selfSigned(key, { serial: '80:01' });
    expect(parseCertificate(der).serial).toBe('80:01');
    expect(new nc.X509Certificate(der).serialNumber).toBe('8001');
  });

  it('keeps UTCTime before 2050 and switches to GeneralizedTime after (9999-12-31T23:59:59Z)', async () => {
    const key = await generateKey('ec', 256);
    const notBefore = new Date('2024-05-06T07:08:09.500Z');
    const notAfter = new Date('9999-12-31T23:59:59Z');
    const der = await selfSigned(key, { notBefore, notAfter });
    const p = parseCertificate(der);
    expect(p.notBefore.toISOString()).toBe('2024-05-06T07:08:09.000Z');
    expect(p.notAfter.toISOString()).toBe('9999-12-31T23:59:59.000Z');
    const n = new nc.X509Certificate(der);
    expect(new Date(n.validTo).toISOString()).toBe('9999-12-31T23:59:59.000Z');
  });

  it('certificates sharing a notBefore or a notAfter each get their own validity', async () => {
    const key = await generateKey('ec', 256);
    const at = (iso: string): Date => new Date(iso);
    const pairs: [string, string][] = [
      ['2031-01-01T00:00:00.100Z', '2031-02-01T00:00:00Z'],
      ['2031-01-01T00:00:00.900Z', '2031-03-01T00:00:00Z'],
      ['2031-01-01T00:00:01Z', '2031-03-01T00:00:00Z'],
      ['2031-01-01T00:00:00Z', '2031-02-01T00:00:00.999Z'],
    ];
    for (const [from, to] of pairs) {
      const p = parseCertificate(await selfSigned(key, { notBefore: at(from), notAfter: at(to) }));
      expect([p.notBefore.toISOString(), p.notAfter.toISOString()]).toEqual([from.replace(/\.\d+Z$/, 'Z'), to.replace(/\.\d+Z$/, 'Z')].map((d) => at(d).toISOString()));
    }
  });

  it('a validity is encoded the same whatever its milliseconds: it is kept by the second', () => {
    const encode = (d: Date): string => toHex(new Uint8Array(AsnConvert.serialize(new Validity({ notBefore: d, notAfter: d }))));
    for (const iso of ['2024-05-06T07:08:09', '2049-12-31T23:59:59', '2050-01-01T00:00:00', '9999-12-31T23:59:59']) {
      const whole = new Date(`${iso}.000Z`);
      for (const ms of [1, 500, 999]) expect(encode(new Date(whole.getTime() + ms))).toBe(encode(whole));
    }
  });
});

describe('encodings kept from one certificate to the next', () => {
  const label = (rng: Rng, n: number): string => Array.from({ length: n }, () => rng.pick([...'abcdefghijklmnopqrstuvwxyz0123456789'])).join('');
  const hexSerial = (rng: Rng): string => {
    const n = rng.pick([1, 8, 19, 20]);
    const b = Array.from({ length: n }, () => rng.int(0, 255));
    b[0] = rng.chance(0.5) ? b[0] | 0x80 : Math.max(1, b[0] & 0x7f); // a high first bit gets a 0x00 before it
    return b.map((x) => x.toString(16).padStart(2, '0')).join(':');
  };

  it('certificates of many shapes in a row each read back as asked and re-encode to the same bytes', async () => {
    const rng = new Rng(0xce47);
    const issuers: { key: PkiKey; issuer: IssuerForSigning }[] = [];
    for (const [type, bits] of [['ec', 256], ['rsa', 2048], ['ed25519', 0]] as const) {
      const key = await generateKey(type, bits);
      issuers.push({ key, issuer: await issuerFor(await selfSigned(key, { subject: { ...emptySubject(), commonName: `${type} CA` } }), key) });
    }
    const leaves = [await generateKey('ec', 256), await generateKey('ec', 384), await generateKey('ed25519', 0)];
    for (let i = 0; i < 90; i++) {
      const { key: caKey, issuer } = rng.pick(issuers);
      const leaf = rng.pick(leaves);
      // Lengths that repeat, so shapes are reused, and that cross DER's 128-byte length boundary.
      const name = (): string => `${label(rng, rng.pick([3, 40, 110, 130]))}.example.com`;
      const commonName = rng.chance(0.15) ? '' : name();
      const dnsNames = Array.from({ length: rng.int(commonName ? 0 : 1, 3) }, name);
      const ips = rng.chance(0.2) ? [`10.0.${rng.int(0, 255)}.${rng.int(1, 254)}`] : [];
      const notBefore = new Date(Date.UTC(rng.int(2000, 2049), rng.int(0, 11), rng.int(1, 28), rng.int(0, 23), rng.int(0, 59), rng.int(0, 59), rng.int(0, 999)));
      const notAfter = new Date(notBefore.getTime() + rng.pick([3600, 86_400 * 30, 86_400 * 365 * 40]) * 1000 + rng.int(0, 999));
      const serial = hexSerial(rng);
      const organization = rng.chance(0.3) ? [`Org ${label(rng, rng.int(1, 20))}`] : [];
      const t = template(leaf, { serial, subject: { ...emptySubject(), commonName, organization }, sans: { ...emptySans(), dnsNames, ips }, notBefore, notAfter, keyUsage: ['DigitalSignature'], extKeyUsage: ['ServerAuth'] });
      const der = await buildCertificate(t, issuer);
      const what = `certificate ${i} (CN ${commonName.length} chars, ${dnsNames.length} DNS names, serial ${serial}, by ${caKey.type})`;

      // The library's own schema reads it and writes it back to the same bytes.
      expect(toHex(new Uint8Array(AsnConvert.serialize(AsnConvert.parse(der, AsnCertificate)))), what).toBe(toHex(der));
      const p = parseCertificate(der);
      expect(p.serial, what).toBe(serial);
      expect(p.subject.commonName, what).toBe(commonName);
      expect(p.subject.organization, what).toEqual(organization);
      expect(p.sans.dnsNames, what).toEqual(dnsNames);
      expect(p.sans.ips, what).toEqual(ips);
      expect(p.notBefore.getTime(), what).toBe(Math.floor(notBefore.getTime() / 1000) * 1000);
      expect(p.notAfter.getTime(), what).toBe(Math.floor(notAfter.getTime() / 1000) * 1000);
      expect(toHex(p.spki), what).toBe(toHex(leaf.spki));
      expect(toHex(p.skid!), what).toBe(toHex(await subjectKeyId(leaf.spki)));
      expect(toHex(p.akid!), what).toBe(toHex(issuer.skid));
      expect(toHex(p.issuerDer), what).toBe(toHex(issuer.subjectDer!));
      expect(p.keyUsage, what).toEqual(['DigitalSignature']);
      expect(p.extKeyUsage, what).toEqual(['ServerAuth']);
      expect(await verifySignedBy(p, caKey.spki), what).toBe(true);
      // OpenSSL's parser (node:crypto) reads the serial and the dates too.
      const n = new nc.X509Certificate(der);
      expect(BigInt(`0x${n.serialNumber}`), what).toBe(BigInt(`0x${serial.replace(/:/g, '')}`));
      expect(new Date(n.validTo).getTime(), what).toBe(p.notAfter.getTime());
    }
  });
});

describe('bad input', () => {
  it('rejects malformed IPs and OIDs', async () => {
    const key = await generateKey('ec', 256);
    await expect400(selfSigned(key, { sans: { ...emptySans(), ips: ['300.1.1.1'] } }), 'the value "300.1.1.1" is not a valid IP address');
    await expect400(selfSigned(key, { sans: { ...emptySans(), ips: ['nope'] } }), 'is not a valid IP address');
    await expect400(selfSigned(key, { extKeyUsageOids: ['1.2.x'] }), 'could not be parsed as a valid oid for an extended key usage');
    await expect400(selfSigned(key, { sans: { ...emptySans(), otherNames: [{ oid: 'abc', value: 'v' }] } }), 'invalid other SAN OID');
    await expect400(selfSigned(key, { spki: new Uint8Array([1, 2, 3]) }), 'failed to parse public key');
    await expect400(selfSigned(key, { extraExtensions: [new Uint8Array([1, 2])] }), 'invalid extension');
  });

  it('parseCertificate refuses garbage with a 400', async () => {
    await expect400(() => parseCertificate('no pem here'), 'unable to parse certificate');
    await expect400(() => parseCertificate('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----'), 'unable to parse certificate');
    await expect400(() => parseCertificate(new Uint8Array([48, 3, 1, 1, 0])), 'unable to parse certificate');
  });
});

describe('PEM helpers and foreign certificates', () => {
  it('certPem is trimmed, and parseCertificates reads every CERTIFICATE block of a bundle', async () => {
    const a = await generateKey('ec', 256);
    const b = await generateKey('rsa', 2048);
    const da = await selfSigned(a, { subject: { ...emptySubject(), commonName: 'A' } });
    const db = await selfSigned(b, { subject: { ...emptySubject(), commonName: 'B' } });
    const pem = certPem(da);
    expect(pem).toBe(pem.trim());
    expect(toHex(pemBlocks(pem)[0].der)).toBe(toHex(da));
    const bundle = `${encodePrivateKey(a, 'der', 'pem')}\n${pem}\n\n${certPem(db)}\n`;
    const certs = parseCertificates(bundle);
    expect(certs.map((c) => c.subject.commonName)).toEqual(['A', 'B']);
    expect(parseCertificate(bundle).pem).toBe(pem);
  });

  it('parses a certificate made by an independent generator (@peculiar/x509)', async () => {
    const keys = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
    const { ExtendedKeyUsageExtension: Eku, BasicConstraintsExtension: Bc, KeyUsagesExtension: Ku, SubjectAlternativeNameExtension: San } =
      await import('../../../../src/crypto/pki/x509');
    const cert = await X509CertificateGenerator.createSelfSigned({
      serialNumber: '00ab12',
      name: 'CN=foreign, O=Elsewhere',
      keys,
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-384' },
      extensions: [
        new Bc(true, 2, true),
        new Ku(KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign | KeyUsageFlags.nonRepudiation, true),
        new Eku(['1.3.6.1.5.5.7.3.3', '1.3.6.1.5.5.7.3.8', '1.9.9.9']),
        new San([
          { type: 'dns', value: 'foreign.example' },
          { type: 'ip', value: '10.1.2.3' },
          { type: 'email', value: 'a@b.c' },
          { type: 'url', value: 'https://x.y' },
        ]),
        await SubjectKeyIdentifierExtension.create(keys.publicKey),
      ],
    });
    const p = parseCertificate(cert.toString('pem'));
    expect(p.serial).toBe('ab:12');
    expect(p.subject.commonName).toBe('foreign');
    expect(p.subject.organization).toEqual(['Elsewhere']);
    expect(p.isCA).toBe(true);
    expect(p.pathLen).toBe(2);
    expect(p.keyUsage).toEqual(['ContentCommitment', 'CertSign', 'CRLSign']);
    expect(p.extKeyUsage).toEqual(['CodeSigning', 'TimeStamping']);
    expect(p.extKeyUsageOids).toEqual(['1.9.9.9']);
    expect(p.sans).toEqual({ dnsNames: ['foreign.example'], emails: ['a@b.c'], ips: ['10.1.2.3'], uris: ['https://x.y'], otherNames: [] });
    expect(p.signatureGoName).toBe('ECDSAWithSHA384');
    expect(p.akid).toBeNull();
    expect(toHex(p.skid!)).toBe(toHex(await subjectKeyId(p.spki)));
    expect(await verifySignedBy(p, p.spki)).toBe(true);
    // a CSR is not a certificate
    const csr = await Pkcs10CertificateRequestGenerator.create({ name: 'CN=x', keys, signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' } });
    await expect400(() => parseCertificate(new Uint8Array(csr.rawData)), 'unable to parse certificate');
  });
});

describe('Signer with @peculiar/x509 generators', () => {
  it('signer.key/algorithm sign through X509CertificateGenerator for every key type, P-224 included', async () => {
    for (const [type, bits, pss] of [['rsa', 2048, true], ['rsa', 2048, false], ['ec', 224, false], ['ec', 521, false], ['ed25519', 0, false]] as const) {
      const key = await generateKey(type, bits);
      const signer = await signerFor(key, 0, pss);
      const cert = await X509CertificateGenerator.create({
        serialNumber: '01',
        subject: 'CN=gen',
        issuer: 'CN=gen',
        publicKey: key.spki,
        signingKey: signer.key,
        signingAlgorithm: signer.algorithm,
      });
      const p = parseCertificate(new Uint8Array(cert.rawData));
      expect(p.signatureGoName, `${type} ${bits}`).toBe(signer.goName);
      expect(await verifySignedBy(p, key.spki), `${type} ${bits}`).toBe(true);
    }
  });
});
