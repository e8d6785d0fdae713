// The wire encodings run on workerd's native Uint8Array base64/hex methods; they must accept and
// produce exactly what the portable code (Node, and before) did: compared here with a reference
// written from atob/btoa, on random bytes of every length class and on the padding edge cases.
import { describe, expect, it } from 'vitest';
import { fromBase64, fromHex, toBase64, toBase64Raw, toBase64Url, toHex } from '../../../src/crypto/encoding';

const reference = {
  toBase64: (d: Uint8Array) => btoa(Array.from(d, (b) => String.fromCharCode(b)).join('')),
  fromBase64(b64: string): number[] | null {
    const s = b64.trim();
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.replace(/=+$/, '').length % 4 === 1) return null;
    try {
      return Array.from(atob(s.padEnd(Math.ceil(s.length / 4) * 4, '=')), (c) => c.charCodeAt(0));
    } catch {
      return null;
    }
  },
};

describe('base64 and hex', () => {
  it('encodes and decodes random bytes of every length class as the reference does', () => {
    for (const n of [0, 1, 2, 3, 4, 5, 31, 32, 33, 700, 65_000]) {
      const d = crypto.getRandomValues(new Uint8Array(n));
      const b = toBase64(d);
      expect(b).toBe(reference.toBase64(d));
      expect(fromBase64(b)).toEqual(d);
      expect(fromBase64(toBase64Raw(d))).toEqual(d);
      expect(toBase64Url(d)).toBe(b.replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_'));
      expect(toHex(d)).toBe(Array.from(d, (x) => x.toString(16).padStart(2, '0')).join(''));
      expect(fromHex(toHex(d))).toEqual(d);
    }
  });

  it('encodes a view of a larger buffer, not the buffer', () => {
    const all = Uint8Array.from([1, 2, 3, 4, 5, 6]);
    expect(toBase64(all.subarray(2, 4))).toBe(reference.toBase64(Uint8Array.from([3, 4])));
    expect(toHex(all.subarray(4))).toBe('0506');
  });

  it.each(['', 'AB=', 'AB==', 'ABC=', 'ABC==', 'ABCD=', 'ABCD==', 'A', 'AB', 'ABC', 'ABCDE', 'ABCDEF=', ' QQ== ', 'QQ=\n', 'QR==', 'Q=Q=', 'QQ===', 'Q Q=', '****', '====', '=', 'QQ =', 'QQ= =', 'QQ Q', 'QUJD\tRA==', 'QU\nJD', 'QUJD\fQUJD', 'QQ\rQQ==', 'ab-_', 'QQ\u00e9=', 'QUJDRA'])(
    'decodes %j as the reference does (short or missing padding accepted, anything else refused)',
    (s) => {
      const got = fromBase64(s);
      expect(got === null ? null : Array.from(got)).toEqual(reference.fromBase64(s));
    },
  );

  it('decodes random strings of base64 characters, padding and whitespace as the reference does', () => {
    const alphabet = 'ABCDQRSTghij0189+/=  \n\t-_*';
    for (let n = 0; n < 20_000; n++) {
      let s = '';
      const len = Math.floor(Math.random() * 12);
      for (let i = 0; i < len; i++) s += alphabet[Math.floor(Math.random() * alphabet.length)];
      const got = fromBase64(s);
      expect(got === null ? null : Array.from(got), JSON.stringify(s)).toEqual(reference.fromBase64(s));
    }
  });

  it('refuses malformed hex', () => {
    for (const h of ['a', 'zz', '0g', ' 00']) expect(fromHex(h)).toBeNull();
    expect(fromHex('00FFaa')).toEqual(Uint8Array.from([0, 255, 170]));
  });
});
