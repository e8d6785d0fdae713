import { describe, expect, it } from 'vitest';
import { combine, gfInv, gfMul, ShamirError, split } from '../../../../src/core/barrier/shamir';
import { randomBytes } from '../../../../src/crypto/random';

/** Reference multiplication: schoolbook carry-less multiply, then reduce by 0x11b. */
function slowMul(a: number, b: number): number {
  let p = 0;
  for (let i = 0; i < 8; i++) if (b & (1 << i)) p ^= a << i;
  for (let bit = 14; bit >= 8; bit--) if (p & (1 << bit)) p ^= 0x11b << (bit - 8);
  return p;
}

describe('GF(2^8) arithmetic', () => {
  it('multiplies like the reference for every pair', () => {
    for (let a = 0; a < 256; a++) for (let b = 0; b < 256; b++) expect(gfMul(a, b)).toBe(slowMul(a, b));
  });
  it('inverts every non-zero element', () => {
    for (let a = 1; a < 256; a++) expect(gfMul(a, gfInv(a))).toBe(1);
    expect(gfInv(0)).toBe(0);
  });
  it('matches the AES field vector 0x53 * 0xCA = 1', () => {
    expect(gfMul(0x53, 0xca)).toBe(1);
  });
});

describe('split/combine', () => {
  const secret = randomBytes(32);

  it('produces shares of secret length + 1 with distinct non-zero x-coordinates', () => {
    const shares = split(secret, 5, 3);
    expect(shares).toHaveLength(5);
    const xs = shares.map((s) => s[32]);
    expect(new Set(xs).size).toBe(5);
    expect(xs).not.toContain(0);
    shares.forEach((s) => expect(s).toHaveLength(33));
  });

  it('recovers the secret from every threshold-sized subset', () => {
    const shares = split(secret, 5, 3);
    for (let a = 0; a < 5; a++)
      for (let b = a + 1; b < 5; b++)
        for (let c = b + 1; c < 5; c++) expect(combine([shares[a], shares[b], shares[c]])).toEqual(secret);
    expect(combine(shares)).toEqual(secret);
  });

  it('does not recover the secret from fewer shares than the threshold', () => {
    const shares = split(secret, 5, 3);
    expect(combine([shares[0], shares[1]])).not.toEqual(secret);
  });

  it('works at the extremes: 255 shares, threshold 255', () => {
    const small = randomBytes(4);
    const shares = split(small, 255, 255);
    expect(combine(shares)).toEqual(small);
  });

  it.each([
    [3, 4, 'parts cannot be less than threshold'],
    [256, 2, 'parts cannot exceed 255'],
    [3, 1, 'threshold must be at least 2'],
  ])('refuses parts=%i threshold=%i', (parts, threshold, message) => {
    expect(() => split(secret, parts, threshold)).toThrow(message);
  });

  it('refuses an empty secret', () => {
    expect(() => split(new Uint8Array(0), 3, 2)).toThrow(ShamirError);
  });

  it('refuses bad share sets', () => {
    const shares = split(secret, 3, 2);
    expect(() => combine([shares[0]])).toThrow('less than two parts');
    expect(() => combine([shares[0], shares[0]])).toThrow('duplicate part');
    expect(() => combine([shares[0], shares[1].subarray(1)])).toThrow('same length');
    const zeroX = shares[1].slice();
    zeroX[32] = 0;
    expect(() => combine([shares[0], zeroX])).toThrow('zero x-coordinate');
  });
});
