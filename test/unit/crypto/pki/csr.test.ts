// CSRs: our builder read back by @peculiar/x509, CSRs from @peculiar/x509 read by our parser,
// and every refusal parseCsr makes (with Vault's messages).

import * as nc from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { AsnConvert } from '@peculiar/asn1-schema';
import { CertificationRequest } from '@peculiar/asn1-csr';
import { SubjectPublicKeyInfo } from '@peculiar/asn1-x509';
import { asCofferError, CofferError } from '../../../../src/framework/errors';
import { toHex } from '../../../../src/crypto/encoding';
import { toPem } from '../../../../src/crypto/pem';
import { emptySans, emptySubject } from '../../../../src/crypto/pki/certificate';
import { buildCsr, parseCsr, type CsrTemplate } from '../../../../src/crypto/pki/csr';
import { generateKey, signerFor, type PkiKeyType } from '../../../../src/crypto/pki/keys';
import {
  BasicConstraintsExtension,
  ExtendedKeyUsageExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  Pkcs10CertificateRequest,
  Pkcs10CertificateRequestGenerator,
  SubjectAlternativeNameExtension,
} from '../../../../src/crypto/pki/x509';

async function expect400(p: Promise<unknown>, text: string): Promise<void> {
  let err: unknown;
  try {
    await p;
  } catch (e) {
    // Crypto throws its own error type; what a client gets is the framework's mapping of it.
    err = asCofferError(e);
  }
  expect(err).toBeInstanceOf(CofferError);
  expect((err as CofferError).status).toBe(400);
  expect((err as CofferError).errors[0]).toContain(text);
}

/** The extension of that class among the CSR's (x509 decodes them into typed classes). */
function ext<T>(req: Pkcs10CertificateRequest, type: abstract new (...a: never[]) => T): T {
  const found = req.extensions.find((e) => e instanceof type);
  expect(found).toBeDefined();
  return found as T;
}

const csrPem = (der: Uint8Array): string => toPem('CERTIFICATE REQUEST', der).trim();

const FULL: CsrTemplate = {
  subject: { ...emptySubject(), commonName: 'Intermediate CA', organization: ['Coffer'], country: ['NL'], userIds: ['u-1'] },
  sans: {
    dnsNames: ['int.example.com'],
    emails: ['ca@example.com'],
    ips: ['198.51.100.7'],
    uris: ['urn:example:ca'],
    otherNames: [{ oid: '1.3.6.1.4.1.311.20.2.3', value: 'ca@corp' }],
  },
  keyUsage: ['CertSign', 'CRLSign', 'DigitalSignature'],
  basicConstraintsCA: true,
};

describe('buildCsr → parseCsr', () => {
  const cases: [PkiKeyType, number, boolean][] = [
    ['rsa', 2048, false],
    ['rsa', 2048, true],
    ['ec', 224, false],
    ['ec', 256, false],
    ['ec', 384, false],
    ['ec', 521, false],
    ['ed25519', 0, false],
  ];
  for (const [type, bits, pss] of cases) {
    it(`${type} ${bits}${pss ? ' PSS' : ''}`, async () => {
      const key = await generateKey(type, bits);
      const der = await buildCsr(FULL, key, await signerFor(key, 0, pss));
      const p = await parseCsr(csrPem(der));
      expect(toHex(p.der)).toBe(toHex(der));
      expect(toHex(p.spki)).toBe(toHex(key.spki));
      expect(p.subject).toEqual({ ...emptySubject(), commonName: 'Intermediate CA', organization: ['Coffer'], country: ['NL'], userIds: ['u-1'] });
      expect(p.sans).toEqual(FULL.sans);
      expect(p.keyUsage).toEqual(['DigitalSignature', 'CertSign', 'CRLSign']);
      expect(p.basicConstraints).toEqual({ ca: true, pathLen: -1 });
      expect(p.extKeyUsage).toBeNull();
      expect(p.extensions.map((e) => e.oid)).toEqual(['2.5.29.17', '2.5.29.19', '2.5.29.15']);

      if (bits !== 224) {
        // an independent reader agrees, signature included
        const x = new Pkcs10CertificateRequest(der);
        expect(await x.verify()).toBe(true);
        expect(x.subject).toBe('C=NL, O=Coffer, CN=Intermediate CA, 0.9.2342.19200300.100.1.1=u-1');
        const bc = ext(x, BasicConstraintsExtension);
        expect([bc.critical, bc.ca, bc.pathLength]).toEqual([true, true, undefined]);
        const ku = ext(x, KeyUsagesExtension);
        expect(ku.critical).toBe(true);
        expect(ku.usages).toBe(KeyUsageFlags.digitalSignature | KeyUsageFlags.keyCertSign | KeyUsageFlags.cRLSign);
        expect(ext(x, SubjectAlternativeNameExtension).names.items.map((g) => g.value)).toEqual([
          'ca@corp',
          'int.example.com',
          'ca@example.com',
          '198.51.100.7',
          'urn:example:ca',
        ]);
      } else {
        // P-224: node:crypto checks the signature over the raw CertificationRequestInfo
        const req = AsnConvert.parse(der, CertificationRequest);
        const ok = nc.verify('sha256', new Uint8Array(req.certificationRequestInfoRaw!), { key: Buffer.from(key.spki), format: 'der', type: 'spki' }, new Uint8Array(req.signature));
        expect(ok).toBe(true);
      }
    });
  }

  it('leaves out the extension request when there is nothing to ask for', async () => {
    const key = await generateKey('ec', 256);
    const der = await buildCsr({ subject: { ...emptySubject(), commonName: 'bare' }, sans: emptySans(), keyUsage: [], basicConstraintsCA: false }, key, await signerFor(key, 0, false));
    const p = await parseCsr(csrPem(der));
    expect(p.keyUsage).toBeNull();
    expect(p.extKeyUsage).toBeNull();
    expect(p.basicConstraints).toBeNull();
    expect(p.extensions).toEqual([]);
    expect(p.sans).toEqual(emptySans());
    const req = AsnConvert.parse(der, CertificationRequest);
    expect(req.certificationRequestInfo.attributes).toHaveLength(0);
    expect(await new Pkcs10CertificateRequest(der).verify()).toBe(true);
  });

  it('marks the SAN critical when the subject is empty', async () => {
    const key = await generateKey('ec', 256);
    const der = await buildCsr({ subject: emptySubject(), sans: { ...emptySans(), dnsNames: ['a.b'] }, keyUsage: [], basicConstraintsCA: false }, key, await signerFor(key, 0, false));
    expect(ext(new Pkcs10CertificateRequest(der), SubjectAlternativeNameExtension).critical).toBe(true);
  });
});

describe('parseCsr on CSRs from elsewhere', () => {
  it('reads @peculiar/x509-generated CSRs, keeping the subject bytes verbatim', async () => {
    const keys = (await crypto.subtle.generateKey({ name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-384' }, true, ['sign', 'verify'])) as CryptoKeyPair;
    const req = await Pkcs10CertificateRequestGenerator.create({
      name: 'CN=leaf.example.com, OU=Ops, O=Example',
      keys,
      signingAlgorithm: { name: 'RSASSA-PKCS1-v1_5' },
      extensions: [
        new BasicConstraintsExtension(true, 1, true),
        new KeyUsagesExtension(KeyUsageFlags.digitalSignature | KeyUsageFlags.keyAgreement, true),
        new ExtendedKeyUsageExtension(['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2', '1.7.7.7']),
        new SubjectAlternativeNameExtension([{ type: 'dns', value: 'leaf.example.com' }, { type: 'ip', value: '::1' }]),
      ],
    });
    const p = await parseCsr(req.toString('pem'));
    expect(toHex(p.subjectDer)).toBe(toHex(new Uint8Array(req.subjectName.toArrayBuffer())));
    expect(p.subject.commonName).toBe('leaf.example.com');
    expect(p.subject.ou).toEqual(['Ops']);
    expect(p.basicConstraints).toEqual({ ca: true, pathLen: 1 });
    expect(p.keyUsage).toEqual(['DigitalSignature', 'KeyAgreement']);
    expect(p.extKeyUsage).toEqual(['ServerAuth', 'ClientAuth']);
    expect(p.extKeyUsageOids).toEqual(['1.7.7.7']);
    expect(p.sans.dnsNames).toEqual(['leaf.example.com']);
    expect(p.sans.ips).toEqual(['::1']);
    expect(p.extensions.map((e) => e.oid)).toEqual(['2.5.29.19', '2.5.29.15', '2.5.29.37', '2.5.29.17']);
    expect(toHex(p.extensions[2].der)).toBe(toHex(new Uint8Array(req.extensions[2].rawData)));
    expect(toHex(p.spki)).toBe(toHex(new Uint8Array(await crypto.subtle.exportKey('spki', keys.publicKey) as ArrayBuffer)));
  });
});

describe('parseCsr refusals', () => {
  it('blank input, no PEM, and non-CSR data', async () => {
    await expect400(parseCsr(''), '"csr" is empty');
    await expect400(parseCsr('  \n'), '"csr" is empty');
    await expect400(parseCsr('hello'), 'csr contains no data');
    await expect400(parseCsr(toPem('CERTIFICATE REQUEST', new Uint8Array([48, 3, 2, 1, 0]))), 'certificate request could not be parsed: ');
    await expect400(parseCsr(toPem('CERTIFICATE REQUEST', new Uint8Array([1, 2, 3]))), 'certificate request could not be parsed: ');
  });

  it('a tampered CSR (subject or signature) fails its self-signature check', async () => {
    for (const [type, bits] of [['rsa', 2048], ['ec', 256], ['ec', 224], ['ed25519', 0]] as const) {
      const key = await generateKey(type, bits);
      const der = await buildCsr(FULL, key, await signerFor(key, 0, false));
      expect((await parseCsr(csrPem(der))).subject.commonName).toBe('Intermediate CA');

      const badSig = new Uint8Array(der);
      badSig[badSig.length - 1] ^= 1;
      await expect400(parseCsr(csrPem(badSig)), 'request signature invalid');

      const badSubject = new Uint8Array(der);
      const at = toHex(badSubject).indexOf(toHex(new TextEncoder().encode('Intermediate CA'))) / 2;
      expect(at).toBeGreaterThan(0);
      badSubject[at] = 'X'.charCodeAt(0);
      await expect400(parseCsr(csrPem(badSubject)), 'request signature invalid');
    }
  });

  it('a CSR whose key belongs to someone else fails the check', async () => {
    const key = await generateKey('ec', 256);
    const other = await generateKey('ec', 256);
    const der = await buildCsr(FULL, { ...key, spki: other.spki }, await signerFor(key, 0, false));
    await expect400(parseCsr(csrPem(der)), 'request signature invalid');
  });

  it('an unsupported public key algorithm gets Vault’s refusal', async () => {
    const key = await generateKey('ec', 256);
    const der = await buildCsr(FULL, key, await signerFor(key, 0, false));
    const req = AsnConvert.parse(der, CertificationRequest);
    const x25519 = nc.generateKeyPairSync('x25519').publicKey.export({ format: 'der', type: 'spki' });
    req.certificationRequestInfo.subjectPKInfo = AsnConvert.parse(x25519, SubjectPublicKeyInfo);
    delete req.certificationRequestInfoRaw;
    await expect400(parseCsr(csrPem(new Uint8Array(AsnConvert.serialize(req)))), 'Refusing to sign CSR with empty PublicKey');
  });
});
