// The `strings` import: the string operations HashiCorp documents (has_prefix, has_suffix, join,
// replace, split, to_lower, to_upper, trim, trim_left, trim_right, trim_space, trim_prefix,
// trim_suffix). Sentinel's runtime is written in Go and these are its `strings` package under
// other names, so the edge cases follow Go: characters are Unicode code points, "white space" is
// Go's unicode.IsSpace, an empty separator splits into characters, an empty `old` in replace
// inserts between characters, and floats in join print as Go's %v does.

import { SentinelRuntimeError, UNDEFINED, typeName, type Value } from '../values';
import { intArg, NativeObject, stringArg, type FnSpec } from './native';

/** Go's unicode.IsSpace: the Latin-1 spaces plus Unicode's White_Space property. */
const SPACE = new Set([
  0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004,
  0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
]);

/** Drops leading (and/or trailing) code points for which `drop` holds. */
function trimWhere(s: string, drop: (cp: number) => boolean, left: boolean, right: boolean): string {
  const cps = Array.from(s);
  let start = 0;
  let end = cps.length;
  if (left) while (start < end && drop(cps[start].codePointAt(0)!)) start++;
  if (right) while (end > start && drop(cps[end - 1].codePointAt(0)!)) end--;
  return cps.slice(start, end).join('');
}

function cutsetOf(cutset: string): (cp: number) => boolean {
  const set = new Set(Array.from(cutset, (c) => c.codePointAt(0)!));
  return (cp) => set.has(cp);
}

/**
 * Case mapping one code point at a time, as Go does: a character whose mapping is more than one
 * character (German ß to "SS") is left as it is, so lengths in code points never change.
 */
function mapCase(s: string, upper: boolean): string {
  let out = '';
  for (const c of s) {
    // The one letter whose lowercase is longer in full but one character in the simple mapping.
    if (!upper && c === '\u0130') {
      out += 'i';
      continue;
    }
    const m = upper ? c.toUpperCase() : c.toLowerCase();
    out += Array.from(m).length === 1 ? m : c;
  }
  return out;
}

/** Go's strings.Replace: at most `n` replacements, all of them when `n` is negative. */
function replace(s: string, old: string, repl: string, n: number): string {
  if (old === repl || n === 0) return s;
  if (old === '') {
    // An empty `old` matches before every character and at the end.
    const cps = Array.from(s);
    const limit = n < 0 ? cps.length + 1 : Math.min(n, cps.length + 1);
    let out = '';
    for (let i = 0; i < cps.length; i++) out += (i < limit ? repl : '') + cps[i];
    return out + (limit > cps.length ? repl : '');
  }
  let out = '';
  let start = 0;
  for (let done = 0; n < 0 || done < n; done++) {
    const at = s.indexOf(old, start);
    if (at < 0) break;
    out += s.slice(start, at) + repl;
    start = at + old.length;
  }
  return out + s.slice(start);
}

/**
 * A float as Go's %v prints it: the shortest digits that read back to the same float, in
 * exponent form when the decimal exponent is below -4 or at least 6 (1e+06, 1.5e-05).
 */
export function goFloatString(f: number): string {
  if (Number.isNaN(f)) return 'NaN';
  if (f === Infinity) return '+Inf';
  if (f === -Infinity) return '-Inf';
  if (f === 0) return Object.is(f, -0) ? '-0' : '0';
  const [mant, expText] = Math.abs(f).toExponential().split('e');
  const digits = mant.replace('.', '');
  const exp = Number(expText);
  const sign = f < 0 ? '-' : '';
  if (exp < -4 || exp >= 6) {
    const e = Math.abs(exp).toString().padStart(2, '0');
    return `${sign}${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ''}e${exp < 0 ? '-' : '+'}${e}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const whole = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  const frac = digits.slice(exp + 1);
  return `${sign}${whole}${frac ? `.${frac}` : ''}`;
}

/** The pieces join puts together: lists flattened, primitives as text, anything else refused. */
function joinParts(v: Value, out: string[]): boolean {
  if (v === UNDEFINED) return false;
  if (Array.isArray(v)) return v.every((e) => joinParts(e, out));
  switch (typeof v) {
    case 'string':
      out.push(v);
      return true;
    case 'bigint':
      out.push(v.toString());
      return true;
    case 'number':
      out.push(goFloatString(v));
      return true;
    case 'boolean':
      out.push(v ? 'true' : 'false');
      return true;
  }
  throw new SentinelRuntimeError(`strings.join: cannot join a ${typeName(v)} (only strings, numbers, bools and lists)`);
}

const str = (fn: string, param: string) => (v: Value) => stringArg(`strings.${fn}`, param, v);

function unary(name: string, f: (s: string) => string): FnSpec {
  const s = str(name, 's');
  return { params: ['s'], fn: ([a]) => f(s(a)) };
}

function binary(name: string, second: string, f: (s: string, t: string) => Value): FnSpec {
  const s = str(name, 's');
  const t = str(name, second);
  return { params: ['s', second], fn: ([a, b]) => f(s(a), t(b)) };
}

const FUNCTIONS: Record<string, FnSpec> = {
  has_prefix: binary('has_prefix', 'prefix', (s, p) => s.startsWith(p)),
  has_suffix: binary('has_suffix', 'suffix', (s, p) => s.endsWith(p)),
  trim_prefix: binary('trim_prefix', 'prefix', (s, p) => (s.startsWith(p) ? s.slice(p.length) : s)),
  trim_suffix: binary('trim_suffix', 'suffix', (s, p) => (s.endsWith(p) ? s.slice(0, s.length - p.length) : s)),
  trim: binary('trim', 'cutset', (s, c) => trimWhere(s, cutsetOf(c), true, true)),
  trim_left: binary('trim_left', 'cutset', (s, c) => trimWhere(s, cutsetOf(c), true, false)),
  trim_right: binary('trim_right', 'cutset', (s, c) => trimWhere(s, cutsetOf(c), false, true)),
  trim_space: unary('trim_space', (s) => trimWhere(s, (cp) => SPACE.has(cp), true, true)),
  to_lower: unary('to_lower', (s) => mapCase(s, false)),
  to_upper: unary('to_upper', (s) => mapCase(s, true)),
  split: {
    params: ['s', 'sep'],
    fn: ([s, sep]) => {
      const separator = stringArg('strings.split', 'sep', sep);
      // Documented: a list comes back as it is, so split works whether or not the input was
      // already split. A copy, so that append() on the result leaves the input alone.
      if (Array.isArray(s)) return s.slice();
      const text = stringArg('strings.split', 's', s);
      return separator === '' ? Array.from(text) : text.split(separator);
    },
  },
  join: {
    params: ['a', 'sep'],
    fn: ([a, sep]) => {
      const separator = stringArg('strings.join', 'sep', sep);
      if (!Array.isArray(a)) throw new SentinelRuntimeError(`strings.join: a must be a list, got ${typeName(a)}`);
      const parts: string[] = [];
      return joinParts(a, parts) ? parts.join(separator) : UNDEFINED;
    },
  },
  replace: {
    params: ['s', 'old', 'new', 'times'],
    optional: 1,
    fn: ([s, old, repl, times]) => {
      const fn = 'strings.replace';
      const n = times === undefined ? -1n : intArg(fn, 'times', times);
      // Counts beyond the string's length all mean "every occurrence".
      const count = n < 0n ? -1 : n > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(n);
      return replace(stringArg(fn, 's', s), stringArg(fn, 'old', old), stringArg(fn, 'new', repl), count);
    },
  },
};

export function stringsImport(): NativeObject {
  return new NativeObject('strings', {}, FUNCTIONS);
}
