// Sentinel's standard imports (src/core/sentinel/imports), called directly as SObjects. The
// tables start from the examples in HashiCorp's import documentation (strings, time, sockaddr,
// units) and add the edges: Go's trimming and splitting rules, float printing in join, RFC 3339
// offsets, fractions and range checks, leap years, calendar arithmetic against Date, IPv6
// spellings and CIDR boundaries, wrong types, wrong arity and undefined arguments.

import { describe, expect, it } from 'vitest';
import {
  goFloatString,
  parseIPBlock,
  parseRFC3339,
  standardImports,
  Timespace,
} from '../../../../src/core/sentinel/imports';
import { civilFromDays, daysFromCivil } from '../../../../src/core/sentinel/imports/time';
import { SMap, SentinelRuntimeError, UNDEFINED, type SObject, type Value } from '../../../../src/core/sentinel/values';

/** 2026-11-26T12:00:00.5Z, a Thursday. */
const FIXED_MS = Date.UTC(2026, 10, 26, 12, 0, 0, 500);
let clock = FIXED_MS;
const imports = standardImports(() => clock);
const strings = imports.strings;
const time = imports.time;
const sockaddr = imports.sockaddr;
const units = imports.units;

/** An expected runtime error whose message matches. */
class Fails {
  constructor(readonly message: RegExp) {}
}
const fails = (message: RegExp) => new Fails(message);

type Expected = Value | Fails;
type Case = [fn: string, args: Value[], expected: Expected];

function check(obj: SObject, fn: string, args: Value[], expected: Expected): void {
  if (expected instanceof Fails) {
    let thrown: unknown;
    try {
      obj.call(fn, args);
    } catch (e) {
      thrown = e;
    }
    expect(thrown).toBeInstanceOf(SentinelRuntimeError);
    expect((thrown as Error).message).toMatch(expected.message);
    return;
  }
  const got = obj.call(fn, args);
  if (got instanceof Timespace) expect(got.toString()).toBe(expected);
  else expect(got).toEqual(expected);
}

const label = (fn: string, args: Value[]) =>
  `${fn}(${args.map((a) => (a === UNDEFINED ? 'undefined' : typeof a === 'bigint' ? `${a}` : JSON.stringify(a, (_k, v) => (typeof v === 'bigint' ? `${v}` : v)))).join(', ')})`;

function table(obj: SObject, cases: Case[]): void {
  for (const [fn, args, expected] of cases) {
    it(label(fn, args), () => check(obj, fn, args, expected));
  }
}

const U: typeof UNDEFINED = UNDEFINED;

// ---- strings -------------------------------------------------------------------------------------

describe('strings', () => {
  describe('documented examples', () => {
    table(strings, [
      ['has_prefix', ['billing-id', 'billing-'], true],
      ['has_prefix', ['bill-id', 'billing-'], false],
      ['has_suffix', ['billing-id', 'id'], true],
      ['has_suffix', ['billing-name', 'id'], false],
      ['join', [['foo', 'bar', 'baz'], '.'], 'foo.bar.baz'],
      ['join', [[['foo', 'bar'], 'baz'], '.'], 'foo.bar.baz'],
      ['join', [['a', 1n, 1.01, true], ','], 'a,1,1.01,true'],
      ['replace', ['foobar', 'foo', 'bar'], 'barbar'],
      ['replace', ['foofoofoobar', 'foo', 'bar', 1n], 'barfoofoobar'],
      ['replace', ['foofoofoobar', 'foo', 'bar', 2n], 'barbarfoobar'],
      ['replace', ['foobar', 'test', 'bar'], 'foobar'],
      ['replace', ['foobar', 'foo', 'bar', 0n], 'foobar'],
      ['trim', ['iiifoobariii', 'i'], 'foobar'],
      ['trim', ['!1!bar foo!!1', '!1'], 'bar foo'],
      ['trim_left', ['aaaaaaaafoo', 'a'], 'foo'],
      ['trim_left', ['!!!bar!!!', '!'], 'bar!!!'],
      ['trim_right', ['foo_bar...', '.'], 'foo_bar'],
      ['trim_right', ['billing---', '-'], 'billing'],
      ['trim_space', ['      foo    '], 'foo'],
      ['trim_space', [' bar foo '], 'bar foo'],
      ['trim_prefix', ['billing-id', 'billing-'], 'id'],
      ['trim_prefix', ['bill-id', 'billing-'], 'bill-id'],
      ['trim_suffix', ['billing-id', '-id'], 'billing'],
      ['trim_suffix', ['bill-id', '-foo'], 'bill-id'],
      ['to_lower', ['FoO'], 'foo'],
      ['to_upper', ['FoO'], 'FOO'],
      ['split', ['foo,bar,baz', ','], ['foo', 'bar', 'baz']],
      ['split', [['foo', 'bar', 'baz'], ','], ['foo', 'bar', 'baz']],
    ]);
  });

  describe('edges (Go strings semantics)', () => {
    table(strings, [
      ['has_prefix', ['', ''], true],
      ['has_prefix', ['abc', ''], true],
      ['has_prefix', ['', 'a'], false],
      ['has_prefix', ['日本語', '日本'], true],
      ['has_suffix', ['x', ''], true],
      ['has_suffix', ['id', 'billing-id'], false],
      ['trim_prefix', ['abc', ''], 'abc'],
      ['trim_prefix', ['aaa', 'a'], 'aa'],
      ['trim_suffix', ['aaa', 'a'], 'aa'],
      ['trim_suffix', ['abc', ''], 'abc'],
      ['trim', ['', 'x'], ''],
      ['trim', ['xxx', 'x'], ''],
      ['trim', ['abc', ''], 'abc'],
      ['trim', ['ébcé', 'é'], 'bc'],
      ['trim', ['😀a😀', '😀'], 'a'],
      ['trim_left', ['abcabc', 'ba'], 'cabc'],
      ['trim_right', ['abcabc', 'cb'], 'abca'],
      ['trim_space', ['\t\n foo \r\n\v\f'], 'foo'],
      ['trim_space', ['\u00a0x\u3000\u2028'], 'x'],
      ['trim_space', ['\ufeffx'], '\ufeffx'],
      ['trim_space', ['   '], ''],
      ['to_lower', ['ÀÉÎ'], 'àéî'],
      ['to_upper', ['straße'], 'STRAßE'],
      ['to_upper', [''], ''],
      ['split', ['a,b,', ','], ['a', 'b', '']],
      ['split', ['', ','], ['']],
      ['split', ['abc', ''], ['a', 'b', 'c']],
      ['split', ['a😀b', ''], ['a', '😀', 'b']],
      ['split', ['', ''], []],
      ['to_lower', ['İSTANBUL'], 'istanbul'],
      ['split', ['a--b--c', '--'], ['a', 'b', 'c']],
      ['split', ['abc', 'x'], ['abc']],
      ['replace', ['aaa', 'a', 'b', -1n], 'bbb'],
      ['replace', ['aaa', 'a', 'b', 10n], 'bbb'],
      ['replace', ['abc', '', '-'], '-a-b-c-'],
      ['replace', ['abc', '', '-', 2n], '-a-bc'],
      ['replace', ['aaaa', 'aa', 'b'], 'bb'],
      ['replace', ['banana', 'ana', 'X'], 'bXna'],
      ['join', [[], ','], ''],
      ['join', [['solo'], ','], 'solo'],
      ['join', [[[[1n]], [2n, [3n]]], '+'], '1+2+3'],
      ['join', [[2.0, -0.5, 1000000.0, 123456.0, 0.0001, 0.00001], ' '], '2 -0.5 1e+06 123456 0.0001 1e-05'],
      ['join', [[true, false], ''], 'truefalse'],
      ['join', [['a', U], ','], U],
    ]);
  });

  describe('wrong types, arity and undefined', () => {
    table(strings, [
      ['has_prefix', [1n, 'a'], fails(/strings\.has_prefix: s must be a string, got int/)],
      ['has_prefix', ['a', null], fails(/prefix must be a string, got null/)],
      ['has_prefix', ['a'], fails(/expected 2 arguments \(s, prefix\), got 1/)],
      ['has_prefix', [U, 'a'], U],
      ['to_upper', [U], U],
      ['to_upper', [['a']], fails(/must be a string, got list/)],
      ['split', [U, ','], U],
      ['split', [5n, ','], fails(/strings\.split: s must be a string, got int/)],
      ['split', ['a,b', 1n], fails(/sep must be a string/)],
      ['join', ['abc', ','], fails(/a must be a list, got string/)],
      ['join', [['a', new SMap()], ','], fails(/cannot join a map/)],
      ['join', [['a', null], ','], fails(/cannot join a null/)],
      ['replace', ['a', 'b', 'c', 'd'], fails(/times must be an int, got string/)],
      ['replace', ['a', 'b'], fails(/expected 3 to 4 arguments/)],
      ['replace', ['a', 'b', 'c', 1n, 2n], fails(/expected 3 to 4 arguments/)],
      ['nope', ['a'], fails(/strings\.nope does not exist/)],
    ]);
  });

  it('split hands a list back as a copy', () => {
    const list: Value[] = ['a', 'b'];
    const got = strings.call('split', [list, ',']);
    expect(got).toEqual(list);
    expect(got).not.toBe(list);
  });

  it('has no attributes, and no inherited names', () => {
    expect(strings.get('has_prefix')).toBe(UNDEFINED);
    expect(strings.get('__proto__')).toBe(UNDEFINED);
    expect(() => strings.call('constructor', [])).toThrow(SentinelRuntimeError);
  });
});

describe('goFloatString (how join prints floats, as Go %v)', () => {
  const cases: [number, string][] = [
    [1.01, '1.01'], [0.1, '0.1'], [100000, '100000'], [1e6, '1e+06'], [1234567, '1.234567e+06'],
    [1e20, '1e+20'], [1e21, '1e+21'], [0.0001, '0.0001'], [1.5e-7, '1.5e-07'], [-2.5, '-2.5'],
    [123456.789, '123456.789'], [5e-324, '5e-324'], [1.7976931348623157e308, '1.7976931348623157e+308'],
    [NaN, 'NaN'], [Infinity, '+Inf'], [-Infinity, '-Inf'], [0, '0'], [-0, '-0'],
  ];
  for (const [f, want] of cases) it(`${f} → ${want}`, () => expect(goFloatString(f)).toBe(want));
});

// ---- time ----------------------------------------------------------------------------------------

const load = (v: Value) => time.call('load', [v]) as Timespace;
/** A timespace method that answers a timespace (add), printed as RFC 3339. */
function text(v: Value): string {
  expect(v).toBeInstanceOf(Timespace);
  return (v as Timespace).toString();
}
const DOC = '2019-11-16T01:20:30Z';

describe('time', () => {
  describe('timespace attributes (documented examples)', () => {
    const t = load(DOC);
    const cases: [string, Value][] = [
      ['hour', 1n], ['minute', 20n], ['second', 30n], ['day', 16n], ['month', 11n],
      ['month_name', 'November'], ['weekday', 6n], ['weekday_name', 'Saturday'], ['year', 2019n],
      ['unix', 1573867230n], ['unix_nano', 1573867230000000000n], ['zone', 0n], ['zone_string', '+00:00'],
    ];
    for (const [attr, want] of cases) it(`load("${DOC}").${attr}`, () => expect(t.get(attr)).toEqual(want));
    it('zone and zone_string of -08:00', () => {
      const pst = load('2019-11-16T01:20:30-08:00');
      expect(pst.get('zone')).toBe(-28800n);
      expect(pst.get('zone_string')).toBe('-08:00');
    });
  });

  describe('add with each duration unit (documented examples)', () => {
    const cases: [string, string][] = [
      ['nanosecond', '2019-11-16T01:20:30.000000001Z'],
      ['microsecond', '2019-11-16T01:20:30.000001Z'],
      ['millisecond', '2019-11-16T01:20:30.001Z'],
      ['second', '2019-11-16T01:20:31Z'],
      ['minute', '2019-11-16T01:21:30Z'],
      ['hour', '2019-11-16T02:20:30Z'],
    ];
    for (const [unit, want] of cases) {
      it(`add(time.${unit} * 1)`, () => expect(text(load(DOC).call('add', [time.get(unit)]))).toBe(want));
    }
    it('units are ints of nanoseconds', () => {
      expect(time.get('hour')).toBe(3_600_000_000_000n);
      expect(time.get('minute')).toBe(60_000_000_000n);
      expect(time.get('nanosecond')).toBe(1n);
    });
  });

  describe('comparisons and sub (documented examples)', () => {
    it('before, after, equal with a timeish', () => {
      const t = load(DOC);
      expect(t.call('before', ['2019-11-15T01:20:30Z'])).toBe(false);
      expect(t.call('after', ['2019-11-15T01:20:30Z'])).toBe(true);
      expect(t.call('equal', ['2019-11-15T01:20:30Z'])).toBe(false);
    });
    it('sub gives t - u in nanoseconds, and add undoes it', () => {
      const d = load('2019-11-16T01:20:30Z').call('sub', ['2019-11-16T04:20:30Z']);
      expect(d).toBe(-3n * 3_600_000_000_000n);
      expect(text(load('2019-11-16T04:20:30Z').call('add', [d]))).toBe('2019-11-16T01:20:30Z');
    });
  });

  describe('load: RFC 3339 offsets and fractions', () => {
    it('an offset keeps its wall clock and moves the instant', () => {
      const t = load('2019-11-16T01:20:30+05:30');
      expect([t.get('hour'), t.get('minute'), t.get('zone'), t.get('zone_string')]).toEqual([1n, 20n, 19800n, '+05:30']);
      expect(t.get('unix')).toBe(1573867230n - 19800n);
    });
    it('a negative offset can put the local date in the previous year', () => {
      const t = load('2019-12-31T23:30:00-01:00');
      expect([t.get('year'), t.get('month'), t.get('day'), t.get('weekday_name')]).toEqual([2019n, 12n, 31n, 'Tuesday']);
      expect(t.call('equal', ['2020-01-01T00:30:00Z'])).toBe(true);
      expect(t.call('equal', [load('2020-01-01T00:30:00Z')])).toBe(true);
    });
    it('equal compares instants, not offsets', () => {
      expect(load('2019-11-16T01:20:30-08:00').call('equal', ['2019-11-16T09:20:30Z'])).toBe(true);
    });
    it('+00:00 is UTC', () => expect(load('2019-11-16T01:20:30+00:00').call('equal', [DOC])).toBe(true));
    const fractions: [string, bigint][] = [
      ['2019-11-16T01:20:30.123456789Z', 1573867230123456789n],
      ['2019-11-16T01:20:30.5Z', 1573867230500000000n],
      ['2019-11-16T01:20:30,25Z', 1573867230250000000n],
      ['2019-11-16T01:20:30.123456789999Z', 1573867230123456789n],
      ['2019-11-16T01:20:30.000001-08:00', 1573896030000001000n],
    ];
    for (const [text, ns] of fractions) it(`unix_nano of ${text}`, () => expect(load(text).get('unix_nano')).toBe(ns));
    it('unix floors a fraction', () => expect(load('1969-12-31T23:59:59.5Z').get('unix')).toBe(-1n));
    it('toString prints RFC 3339 with the fraction trimmed and the offset', () => {
      expect(load('2019-11-16T01:20:30.120-08:00').toString()).toBe('2019-11-16T01:20:30.12-08:00');
    });
  });

  describe('load: leap years', () => {
    const ok: [string, bigint][] = [
      ['2000-02-29T00:00:00Z', 951782400n],
      ['2024-02-29T12:00:00Z', 1709208000n],
      ['2400-02-29T00:00:00Z', 13574563200n],
      ['1972-12-31T23:59:59Z', 94694399n],
    ];
    for (const [text, unix] of ok) it(`${text} is valid`, () => expect(load(text).get('unix')).toBe(unix));
    const bad = ['1900-02-29T00:00:00Z', '2023-02-29T00:00:00Z', '2100-02-29T00:00:00Z', '2024-02-30T00:00:00Z', '2024-04-31T00:00:00Z'];
    for (const text of bad) it(`${text} is refused`, () => check(time, 'load', [text], fails(/day out of range/)));
    it('an int load on a leap day', () => {
      const t = load(951782400n);
      expect([t.get('year'), t.get('month'), t.get('day'), t.get('weekday_name')]).toEqual([2000n, 2n, 29n, 'Tuesday']);
    });
    it('the day after 2000-02-28 is the 29th, the day after 2100-02-28 is March 1st', () => {
      expect(text(load('2000-02-28T12:00:00Z').call('add', [24n * 3_600_000_000_000n]))).toBe('2000-02-29T12:00:00Z');
      expect(text(load('2100-02-28T12:00:00Z').call('add', [24n * 3_600_000_000_000n]))).toBe('2100-03-01T12:00:00Z');
    });
  });

  describe('load: ints and the epoch', () => {
    it('0 is 1970-01-01, a Thursday', () => {
      const t = load(0n);
      expect([t.get('year'), t.get('month'), t.get('day'), t.get('weekday'), t.get('hour')]).toEqual([1970n, 1n, 1n, 4n, 0n]);
    });
    it('-1 is the last second of 1969', () => expect(load(-1n).toString()).toBe('1969-12-31T23:59:59Z'));
    it('a year past 9999', () => expect(load(253402300800n).toString()).toBe('10000-01-01T00:00:00Z'));
    it('year 0000 parses', () => expect(load('0000-03-01T00:00:00Z').get('year')).toBe(0n));
    it('a timespace loads as itself', () => {
      const t = load(DOC);
      expect(time.call('load', [t])).toBe(t);
    });
  });

  describe('every weekday and month name', () => {
    const week = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
    week.forEach((name, i) => {
      it(`2024-01-${7 + i} is ${name}`, () => {
        const t = load(`2024-01-${String(7 + i).padStart(2, '0')}T10:00:00Z`);
        expect([t.get('weekday'), t.get('weekday_name')]).toEqual([BigInt(i), name]);
      });
    });
    const months = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
    it('month_name for each month', () => {
      expect(months.map((_, i) => load(`2024-${String(i + 1).padStart(2, '0')}-15T00:00:00Z`).get('month_name'))).toEqual(months);
    });
  });

  describe('load: refused input', () => {
    table(time, [
      ['load', ['2019-11-16'], fails(/not an RFC 3339 timestamp/)],
      ['load', ['2019-11-16 01:20:30Z'], fails(/not an RFC 3339 timestamp/)],
      ['load', ['2019-11-16t01:20:30Z'], fails(/not an RFC 3339 timestamp/)],
      ['load', ['2019-11-16T01:20:30z'], fails(/not an RFC 3339 timestamp/)],
      ['load', ['2019-11-16T01:20:30'], fails(/not an RFC 3339 timestamp/)],
      ['load', ['2019-11-16T01:20:30.Z'], fails(/not an RFC 3339 timestamp/)],
      ['load', ['2019-11-16T01:20:30+0800'], fails(/not an RFC 3339 timestamp/)],
      ['load', ['19-11-16T01:20:30Z'], fails(/not an RFC 3339 timestamp/)],
      ['load', [' 2019-11-16T01:20:30Z'], fails(/not an RFC 3339 timestamp/)],
      ['load', ['2019-13-01T00:00:00Z'], fails(/month out of range/)],
      ['load', ['2019-00-01T00:00:00Z'], fails(/month out of range/)],
      ['load', ['2019-11-00T00:00:00Z'], fails(/day out of range/)],
      ['load', ['2019-11-16T24:00:00Z'], fails(/hour out of range/)],
      ['load', ['2019-11-16T23:60:00Z'], fails(/minute out of range/)],
      ['load', ['2016-12-31T23:59:60Z'], fails(/second out of range/)],
      ['load', ['2019-11-16T01:20:30+24:00'], fails(/offset out of range/)],
      ['load', ['2019-11-16T01:20:30+05:60'], fails(/offset out of range/)],
      ['load', [1.5], fails(/time\.load: timeish must be a timespace, seconds since the epoch \(int\) or an RFC 3339 string, got float/)],
      ['load', [null], fails(/got null/)],
      ['load', [true], fails(/got bool/)],
      ['load', [U], U],
      ['load', [], fails(/expected 1 argument/)],
      ['now', [], fails(/time\.now is not a function/)],
    ]);
  });

  describe('timespace methods: arguments', () => {
    const t = load(DOC);
    it('before/after accept an int, a string and a timespace', () => {
      expect(t.call('before', [1573867231n])).toBe(true);
      expect(t.call('after', [1573867231n])).toBe(false);
      expect(t.call('before', [load('2019-11-16T01:20:30.000000001Z')])).toBe(true);
      expect(t.call('after', [DOC])).toBe(false);
      expect(t.call('equal', [1573867230n])).toBe(true);
    });
    it('add takes negative durations and floats, and keeps the offset', () => {
      expect(text(t.call('add', [-90n * 60_000_000_000n]))).toBe('2019-11-15T23:50:30Z');
      expect(text(t.call('add', [1.5 * 3_600_000_000_000]))).toBe('2019-11-16T02:50:30Z');
      expect(text(load('2019-11-16T01:20:30-08:00').call('add', [3_600_000_000_000n]))).toBe('2019-11-16T02:20:30-08:00');
    });
    it('add is a new timespace; the receiver is unchanged', () => {
      t.call('add', [time.get('hour')]);
      expect(t.toString()).toBe(DOC);
    });
    it('sub saturates at the int64 range, like Go', () => {
      expect(load(0n).call('sub', ['9999-12-31T23:59:59Z'])).toBe(-(1n << 63n));
      expect(load('9999-12-31T23:59:59Z').call('sub', [0n])).toBe((1n << 63n) - 1n);
    });
    table(t, [
      ['add', ['1h'], fails(/timespace\.add: duration must be an int/)],
      ['add', [U], U],
      ['before', ['yesterday'], fails(/timespace\.before: "yesterday": not an RFC 3339/)],
      ['sub', [null], fails(/timespace\.sub: timeish_or_timespace must be/)],
      ['equal', [], fails(/expected 1 argument/)],
      ['hour', [], fails(/timespace\.hour is not a function/)],
      ['tomorrow', [], fails(/timespace\.tomorrow does not exist/)],
    ]);
    it('unknown attributes and method names read as undefined', () => {
      expect(t.get('add')).toBe(UNDEFINED);
      expect(t.get('nanosecond')).toBe(UNDEFINED);
      expect(t.typeName).toBe('timespace');
    });
  });

  describe('time.now', () => {
    it('is the injected clock, in UTC', () => {
      clock = FIXED_MS;
      const now = time.get('now') as Timespace;
      expect([now.get('year'), now.get('month'), now.get('day'), now.get('hour'), now.get('weekday_name')]).toEqual([2026n, 11n, 26n, 12n, 'Thursday']);
      expect(now.get('unix')).toBe(BigInt(Math.floor(FIXED_MS / 1000)));
      expect(now.get('unix_nano')).toBe(BigInt(FIXED_MS) * 1_000_000n);
      expect([now.get('zone'), now.get('zone_string')]).toEqual([0n, '+00:00']);
      expect(now.toString()).toBe('2026-11-26T12:00:00.5Z');
    });
    it('reads the clock on each access (the caller fixes it per run)', () => {
      clock = FIXED_MS + 60_000;
      expect((time.get('now') as Timespace).get('minute')).toBe(1n);
      clock = FIXED_MS;
      expect((time.get('now') as Timespace).get('minute')).toBe(0n);
    });
    it('compares with loaded times', () => {
      clock = FIXED_MS;
      const now = time.get('now') as Timespace;
      expect(now.call('after', ['2026-11-26T12:00:00Z'])).toBe(true);
      expect(now.call('before', ['2026-11-26T12:00:01Z'])).toBe(true);
    });
  });

  it('the calendar agrees with Date across ±270,000 years', () => {
    for (let days = -100_000_000; days <= 100_000_000; days += 99_991) {
      const d = new Date(days * 86_400_000);
      const want = { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
      expect(civilFromDays(days)).toEqual(want);
      expect(daysFromCivil(want.year, want.month, want.day)).toBe(days);
    }
  });

  it('parseRFC3339 answers why, rather than throwing', () => {
    expect(parseRFC3339('2019-02-29T00:00:00Z')).toBe('day out of range');
    expect(parseRFC3339(DOC)).toBeInstanceOf(Timespace);
  });
});

// ---- sockaddr ------------------------------------------------------------------------------------

describe('sockaddr', () => {
  describe('documented examples', () => {
    table(sockaddr, [
      ['is_contained', ['192.168.0.0/24', '192.168.0.32'], true],
      ['is_contained', ['192.168.0.0/24', '192.174.1.1'], false],
      ['is_equal', ['192.168.12.24', '192.168.12.24'], true],
      ['is_ipv4', ['192.168.12.24'], true],
      ['is_ipv4', ['2001:0db8:85a3:0000:0000:8a2e:0370:7334'], false],
      ['is_ipv6', ['2001:0db8:85a3:0000:0000:8a2e:0370:7334'], true],
      ['is_ipv6', ['192.168.12.24'], false],
    ]);
  });

  describe('is_contained: CIDR boundaries', () => {
    table(sockaddr, [
      ['is_contained', ['192.168.0.0/24', '192.168.0.0'], true],
      ['is_contained', ['192.168.0.0/24', '192.168.0.255'], true],
      ['is_contained', ['192.168.0.0/24', '192.168.1.0'], false],
      ['is_contained', ['192.168.0.0/24', '192.167.255.255'], false],
      ['is_contained', ['10.0.0.0/31', '10.0.0.1'], true],
      ['is_contained', ['10.0.0.0/31', '10.0.0.2'], false],
      ['is_contained', ['10.0.0.1/32', '10.0.0.1'], true],
      ['is_contained', ['10.0.0.1/32', '10.0.0.2'], false],
      ['is_contained', ['10.0.0.1', '10.0.0.1'], true],
      ['is_contained', ['10.0.0.1', '10.0.0.0/24'], false],
      ['is_contained', ['0.0.0.0/0', '255.255.255.255'], true],
      ['is_contained', ['0.0.0.0/0', '::1'], false],
      ['is_contained', ['192.168.0.7/24', '192.168.0.200'], true],
      ['is_contained', ['10.20.0.0/16', '10.20.255.1'], true],
      ['is_contained', ['10.20.0.0/16', '10.21.0.1'], false],
      ['is_contained', ['10.0.0.0/8', '10.1.0.0/16'], true],
      ['is_contained', ['10.1.0.0/16', '10.0.0.0/8'], false],
      ['is_contained', ['10.0.0.0/8', '10.0.0.0/8'], true],
      ['is_contained', ['10.0.0.0/8', '11.0.0.0/16'], false],
      ['is_contained', ['2001:db8::/32', '2001:db8:ffff:ffff:ffff:ffff:ffff:ffff'], true],
      ['is_contained', ['2001:db8::/32', '2001:db9::'], false],
      ['is_contained', ['2001:db8::/64', '2001:db8:0:0:1::'], true],
      ['is_contained', ['2001:db8::/64', '2001:db8:0:1::'], false],
      ['is_contained', ['fe80::/10', 'febf::1'], true],
      ['is_contained', ['fe80::/10', 'fec0::1'], false],
      ['is_contained', ['::1/128', '::1'], true],
      ['is_contained', ['::1/128', '::2'], false],
      ['is_contained', ['::/0', '::1'], true],
      ['is_contained', ['::/0', '10.0.0.1'], false],
      ['is_contained', ['2001:DB8::/32', '2001:db8::abcd'], true],
      ['is_contained', ['10.0.0.0/8', '::ffff:10.1.2.3'], false],
      ['is_contained', ['::ffff:0:0/96', '::ffff:10.1.2.3'], true],
    ]);
  });

  describe('is_equal', () => {
    table(sockaddr, [
      ['is_equal', ['192.168.12.24', '192.168.12.25'], false],
      ['is_equal', ['2001:db8::1', '2001:0db8:0000:0000:0000:0000:0000:0001'], true],
      ['is_equal', ['2001:DB8::1', '2001:db8::1'], true],
      ['is_equal', ['::', '0:0:0:0:0:0:0:0'], true],
      ['is_equal', ['::ffff:1.2.3.4', '::ffff:102:304'], true],
      ['is_equal', ['1.2.3.4', '::ffff:1.2.3.4'], false],
      ['is_equal', ['10.0.0.1', '10.0.0.1/32'], true],
      ['is_equal', ['10.0.0.1/24', '10.0.0.0/24'], false],
      ['is_equal', ['10.0.0.0/24', '10.0.0.0/25'], false],
      ['is_equal', ['::1', '::1/128'], true],
    ]);
  });

  describe('is_ipv4 / is_ipv6: parsing', () => {
    table(sockaddr, [
      ['is_ipv4', ['0.0.0.0'], true],
      ['is_ipv4', ['255.255.255.255'], true],
      ['is_ipv4', ['10.0.0.0/8'], true],
      ['is_ipv4', ['10.0.0.0/0'], true],
      ['is_ipv4', ['256.0.0.1'], false],
      ['is_ipv4', ['1.2.3'], false],
      ['is_ipv4', ['1.2.3.4.5'], false],
      ['is_ipv4', ['01.2.3.4'], false],
      ['is_ipv4', ['1.2.3.-4'], false],
      ['is_ipv4', ['10.0.0.0/33'], false],
      ['is_ipv4', ['1.2.3.4/'], false],
      ['is_ipv4', ['1.2.3.4/8/8'], false],
      ['is_ipv4', [' 1.2.3.4'], false],
      ['is_ipv4', [''], false],
      ['is_ipv4', ['1.2.3.4:80'], false],
      ['is_ipv4', ['::1'], false],
      ['is_ipv4', ['example.com'], false],
      ['is_ipv6', ['::'], true],
      ['is_ipv6', ['::1'], true],
      ['is_ipv6', ['1::'], true],
      ['is_ipv6', ['1:2:3:4:5:6:7:8'], true],
      ['is_ipv6', ['1:2:3:4:5:6:7::'], true],
      ['is_ipv6', ['::2:3:4:5:6:7:8'], true],
      ['is_ipv6', ['2001:db8::/32'], true],
      ['is_ipv6', ['::/128'], true],
      ['is_ipv6', ['::ffff:1.2.3.4'], true],
      ['is_ipv6', ['::1.2.3.4'], true],
      ['is_ipv6', ['1:2:3:4:5:6:1.2.3.4'], true],
      ['is_ipv6', ['1:2:3:4:5:6:7:8::'], false],
      ['is_ipv6', ['::1:2:3:4:5:6:7:8'], false],
      ['is_ipv6', ['1:2:3:4:5:6:7'], false],
      ['is_ipv6', ['1:2:3:4:5:6:7:8:9'], false],
      ['is_ipv6', ['1::2::3'], false],
      ['is_ipv6', [':::'], false],
      ['is_ipv6', [':1::'], false],
      ['is_ipv6', ['1::2:'], false],
      ['is_ipv6', ['12345::'], false],
      ['is_ipv6', ['g::'], false],
      ['is_ipv6', ['fe80::1%eth0'], false],
      ['is_ipv6', ['[::1]'], false],
      ['is_ipv6', ['::/129'], false],
      ['is_ipv6', ['1:2:3:4:5:6:7:1.2.3.4'], false],
      ['is_ipv6', ['1.2.3.4::'], false],
      ['is_ipv6', ['::256.1.1.1'], false],
    ]);
  });

  describe('wrong types, malformed addresses, undefined', () => {
    table(sockaddr, [
      ['is_contained', ['nope', '1.2.3.4'], fails(/sockaddr\.is_contained: outer: "nope" is not an IP address or CIDR block/)],
      ['is_contained', ['10.0.0.0/8', '10.0.0.300'], fails(/inner: "10\.0\.0\.300" is not an IP address/)],
      ['is_contained', ['10.0.0.0/8', 5n], fails(/inner must be a string, got int/)],
      ['is_equal', ['1.2.3.4', '1.2.3.4/40'], fails(/addr2: "1\.2\.3\.4\/40" is not an IP address/)],
      ['is_ipv4', [1n], fails(/sockaddr\.is_ipv4: addr must be a string, got int/)],
      ['is_ipv6', [null], fails(/addr must be a string, got null/)],
      ['is_ipv4', [U], U],
      ['is_contained', [U, '1.2.3.4'], U],
      ['is_contained', ['10.0.0.0/8'], fails(/expected 2 arguments \(outer, inner\), got 1/)],
      ['is_greater', ['1.2.3.4', '1.2.3.5'], fails(/sockaddr\.is_greater does not exist/)],
    ]);
  });

  it('parseIPBlock gives the bits and the prefix', () => {
    expect(parseIPBlock('192.168.0.7/24')).toEqual({ family: 4, bits: 0xc0a80007n, prefix: 24 });
    expect(parseIPBlock('::1')).toEqual({ family: 6, bits: 1n, prefix: 128 });
    expect(parseIPBlock('1::')).toEqual({ family: 6, bits: 1n << 112n, prefix: 128 });
    expect(parseIPBlock('bogus')).toBeNull();
  });
});

// ---- units and the set of imports -----------------------------------------------------------------

describe('units', () => {
  const cases: [string, bigint][] = [
    ['kilobyte', 1024n], ['megabyte', 1048576n], ['gigabyte', 1073741824n],
    ['terabyte', 1099511627776n], ['petabyte', 1125899906842624n],
  ];
  for (const [name, want] of cases) it(`units.${name} is ${want}`, () => expect(units.get(name)).toBe(want));
  it('undocumented names are undefined, and constants are not functions', () => {
    expect(units.get('byte')).toBe(UNDEFINED);
    expect(units.get('exabyte')).toBe(UNDEFINED);
    expect(() => units.call('kilobyte', [])).toThrow(/units\.kilobyte is not a function/);
  });
});

describe('standardImports', () => {
  it('has exactly the four imports, each an object of its own type name', () => {
    expect(Object.keys(imports).sort()).toEqual(['sockaddr', 'strings', 'time', 'units']);
    for (const [name, obj] of Object.entries(imports)) {
      expect(obj.kind).toBe('object');
      expect(obj.typeName).toBe(name);
    }
  });
  it('has no inherited names', () => {
    expect(imports['constructor']).toBeUndefined();
    expect(imports['toString']).toBeUndefined();
  });
});
