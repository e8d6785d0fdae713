// A cursor over the policy text, one Unicode code point at a time, that keeps the 1-based line and
// column (in code points) of where it stands. The lexer and the literal scanners share it.

import { SentinelSyntaxError, type Pos } from './errors';

export class Scanner {
  private i = 0;
  private line = 1;
  private column = 1;

  constructor(
    readonly src: string,
    readonly file: string,
  ) {}

  get offset(): number {
    return this.i;
  }

  eof(): boolean {
    return this.i >= this.src.length;
  }

  /** The code point at the cursor ('' at the end). */
  peek(): string {
    return this.charAt(this.i);
  }

  /** The code point after the one at the cursor ('' past the end). */
  peek2(): string {
    const first = this.charAt(this.i);
    return first === '' ? '' : this.charAt(this.i + first.length);
  }

  /** Consumes and returns one code point ('' at the end). */
  next(): string {
    const ch = this.charAt(this.i);
    if (ch === '') return ch;
    this.i += ch.length;
    if (ch === '\n') {
      this.line++;
      this.column = 1;
    } else {
      this.column++;
    }
    return ch;
  }

  pos(): Pos {
    return { line: this.line, column: this.column };
  }

  slice(from: number): string {
    return this.src.slice(from, this.i);
  }

  fail(pos: Pos, expected: string, found: string, detail?: string): never {
    throw new SentinelSyntaxError(this.file, pos, expected, found, detail);
  }

  private charAt(index: number): string {
    const cp = this.src.codePointAt(index);
    return cp === undefined ? '' : String.fromCodePoint(cp);
  }
}

/** How a character is named in error messages. */
export function describeChar(ch: string): string {
  if (ch === '') return 'end of input';
  if (ch === '\n') return 'newline';
  return JSON.stringify(ch);
}

export const isDecimalDigit = (ch: string): boolean => ch >= '0' && ch <= '9';
export const isOctalDigit = (ch: string): boolean => ch >= '0' && ch <= '7';
export const isHexDigit = (ch: string): boolean =>
  isDecimalDigit(ch) || (ch >= 'a' && ch <= 'f') || (ch >= 'A' && ch <= 'F');

const unicodeLetter = /^\p{L}$/u;
const unicodeDigit = /^\p{Nd}$/u;

/** Spec: letter = unicode_letter | "_". */
export const isLetter = (ch: string): boolean =>
  ch === '_' || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch > '\x7f' && unicodeLetter.test(ch));

export const isIdentPart = (ch: string): boolean =>
  isLetter(ch) || isDecimalDigit(ch) || (ch > '\x7f' && unicodeDigit.test(ch));
