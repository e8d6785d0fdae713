// The parser's position in the token list, plus the context the grammar's checks need: how deep
// the recursion is (bounded, so hostile input cannot overflow the stack), and whether we are
// inside a function, a loop or a block.

import type { Block } from './ast';
import { SentinelSyntaxError } from './errors';
import { describeToken, type Token, type TokenKind } from './tokens';

/** Deepest nesting of brackets, blocks, statements and unary operators the parser accepts. */
export const MAX_NESTING = 100;

/**
 * How a function's parameters and body are parsed (statements.ts): handed in, so that the
 * expression grammar, which meets function literals, does not import the statement grammar.
 */
export type FunctionRestParser = (c: Cursor) => { params: string[]; body: Block };

export class Cursor {
  private i = 0;
  private depth = 0;
  /** Enclosing `for` loops within the current function (break/continue need one). */
  loops = 0;
  /** Enclosing function bodies (return needs one). */
  funcs = 0;
  /** Enclosing blocks (named functions are only declared outside all of them). */
  blocks = 0;

  constructor(
    private readonly tokens: Token[],
    readonly file: string,
    readonly functionRest: FunctionRestParser,
  ) {}

  /** The token `k` ahead (the final `eof` token past the end). */
  peek(k = 0): Token {
    return this.tokens[Math.min(this.i + k, this.tokens.length - 1)];
  }

  at(kind: TokenKind): boolean {
    return this.peek().kind === kind;
  }

  next(): Token {
    const tok = this.peek();
    if (this.i < this.tokens.length - 1) this.i++;
    return tok;
  }

  accept(kind: TokenKind): Token | undefined {
    return this.at(kind) ? this.next() : undefined;
  }

  /** Consumes a token of `kind` or fails, naming it (or `expected`) as what was wanted. */
  expect(kind: TokenKind, expected: string = JSON.stringify(kind)): Token {
    if (!this.at(kind)) this.fail(this.peek(), expected);
    return this.next();
  }

  fail(tok: Token, expected: string, detail?: string): never {
    throw new SentinelSyntaxError(this.file, tok.pos, expected, describeToken(tok), detail);
  }

  /** Counts one level of nesting at `tok`; pair with leave(). */
  enter(tok: Token): void {
    if (++this.depth > MAX_NESTING) {
      this.fail(tok, `at most ${MAX_NESTING} levels of nesting`, `nesting deeper than ${MAX_NESTING} levels`);
    }
  }

  leave(): void {
    this.depth--;
  }
}
