// X.509 v2 CRLs: structure as Vault writes it, checked with our parser and with @peculiar/x509's
// independent one (including the signature), plus the 100k-entry scale the engine needs.
import { describe, expect, it } from 'vitest';
import { AsnConvert } from '@peculiar/asn1-schema';
import {
  AttributeTypeAndValue,
  AttributeValue,
  CertificateList,
  Name as AsnName,
  RelativeDistinguishedName,
} from '@peculiar/asn1-x509';
import { buildCrl, parseCrl, type CrlEntry, type CrlParams } from '../../../../src/crypto/pki/crl';
import { generateKey, signerFor, verifySignature, type PkiKey, type PkiKeyType } from '../../../../src/crypto/pki/keys';
import { randomSerial } from '../../../../src/crypto/pki/serial';
import * as x509 from '../../../../src/crypto/pki/x509';

const issuerName = (dn: string): Uint8Array => new Uint8Array(new x509.Name(dn).toArrayBuffer());
const skid = Uint8Array.from({ length: 20 }, (_, i) => i + 1);
const at = (iso: string) => new Date(iso);
const hex = (b: Uint8Array | ArrayBuffer) => Buffer.from(b instanceof Uint8Array ? b : new Uint8Array(b)).toString('hex');

async function params(key: PkiKey, extra: Partial<CrlParams> = {}): Promise<CrlParams> {
  return {
    issuerDer: issuerName('CN=Coffer Test CA, O=Coffer'),
    issuerSkid: skid,
    signer: await signerFor(key, 0, false),
    thisUpdate: at('2026-01-02T03:04:05.678Z'),
    nextUpdate: at('2026-01-05T03:04:05Z'),
    number: 7n,
    ...extra,
  };
}

/** The TBSCertList as asn1-x509 sees it (a second, tree-based parser). */
const tbsOf = (der: Uint8Array) => AsnConvert.parse(der, CertificateList).tbsCertList;

const keyCache = new Map<string, Promise<PkiKey>>();
const key = (type: PkiKeyType, bits: number) => {
  const k = `${type}${bits}`;
  if (!keyCache.has(k)) keyCache.set(k, generateKey(type, bits));
  return keyCache.get(k)!;
};

describe('buildCrl', () => {
  it('writes a signed v2 CRL with entries, AKID and a non-critical CRL Number (RSA)', async () => {
    const k = await key('rsa', 2048);
    const entries: CrlEntry[] = [
      { serial: '01:02:03', revocationTime: at('2025-12-31T23:59:59.999Z') },
      { serial: randomSerial(), revocationTime: at('2026-01-01T00:00:00Z') },
    ];
    const p = await params(k);
    const der = await buildCrl(p, entries);

    const crl = new x509.X509Crl(der);
    expect(crl.version).toBe(1); // v2
    expect(crl.issuer).toBe('CN=Coffer Test CA, O=Coffer');
    expect(crl.thisUpdate.toISOString()).toBe('2026-01-02T03:04:05.000Z');
    expect(crl.nextUpdate?.toISOString()).toBe('2026-01-05T03:04:05.000Z');
    expect(crl.signatureAlgorithm).toMatchObject({ name: 'RSASSA-PKCS1-v1_5', hash: { name: 'SHA-256' } });
    expect(await crl.verify({ publicKey: new x509.PublicKey(k.spki) })).toBe(true);
    expect(crl.entries.map((e) => e.serialNumber)).toEqual(entries.map((e) => e.serial.replace(/:/g, '')));
    expect(crl.entries.map((e) => e.revocationDate.toISOString())).toEqual(['2025-12-31T23:59:59.000Z', '2026-01-01T00:00:00.000Z']);
    // No entry extensions (no reason codes), as Vault.
    expect(tbsOf(der).revokedCertificates!.every((e) => e.crlEntryExtensions === undefined)).toBe(true);

    const exts = crl.extensions.map((e) => ({ type: e.type, critical: e.critical }));
    expect(exts).toEqual([
      { type: '2.5.29.35', critical: false },
      { type: '2.5.29.20', critical: false },
    ]);
    const akid = crl.extensions[0] as x509.AuthorityKeyIdentifierExtension;
    expect(akid.keyId).toBe(hex(skid));

    const parsed = parseCrl(der);
    expect(parsed.number).toBe(7n);
    expect(parsed.deltaBase).toBeNull();
    expect(parsed.akid).toEqual(skid);
    expect(parsed.freshestCrl).toEqual([]);
    expect(parsed.serials).toEqual(entries.map((e) => e.serial));
    expect(parsed.entries[0].revocationTime.toISOString()).toBe('2025-12-31T23:59:59.000Z');
    expect(parsed.thisUpdate).toEqual(crl.thisUpdate);
    expect(parsed.nextUpdate).toEqual(crl.nextUpdate);
    expect(parsed.issuerDer).toEqual(p.issuerDer);
    expect(await verifySignature(k.spki, parsed.signatureAlgorithm, parsed.tbsDer, parsed.signature)).toBe(true);
  });

  it.each([
    ['ec', 256, 'ECDSA', 'SHA-256'],
    ['ec', 384, 'ECDSA', 'SHA-384'],
    ['ec', 521, 'ECDSA', 'SHA-512'],
    ['ed25519', 0, 'Ed25519', undefined],
  ] as const)('signs with %s %i keys so the signature verifies', async (type, bits, name, hash) => {
    const k = await key(type, bits);
    const der = await buildCrl(await params(k), [{ serial: '0a', revocationTime: at('2026-01-01T00:00:00Z') }]);
    const crl = new x509.X509Crl(der);
    expect(crl.signatureAlgorithm).toMatchObject({ name });
    if (hash) expect(crl.signatureAlgorithm).toMatchObject({ hash: { name: hash } });
    const parsed = parseCrl(der);
    expect(await verifySignature(k.spki, parsed.signatureAlgorithm, parsed.tbsDer, parsed.signature)).toBe(true);
    // A changed byte in the signed part breaks the signature.
    const tampered = parsed.tbsDer.slice();
    tampered[tampered.length - 1] ^= 1;
    expect(await verifySignature(k.spki, parsed.signatureAlgorithm, tampered, parsed.signature)).toBe(false);
  });

  it('signs with RSA-PSS when the signer says so', async () => {
    const k = await key('rsa', 2048);
    const der = await buildCrl({ ...(await params(k)), signer: await signerFor(k, 384, true) }, []);
    const parsed = parseCrl(der);
    expect(parsed.signatureAlgorithm.algorithm).toBe('1.2.840.113549.1.1.10');
    expect(await verifySignature(k.spki, parsed.signatureAlgorithm, parsed.tbsDer, parsed.signature)).toBe(true);
  });

  it('leaves revokedCertificates out of an empty CRL', async () => {
    const der = await buildCrl(await params(await key('ec', 256)), []);
    const tbs = tbsOf(der);
    expect(tbs.revokedCertificates).toBeUndefined();
    expect(tbs.crlExtensions?.length).toBe(2);
    expect(parseCrl(der).serials).toEqual([]);
    expect(new x509.X509Crl(der).entries).toHaveLength(0);
  });

  it('encodes serials with the top bit set as positive integers and keeps their colon form', async () => {
    const serials = ['80', 'ff:00:01', '7f:ff', '9a:bc:de:f0:12:34:56:78:9a:bc:de:f0:12:34:56:78:9a:bc:de'];
    const der = await buildCrl(
      await params(await key('ec', 256)),
      serials.map((serial) => ({ serial, revocationTime: at('2026-01-01T00:00:00Z') })),
    );
    const raw = tbsOf(der).revokedCertificates!.map((e) => hex(e.userCertificate));
    expect(raw).toEqual(['0080', '00ff0001', '7fff', '009abcdef0123456789abcdef0123456789abcde']);
    expect(parseCrl(der).serials).toEqual(serials);
  });

  it('copies the issuer Name byte for byte (mixed string types, multi-valued RDN)', async () => {
    const atv = (type: string, value: Partial<AttributeValue>) => new AttributeTypeAndValue({ type, value: new AttributeValue(value) });
    const name = new AsnName([
      new RelativeDistinguishedName([atv('2.5.4.6', { printableString: 'DE' })]),
      new RelativeDistinguishedName([atv('2.5.4.10', { utf8String: 'Ünïcødé GmbH' }), atv('2.5.4.11', { printableString: 'PKI' })]),
      new RelativeDistinguishedName([atv('2.5.4.3', { teletexString: 'Legacy CA' })]),
    ]);
    const issuerDer = new Uint8Array(AsnConvert.serialize(name));
    const der = await buildCrl({ ...(await params(await key('ec', 256))), issuerDer }, []);
    expect(parseCrl(der).issuerDer).toEqual(issuerDer);
    expect(hex(der)).toContain(hex(issuerDer));
  });

  it('marks delta CRLs with a critical Delta CRL Indicator and carries Freshest CRL URLs', async () => {
    const k = await key('ec', 256);
    const urls = ['http://pki.example.com/v1/pki/crl/delta', 'ldap://ldap.example.com/cn=delta'];
    const der = await buildCrl(await params(k, { number: 12n, deltaBase: 11n, freshestCrl: urls }), []);
    const crl = new x509.X509Crl(der);
    expect(crl.extensions.map((e) => [e.type, e.critical])).toEqual([
      ['2.5.29.35', false],
      ['2.5.29.20', false],
      ['2.5.29.27', true],
      ['2.5.29.46', false],
    ]);
    const parsed = parseCrl(der);
    expect(parsed.number).toBe(12n);
    expect(parsed.deltaBase).toBe(11n);
    expect(parsed.freshestCrl).toEqual(urls);
    // Base CRL without deltas: no indicator, no Freshest CRL when no URLs are given.
    const base = parseCrl(await buildCrl(await params(k, { freshestCrl: [] }), []));
    expect(base.extensions.map((e) => e.oid)).toEqual(['2.5.29.35', '2.5.29.20']);
  });

  it('keeps CRL numbers beyond 2^53 exact', async () => {
    const big = 2n ** 70n + 12345n;
    const parsed = parseCrl(await buildCrl(await params(await key('ec', 256), { number: big, deltaBase: big - 1n }), []));
    expect(parsed.number).toBe(big);
    expect(parsed.deltaBase).toBe(big - 1n);
  });

  it('uses UTCTime before 2050 and GeneralizedTime from 2050', async () => {
    const der = await buildCrl(
      await params(await key('ec', 256), { nextUpdate: at('2051-06-01T00:00:00Z') }),
      [{ serial: '01', revocationTime: at('2049-12-31T23:59:59Z') }],
    );
    const tbs = tbsOf(der);
    expect(tbs.thisUpdate.utcTime).toBeDefined();
    expect(tbs.nextUpdate!.generalTime?.toISOString()).toBe('2051-06-01T00:00:00.000Z');
    expect(tbs.revokedCertificates![0].revocationDate.utcTime?.toISOString()).toBe('2049-12-31T23:59:59.000Z');
    expect(parseCrl(der).nextUpdate?.toISOString()).toBe('2051-06-01T00:00:00.000Z');
  });

  it('rejects malformed serials', async () => {
    await expect(buildCrl(await params(await key('ec', 256)), [{ serial: 'zz', revocationTime: new Date() }])).rejects.toThrow();
  });

  it('builds and parses back a 100,000-entry CRL; reports the time against X509CrlGenerator', async () => {
    const k = await key('ec', 256);
    const p = await params(k);
    const n = 100_000;
    const base = Date.parse('2026-01-01T00:00:00Z');
    const serials = Array.from({ length: n }, () => randomSerial());
    const entries = function* (): Generator<CrlEntry> {
      for (let i = 0; i < n; i++) yield { serial: serials[i], revocationTime: new Date(base + i * 1000) };
    };

    let t = performance.now();
    const der = await buildCrl(p, entries());
    const buildMs = performance.now() - t;
    t = performance.now();
    const parsed = parseCrl(der);
    const parseMs = performance.now() - t;

    expect(parsed.serials).toHaveLength(n);
    for (const i of [0, 1, 4242, 77_777, n - 1]) {
      expect(parsed.serials[i]).toBe(serials[i]);
      expect(parsed.entries[i].revocationTime.getTime()).toBe(base + i * 1000);
    }
    expect(await verifySignature(k.spki, parsed.signatureAlgorithm, parsed.tbsDer, parsed.signature)).toBe(true);

    // The library generator on a small list, for comparison (it is quadratic in the entry count).
    const small = 2_000;
    t = performance.now();
    await x509.X509CrlGenerator.create({
      issuer: 'CN=Coffer Test CA, O=Coffer',
      thisUpdate: p.thisUpdate,
      nextUpdate: p.nextUpdate,
      entries: serials.slice(0, small).map((s, i) => ({ serialNumber: s.replace(/:/g, ''), revocationDate: new Date(base + i * 1000) })),
      signingAlgorithm: p.signer.algorithm,
      signingKey: p.signer.key,
    });
    const genMs = performance.now() - t;
    t = performance.now();
    await buildCrl(p, serials.slice(0, small).map((serial, i) => ({ serial, revocationTime: new Date(base + i * 1000) })));
    const oursSmallMs = performance.now() - t;
    console.log(
      `CRL ${n} entries: build ${buildMs.toFixed(0)} ms, parse ${parseMs.toFixed(0)} ms, ${der.length} bytes; ` +
        `${small} entries: X509CrlGenerator ${genMs.toFixed(0)} ms vs buildCrl ${oursSmallMs.toFixed(0)} ms`,
    );
  }, 120_000);
});

describe('parseCrl', () => {
  it('rejects bytes that are not a CRL', async () => {
    expect(() => parseCrl(new Uint8Array([1, 2, 3]))).toThrow();
    expect(() => parseCrl(new Uint8Array([0x30, 0x00]))).toThrow();
    const der = await buildCrl(await params(await key('ec', 256)), []);
    expect(() => parseCrl(der.subarray(0, der.length - 1))).toThrow();
    const trailing = new Uint8Array(der.length + 1);
    trailing.set(der);
    expect(() => parseCrl(trailing)).toThrow();
  });
});
