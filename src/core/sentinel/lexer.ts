// Turns policy text into tokens (spec: "Lexical Elements"). Comments and whitespace are dropped;
// a ";" is inserted where a line ends after a token that can end a statement (spec: "Semicolons").
// Runs in one linear pass and uses no backtracking regular expressions.

import { DEFAULT_FILENAME, type Pos } from './errors';
import { scanNumber, scanRawString, scanString } from './literals';
import { describeChar, isDecimalDigit, isIdentPart, isLetter, Scanner } from './scanner';
import { endsStatementAtNewline, isKeyword, PUNCTUATION, type Punctuation, type Token } from './tokens';

const punctuation: ReadonlySet<string> = new Set(PUNCTUATION);

export function tokenize(source: string, file: string = DEFAULT_FILENAME): Token[] {
  const s = new Scanner(source, file);
  const tokens: Token[] = [];
  if (s.peek() === '\uFEFF') s.next();
  let prev: Token | undefined;
  let prevEnd: Pos = s.pos();
  for (;;) {
    const sawNewline = skipSpaceAndComments(s);
    const ch = s.peek();
    // A ";" is inserted at a line end, except before a closing bracket or the end of input: the
    // grammar never needs one there, and leaving it out lets a list, call or rule body end on its
    // own line without a trailing comma (a lenient superset of the spec's rule).
    if (sawNewline && prev && endsStatementAtNewline(prev.kind) && ch !== '' && ch !== ')' && ch !== ']' && ch !== '}') {
      tokens.push({ kind: ';', text: '', pos: prevEnd, auto: true });
    }
    if (ch === '') {
      tokens.push({ kind: 'eof', text: '', pos: s.pos() });
      return tokens;
    }
    const tok = scanToken(s, ch);
    tokens.push(tok);
    prev = tok;
    prevEnd = s.pos();
  }
}

/** Skips whitespace and comments; tells whether a line ended on the way. */
function skipSpaceAndComments(s: Scanner): boolean {
  let sawNewline = false;
  for (;;) {
    const ch = s.peek();
    if (ch === ' ' || ch === '\t' || ch === '\r') {
      s.next();
    } else if (ch === '\n') {
      s.next();
      sawNewline = true;
    } else if (ch === '#' || (ch === '/' && s.peek2() === '/')) {
      while (!s.eof() && s.peek() !== '\n') s.next();
    } else if (ch === '/' && s.peek2() === '*') {
      const start = s.pos();
      s.next();
      s.next();
      for (;;) {
        const c = s.next();
        if (c === '') s.fail(start, '"*/" closing the comment', 'end of input');
        if (c === '\n') sawNewline = true;
        if (c === '*' && s.peek() === '/') {
          s.next();
          break;
        }
      }
    } else {
      return sawNewline;
    }
  }
}

function scanToken(s: Scanner, ch: string): Token {
  if (isLetter(ch)) {
    const pos = s.pos();
    const start = s.offset;
    while (isIdentPart(s.peek())) s.next();
    const text = s.slice(start);
    return { kind: isKeyword(text) ? text : 'ident', text, pos };
  }
  if (isDecimalDigit(ch) || (ch === '.' && isDecimalDigit(s.peek2()))) return scanNumber(s);
  if (ch === '"') return scanString(s);
  if (ch === '`') return scanRawString(s);
  const pos = s.pos();
  const two = ch + s.peek2();
  if (punctuation.has(two)) {
    s.next();
    s.next();
    return { kind: two as Punctuation, text: two, pos };
  }
  if (punctuation.has(ch)) {
    s.next();
    return { kind: ch as Punctuation, text: ch, pos };
  }
  return s.fail(pos, 'a token', describeChar(ch), `unexpected character ${describeChar(ch)}`);
}
