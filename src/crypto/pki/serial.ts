// Certificate serial numbers. Vault shows them as colon-separated lowercase hex of the minimal
// big-endian bytes (Go's big.Int.Bytes()), and stores them under the hyphenated form.

import { fromHex, toHex } from '../encoding';
import { randomBytes } from '../random';

/** Colon lowercase hex of big-endian bytes, leading zero bytes dropped (at least one byte kept). */
export function serialFromBytes(bytes: Uint8Array): string {
  let start = 0;
  while (start < bytes.length - 1 && bytes[start] === 0) start++;
  const hex = toHex(bytes.subarray(start));
  return hex.match(/../g)?.join(':') ?? '';
}

/** Uniform in [1, 2^159): 20 random bytes with the top bit cleared, so the DER INTEGER stays positive and ≤ 20 bytes. */
export function randomSerial(): string {
  for (;;) {
    const b = randomBytes(20);
    b[0] &= 0x7f;
    if (b.some((x) => x !== 0)) return serialFromBytes(b);
  }
}

/** Colon or hyphen form, any case, groups of two hex digits → colon lowercase; null if malformed. */
export function normalizeSerial(input: string): string | null {
  const s = input.trim().toLowerCase();
  if (!/^[0-9a-f]{2}([:-][0-9a-f]{2})*$/.test(s)) return null;
  return s.replace(/-/g, ':');
}

export const serialStorageKey = (colon: string): string => colon.replace(/:/g, '-');

export function serialBytes(colon: string): Uint8Array {
  const bytes = fromHex(colon.replace(/[:-]/g, ''));
  if (!bytes) throw new Error(`malformed serial: ${colon}`);
  return bytes;
}
