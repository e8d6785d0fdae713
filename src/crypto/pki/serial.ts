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

/** Bytes of a time-ordered serial given to the time (ms): six, big-endian (until the year 10889). */
const SERIAL_TIME_BYTES = 6;

/**
 * 20 bytes: the time in ms, then 112 random bits (the CA/Browser Forum asks for at least 64 from
 * a CSPRNG). Serials made one after another sort one after another in their stored (hex) form,
 * so a stored certificate's row is appended to SQLite's key index rather than dirtying a random
 * page of it. The time it reveals is no news: the certificate's notBefore carries it too. The
 * first byte stays in 0x01..0x7f from 2004 to the year 6429: the DER INTEGER is positive, 20 bytes
 * long.
 */
export function timeOrderedSerial(ms = Date.now()): string {
  const b = randomBytes(20);
  let t = Math.floor(ms);
  for (let i = SERIAL_TIME_BYTES - 1; i >= 0; i--) {
    b[i] = t % 256;
    t = Math.floor(t / 256);
  }
  return serialFromBytes(b);
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
