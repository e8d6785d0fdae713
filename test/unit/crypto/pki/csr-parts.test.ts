// The CSR walk against the full schema parse it stands in for: on every request it accepts, it must
// find the same parts; what it refuses goes to the full parse (csrParts), as every request did.

import { describe, expect, it } from 'vitest';
import { AsnConvert } from '@peculiar/asn1-schema';
import { toHex } from '../../../../src/crypto/encoding';
import { emptySans, emptySubject } from '../../../../src/crypto/pki/certificate';
import { buildCsr } from '../../../../src/crypto/pki/csr';
import { csrParts, csrPartsParsed, csrPartsWalked, type CsrParts } from '../../../../src/crypto/pki/csr-parts';
import { generateKey, signerFor, type PkiKeyType } from '../../../../src/crypto/pki/keys';
import {
  BasicConstraintsExtension,
  KeyUsageFlags,
  KeyUsagesExtension,
  Pkcs10CertificateRequestGenerator,
  SubjectAlternativeNameExtension,
} from '../../../../src/crypto/pki/x509';
import { Rng } from '../../../helpers/fuzz/random';

/** A parsed part re-encoded (a damaged value the parse let through may not encode: then why). */
function encoded(v: unknown): string {
  try {
    return toHex(new Uint8Array(AsnConvert.serialize(v)));
  } catch (e) {
    return `not encodable: ${String(e)}`;
  }
}

/** Every part as hex, the parsed ones re-encoded: equal views mean equal parts. */
const view = (p: CsrParts): string[] => [
  toHex(p.infoDer),
  toHex(p.subjectDer),
  encoded(p.subject),
  toHex(p.spki),
  encoded(p.publicKey),
  encoded(p.signatureAlgorithm),
  toHex(p.signature),
  ...p.extensions.map(encoded),
];

async function requests(): Promise<{ name: string; der: Uint8Array }[]> {
  const out: { name: string; der: Uint8Array }[] = [];
  const ours: [PkiKeyType, number, boolean][] = [
    ['ec', 256, true],
    ['ec', 384, false],
    ['rsa', 2048, true],
    ['ed25519', 0, true],
  ];
  for (const [type, bits, withExtensions] of ours) {
    const key = await generateKey(type, bits);
    const der = await buildCsr(
      {
        subject: { ...emptySubject(), commonName: 'csr.example.com', organization: ['Example'], ou: ['A', 'B'] },
        sans: withExtensions ? { ...emptySans(), dnsNames: ['csr.example.com', 'x.example.com'], ips: ['10.0.0.1'] } : emptySans(),
        keyUsage: withExtensions ? ['DigitalSignature', 'KeyAgreement'] : [],
        basicConstraintsCA: withExtensions,
      },
      key,
      await signerFor(key, 0, false),
    );
    out.push({ name: `ours ${type} ${bits}${withExtensions ? ' with extensions' : ''}`, der });
  }
  // Another library's encoder.
  const keys = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
  const req = await Pkcs10CertificateRequestGenerator.create({
    name: 'CN=other.example.com, O=Other',
    keys,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    extensions: [
      new BasicConstraintsExtension(false, undefined, true),
      new KeyUsagesExtension(KeyUsageFlags.digitalSignature, true),
      new SubjectAlternativeNameExtension([{ type: 'dns', value: 'other.example.com' }]),
    ],
  });
  out.push({ name: '@peculiar/x509', der: new Uint8Array(req.rawData) });
  return out;
}

describe('csrPartsWalked', () => {
  it('finds in well-formed requests exactly what the full parse finds', async () => {
    for (const { name, der } of await requests()) {
      expect(view(csrPartsWalked(der)), name).toEqual(view(csrPartsParsed(der)));
      expect(view(csrParts(der)), name).toEqual(view(csrPartsParsed(der)));
    }
  });

  it('accepts a damaged request only where the full parse does, and then finds the same parts', async () => {
    const rng = new Rng(0xc5a);
    let walked = 0;
    let refusedByWalk = 0;
    for (const { name, der } of await requests()) {
      for (let i = 0; i < 1000; i++) {
        const m = Array.from(der);
        const at = rng.int(0, m.length - 1);
        const how = rng.int(0, 4);
        if (how === 0) m[at] = rng.int(0, 255);
        else if (how === 1) m[at] = rng.pick([0x00, 0x7f, 0x80, 0x81, 0x82, 0xff]);
        else if (how === 2) m.length = at;
        else if (how === 3) m.push(...Array.from({ length: rng.int(1, 3) }, () => rng.int(0, 255)));
        else m.splice(at, 0, rng.int(0, 255));
        const bytes = Uint8Array.from(m);
        let parts: CsrParts;
        try {
          parts = csrPartsWalked(bytes);
        } catch {
          refusedByWalk++;
          continue; // csrParts then takes the full parse, as before the walk
        }
        walked++;
        let full: CsrParts;
        try {
          full = csrPartsParsed(bytes);
        } catch (e) {
          expect.fail(`${name}, mutation ${i} (kind ${how} at ${at}): the walk accepted what the full parse refuses (${String(e)})`);
        }
        expect(view(parts), `${name}, mutation ${i}`).toEqual(view(full));
      }
    }
    // Both sides came up: changed signatures and names keep the layout, broken lengths do not.
    expect(walked).toBeGreaterThan(300);
    expect(refusedByWalk).toBeGreaterThan(300);
  });

  it('leaves BER forms and trailing bytes to the full parse', async () => {
    const [{ der }] = await requests();
    // Trailing bytes: the schema parse reads the first element and ignores what follows.
    const trailing = Uint8Array.from([...der, 0, 0]);
    expect(() => csrPartsWalked(trailing)).toThrow();
    expect(view(csrParts(trailing))).toEqual(view(csrPartsParsed(trailing)));
    // The outer SEQUENCE in indefinite-length form (BER): 30 80 … 00 00.
    const headerLength = der[1] & 0x80 ? 2 + (der[1] & 0x7f) : 2;
    const indefinite = Uint8Array.from([0x30, 0x80, ...der.subarray(headerLength), 0, 0]);
    expect(() => csrPartsWalked(indefinite)).toThrow();
    expect(() => csrParts(indefinite)).not.toThrow();
    expect(view(csrParts(indefinite))).toEqual(view(csrPartsParsed(indefinite)));
  });
});
