import { describe, expect, it } from 'vitest';
import {
  deepEqual,
  globMatch,
  mergeValueLists,
  parameterProblem,
  valueAllowed,
  valueDenied,
  type ParameterConstraints,
} from '../../../../src/core/acl/params';

const constraints = (c: {
  allowed?: Record<string, unknown[]>;
  denied?: Record<string, unknown[]>;
  required?: string[];
}): ParameterConstraints => ({
  allowed: new Map(Object.entries(c.allowed ?? {})),
  denied: new Map(Object.entries(c.denied ?? {})),
  required: c.required ?? [],
});

describe('globMatch (parameter values)', () => {
  it.each<[string, string, boolean]>([
    ['foo', 'foo', true],
    ['foo', 'Foo', false],
    ['foo-*', 'foo-bar', true],
    ['foo-*', 'foo-', true],
    ['foo-*', 'bar-foo-', false],
    ['*-bar', 'foo-bar', true],
    ['*-bar', 'foo-bar-baz', false],
    ['*mid*', 'a-mid-b', true],
    ['*mid*', 'mid', true],
    ['*mid*', 'mi-d', false],
    ['**', 'anything', true],
    ['*', '*', true],
    ['*', 'anything', false],
    ['', '', true],
    ['a*b', 'axb', false],
    ['a*b', 'a*b', true],
  ])('%j vs %j → %s', (pattern, value, expected) => {
    expect(globMatch(pattern, value)).toBe(expected);
  });
});

describe('value matching', () => {
  it.each<[unknown, unknown, boolean]>([
    [1, 1, true],
    [1, '1', false],
    [true, true, true],
    [true, 'true', false],
    [['a', 'b'], ['a', 'b'], true],
    [['a', 'b'], ['b', 'a'], false],
    [{ a: [1] }, { a: [1] }, true],
    [{ a: 1 }, { a: 1, b: 2 }, false],
    [{ a: 1 }, [1], false],
    [null, null, true],
    [null, {}, false],
  ])('deepEqual(%j, %j) → %s', (a, b, expected) => {
    expect(deepEqual(a, b)).toBe(expected);
  });

  it.each<[unknown, unknown[], boolean]>([
    ['anything', [], true],
    ['foo-1', ['foo-*'], true],
    ['bar', ['foo-*', 'bar'], true],
    ['baz', ['foo-*', 'bar'], false],
    [5, [5], true],
    ['5', [5], false],
    [['foo-1', 'bar'], ['foo-*', 'bar'], true],
    [['foo-1', 'baz'], ['foo-*', 'bar'], false],
    [['x', 'y'], [['x', 'y']], true],
    [[], ['x'], true],
    [{ k: 'v' }, [{ k: 'v' }], true],
    [{ k: 'v' }, ['v'], false],
  ])('valueAllowed(%j, %j) → %s', (value, list, expected) => {
    expect(valueAllowed(value, list)).toBe(expected);
  });

  it.each<[unknown, unknown[], boolean]>([
    ['anything', [], true],
    ['admin-1', ['admin-*'], true],
    ['user', ['admin-*'], false],
    [['user', 'admin-1'], ['admin-*'], true],
    [['user', 'ops'], ['admin-*'], false],
    [['x', 'y'], [['x', 'y']], true],
    // Comma-separated strings are not lists.
    ['user,admin-1', ['admin-*'], false],
  ])('valueDenied(%j, %j) → %s', (value, list, expected) => {
    expect(valueDenied(value, list)).toBe(expected);
  });

  it('mergeValueLists: empty wins, otherwise concatenation', () => {
    expect(mergeValueLists(['a'], ['b'])).toEqual(['a', 'b']);
    expect(mergeValueLists([], ['b'])).toEqual([]);
    expect(mergeValueLists(['a'], [])).toEqual([]);
  });
});

describe('parameterProblem', () => {
  it.each<[string, Parameters<typeof constraints>[0], Record<string, unknown>, string | null]>([
    // required
    ['required present', { required: ['name'] }, { name: 'x' }, null],
    ['required missing', { required: ['name'] }, { other: 1 }, 'required parameter "name" is missing'],
    ['required missing with empty data', { required: ['name'] }, {}, 'required parameter "name" is missing'],
    ['required must be sent in lowercase', { required: ['ttl'] }, { TTL: '1h' }, 'required parameter "ttl" is missing'],
    ['required is not satisfied by the prototype', { required: ['constructor'] }, {}, 'required parameter "constructor" is missing'],
    // empty data
    ['empty data skips denied/allowed', { denied: { '*': [] }, allowed: { a: ['x'] } }, {}, null],
    // denied
    ['denied * denies any data', { denied: { '*': [] } }, { a: 1 }, 'all parameters are denied'],
    ['denied * with values still denies everything', { denied: { '*': ['x'] } }, { a: 1 }, 'all parameters are denied'],
    ['denied key, any value', { denied: { secret: [] } }, { secret: '' }, 'parameter "secret" is denied'],
    ['denied key matched case-insensitively', { denied: { secret: [] } }, { SeCrEt: 'x' }, 'parameter "SeCrEt" is denied'],
    ['denied value', { denied: { mode: ['admin'] } }, { mode: 'admin' }, 'parameter "mode" is denied'],
    ['other value not denied', { denied: { mode: ['admin'] } }, { mode: 'user' }, null],
    ['denied glob value', { denied: { name: ['admin_*'] } }, { name: 'admin_x' }, 'parameter "name" is denied'],
    ['denied element of a list', { denied: { policies: ['*admin*'] } }, { policies: ['dev', 'super-admin'] }, 'parameter "policies" is denied'],
    ['list without denied elements', { denied: { policies: ['*admin*'] } }, { policies: ['dev', 'ops'] }, null],
    ['undenied key', { denied: { secret: [] } }, { other: 1 }, null],
    ['denied wins over allowed', { denied: { a: ['x'] }, allowed: { a: [] } }, { a: 'x' }, 'parameter "a" is denied'],
    // allowed
    ['no allowed_parameters allows all', {}, { anything: 1 }, null],
    ['allowed * alone allows all', { allowed: { '*': [] } }, { a: 1, b: 2 }, null],
    ['allowed key, any value', { allowed: { a: [] } }, { a: 'whatever' }, null],
    ['key not allowed', { allowed: { a: [] } }, { a: 1, b: 2 }, 'parameter "b" is not allowed'],
    ['allowed key matched case-insensitively', { allowed: { a: ['x'] } }, { A: 'x' }, null],
    ['allowed value', { allowed: { a: ['x', 'y'] } }, { a: 'y' }, null],
    ['value not allowed', { allowed: { a: ['x', 'y'] } }, { a: 'z' }, 'value of parameter "a" is not allowed'],
    ['allowed glob', { allowed: { a: ['dev-*'] } }, { a: 'dev-1' }, null],
    ['allowed glob refuses', { allowed: { a: ['dev-*'] } }, { a: 'prod-1' }, 'value of parameter "a" is not allowed'],
    ['* with restricted keys: other keys pass', { allowed: { '*': [], a: ['x'] } }, { a: 'x', b: 'anything' }, null],
    ['* with restricted keys: restricted values enforced', { allowed: { '*': [], a: ['x'] } }, { a: 'y' }, 'value of parameter "a" is not allowed'],
    ['allowed list element-wise', { allowed: { p: ['dev', 'ops'] } }, { p: ['dev', 'ops'] }, null],
    ['allowed list with a stray element', { allowed: { p: ['dev'] } }, { p: ['dev', 'root'] }, 'value of parameter "p" is not allowed'],
    ['allowed numbers', { allowed: { n: [1, 2] } }, { n: 2 }, null],
    ['numbers are not strings', { allowed: { n: [1] } }, { n: '1' }, 'value of parameter "n" is not allowed'],
    ['allowed booleans', { allowed: { b: [true] } }, { b: false }, 'value of parameter "b" is not allowed'],
    ['prototype keys are not allowed keys', { allowed: { a: [] } }, { constructor: 1 }, 'parameter "constructor" is not allowed'],
    ['"__proto__" data key is checked like any key', { allowed: { a: [] } }, JSON.parse('{"__proto__": 1}'), 'parameter "__proto__" is not allowed'],
  ])('%s', (_name, c, data, expected) => {
    expect(parameterProblem(constraints(c), data)).toBe(expected);
  });
});
