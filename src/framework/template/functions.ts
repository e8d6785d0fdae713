// Vault's template functions (sdk/helper/template), with the same names, signatures and errors,
// and the full function table templates are parsed and run against.
//
// Strings are measured as Go measures them, in UTF-8 bytes: `truncate 10` keeps at most 10 bytes.
// Where Go would cut a multi-byte character in two (leaving invalid UTF-8), the cut backs off to
// the character boundary instead, so the result is never longer than asked.

import { sha256 } from '@noble/hashes/sha2.js';
import { toBase64, toHex } from '../../crypto/encoding';
import { randomBase62, randomUUID } from '../../crypto/random';
import { GO_BUILTINS } from './builtins';
import { type FuncSpec, FuncError, MAX_STRING } from './func-spec';
import { formatGoTime } from './go-time';
import { fromUtf8, utf8, utf8Prefix } from './values';

const sha256Hex = (bytes: Uint8Array): string => toHex(sha256(bytes));

function truncate(maxLen: number, str: string): string {
  if (maxLen <= 0) throw new FuncError(`max length must be > 0 but was ${maxLen}`);
  const bytes = utf8(str);
  return bytes.length > maxLen ? fromUtf8(utf8Prefix(bytes, maxLen)) : str;
}

/** Vault's truncateSHA256: the first maxLen-8 bytes, then 8 hex digits of the SHA-256 of the rest. */
function truncateSHA256(maxLen: number, str: string): string {
  if (maxLen <= 8) throw new FuncError(`max length must be > 8 but was ${maxLen}`);
  const bytes = utf8(str);
  if (bytes.length <= maxLen) return str;
  const cut = maxLen - 8;
  return fromUtf8(utf8Prefix(bytes, cut)) + sha256Hex(bytes.subarray(cut)).slice(0, 8);
}

/**
 * Go's strings.ToUpper/ToLower map each character on its own (simple case mapping): a character
 * whose case changes into several (ß → SS) stays as it is.
 */
function mapCase(s: string, upper: boolean): string {
  let out = '';
  for (const ch of s) {
    if (!upper && ch === '\u0130') {
      out += 'i'; // İ lowercases to a plain i in Go's simple mapping
      continue;
    }
    const mapped = upper ? ch.toUpperCase() : ch.toLowerCase();
    out += [...mapped].length === 1 ? mapped : ch;
  }
  return out;
}

/** strings.ReplaceAll; an empty `find` inserts the replacement around every character, as Go's does. */
function replaceAll(str: string, find: string, replacement: string): string {
  const parts = find === '' ? ['', ...str, ''] : str.split(find);
  const length = parts.reduce((n, p) => n + p.length, 0) + (parts.length - 1) * replacement.length;
  if (length > MAX_STRING) throw new FuncError(`result is longer than ${MAX_STRING} characters`);
  return parts.join(replacement);
}

function random(length: number): string {
  if (length === 0) return '';
  if (length < 0) throw new FuncError('runtime error: makeslice: cap out of range');
  if (length > MAX_STRING) throw new FuncError(`length ${length} is over the limit of ${MAX_STRING}`);
  return randomBase62(length);
}

export const VAULT_FUNCTIONS: Record<string, FuncSpec> = {
  random: { params: ['int'], fn: ([n]) => random(n as number) },
  truncate: { params: ['int', 'string'], fn: ([n, s]) => truncate(n as number, s as string) },
  truncate_sha256: { params: ['int', 'string'], fn: ([n, s]) => truncateSHA256(n as number, s as string) },
  uppercase: { params: ['string'], fn: ([s]) => mapCase(s as string, true) },
  lowercase: { params: ['string'], fn: ([s]) => mapCase(s as string, false) },
  replace: { params: ['string', 'string', 'string'], fn: ([find, replacement, s]) => replaceAll(s as string, find as string, replacement as string) },
  sha256: { params: ['string'], fn: ([s]) => sha256Hex(utf8(s as string)) },
  base64: { params: ['string'], fn: ([s]) => toBase64(utf8(s as string)) },
  unix_time: { params: [], fn: (_, { now }) => String(Math.floor(now.getTime() / 1000)) },
  unix_time_millis: { params: [], fn: (_, { now }) => String(Math.trunc(now.getTime())) },
  timestamp: { params: ['string'], fn: ([layout], { now }) => formatGoTime(now, layout as string) },
  uuid: { params: [], fn: () => randomUUID() },
};

/** Every function a template can call: Go's builtins and Vault's additions. */
export const FUNCTIONS: ReadonlyMap<string, FuncSpec> = new Map(Object.entries({ ...GO_BUILTINS, ...VAULT_FUNCTIONS }));
