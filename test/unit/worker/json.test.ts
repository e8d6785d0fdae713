import { describe, expect, it } from 'vitest';
import { CofferError } from '../../../src/framework/errors';
import { encodeJson, parseJsonExact } from '../../../src/framework/json-numbers';
import { checkJsonLimits, DEFAULT_JSON_LIMITS, parseJsonObject } from '../../../src/worker/json';
import { Rng } from '../../helpers/fuzz/random';

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

describe('the scan says when numbers need the exact parse', () => {
  const risky = (text: string): boolean => checkJsonLimits(text, DEFAULT_JSON_LIMITS);

  it.each(['{"a":1.5}', '{"a":1e5}', '{"a":2E-3}', '{"a":-0}', '{"a":[-0.5]}', '{"a":1234567890123456}', '{"a":"x","b":9007199254740993}', '{"\\u0000number":"1"}', '{"a":"\\"\\u0000"}'])(
    '%s: yes',
    (text) => expect(risky(text)).toBe(true),
  );

  it.each(['{"a":1}', '{"a":-12,"b":[0,10,100]}', '{"a":true,"b":false,"c":null}', '{"a":"1.5e3 -0 1234567890123456"}', '{"a":"\\\\u0000"}', '{"a":"ab\\"c3e"}'])(
    '%s: no',
    (text) => expect(risky(text)).toBe(false),
  );

  it('skips strings: a base64 plaintext holding "3e" and "7." is no number', () => {
    expect(risky(JSON.stringify({ plaintext: 'q3eW7.x9E0'.repeat(200), n: 3 }))).toBe(false);
  });

  it('measures strings with escapes as before, and stays linear over many of them', () => {
    expect(() => checkJsonLimits('{"a":"\\"\\"\\"\\""}', { ...limits, maxStringLength: 8 })).not.toThrow();
    expect(() => checkJsonLimits('{"a":"\\"\\"\\"\\"\\""}', { ...limits, maxStringLength: 8 })).toThrow(/longer than 8/);
    const escapes = `{"a":"${'\\n'.repeat(200_000)}","b":"${'x'.repeat(1000)}"}`;
    expect(checkJsonLimits(escapes, { ...DEFAULT_JSON_LIMITS, maxStringLength: 1_000_000 })).toBe(false);
  });

  it('never calls a document safe whose numbers the plain parse would change (random documents)', () => {
    // Seeded, so a failure names a document that fails again.
    const rng = new Rng(0x5eed);
    const random = (): number => rng.next();
    const pick = <T,>(xs: T[]): T => rng.pick(xs);
    const digits = (): string => Array.from({ length: 1 + Math.floor(random() * 20) }, () => pick(['0', '1', '5', '9'])).join('');
    // Numbers of every form (some not JSON: a leading 0, an empty fraction), strings whose text
    // looks like numbers or holds escapes, and literals; the parse sorts out what is JSON.
    const number = (): string => `${pick(['', '', '-'])}${digits()}${pick(['', '', `.${digits()}`, '.'])}${pick(['', '', `e${digits()}`, `E-${digits()}`, 'e+1'])}`;
    const string = (): string => `"${Array.from({ length: Math.floor(random() * 4) }, () => pick(['1.5', '3e', '-0', '\\\\', '\\"', '\\u0000', 'x', digits()])).join('')}"`;
    const element = (): string => pick([number, number, string, () => pick(['true', 'false', 'null']), () => `{"${pick(['a', '\\u0000number', '\\u0000n'])}":${number()}}`])();
    let parsed = 0;
    let differing = 0;
    for (let n = 0; n < 20_000; n++) {
      const text = `[${Array.from({ length: 1 + Math.floor(random() * 4) }, element).join(',')}]`;
      let plain: string;
      try {
        plain = JSON.stringify(parseJsonExact(text, false));
      } catch {
        continue; // not JSON
      }
      parsed++;
      let exact: string | null;
      try {
        exact = JSON.stringify(parseJsonExact(text, true));
      } catch {
        exact = null; // the reserved key, which only the exact parse refuses
      }
      if (exact === plain) continue;
      differing++;
      expect(checkJsonLimits(text, DEFAULT_JSON_LIMITS), text).toBe(true);
    }
    // The documents exercise the property: many parse, and many hold numbers the plain parse
    // changes or the reserved key.
    expect(parsed).toBeGreaterThan(1000);
    expect(differing).toBeGreaterThan(1000);
  });

  it('enforces the limits exactly as the character-by-character scan it replaced (random texts)', () => {
    // The previous scan, kept as the oracle: every character in JavaScript, strings included.
    const previousScan = (text: string, l: typeof limits): string | null => {
      const isObject: boolean[] = [];
      const counts: number[] = [];
      let inString = false;
      let stringStart = 0;
      for (let i = 0; i < text.length; i++) {
        const ch = text[i];
        if (inString) {
          if (ch === '\\') i++;
          else if (ch === '"') {
            inString = false;
            if (i - stringStart > l.maxStringLength) return `JSON string longer than ${l.maxStringLength} characters`;
          }
          continue;
        }
        if (ch === '"') {
          inString = true;
          stringStart = i + 1;
        } else if (ch === '{' || ch === '[') {
          if (isObject.length >= l.maxDepth) return `JSON nesting depth exceeds ${l.maxDepth}`;
          isObject.push(ch === '{');
          counts.push(1);
        } else if (ch === '}' || ch === ']') {
          isObject.pop();
          counts.pop();
        } else if (ch === ',' && counts.length > 0) {
          const top = counts.length - 1;
          const max = isObject[top] ? l.maxObjectEntries : l.maxArrayElements;
          if (++counts[top] > max) return isObject[top] ? `JSON object with more than ${max} entries` : `JSON array with more than ${max} elements`;
        }
      }
      return null;
    };
    const rng = new Rng(0xfeed);
    const random = (): number => rng.next();
    const pieces = ['"', '\\', '\\"', '\\\\', 'ab', 'x', '{', '}', '[', ']', ',', ':', '1', ' '];
    const tight = { maxDepth: 3, maxObjectEntries: 2, maxArrayElements: 3, maxStringLength: 4 };
    const outcomes = new Set<string>();
    for (let n = 0; n < 30_000; n++) {
      let text = '';
      const len = Math.floor(random() * 24);
      for (let i = 0; i < len; i++) text += pieces[Math.floor(random() * pieces.length)];
      const expected = previousScan(text, tight);
      let got: string | null = null;
      try {
        checkJsonLimits(text, tight);
      } catch (e) {
        got = (e as CofferError).errors[1];
      }
      expect(got, JSON.stringify(text)).toBe(expected);
      outcomes.add(expected?.split(' ').slice(0, 3).join(' ') ?? 'none');
    }
    // Every kind of refusal, and acceptance, came up.
    expect(outcomes.size).toBe(5);
  });

  it('sends a document holding the reserved key to the path that refuses it', () => {
    const e = errorOf(() => parseJsonObject('{"a":"b","\\u0000number":"1"}', DEFAULT_JSON_LIMITS));
    expect(e.status).toBe(400);
    expect(e.errors[1]).toContain('reserved');
  });
});

describe('Go-style encoding', () => {
  it('escapes <, > and & and ends with a newline', () => {
    expect(encodeJson({ a: '<b>&\u2028' })).toBe('{"a":"\\u003cb\\u003e\\u0026\\u2028"}\n');
  });
});
