/// <reference path="./qrcode-core.d.ts" />
// The QR code of a generated key's URL as a square PNG, for authenticator apps to scan. Error
// correction level M, as Vault uses; black modules on white, with the 4-module quiet zone the QR
// standard asks for whenever the image is large enough to hold it.

import qrcode from 'qrcode/lib/core/qrcode';
import { encode } from 'fast-png';
import { badRequest } from '../../../src/framework/errors';

/** Largest image side we draw (Vault has no limit; a huge one would exhaust the isolate's memory). */
export const MAX_QR_SIZE = 4096;

const QUIET_ZONE = 4;

/** A `size`×`size` PNG (1-bit grayscale) of the QR code of `text`. */
export function qrPng(text: string, size: number): Uint8Array {
  let modules;
  try {
    modules = qrcode.create(text, { errorCorrectionLevel: 'M' }).modules;
  } catch (e) {
    throw badRequest(`cannot make a QR code of the key's url: ${e instanceof Error ? e.message : String(e)}`);
  }
  const count = modules.size;
  if (size < count) throw badRequest(`the qr_size value is too small: this key's QR code needs at least ${count} pixels`);
  const withQuietZone = Math.floor(size / (count + 2 * QUIET_ZONE));
  const scale = withQuietZone >= 1 ? withQuietZone : Math.floor(size / count);
  const offset = Math.floor((size - count * scale) / 2);

  // Rows of packed bits, most significant first; 1 is white at bit depth 1.
  const rowBytes = Math.ceil(size / 8);
  const data = new Uint8Array(rowBytes * size).fill(0xff);
  for (let row = 0; row < count; row++) {
    for (let col = 0; col < count; col++) {
      if (!modules.get(row, col)) continue;
      for (let y = offset + row * scale; y < offset + (row + 1) * scale; y++) {
        for (let x = offset + col * scale; x < offset + (col + 1) * scale; x++) data[y * rowBytes + (x >> 3)] &= ~(0x80 >> (x & 7));
      }
    }
  }
  return encode({ width: size, height: size, data, depth: 1, channels: 1 });
}
