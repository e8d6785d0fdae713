// Expressions: precedence climbing over the binary operators (table in precedence.ts), then
// unary operators, then operands with their selectors, indexes, slices and calls.

import type { BinaryOp, Expr, FuncLit, QuantifierExpr, QuantifierOp, RuleExpr, UnaryOp } from './ast';
import type { Cursor } from './cursor';
import { BINARY_PRECEDENCE, POSTFIX_IS_PRECEDENCE } from './precedence';
import { isKeyword, type Token } from './tokens';

export function parseExpr(c: Cursor): Expr {
  return parseBinary(c, 1);
}

type Infix =
  | { kind: 'binary'; op: BinaryOp; prec: number; width: number }
  | { kind: 'Empty' | 'Defined'; negated: boolean; prec: number; width: number };

function parseBinary(c: Cursor, minPrec: number): Expr {
  let left = parseUnary(c);
  for (;;) {
    const infix = peekInfix(c);
    if (!infix || infix.prec < minPrec) return left;
    const opTok = c.peek();
    for (let k = 0; k < infix.width; k++) c.next();
    if (infix.kind === 'binary') {
      const right = parseBinary(c, infix.prec + 1);
      left = { kind: 'Binary', pos: left.pos, opPos: opTok.pos, op: infix.op, left, right };
    } else {
      left = { kind: infix.kind, pos: left.pos, negated: infix.negated, operand: left };
    }
  }
}

/** The binary operator (or postfix `is [not] empty|defined`) at the cursor, if any. */
function peekInfix(c: Cursor): Infix | undefined {
  const t = c.peek();
  const binary = (op: BinaryOp, width = 1): Infix => ({ kind: 'binary', op, prec: BINARY_PRECEDENCE[op], width });
  switch (t.kind) {
    case 'or': case 'xor': case 'and':
    case '==': case '!=': case '<': case '<=': case '>': case '>=':
    case 'in': case 'contains': case 'matches':
    case '+': case '-': case '*': case '/': case '%':
      return binary(t.kind);
    case 'else':
      // `else:` opens a case statement's else clause; it is never the else operator.
      return c.peek(1).kind === ':' ? undefined : binary('else');
    case 'not': {
      const t1 = c.peek(1);
      if (t1.kind === 'in' || t1.kind === 'contains' || t1.kind === 'matches') return binary(`not ${t1.kind}`, 2);
      return c.fail(t1, '"in", "contains" or "matches" after "not"');
    }
    case 'is': {
      const negated = c.peek(1).kind === 'not';
      const word = c.peek(negated ? 2 : 1);
      const width = negated ? 3 : 2;
      if (word.kind === 'empty') return { kind: 'Empty', negated, prec: POSTFIX_IS_PRECEDENCE, width };
      if (word.kind === 'ident' && word.text === 'defined') {
        return { kind: 'Defined', negated, prec: POSTFIX_IS_PRECEDENCE, width };
      }
      return negated ? binary('is not', 2) : binary('is');
    }
    default:
      return undefined;
  }
}

function parseUnary(c: Cursor): Expr {
  const t = c.peek();
  c.enter(t);
  let result: Expr;
  if (t.kind === 'not' || t.kind === '!' || t.kind === '-' || t.kind === '+') {
    c.next();
    result = { kind: 'Unary', pos: t.pos, op: t.kind as UnaryOp, operand: parseUnary(c) };
  } else {
    result = parsePostfix(c);
  }
  c.leave();
  return result;
}

function parsePostfix(c: Cursor): Expr {
  let x = parseOperand(c);
  for (;;) {
    const t = c.peek();
    if (t.kind === '.') {
      c.next();
      const name = c.peek();
      // Selectors may be keywords (`x.map`, `x.in`), but nothing else that is not a name.
      if (name.kind !== 'ident' && !isKeyword(name.kind)) c.fail(name, 'field name after "."');
      c.next();
      x = { kind: 'Selector', pos: x.pos, object: x, name: name.text };
    } else if (t.kind === '[') {
      c.next();
      const low = c.at(':') ? undefined : parseExpr(c);
      if (c.accept(':')) {
        const high = c.at(']') ? undefined : parseExpr(c);
        c.expect(']');
        x = { kind: 'Slice', pos: x.pos, object: x, low, high };
      } else {
        c.expect(']', '"]" or ":"');
        x = { kind: 'Index', pos: x.pos, object: x, index: low as Expr };
      }
    } else if (t.kind === '(') {
      c.next();
      x = { kind: 'Call', pos: x.pos, callee: x, args: parseList(c, ')') };
    } else {
      return x;
    }
  }
}

/** Comma-separated expressions up to `close` (already past the opener); a trailing comma is fine. */
function parseList(c: Cursor, close: ')' | ']'): Expr[] {
  const items: Expr[] = [];
  while (!c.accept(close)) {
    items.push(parseExpr(c));
    if (!c.accept(',')) {
      c.expect(close, `"," or "${close}"`);
      break;
    }
  }
  return items;
}

function parseOperand(c: Cursor): Expr {
  const t = c.next();
  const pos = t.pos;
  switch (t.kind) {
    case 'ident':
      switch (t.text) {
        case 'true': return { kind: 'Bool', pos, value: true };
        case 'false': return { kind: 'Bool', pos, value: false };
        case 'null': return { kind: 'Null', pos };
        case 'undefined': return { kind: 'Undefined', pos };
        default: return { kind: 'Ident', pos, name: t.text };
      }
    case 'int':
      return { kind: 'Int', pos, value: t.int as bigint, raw: t.text };
    case 'float':
      return { kind: 'Float', pos, value: t.float as number, raw: t.text };
    case 'string':
      return { kind: 'String', pos, value: t.str as string };
    case '(': {
      const inner = parseExpr(c);
      c.expect(')');
      return inner;
    }
    case '[':
      return { kind: 'List', pos, elements: parseList(c, ']') };
    case '{':
      return parseMapRest(c, t);
    case 'func':
      return parseFuncLit(c, t);
    case 'rule':
      return parseRuleRest(c, t);
    case 'all': case 'any': case 'filter': case 'map':
      return parseQuantifierRest(c, t, t.kind);
    default:
      return c.fail(t, 'expression');
  }
}

function parseMapRest(c: Cursor, open: Token): Expr {
  const entries: { key: Expr; value: Expr }[] = [];
  while (!c.accept('}')) {
    const key = parseExpr(c);
    c.expect(':');
    entries.push({ key, value: parseExpr(c) });
    if (!c.accept(',')) {
      c.expect('}', '"," or "}"');
      break;
    }
  }
  return { kind: 'Map', pos: open.pos, entries };
}

function parseFuncLit(c: Cursor, kw: Token): FuncLit {
  const { params, body } = c.functionRest(c);
  return { kind: 'Func', pos: kw.pos, params, body };
}

function parseRuleRest(c: Cursor, kw: Token): RuleExpr {
  const when = c.accept('when') ? parseExpr(c) : undefined;
  c.expect('{');
  const body = parseExpr(c);
  c.expect('}');
  return when ? { kind: 'Rule', pos: kw.pos, when, body } : { kind: 'Rule', pos: kw.pos, body };
}

function parseQuantifierRest(c: Cursor, kw: Token, op: QuantifierOp): QuantifierExpr {
  const collection = parseExpr(c);
  c.expect('as');
  const vars = parseLoopVars(c);
  c.expect('{');
  const body = parseExpr(c);
  c.expect('}');
  return { kind: 'Quantifier', pos: kw.pos, op, collection, vars, body };
}

/** `a` or `a, b` after `as` (in quantifiers and for statements). */
export function parseLoopVars(c: Cursor): [string] | [string, string] {
  const first = parseBindingName(c);
  if (!c.accept(',')) return [first];
  return [first, parseBindingName(c)];
}

const CONSTANTS: ReadonlySet<string> = new Set(['true', 'false', 'null', 'undefined']);

/** A name being bound (parameter, loop variable, function, import alias): not a constant. */
export function parseBindingName(c: Cursor): string {
  const t = c.peek();
  if (t.kind !== 'ident' || CONSTANTS.has(t.text)) c.fail(t, 'identifier');
  c.next();
  return t.text;
}
