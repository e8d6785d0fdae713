// JSON in and out. Bodies are scanned for hostile structure (depth, entry counts, string sizes)
// before JSON.parse builds anything; responses are encoded like Go's json.Encoder.

import { CofferError } from '../framework/errors';
import { parseJsonExact } from '../framework/json-numbers';

export interface JsonLimits {
  maxDepth: number;
  maxObjectEntries: number;
  maxArrayElements: number;
  maxStringLength: number;
}

/** Vault's listener defaults for its JSON limits. */
export const DEFAULT_JSON_LIMITS: JsonLimits = {
  maxDepth: 500,
  maxObjectEntries: 10_000,
  maxArrayElements: 10_000,
  maxStringLength: 1024 * 1024,
};

const jsonError = (detail?: string): CofferError =>
  new CofferError(400, detail ? ['error parsing JSON', detail] : ['error parsing JSON']);

const QUOTE = 0x22;
const OPEN_OBJ = 0x7b;
const CLOSE_OBJ = 0x7d;
const OPEN_ARR = 0x5b;
const CLOSE_ARR = 0x5d;
const COMMA = 0x2c;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const LOWER_E = 0x65;
const UPPER_E = 0x45;

/** Digits in a row from which a number may not survive a double (parseJson's rule). */
const LONG_DIGIT_RUN = 16;

/**
 * One linear pass over the text; throws a 400 naming the limit that was exceeded. Returns whether
 * the text may hold a number its double does not reproduce (a fraction or exponent, 16 or more
 * digits, -0) or the escape "\u0000" (the exact-number key): only then does parseJsonExact need
 * its slower path. Strings are skipped with indexOf, natively: their contents are most of a large
 * body (base64 plaintexts), and no number is inside them.
 */
export function checkJsonLimits(text: string, limits: JsonLimits): boolean {
  const isObject: boolean[] = [];
  const counts: number[] = [];
  let risky = false;
  let digits = 0;
  // The next quote and backslash at or after the scan's place (-1: none left), searched again only
  // once the place passes them, so the whole scan stays linear however many escapes a string has.
  let quote = -1;
  let backslash = text.indexOf('\\');
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= ZERO && c <= NINE) {
      if (++digits >= LONG_DIGIT_RUN) risky = true;
      continue;
    }
    const afterDigit = digits > 0;
    digits = 0;
    switch (c) {
      case QUOTE: {
        const start = i + 1;
        let at = start;
        for (;;) {
          if (quote < at) quote = text.indexOf('"', at);
          if (quote < 0) return risky; // unterminated: JSON.parse refuses it
          if (backslash >= 0 && backslash < at) backslash = text.indexOf('\\', at);
          if (backslash < 0 || backslash > quote) break;
          if (text.startsWith('u0000', backslash + 1)) risky = true;
          at = backslash + 2;
        }
        if (quote - start > limits.maxStringLength) throw jsonError(`JSON string longer than ${limits.maxStringLength} characters`);
        i = quote;
        break;
      }
      case OPEN_OBJ:
      case OPEN_ARR:
        if (isObject.length >= limits.maxDepth) throw jsonError(`JSON nesting depth exceeds ${limits.maxDepth}`);
        isObject.push(c === OPEN_OBJ);
        counts.push(1);
        break;
      case CLOSE_OBJ:
      case CLOSE_ARR:
        isObject.pop();
        counts.pop();
        break;
      case COMMA: {
        const top = counts.length - 1;
        if (top < 0) break;
        counts[top]++;
        const obj = isObject[top];
        const max = obj ? limits.maxObjectEntries : limits.maxArrayElements;
        if (counts[top] > max) throw jsonError(obj ? `JSON object with more than ${max} entries` : `JSON array with more than ${max} elements`);
        break;
      }
      case DOT:
      case LOWER_E:
      case UPPER_E:
        if (afterDigit) risky = true;
        break;
      case MINUS:
        if (text.charCodeAt(i + 1) === ZERO) risky = true;
        break;
    }
  }
  return risky;
}

/** Parses a request body that must be a JSON object. */
export function parseJsonObject(text: string, limits: JsonLimits): Record<string, unknown> {
  const risky = checkJsonLimits(text, limits);
  let value: unknown;
  try {
    // Numbers stay as the client wrote them (framework/json-numbers.ts), as Vault's UseNumber does.
    value = parseJsonExact(text, risky);
  } catch (e) {
    if (e instanceof CofferError) throw e;
    throw jsonError();
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw jsonError('the request body must be a JSON object');
  return value as Record<string, unknown>;
}
