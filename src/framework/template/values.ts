// The value model the template engine works on, standing in for Go's reflect.Value.
//
//   undefined  an invalid value (Go's zero reflect.Value: a missing map key, an untyped nil)
//   null       a nil interface{} (a map entry or list element holding nil)
//   string     a Go string (UTF-16 here; byte-level operations go through UTF-8)
//   number     a Go int (always an integer)
//   GoFloat    a Go float64
//   boolean    a Go bool
//   unknown[]  a []interface{}
//   object     a map[string]interface{} (a plain object or a Map with string keys)
//
// Data handed to `render` is read lazily: numbers that are not integers become GoFloat,
// bigints become ints, anything unsupported (functions, symbols) reads as nil.

export class GoFloat {
  constructor(readonly value: number) {}
}

export type GoMap = Map<string, unknown> | Record<string, unknown>;
export type GoValue = undefined | null | string | number | boolean | GoFloat | unknown[] | GoMap;

export type Kind = 'invalid' | 'nil' | 'string' | 'int' | 'float' | 'bool' | 'slice' | 'map';

export function kindOf(v: GoValue): Kind {
  if (v === undefined) return 'invalid';
  if (v === null) return 'nil';
  switch (typeof v) {
    case 'string':
      return 'string';
    case 'number':
      return 'int';
    case 'boolean':
      return 'bool';
  }
  if (v instanceof GoFloat) return 'float';
  if (Array.isArray(v)) return 'slice';
  return 'map';
}

/** Go's name for the dynamic type of a value, as error messages and %T print it. */
export function typeName(v: GoValue): string {
  switch (kindOf(v)) {
    case 'invalid':
    case 'nil':
      return '<nil>';
    case 'string':
      return 'string';
    case 'int':
      return 'int';
    case 'float':
      return 'float64';
    case 'bool':
      return 'bool';
    case 'slice':
      return '[]interface {}';
    case 'map':
      return 'map[string]interface {}';
  }
}

/** Reads a value out of the caller's data into the template's value model. */
export function fromData(v: unknown): GoValue {
  switch (typeof v) {
    case 'undefined':
      return null;
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isInteger(v) ? v + 0 : new GoFloat(v); // `+ 0` folds -0 into 0
    case 'bigint':
      return Number(v);
    case 'object':
      return v as GoValue;
    default:
      return null;
  }
}

export const isMap = (v: GoValue): v is GoMap => kindOf(v) === 'map';

/** The map's keys in Go's fmtsort order (byte order of the UTF-8 encoding). */
export function mapKeys(m: GoMap): string[] {
  const keys = m instanceof Map ? [...m.keys()].filter((k) => typeof k === 'string') : Object.keys(m);
  return keys.sort(compareStrings);
}

export function mapLookup(m: GoMap, key: string): { found: boolean; value: GoValue } {
  if (m instanceof Map) {
    return m.has(key) ? { found: true, value: fromData(m.get(key)) } : { found: false, value: undefined };
  }
  return Object.prototype.hasOwnProperty.call(m, key) ? { found: true, value: fromData(m[key]) } : { found: false, value: undefined };
}

export const mapSize = (m: GoMap): number => mapKeys(m).length;

/** Go's isTrue: the zero value of a type is false; so are nil and the invalid value. */
export function isTrue(v: GoValue): boolean {
  switch (kindOf(v)) {
    case 'invalid':
    case 'nil':
      return false;
    case 'string':
      return (v as string).length > 0;
    case 'int':
      return v !== 0;
    case 'float':
      return (v as GoFloat).value !== 0;
    case 'bool':
      return v as boolean;
    case 'slice':
      return (v as unknown[]).length > 0;
    case 'map':
      return mapSize(v as GoMap) > 0;
  }
}

// ---------------------------------------------------------------------------------------------
// Strings as Go sees them: sequences of UTF-8 bytes.

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const utf8 = (s: string): Uint8Array => encoder.encode(s);
export const fromUtf8 = (b: Uint8Array): string => decoder.decode(b);
export const byteLength = (s: string): number => encoder.encode(s).length;

/** The first `n` bytes of `s`, backing off to a character boundary rather than splitting a character. */
export function utf8Prefix(bytes: Uint8Array, n: number): Uint8Array {
  let end = Math.min(n, bytes.length);
  // A continuation byte (10xxxxxx) at the cut means the cut is inside a character.
  if (end < bytes.length) while (end > 0 && (bytes[end] & 0xc0) === 0x80) end--;
  return bytes.subarray(0, end);
}

/** Compares two strings in the byte order of their UTF-8 encodings (which is code point order). */
export function compareStrings(a: string, b: string): number {
  if (a === b) return 0;
  const ia = a[Symbol.iterator]();
  const ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next();
    const y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0) ?? 0;
    const cy = y.value.codePointAt(0) ?? 0;
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}

export const runeCount = (s: string): number => {
  let n = 0;
  for (const _ of s) n++;
  return n;
};
