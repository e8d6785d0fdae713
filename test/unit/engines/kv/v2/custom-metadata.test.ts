// custom_metadata parsing and Vault's limits.
import { describe, expect, it } from 'vitest';
import { customMetadataErrors, parseCustomMetadata, validateCustomMetadata, withoutNulls } from '../../../../../src/engines/kv/v2/custom-metadata';

const P = 'custom_metadata validation failed';

describe('parseCustomMetadata', () => {
  it('turns numbers and booleans into strings, as Vault does', () => {
    expect(parseCustomMetadata({ a: 'x', n: 42, f: 1.5, t: true, no: false }, false)).toEqual({ a: 'x', n: '42', f: '1.5', t: '1', no: '0' });
  });

  it('keeps nulls for a patch (they remove keys), and makes them empty otherwise', () => {
    expect(parseCustomMetadata({ gone: null }, true)).toEqual({ gone: null });
    expect(parseCustomMetadata({ gone: null }, false)).toEqual({ gone: '' });
    expect(withoutNulls({ gone: null, kept: 'v' })).toEqual({ kept: 'v' });
  });

  it('refuses nested values', () => {
    expect(() => parseCustomMetadata({ n: { a: 1 } }, false)).toThrow(`${P}: value for key "n" must be a string`);
    expect(() => parseCustomMetadata({ l: ['a'] }, true)).toThrow(`${P}: value for key "l" must be a string`);
  });
});

describe('limits', () => {
  it('accepts the largest valid map', () => {
    const map = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`${i}`.padEnd(128, 'k'), 'v'.repeat(512)]));
    expect(customMetadataErrors(map)).toEqual([]);
    expect(() => validateCustomMetadata(map)).not.toThrow();
  });

  it('more than 64 keys is one error, without checking each', () => {
    const map = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, '']));
    expect(customMetadataErrors(map)).toEqual([`${P}: payload must contain at most 64 keys, provided 65`]);
  });

  it.each([
    [{ '': 'v' }, `${P}: length of key "" is 0 but must be 0 < len(key) <= 128`],
    [{ ['x'.repeat(129)]: 'v' }, `${P}: length of key "${'x'.repeat(129)}" is 129 but must be 0 < len(key) <= 128`],
    [{ k: '' }, `${P}: length of value for key "k" is 0 but must be 0 < len(value) <= 512`],
    [{ k: 'ü'.repeat(257) }, `${P}: length of value for key "k" is 514 but must be 0 < len(value) <= 512`],
    [{ 'a\nb': 'v' }, `${P}: key "a\\nb" (a\nb) contains unprintable characters`],
    [{ k: 'nbsp\u00a0' }, `${P}: value for key "k" contains unprintable characters`],
    [{ k: 'zero\u200bwidth' }, `${P}: value for key "k" contains unprintable characters`],
  ])('%j breaks a limit', (map, message) => {
    expect(customMetadataErrors(map)).toEqual([message]);
  });

  it('printable means letters, marks, numbers, punctuation, symbols and the ASCII space', () => {
    expect(customMetadataErrors({ 'Ünïcode ключ 漢字 ✓ €': 'a-b_c.d/e:f@g (h) [i] {j} é́ 😀' })).toEqual([]);
  });

  it('reports every violation in one multierror message', () => {
    expect(() => validateCustomMetadata({ a: '', b: '' })).toThrow(
      `2 errors occurred:\n\t* ${P}: length of value for key "a" is 0 but must be 0 < len(value) <= 512\n\t* ${P}: length of value for key "b" is 0 but must be 0 < len(value) <= 512\n\n`,
    );
  });
});
