// The Sentinel language: parsePolicy turns policy text into the tree in ast.ts, compilePolicy /
// evaluatePolicy run it against the imports the host supplies (standardImports and data).

export type * from './ast';
export { SentinelSyntaxError, type Pos } from './errors';
export { tokenize } from './lexer';
export { parsePolicy } from './parser';
export { BINARY_PRECEDENCE } from './precedence';
export { MAX_NESTING } from './cursor';
export { MAX_TREE_DEPTH } from './depth';
export type { Token, TokenKind } from './tokens';
export { compilePolicy, evaluatePolicy, type PolicyInput, type PolicyResult } from './evaluate';
export { standardImports } from './imports';
export { fromJSON, SentinelRuntimeError, SMap, UNDEFINED, type SObject, type Value } from './values';
