// Shamir secret sharing over GF(2^8) (AES polynomial x^8+x^4+x^3+x+1).
// Share layout follows Vault: the y-bytes for every secret byte, then one x-coordinate byte.
// All field arithmetic is branch-free and table-free so timing does not depend on secret bytes.

import { randomBytes } from '../../crypto/random';

export class ShamirError extends Error {}

/** Multiplication in GF(2^8), constant time (fixed 8 rounds, masks instead of branches). */
export function gfMul(a: number, b: number): number {
  let p = 0;
  for (let i = 0; i < 8; i++) {
    p ^= -(b & 1) & a;
    const carry = -((a >> 7) & 1);
    a = ((a << 1) ^ (carry & 0x1b)) & 0xff;
    b >>= 1;
  }
  return p & 0xff;
}

/** Multiplicative inverse as a^254 (Fermat), a fixed square-and-multiply chain; inv(0) = 0. */
export function gfInv(a: number): number {
  let result = 1;
  let base = a;
  for (let e = 254; e > 0; e >>= 1) {
    // 254 is public, so branching on its bits leaks nothing about a.
    if (e & 1) result = gfMul(result, base);
    base = gfMul(base, base);
  }
  return result;
}

/** A random ordering of the non-zero x-coordinates 1..255 (Fisher-Yates with rejection sampling). */
function randomXCoordinates(count: number): number[] {
  const xs = Array.from({ length: 255 }, (_, i) => i + 1);
  for (let i = xs.length - 1; i > 0; i--) {
    const bound = 256 - (256 % (i + 1));
    let r: number;
    do r = randomBytes(1)[0];
    while (r >= bound);
    const j = r % (i + 1);
    [xs[i], xs[j]] = [xs[j], xs[i]];
  }
  return xs.slice(0, count);
}

export function split(secret: Uint8Array, parts: number, threshold: number): Uint8Array[] {
  if (!Number.isInteger(parts) || !Number.isInteger(threshold)) throw new ShamirError('parts and threshold must be integers');
  if (parts < threshold) throw new ShamirError('parts cannot be less than threshold');
  if (parts > 255) throw new ShamirError('parts cannot exceed 255');
  if (threshold < 2) throw new ShamirError('threshold must be at least 2');
  if (secret.length === 0) throw new ShamirError('cannot split an empty secret');

  const xs = randomXCoordinates(parts);
  const shares = xs.map((x) => {
    const share = new Uint8Array(secret.length + 1);
    share[secret.length] = x;
    return share;
  });
  const coeffs = new Uint8Array(threshold);
  for (let i = 0; i < secret.length; i++) {
    coeffs[0] = secret[i];
    coeffs.set(randomBytes(threshold - 1), 1);
    for (let s = 0; s < parts; s++) {
      // Horner's rule from the highest coefficient down.
      let y = 0;
      for (let c = threshold - 1; c >= 0; c--) y = gfMul(y, xs[s]) ^ coeffs[c];
      shares[s][i] = y;
    }
  }
  coeffs.fill(0);
  return shares;
}

export function combine(shares: Uint8Array[]): Uint8Array {
  if (shares.length < 2) throw new ShamirError('less than two parts cannot be used to reconstruct the secret');
  const len = shares[0].length;
  if (len < 2) throw new ShamirError('parts must be at least two bytes');
  const xs = new Set<number>();
  for (const s of shares) {
    if (s.length !== len) throw new ShamirError('all parts must be the same length');
    const x = s[len - 1];
    if (x === 0) throw new ShamirError('invalid part: zero x-coordinate');
    if (xs.has(x)) throw new ShamirError('duplicate part detected');
    xs.add(x);
  }
  const x = shares.map((s) => s[len - 1]);
  // Lagrange basis at 0: l_j = prod_{m != j} x_m / (x_m - x_j); subtraction is XOR.
  const basis = x.map((xj, j) => {
    let num = 1;
    let den = 1;
    x.forEach((xm, m) => {
      if (m === j) return;
      num = gfMul(num, xm);
      den = gfMul(den, xm ^ xj);
    });
    return gfMul(num, gfInv(den));
  });
  const secret = new Uint8Array(len - 1);
  for (let i = 0; i < len - 1; i++) {
    let acc = 0;
    for (let j = 0; j < shares.length; j++) acc ^= gfMul(shares[j][i], basis[j]);
    secret[i] = acc;
  }
  return secret;
}
