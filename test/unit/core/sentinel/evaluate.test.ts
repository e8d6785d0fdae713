// The Sentinel evaluator (src/core/sentinel/evaluate.ts), table-driven from HashiCorp's Sentinel
// language specification and its language pages: every expression and statement form, precedence,
// undefined and null, quantifier edge cases, built-ins, int/float arithmetic, regexes (RE2 only),
// runtime errors with positions, the runtime limits, and the five example policies of the
// reference (§6.4) end to end against small fake imports written here.

import { describe, expect, it, vi } from 'vitest';
import { parsePolicy } from '../../../../src/core/sentinel';
import { formatValue } from '../../../../src/core/sentinel/builtins';
import { compilePolicy, evaluatePolicy, type PolicyInput, type PolicyResult } from '../../../../src/core/sentinel/evaluate';
import { fromJSON, SentinelRuntimeError, SMap, UNDEFINED, type SObject, type Value } from '../../../../src/core/sentinel/values';

// ---- Fake imports --------------------------------------------------------------------------------

/** An import that answers attributes from JSON data and has no methods. */
function dataImport(typeName: string, data: Record<string, unknown>): SObject {
  return {
    kind: 'object',
    typeName,
    get: (name) => (Object.prototype.hasOwnProperty.call(data, name) ? fromJSON(data[name]) : UNDEFINED),
    call: (name) => {
      throw new SentinelRuntimeError(`${typeName} has no function ${name}`);
    },
  };
}

/** An import made of methods. */
function fnImport(typeName: string, fns: Record<string, (args: Value[]) => Value>, attrs: Record<string, Value> = {}): SObject {
  return {
    kind: 'object',
    typeName,
    get: (name) => attrs[name] ?? UNDEFINED,
    call: (name, args) => {
      const f = fns[name];
      if (!f) throw new SentinelRuntimeError(`${typeName}.${name} is not a function`);
      return f(args);
    },
  };
}

const str = (v: Value): string => {
  if (typeof v !== 'string') throw new SentinelRuntimeError(`expected a string, got ${String(v)}`);
  return v;
};

const strings = fnImport('strings', {
  has_prefix: ([s, p]) => (s === UNDEFINED ? UNDEFINED : str(s).startsWith(str(p))),
  has_suffix: ([s, p]) => str(s).endsWith(str(p)),
  trim_prefix: ([s, p]) => (str(s).startsWith(str(p)) ? str(s).slice(str(p).length) : s),
  trim_space: ([s]) => str(s).trim(),
  split: ([s, sep]) => str(s).split(str(sep)),
  to_lower: ([s]) => str(s).toLowerCase(),
});

function ipv4(s: string): number {
  const parts = s.split('.').map(Number);
  return (((parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3]) >>> 0);
}

const sockaddr = fnImport('sockaddr', {
  is_contained: ([a, b]) => {
    const [cidr, addr] = str(a).includes('/') ? [str(a), str(b)] : [str(b), str(a)];
    const [net, bits] = cidr.split('/');
    const mask = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
    return ((ipv4(addr.split(':')[0]) & mask) >>> 0) === ((ipv4(net) & mask) >>> 0);
  },
});

const time = fnImport('time', {
  load: ([s]) => {
    const ms = Date.parse(str(s));
    if (Number.isNaN(ms)) throw new SentinelRuntimeError(`time.load: cannot parse ${str(s)}`);
    return dataImport('time', { unix: Math.floor(ms / 1000) });
  },
});

/** Captures the values a test expression evaluates to: `probe.put(x)`. */
function probe(): { obj: SObject; seen: Value[] } {
  const seen: Value[] = [];
  return {
    seen,
    obj: fnImport('probe', {
      put: (args) => {
        seen.push(args[0]);
        return true;
      },
    }),
  };
}

// ---- Harness -------------------------------------------------------------------------------------

function run(src: string, input: Partial<PolicyInput> = {}): PolicyResult {
  return evaluatePolicy(parsePolicy(src), { imports: {}, ...input });
}

/** The value of `expr` (after `setup`), shown as formatValue does inside collections, or `ERR: …`. */
function value(expr: string, setup = ''): string {
  const p = probe();
  const res = run(`${setup}\nprobe.put(${expr})\nmain = true`, { imports: { probe: p.obj } });
  if (res.error !== undefined) return `ERR: ${res.error}`;
  expect(p.seen).toHaveLength(1);
  return formatValue(p.seen[0], false);
}

type Case = [expr: string, expected: string];

/** Runs a table of expression cases; `expected` starting with `ERR:` matches an error substring. */
function table(name: string, cases: Case[], setup = ''): void {
  describe(name, () => {
    it.each(cases)('%s', (expr, expected) => {
      const got = value(expr, setup);
      if (expected.startsWith('ERR:')) {
        expect(got.startsWith('ERR:')).toBe(true);
        expect(got).toContain(expected.slice(4).trim());
      } else {
        expect(got).toBe(expected);
      }
    });
  });
}

// ---- Literals ------------------------------------------------------------------------------------

table('literals', [
  ['42', '42'],
  ['0600', '384'],
  ['0xBadFace', '195951310'],
  ['0', '0'],
  ['72.40', '72.4'],
  ['1E6', '1000000.0'],
  ['.25', '0.25'],
  ['"hello"', '"hello"'],
  ['"a\\tb"', '"a\\tb"'],
  ['true', 'true'],
  ['false', 'false'],
  ['null', 'null'],
  ['undefined', 'undefined'],
  ['[1, "a", true]', '[1, "a", true]'],
  ['[]', '[]'],
  ['{"a": 1, "b": [2]}', '{"a": 1, "b": [2]}'],
  ['{}', '{}'],
  ['{1: "x", true: "y", 1.5: "z"}', '{1: "x", true: "y", 1.5: "z"}'],
  ['9223372036854775807', '9223372036854775807'],
  ['-9223372036854775808', '-9223372036854775808'],
  ['9223372036854775808', 'ERR: out of the 64-bit range'],
  ['170141183460469231731687303715884105727', 'ERR: out of the 64-bit range'],
  ['{[1]: 2}', 'ERR: a map key must be'],
  ['{undefined: 2}', 'ERR: a map key must be'],
  ['{"a": 1, "a": 2}', '{"a": 2}'],
]);

// ---- Arithmetic ----------------------------------------------------------------------------------

table('arithmetic', [
  ['4 + 8', '12'],
  ['8 * 2', '16'],
  ['8 / 4', '2'],
  ['8 / 5', '1'],
  ['8 % 5', '3'],
  ['8 / 3', '2'],
  ['5 / 3', '1'],
  ['-5 / 3', '-1'],
  ['5 / -3', '-1'],
  ['-5 / -3', '1'],
  ['5 % 3', '2'],
  ['-5 % 3', '-2'],
  ['5 % -3', '2'],
  ['-5 % -3', '-2'],
  ['4 * 5 / 5', '4'],
  ['4 * 5 + 2', '22'],
  ['4 + 5 * 2', '14'],
  ['(4 + 5) * 2', '18'],
  ['10 - 2 - 3', '5'],
  ['100 / 10 / 5', '2'],
  ['1.1 + 1', '2.1'],
  ['1 + 1.5', '2.5'],
  ['7.0 / 2', '3.5'],
  ['7 / 2.0', '3.5'],
  ['2.5 * 2', '5.0'],
  ['7.5 % 2', '1.5'],
  ['1.0 / 0', 'Infinity'],
  ['-1.0 / 0', '-Infinity'],
  ['1 / 0', 'ERR: integer division by zero'],
  ['1 % 0', 'ERR: integer division by zero'],
  ['9223372036854775807 + 1', '-9223372036854775808'],
  ['-9223372036854775808 - 1', '9223372036854775807'],
  ['-9223372036854775808 / -1', '-9223372036854775808'],
  ['3037000500 * 3037000500', '-9223372036709301616'],
  ['-5', '-5'],
  ['- -5', '5'],
  ['+5', '5'],
  ['-2.5', '-2.5'],
  ['-(1 + 2) * 3', '-9'],
  ['"hi" + ", " + "hello"', '"hi, hello"'],
  ['[1, 2] + [2, 3]', '[1, 2, 2, 3]'],
  ['[] + []', '[]'],
  ['"a" + 1', 'ERR: operator + does not apply to string and int'],
  ['1 + "a"', 'ERR: operator + does not apply'],
  ['"a" - "b"', 'ERR: operator - does not apply'],
  ['[1] * 2', 'ERR: operator * does not apply'],
  ['null + 1', 'ERR: operator + does not apply to null and int'],
  ['true + true', 'ERR: does not apply to bool'],
  ['undefined + 5', 'undefined'],
  ['5 * undefined', 'undefined'],
  ['-undefined', 'undefined'],
  ['-"a"', 'ERR: unary - does not apply to string'],
  ['{"a": 1} + {"b": 2}', 'ERR: does not apply to map and map'],
]);

// ---- Comparison ----------------------------------------------------------------------------------

table('comparison', [
  ['1 == 1', 'true'],
  ['1 == 2', 'false'],
  ['1 != 2', 'true'],
  ['1 is 1', 'true'],
  ['1 is not 1', 'false'],
  ['1 == 1.0', 'true'],
  ['1.5 == 1', 'false'],
  ['1 < 1.5', 'true'],
  ['2.5 >= 2', 'true'],
  ['3 > 2', 'true'],
  ['3 <= 2', 'false'],
  ['2 <= 2', 'true'],
  ['"a" < "b"', 'true'],
  ['"abc" < "abd"', 'true'],
  ['"ab" < "abc"', 'true'],
  ['"B" < "a"', 'true'],
  ['"\\uFF61" < "\\U0001F600"', 'true'],
  ['"a" == "a"', 'true'],
  ['"a" is "A"', 'false'],
  ['true == true', 'true'],
  ['true != false', 'true'],
  ['[1, 2] == [1, 2]', 'true'],
  ['[1, 2] == [2, 1]', 'false'],
  ['[1, [2]] == [1, [2]]', 'true'],
  ['[1] == [1.0]', 'true'],
  ['[1] == ["1"]', 'false'],
  ['{"a": 1, "b": 2} == {"b": 2, "a": 1}', 'true'],
  ['{"a": 1} == {"a": 2}', 'false'],
  ['{"a": 1} == {"a": 1, "b": 2}', 'false'],
  ['1 == "1"', 'undefined'],
  ['"a" is not 1', 'undefined'],
  ['[1] == {"a": 1}', 'undefined'],
  ['1 < "2"', 'undefined'],
  ['true < false', 'ERR: not ordered'],
  ['[1] < [2]', 'ERR: not ordered'],
  ['undefined == undefined', 'undefined'],
  ['undefined == 1', 'undefined'],
  ['1 < undefined', 'undefined'],
  ['null == null', 'true'],
  ['null is null', 'true'],
  ['"a" == null', 'false'],
  ['1 is not null', 'true'],
  ['null != null', 'false'],
  ['1 + 1 == 2', 'true'],
  ['2 == 1 + 1', 'true'],
  ['9223372036854775807 > 9223372036854775806', 'true'],
]);

// ---- Logical operators and undefined (spec: "Undefined", "Logical Operators") --------------------

table('logical operators', [
  ['true and true', 'true'],
  ['true and false', 'false'],
  ['false and true', 'false'],
  ['false or false', 'false'],
  ['false or true', 'true'],
  ['true or false', 'true'],
  ['true xor false', 'true'],
  ['true xor true', 'false'],
  ['false xor false', 'false'],
  ['not true', 'false'],
  ['!false', 'true'],
  ['not not true', 'true'],
  ['undefined or true', 'true'],
  ['undefined or false', 'undefined'],
  ['undefined or undefined', 'undefined'],
  ['undefined and true', 'undefined'],
  ['undefined and false', 'undefined'],
  ['undefined and undefined', 'undefined'],
  ['undefined xor true', 'undefined'],
  ['undefined xor false', 'undefined'],
  ['undefined xor undefined', 'undefined'],
  ['false or true or undefined', 'true'],
  ['false or undefined or true', 'true'],
  ['true and false and undefined', 'false'],
  ['true and undefined and false', 'undefined'],
  ['true or undefined', 'true'],
  ['false and undefined', 'false'],
  ['true and undefined', 'undefined'],
  ['false or undefined', 'undefined'],
  ['!undefined', 'undefined'],
  ['not undefined', 'undefined'],
  ['false and 1 / 0 == 1', 'false'],
  ['true or error("never")', 'true'],
  ['false and error("never")', 'false'],
  ['1 and true', 'undefined'],
  ['true and "yes"', 'undefined'],
  ['not 5', 'undefined'],
  ['"x" or true', 'true'],
  ['true or false and false', 'true'],
  ['(true or false) and false', 'false'],
  ['false and false or true', 'true'],
  ['true xor true or true', 'true'],
  ['1 < 2 and 2 < 3', 'true'],
  ['not 1 == 2', 'undefined'],
  ['not (1 == 2)', 'true'],
]);

// ---- Set operators (spec: "Set Operators") -------------------------------------------------------

table('contains and in', [
  ['[1, 2, 3] contains 2', 'true'],
  ['[1, 2, 3] contains 5', 'false'],
  ['[1, 2, 3] contains "value"', 'false'],
  ['[1, 2, 3] not contains "value"', 'true'],
  ['{ "a": 1, "b": 2 } contains "a"', 'true'],
  ['{ "a": 1, "b": 2 } contains "c"', 'false'],
  ['{ "a": 1, "b": 2 } contains 2', 'false'],
  ['{ "a": 1, "b": 2 } not contains 2', 'true'],
  ['"test" contains "est"', 'true'],
  ['"test" contains "best"', 'false'],
  ['"test" in "testing"', 'true'],
  ['"best" in "testing"', 'false'],
  ['2 in [1, 2]', 'true'],
  ['2.0 in [1, 2]', 'true'],
  ['"x" not in ["a", "b"]', 'true'],
  ['"a" in {"a": null}', 'true'],
  ['[1] in [[1], [2]]', 'true'],
  ['{"k": 1} in [{"k": 1}]', 'true'],
  ['null in [null]', 'true'],
  ['1 in undefined', 'undefined'],
  ['undefined contains 1', 'undefined'],
  ['undefined in [1]', 'undefined'],
  ['1 in 5', 'ERR: contains and in need a list, map or string, not an int'],
  ['1 in null', 'ERR: not null'],
  ['"abc" contains 1', 'ERR: a string can only contain a string'],
  ['"" in "abc"', 'true'],
  ['1 in [] or true', 'true'],
]);

// ---- matches (spec: "Matches Operator"; RE2 syntax) ----------------------------------------------

table('matches', [
  ['"test" matches "e"', 'true'],
  ['"test" matches "^e"', 'false'],
  ['"TEST" matches "test"', 'false'],
  ['"TEST" matches "(?i)test"', 'true'],
  ['"ABC123" matches "[A-Z]+\\\\d+"', 'true'],
  ['"test" not matches "e"', 'false'],
  ['"abc" matches "^abc$"', 'true'],
  ['"a\\nb" matches "^b"', 'false'],
  ['"a\\nb" matches "(?m)^b"', 'true'],
  ['"a\\nb" matches "a.b"', 'false'],
  ['"a\\nb" matches "(?s)a.b"', 'true'],
  ['"x123" matches "[[:digit:]]{3}"', 'true'],
  ['"xyz" matches "^[[:alpha:]]+$"', 'true'],
  ['"ab" matches "(?P<first>a)b"', 'true'],
  ['"a{b" matches "a{b"', 'true'],
  ['"a{2}" matches "a{2}"', 'false'],
  ['"aa" matches "^a{2}$"', 'true'],
  ['"a.b" matches "\\\\Qa.b\\\\E"', 'true'],
  ['"axb" matches "\\\\Qa.b\\\\E"', 'false'],
  ['"end" matches "end\\\\z"', 'true'],
  ['"end\\n" matches "end\\\\z"', 'false'],
  ['"αβγ" matches "^\\\\p{Greek}+$"', 'true'],
  ['"A" matches "\\\\pL"', 'true'],
  ['"a_b" matches "a\\\\_b"', 'true'],
  ['"日本" matches "^..$"', 'true'],
  ['"x" matches "\\\\x{78}"', 'true'],
  ['"ABc" matches "(?i:ab)c"', 'true'],
  ['"ABC" matches "(?i:ab)c"', 'false'],
  ['"aa" matches "(a)\\\\1"', 'ERR: backreferences'],
  ['"ab" matches "a(?=b)"', 'ERR: lookahead and lookbehind'],
  ['"ab" matches "(?<=a)b"', 'ERR: lookahead and lookbehind'],
  ['"ab" matches "(?!a)b"', 'ERR: lookahead and lookbehind'],
  ['"ab" matches "(?>a)b"', 'ERR: atomic groups'],
  ['"a" matches "a{1001}"', 'ERR: repetition count above 1000'],
  ['"a" matches "("', 'ERR: invalid regular expression'],
  ['"a" matches "[a"', 'ERR: missing closing ]'],
  ['"a" matches "(?U)a"', 'ERR: ungreedy'],
  ['"a" matches "x(?i)a"', 'ERR: only at the start'],
  ['1 matches "a"', 'ERR: matches needs a string'],
  ['"a" matches null', 'ERR: matches needs a string'],
  ['undefined matches "a"', 'undefined'],
  ['"a" matches undefined', 'undefined'],
  ['"a" not matches undefined', 'undefined'],
]);

describe('matches limits', () => {
  it('refuses a pattern longer than the cap', () => {
    expect(value(`"a" matches "${'a'.repeat(1001)}"`)).toContain('longer than 1000');
  });
});

// ---- else, emptiness, definedness ----------------------------------------------------------------

table('else operator', [
  ['undefined else 42', '42'],
  ['1 else 42', '1'],
  ['null else 42', 'null'],
  ['false else true', 'false'],
  ['{"a": 1}["b"] else "default"', '"default"'],
  ['{"a": {"b": 1}}.a.c else ""', '""'],
  ['undefined else undefined', 'undefined'],
  ['undefined else 40 + 2', '42'],
  ['undefined else 42 == 42', 'true'],
  ['1 else error("never")', '1'],
  ['undefined else undefined else 3', '3'],
]);

table('is empty and is defined', [
  ['"" is empty', 'true'],
  ['"foo" is empty', 'false'],
  ['[] is empty', 'true'],
  ['[1] is empty', 'false'],
  ['{} is empty', 'true'],
  ['{"a": "b"} is empty', 'false'],
  ['"" is not empty', 'false'],
  ['"foo" is not empty', 'true'],
  ['[] is not empty', 'false'],
  ['[1] is not empty', 'true'],
  ['{} is not empty', 'false'],
  ['{"a": "b"} is not empty', 'true'],
  ['undefined is empty', 'undefined'],
  ['undefined is not empty', 'undefined'],
  ['1 is empty', 'ERR: is empty needs a string, list or map, not an int'],
  ['[] is defined', 'true'],
  ['4 is defined', 'true'],
  ['true is defined', 'true'],
  ['{} is defined', 'true'],
  ['undefined is defined', 'false'],
  ['[] is not defined', 'false'],
  ['4 is not defined', 'false'],
  ['undefined is not defined', 'true'],
  ['null is defined', 'true'],
  ['{"a": 1}.b is defined', 'false'],
  ['[] is empty and [1] is not empty', 'true'],
]);

// ---- Index, selector, slice ----------------------------------------------------------------------

table('index, selectors and slices', [
  ['[1, 2, 3][0]', '1'],
  ['[1, 2, 3][2]', '3'],
  ['[1, 2, 3][3]', 'undefined'],
  ['[1, 2, 3][-1]', '3'],
  ['[1, 2, 3][-3]', '1'],
  ['[1, 2, 3][-4]', 'undefined'],
  ['[1, 2, 3]["a"]', 'ERR: a list index must be an int, not a string'],
  ['[1, 2, 3][1.0]', 'ERR: a list index must be an int'],
  ['[1][undefined]', 'undefined'],
  ['{"a": 1}["a"]', '1'],
  ['{"a": 1}["b"]', 'undefined'],
  ['{1: "one"}[1]', '"one"'],
  ['{1: "one"}[1.0]', '"one"'],
  ['{"a": 1}[[1]]', 'ERR: a map key must be'],
  ['null["a"]', 'undefined'],
  ['undefined["a"]', 'undefined'],
  ['"abc"[0]', 'ERR: cannot index a string'],
  ['5[0]', 'ERR: cannot index an int'],
  ['{"a": {"b": [10, 20]}}.a.b[1]', '20'],
  ['{"map": 1}.map', '1'],
  ['{"a": 1}.b', 'undefined'],
  ['{"a": 1}.b.c.d', 'undefined'],
  ['null.a', 'undefined'],
  ['undefined.a', 'undefined'],
  ['"s".length', 'ERR: cannot select .length on a string'],
  ['[1, 2, 3, 4, 5][1:4]', '[2, 3, 4]'],
  ['[1, 2, 3, 4, 5][2:]', '[3, 4, 5]'],
  ['[1, 2, 3, 4, 5][:3]', '[1, 2, 3]'],
  ['[1, 2, 3][:]', '[1, 2, 3]'],
  ['[1, 2, 3][2:1]', 'undefined'],
  ['[1, 2, 3][0:4]', 'undefined'],
  ['[1, 2, 3][-1:]', 'undefined'],
  ['[1, 2, 3][3:]', '[]'],
  ['"hello"[1:3]', '"el"'],
  ['"hello"[:0]', '""'],
  ['"hello"[4:]', '"o"'],
  ['"hello"[0:6]', 'undefined'],
  ['"日本語"[3:6]', '"本"'],
  ['null[1:2]', 'undefined'],
  ['undefined[1:]', 'undefined'],
  ['5[1:]', 'ERR: cannot slice an int'],
  ['[1, 2][undefined:]', 'undefined'],
  ['[1, 2]["a":]', 'ERR: slice bounds must be ints'],
]);

// ---- Built-in functions (spec: "Built-in Functions") ---------------------------------------------

table('built-ins', [
  ['length("abc")', '3'],
  ['length("日本語")', '9'],
  ['length("")', '0'],
  ['length([1, 2])', '2'],
  ['length({"a": 1})', '1'],
  ['length(undefined)', 'undefined'],
  ['length(5)', 'ERR: length needs a string, list or map, not an int'],
  ['length(1, 2)', 'ERR: length takes 1 argument, got 2'],
  ['keys({"a": 2, "b": 3})', '["a", "b"]'],
  ['values({"a": 2, "b": 3})', '[2, 3]'],
  ['keys({})', '[]'],
  ['keys(undefined)', 'undefined'],
  ['values(undefined)', 'undefined'],
  ['keys([1])', 'ERR: keys needs a map, not a list'],
  ['range(5)', '[0, 1, 2, 3, 4]'],
  ['range(1, 5)', '[1, 2, 3, 4]'],
  ['range(1, 5, 2)', '[1, 3]'],
  ['range(0, -3, -1)', '[0, -1, -2]'],
  ['range(1, 1)', '[]'],
  ['range(0, 1, -1)', '[]'],
  ['range(0)', '[]'],
  ['range(-2)', '[]'],
  ['range(0, 10, 3)', '[0, 3, 6, 9]'],
  ['range(undefined)', 'undefined'],
  ['range(1, undefined)', 'undefined'],
  ['range(0, 5, 0)', 'ERR: range with a zero step'],
  ['range(1.5)', 'ERR: range takes ints'],
  ['range()', 'ERR: range takes 1 to 3 arguments, got 0'],
  ['int(42)', '42'],
  ['int("42")', '42'],
  ['int("-42")', '-42'],
  ['int("0x1F")', '31'],
  ['int("0600")', '384'],
  ['int(42.8)', '42'],
  ['int(-1.5)', '-2'],
  ['int(true)', '1'],
  ['int(false)', '0'],
  ['int("4.2")', 'undefined'],
  ['int("abc")', 'undefined'],
  ['int(null)', 'undefined'],
  ['int([1])', 'undefined'],
  ['float(1.2)', '1.2'],
  ['float(1)', '1.0'],
  ['float("4.2")', '4.2'],
  ['float("1e3")', '1000.0'],
  ['float(".5")', '0.5'],
  ['float(true)', '1.0'],
  ['float("x")', 'undefined'],
  ['string("foo")', '"foo"'],
  ['string(88)', '"88"'],
  ['string(0xF)', '"15"'],
  ['string(true)', '"true"'],
  ['string(1.5)', '"1.500000"'],
  ['string(-0.25)', '"-0.250000"'],
  ['string([1])', 'undefined'],
  ['bool("true")', 'true'],
  ['bool("T")', 'true'],
  ['bool("1")', 'true'],
  ['bool("False")', 'false'],
  ['bool("0")', 'false'],
  ['bool("yes")', 'undefined'],
  ['bool(1)', 'true'],
  ['bool(-1)', 'true'],
  ['bool(0.1)', 'true'],
  ['bool(0)', 'false'],
  ['bool(0.0)', 'false'],
  ['bool(true)', 'true'],
  ['bool(null)', 'undefined'],
  ['print("x")', 'true'],
  ['append([1, 2], 3)', 'undefined'],
  ['append(1, 3)', 'ERR: append needs a list, not an int'],
  ['append(undefined, 3)', 'ERR: append needs a list, not undefined'],
  ['delete(1, "a")', 'ERR: delete needs a map, not an int'],
  ['delete(undefined, "b")', 'ERR: delete needs a map'],
  ['delete({"a": 1}, "a")', 'undefined'],
]);

table('built-ins mutating in place', [
  ['l', '[1, 2, 3]'],
  ['e', '[undefined]'],
  ['m', '{"b": 3}'],
  ['n', '{"a": 2, "b": 3}'],
], `
l = [1, 2]
append(l, 3)
e = []
append(e, undefined)
m = { "a": 2, "b": 3 }
delete(m, "a")
n = { "a": 2, "b": 3 }
delete(n, "c")
`);

// ---- Quantifiers (spec: "Quantifier Expressions") ------------------------------------------------

table('quantifiers', [
  ['all [1, 2, 3] as v { v > 0 }', 'true'],
  ['all [1, 2, 3] as v { v > 1 }', 'false'],
  ['any [1, 2, 3] as v { v > 2 }', 'true'],
  ['any [1, 2, 3] as v { v > 3 }', 'false'],
  ['all [] as v { false }', 'true'],
  ['any [] as v { true }', 'false'],
  ['all {} as k { false }', 'true'],
  ['any {} as k { true }', 'false'],
  ['all ["a", "b"] as i, v { i < 2 }', 'true'],
  ['any ["a", "b"] as i, v { i == 1 and v == "b" }', 'true'],
  ['all {"a": 1, "b": 2} as k { k in ["a", "b"] }', 'true'],
  ['any {"a": 1, "b": 2} as k { k == 2 }', 'undefined'],
  ['any {"a": 1, "b": 2} as k { k == "c" }', 'false'],
  ['any {"a": 1, "b": 2} as k, v { v == 2 }', 'true'],
  ['all {"a": 1, "b": 2} as k, v { k == "a" or v == 2 }', 'true'],
  ['all [1, 2] as v { undefined }', 'undefined'],
  ['all [1, 2] as v { v == 2 or undefined }', 'undefined'],
  ['all [1, 2] as v { v == 5 and undefined }', 'false'],
  ['any [1, 2] as v { undefined }', 'undefined'],
  ['any [1, 2] as v { v == 1 and undefined or v == 2 }', 'true'],
  ['any [1, 2] as v { "yes" }', 'undefined'],
  ['all undefined as v { true }', 'undefined'],
  ['any null as v { true }', 'undefined'],
  ['all 5 as v { true }', 'ERR: all needs a list or map, not an int'],
  ['any "abc" as c { true }', 'ERR: any needs a list or map, not a string'],
  ['filter [1, 1, 2, 3, 5, 8] as v { v % 2 is 0 }', '[2, 8]'],
  ['filter [1, 2, 3] as i, v { i > 0 }', '[2, 3]'],
  ['filter { "a": "foo", "b": "bar" } as _, v { v is "foo" }', '{"a": "foo"}'],
  ['filter { "a": "foo", "b": "bar" } as k { k is "b" }', '{"b": "bar"}'],
  ['filter [] as v { true }', '[]'],
  ['filter {} as k { true }', '{}'],
  ['filter [1, 2] as v { v == 1 or undefined }', 'undefined'],
  ['filter [1, 2] as v { 1 }', 'undefined'],
  ['filter undefined as v { true }', 'undefined'],
  ['map [1, 2] as v { v * 10 }', '[10, 20]'],
  ['map [1, 2] as v { v % 2 }', '[1, 0]'],
  ['map { "a": "foo", "b": "bar" } as k, v { v }', '["foo", "bar"]'],
  ['map { "a": "foo", "b": "bar" } as k { k }', '["a", "b"]'],
  ['map ["a", "b", "c"] as i, id { { "id": id, "i": i } }', '[{"id": "a", "i": 0}, {"id": "b", "i": 1}, {"id": "c", "i": 2}]'],
  ['map [] as v { v }', '[]'],
  ['map [1] as v { undefined }', '[undefined]'],
  ['map undefined as v { v }', 'undefined'],
  ['all [[1, 2], [3]] as l { all l as v { v > 0 } }', 'true'],
  ['any [[1, 2], [3]] as l { any l as v { v == 3 } }', 'true'],
  ['length(filter range(10) as v { v > 6 })', '3'],
  ['all group.tasks as t { t.driver is "vmware" }', 'false'],
  ['any group.tasks as t { t.driver is "vmware" }', 'true'],
  ['map group.tasks as t { { "driver": t.driver } }', '[{"driver": "vmware"}, {"driver": "docker"}]'],
  ['filter group.tasks as t { t.driver is "vmware" }', '[{"driver": "vmware"}]'],
  ['all [1, 2] as v { v > 0 } and any [1] as v { v == 1 }', 'true'],
  ['any ["a", "b"] as char { char is "a" } or false', 'true'],
], 'group = { "tasks": [{ "driver": "vmware" }, { "driver": "docker" }] }');

describe('quantifier scoping and short-circuit', () => {
  it('all stops at the first false body', () => {
    const r = run('n = 0\nf = func(v) { n += 1\n return v < 2 }\nx = all [1, 2, 3, 4] as v { f(v) }\nmain = rule { n == 2 and x == false }');
    expect(r).toMatchObject({ result: true });
  });
  it('any stops at the first true body', () => {
    const r = run('n = 0\nf = func(v) { n += 1\n return v == 2 }\nx = any [1, 2, 3] as v { f(v) }\nmain = rule { n == 2 and x }');
    expect(r.result).toBe(true);
  });
  it('loop variables do not leak out of a quantifier', () => {
    const r = run('x = all [1] as v { true }\nmain = rule { v == 1 }');
    expect(r.error).toContain('v is not defined');
  });
  it('a quantifier body sees outer variables', () => {
    expect(run('limit = 3\nmain = rule { all [1, 2] as v { v < limit } }').result).toBe(true);
  });
});

// ---- Statements ----------------------------------------------------------------------------------

type ProgramCase = [name: string, src: string, expected: boolean | string];

/** Whole programs: `expected` is main's result, or `ERR: substring` of the error. */
function programs(name: string, cases: ProgramCase[]): void {
  describe(name, () => {
    it.each(cases)('%s', (_n, src, expected) => {
      const r = run(src);
      if (typeof expected === 'string') {
        expect(r.result).toBe(false);
        expect(r.error ?? '').toContain(expected.replace(/^ERR:\s*/, ''));
      } else {
        expect(r.error).toBeUndefined();
        expect(r.result).toBe(expected);
      }
    });
  });
}

programs('assignments', [
  ['simple', 'a = 1\nb = a + 1\nmain = rule { b == 2 }', true],
  ['reassignment changes type', 'x = 7\nx = "foo"\nmain = rule { x == "foo" }', true],
  ['later use sees the current value', 'a = 1\nb = a\na = "value"\nc = a\nmain = rule { b == 1 and c == "value" }', true],
  ['use before assignment is an error', 'a = c\nc = 1\nmain = true', 'ERR: 1:5: c is not defined'],
  ['+= on ints', 'a = 1\na += 2\nmain = rule { a == 3 }', true],
  ['-=, *=, /=, %=', 'a = 20\na -= 2\na *= 2\na /= 4\na %= 5\nmain = rule { a == 4 }', true],
  ['+= on strings', 'x = "hi"\nx += " and good bye"\nmain = rule { x == "hi and good bye" }', true],
  ['+= on lists', 'x = [1, 2]\nx = x + [2, 3]\nx += [4]\nmain = rule { x == [1, 2, 2, 3, 4] }', true],
  ['+= on an undeclared name', 'y += 1\nmain = true', 'ERR: y is not defined'],
  ['compound type error', 'a = "s"\na -= 1\nmain = true', 'ERR: operator - does not apply to string and int'],
  ['list index assignment', 'b = [1, 2, 3]\nb[1] = 42\nmain = rule { b == [1, 42, 3] }', true],
  ['negative list index assignment', 'b = [1, 2, 3]\nb[-1] = 9\nmain = rule { b == [1, 2, 9] }', true],
  ['list index out of range', 'b = [1]\nb[5] = 1\nmain = true', 'ERR: 2:1: list index 5 out of range'],
  ['map key assignment creates', 'c = {}\nc["key"] = "value"\nmain = rule { c.key == "value" }', true],
  ['map key assignment overwrites', 'c = {"k": 1}\nc["k"] = 2\nmain = rule { c == {"k": 2} }', true],
  ['index compound assignment', 'b = [0, 8]\nb[1] += 8\nm = {"n": 1}\nm["n"] *= 5\nmain = rule { b[1] == 16 and m.n == 5 }', true],
  ['nested index assignment', 'm = {"a": {"b": 1}}\nm["a"]["b"] = 2\nmain = rule { m.a.b == 2 }', true],
  ['index assignment on a string', 's = "abc"\ns[0] = "x"\nmain = true', 'ERR: cannot assign to an index of a string'],
  ['index assignment on an unknown variable', 'q[0] = 1\nmain = true', 'ERR: q is not defined'],
  ['index assignment with a bad key', 'm = {}\nm[[1]] = 1\nmain = true', 'ERR: a map key must be'],
  ['lists are shared by reference', 'a = [1]\nb = a\nappend(b, 2)\nmain = rule { a == [1, 2] }', true],
  ['list + makes a new list', 'a = [1]\nb = a + [2]\nmain = rule { a == [1] and b == [1, 2] }', true],
]);

programs('if statements', [
  ['if true', 'x = 0\nif true { x = 1 }\nmain = rule { x == 1 }', true],
  ['if false with else', 'x = 0\nif 1 > 2 { x = 1 } else { x = 2 }\nmain = rule { x == 2 }', true],
  ['else if chain', 'x = 5\ny = 0\nif x < 3 { y = 1 } else if x < 10 { y = 2 } else { y = 3 }\nmain = rule { y == 2 }', true],
  ['else if falls to else', 'x = 50\ny = 0\nif x < 3 { y = 1 } else if x < 10 { y = 2 } else { y = 3 }\nmain = rule { y == 3 }', true],
  ['if opens no scope', 'if true { fresh = 1 }\nmain = rule { fresh == 1 }', true],
  ['undefined condition is an error', 'y = 0\nif undefined { y = 1 } else { y = 2 }\nmain = rule { y == 2 }', 'ERR: 2:4: if condition is undefined'],
  ['non-bool condition is an error', 'y = 0\nif 1 { y = 1 } else { y = 2 }\nmain = rule { y == 2 }', 'ERR: 2:4: if condition is an int, not a bool'],
  ['undefined in a loop check fails closed', 'f = func(l) {\n  for l as v {\n    if not v.ok { return false }\n  }\n  return true\n}\nmain = rule { f([{}]) }', 'ERR: 3:8: if condition is undefined'],
  ['no else, false condition', 'y = 0\nif false { y = 1 }\nmain = rule { y == 0 }', true],
]);

programs('case statements', [
  ['matches a when value', 'x = 2\nr = ""\ncase x {\nwhen 1:\n  r = "one"\nwhen 2, 3:\n  r = "two or three"\nelse:\n  r = "other"\n}\nmain = rule { r == "two or three" }', true],
  ['second value of a clause', 'x = 3\nr = ""\ncase x {\nwhen 1:\n  r = "one"\nwhen 2, 3:\n  r = "two or three"\n}\nmain = rule { r == "two or three" }', true],
  ['else runs when nothing matched', 'x = 9\nr = ""\ncase x {\nwhen 1:\n  r = "one"\nelse:\n  r = "other"\n}\nmain = rule { r == "other" }', true],
  ['no match and no else', 'x = 9\nr = "none"\ncase x {\nwhen 1:\n  r = "one"\n}\nmain = rule { r == "none" }', true],
  ['first match wins', 'r = ""\ncase 1 {\nwhen 1:\n  r = "a"\nwhen 1:\n  r = "b"\n}\nmain = rule { r == "a" }', true],
  ['case without subject is case true', 'x = 50\nr = ""\ncase {\nwhen x > 42:\n  r = "big"\nelse:\n  r = "small"\n}\nmain = rule { r == "big" }', true],
  ['case compares int with float', 'r = ""\ncase 2 {\nwhen 2.0:\n  r = "yes"\n}\nmain = rule { r == "yes" }', true],
  ['case with a mismatched type does not match', 'r = "none"\ncase 1 {\nwhen "1":\n  r = "string"\n}\nmain = rule { r == "none" }', true],
  ['case inside a function returns', 'f = func(x) {\n  case x {\n  when "a":\n    return 1\n  else:\n    return 2\n  }\n}\nmain = rule { f("a") == 1 and f("b") == 2 }', true],
]);

programs('for statements', [
  ['basic sum', 'count = 0\nfor [1, 2, 3] as v { count += v }\nmain = rule { count == 6 }', true],
  ['index and value', 'count = 0\nfor [1, 2, 3] as idx, v {\n  if idx > 1 { count += v }\n}\nmain = rule { count == 3 }', true],
  ['map keys', 'count = 0\ndata = { "a": 12, "b": 32 }\nfor data as k { count += data[k] }\nmain = rule { count == 44 }', true],
  ['map keys and values', 'count = 0\ndata = { "a": 12, "b": 32 }\nfor data as k, v { count += v }\nmain = rule { count == 44 }', true],
  ['break', 'seen = []\nfor [1, 2, 3] as v {\n  append(seen, v)\n  break\n}\nmain = rule { seen == [1] }', true],
  ['continue', 'seen = []\nfor [1, 2, 3] as v {\n  if v == 2 {\n    continue\n  }\n  append(seen, v)\n}\nmain = rule { seen == [1, 3] }', true],
  ['break in a map loop', 'n = 0\nfor {"a": 1, "b": 2, "c": 3} as k { n += 1\n if k == "b" { break } }\nmain = rule { n == 2 }', true],
  ['break leaves only the inner loop', 'n = 0\nfor [1, 2] as a {\n  for [1, 2, 3] as b {\n    if b == 2 { break }\n    n += 1\n  }\n}\nmain = rule { n == 2 }', true],
  ['empty list', 'n = 0\nfor [] as v { n += 1 }\nmain = rule { n == 0 }', true],
  ['for body variables stay inside', 'for [1] as v { inner = v }\nmain = rule { inner == 1 }', 'ERR: inner is not defined'],
  ['loop variable does not leak', 'for [1] as v { x = 1 }\nmain = rule { v == 1 }', 'ERR: v is not defined'],
  ['for over undefined', 'for undefined as v { x = 1 }\nmain = true', 'ERR: for needs a list or map, not undefined'],
  ['for over a string', 'for "abc" as v { x = 1 }\nmain = true', 'ERR: 1:5: for needs a list or map, not a string'],
  ['return from inside a loop', 'f = func() {\n  for [1, 2, 3] as v {\n    if v == 2 { return v }\n  }\n  return 0\n}\nmain = rule { f() == 2 }', true],
  ['loop variables can be reassigned', 'out = []\nfor ["a", "b"] as p {\n  p = p + "!"\n  append(out, p)\n}\nmain = rule { out == ["a!", "b!"] }', true],
  ['range loop', 's = 0\nfor range(1, 101) as i { s += i }\nmain = rule { s == 5050 }', true],
]);

programs('functions', [
  ['anonymous function', 'double = func(x) {\n\treturn x * 2\n}\nmain = rule { double(12) is 24 }', true],
  ['named function', 'func add1(x) {\n  return x + 1\n}\nmain = rule { add1(1) == 2 }', true],
  ['named functions cannot be reassigned', 'func sum(a, b) {\n  return a + b\n}\nsum = 4\nmain = true', 'ERR: cannot assign to sum: it is a named function'],
  ['named functions cannot reuse a name', 'sum = 4\nfunc sum(a, b) {\n  return a + b\n}\nmain = true', 'ERR: cannot declare function sum'],
  ['closures keep their scope', 'f = func() {\n\ta = 42\n\tdouble = func() { return a * 2 }\n\treturn double\n}\ndouble = f()\nmain = rule { double() == 84 }', true],
  ['adder factory', 'func makeAdder(a) {\n  return func(b) {\n    return a + b\n  }\n}\nadd5 = makeAdder(5)\nmain = rule { add5(3) == 8 }', true],
  ['a function sets an outer variable', 'a = 1\nf = func() {\n\ta = 12\n\tb = 1\n\treturn undefined\n}\nf()\nmain = rule { a == 12 }', true],
  ['function locals do not leak', 'f = func() {\n\tb = 1\n\treturn undefined\n}\nf()\nmain = rule { b == 1 }', 'ERR: b is not defined'],
  ['parameters are local', 'f = func(x) {\n\tx = "value"\n\treturn x\n}\nx = "outside"\nf(x)\nmain = rule { x == "outside" }', true],
  ['collections are passed by reference', 'f = func(x) {\n\tappend(x, "value")\n\treturn x\n}\nx = []\nf(x)\nmain = rule { x == ["value"] }', true],
  ['recursion', 'fib = func(x) {\n\tif x <= 0 {\n\t\treturn undefined\n\t}\n\tif x == 1 {\n\t\treturn 1\n\t} else {\n\t\treturn x + fib(x - 1)\n\t}\n}\nmain = rule { fib(10) == 55 and fib(0) is not defined }', true],
  ['too few arguments', 'f = func(a, b) { return a }\nmain = rule { f(1) == 1 }', 'ERR: 2:15: f takes 2 arguments, got 1'],
  ['too many arguments', 'func g(a) { return a }\nmain = rule { g(1, 2) == 1 }', 'ERR: g takes 1 argument, got 2'],
  ['missing return', 'f = func() { x = 1 }\nf()\nmain = true', 'ERR: 1:5: function f ended without a return statement'],
  ['calling a non-function', 'x = 5\nx()\nmain = true', 'ERR: 2:1: cannot call an int'],
  ['calling undefined is undefined', 'm = {}\nmain = rule { m.f() else true }', true],
  ['calling an undeclared name', 'nope()\nmain = true', 'ERR: nope is not defined'],
  ['return undefined', 'f = func() { return undefined }\nmain = rule { f() is not defined }', true],
  ['functions are values', 'apply = func(f, x) { return f(x) }\nmain = rule { apply(func(v) { return v + 1 }, 1) == 2 }', true],
  ['functions in maps', 'ops = { "inc": func(v) { return v + 1 } }\nmain = rule { ops.inc(1) == 2 and ops["inc"](2) == 3 }', true],
  ['builtins can be passed around', 'len = length\nmain = rule { len([1, 2]) == 2 }', true],
  ['a variable may shadow a builtin', 'length = 3\nmain = rule { length == 3 }', true],
  ['a call statement result is dropped', 'f = func() { return 1 }\nf()\nmain = true', true],
]);

// ---- Rules and main (spec: "Rule Expressions", "Program Execution") ------------------------------

programs('rules and main', [
  ['main true', 'main = rule { true }', true],
  ['main false', 'main = rule { false }', false],
  ['main may be a plain bool', 'main = 1 < 2', true],
  ['rules referencing rules', 'hour = 4\npast_midnight = rule { hour >= 0 }\nbefore_noon = rule { hour < 12 }\nmain = rule { past_midnight and before_noon }', true],
  ['when guard true evaluates the body', 'x = 1\nmain = rule when x == 1 { false }', false],
  ['when guard false makes the rule true', 'x = 2\nmain = rule when x == 1 { false }', true],
  ['when guard undefined leaves it undefined', 'main = rule when undefined { true }', false],
  ['when guard not a bool', 'main = rule when "yes" { true }', false],
  ['rule with when on its own', 'r = rule when false { 1 / 0 == 1 }\nmain = rule { r }', true],
  ['rules are lazy: an unreferenced failing rule is harmless', 'bad = rule { 1 / 0 == 1 }\nmain = rule { true }', true],
  ['rules are lazy: they see later assignments', 'a = 1\nr = rule { a == 2 }\na = 2\nmain = rule { r }', true],
  ['a referenced failing rule fails the policy', 'bad = rule { 1 / 0 == 1 }\nmain = rule { bad }', 'ERR: 1:16: integer division by zero'],
  ['rules can hold non-bool values', 'names = rule { map [1, 2] as v { v * 2 } }\nmain = rule { names == [2, 4] }', true],
  ['a rule referring to itself', 'r = rule { r }\nmain = rule { r }', 'ERR: rule r refers to itself'],
  ['no main', 'x = 1', 'ERR: policy has no main rule'],
  ['main not a bool', 'main = rule { 42 }', 'ERR: main must be a bool, not an int'],
  ['main a string', 'main = "true"', 'ERR: main must be a bool, not a string'],
  ['main undefined is false', 'main = rule { undefined }', false],
  ['main undefined through a missing key', 'm = {}\nmain = rule { m.x.y == 1 }', false],
  ['rule inside a list is evaluated', 'l = [rule { 1 == 1 }]\nmain = rule { l[0] }', true],
  ['rule returned from a function', 'f = func() { return rule { true } }\nmain = rule { f() }', true],
  ['rule in a function scope', 'f = func(x) {\n  r = rule { x > 1 }\n  return r\n}\nmain = rule { f(2) and not f(0) }', true],
  ['error() fails the policy', 'main = rule { error("custom failure", 42) }', 'ERR: 1:15: error(): custom failure 42'],
  ['main reassigned', 'main = rule { false }\nmain = rule { true }', true],
]);

describe('rules are memoised and traced', () => {
  it('evaluates a rule once however often it is referenced', () => {
    const r = run('r = rule { print("evaluated") }\nmain = rule { r and r and r }');
    expect(r.result).toBe(true);
    expect(r.trace.filter((l) => l === 'print: evaluated')).toHaveLength(1);
  });
  it('a false result traces the rules with their values', () => {
    const r = run('a = rule { true }\nb = rule { 1 > 2 }\nmain = rule { a and b }');
    expect(r).toEqual({
      result: false,
      trace: ['rule a (1:5) = true', 'rule b (2:5) = false', 'rule main (3:8) = false'],
    });
  });
  it('a true result carries print output only', () => {
    const r = run('print("hello", "world", 42, [1, "a"], {"k": null})\nmain = rule { true }');
    expect(r).toEqual({ result: true, trace: ['print: hello world 42 [1, "a"] {"k": null}'] });
  });
  it('print of a rule prints its value', () => {
    const r = run('one_is_zero = rule { 1 == 0 }\nprint(one_is_zero)\nmain = true');
    expect(r.trace).toEqual(['print: false']);
  });
  it('an undefined main says so in the trace', () => {
    const r = run('main = rule { undefined }');
    expect(r.result).toBe(false);
    expect(r.trace).toContain('main is undefined (treated as false)');
    expect(r.error).toBeUndefined();
  });
  it('an error keeps the trace gathered so far', () => {
    const r = run('print("before")\nx = 1 / 0\nmain = true');
    expect(r).toEqual({ result: false, trace: ['print: before'], error: '2:7: integer division by zero' });
  });
  it('print output is capped', () => {
    const r = run('for range(500) as i { print(i) }\nmain = true');
    expect(r.trace).toHaveLength(100);
  });
});

// ---- Scope (the Scope page's example) ------------------------------------------------------------

describe('scope', () => {
  it('follows the documented example', () => {
    const r = run('a = 1\nprint(a)\nf = func() {\n\tprint(a)\n\ta = 12\n\tb = 1\n\treturn undefined\n}\nf()\nprint(a)\nmain = true');
    expect(r.trace).toEqual(['print: 1', 'print: 1', 'print: 12']);
  });
  it('a function defined before a variable sees it when called', () => {
    expect(run('f = func() { return later }\nlater = 5\nmain = rule { f() == 5 }').result).toBe(true);
  });
});

// ---- Imports and params (spec: "Imports", "Parameters") ------------------------------------------

describe('imports', () => {
  const imports = { strings, time, request: dataImport('request', { path: 'secret/foo', operation: 'read' }) };
  it('binds an import by name', () => {
    expect(run('import "strings"\nmain = rule { strings.has_prefix("abc", "ab") }', { imports }).result).toBe(true);
  });
  it('binds an import under an alias, and only there', () => {
    expect(run('import "strings" as s\nmain = rule { s.has_prefix("abc", "ab") }', { imports }).result).toBe(true);
    expect(run('import "strings" as s\nmain = rule { strings.has_prefix("abc", "ab") }', { imports }).error).toContain('strings is not defined');
  });
  it('host imports are implicit unless restricted', () => {
    expect(run('main = rule { request.path == "secret/foo" }', { imports }).result).toBe(true);
    expect(run('main = rule { request.path == "secret/foo" }', { imports, implicit: [] }).error).toContain('request is not defined');
  });
  it('a policy variable shadows an implicit import', () => {
    expect(run('request = {"path": "x"}\nmain = rule { request.path == "x" }', { imports }).result).toBe(true);
  });
  it('an explicit import cannot be assigned to', () => {
    expect(run('import "strings"\nstrings = 1\nmain = true', { imports }).error).toBe('2:1: cannot assign to strings: it is an import');
  });
  it('a missing import is an error', () => {
    expect(run('import "nope"\nmain = true', { imports }).error).toBe('1:1: import "nope" is not available');
  });
  it('an import error gets the call position', () => {
    expect(run('import "strings"\nmain = rule {\n  strings.nothing("a")\n}', { imports }).error).toBe('3:3: strings.nothing is not a function');
  });
  it('a JavaScript exception from an import is reported, not thrown', () => {
    const broken: SObject = { kind: 'object', typeName: 'broken', get: () => { throw new TypeError('boom'); }, call: () => null };
    expect(run('import "broken"\nmain = rule { broken.x }', { imports: { broken } }).error).toBe('2:15: import failed: boom');
  });
  it('imports hand out objects with their own attributes', () => {
    expect(run('import "time"\nt = time.load("2017-09-17T13:25:29Z")\nmain = rule { t.unix == 1505654729 }', { imports }).result).toBe(true);
  });
  it('an import attribute that is missing is undefined', () => {
    expect(run('main = rule { request.nothing else true }', { imports }).result).toBe(true);
  });
  it('an import can be indexed with a string', () => {
    expect(run('main = rule { request["operation"] == "read" }', { imports }).result).toBe(true);
  });
  it('import names must be distinct', () => {
    expect(run('import "strings"\nimport "time" as strings\nmain = true', { imports }).error).toContain('used twice');
  });
});

describe('params', () => {
  it('uses a supplied value', () => {
    expect(run('param foo\nmain = rule { foo == 3 }', { params: { foo: 3n } }).result).toBe(true);
  });
  it('uses the default', () => {
    expect(run('param bar default 42\nmain = rule { bar == 42 }').result).toBe(true);
  });
  it('a supplied value beats the default', () => {
    expect(run('param bar default 42\nmain = rule { bar == 1 }', { params: { bar: 1n } }).result).toBe(true);
  });
  it('negative and structured defaults', () => {
    expect(run('param n default -5\nparam l default ["a", 1.5]\nparam m default {"k": true}\nmain = rule { n == -5 and l[1] == 1.5 and m.k }').result).toBe(true);
  });
  it('a required param that is missing is an error', () => {
    expect(run('param foo\nmain = true').error).toBe('1:1: param foo is required and was not supplied');
  });
  it('a param may be reassigned', () => {
    expect(run('param x default 1\nx = 2\nmain = rule { x == 2 }').result).toBe(true);
  });
  it('a param may not take an import name', () => {
    expect(run('import "time"\nparam time default "11:00"\nmain = true', { imports: { time } }).error).toContain('conflicts');
  });
  it('a param may not take a built-in name', () => {
    expect(run('param length default 1\nmain = true').error).toContain('conflicts');
  });
});

// ---- Runtime errors carry positions --------------------------------------------------------------

programs('error positions', [
  ['operator position', 'x = 1\ny = x +\n  "a"\nmain = true', 'ERR: 2:7: operator + does not apply'],
  ['comparison ordering', 'main = rule {\n  true < false\n}', 'ERR: 2:8: operator < does not apply to bool values'],
  ['undeclared name', 'a = true\nmain = rule { a and\n   zzz }', 'ERR: 3:4: zzz is not defined'],
  ['index', 'l = [1]\nv = l["k"]', 'ERR: 2:5: a list index must be an int'],
  ['selector', 'n = 5\nv = n.field', 'ERR: 2:5: cannot select .field on an int'],
  ['builtin call', 'x = 1\n\n  y = keys(x)', 'ERR: 3:7: keys needs a map'],
  ['inside a function', 'f = func(d) {\n  return 10 / d\n}\nmain = rule { f(0) == 1 }', 'ERR: 2:13: integer division by zero'],
  ['matches', 'main = rule { "a" matches "(a)\\\\1" }', 'ERR: 1:19: invalid regular expression'],
]);

// ---- Limits --------------------------------------------------------------------------------------

describe('limits', () => {
  it('an endless for over a growing list hits the step limit', () => {
    const r = run('l = [1]\nfor l as v { append(l, v) }\nmain = true', { limits: { maxSteps: 50_000 } });
    expect(r).toMatchObject({ result: false, error: 'policy exceeded its step limit (50000)' });
  });
  it('the default step limit stops an endless loop', () => {
    const r = run('l = [1]\nfor l as v { append(l, v) }\nmain = true');
    expect(r.error).toBe('policy exceeded its step limit (1000000)');
  });
  it('deep recursion hits the depth limit', () => {
    const r = run('f = func(n) { return f(n + 1) }\nmain = rule { f(0) }');
    expect(r.result).toBe(false);
    expect(r.error).toMatch(/^policy exceeded its depth limit \(200\) at 1:22$/);
  });
  it('a custom depth limit', () => {
    const src = 'f = func(n) { if n == 0 { return 0 }\n return f(n - 1) }\nmain = rule { f(30) == 0 }';
    expect(run(src, { limits: { maxDepth: 20 } }).error).toContain('depth limit (20)');
    expect(run(src, { limits: { maxDepth: 40 } }).result).toBe(true);
  });
  it('a huge range is charged by its size', () => {
    expect(run('r = range(100000000)\nmain = true').error).toBe('policy exceeded its step limit (1000000)');
  });
  it('doubling a string is charged by its size', () => {
    expect(run('s = "ab"\nfor range(64) as i { s = s + s }\nmain = true').error).toBe('policy exceeded its step limit (1000000)');
  });
  it('mutually recursive rules and functions hit the depth limit', () => {
    const r = run('func f() { return g() }\nfunc g() { return f() }\nmain = rule { f() }');
    expect(r.error).toContain('depth limit');
  });
  it('the wall-time backstop ends a long run', () => {
    let now = 1_000_000;
    const spy = vi.spyOn(Date, 'now').mockImplementation(() => (now += 10));
    try {
      const r = run('n = 0\nfor range(100000) as i { n += 1 }\nmain = true', { limits: { maxMillis: 50 } });
      expect(r).toMatchObject({ result: false, error: 'policy exceeded its time limit (50 ms)' });
    } finally {
      spy.mockRestore();
    }
  });
  it('an anonymous function is not named in messages', () => {
    expect(run('main = rule { func(a) { return a }() }').error).toBe('1:15: func takes 1 argument, got 0');
  });
  it('a small policy stays far below the limits', () => {
    expect(run('main = rule { all range(100) as i { i >= 0 } }', { limits: { maxSteps: 1_000 } }).result).toBe(true);
  });
});

// ---- Example policies of reference §6.4 ----------------------------------------------------------

function vaultImports(over: { request?: Record<string, unknown>; token?: Record<string, unknown>; identity?: Record<string, unknown>; mfaValid?: boolean } = {}): Record<string, SObject> {
  return {
    strings,
    sockaddr,
    time,
    request: dataImport('request', { path: 'auth/ldap/login/alice', operation: 'update', unauthenticated: true, connection: { remote_addr: '10.20.3.4' }, data: {}, ...over.request }),
    token: dataImport('token', { creation_time: '2018-01-01T00:00:00Z', policies: ['default'], ...over.token }),
    identity: dataImport('identity', {
      entity: { id: 'e-1', name: 'jeff', metadata: { org_id: '7' } },
      groups: { by_id: { 'g-1': { name: 'sysops' } }, by_name: { sysops: { id: 'g-1' } }, names: ['sysops'] },
      ...over.identity,
    }),
    mfa: dataImport('mfa', { methods: { ping: { valid: over.mfaValid ?? true } } }),
  };
}

const LOGIN_GUARD = `
import "sockaddr"
import "mfa"
import "strings"

# Logins only from the private range
cidrcheck = rule {
    sockaddr.is_contained(request.connection.remote_addr, "10.20.0.0/16")
}

# The Ping MFA method must have validated
ping_valid = rule {
    mfa.methods.ping.valid
}

main = rule when strings.has_prefix(request.path, "auth/ldap/login") {
    ping_valid and cidrcheck
}
`;

const IDENTITY_ALLOW = `
main = rule {
    identity.entity.name is "jeff" or
    identity.entity.id is "fe2a5bfd-c483-9263-b0d4-f9d345efdf9f" or
    "sysops" in identity.groups.names or
    "14c0940a-5c07-4b97-81ec-0d423accb8e0" in keys(identity.groups.by_id)
}
`;

const BREAK_GLASS = `
import "time"

# Tokens created before the cutoff are refused everywhere
main = rule when not request.unauthenticated {
    time.load(token.creation_time).unix > time.load("2017-09-17T13:25:29Z").unix
}
`;

const DELEGATED_EGP = `
import "strings"

allowed_prefixes = ["secret/team-a/", "kv/team-a/"]

precond = rule {
    request.operation in ["create", "update"] and
    strings.has_prefix(request.path, "sys/policies/egp/")
}

func paths_allowed(paths) {
    for strings.split(paths, ",") as p {
        p = strings.trim_prefix(strings.trim_space(p), "/")
        ok = any allowed_prefixes as prefix { strings.has_prefix(p, prefix) }
        if not ok {
            return false
        }
    }
    return true
}

main = rule when precond {
    strings.has_prefix(request.path, "sys/policies/egp/team-a-") and
    paths_allowed(request.data.paths)
}
`;

const DENY_ORG = `
precond = rule {
    identity.entity.metadata.org_id is "100"
}

main = rule when precond {
    false
}
`;

describe('reference §6.4 example policies', () => {
  const compiled = {
    login: compilePolicy(parsePolicy(LOGIN_GUARD)),
    allow: compilePolicy(parsePolicy(IDENTITY_ALLOW)),
    glass: compilePolicy(parsePolicy(BREAK_GLASS)),
    egp: compilePolicy(parsePolicy(DELEGATED_EGP)),
    deny: compilePolicy(parsePolicy(DENY_ORG)),
  };
  const ev = (k: keyof typeof compiled, over: Parameters<typeof vaultImports>[0] = {}) => compiled[k]({ imports: vaultImports(over) });

  it('1. login guard: passes from the private range with MFA', () => {
    expect(ev('login')).toEqual({ result: true, trace: [] });
  });
  it('1. login guard: fails from outside the range, naming the rule', () => {
    const r = ev('login', { request: { connection: { remote_addr: '192.168.1.1' } } });
    expect(r.result).toBe(false);
    expect(r.trace).toContain('rule cidrcheck (7:13) = false');
  });
  it('1. login guard: fails without MFA (and short-circuits the address check)', () => {
    const r = ev('login', { mfaValid: false });
    expect(r.result).toBe(false);
    expect(r.trace).toEqual(['rule ping_valid (12:14) = false', 'rule main (16:8) = false']);
  });
  it('1. login guard: other paths pass', () => {
    expect(ev('login', { request: { path: 'secret/data/x', connection: { remote_addr: '1.2.3.4' } }, mfaValid: false }).result).toBe(true);
  });
  it('2. identity allow-list: by entity name', () => {
    expect(ev('allow').result).toBe(true);
  });
  it('2. identity allow-list: by group name only', () => {
    expect(ev('allow', { identity: { entity: { id: 'x', name: 'bob' }, groups: { by_id: {}, names: ['sysops'] } } }).result).toBe(true);
  });
  it('2. identity allow-list: by group id only', () => {
    const groups = { by_id: { '14c0940a-5c07-4b97-81ec-0d423accb8e0': {} }, names: [] };
    expect(ev('allow', { identity: { entity: { id: 'x', name: 'bob' }, groups } }).result).toBe(true);
  });
  it('2. identity allow-list: nobody matching is denied', () => {
    expect(ev('allow', { identity: { entity: { id: 'x', name: 'bob' }, groups: { by_id: {}, names: ['devs'] } } }).result).toBe(false);
  });
  it('2. identity allow-list: no entity at all is denied (undefined main)', () => {
    const r = ev('allow', { identity: { entity: undefined, groups: undefined } });
    expect(r.result).toBe(false);
  });
  it('3. break glass: a token newer than the cutoff passes', () => {
    expect(ev('glass', { request: { unauthenticated: false } }).result).toBe(true);
  });
  it('3. break glass: an older token is refused', () => {
    expect(ev('glass', { request: { unauthenticated: false }, token: { creation_time: '2017-01-01T00:00:00Z' } }).result).toBe(false);
  });
  it('3. break glass: unauthenticated requests pass', () => {
    expect(ev('glass', { request: { unauthenticated: true }, token: { creation_time: '2017-01-01T00:00:00Z' } }).result).toBe(true);
  });
  it('3. break glass: a token time the import cannot parse is an error', () => {
    expect(ev('glass', { request: { unauthenticated: false }, token: { creation_time: 'garbage' } }).error).toBe('6:5: time.load: cannot parse garbage');
  });
  const egpReq = (path: string, paths: string, operation = 'update') => ({ request: { path, operation, data: { paths } } });
  it('4. delegated EGP: the team writes a policy on its own paths', () => {
    expect(ev('egp', egpReq('sys/policies/egp/team-a-read', 'secret/team-a/x, /kv/team-a/*')).result).toBe(true);
  });
  it('4. delegated EGP: a path outside the team prefixes is refused', () => {
    expect(ev('egp', egpReq('sys/policies/egp/team-a-read', 'secret/team-a/x,secret/team-b/y')).result).toBe(false);
  });
  it('4. delegated EGP: a policy name without the team prefix is refused', () => {
    expect(ev('egp', egpReq('sys/policies/egp/other', 'secret/team-a/x')).result).toBe(false);
  });
  it('4. delegated EGP: reads and other paths are not concerned', () => {
    expect(ev('egp', egpReq('sys/policies/egp/other', 'x', 'read')).result).toBe(true);
    expect(ev('egp', egpReq('secret/data/x', 'x')).result).toBe(true);
  });
  it('4. delegated EGP: missing paths are an error from the import', () => {
    const r = ev('egp', { request: { path: 'sys/policies/egp/team-a-x', operation: 'create', data: {} } });
    expect(r.result).toBe(false);
    expect(r.error).toContain('expected a string');
  });
  it('5. deny an org: members of the org are denied', () => {
    const r = ev('deny', { identity: { entity: { metadata: { org_id: '100' } } } });
    expect(r).toEqual({ result: false, trace: ['rule precond (2:11) = true', 'rule main (6:8) = false'] });
  });
  it('5. deny an org: others pass', () => {
    expect(ev('deny').result).toBe(true);
  });
  it('5. deny an org: no entity passes (guard undefined is not true… nor false)', () => {
    // identity.entity.metadata.org_id is undefined, so the guard is undefined and so is main.
    expect(ev('deny', { identity: { entity: undefined } }).result).toBe(false);
  });
  it('a compiled policy can be run many times', () => {
    for (let i = 0; i < 200; i++) expect(ev('login').result).toBe(true);
  });
});

// ---- Values at the boundary ----------------------------------------------------------------------

describe('values from the host', () => {
  it('fromJSON numbers: integral ones are ints, others floats', () => {
    const p = probe();
    run('probe.put(request.a + request.b)\nmain = true', { imports: { probe: p.obj, request: dataImport('request', { a: 2, b: 0.5 }) } });
    expect(p.seen).toEqual([2.5]);
  });
  it('maps from JSON can be iterated and compared', () => {
    const r = run('main = rule { all request.data as k, v { v is not null } and keys(request.data) == ["x", "y"] }', {
      imports: { request: dataImport('request', { data: { x: 1, y: 'z' } }) },
    });
    expect(r.result).toBe(true);
  });
  it('evaluatePolicy never throws, even for an import handing out JavaScript undefined', () => {
    const odd: SObject = { kind: 'object', typeName: 'odd', get: () => undefined as unknown as Value, call: () => null };
    expect(run('main = rule { odd.x is not defined }', { imports: { odd } }).result).toBe(true);
  });
  it('SMap keys: 1 and 1.0 are the same key', () => {
    const m = new SMap();
    m.set(1n, 'a');
    expect(m.get(1)).toBe('a');
  });
});

// ---- Precedence as evaluated (spec: "Operator Precedence") ---------------------------------------

table('precedence results', [
  ['1 + 2 * 3', '7'],
  ['(1 + 2) * 3', '9'],
  ['2 * 3 % 4', '2'],
  ['10 - 4 + 1', '7'],
  ['1 + 2 == 3', 'true'],
  ['1 < 2 == true', 'true'],
  ['true == 1 < 2', 'undefined'],
  ['true or false and false', 'true'],
  ['false and true or true', 'true'],
  ['false xor true and true', 'true'],
  ['true or true xor true', 'false'],
  ['undefined else 1 + 1', '2'],
  ['undefined else 1 == 1', 'true'],
  ['2 in [1, 2] and 3 not in [1, 2]', 'true'],
  ['"ab" + "c" matches "^abc$"', 'true'],
  ['not true == false', 'true'],
  ['-2 * -3', '6'],
  ['[1, 2, 3][1] + 1', '3'],
  ['{"a": [1, 2]}.a[1] * 2', '4'],
  ['length([1, 2]) + length("abc") * 2', '8'],
  ['[1] + [2] is [1, 2]', 'true'],
  ['1 + 1 is not 3', 'true'],
  ['[] is empty or 1 / 0 == 1', 'true'],
]);

describe('runs are independent', () => {
  it('a compiled policy starts from scratch on every run', () => {
    const f = compilePolicy(parsePolicy('l = []\nappend(l, 1)\nmain = rule { length(l) == 1 }'));
    expect(f({ imports: {} }).result).toBe(true);
    expect(f({ imports: {} }).result).toBe(true);
  });
  it('rules are memoised per run, not across runs', () => {
    const f = compilePolicy(parsePolicy('main = rule { request.n > 1 }'));
    expect(f({ imports: { request: dataImport('request', { n: 2 }) } }).result).toBe(true);
    expect(f({ imports: { request: dataImport('request', { n: 0 }) } }).result).toBe(false);
  });
  it('a long rule value is shortened in the trace', () => {
    const r = run('big = rule { range(1000) }\nmain = rule { length(big) == 0 }');
    expect(r.result).toBe(false);
    const line = r.trace.find((l) => l.startsWith('rule big')) ?? '';
    expect(line.length).toBeLessThan(300);
    expect(line).toContain('…');
  });
});
