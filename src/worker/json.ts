// JSON in and out. Bodies are scanned for hostile structure (depth, entry counts, string sizes)
// before JSON.parse builds anything; responses are encoded like Go's json.Encoder.

import { CofferError } from '../framework/errors';
import { parseJson } from '../framework/json-numbers';

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
const BACKSLASH = 0x5c;
const OPEN_OBJ = 0x7b;
const CLOSE_OBJ = 0x7d;
const OPEN_ARR = 0x5b;
const CLOSE_ARR = 0x5d;
const COMMA = 0x2c;

/** One linear pass over the text; throws a 400 naming the limit that was exceeded. */
export function checkJsonLimits(text: string, limits: JsonLimits): void {
  const isObject: boolean[] = [];
  const counts: number[] = [];
  let inString = false;
  let stringStart = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) {
        inString = false;
        if (i - stringStart > limits.maxStringLength) throw jsonError(`JSON string longer than ${limits.maxStringLength} characters`);
      }
      continue;
    }
    switch (c) {
      case QUOTE:
        inString = true;
        stringStart = i + 1;
        break;
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
    }
  }
}

/** Parses a request body that must be a JSON object. */
export function parseJsonObject(text: string, limits: JsonLimits): Record<string, unknown> {
  checkJsonLimits(text, limits);
  let value: unknown;
  try {
    // Numbers stay as the client wrote them (framework/json-numbers.ts), as Vault's UseNumber does.
    value = parseJson(text);
  } catch (e) {
    if (e instanceof CofferError) throw e;
    throw jsonError();
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) throw jsonError('the request body must be a JSON object');
  return value as Record<string, unknown>;
}
