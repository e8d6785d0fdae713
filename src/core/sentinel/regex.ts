// `matches` (spec: "Matches Operator"): the pattern is RE2 syntax. RE2 patterns are translated to
// JavaScript RegExp (unicode mode); constructs RE2 does not have (backreferences, lookaround,
// atomic groups) are refused with a clear error rather than silently given JavaScript's meaning.
// Compiled patterns are cached, since policies match against the same literals on every request.

import type { Pos } from './errors';
import { fail, MAX_MATCH_INPUT, MAX_REGEX_LENGTH } from './limits';
import { typeName, UNDEFINED, type Value } from './values';

const CACHE_MAX = 256;
const cache = new Map<string, RegExp | string>();

/** RE2 caps counted repetition at 1000. */
const MAX_REPEAT = 1000;

const POSIX: Record<string, string> = {
  alnum: '0-9A-Za-z',
  alpha: 'A-Za-z',
  ascii: '\\x00-\\x7f',
  blank: '\\t ',
  cntrl: '\\x00-\\x1f\\x7f',
  digit: '0-9',
  graph: '!-~',
  lower: 'a-z',
  print: ' -~',
  punct: '!-\\/:-@\\[-`{-~',
  space: '\\t\\n\\v\\f\\r ',
  upper: 'A-Z',
  word: '0-9A-Za-z_',
  xdigit: '0-9A-Fa-f',
};

const JS_SYNTAX = new Set('^$\\.*+?()[]{}|/'.split(''));

class Re2Error extends Error {}

const hexEscape = (cp: number): string => `\\u{${cp.toString(16)}}`;

/** Translates an RE2 pattern to a JavaScript RegExp; throws Re2Error with the reason. */
export function translateRE2(src: string): RegExp {
  let i = 0;
  let flags = 'u';
  // Leading flag groups, `(?i)` and the like, become RegExp flags.
  for (let m = /^\(\?([a-zA-Z]+)\)/.exec(src); m; m = /^\(\?([a-zA-Z]+)\)/.exec(src.slice(i))) {
    for (const f of m[1]) {
      if (f === 'i' || f === 's' || f === 'm') {
        if (!flags.includes(f)) flags += f;
      } else if (f === 'U') {
        throw new Re2Error('the ungreedy flag (?U) is not supported');
      } else {
        throw new Re2Error(`unknown flag "${f}" in (?${m[1]})`);
      }
    }
    i += m[0].length;
  }
  let out = '';
  let inClass = false;
  let classStart = false;
  while (i < src.length) {
    const c = src[i];
    if (c === '\\') {
      const r = escape(src, i, inClass);
      out += r.text;
      i = r.next;
      classStart = false;
      continue;
    }
    if (inClass) {
      if (c === ']' && !classStart) {
        inClass = false;
        out += ']';
      } else if (c === '[' && src.startsWith('[:', i)) {
        const end = src.indexOf(':]', i + 2);
        const name = end < 0 ? '' : src.slice(i + 2, end);
        const neg = name.startsWith('^');
        const set = POSIX[neg ? name.slice(1) : name];
        if (set === undefined) throw new Re2Error(`unknown character class [:${name}:]`);
        if (neg) throw new Re2Error('negated POSIX classes ([:^name:]) are not supported');
        out += set;
        i = end + 2;
        classStart = false;
        continue;
      } else if (c === '[' || c === ']') {
        out += `\\${c}`;
      } else {
        out += c;
      }
      classStart = false;
      i++;
      continue;
    }
    switch (c) {
      case '[':
        inClass = true;
        classStart = true;
        out += '[';
        i++;
        if (src[i] === '^') {
          out += '^';
          i++;
        }
        if (src[i] === ']') {
          out += '\\]';
          i++;
          classStart = false;
        }
        continue;
      case '(':
        if (src[i + 1] === '?') {
          const rest = src.slice(i, i + 4);
          if (rest.startsWith('(?:')) {
            out += '(?:';
            i += 3;
          } else if (rest.startsWith('(?P<') || (rest.startsWith('(?<') && rest[3] !== '=' && rest[3] !== '!')) {
            const start = rest.startsWith('(?P<') ? i + 4 : i + 3;
            const end = src.indexOf('>', start);
            const name = end < 0 ? '' : src.slice(start, end);
            if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new Re2Error(`invalid group name "${name}"`);
            out += `(?<${name}>`;
            i = end + 1;
          } else if (/^\(\?(=|!|<=|<!)/.test(rest)) {
            throw new Re2Error('lookahead and lookbehind ((?=, (?!, (?<=, (?<!) are not supported by RE2');
          } else if (rest.startsWith('(?P=') || rest.startsWith('(?P>')) {
            throw new Re2Error('backreferences are not supported by RE2');
          } else if (rest.startsWith('(?>')) {
            throw new Re2Error('atomic groups (?>…) are not supported by RE2');
          } else {
            const m = /^\(\?([a-zA-Z-]+)(:|\))/.exec(src.slice(i));
            if (!m) throw new Re2Error(`invalid group syntax at offset ${i}`);
            if (m[2] === ')') throw new Re2Error('flags (?…) are supported only at the start of the pattern');
            if (m[1].includes('U')) throw new Re2Error('the ungreedy flag (?U) is not supported');
            out += m[0];
            i += m[0].length;
          }
          continue;
        }
        out += '(';
        i++;
        continue;
      case '{': {
        const m = /^\{(\d+)(,(\d*))?\}/.exec(src.slice(i));
        if (m) {
          const lo = Number(m[1]);
          const hi = m[3] ? Number(m[3]) : lo;
          if (lo > MAX_REPEAT || hi > MAX_REPEAT) throw new Re2Error(`repetition count above ${MAX_REPEAT} in ${m[0]}`);
          out += m[0];
          i += m[0].length;
        } else {
          out += '\\{';
          i++;
        }
        continue;
      }
      case '}':
      case ']':
        out += `\\${c}`;
        i++;
        continue;
      default:
        out += c;
        i++;
    }
  }
  if (inClass) throw new Re2Error('missing closing ]');
  try {
    return new RegExp(out, flags);
  } catch (e) {
    throw new Re2Error(e instanceof Error ? e.message.replace(/^Invalid regular expression: /, '') : String(e));
  }
}

function escape(src: string, i: number, inClass: boolean): { text: string; next: number } {
  const d = src[i + 1];
  if (d === undefined) throw new Re2Error('trailing backslash');
  const at = (text: string, len: number) => ({ text, next: i + len });
  if (d >= '0' && d <= '7') {
    const m = /^[0-7]{1,3}/.exec(src.slice(i + 1)) as RegExpExecArray;
    if (d !== '0' && m[0].length === 1) throw new Re2Error(`backreferences (\\${d}) are not supported by RE2`);
    return at(hexEscape(parseInt(m[0], 8)), 1 + m[0].length);
  }
  if (d === '8' || d === '9') throw new Re2Error(`backreferences (\\${d}) are not supported by RE2`);
  switch (d) {
    case 'x': {
      const braced = /^\{([0-9A-Fa-f]{1,6})\}/.exec(src.slice(i + 2));
      if (braced) return at(hexEscape(parseInt(braced[1], 16)), 2 + braced[0].length);
      const two = /^[0-9A-Fa-f]{2}/.exec(src.slice(i + 2));
      if (!two) throw new Re2Error('invalid \\x escape');
      return at(`\\x${two[0]}`, 4);
    }
    case 'Q': {
      const end = src.indexOf('\\E', i + 2);
      const lit = src.slice(i + 2, end < 0 ? src.length : end);
      let text = '';
      for (const ch of lit) text += literal(ch, inClass);
      return { text, next: end < 0 ? src.length : end + 2 };
    }
    case 'A':
      if (inClass) break;
      return at('(?<![\\s\\S])', 2);
    case 'z':
      if (inClass) break;
      return at('(?![\\s\\S])', 2);
    case 'p':
    case 'P': {
      let name: string;
      let len: number;
      if (src[i + 2] === '{') {
        const end = src.indexOf('}', i + 3);
        if (end < 0) throw new Re2Error('missing } in \\p{…}');
        name = src.slice(i + 3, end);
        len = end + 1 - i;
      } else {
        name = src[i + 2] ?? '';
        len = 3;
      }
      let neg = d === 'P';
      if (name.startsWith('^')) {
        neg = !neg;
        name = name.slice(1);
      }
      if (!/^[A-Za-z_]+$/.test(name)) throw new Re2Error(`invalid Unicode class name "${name}"`);
      const prop = /^[A-Z][a-z&]?$/.test(name) || name === 'Any' ? name : `Script=${name}`;
      return at(`\\${neg ? 'P' : 'p'}{${prop}}`, len);
    }
    case 'd': case 'D': case 'w': case 'W': case 's': case 'S':
    case 'f': case 'n': case 'r': case 't': case 'v':
      return at(`\\${d}`, 2);
    case 'b': case 'B':
      if (inClass) break;
      return at(`\\${d}`, 2);
    case 'a':
      return at('\\x07', 2);
    case 'C':
      throw new Re2Error('\\C (any byte) is not supported');
    default:
      if (/[!-/:-@[-`{-~]/.test(d)) return at(literal(d, inClass), 2);
  }
  throw new Re2Error(`invalid escape \\${d}`);
}

/** One character matched literally, escaped as unicode-mode RegExp needs. */
function literal(ch: string, inClass: boolean): string {
  if (JS_SYNTAX.has(ch) || (inClass && ch === '-')) return `\\${ch}`;
  if (/[A-Za-z0-9_ ]/.test(ch)) return ch;
  return hexEscape(ch.codePointAt(0) as number);
}

function compiled(pattern: string, pos: Pos): RegExp {
  let re = cache.get(pattern);
  if (re === undefined) {
    if (pattern.length > MAX_REGEX_LENGTH) fail(pos, `regular expression longer than ${MAX_REGEX_LENGTH} characters`);
    try {
      re = translateRE2(pattern);
    } catch (e) {
      if (!(e instanceof Re2Error)) throw e;
      re = e.message;
    }
    if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value as string);
    cache.set(pattern, re);
  }
  if (typeof re === 'string') fail(pos, `invalid regular expression ${JSON.stringify(pattern)}: ${re}`);
  return re;
}

/** `subject matches pattern`. */
export function matches(subject: Value, pattern: Value, pos: Pos): Value {
  if (subject === UNDEFINED || pattern === UNDEFINED) return UNDEFINED;
  if (typeof subject !== 'string' || typeof pattern !== 'string') {
    return fail(pos, `matches needs a string and a pattern string, not ${typeName(subject)} and ${typeName(pattern)}`);
  }
  const re = compiled(pattern, pos);
  if (subject.length > MAX_MATCH_INPUT) fail(pos, `matches: text longer than ${MAX_MATCH_INPUT} characters`);
  return re.test(subject);
}
