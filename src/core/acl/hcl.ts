// A small parser for the HCL (v1) subset that Vault policies use. No maintained HCL parser runs
// in workerd, and policies only need attributes, labelled blocks, strings, numbers, booleans,
// lists and objects. Heredocs and interpolation are not supported (interpolation text stays
// literal, as it does for Vault's policy parser).
//
// The result is a generic tree (HclObject); policy.ts gives it meaning. JSON documents are
// converted to the same tree by document.ts.

import { PolicyError } from './errors';

export type HclValue = string | number | boolean | HclValue[] | HclObject;

/** `key = value`, `key { ... }` or `key "label" { ... }`. */
export interface HclItem {
  key: string;
  labels: string[];
  value: HclValue;
  /** 1-based line of the key; absent for JSON input. */
  line?: number;
}

export class HclObject {
  constructor(
    readonly items: HclItem[],
    readonly line?: number,
  ) {}
}

type TokenType = 'ident' | 'string' | 'number' | 'punct' | 'eof';

interface Token {
  type: TokenType;
  /** Decoded value: string contents, identifier, number or punctuation character. */
  value: string | number;
  /** Source text, for error messages. */
  raw: string;
  line: number;
}

/** Deeply nested input must fail as a PolicyError, not as a stack overflow. */
const MAX_DEPTH = 64;

const fail = (line: number, message: string): never => {
  throw new PolicyError(`line ${line}: ${message}`);
};

const IDENT = /[A-Za-z_][A-Za-z0-9_.-]*/y;
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const IDENT_CHAR = /[A-Za-z0-9_.-]/;

function readString(src: string, start: number, line: number): { value: string; end: number } {
  let out = '';
  let j = start + 1;
  for (;;) {
    if (j >= src.length) fail(line, 'unterminated string');
    const ch = src[j];
    if (ch === '\n') fail(line, 'unterminated string (a string cannot span lines)');
    if (ch === '"') return { value: out, end: j + 1 };
    if (ch !== '\\') {
      out += ch;
      j++;
      continue;
    }
    const esc = src[j + 1];
    const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', '"': '"', '\\': '\\', '/': '/' };
    if (esc !== undefined && Object.hasOwn(simple, esc)) {
      out += simple[esc];
      j += 2;
      continue;
    }
    const width = esc === 'u' ? 4 : esc === 'U' ? 8 : 0;
    const hex = /^[0-9a-fA-F]*/.exec(src.slice(j + 2, j + 2 + width))![0];
    const code = width > 0 && hex.length === width ? parseInt(hex, 16) : -1;
    if (code < 0 || code > 0x10ffff) fail(line, `invalid escape sequence "\\${esc ?? ''}${hex}" in string`);
    out += String.fromCodePoint(code);
    j += 2 + width;
  }
}

function tokenize(src: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  let line = 1;
  while (i < src.length) {
    const c = src[i];
    if (c === '\n') {
      line++;
      i++;
    } else if (c === ' ' || c === '\t' || c === '\r' || c === '\f' || c === '\v' || c === '\ufeff') {
      i++;
    } else if (c === '#' || (c === '/' && src[i + 1] === '/')) {
      while (i < src.length && src[i] !== '\n') i++;
    } else if (c === '/' && src[i + 1] === '*') {
      const end = src.indexOf('*/', i + 2);
      if (end < 0) fail(line, 'unterminated "/*" comment');
      for (let k = i; k < end; k++) if (src[k] === '\n') line++;
      i = end + 2;
    } else if (c === '"') {
      const { value, end } = readString(src, i, line);
      tokens.push({ type: 'string', value, raw: src.slice(i, end), line });
      i = end;
    } else if (/[0-9-]/.test(c)) {
      NUMBER.lastIndex = i;
      const m = NUMBER.exec(src);
      let end = m ? i + m[0].length : i + 1;
      if (!m || (end < src.length && IDENT_CHAR.test(src[end]))) {
        while (end < src.length && IDENT_CHAR.test(src[end])) end++;
        fail(line, `invalid number "${src.slice(i, end)}" (durations and other text must be quoted)`);
      }
      tokens.push({ type: 'number', value: Number(m![0]), raw: m![0], line });
      i = end;
    } else if (/[A-Za-z_]/.test(c)) {
      IDENT.lastIndex = i;
      const word = IDENT.exec(src)![0];
      tokens.push({ type: 'ident', value: word, raw: word, line });
      i += word.length;
    } else if ('{}[],=:'.includes(c)) {
      tokens.push({ type: 'punct', value: c, raw: c, line });
      i++;
    } else {
      fail(line, `unexpected character ${JSON.stringify(c)}`);
    }
  }
  tokens.push({ type: 'eof', value: '', raw: '', line });
  return tokens;
}

function describe(t: Token): string {
  switch (t.type) {
    case 'eof':
      return 'end of input';
    case 'string':
      return `string ${t.raw}`;
    case 'number':
      return `number ${t.raw}`;
    default:
      return `"${t.raw}"`;
  }
}

const isPunct = (t: Token, p: string): boolean => t.type === 'punct' && t.value === p;

class Parser {
  private pos = 0;

  constructor(private readonly tokens: Token[]) {}

  private peek(): Token {
    return this.tokens[this.pos];
  }

  private next(): Token {
    const t = this.tokens[this.pos];
    if (t.type !== 'eof') this.pos++;
    return t;
  }

  /** Items until end of input (top level) or the closing brace of a block/object. */
  parseBody(open: Token | null, depth: number): HclItem[] {
    if (depth > MAX_DEPTH) fail(this.peek().line, 'nesting too deep');
    const items: HclItem[] = [];
    for (;;) {
      const t = this.peek();
      if (t.type === 'eof') {
        if (open) fail(t.line, `unclosed "{" opened on line ${open.line}`);
        return items;
      }
      if (isPunct(t, '}')) {
        if (!open) fail(t.line, 'unexpected "}"');
        this.next();
        return items;
      }
      // Items may be separated by commas as well as newlines.
      if (isPunct(t, ',')) {
        this.next();
        continue;
      }
      items.push(this.parseItem(depth));
    }
  }

  private parseItem(depth: number): HclItem {
    const keyTok = this.next();
    if (keyTok.type !== 'ident' && keyTok.type !== 'string') {
      fail(keyTok.line, `expected a key, found ${describe(keyTok)}`);
    }
    const key = String(keyTok.value);
    const labels: string[] = [];
    while (this.peek().type === 'string') labels.push(String(this.next().value));
    const t = this.peek();
    if (isPunct(t, '{')) {
      this.next();
      const value = new HclObject(this.parseBody(t, depth + 1), t.line);
      return { key, labels, value, line: keyTok.line };
    }
    if (labels.length > 0) {
      fail(t.line, `expected "{" after ${key} ${labels.map((l) => JSON.stringify(l)).join(' ')}, found ${describe(t)}`);
    }
    if (!isPunct(t, '=') && !isPunct(t, ':')) fail(t.line, `expected "=" after "${key}"`);
    this.next();
    return { key, labels, value: this.parseValue(`"${key} ${t.value}"`, depth), line: keyTok.line };
  }

  private parseValue(after: string, depth: number): HclValue {
    const t = this.next();
    if (t.type === 'string' || t.type === 'number') return t.value;
    if (t.type === 'ident') {
      if (t.value === 'true') return true;
      if (t.value === 'false') return false;
      fail(t.line, `expected a value after ${after}, found "${t.raw}" (strings must be double-quoted)`);
    }
    if (isPunct(t, '[')) return this.parseList(t, depth + 1);
    if (isPunct(t, '{')) return new HclObject(this.parseBody(t, depth + 1), t.line);
    return fail(t.line, `expected a value after ${after}, found ${describe(t)}`);
  }

  private parseList(open: Token, depth: number): HclValue[] {
    if (depth > MAX_DEPTH) fail(open.line, 'nesting too deep');
    const values: HclValue[] = [];
    for (;;) {
      const t = this.peek();
      if (t.type === 'eof') fail(t.line, `unclosed "[" opened on line ${open.line}`);
      if (isPunct(t, ']')) {
        this.next();
        return values;
      }
      values.push(this.parseValue(values.length === 0 ? '"["' : '","', depth));
      const sep = this.peek();
      if (isPunct(sep, ',')) this.next();
      else if (!isPunct(sep, ']')) {
        if (sep.type === 'eof') fail(sep.line, `unclosed "[" opened on line ${open.line}`);
        fail(sep.line, `expected "," or "]" after a list element, found ${describe(sep)}`);
      }
    }
  }
}

/** Parses an HCL document; throws PolicyError("line N: ...") on syntax errors. */
export function parseHcl(src: string): HclObject {
  return new HclObject(new Parser(tokenize(src)).parseBody(null, 0), 1);
}
