// DER templates: a shape encoded once by the library, each value's bytes copied into it, must give
// exactly what encoding the value directly gives, for every length (short and long DER lengths).

import { describe, expect, it } from 'vitest';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { ECParameters, ECPrivateKey } from '@peculiar/asn1-ecc';
import { Extension, SubjectKeyIdentifier } from '@peculiar/asn1-x509';
import { EncodingCache, templated, type DerTemplate, type Slot } from '../../../../src/crypto/pki/der-template';
import { EncodedSequence } from '../../../../src/crypto/pki/encoded-sequence';
import { bytesEqual } from '../../../../src/crypto/encoding';
import { Rng } from '../../../helpers/fuzz/random';

const der = (v: unknown): Uint8Array => new Uint8Array(AsnConvert.serialize(v));
const bytes = (rng: Rng, n: number): Uint8Array => Uint8Array.from({ length: n }, () => rng.int(0, 255));

// Three shapes: a nested OCTET STRING (an extension), a key with a BIT STRING inside an explicit
// tag, and a SEQUENCE of pre-encoded contents with an INTEGER (a TBS in small).
const extension = ([k]: Uint8Array[]): Uint8Array =>
  der(new Extension({ extnID: '2.5.29.14', critical: false, extnValue: new OctetString(der(new SubjectKeyIdentifier(k))) }));
const ecKey = ([point, scalar]: Uint8Array[]): Uint8Array =>
  der(new ECPrivateKey({ version: 1, privateKey: new OctetString(scalar), parameters: new ECParameters({ namedCurve: '1.2.840.10045.3.1.7' }), publicKey: point.slice().buffer }));
const sequenceOf = ([a, b, c]: Uint8Array[]): Uint8Array =>
  der(new EncodedSequence(Uint8Array.from([...der(new OctetString(a)), ...der(new EncodedSequence(b)), ...der(new EncodedSequence(der(new EncodedSequence(c))))])));

const SHAPES: { name: string; slots: Slot[]; encode: (parts: Uint8Array[]) => Uint8Array; parts: number }[] = [
  { name: 'extension', slots: [{ path: [1, 0] }], encode: extension, parts: 1 },
  { name: 'ec key', slots: [{ path: [3, 0], skip: 1 }, { path: [1] }], encode: ecKey, parts: 2 },
  { name: 'sequence', slots: [{ path: [0] }, { path: [1] }, { path: [2, 0] }], encode: sequenceOf, parts: 3 },
];

// Lengths either side of DER's length-byte boundaries.
const LENGTHS = [0, 1, 2, 20, 126, 127, 128, 129, 254, 255, 256, 257, 1000, 65535, 65536];

describe('templated', () => {
  it('writes what the direct encoding writes, for every shape and length, first use and reuse', () => {
    const rng = new Rng(0x7e3);
    const cache = new EncodingCache<DerTemplate>(1000);
    let cases = 0;
    for (const shape of SHAPES) {
      for (let round = 0; round < 40; round++) {
        const lengths = Array.from({ length: shape.parts }, () => rng.pick(LENGTHS) + (rng.chance(0.3) ? rng.int(0, 3) : 0));
        // The same lengths twice with different bytes: the second call fills the first's template.
        for (let again = 0; again < 2; again++) {
          const parts = lengths.map((n) => bytes(rng, n));
          const got = templated(cache, shape.name, shape.slots, parts, shape.encode);
          // bytesEqual: a deep toEqual over 64 KiB arrays takes seconds.
          if (!bytesEqual(got, shape.encode(parts))) expect.fail(`${shape.name}, lengths ${lengths.join(', ')}: differs from the direct encoding`);
          cases++;
        }
      }
    }
    expect(cases).toBe(SHAPES.length * 80);
  });

  it('keeps one template per shape name and lengths: other lengths make their own', () => {
    const cache = new EncodingCache<DerTemplate>(10);
    let encodes = 0;
    const counted = (parts: Uint8Array[]): Uint8Array => (encodes++, extension(parts));
    const slots = SHAPES[0].slots;
    for (const n of [20, 20, 32, 20, 32, 200]) templated(cache, 'skid', slots, [new Uint8Array(n).fill(n)], counted);
    expect(encodes).toBe(3);
    // The same lengths under another name are another shape.
    templated(cache, 'other', slots, [new Uint8Array(20)], counted);
    expect(encodes).toBe(4);
  });

  it('refuses a shape whose slot does not hold the part as it is', () => {
    const cache = new EncodingCache<DerTemplate>(10);
    // The part is written with a byte more than it has: not a place it can be copied into.
    const padded = ([k]: Uint8Array[]): Uint8Array => extension([Uint8Array.from([0, ...k])]);
    expect(() => templated(cache, 'padded', SHAPES[0].slots, [new Uint8Array(20)], padded)).toThrow('does not fill its slot');
    // A path into something that is not there.
    expect(() => templated(cache, 'deep', [{ path: [5] }], [new Uint8Array(20)], extension)).toThrow();
  });
});

describe('EncodingCache', () => {
  it('makes each entry once and drops the oldest beyond its size', () => {
    const cache = new EncodingCache<number>(3);
    const made: string[] = [];
    const get = (k: string): number => cache.get(k, () => (made.push(k), made.length));
    expect([get('a'), get('b'), get('a'), get('c')]).toEqual([1, 2, 1, 3]);
    get('d'); // drops a, the oldest
    expect(get('b')).toBe(2);
    expect(get('a')).toBe(5);
    expect(made).toEqual(['a', 'b', 'c', 'd', 'a']);
  });
});
