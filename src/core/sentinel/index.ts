// The Sentinel language front end: parsePolicy turns policy text into the tree in ast.ts.

export type * from './ast';
export { SentinelSyntaxError, type Pos } from './errors';
export { tokenize } from './lexer';
export { parsePolicy } from './parser';
export { BINARY_PRECEDENCE } from './precedence';
export { MAX_NESTING } from './cursor';
export { MAX_TREE_DEPTH } from './depth';
export type { Token, TokenKind } from './tokens';
