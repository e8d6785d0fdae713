// Byte/text encodings used on the wire. Strict decoders: anything malformed yields null,
// so callers can answer a 400 instead of silently decoding garbage.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const utf8 = (s: string): Uint8Array => encoder.encode(s);
export const fromUtf8 = (b: Uint8Array): string => decoder.decode(b);

/** The text of UTF-8 bytes, or null when they are not valid UTF-8 (no replacement characters). */
export function strictUtf8(b: Uint8Array): string | null {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: false }).decode(b);
  } catch {
    return null;
  }
}

// workerd has the native Uint8Array base64/hex methods (TC39 "Uint8Array to/from base64"): about
// 50 times faster than building a binary string for btoa, which showed in profiles (DR pages,
// ciphertexts, PEM). Node 20, where the client and end-to-end tests import this file, has not:
// there the portable code runs. Validation stays ours, so both accept exactly the same input.
interface NativeBytes {
  toBase64(): string;
  toHex(): string;
}
interface NativeBytesConstructor {
  fromBase64(s: string): Uint8Array;
  fromHex(s: string): Uint8Array;
}
const NATIVE = typeof (Uint8Array.prototype as Partial<NativeBytes>).toBase64 === 'function';
const nativeBytes = Uint8Array as unknown as NativeBytesConstructor;

export function toHex(bytes: Uint8Array): string {
  if (NATIVE) return (bytes as unknown as NativeBytes).toHex();
  let out = '';
  for (const b of bytes) out += b.toString(16).padStart(2, '0');
  return out;
}

export function fromHex(hex: string): Uint8Array | null {
  if (hex.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(hex)) return null;
  if (NATIVE) return nativeBytes.fromHex(hex);
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export function toBase64(bytes: Uint8Array): string {
  if (NATIVE) return (bytes as unknown as NativeBytes).toBase64();
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) {
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(bin);
}

/** Standard base64 without padding (Go's RawStdEncoding). */
export const toBase64Raw = (bytes: Uint8Array): string => toBase64(bytes).replace(/=+$/, '');

export const toBase64Url = (bytes: Uint8Array): string =>
  toBase64Raw(bytes).replace(/\+/g, '-').replace(/\//g, '_');

/** base64url (RFC 4648 §5; padding tolerated); null when it is not. */
export function fromBase64Url(s: string): Uint8Array | null {
  const bare = s.replace(/=+$/, '');
  return /^[A-Za-z0-9_-]*$/.test(bare) ? fromBase64(bare.replace(/-/g, '+').replace(/_/g, '/')) : null;
}

/** Decodes standard base64, with or without padding. */
export function fromBase64(b64: string): Uint8Array | null {
  const s = b64.trim();
  if (NATIVE) return fromBase64Native(s);
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.replace(/=+$/, '').length % 4 === 1) return null;
  try {
    const bin = atob(s.padEnd(Math.ceil(s.length / 4) * 4, '='));
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  } catch {
    return null;
  }
}

const EQUALS = 0x3d;

/**
 * The native decoder checks the alphabet itself, so no regex walks the text first (1.6 µs a KiB).
 * It also skips ASCII whitespace inside, which the portable path refuses: a decoded length short
 * of what the text's length gives means some was skipped (for lengths that are not 1 mod 4, the
 * decoded length floor(3n/4) grows with every character).
 */
function fromBase64Native(s: string): Uint8Array | null {
  let end = s.length;
  while (end > 0 && s.charCodeAt(end - 1) === EQUALS) end--;
  const pad = s.length - end;
  // Padding may be short or absent (as atob after padEnd), never more than the last group needs.
  if (end % 4 === 1 || pad > (4 - (end % 4)) % 4) return null;
  let out: Uint8Array;
  try {
    out = nativeBytes.fromBase64(pad > 0 ? s.slice(0, end) : s);
  } catch {
    return null;
  }
  return out.length === Math.floor((end * 3) / 4) ? out : null;
}

export function concatBytes(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** Byte equality of public data (secrets: constantTimeEqual in timing.ts). */
export const bytesEqual = (a: Uint8Array, b: Uint8Array): boolean => a.length === b.length && a.every((x, i) => x === b[i]);
