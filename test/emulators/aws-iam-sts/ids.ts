// Identifiers in the shapes AWS issues: AKIA/ASIA access key ids (4 + 16 upper-case alphanumerics),
// AIDA/AGPA/AROA unique ids (4 + 17), 40-character secrets, long opaque session tokens, and the
// second-precision ISO 8601 timestamps IAM answers with.
import { randomBytes } from 'node:crypto';

const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
const SECRET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

function pick(alphabet: string, length: number): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[bytes[i] % alphabet.length];
  return out;
}

export const accessKeyId = (prefix: 'AKIA' | 'ASIA') => prefix + pick(UPPER, 16);
export const uniqueId = (prefix: 'AIDA' | 'AGPA' | 'AROA') => prefix + pick(UPPER, 17);
export const secretAccessKey = () => pick(SECRET, 40);
export const sessionToken = () => 'IQoJb3JpZ2luX2VjE' + randomBytes(270).toString('base64');

/** 2024-05-01T12:34:56Z: IAM's timestamps carry no fraction of a second. */
export const isoSeconds = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
