// ECDSA signatures to DER through a template: every r and s, whatever its width and leading bytes,
// must give what the library writes from the integers' values, and real signatures must verify in
// an implementation other than ours (OpenSSL, through node:crypto).

import { describe, expect, it } from 'vitest';
import { verify as nodeVerify } from 'node:crypto';
import { ECDSASigValue } from '@peculiar/asn1-ecc';
import { AsnConvert, AsnIntegerBigIntConverter } from '@peculiar/asn1-schema';
import { ecdsaDer, ecdsaDerFromRaw } from '../../../src/crypto/ecdsa-der';
import { unsignedIntegerContent } from '../../../src/crypto/pki/encoded-sequence';
import { bytesEqual, toHex } from '../../../src/crypto/encoding';
import { Rng } from '../../helpers/fuzz/random';

const value = (b: Uint8Array): bigint => (b.length === 0 ? 0n : BigInt('0x' + toHex(b)));
// The library's own encoding of the two values (asn1js writes the minimal INTEGER of a bigint).
const libraryDer = (r: Uint8Array, s: Uint8Array): Uint8Array =>
  new Uint8Array(
    AsnConvert.serialize(
      new ECDSASigValue({
        r: AsnIntegerBigIntConverter.toASN(value(r)).valueBlock.valueHexView.slice().buffer,
        s: AsnIntegerBigIntConverter.toASN(value(s)).valueBlock.valueHexView.slice().buffer,
      }),
    ),
  );

/** An integer of `width` bytes shaped to hit the encoding's edges: leading zeros, a high bit, zero. */
function edgy(rng: Rng, width: number): Uint8Array {
  const b = Uint8Array.from({ length: width }, () => rng.int(0, 255));
  switch (rng.int(0, 5)) {
    case 0:
      b[0] |= 0x80; // needs a zero byte in front
      break;
    case 1:
      b.fill(0, 0, rng.int(1, width)); // leading zeros, possibly all but one
      break;
    case 2: {
      const zeros = rng.int(1, width - 1); // zeros, then a high bit
      b.fill(0, 0, zeros);
      b[Math.min(zeros, width - 1)] |= 0x80;
      break;
    }
    case 3:
      b.fill(0); // zero
      break;
    default:
      break;
  }
  return b;
}

describe('ecdsaDer', () => {
  it('writes what the library writes from the values, for every width and leading byte', () => {
    const rng = new Rng(0xec05a);
    for (let i = 0; i < 3000; i++) {
      const width = [1, 2, 28, 31, 32, 33, 48, 66, 130][rng.int(0, 8)];
      const r = edgy(rng, width);
      const s = edgy(rng, rng.chance(0.8) ? width : rng.int(1, 70));
      const got = ecdsaDer(r, s);
      const want = libraryDer(r, s);
      if (!bytesEqual(got, want)) expect({ r: toHex(r), s: toHex(s), got: toHex(got) }).toEqual({ r: toHex(r), s: toHex(s), got: toHex(want) });
      // And it reads back as the same values.
      const parsed = AsnConvert.parse(got, ECDSASigValue);
      expect(value(new Uint8Array(parsed.r))).toBe(value(r));
      expect(value(new Uint8Array(parsed.s))).toBe(value(s));
    }
  });

  it('gives each integer its minimal content', () => {
    const hex = (...b: number[]) => toHex(unsignedIntegerContent(Uint8Array.from(b)));
    expect(hex(0, 0, 0)).toBe('00');
    expect(hex(0)).toBe('00');
    expect(hex()).toBe('00');
    expect(hex(0, 0, 0x7f)).toBe('7f');
    expect(hex(0, 0, 0x80)).toBe('0080');
    expect(hex(0x80, 0)).toBe('008000');
    expect(hex(0x01, 0x80)).toBe('0180');
  });

  it('encodes real signatures that OpenSSL verifies, on every curve', async () => {
    for (const [curve, width] of [
      ['P-256', 32],
      ['P-384', 48],
      ['P-521', 66],
    ] as const) {
      const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: curve }, true, ['sign', 'verify'])) as CryptoKeyPair;
      const spki = new Uint8Array((await crypto.subtle.exportKey('spki', pair.publicKey)) as ArrayBuffer);
      for (let i = 0; i < 40; i++) {
        const data = new TextEncoder().encode(`message ${curve} ${i}`);
        const raw = new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, pair.privateKey, data));
        expect(raw.length).toBe(2 * width);
        const der = ecdsaDerFromRaw(raw);
        expect(bytesEqual(der, libraryDer(raw.subarray(0, width), raw.subarray(width)))).toBe(true);
        expect(nodeVerify('sha256', data, { key: Buffer.from(spki), format: 'der', type: 'spki', dsaEncoding: 'der' }, der)).toBe(true);
      }
    }
  });
});
