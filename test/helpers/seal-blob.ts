// Looking into and tampering with a managed-key seal's stored value (the pkcs11 and cloud KMS
// seal tests): its JSON, a field changed, one byte of a base64 field flipped, a byte search.
import { fromBase64, fromUtf8, toBase64, utf8 } from '../../src/crypto/encoding';

export const blobJson = (blob: Uint8Array) => JSON.parse(fromUtf8(blob)) as Record<string, unknown>;

export const withBlob = (blob: Uint8Array, change: (b: Record<string, unknown>) => void) => {
  const b = blobJson(blob);
  change(b);
  return utf8(JSON.stringify(b));
};

export function flipByteB64(b64: string, at: number): string {
  const bytes = fromBase64(b64)!;
  bytes[at] ^= 0x01;
  return toBase64(bytes);
}

export function contains(haystack: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= haystack.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}
