// The lexer of Go's text/template: text, {{ actions }} with trim markers, comments, and the
// tokens inside actions. It runs to the end of the input or to the first error, which it
// returns as an `error` token in the stream (the parser reports it only if it gets there, as
// Go's does).

import { quote } from './go-strconv';

export type TokenType =
  | 'error'
  | 'eof'
  | 'text'
  | 'leftDelim'
  | 'rightDelim'
  | 'space'
  | 'pipe'
  | 'assign' // =
  | 'declare' // :=
  | 'char' // any other printable ASCII character (only ',' has a use)
  | 'string'
  | 'rawString'
  | 'charConstant'
  | 'number'
  | 'complex'
  | 'bool'
  | 'field' // .Name
  | 'variable' // $ or $name
  | 'identifier'
  | 'leftParen'
  | 'rightParen'
  // keywords
  | 'dot'
  | 'block'
  | 'break'
  | 'continue'
  | 'define'
  | 'else'
  | 'end'
  | 'if'
  | 'nil'
  | 'range'
  | 'template'
  | 'with';

export interface Token {
  type: TokenType;
  /** Index of the token's first character in the template text. */
  pos: number;
  val: string;
  line: number;
}

const KEYWORDS: Record<string, TokenType> = {
  block: 'block',
  break: 'break',
  continue: 'continue',
  define: 'define',
  else: 'else',
  end: 'end',
  if: 'if',
  nil: 'nil',
  range: 'range',
  template: 'template',
  with: 'with',
};

const KEYWORD_TYPES = new Set<TokenType>(['dot', ...Object.values(KEYWORDS)]);

/** How Go's parser names a token in its messages (item.String()). */
export function tokenString(t: Token): string {
  if (t.type === 'eof') return 'EOF';
  if (t.type === 'error') return t.val;
  if (KEYWORD_TYPES.has(t.type)) return `<${t.val}>`;
  const runes = [...t.val];
  if (runes.length > 10) return quote(runes.slice(0, 10).join('')) + '...';
  return quote(t.val);
}

/** Go's %#U: U+0023 '#'. */
export function formatU(r: number): string {
  const code = 'U+' + r.toString(16).toUpperCase().padStart(4, '0');
  return /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u.test(String.fromCodePoint(r)) ? `${code} '${String.fromCodePoint(r)}'` : code;
}

const LEFT = '{{';
const RIGHT = '}}';
const EOF = -1;

const isSpace = (r: number): boolean => r === 0x20 || r === 0x09 || r === 0x0d || r === 0x0a;
const ALNUM = /^[\p{L}\p{Nd}_]$/u;
const isAlphaNumeric = (r: number): boolean => r >= 0 && ALNUM.test(String.fromCodePoint(r));
const isAsciiPrint = (r: number): boolean => r >= 0x20 && r < 0x7f;

const hasLeftTrimMarker = (s: string, i: number): boolean => s[i] === '-' && i + 1 < s.length && isSpace(s.charCodeAt(i + 1));
const hasRightTrimMarker = (s: string, i: number): boolean => i + 1 < s.length && isSpace(s.charCodeAt(i)) && s[i + 1] === '-';

/** A function from a text index to its 1-based line number. */
export function lineCounter(input: string): (i: number) => number {
  const newlines: number[] = [];
  for (let j = input.indexOf('\n'); j >= 0; j = input.indexOf('\n', j + 1)) newlines.push(j);
  return (i: number): number => {
    let lo = 0;
    let hi = newlines.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (newlines[mid] < i) lo = mid + 1;
      else hi = mid;
    }
    return lo + 1;
  };
}

export function lex(input: string): Token[] {
  const tokens: Token[] = [];
  let pos = 0;
  let start = 0;
  let parenDepth = 0;

  const lineAt = lineCounter(input);
  const emit = (type: TokenType): void => {
    tokens.push({ type, pos: start, val: input.slice(start, pos), line: lineAt(start) });
    start = pos;
  };
  const fail = (message: string): Token[] => {
    tokens.push({ type: 'error', pos: start, val: message, line: lineAt(start) });
    return tokens;
  };
  const peek = (): number => (pos < input.length ? (input.codePointAt(pos) ?? EOF) : EOF);
  const next = (): number => {
    const r = peek();
    if (r !== EOF) pos += r > 0xffff ? 2 : 1;
    return r;
  };
  const accept = (valid: string): boolean => {
    const r = peek();
    if (r !== EOF && valid.includes(String.fromCodePoint(r))) {
      pos++;
      return true;
    }
    return false;
  };
  const acceptRun = (valid: string): void => {
    while (accept(valid));
  };
  /** At "}}" or " -}}": whether the action ends here, and whether it trims the following text. */
  const atRightDelim = (): { delim: boolean; trim: boolean } => {
    if (hasRightTrimMarker(input, pos) && input.startsWith(RIGHT, pos + 2)) return { delim: true, trim: true };
    if (input.startsWith(RIGHT, pos)) return { delim: true, trim: false };
    return { delim: false, trim: false };
  };
  const atTerminator = (): boolean => {
    const r = peek();
    if (isSpace(r)) return true;
    if (r === EOF || '.,|:()'.includes(String.fromCodePoint(r))) return true;
    return input.startsWith(RIGHT, pos);
  };
  const skipSpaces = (): void => {
    while (pos < input.length && isSpace(input.charCodeAt(pos))) pos++;
  };

  /** Scans a number; false when something alphanumeric follows it. */
  const scanNumber = (): boolean => {
    accept('+-');
    let digits = '0123456789_';
    if (accept('0')) {
      if (accept('xX')) digits = '0123456789abcdefABCDEF_';
      else if (accept('oO')) digits = '01234567_';
      else if (accept('bB')) digits = '01_';
    }
    acceptRun(digits);
    if (accept('.')) acceptRun(digits);
    if (digits.length === 11 && accept('eE')) {
      accept('+-');
      acceptRun('0123456789_');
    }
    if (digits.length === 23 && accept('pP')) {
      accept('+-');
      acceptRun('0123456789_');
    }
    accept('i');
    if (isAlphaNumeric(peek())) {
      next();
      return false;
    }
    return true;
  };

  // Text outside actions, then the action after it, until the end.
  for (;;) {
    // --- text ---
    const x = input.indexOf(LEFT, pos);
    if (x < 0) {
      pos = input.length;
      if (pos > start) emit('text');
      emit('eof');
      return tokens;
    }
    if (x > pos) {
      let end = x;
      if (hasLeftTrimMarker(input, x + 2)) while (end > start && isSpace(input.charCodeAt(end - 1))) end--;
      pos = end;
      if (pos > start) emit('text');
    }
    // --- left delimiter ---
    pos = x + 2;
    start = x;
    const trimLeft = hasLeftTrimMarker(input, pos);
    const afterMarker = trimLeft ? 2 : 0;
    if (input.startsWith('/*', pos + afterMarker)) {
      pos += afterMarker;
      start = pos;
      pos += 2;
      const close = input.indexOf('*/', pos);
      if (close < 0) return fail('unclosed comment');
      pos = close + 2;
      const { delim, trim } = atRightDelim();
      if (!delim) return fail('comment ends before closing delimiter');
      pos += (trim ? 2 : 0) + 2;
      if (trim) skipSpaces();
      start = pos;
      continue;
    }
    emit('leftDelim');
    pos += afterMarker;
    start = pos;
    parenDepth = 0;

    // --- inside the action ---
    for (;;) {
      const { delim, trim } = atRightDelim();
      if (delim) {
        if (parenDepth !== 0) return fail('unclosed left paren');
        if (trim) pos += 2;
        start = pos;
        pos += 2;
        emit('rightDelim');
        if (trim) skipSpaces();
        start = pos;
        break;
      }
      const r = next();
      if (r === EOF) return fail('unclosed action');
      if (isSpace(r)) {
        pos--;
        let spaces = 0;
        while (isSpace(peek())) {
          next();
          spaces++;
        }
        // A trim-marked closing delimiter starts with a space: leave that space to it.
        if (hasRightTrimMarker(input, pos - 1) && input.startsWith(RIGHT, pos + 1)) {
          pos--;
          if (spaces === 1) continue;
        }
        emit('space');
        continue;
      }
      const c = String.fromCodePoint(r);
      switch (c) {
        case '=':
          emit('assign');
          continue;
        case ':':
          if (next() !== 0x3d) return fail('expected :=');
          emit('declare');
          continue;
        case '|':
          emit('pipe');
          continue;
        case '"':
          for (;;) {
            const q = next();
            if (q === 0x5c) {
              const e = next();
              if (e !== EOF && e !== 0x0a) continue;
            }
            if (q === EOF || q === 0x0a || q === 0x5c) return fail('unterminated quoted string');
            if (q === 0x22) break;
          }
          emit('string');
          continue;
        case '`': {
          const close = input.indexOf('`', pos);
          if (close < 0) return fail('unterminated raw quoted string');
          pos = close + 1;
          emit('rawString');
          continue;
        }
        case "'":
          for (;;) {
            const q = next();
            if (q === 0x5c) {
              const e = next();
              if (e !== EOF && e !== 0x0a) continue;
            }
            if (q === EOF || q === 0x0a || q === 0x5c) return fail('unterminated character constant');
            if (q === 0x27) break;
          }
          emit('charConstant');
          continue;
        case '$':
        case '.': {
          // "." followed by a digit (or by nothing) starts a number.
          if (c === '.' && (pos >= input.length || (input[pos] >= '0' && input[pos] <= '9'))) break;
          if (atTerminator()) {
            emit(c === '$' ? 'variable' : 'dot');
            continue;
          }
          while (isAlphaNumeric(peek())) next();
          if (!atTerminator()) return fail(`bad character ${formatU(peek())}`);
          emit(c === '$' ? 'variable' : 'field');
          continue;
        }
        case '(':
          parenDepth++;
          emit('leftParen');
          continue;
        case ')':
          parenDepth--;
          if (parenDepth < 0) return fail('unexpected right paren');
          emit('rightParen');
          continue;
      }
      if (c === '.' || c === '+' || c === '-' || (c >= '0' && c <= '9')) {
        pos = start;
        if (!scanNumber()) return fail(`bad number syntax: ${quote(input.slice(start, pos))}`);
        const sign = peek();
        if (sign === 0x2b || sign === 0x2d) {
          // Complex: 1+2i. No spaces, must end in 'i'.
          if (!scanNumber() || input[pos - 1] !== 'i') return fail(`bad number syntax: ${quote(input.slice(start, pos))}`);
          emit('complex');
        } else emit('number');
        continue;
      }
      if (isAlphaNumeric(r)) {
        while (isAlphaNumeric(peek())) next();
        if (!atTerminator()) return fail(`bad character ${formatU(peek())}`);
        const word = input.slice(start, pos);
        if (Object.prototype.hasOwnProperty.call(KEYWORDS, word)) emit(KEYWORDS[word]);
        else if (word === 'true' || word === 'false') emit('bool');
        else emit('identifier');
        continue;
      }
      if (isAsciiPrint(r)) {
        emit('char');
        continue;
      }
      return fail(`unrecognized character in action: ${formatU(r)}`);
    }
  }
}
