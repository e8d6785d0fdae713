// Decoding of unseal/recovery key shares as clients send them (hex or base64).
import { fromBase64, fromHex } from '../../crypto/encoding';
import { badRequest } from '../../framework/errors';

/** A recovery key is 32 bytes; a Shamir share of it is 33 (one x-coordinate byte appended). */
export function decodeKeyShare(key: string): Uint8Array {
  const s = key.trim();
  const bytes = (/^[0-9a-fA-F]+$/.test(s) && (s.length === 64 || s.length === 66) ? fromHex(s) : null) ?? fromBase64(s);
  if (!bytes || (bytes.length !== 32 && bytes.length !== 33)) throw badRequest("'key' must be a valid hex or base64 string");
  return bytes;
}
