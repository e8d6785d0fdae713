import { describe, expect, it } from 'vitest';
import { decodePath, refuseEmptySegments } from '../../../src/worker/canonical';

/** The logical path as a request outside an opaque tail gets it: every empty segment refused. */
function canonicalPath(encoded: string): string {
  const { path, emptyAt } = decodePath(encoded);
  refuseEmptySegments(emptyAt);
  return path;
}

describe('canonicalPath', () => {
  it.each([
    ['secret/foo', 'secret/foo'],
    ['secret/foo/', 'secret/foo/'],
    ['secret/a%20b', 'secret/a b'],
    ['secret/a%2Fb', 'secret/a/b'],
    ['secret/%252e%252e', 'secret/%2e%2e'],
    ['', ''],
  ])('%j → %j', (input, out) => expect(canonicalPath(input)).toBe(out));

  it.each([
    ['secret/../sys/seal', '"." and ".."'],
    ['secret/./foo', '"." and ".."'],
    ['secret/%2e%2e/sys', '"." and ".."'],
    ['secret/%2E/x', '"." and ".."'],
    ['secret//foo', 'empty segments'],
    ['/secret/foo', 'empty segments'],
    ['secret/%2F/foo', 'empty segments'],
    ['secret/a%00b', 'control characters'],
    ['secret/a%0ab', 'control characters'],
    ['secret/%zz', 'malformed percent-encoding'],
    ['secret/%FF', 'not valid UTF-8'],
    ['secret/%C3%28', 'not valid UTF-8'],
    ['secret/utf/%EF%BF%BD', 'not valid UTF-8'],
    ['secret/utf/\ufffd', 'not valid UTF-8'],
  ])('refuses %j', (input, message) => {
    expect(() => canonicalPath(input)).toThrow(message);
  });

  it.each([
    ['secret/foo', -1],
    ['secret/foo/', -1],
    ['', -1],
    ['/secret', 0],
    ['secret//', 7],
    ['pki/ocsp/ab//cd', 12],
    ['pki/ocsp/ab%2F%2Fcd', 12],
    ['pki/ocsp//ab', 9],
  ])('reports the first empty segment of %j at %i', (input, at) => expect(decodePath(input).emptyAt).toBe(at));

  it('lets an empty segment through only inside an opaque tail', () => {
    expect(() => refuseEmptySegments(-1)).not.toThrow();
    expect(() => refuseEmptySegments(9, 9)).not.toThrow();
    expect(() => refuseEmptySegments(12, 9)).not.toThrow();
    expect(() => refuseEmptySegments(4, 9)).toThrow('empty segments');
    expect(() => refuseEmptySegments(12)).toThrow('empty segments');
  });
});
