// JSON numbers kept exactly as the client wrote them. Vault decodes request bodies with UseNumber,
// so 9007199254740993, 1.0 or 1e999 read back as sent; a plain JSON.parse would turn them into
// ...992, 1 and null. A number whose text the parsed double does not reproduce becomes an *exact
// number*: a plain object holding its source text under a key no JSON document can collide with
// unnoticed (parseJson refuses documents that use it). Plain objects cross Durable Object RPC
// (V8's JSON.rawJSON values do not: structured clone refuses them), and stringifyJson writes them
// back as the bare number text. Numbers that round-trip stay ordinary numbers, so only the rare
// ones cost anything.

import { CofferError } from './errors';

/** The key of an exact number's source text; "\u0000" cannot appear unescaped in JSON text. */
export const EXACT_NUMBER_KEY = '\u0000number';

export type ExactNumber = { readonly [EXACT_NUMBER_KEY]: string };

export const isExactNumber = (v: unknown): v is ExactNumber =>
  typeof v === 'object' && v !== null && typeof (v as Record<string, unknown>)[EXACT_NUMBER_KEY] === 'string';

/** The number as written by the client. */
export const exactText = (v: ExactNumber): string => v[EXACT_NUMBER_KEY];

/**
 * Text that may hold a number whose double does not reproduce it: a fraction or exponent, 16
 * or more digits, or -0. A false alarm (those characters inside a string) only costs the slower
 * parse; the escape "\u0000" sends a document that might use the reserved key there too.
 */
const MAYBE_INEXACT = /\d[.eE]|\d{16}|-0(?![.\deE])|\\u0000/;

type ReviverContext = { source?: string };

// Called once per parsed value, innermost first; the objects it makes are never passed to it, so
// an object it sees holding the reserved key came from the client.
function reviver(_key: string, value: unknown, context?: ReviverContext): unknown {
  if (typeof value === 'number') {
    const source = context?.source;
    return source !== undefined && String(value) !== source ? { [EXACT_NUMBER_KEY]: source } : value;
  }
  if (typeof value === 'object' && value !== null && !Array.isArray(value) && Object.hasOwn(value, EXACT_NUMBER_KEY)) {
    throw new CofferError(400, ['error parsing JSON', `the key ${JSON.stringify(EXACT_NUMBER_KEY)} is reserved`]);
  }
  return value;
}

/** JSON.parse that keeps every number exact (see above). Throws SyntaxError like JSON.parse. */
export function parseJson(text: string): unknown {
  return parseJsonExact(text, MAYBE_INEXACT.test(text));
}

/**
 * parseJson for a caller that has scanned the text itself: `risky` says whether it may hold an
 * inexact number or the escape "\u0000" (MAYBE_INEXACT's cases, outside strings for numbers).
 */
export function parseJsonExact(text: string, risky: boolean): unknown {
  return risky ? JSON.parse(text, reviver as (key: string, value: unknown) => unknown) : JSON.parse(text);
}

const replacer = (_key: string, value: unknown): unknown =>
  isExactNumber(value) ? (JSON as unknown as { rawJSON(text: string): unknown }).rawJSON(exactText(value)) : value;

/**
 * JSON.stringify that writes exact numbers back as their source text. The reserved key shows in
 * the plain output as "\u0000number": only then is the value written again with the replacer.
 */
export function stringifyJson(value: unknown): string {
  const text = JSON.stringify(value);
  return text !== undefined && text.includes('\\u0000number') ? JSON.stringify(value, replacer) : text;
}

/** An exact number as a JavaScript number (for typed fields: ttl, max_versions...). */
export const exactToNumber = (v: ExactNumber): number => Number(exactText(v));

const GO_ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/** Like Go's json.Encoder: HTML-safe escapes and a trailing newline. */
export function encodeJson(value: unknown): string {
  return stringifyJson(value).replace(/[<>&\u2028\u2029]/g, (ch) => GO_ESCAPES[ch]) + '\n';
}
