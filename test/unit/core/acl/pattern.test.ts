import { describe, expect, it } from 'vitest';
import { comparePriority, compilePattern, matchesPattern, patternProblem } from '../../../../src/core/acl/pattern';

describe('compilePattern', () => {
  it.each<[string, string, number, number]>([
    ['secret/foo', 'exact', -1, 0],
    ['secret/*/foo', 'exact', -1, 0],
    ['secret/fo*', 'prefix', 9, 0],
    ['*', 'prefix', 0, 0],
    ['secret/+/foo', 'segment', 7, 1],
    ['+/a/+', 'segment', 0, 2],
    ['secret/+/foo*', 'segment', 7, 1],
    ['a*/+/b', 'segment', 3, 1],
  ])('%s → %s, first wildcard %i, %i "+"', (pattern, kind, first, plus) => {
    const c = compilePattern(pattern);
    expect([c.kind, c.firstWildcard, c.plusCount]).toEqual([kind, first, plus]);
  });

  it.each<[string, string | null]>([
    ['secret/+/x', null],
    ['+', null],
    ['a/+/+/b*', null],
    ['secret/+*', 'invalid use of wildcards ("+*" is forbidden)'],
    ['secret/a+', '"+" must occupy a whole path segment'],
    ['secret/+a', '"+" must occupy a whole path segment'],
    ['secret/++/x', '"+" must occupy a whole path segment'],
  ])('patternProblem(%j)', (pattern, problem) => {
    expect(patternProblem(pattern)).toBe(problem);
  });
});

describe('matchesPattern', () => {
  it.each<[string, string, boolean]>([
    // exact
    ['secret/foo', 'secret/foo', true],
    ['secret/foo', 'secret/foo/', false],
    ['secret/foo', 'secret/foobar', false],
    ['secret/foo', 'secret/Foo', false],
    ['secret/foo', 'secret/fo', false],
    // * is only special at the end
    ['secret/*/foo', 'secret/*/foo', true],
    ['secret/*/foo', 'secret/a/foo', false],
    // trailing glob = prefix
    ['secret/fo*', 'secret/foo', true],
    ['secret/fo*', 'secret/fo', true],
    ['secret/fo*', 'secret/food/bar', true],
    ['secret/fo*', 'secret/f', false],
    ['secret/fo*', 'secret/FOO', false],
    ['secret/*', 'secret/', true],
    ['secret/*', 'secret', false],
    ['secret/*', 'secretive/x', false],
    ['*', '', true],
    ['*', 'anything/at/all', true],
    // + matches exactly one whole, non-empty segment
    ['secret/+/teamb', 'secret/a/teamb', true],
    ['secret/+/teamb', 'secret/a/b/teamb', false],
    ['secret/+/teamb', 'secret//teamb', false],
    ['secret/+/teamb', 'secret/a/teamb/x', false],
    ['secret/+/teamb', 'secret/a/teambx', false],
    ['secret/+/teamb', 'secret/teamb', false],
    ['secret/+', 'secret/a', true],
    ['secret/+', 'secret/', false],
    ['secret/+', 'secret/a/', false],
    ['+', 'a', true],
    ['+', 'a/b', false],
    ['+/+', 'a/b', true],
    ['+/+', 'a/b/c', false],
    // + with a trailing glob
    ['secret/+/foo*', 'secret/a/foo', true],
    ['secret/+/foo*', 'secret/a/foobar', true],
    ['secret/+/foo*', 'secret/a/foo/bar/baz', true],
    ['secret/+/foo*', 'secret/a/fo', false],
    ['secret/+/foo*', 'secret/a/b/foo', false],
    ['secret/+/*', 'secret/a/', true],
    ['secret/+/*', 'secret/a/b/c', true],
    ['secret/+/*', 'secret/a', false],
    ['secret/+/x/*', 'secret/a/x', false],
    ['secret/+/x/*', 'secret/a/x/', true],
    // a literal * in a segment pattern stays literal
    ['secret/+/*/x', 'secret/a/*/x', true],
    ['secret/+/*/x', 'secret/a/b/x', false],
  ])('%s matches %j: %s', (pattern, path, expected) => {
    expect(matchesPattern(compilePattern(pattern), path)).toBe(expected);
  });
});

describe('comparePriority (Vault ordering)', () => {
  // [lower, higher, path both match, rule that decides]
  it.each<[string, string, string, string]>([
    ['secret/*', 'secret/a*', 'secret/abc', '(a) later first wildcard wins'],
    ['secret/+/foo', 'secret/a/+', 'secret/a/foo', '(a) later first wildcard wins'],
    ['+/a/b', 'secret/*', 'secret/a/b', '(a) later first wildcard wins'],
    ['secret/+/+', 'secret/a/*', 'secret/a/b', '(a) later first wildcard wins'],
    ['secret/+/foo*', 'secret/+/foo', 'secret/a/foo', '(b) glob loses to non-glob'],
    ['secret/*', 'secret/+', 'secret/a', '(b) glob loses to non-glob'],
    ['secret/+/+', 'secret/+/b', 'secret/a/b', '(c) more "+" loses'],
    ['secret/+/+/*', 'secret/+/b/*', 'secret/a/b/c', '(c) more "+" loses'],
    ['secret/+/b*', 'secret/+/bc*', 'secret/a/bcd', '(d) shorter loses'],
    ['secret/+/*', 'secret/+/a/*', 'secret/x/a/b', '(d) shorter loses'],
    ['a/+/+/c', 'a/+/b/+', 'a/z/b/c', '(e) lexicographically smaller loses'],
  ])('%s < %s for %s %s', (lower, higher, path, _rule) => {
    const lo = compilePattern(lower);
    const hi = compilePattern(higher);
    expect(matchesPattern(lo, path)).toBe(true);
    expect(matchesPattern(hi, path)).toBe(true);
    expect(comparePriority(lo, hi)).toBeLessThan(0);
    expect(comparePriority(hi, lo)).toBeGreaterThan(0);
  });

  it('is zero only for identical patterns', () => {
    expect(comparePriority(compilePattern('a/+/b'), compilePattern('a/+/b'))).toBe(0);
  });
});
