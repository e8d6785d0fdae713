// The one error the Sentinel front end throws. Every lexing or parsing problem becomes one of
// these, with the place (1-based line and column, columns counted in characters) and what the
// parser wanted there, so a policy write can be refused with a precise 400.

/** A place in the policy text: 1-based line, 1-based column counted in Unicode code points. */
export interface Pos {
  line: number;
  column: number;
}

export const DEFAULT_FILENAME = 'policy.sentinel';

export class SentinelSyntaxError extends Error {
  override readonly name = 'SentinelSyntaxError';
  readonly file: string;
  readonly line: number;
  readonly column: number;
  /** What the parser wanted at this place, e.g. `"}"` or `expression`. */
  readonly expected: string;
  /** What it found there, e.g. `"when"`, `newline` or `end of input`. */
  readonly found: string;

  /** `detail`, when given, replaces the "expected X, found Y" wording of the message. */
  constructor(file: string, pos: Pos, expected: string, found: string, detail?: string) {
    super(`${file}:${pos.line}:${pos.column}: ${detail ?? `expected ${expected}, found ${found}`}`);
    this.file = file;
    this.line = pos.line;
    this.column = pos.column;
    this.expected = expected;
    this.found = found;
  }
}
