// Statements and blocks (spec: "Statements"), and the parameter list and body shared by function
// literals and named functions.

import type { AssignOp, Block, CaseClause, CaseStmt, ForStmt, IfStmt, Stmt } from './ast';
import type { Cursor } from './cursor';
import { parseBindingName, parseExpr, parseLoopVars } from './expressions';
import type { TokenKind } from './tokens';

const ASSIGN_OPS: ReadonlySet<string> = new Set(['=', '+=', '-=', '*=', '/=', '%=']);

/**
 * Statements up to (not including) one of `ends`. Each statement ends at a ";" (written, or
 * inserted at a line end) or right before an end token; stray ";" are skipped.
 */
export function parseStatements(c: Cursor, ends: readonly TokenKind[], endName: string): Stmt[] {
  const out: Stmt[] = [];
  for (;;) {
    while (c.accept(';'));
    if (ends.includes(c.peek().kind)) return out;
    out.push(parseStatement(c));
    if (c.accept(';')) continue;
    if (ends.includes(c.peek().kind)) return out;
    c.fail(c.peek(), endName);
  }
}

export function parseBlock(c: Cursor): Block {
  const open = c.expect('{');
  c.enter(open);
  c.blocks++;
  const body = parseStatements(c, ['}'], 'newline, ";" or "}"');
  c.expect('}');
  c.blocks--;
  c.leave();
  return { kind: 'Block', pos: open.pos, body };
}

/** `(a, b) { ... }` after `func` [name]: a new function context (no enclosing loop). */
export function parseFunctionRest(c: Cursor): { params: string[]; body: Block } {
  c.expect('(');
  const params: string[] = [];
  while (!c.accept(')')) {
    const tok = c.peek();
    const name = parseBindingName(c);
    if (params.includes(name)) c.fail(tok, 'a new parameter name', `duplicate parameter "${name}"`);
    params.push(name);
    if (!c.accept(',')) {
      c.expect(')', '"," or ")"');
      break;
    }
  }
  const loops = c.loops;
  c.loops = 0;
  c.funcs++;
  const body = parseBlock(c);
  c.funcs--;
  c.loops = loops;
  return { params, body };
}

function parseStatement(c: Cursor): Stmt {
  const t = c.peek();
  c.enter(t);
  const stmt = parseStatementInner(c);
  c.leave();
  return stmt;
}

function parseStatementInner(c: Cursor): Stmt {
  const t = c.peek();
  switch (t.kind) {
    case 'import':
      return c.fail(t, 'statement', 'imports must come before all params and statements');
    case 'param':
      return c.fail(t, 'statement', 'params must come after imports and before all statements');
    case 'func':
      if (c.peek(1).kind !== 'ident') break;
      if (c.blocks > 0) return c.fail(t, 'statement', 'named functions can only be declared at the top level');
      c.next();
      return { kind: 'FuncDecl', pos: t.pos, name: parseBindingName(c), ...parseFunctionRest(c) };
    case 'if':
      return parseIf(c);
    case 'for':
      return parseFor(c);
    case 'case':
      return parseCase(c);
    case 'break':
    case 'continue':
      if (c.loops === 0) return c.fail(t, 'statement', `"${t.kind}" outside a for loop`);
      c.next();
      return t.kind === 'break' ? { kind: 'Break', pos: t.pos } : { kind: 'Continue', pos: t.pos };
    case 'return':
      if (c.funcs === 0) return c.fail(t, 'statement', '"return" outside a function');
      c.next();
      return { kind: 'Return', pos: t.pos, value: parseExpr(c) };
    default:
      break;
  }
  return parseSimpleStatement(c);
}

/** An assignment, or a call used as a statement. */
function parseSimpleStatement(c: Cursor): Stmt {
  const first = c.peek();
  const expr = parseExpr(c);
  const opTok = c.peek();
  if (ASSIGN_OPS.has(opTok.kind)) {
    if (expr.kind !== 'Ident' && expr.kind !== 'Index') {
      const what = expr.kind === 'Selector' ? 'a selector (write x["key"] instead)' : 'this expression';
      c.fail(first, 'a name or index expression to assign to', `cannot assign to ${what}`);
    }
    c.next();
    return { kind: 'Assign', pos: expr.pos, op: opTok.kind as AssignOp, target: expr, value: parseExpr(c) };
  }
  if (expr.kind === 'Call') return { kind: 'ExprStmt', pos: expr.pos, expr };
  return c.fail(opTok, 'assignment');
}

function parseIf(c: Cursor): IfStmt {
  const kw = c.expect('if');
  const cond = parseExpr(c);
  const then = parseBlock(c);
  if (!c.accept('else')) return { kind: 'If', pos: kw.pos, cond, then };
  // An else-if chain recurses; the nesting limit applies to it like any other nesting.
  if (c.at('if')) {
    c.enter(c.peek());
    const elseIf = parseIf(c);
    c.leave();
    return { kind: 'If', pos: kw.pos, cond, then, else: elseIf };
  }
  return { kind: 'If', pos: kw.pos, cond, then, else: parseBlock(c) };
}

function parseFor(c: Cursor): ForStmt {
  const kw = c.expect('for');
  const collection = parseExpr(c);
  c.expect('as');
  const vars = parseLoopVars(c);
  c.loops++;
  const body = parseBlock(c);
  c.loops--;
  return { kind: 'For', pos: kw.pos, collection, vars, body };
}

function parseCase(c: Cursor): CaseStmt {
  const kw = c.expect('case');
  const subject = c.at('{') ? undefined : parseExpr(c);
  c.expect('{');
  const clauses: CaseClause[] = [];
  let sawElse = false;
  for (;;) {
    while (c.accept(';'));
    const t = c.peek();
    if (c.accept('}')) break;
    if (c.accept('when')) {
      const values = [parseExpr(c)];
      while (c.accept(',')) values.push(parseExpr(c));
      c.expect(':', '"," or ":"');
      clauses.push({ pos: t.pos, values, body: parseClauseBody(c) });
    } else if (c.at('else')) {
      if (sawElse) c.fail(t, '"when" or "}"', 'a case statement can have only one else clause');
      sawElse = true;
      c.next();
      c.expect(':');
      clauses.push({ pos: t.pos, body: parseClauseBody(c) });
    } else {
      c.fail(t, '"when", "else" or "}"');
    }
  }
  return subject ? { kind: 'Case', pos: kw.pos, subject, clauses } : { kind: 'Case', pos: kw.pos, clauses };
}

function parseClauseBody(c: Cursor): Stmt[] {
  return parseStatements(c, ['when', 'else', '}'], 'newline, ";" or "}"');
}
