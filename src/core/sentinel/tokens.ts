// Token kinds of the Sentinel language (spec: "Lexical Elements"). Punctuation and reserved words
// use their own text as the kind, so the parser can compare `tok.kind === '}'` or `=== 'rule'`.

import type { Pos } from './errors';

/** Reserved words: the spec's keywords plus the word operators (they cannot name variables). */
export const KEYWORDS = [
  'all', 'any', 'as', 'break', 'case', 'continue', 'default', 'else', 'empty', 'filter', 'for',
  'func', 'if', 'import', 'map', 'param', 'return', 'rule', 'when',
  'and', 'contains', 'in', 'is', 'matches', 'not', 'or', 'xor',
] as const;
export type Keyword = (typeof KEYWORDS)[number];

/** Operators and delimiters, longest first within each leading character. */
export const PUNCTUATION = [
  '+=', '-=', '*=', '/=', '%=', '==', '!=', '<=', '>=',
  '+', '-', '*', '/', '%', '<', '>', '=', '!', '(', ')', '[', ']', '{', '}', ',', '.', ':', ';',
] as const;
export type Punctuation = (typeof PUNCTUATION)[number];

export type TokenKind = 'ident' | 'int' | 'float' | 'string' | 'eof' | Keyword | Punctuation;

export interface Token {
  kind: TokenKind;
  /** Source text of the token (for strings: including quotes; for an inserted ";": empty). */
  text: string;
  pos: Pos;
  /** For `;`: true when inserted at a line end rather than written. */
  auto?: boolean;
  /** Decoded value of a string literal. */
  str?: string;
  /** Value of an integer literal (exact; range is the evaluator's concern). */
  int?: bigint;
  /** Value of a float literal. */
  float?: number;
}

const keywordSet: ReadonlySet<string> = new Set(KEYWORDS);

export function isKeyword(word: string): word is Keyword {
  return keywordSet.has(word);
}

/**
 * Spec "Semicolons": a newline after one of these tokens ends the statement. `empty` is added so
 * that `x is empty` can end a line like `x is undefined` does (the spec's list predates `empty`).
 */
export function endsStatementAtNewline(kind: TokenKind): boolean {
  switch (kind) {
    case 'ident': case 'int': case 'float': case 'string':
    case 'break': case 'continue': case 'return': case 'empty':
    case ')': case ']': case '}':
      return true;
    default:
      return false;
  }
}

/** How a token is named in error messages: `"when"`, `"x"`, `string "abc"`, `newline`. */
export function describeToken(tok: Token): string {
  switch (tok.kind) {
    case 'eof':
      return 'end of input';
    case 'string':
      return `string ${JSON.stringify(shorten(tok.str ?? ''))}`;
    case ';':
      return tok.auto ? 'newline' : '";"';
    default:
      return JSON.stringify(shorten(tok.text));
  }
}

const shorten = (text: string): string => (text.length > 24 ? `${text.slice(0, 20)}…` : text);
