// The syntax tree the parser produces. Every node has `kind` and `pos` (its first token's place).
// Operator precedence is already resolved into the tree's shape; parentheses leave no node.

import type { Pos } from './errors';

// ---- Expressions -------------------------------------------------------------------------------

export interface Ident { kind: 'Ident'; pos: Pos; name: string }
/** Integer literal; the value is exact (64-bit range is checked by whoever evaluates it). */
export interface IntLit { kind: 'Int'; pos: Pos; value: bigint; raw: string }
export interface FloatLit { kind: 'Float'; pos: Pos; value: number; raw: string }
export interface StringLit { kind: 'String'; pos: Pos; value: string }
export interface BoolLit { kind: 'Bool'; pos: Pos; value: boolean }
export interface NullLit { kind: 'Null'; pos: Pos }
export interface UndefinedLit { kind: 'Undefined'; pos: Pos }
export interface ListLit { kind: 'List'; pos: Pos; elements: Expr[] }
export interface MapEntry { key: Expr; value: Expr }
export interface MapLit { kind: 'Map'; pos: Pos; entries: MapEntry[] }
/** `func(a, b) { ... }` */
export interface FuncLit { kind: 'Func'; pos: Pos; params: string[]; body: Block }
/** `rule [when guard] { body }`: lazy and memoised; a false guard makes the rule true. */
export interface RuleExpr { kind: 'Rule'; pos: Pos; when?: Expr; body: Expr }
/** `x.name` (the name may be a keyword, e.g. `x.map`). */
export interface SelectorExpr { kind: 'Selector'; pos: Pos; object: Expr; name: string }
export interface IndexExpr { kind: 'Index'; pos: Pos; object: Expr; index: Expr }
/** `x[low:high]`, either bound optional. */
export interface SliceExpr { kind: 'Slice'; pos: Pos; object: Expr; low?: Expr; high?: Expr }
export interface CallExpr { kind: 'Call'; pos: Pos; callee: Expr; args: Expr[] }

export type UnaryOp = 'not' | '!' | '-' | '+';
export interface UnaryExpr { kind: 'Unary'; pos: Pos; op: UnaryOp; operand: Expr }

export type BinaryOp =
  | 'or' | 'xor' | 'and'
  | '==' | '!=' | '<' | '<=' | '>' | '>='
  | 'is' | 'is not' | 'in' | 'not in' | 'contains' | 'not contains' | 'matches' | 'not matches'
  | 'else'
  | '+' | '-' | '*' | '/' | '%';
/** `pos` is the left operand's; `opPos` the operator's. */
export interface BinaryExpr { kind: 'Binary'; pos: Pos; opPos: Pos; op: BinaryOp; left: Expr; right: Expr }

/** `x is empty` / `x is not empty` (negated). */
export interface EmptyExpr { kind: 'Empty'; pos: Pos; negated: boolean; operand: Expr }
/** `x is defined` / `x is not defined` (negated). */
export interface DefinedExpr { kind: 'Defined'; pos: Pos; negated: boolean; operand: Expr }

export type QuantifierOp = 'all' | 'any' | 'filter' | 'map';
/**
 * `all|any|filter|map collection as [a,] b { body }`. `vars` holds the one or two names as
 * written: with two, the first gets the index (list) or key (map) and the second the value; with
 * one, it gets the value of a list element or the key of a map entry.
 */
export interface QuantifierExpr {
  kind: 'Quantifier';
  pos: Pos;
  op: QuantifierOp;
  collection: Expr;
  vars: [string] | [string, string];
  body: Expr;
}

export type Expr =
  | Ident | IntLit | FloatLit | StringLit | BoolLit | NullLit | UndefinedLit
  | ListLit | MapLit | FuncLit | RuleExpr
  | SelectorExpr | IndexExpr | SliceExpr | CallExpr
  | UnaryExpr | BinaryExpr | EmptyExpr | DefinedExpr | QuantifierExpr;

// ---- Statements --------------------------------------------------------------------------------

export interface Block { kind: 'Block'; pos: Pos; body: Stmt[] }

export type AssignOp = '=' | '+=' | '-=' | '*=' | '/=' | '%=';
/** Targets are a name or an index expression (selectors cannot be assigned, per the spec). */
export interface AssignStmt { kind: 'Assign'; pos: Pos; op: AssignOp; target: Ident | IndexExpr; value: Expr }
/** An expression used as a statement: always a call. */
export interface ExprStmt { kind: 'ExprStmt'; pos: Pos; expr: CallExpr }
/** `func name(params) { ... }`: top level only, and the name cannot be reassigned. */
export interface FuncDecl { kind: 'FuncDecl'; pos: Pos; name: string; params: string[]; body: Block }
export interface IfStmt { kind: 'If'; pos: Pos; cond: Expr; then: Block; else?: Block | IfStmt }
/** `for collection as [a,] b { ... }`; `vars` as in QuantifierExpr. */
export interface ForStmt { kind: 'For'; pos: Pos; collection: Expr; vars: [string] | [string, string]; body: Block }
/** One `when a, b:` clause (`values` set) or the `else:` clause (`values` absent). */
export interface CaseClause { pos: Pos; values?: Expr[]; body: Stmt[] }
/** `case [subject] { clauses }`; without a subject it behaves as `case true`. */
export interface CaseStmt { kind: 'Case'; pos: Pos; subject?: Expr; clauses: CaseClause[] }
export interface BreakStmt { kind: 'Break'; pos: Pos }
export interface ContinueStmt { kind: 'Continue'; pos: Pos }
export interface ReturnStmt { kind: 'Return'; pos: Pos; value: Expr }

export type Stmt =
  | AssignStmt | ExprStmt | FuncDecl | IfStmt | ForStmt | CaseStmt | BreakStmt | ContinueStmt | ReturnStmt;

// ---- Program -----------------------------------------------------------------------------------

/** `import "path" [as alias]`; without an alias the evaluator decides the bound name. */
export interface ImportDecl { kind: 'Import'; pos: Pos; path: string; alias?: string }
/** `param name [default literal]`; the default is limited to literals (spec: "Parameters"). */
export interface ParamDecl { kind: 'Param'; pos: Pos; name: string; default?: Expr }

/** A policy: its imports, then its parameters, then its statements, each in source order. */
export interface Program {
  kind: 'Program';
  imports: ImportDecl[];
  params: ParamDecl[];
  body: Stmt[];
}

export type Node = Program | ImportDecl | ParamDecl | Stmt | Expr | Block;
