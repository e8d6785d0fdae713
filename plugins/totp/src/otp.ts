// RFC 6238 TOTP: RFC 4226's HOTP (HMAC of an 8-byte big-endian counter, dynamic truncation,
// modulo 10^digits) over the time step counter floor(unix seconds / period). The HMAC is WebCrypto's.

import { utf8 } from '../../../src/crypto/encoding';
import { constantTimeEqual } from '../../../src/crypto/timing';

export type Algorithm = 'SHA1' | 'SHA256' | 'SHA512';

export const ALGORITHMS: readonly Algorithm[] = ['SHA1', 'SHA256', 'SHA512'];

const WEBCRYPTO_HASH: Record<Algorithm, string> = { SHA1: 'SHA-1', SHA256: 'SHA-256', SHA512: 'SHA-512' };

export interface OtpParams {
  secret: Uint8Array;
  algorithm: Algorithm;
  /** 6 or 8. */
  digits: number;
  /** Seconds per time step. */
  period: number;
}

/** The time step counter at `nowMs` (ms since the epoch). */
export const counterAt = (nowMs: number, period: number): number => Math.floor(Math.floor(nowMs / 1000) / period);

/** Computes HOTP values for one key: the HMAC key is imported once for every counter asked. */
async function hotpFor(params: OtpParams): Promise<(counter: number) => Promise<string>> {
  const key = await crypto.subtle.importKey('raw', params.secret, { name: 'HMAC', hash: WEBCRYPTO_HASH[params.algorithm] }, false, ['sign']);
  const modulus = 10 ** params.digits;
  return async (counter) => {
    const message = new Uint8Array(8);
    new DataView(message.buffer).setBigUint64(0, BigInt(counter));
    const mac = new Uint8Array(await crypto.subtle.sign('HMAC', key, message));
    const offset = mac[mac.length - 1] & 0x0f;
    const binary = ((mac[offset] & 0x7f) << 24) | (mac[offset + 1] << 16) | (mac[offset + 2] << 8) | mac[offset + 3];
    return String(binary % modulus).padStart(params.digits, '0');
  };
}

/** The code for the time step that contains `nowMs`. */
export async function totpCode(params: OtpParams, nowMs: number): Promise<string> {
  return (await hotpFor(params))(counterAt(nowMs, params.period));
}

/**
 * Whether `code` is the code of the current time step or of one of the `skew` steps either side.
 * A code of the wrong length is simply not valid. Every candidate is compared in constant time.
 */
export async function totpValid(params: OtpParams, code: string, nowMs: number, skew: number): Promise<boolean> {
  if (code.length !== params.digits) return false;
  const hotp = await hotpFor(params);
  const current = counterAt(nowMs, params.period);
  const given = utf8(code);
  let valid = false;
  for (let step = -skew; step <= skew; step++) {
    const counter = current + step;
    if (counter < 0) continue;
    if (constantTimeEqual(utf8(await hotp(counter)), given)) valid = true;
  }
  return valid;
}
