// custom_metadata: a secret's user-defined string map. Vault's limits: at most 64 keys, keys of
// 1..128 bytes, values of 1..512 bytes, printable characters only; all violations are reported
// together in one multierror message.

import { utf8 } from '../../../crypto/encoding';
import { badRequest, multierror } from '../../../framework/errors';
import { exactText, isExactNumber } from '../../../framework/json-numbers';

const PREFIX = 'custom_metadata validation failed';
export const MAX_KEYS = 64;
export const MAX_KEY_BYTES = 128;
export const MAX_VALUE_BYTES = 512;

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]*$/u;

/**
 * The request's map as strings, weakly typed like Vault (numbers and booleans become strings).
 * For a patch, null values survive: they remove keys. Nested values are refused.
 */
export function parseCustomMetadata(raw: Record<string, unknown>, patch: boolean): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(raw)) {
    let s: string | null;
    if (v === null) s = patch ? null : '';
    else if (typeof v === 'string') s = v;
    else if (typeof v === 'number') s = String(v);
    else if (isExactNumber(v)) s = exactText(v);
    else if (typeof v === 'boolean') s = v ? '1' : '0';
    else throw badRequest(`${PREFIX}: value for key ${JSON.stringify(k)} must be a string`);
    Object.defineProperty(out, k, { value: s, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/** Every limit violation of the map (empty when it is valid). */
export function customMetadataErrors(map: Record<string, string>): string[] {
  const keys = Object.keys(map);
  if (keys.length > MAX_KEYS) return [`${PREFIX}: payload must contain at most ${MAX_KEYS} keys, provided ${keys.length}`];
  const errors: string[] = [];
  for (const key of keys.sort()) {
    const value = map[key];
    const q = JSON.stringify(key);
    const keyLen = utf8(key).length;
    const valueLen = utf8(value).length;
    if (keyLen === 0 || keyLen > MAX_KEY_BYTES) errors.push(`${PREFIX}: length of key ${q} is ${keyLen} but must be 0 < len(key) <= ${MAX_KEY_BYTES}`);
    if (valueLen === 0 || valueLen > MAX_VALUE_BYTES) {
      errors.push(`${PREFIX}: length of value for key ${q} is ${valueLen} but must be 0 < len(value) <= ${MAX_VALUE_BYTES}`);
    }
    if (!PRINTABLE.test(key)) errors.push(`${PREFIX}: key ${q} (${key}) contains unprintable characters`);
    if (!PRINTABLE.test(value)) errors.push(`${PREFIX}: value for key ${q} contains unprintable characters`);
  }
  return errors;
}

/** Throws Vault's 400 when the map breaks a limit. */
export function validateCustomMetadata(map: Record<string, string>): void {
  const errors = customMetadataErrors(map);
  if (errors.length > 0) throw badRequest(multierror(errors));
}

/** Drops the nulls of a patch (they only remove keys). */
export function withoutNulls(map: Record<string, string | null>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(map)) if (v !== null) Object.defineProperty(out, k, { value: v, enumerable: true, writable: true, configurable: true });
  return out;
}
