// Randomness: all from the platform CSPRNG (a time-ordered id puts the time before its random part).

const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export function randomBytes(n: number): Uint8Array {
  const out = new Uint8Array(n);
  // getRandomValues is capped at 65536 bytes per call.
  for (let i = 0; i < n; i += 65536) crypto.getRandomValues(out.subarray(i, Math.min(n, i + 65536)));
  return out;
}

/** Unbiased base62 string (rejection sampling), as Vault uses for token and accessor bodies. */
export function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const b of randomBytes(length * 2)) {
      if (b < 248) out += BASE62[b % 62]; // 248 = 4 * 62: keeps the distribution uniform
      if (out.length === length) break;
    }
  }
  return out;
}

/** Base62 digits in ASCII order, so that fixed-width numbers written with them sort as numbers. */
const ORDERED_BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** Characters of a time prefix: 62^7 ms reach the year 2081 (later times wrap around). */
export const TIME_PREFIX_LENGTH = 7;

/** `ms` as TIME_PREFIX_LENGTH ordered base62 digits: later times sort after earlier ones. */
export function timePrefix(ms: number): string {
  let out = '';
  let n = Math.floor(ms);
  for (let i = 0; i < TIME_PREFIX_LENGTH; i++) {
    out = ORDERED_BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

/**
 * `length` base62 characters: the time (ms), then random ones. Ids made one after another sort
 * one after another, so the rows stored under them are appended to SQLite's key index instead of
 * each dirtying a random page of it.
 */
export const timeOrderedBase62 = (length: number, now = Date.now()): string => timePrefix(now) + randomBase62(length - TIME_PREFIX_LENGTH);

export const randomUUID = (): string => crypto.randomUUID();

export function randomHex(bytes: number): string {
  return Array.from(randomBytes(bytes), (b) => b.toString(16).padStart(2, '0')).join('');
}
