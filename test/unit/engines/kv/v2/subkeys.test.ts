// subkeys: every value replaced by null, to a depth.
import { describe, expect, it } from 'vitest';
import { subkeys } from '../../../../../src/engines/kv/v2/paths/subkeys';

const secret = { a: 1, b: { c: 'x', d: { e: true, f: { g: null } } }, empty: {}, list: [{ h: 1 }] };

describe('subkeys', () => {
  it('depth 0 walks everything; empty maps and arrays are leaves', () => {
    expect(subkeys(secret, 0)).toEqual({ a: null, b: { c: null, d: { e: null, f: { g: null } } }, empty: null, list: null });
  });

  it.each([
    [1, { a: null, b: null, empty: null, list: null }],
    [2, { a: null, b: { c: null, d: null }, empty: null, list: null }],
    [3, { a: null, b: { c: null, d: { e: null, f: null } }, empty: null, list: null }],
    [4, { a: null, b: { c: null, d: { e: null, f: { g: null } } }, empty: null, list: null }],
    [9, { a: null, b: { c: null, d: { e: null, f: { g: null } } }, empty: null, list: null }],
  ])('depth %i', (depth, expected) => {
    expect(subkeys(secret, depth)).toEqual(expected);
  });

  it('never returns a value', () => {
    expect(JSON.stringify(subkeys(secret, 0))).not.toMatch(/"x"|true|1/);
  });
});
