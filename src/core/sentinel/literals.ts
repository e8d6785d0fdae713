// Number and string literals (spec: "Integer Literals", "Floating-point Literals", "String
// Literals"). Both scanners start at the literal's first character and return its token.

import { describeChar, isDecimalDigit, isHexDigit, isOctalDigit, type Scanner } from './scanner';
import type { Token } from './tokens';

/** At a decimal digit, or at "." followed by one: an int (decimal, 0 octal, 0x hex) or a float. */
export function scanNumber(s: Scanner): Token {
  const pos = s.pos();
  const start = s.offset;
  if (s.peek() === '0' && (s.peek2() === 'x' || s.peek2() === 'X')) {
    s.next();
    s.next();
    if (!isHexDigit(s.peek())) s.fail(s.pos(), 'hexadecimal digit', describeChar(s.peek()));
    while (isHexDigit(s.peek())) s.next();
    const text = s.slice(start);
    return { kind: 'int', text, pos, int: BigInt(text) };
  }
  while (isDecimalDigit(s.peek())) s.next();
  let isFloat = false;
  if (s.peek() === '.') {
    isFloat = true;
    s.next();
    while (isDecimalDigit(s.peek())) s.next();
  }
  if (s.peek() === 'e' || s.peek() === 'E') {
    isFloat = true;
    s.next();
    if (s.peek() === '+' || s.peek() === '-') s.next();
    if (!isDecimalDigit(s.peek())) s.fail(s.pos(), 'exponent digits', describeChar(s.peek()));
    while (isDecimalDigit(s.peek())) s.next();
  }
  const text = s.slice(start);
  if (isFloat) return { kind: 'float', text, pos, float: Number(text) };
  if (text.length > 1 && text[0] === '0') {
    // A leading 0 makes an octal literal (a float such as 072.40 stays decimal, handled above).
    for (let k = 1; k < text.length; k++) {
      if (!isOctalDigit(text[k])) {
        s.fail({ line: pos.line, column: pos.column + k }, 'octal digit', JSON.stringify(text[k]));
      }
    }
    return { kind: 'int', text, pos, int: BigInt(`0o${text.slice(1)}`) };
  }
  return { kind: 'int', text, pos, int: BigInt(text) };
}

const utf8 = new TextDecoder();

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v', '\\': '\\', '"': '"',
};

/**
 * At '"': a string with Go-style escapes. \x and three-digit octal escapes are single bytes; runs
 * of them are decoded as UTF-8 (so "\xc3\xbf" is "ÿ"), and bytes that are not valid UTF-8 become
 * U+FFFD, since the value is held as a JavaScript string.
 */
export function scanString(s: Scanner): Token {
  const pos = s.pos();
  const start = s.offset;
  s.next();
  const parts: string[] = [];
  let bytes: number[] = [];
  const flush = () => {
    if (bytes.length > 0) {
      parts.push(utf8.decode(new Uint8Array(bytes)));
      bytes = [];
    }
  };
  for (;;) {
    const ch = s.peek();
    if (ch === '' || ch === '\n') s.fail(s.pos(), `'"' closing the string`, describeChar(ch));
    if (ch === '"') {
      s.next();
      break;
    }
    if (ch !== '\\') {
      flush();
      parts.push(s.next());
      continue;
    }
    const escPos = s.pos();
    s.next();
    const e = s.peek();
    if (Object.hasOwn(SIMPLE_ESCAPES, e)) {
      s.next();
      flush();
      parts.push(SIMPLE_ESCAPES[e]);
    } else if (e === 'x') {
      s.next();
      bytes.push(readDigits(s, 2, 16));
    } else if (isOctalDigit(e)) {
      const value = readDigits(s, 3, 8);
      if (value > 255) s.fail(escPos, 'octal escape of at most \\377', JSON.stringify(s.slice(s.offset - 4)));
      bytes.push(value);
    } else if (e === 'u' || e === 'U') {
      s.next();
      const cp = readDigits(s, e === 'u' ? 4 : 8, 16);
      if ((cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff) {
        s.fail(escPos, 'a valid Unicode code point', JSON.stringify(s.slice(s.offset - (e === 'u' ? 6 : 10))));
      }
      flush();
      parts.push(String.fromCodePoint(cp));
    } else {
      s.fail(escPos, 'escape sequence', e === '' || e === '\n' ? describeChar(e) : JSON.stringify(`\\${e}`));
    }
  }
  flush();
  return { kind: 'string', text: s.slice(start), pos, str: parts.join('') };
}

/** At '`': a raw string; no escapes, may span lines; carriage returns are dropped (as in Go). */
export function scanRawString(s: Scanner): Token {
  const pos = s.pos();
  const start = s.offset;
  s.next();
  const parts: string[] = [];
  for (;;) {
    const ch = s.next();
    if (ch === '') s.fail(s.pos(), "'`' closing the raw string", 'end of input');
    if (ch === '`') break;
    if (ch !== '\r') parts.push(ch);
  }
  return { kind: 'string', text: s.slice(start), pos, str: parts.join('') };
}

function readDigits(s: Scanner, count: number, base: 8 | 16): number {
  let value = 0;
  for (let k = 0; k < count; k++) {
    const ch = s.peek();
    const ok = base === 16 ? isHexDigit(ch) : isOctalDigit(ch);
    if (!ok) s.fail(s.pos(), base === 16 ? 'hexadecimal digit' : 'octal digit', describeChar(ch));
    value = value * base + parseInt(s.next(), base);
  }
  return value;
}
