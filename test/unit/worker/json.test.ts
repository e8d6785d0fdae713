import { describe, expect, it } from 'vitest';
import { CofferError } from '../../../src/framework/errors';
import { encodeJson } from '../../../src/framework/json-numbers';
import { checkJsonLimits, DEFAULT_JSON_LIMITS, parseJsonObject } from '../../../src/worker/json';

const limits = { maxDepth: 4, maxObjectEntries: 3, maxArrayElements: 3, maxStringLength: 10 };

function errorOf(fn: () => unknown): CofferError {
  try {
    fn();
  } catch (e) {
    return e as CofferError;
  }
  throw new Error('expected an error');
}

describe('JSON limits', () => {
  it('accepts documents within every limit', () => {
    expect(parseJsonObject('{"a":{"b":[1,2,3]},"c":"0123456789"}', limits)).toEqual({ a: { b: [1, 2, 3] }, c: '0123456789' });
  });

  it.each([
    ['depth', '{"a":{"b":{"c":{"d":{}}}}}', 'nesting depth exceeds 4'],
    ['object entries', '{"a":1,"b":2,"c":3,"d":4}', 'more than 3 entries'],
    ['array elements', '{"a":[1,2,3,4]}', 'more than 3 elements'],
    ['string length', '{"a":"01234567890"}', 'longer than 10'],
    ['key length', '{"01234567890":1}', 'longer than 10'],
  ])('refuses excessive %s with a 400', (_name, text, detail) => {
    const e = errorOf(() => parseJsonObject(text, limits));
    expect(e.status).toBe(400);
    expect(e.errors[0]).toBe('error parsing JSON');
    expect(e.errors[1]).toContain(detail);
  });

  it('is not fooled by brackets and commas inside strings', () => {
    expect(() => checkJsonLimits('{"a":"[[[[[,,,,"}', limits)).not.toThrow();
    expect(() => checkJsonLimits('{"a":"\\"[[[[[[,,,,"}', { ...limits, maxStringLength: 100 })).not.toThrow();
  });

  it('rejects a hostile deep body without recursing', () => {
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    const e = errorOf(() => parseJsonObject(deep, DEFAULT_JSON_LIMITS));
    expect(e.status).toBe(400);
    expect(e.errors[1]).toContain('nesting depth exceeds 500');
  });

  it.each(['{', '{"a":}', 'nul', '{"a":1}x'])('reports malformed JSON %j as "error parsing JSON"', (text) => {
    const e = errorOf(() => parseJsonObject(text, DEFAULT_JSON_LIMITS));
    expect(e.status).toBe(400);
    expect(e.errors).toEqual(['error parsing JSON']);
  });

  it.each(['[1]', '"s"', '3', 'null'])('requires an object body, not %s', (text) => {
    expect(errorOf(() => parseJsonObject(text, DEFAULT_JSON_LIMITS)).errors[1]).toContain('must be a JSON object');
  });
});

describe('Go-style encoding', () => {
  it('escapes <, > and & and ends with a newline', () => {
    expect(encodeJson({ a: '<b>&\u2028' })).toBe('{"a":"\\u003cb\\u003e\\u0026\\u2028"}\n');
  });
});
