// Entry point: policy text to syntax tree. A policy is its imports, then its params, then its
// statements (spec: "Imports", "Parameters", "Program Execution").

import type { Expr, ImportDecl, ParamDecl, Program } from './ast';
import { Cursor } from './cursor';
import { checkTreeDepth } from './depth';
import { DEFAULT_FILENAME, SentinelSyntaxError } from './errors';
import { parseBindingName, parseExpr } from './expressions';
import { tokenize } from './lexer';
import { parseFunctionRest, parseStatements } from './statements';

/**
 * Parses a Sentinel policy. Throws SentinelSyntaxError, and nothing else, for any text that is not
 * a valid policy; `file` only names the policy in error messages.
 */
export function parsePolicy(source: string, file: string = DEFAULT_FILENAME): Program {
  try {
    const c = new Cursor(tokenize(source, file), file, parseFunctionRest);
    const imports: ImportDecl[] = [];
    const params: ParamDecl[] = [];
    skipSemicolons(c);
    while (c.at('import')) {
      imports.push(parseImport(c));
      endDeclaration(c);
    }
    while (c.at('param')) {
      params.push(parseParam(c));
      endDeclaration(c);
    }
    // An import or param out of this order is reported by the statement parser.
    const body = parseStatements(c, ['eof'], 'newline or ";"');
    const program: Program = { kind: 'Program', imports, params, body };
    checkTreeDepth(program, file);
    return program;
  } catch (e) {
    if (e instanceof SentinelSyntaxError) throw e;
    // Not expected to happen (the fuzz tests look for it): keep the contract of one error type.
    const message = e instanceof Error ? e.message : String(e);
    throw new SentinelSyntaxError(file, { line: 1, column: 1 }, 'a policy', 'an internal parser error', `internal parser error: ${message}`);
  }
}

function skipSemicolons(c: Cursor): void {
  while (c.accept(';'));
}

function endDeclaration(c: Cursor): void {
  if (!c.accept(';') && !c.at('eof')) c.fail(c.peek(), 'newline or ";"');
  skipSemicolons(c);
}

function parseImport(c: Cursor): ImportDecl {
  const kw = c.expect('import');
  const path = c.expect('string', 'import name (a string)');
  if (!c.accept('as')) return { kind: 'Import', pos: kw.pos, path: path.str as string };
  return { kind: 'Import', pos: kw.pos, path: path.str as string, alias: parseBindingName(c) };
}

function parseParam(c: Cursor): ParamDecl {
  const kw = c.expect('param');
  const name = parseBindingName(c);
  if (!c.accept('default')) return { kind: 'Param', pos: kw.pos, name };
  const first = c.peek();
  const value = parseExpr(c);
  if (!isLiteralDefault(value)) {
    c.fail(first, 'a literal default (string, number, boolean, or a list or map of them)', 'a param default must be a literal');
  }
  return { kind: 'Param', pos: kw.pos, name, default: value };
}

/** Spec "Parameters": strings, numbers (optionally signed), true/false, and lists and maps of them. */
function isLiteralDefault(e: Expr): boolean {
  switch (e.kind) {
    case 'String': case 'Int': case 'Float': case 'Bool':
      return true;
    case 'Unary':
      return (e.op === '-' || e.op === '+') && (e.operand.kind === 'Int' || e.operand.kind === 'Float');
    case 'List':
      return e.elements.every(isLiteralDefault);
    case 'Map':
      return e.entries.every((en) => isLiteralDefault(en.key) && isLiteralDefault(en.value));
    default:
      return false;
  }
}
