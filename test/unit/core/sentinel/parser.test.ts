// The Sentinel lexer and parser (src/core/sentinel), table-driven from HashiCorp's Sentinel
// language specification: literals, every expression and statement form, the precedence table,
// automatic semicolons, exact error places, the reference's example policies, and fuzzing.

import { describe, expect, it } from 'vitest';
import {
  MAX_NESTING,
  parsePolicy,
  SentinelSyntaxError,
  tokenize,
  type Block,
  type Expr,
  type Program,
  type Stmt,
} from '../../../../src/core/sentinel';

// ---- A compact s-expression printer for asserting tree shapes ------------------------------------

const word = (op: string) => op.replace(/ /g, '_');

function sx(e: Expr): string {
  switch (e.kind) {
    case 'Ident': return e.name;
    case 'Int': return e.value.toString();
    case 'Float': return `f${e.value}`;
    case 'String': return JSON.stringify(e.value);
    case 'Bool': return String(e.value);
    case 'Null': return 'null';
    case 'Undefined': return 'undefined';
    case 'List': return `(list${e.elements.map((x) => ` ${sx(x)}`).join('')})`;
    case 'Map': return `(map${e.entries.map((en) => ` (${sx(en.key)} ${sx(en.value)})`).join('')})`;
    case 'Func': return `(func (${e.params.join(' ')}) ${sxBlock(e.body)})`;
    case 'Rule': return e.when ? `(rule (when ${sx(e.when)}) ${sx(e.body)})` : `(rule ${sx(e.body)})`;
    case 'Selector': return `(. ${sx(e.object)} ${e.name})`;
    case 'Index': return `(index ${sx(e.object)} ${sx(e.index)})`;
    case 'Slice': return `(slice ${sx(e.object)} ${e.low ? sx(e.low) : '_'} ${e.high ? sx(e.high) : '_'})`;
    case 'Call': return `(call ${sx(e.callee)}${e.args.map((a) => ` ${sx(a)}`).join('')})`;
    case 'Unary': return `(${e.op} ${sx(e.operand)})`;
    case 'Binary': return `(${word(e.op)} ${sx(e.left)} ${sx(e.right)})`;
    case 'Empty': return `(${e.negated ? 'is_not_empty' : 'is_empty'} ${sx(e.operand)})`;
    case 'Defined': return `(${e.negated ? 'is_not_defined' : 'is_defined'} ${sx(e.operand)})`;
    case 'Quantifier': return `(${e.op} ${sx(e.collection)} (${e.vars.join(' ')}) ${sx(e.body)})`;
  }
}

const sxBlock = (b: Block): string => `{${b.body.map(sxStmt).join('; ')}}`;

function sxStmt(s: Stmt): string {
  switch (s.kind) {
    case 'Assign': return `(${s.op} ${sx(s.target)} ${sx(s.value)})`;
    case 'ExprStmt': return sx(s.expr);
    case 'FuncDecl': return `(funcdecl ${s.name} (${s.params.join(' ')}) ${sxBlock(s.body)})`;
    case 'If': {
      const alt = s.else ? (s.else.kind === 'If' ? ` else ${sxStmt(s.else)}` : ` else ${sxBlock(s.else)}`) : '';
      return `(if ${sx(s.cond)} ${sxBlock(s.then)}${alt})`;
    }
    case 'For': return `(for ${sx(s.collection)} (${s.vars.join(' ')}) ${sxBlock(s.body)})`;
    case 'Case': {
      const clauses = s.clauses.map((cl) =>
        cl.values ? `(when (${cl.values.map(sx).join(' ')}) ${cl.body.map(sxStmt).join('; ')})` : `(else ${cl.body.map(sxStmt).join('; ')})`,
      );
      return `(case ${s.subject ? sx(s.subject) : '_'}${clauses.map((x) => ` ${x}`).join('')})`;
    }
    case 'Break': return '(break)';
    case 'Continue': return '(continue)';
    case 'Return': return `(return ${sx(s.value)})`;
  }
}

function sxProgram(p: Program): string {
  return [
    ...p.imports.map((i) => (i.alias ? `(import ${JSON.stringify(i.path)} ${i.alias})` : `(import ${JSON.stringify(i.path)})`)),
    ...p.params.map((d) => (d.default ? `(param ${d.name} ${sx(d.default)})` : `(param ${d.name})`)),
    ...p.body.map(sxStmt),
  ].join(' ');
}

/** The tree of `v = <src>`'s right-hand side. */
function expr(src: string): string {
  const p = parsePolicy(`v = ${src}`);
  expect(p.body).toHaveLength(1);
  const s = p.body[0];
  if (s.kind !== 'Assign') throw new Error(`not an assignment: ${s.kind}`);
  return sx(s.value);
}

function syntaxError(src: string): SentinelSyntaxError {
  try {
    parsePolicy(src);
  } catch (e) {
    if (e instanceof SentinelSyntaxError) return e;
    throw e;
  }
  throw new Error(`parsed without error: ${src}`);
}

const tokens = (src: string): string =>
  tokenize(src)
    .map((t) => {
      switch (t.kind) {
        case 'ident': return `id:${t.text}`;
        case 'int': return `int:${t.int}`;
        case 'float': return `float:${t.float}`;
        case 'string': return `str:${JSON.stringify(t.str)}`;
        case ';': return t.auto ? 'NL' : ';';
        default: return t.kind;
      }
    })
    .join(' ');

// ---- Lexer -----------------------------------------------------------------------------------

describe('Sentinel lexer', () => {
  it.each<[string, string]>([
    // Integers: decimal, octal (leading 0), hexadecimal (spec "Integer Literals").
    ['42', 'int:42 eof'],
    ['0', 'int:0 eof'],
    ['0600', 'int:384 eof'],
    ['0xBadFace', 'int:195951310 eof'],
    ['0X1f', 'int:31 eof'],
    ['170141183460469231731687303715884105727', 'int:170141183460469231731687303715884105727 eof'],
    // Floats (spec "Floating-point Literals" examples).
    ['0.', 'float:0 eof'],
    ['72.40', 'float:72.4 eof'],
    ['072.40', 'float:72.4 eof'],
    ['2.71828', 'float:2.71828 eof'],
    ['1.e+0', 'float:1 eof'],
    ['6.67428e-11', 'float:6.67428e-11 eof'],
    ['1E6', 'float:1000000 eof'],
    ['.25', 'float:0.25 eof'],
    ['.12345E+5', 'float:12345 eof'],
    ['09.5', 'float:9.5 eof'],
    // Strings with Go-style escapes, and raw strings.
    ['"bar"', 'str:"bar" eof'],
    ['"\\a\\b\\f\\n\\r\\t\\v\\\\\\""', 'str:"\\u0007\\b\\f\\n\\r\\t\\u000b\\\\\\"" eof'],
    ['"\\u65e5本\\U00008a9e"', 'str:"日本語" eof'],
    ['"\\xc3\\xbf"', 'str:"ÿ" eof'],
    ['"\\303\\277"', 'str:"ÿ" eof'],
    ['"\\xff"', 'str:"\ufffd" eof'],
    ['"日本語"', 'str:"日本語" eof'],
    ['`abc`', 'str:"abc" eof'],
    ['`\\n\n\\n`', 'str:"\\\\n\\n\\\\n" eof'],
    ['`a\r\nb`', 'str:"a\\nb" eof'],
    // Identifiers: letters include "_" and Unicode letters; digits after the first character.
    ['_a _A αβ x1', 'id:_a id:_A id:αβ id:x1 eof'],
    // Keywords and word operators are their own tokens; constants are identifiers.
    ['rule when all any filter map', 'rule when all any filter map eof'],
    ['and or xor not in is contains matches else empty', 'and or xor not in is contains matches else empty eof'],
    ['true false null undefined', 'id:true id:false id:null id:undefined eof'],
    // Operators and delimiters: longest match.
    ['+= -= *= /= %= == != <= >=', '+= -= *= /= %= == != <= >= eof'],
    ['+-*/%< > =!()[]{},.:;', '+ - * / % < > = ! ( ) [ ] { } , . : ; eof'],
    // Comments: "#", "//" and "/* */".
    ['a # c\nb', 'id:a NL id:b eof'],
    ['a // c\nb', 'id:a NL id:b eof'],
    ['a /* c */ b', 'id:a id:b eof'],
    ['a /* line\nbreak */ b', 'id:a NL id:b eof'],
    ['a/b', 'id:a / id:b eof'],
    // Automatic semicolons after identifiers, literals, break/continue/return, ) ] }, and empty.
    ['a\nb', 'id:a NL id:b eof'],
    ['1\n2.5\n"s"\n`r`\nx', 'int:1 NL float:2.5 NL str:"s" NL str:"r" NL id:x eof'],
    ['break\ncontinue\nreturn\nx', 'break NL continue NL return NL id:x eof'],
    ['f()\n[]\n{}\nx', 'id:f ( ) NL [ ] NL { } NL id:x eof'],
    ['x is empty\ny', 'id:x is empty NL id:y eof'],
    // No semicolon after operators, commas or openers, nor before closers or the end.
    ['a or\nb', 'id:a or id:b eof'],
    ['f(a,\nb\n)', 'id:f ( id:a , id:b ) eof'],
    ['[\n1\n]', '[ int:1 ] eof'],
    ['rule {\na\n}', 'rule { id:a } eof'],
    ['a\n\n\n', 'id:a eof'],
    ['a\r\nb', 'id:a NL id:b eof'],
    ['\uFEFFa', 'id:a eof'],
  ])('%j', (src, want) => {
    expect(tokens(src)).toBe(want);
  });

  it('gives 1-based lines and columns counted in characters', () => {
    const toks = tokenize('a = "日本"\n  b𝒳 + 𝒳\n\t"x"');
    expect(toks.map((t) => [t.kind, t.pos.line, t.pos.column])).toEqual([
      ['ident', 1, 1], ['=', 1, 3], ['string', 1, 5], [';', 1, 9],
      ['ident', 2, 3], ['+', 2, 6], ['ident', 2, 8], [';', 2, 9],
      ['string', 3, 2], ['eof', 3, 5],
    ]);
  });
});

// ---- Expressions -----------------------------------------------------------------------------

describe('Sentinel expressions', () => {
  it.each<[string, string]>([
    // Operands.
    ['x', 'x'],
    ['42', '42'],
    ['1.5', 'f1.5'],
    ['"s"', '"s"'],
    ['true', 'true'],
    ['false', 'false'],
    ['null', 'null'],
    ['undefined', 'undefined'],
    ['(x)', 'x'],
    ['((1))', '1'],
    // Lists and maps, trailing commas, spanning lines.
    ['[]', '(list)'],
    ['[1]', '(list 1)'],
    ['[1, "a", x,]', '(list 1 "a" x)'],
    ['[[1], []]', '(list (list 1) (list))'],
    ['[\n  "a",\n  "b",\n]', '(list "a" "b")'],
    ['[\n  "a",\n  "b"\n]', '(list "a" "b")'],
    ['{}', '(map)'],
    ['{"a": 1}', '(map ("a" 1))'],
    ['{"a": 1, 2: [x], true: {},}', '(map ("a" 1) (2 (list x)) (true (map)))'],
    ['{\n  "a": 1,\n  "b": 2\n}', '(map ("a" 1) ("b" 2))'],
    // Selectors (keywords allowed as names), indexes, slices, calls.
    ['a.b', '(. a b)'],
    ['a.b.c', '(. (. a b) c)'],
    ['a.map', '(. a map)'],
    ['a.in.else.rule', '(. (. (. a in) else) rule)'],
    ['a.true', '(. a true)'],
    ['a[1]', '(index a 1)'],
    ['a["k"]', '(index a "k")'],
    ['a[-1]', '(index a (- 1))'],
    ['a[1:4]', '(slice a 1 4)'],
    ['a[2:]', '(slice a 2 _)'],
    ['a[:3]', '(slice a _ 3)'],
    ['a[:]', '(slice a _ _)'],
    ['s[i : j + 1]', '(slice s i (+ j 1))'],
    ['f()', '(call f)'],
    ['f(3.1415, true)', '(call f f3.1415 true)'],
    ['f(1,)', '(call f 1)'],
    ['f(\n  a,\n  b\n)', '(call f a b)'],
    ['f.p[i].x()', '(call (. (index (. f p) i) x))'],
    ['f(a)(b)', '(call (call f a) b)'],
    ['m["a"]["b"]', '(index (index m "a") "b")'],
    // Function literals.
    ['func() { return 1 }', '(func () {(return 1)})'],
    ['func(a, b,) { return a + b }', '(func (a b) {(return (+ a b))})'],
    ['func(x) {\n  y = x * 2\n  return y\n}', '(func (x) {(= y (* x 2)); (return y)})'],
    ['func() { return 1 }()', '(call (func () {(return 1)}))'],
    // Rules.
    ['rule { a }', '(rule a)'],
    ['rule { x is y }', '(rule (is x y))'],
    ['rule {\n  x == "value" or\n  y == "other"\n}', '(rule (or (== x "value") (== y "other")))'],
    ['rule when x is y { y > 42 }', '(rule (when (is x y)) (> y 42))'],
    ['rule when not request.unauthenticated { a }', '(rule (when (not (. request unauthenticated))) a)'],
    ['rule when f(x) { a }', '(rule (when (call f x)) a)'],
    ['rule when precond { false }', '(rule (when precond) false)'],
    // Quantifiers.
    ['all group.tasks as t { t.driver is "vmware" }', '(all (. group tasks) (t) (is (. t driver) "vmware"))'],
    ['any xs as i, x { x > i }', '(any xs (i x) (> x i))'],
    ['filter m as k, v { v is "a" }', '(filter m (k v) (is v "a"))'],
    ['map ["a", "b"] as _, id { { "id": id } }', '(map (list "a" "b") (_ id) (map ("id" id)))'],
    ['all a as x { any x.c as y { y } }', '(all a (x) (any (. x c) (y) y))'],
    ['not all xs as x { x }', '(not (all xs (x) x))'],
    ['all xs as x { x } and y', '(and (all xs (x) x) y)'],
    ['length(filter xs as x { x }) > 0', '(> (call length (filter xs (x) x)) 0)'],
    ['filter xs as x { x } is empty', '(is_empty (filter xs (x) x))'],
    ['all xs + ys as x { x }', '(all (+ xs ys) (x) x)'],
    ['rule { map [1] as x { x } }', '(rule (map (list 1) (x) x))'],
    // Unary operators.
    ['-x', '(- x)'],
    ['+x', '(+ x)'],
    ['!x', '(! x)'],
    ['not x', '(not x)'],
    ['- -x', '(- (- x))'],
    ['not not x', '(not (not x))'],
    ['-a.b', '(- (. a b))'],
    ['-f(x)[0]', '(- (index (call f x) 0))'],
    // Binary operators, one of each.
    ['a or b', '(or a b)'],
    ['a xor b', '(xor a b)'],
    ['a and b', '(and a b)'],
    ['a == b', '(== a b)'],
    ['a != b', '(!= a b)'],
    ['a < b', '(< a b)'],
    ['a <= b', '(<= a b)'],
    ['a > b', '(> a b)'],
    ['a >= b', '(>= a b)'],
    ['a is b', '(is a b)'],
    ['a is not b', '(is_not a b)'],
    ['a in b', '(in a b)'],
    ['a not in b', '(not_in a b)'],
    ['a contains b', '(contains a b)'],
    ['a not contains b', '(not_contains a b)'],
    ['a matches "^x"', '(matches a "^x")'],
    ['a not matches "^x"', '(not_matches a "^x")'],
    ['a else b', '(else a b)'],
    ['a + b', '(+ a b)'],
    ['a - b', '(- a b)'],
    ['a * b', '(* a b)'],
    ['a / b', '(/ a b)'],
    ['a % b', '(% a b)'],
    ['x is empty', '(is_empty x)'],
    ['x is not empty', '(is_not_empty x)'],
    ['x is defined', '(is_defined x)'],
    ['x is not defined', '(is_not_defined x)'],
    ['x is definedness', '(is x definedness)'],
    // Precedence (spec table: * / % > + - > else > comparisons > and > or xor; unary highest).
    ['1 + 2 * 3', '(+ 1 (* 2 3))'],
    ['1 * 2 + 3', '(+ (* 1 2) 3)'],
    ['1 - 2 - 3', '(- (- 1 2) 3)'],
    ['8 / 4 / 2', '(/ (/ 8 4) 2)'],
    ['a % b * c', '(* (% a b) c)'],
    ['a + b else c', '(else (+ a b) c)'],
    ['a else b + c', '(else a (+ b c))'],
    ['a else b else c', '(else (else a b) c)'],
    ['a else b == c', '(== (else a b) c)'],
    ['a == b else c', '(== a (else b c))'],
    ['foo.bar else "" is ""', '(is (else (. foo bar) "") "")'],
    ['a == b and c', '(and (== a b) c)'],
    ['a and b == c', '(and a (== b c))'],
    ['a and b or c', '(or (and a b) c)'],
    ['a or b and c', '(or a (and b c))'],
    ['a or b xor c', '(xor (or a b) c)'],
    ['a xor b or c', '(or (xor a b) c)'],
    ['a xor b and c', '(xor a (and b c))'],
    ['a or b or c or d', '(or (or (or a b) c) d)'],
    ['a < b == c', '(== (< a b) c)'],
    ['a < b <= c > d >= e', '(>= (> (<= (< a b) c) d) e)'],
    ['a in b contains c', '(contains (in a b) c)'],
    ['a is b is not c', '(is_not (is a b) c)'],
    ['a matches b == c', '(== (matches a b) c)'],
    ['not a and b', '(and (not a) b)'],
    ['not a == b', '(== (not a) b)'],
    ['!a or b', '(or (! a) b)'],
    ['-a * b', '(* (- a) b)'],
    ['a * -b', '(* a (- b))'],
    ['a - -b', '(- a (- b))'],
    ['(a or b) and c', '(and (or a b) c)'],
    ['a * (b + c)', '(* a (+ b c))'],
    ['not (a == b)', '(not (== a b))'],
    ['a + b is empty', '(is_empty (+ a b))'],
    ['a is empty and b', '(and (is_empty a) b)'],
    ['a is empty or b is not empty', '(or (is_empty a) (is_not_empty b))'],
    ['a else b is not defined', '(is_not_defined (else a b))'],
    ['1 + 2 == 3 and not false', '(and (== (+ 1 2) 3) (not false))'],
    ['"a" in xs or length(xs) > 0', '(or (in "a" xs) (> (call length xs) 0))'],
    // Lines continue after an operator; comments may end those lines.
    ['a or\nb or # comment\nc', '(or (or a b) c)'],
    ['a and\n\n  b', '(and a b)'],
    ['time.load(token.creation_time).unix >\n  time.load("2017-09-17T13:25:29Z").unix',
      '(> (. (call (. time load) (. token creation_time)) unix) (. (call (. time load) "2017-09-17T13:25:29Z") unix))'],
  ])('%j', (src, want) => {
    expect(expr(src)).toBe(want);
  });

  it('keeps literal values exact', () => {
    const p = parsePolicy('v = [9223372036854775807, 0x7fffffffffffffff, 1e308, "\\U0001F600"]');
    const list = (p.body[0] as { value: Expr }).value;
    expect(list).toMatchObject({
      kind: 'List',
      elements: [
        { kind: 'Int', value: 9223372036854775807n, raw: '9223372036854775807' },
        { kind: 'Int', value: 9223372036854775807n, raw: '0x7fffffffffffffff' },
        { kind: 'Float', value: 1e308 },
        { kind: 'String', value: '😀' },
      ],
    });
  });

  it('records where each node starts, and where a binary operator is', () => {
    const p = parsePolicy('x = 1\nmain = rule {\n  a.b  or f(c)\n}');
    const main = p.body[1];
    expect(main).toMatchObject({ kind: 'Assign', pos: { line: 2, column: 1 } });
    const rule = (main as { value: Expr }).value;
    expect(rule).toMatchObject({
      kind: 'Rule',
      pos: { line: 2, column: 8 },
      body: {
        kind: 'Binary',
        pos: { line: 3, column: 3 },
        opPos: { line: 3, column: 8 },
        left: { kind: 'Selector', pos: { line: 3, column: 3 } },
        right: { kind: 'Call', pos: { line: 3, column: 11 }, args: [{ kind: 'Ident', pos: { line: 3, column: 13 } }] },
      },
    });
  });
});

// ---- Statements and programs -----------------------------------------------------------------

describe('Sentinel statements and programs', () => {
  it.each<[string, string]>([
    // Imports and params.
    ['import "time"', '(import "time")'],
    ['import "math" as m', '(import "math" m)'],
    ['import "tfplan/v2" as tfplan\nimport `strings`', '(import "tfplan/v2" tfplan) (import "strings")'],
    ['// leading comment\nimport "a"\n\nimport "b"; import "c"', '(import "a") (import "b") (import "c")'],
    ['param foo', '(param foo)'],
    ['param bar default 42', '(param bar 42)'],
    ['param n default -1.5', '(param n (- f1.5))'],
    ['param l default ["a", 1, true, +2]', '(param l (list "a" 1 true (+ 2)))'],
    ['param m default {"a": [1], "b": {"c": false}}', '(param m (map ("a" (list 1)) ("b" (map ("c" false)))))'],
    ['import "time"\nparam p\nparam q default "x"\nmain = rule { p }', '(import "time") (param p) (param q "x") (= main (rule p))'],
    // Assignments.
    ['a = 1', '(= a 1)'],
    ['a += 1', '(+= a 1)'],
    ['a -= 1', '(-= a 1)'],
    ['a *= 12', '(*= a 12)'],
    ['a /= 2', '(/= a 2)'],
    ['a %= 2', '(%= a 2)'],
    ['b[12] = 42', '(= (index b 12) 42)'],
    ['c["key"] = "value"', '(= (index c "key") "value")'],
    ['b[1][2] += 8', '(+= (index (index b 1) 2) 8)'],
    ['a = 1; b = 2', '(= a 1) (= b 2)'],
    [';;a = 1;;\n;b = 2;', '(= a 1) (= b 2)'],
    ['x = "hi"\nx = x + ", " + y\nx += " and good bye"', '(= x "hi") (= x (+ (+ x ", ") y)) (+= x " and good bye")'],
    // Calls as statements.
    ['print("hello", 42)', '(call print "hello" 42)'],
    ['append(x, 1)\ndelete(m, "a")', '(call append x 1) (call delete m "a")'],
    ['strings.split(s, ",")', '(call (. strings split) s ",")'],
    // Named functions.
    ['func sum(a, b) {\n  return a + b\n}', '(funcdecl sum (a b) {(return (+ a b))})'],
    ['func f() { return undefined }', '(funcdecl f () {(return undefined)})'],
    ['func makeAdder(a) {\n  return func(b) {\n    return a + b\n  }\n}', '(funcdecl makeAdder (a) {(return (func (b) {(return (+ a b))}))})'],
    // If statements.
    ['f = func() { if x { return 1 }\nreturn 2 }', '(= f (func () {(if x {(return 1)}); (return 2)}))'],
    ['if x < y {\n  a = x\n} else if x > z {\n  a = z\n} else {\n  a = y\n}',
      '(if (< x y) {(= a x)} else (if (> x z) {(= a z)} else {(= a y)}))'],
    ['if a { } else { }', '(if a {} else {})'],
    ['if x in {"a": 1} { y = 1 }', '(if (in x (map ("a" 1))) {(= y 1)})'],
    // For statements, break and continue.
    ['for [1, 2, 3] as v { count += v }', '(for (list 1 2 3) (v) {(+= count v)})'],
    ['for [1, 2, 3] as idx, v {\n  if idx > 1 { count += v }\n}', '(for (list 1 2 3) (idx v) {(if (> idx 1) {(+= count v)})})'],
    ['for data as k { count += data[k] }', '(for data (k) {(+= count (index data k))})'],
    ['for [1, 2, 3] as v {\n  if v == 2 {\n    continue\n  }\n  print(v)\n  break\n}',
      '(for (list 1 2 3) (v) {(if (== v 2) {(continue)}); (call print v); (break)})'],
    ['for xs as x { for x as y { break }\ncontinue }', '(for xs (x) {(for x (y) {(break)}); (continue)})'],
    // Case statements.
    ['f = func() {\ncase x {\nwhen y, z:\n  return true\nelse:\n  return false\n}\n}',
      '(= f (func () {(case x (when (y z) (return true)) (else (return false)))}))'],
    ['f = func() {\ncase {\nwhen x > 42:\n  return true\nelse:\n  return false\n}\n}',
      '(= f (func () {(case _ (when ((> x 42)) (return true)) (else (return false)))}))'],
    ['case x { when 1: a = 1; b = 2 when 2: a = 3 }', '(case x (when (1) (= a 1); (= b 2)) (when (2) (= a 3)))'],
    ['case x { when 1: a = b else: a = c }', '(case x (when (1) (= a b)) (else (= a c)))'],
    ['case x { else: a = 1\nwhen 2:\n}', '(case x (else (= a 1)) (when (2) ))'],
    ['case x {}', '(case x)'],
    ['case x + 1 {\n  when 2, 3,\n    4:\n    a = 1\n}', '(case (+ x 1) (when (2 3 4) (= a 1)))'],
    ['for xs as x { case x { when 1: break } }', '(for xs (x) {(case x (when (1) (break)))})'],
    // Rules and main.
    ['main = rule { true }', '(= main (rule true))'],
    ['r1 = rule { a }\nr2 = rule { b }\nmain = rule { r1 and r2 }', '(= r1 (rule a)) (= r2 (rule b)) (= main (rule (and r1 r2)))'],
    ['main = rule when precond {\n  false\n}', '(= main (rule (when precond) false))'],
    // Layout: comments anywhere, CRLF, blank lines, no trailing newline.
    ['# one\n// two\n/* three */\na = 1 # four\n\n\nb = /* five */ 2', '(= a 1) (= b 2)'],
    ['a = 1\r\nb = 2\r\n', '(= a 1) (= b 2)'],
    ['', ''],
    ['\n\n# only a comment\n', ''],
  ])('%j', (src, want) => {
    expect(sxProgram(parsePolicy(src))).toBe(want);
  });
});

// ---- The reference's example policies (§6.4), written as Sentinel -------------------------------

describe('Sentinel example policies', () => {
  const loginGuard = `
import "sockaddr"
import "mfa"
import "strings"

# Logins must come from the internal network.
cidrcheck = rule {
    sockaddr.is_contained(request.connection.remote_addr, "10.20.0.0/16")
}

# And the named MFA method must have been validated.
ping_valid = rule {
    mfa.methods.ping.valid
}

main = rule when strings.has_prefix(request.path, "auth/ldap/login") {
    ping_valid and cidrcheck
}
`;

  const identityAllowList = `
main = rule {
    identity.entity.name is "jeff" or
    identity.entity.id is "fe2a5bfd-c483-9263-b0d4-f9d345efdf9f" or
    "sysops" in identity.groups.names or
    "14c0940a-5c07-4b97-81ec-0d423accb8e0" in keys(identity.groups.by_id)
}
`;

  const breakGlass = `
import "time"

# Tokens created before the cutoff are refused everywhere (an EGP on "*").
main = rule when not request.unauthenticated {
    time.load(token.creation_time).unix >
      time.load("2017-09-17T13:25:29Z").unix
}
`;

  const delegatedEgp = `
import "strings"

# Only creating or updating an EGP is governed here.
precond = rule {
    request.operation in ["create", "update"] and
    strings.has_prefix(request.path, "sys/policies/egp/")
}

allowed_prefixes = ["secret/data/team-a/", "secret/metadata/team-a/"]

# Every comma-separated entry of paths, without a leading "/", must be under an allowed prefix.
paths_allowed = func() {
    for strings.split(request.data.paths, ",") as raw {
        p = strings.trim_prefix(strings.trim_space(raw), "/")
        if not any allowed_prefixes as prefix { strings.has_prefix(p, prefix) } {
            return false
        }
    }
    return true
}

main = rule when precond {
    strings.has_prefix(request.path, "sys/policies/egp/team-a-") and
    paths_allowed()
}
`;

  const denyByOrg = `
precond = rule {
    identity.entity.metadata.org_id is "zyx321"
}

# Hard-mandatory: entities of that organisation are denied on every path.
main = rule when precond {
    false
}
`;

  it.each<[string, string, string]>([
    ['login guard', loginGuard,
      '(import "sockaddr") (import "mfa") (import "strings") '
      + '(= cidrcheck (rule (call (. sockaddr is_contained) (. (. request connection) remote_addr) "10.20.0.0/16"))) '
      + '(= ping_valid (rule (. (. (. mfa methods) ping) valid))) '
      + '(= main (rule (when (call (. strings has_prefix) (. request path) "auth/ldap/login")) (and ping_valid cidrcheck)))'],
    ['identity allow-list', identityAllowList,
      '(= main (rule (or (or (or (is (. (. identity entity) name) "jeff") (is (. (. identity entity) id) "fe2a5bfd-c483-9263-b0d4-f9d345efdf9f")) '
      + '(in "sysops" (. (. identity groups) names))) (in "14c0940a-5c07-4b97-81ec-0d423accb8e0" (call keys (. (. identity groups) by_id))))))'],
    ['break-glass cutoff', breakGlass,
      '(import "time") (= main (rule (when (not (. request unauthenticated))) '
      + '(> (. (call (. time load) (. token creation_time)) unix) (. (call (. time load) "2017-09-17T13:25:29Z") unix))))'],
    ['delegated EGP management', delegatedEgp,
      '(import "strings") '
      + '(= precond (rule (and (in (. request operation) (list "create" "update")) (call (. strings has_prefix) (. request path) "sys/policies/egp/")))) '
      + '(= allowed_prefixes (list "secret/data/team-a/" "secret/metadata/team-a/")) '
      + '(= paths_allowed (func () {(for (call (. strings split) (. (. request data) paths) ",") (raw) {'
      + '(= p (call (. strings trim_prefix) (call (. strings trim_space) raw) "/")); '
      + '(if (not (any allowed_prefixes (prefix) (call (. strings has_prefix) p prefix))) {(return false)})}); (return true)})) '
      + '(= main (rule (when precond) (and (call (. strings has_prefix) (. request path) "sys/policies/egp/team-a-") (call paths_allowed))))'],
    ['deny by entity metadata', denyByOrg,
      '(= precond (rule (is (. (. (. identity entity) metadata) org_id) "zyx321"))) (= main (rule (when precond) false))'],
  ])('%s', (_name, src, want) => {
    expect(sxProgram(parsePolicy(src))).toBe(want);
  });
});

// ---- Errors ----------------------------------------------------------------------------------

describe('Sentinel syntax errors', () => {
  it('names the file, place, expectation and finding in its message', () => {
    const e = syntaxError('import "strings"\n\nm = rule { a when b }');
    expect(e).toBeInstanceOf(SentinelSyntaxError);
    expect(e.name).toBe('SentinelSyntaxError');
    expect(e.message).toBe('policy.sentinel:3:14: expected "}", found "when"');
    expect([e.line, e.column, e.expected, e.found]).toEqual([3, 14, '"}"', '"when"']);
    let other: unknown;
    try {
      parsePolicy('x =', 'egp/team.sentinel');
    } catch (err) {
      other = err;
    }
    expect((other as Error).message).toBe('egp/team.sentinel:1:4: expected expression, found end of input');
  });

  it.each<[string, number, number, string, string, string?]>([
    // [source, line, column, expected, found, message detail when it replaces "expected …, found …"]
    ['main = rule { a when b }', 1, 17, '"}"', '"when"'],
    ['x = ', 1, 5, 'expression', 'end of input'],
    ['x = 1 +\n', 2, 1, 'expression', 'end of input'],
    ['x = (1 + 2', 1, 11, '")"', 'end of input'],
    ['x = (1 + 2\ny = 3', 1, 11, '")"', 'newline'],
    ['x = [1, 2', 1, 10, '"," or "]"', 'end of input'],
    ['x = [1 2]', 1, 8, '"," or "]"', '"2"'],
    ['x = {"a" 1}', 1, 10, '":"', '"1"'],
    ['x = {"a": 1 "b": 2}', 1, 13, '"," or "}"', 'string "b"'],
    ['x = f(1 2)', 1, 9, '"," or ")"', '"2"'],
    ['x = a.', 1, 7, 'field name after "."', 'end of input'],
    ['x = a.(b)', 1, 7, 'field name after "."', '"("'],
    ['x = a[]', 1, 7, 'expression', '"]"'],
    ['x = a[1 2]', 1, 9, '"]" or ":"', '"2"'],
    ['x = a[1:2:3]', 1, 10, '"]"', '":"'],
    ['x = 1 2', 1, 7, 'newline or ";"', '"2"'],
    ['x = 1 `two\nlines`', 1, 7, 'newline or ";"', 'string "two\\nlines"'],
    ['x = 1 "a very long string that goes on"', 1, 7, 'newline or ";"', 'string "a very long string t…"'],
    ['x = 1; ;y z', 1, 11, 'assignment', '"z"'],
    ['x = a.1', 1, 6, 'newline or ";"', '".1"'],
    ['x', 1, 2, 'assignment', 'end of input'],
    ['1 + 2\ny = 1', 1, 6, 'assignment', 'newline'],
    ['x == 1', 1, 7, 'assignment', 'end of input'],
    ['main = rule { a }\nrule { b }', 2, 11, 'assignment', 'end of input'],
    ['a.b = 1', 1, 1, 'a name or index expression to assign to', '"a"', 'cannot assign to a selector (write x["key"] instead)'],
    ['f() = 1', 1, 1, 'a name or index expression to assign to', '"f"', 'cannot assign to this expression'],
    ['a[1:2] = 1', 1, 1, 'a name or index expression to assign to', '"a"', 'cannot assign to this expression'],
    ['true = 1', 1, 1, 'a name or index expression to assign to', '"true"', 'cannot assign to this expression'],
    ['a = b = c', 1, 7, 'newline or ";"', '"="'],
    ['if x { y = 1 } else z = 2', 1, 21, '"{"', '"z"'],
    ['if x y = 1', 1, 6, '"{"', '"y"'],
    ['if x {\n}\nelse { }', 3, 1, 'expression', '"else"'],
    ['for xs { }', 1, 8, '"as"', '"{"'],
    ['for xs as { }', 1, 11, 'identifier', '"{"'],
    ['for xs as true { }', 1, 11, 'identifier', '"true"'],
    ['for xs as a, { }', 1, 14, 'identifier', '"{"'],
    ['for xs as a b { }', 1, 13, '"{"', '"b"'],
    ['x = all xs as x x', 1, 17, '"{"', '"x"'],
    ['x = all xs { x }', 1, 12, '"as"', '"{"'],
    ['x = any xs as x { }', 1, 19, 'expression', '"}"'],
    ['x = rule a', 1, 10, '"{"', '"a"'],
    ['x = rule { }', 1, 12, 'expression', '"}"'],
    ['x = rule when { a }', 1, 19, '":"', '"}"'],
    ['m = rule {\n  a\n  and b\n}', 2, 4, '"}"', 'newline'],
    ['break', 1, 1, 'statement', '"break"', '"break" outside a for loop'],
    ['f = func() { continue }', 1, 14, 'statement', '"continue"', '"continue" outside a for loop'],
    ['for xs as x { f = func() { break } }', 1, 28, 'statement', '"break"', '"break" outside a for loop'],
    ['return 1', 1, 1, 'statement', '"return"', '"return" outside a function'],
    ['f = func() { return }', 1, 21, 'expression', '"}"'],
    ['f = func() { return\n1 }', 1, 20, 'expression', 'newline'],
    ['if x { func f() { return 1 } }', 1, 8, 'statement', '"func"', 'named functions can only be declared at the top level'],
    ['func f(a, a) { return a }', 1, 11, 'a new parameter name', '"a"', 'duplicate parameter "a"'],
    ['func f(a b) { return a }', 1, 10, '"," or ")"', '"b"'],
    ['func (a) { return a }', 1, 22, 'assignment', 'end of input'],
    ['x = 1\nimport "a"', 2, 1, 'statement', '"import"', 'imports must come before all params and statements'],
    ['param a\nimport "b"', 2, 1, 'statement', '"import"', 'imports must come before all params and statements'],
    ['x = 1\nparam a', 2, 1, 'statement', '"param"', 'params must come after imports and before all statements'],
    ['import strings', 1, 8, 'import name (a string)', '"strings"'],
    ['import "a" as', 1, 14, 'identifier', 'end of input'],
    ['import "a" b', 1, 12, 'newline or ";"', '"b"'],
    ['param', 1, 6, 'identifier', 'end of input'],
    ['param undefined', 1, 7, 'identifier', '"undefined"'],
    ['param p default x', 1, 17, 'a literal default (string, number, boolean, or a list or map of them)', '"x"', 'a param default must be a literal'],
    ['param p default 1 + 2', 1, 17, 'a literal default (string, number, boolean, or a list or map of them)', '"1"', 'a param default must be a literal'],
    ['param p default [null]', 1, 17, 'a literal default (string, number, boolean, or a list or map of them)', '"["', 'a param default must be a literal'],
    ['param p default', 1, 16, 'expression', 'end of input'],
    ['case x { y }', 1, 10, '"when", "else" or "}"', '"y"'],
    ['case x { when 1 y = 2 }', 1, 17, '"," or ":"', '"y"'],
    ['case x { else a = 1 }', 1, 15, '":"', '"a"'],
    ['case x { else: a = 1 else: b = 2 }', 1, 22, '"when" or "}"', '"else"', 'a case statement can have only one else clause'],
    ['case x\n{ }', 1, 7, '"{"', 'newline'],
    ['x = a not b', 1, 11, '"in", "contains" or "matches" after "not"', '"b"'],
    ['x = a is', 1, 9, 'expression', 'end of input'],
    ['x = a is not', 1, 13, 'expression', 'end of input'],
    ['x = not', 1, 8, 'expression', 'end of input'],
    // Lexical errors.
    ['x = "abc', 1, 9, `'"' closing the string`, 'end of input'],
    ['x = "ab\nc"', 1, 8, `'"' closing the string`, 'newline'],
    ['x = "\\q"', 1, 6, 'escape sequence', '"\\\\q"'],
    ['x = "\\x4"', 1, 9, 'hexadecimal digit', '"\\""'],
    ['x = "\\u12"', 1, 10, 'hexadecimal digit', '"\\""'],
    ['x = "\\uD800"', 1, 6, 'a valid Unicode code point', '"\\\\uD800"'],
    ['x = "\\U00110000"', 1, 6, 'a valid Unicode code point', '"\\\\U00110000"'],
    ['x = "\\400"', 1, 6, 'octal escape of at most \\377', '"\\\\400"'],
    ['x = "\\18"', 1, 8, 'octal digit', '"8"'],
    ['x = `abc', 1, 9, "'`' closing the raw string", 'end of input'],
    ['x = 0x', 1, 7, 'hexadecimal digit', 'end of input'],
    ['x = 089', 1, 6, 'octal digit', '"8"'],
    ['x = 1e', 1, 7, 'exponent digits', 'end of input'],
    ['x = 1.5e+', 1, 10, 'exponent digits', 'end of input'],
    ['a = 1\n/* open', 2, 1, '"*/" closing the comment', 'end of input'],
    ['x = 1 @ 2', 1, 7, 'a token', '"@"', 'unexpected character "@"'],
    ['x = "日本語" @', 1, 11, 'a token', '"@"', 'unexpected character "@"'],
    ['x = "𝒳" $', 1, 9, 'a token', '"$"', 'unexpected character "$"'],
    ['x = 1 &&  2', 1, 7, 'a token', '"&"', 'unexpected character "&"'],
    ['x = \u00a0 1', 1, 5, 'a token', '"\u00a0"', 'unexpected character "\u00a0"'],
  ])('%j', (src, line, column, expected, found, detail) => {
    const e = syntaxError(src);
    expect({ line: e.line, column: e.column, expected: e.expected, found: e.found }).toEqual({ line, column, expected, found });
    expect(e.message).toBe(`policy.sentinel:${line}:${column}: ${detail ?? `expected ${expected}, found ${found}`}`);
  });
});

// ---- Limits ----------------------------------------------------------------------------------

describe('Sentinel parser limits', () => {
  it('refuses nesting deeper than the limit with a clear error, whatever nests', () => {
    const cases = [
      `x = ${'('.repeat(100_000)}`,
      `x = ${'['.repeat(5000)}`,
      `x = ${'-'.repeat(5000)}1`,
      `x = ${'not '.repeat(5000)}true`,
      `x = ${'f('.repeat(5000)}`,
      `x = ${'{"a": '.repeat(5000)}`,
      `x = ${'rule { '.repeat(5000)}`,
      `x = ${'all xs as x { '.repeat(5000)}`,
      `f = func() { ${'if x { '.repeat(5000)}`,
      `f = func() { ${'case x { when 1: '.repeat(5000)}`,
      `f = func() { if a {} ${'else if b {} '.repeat(5000)} return 1 }`,
    ];
    for (const src of cases) {
      const e = syntaxError(src);
      expect(e.message, src.slice(0, 30)).toMatch(new RegExp(`^policy\\.sentinel:1:\\d+: nesting deeper than ${MAX_NESTING} levels$`));
    }
    // The limit sits where it says: the 99th "(" of the value is the 101st level.
    expect(syntaxError(`x = ${'('.repeat(200)}`).column).toBe(104);
    const ok = `x = ${'('.repeat(90)}1${')'.repeat(90)}`;
    expect(expr(ok.slice(4))).toBe('1');
  });

  it('refuses chains that would make the tree deeper than its bound', () => {
    for (const src of [`x = ${'a + '.repeat(5000)}a`, `x = a${'.b'.repeat(5000)}`, `x = f${'()'.repeat(5000)}`]) {
      expect(syntaxError(src).message).toMatch(/^policy\.sentinel:1:\d+: expression nested deeper than 1000 levels$/);
    }
    expect(() => parsePolicy(`x = ${'a or '.repeat(500)}a`)).not.toThrow();
  });

  it('parses large flat policies in linear time', () => {
    const big = [
      `allowed = [${'"x",'.repeat(100_000)}]`,
      ...Array.from({ length: 20_000 }, (_, i) => `r${i} = rule { a.b[${i}] is "v" or c }`),
      'main = rule { r0 }',
    ].join('\n');
    const started = Date.now();
    const p = parsePolicy(big);
    expect(p.body).toHaveLength(20_002);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

// ---- Generated checks ------------------------------------------------------------------------

/** mulberry32: a small seeded PRNG, so failures reproduce. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('Sentinel precedence, property-checked', () => {
  const LEVELS: [number, string[]][] = [
    [1, ['or', 'xor']],
    [2, ['and']],
    [3, ['==', '!=', '<', '<=', '>', '>=', 'is', 'is not', 'in', 'not in', 'contains', 'not contains', 'matches', 'not matches']],
    [4, ['else']],
    [5, ['+', '-']],
    [6, ['*', '/', '%']],
  ];
  const ATOMS: [string, string][] = [['a', 'a'], ['b', 'b'], ['1', '1'], ['"s"', '"s"'], ['x.y', '(. x y)'], ['f(a)', '(call f a)'], ['[1]', '(list 1)'], ['m["k"]', '(index m "k")']];
  const UNARY = ['not', '!', '-', '+'];
  const POSTFIX: [string, string][] = [['is empty', 'is_empty'], ['is not empty', 'is_not_empty'], ['is defined', 'is_defined'], ['is not defined', 'is_not_defined']];

  interface Gen { src: string; tree: string; prec: number }
  const ATOM_PREC = 99;

  function gen(rand: () => number, depth: number): Gen {
    const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
    const r = rand();
    if (depth === 0 || r < 0.25) {
      const [src, tree] = pick(ATOMS);
      return { src, tree, prec: ATOM_PREC };
    }
    if (r < 0.35) {
      const op = pick(UNARY);
      const inner = gen(rand, depth - 1);
      const src = inner.prec === ATOM_PREC ? inner.src : `(${inner.src})`;
      return { src: `${op} ${src}`, tree: `(${op} ${inner.tree})`, prec: ATOM_PREC };
    }
    if (r < 0.42) {
      const [text, name] = pick(POSTFIX);
      const inner = gen(rand, depth - 1);
      const src = inner.prec >= 3 ? inner.src : `(${inner.src})`;
      return { src: `${src} ${text}`, tree: `(${name} ${inner.tree})`, prec: 3 };
    }
    const [prec, ops] = pick(LEVELS);
    const op = pick(ops);
    const left = gen(rand, depth - 1);
    const right = gen(rand, depth - 1);
    // Left-associative: a left operand at the same level needs no parentheses; a right one does.
    const l = left.prec >= prec ? left.src : `(${left.src})`;
    // `a is not b` is the `is not` operator, so `is` followed by a unary `not` needs parentheses.
    const rs = right.prec > prec && !(op === 'is' && right.src.startsWith('not ')) ? right.src : `(${right.src})`;
    return { src: `${l} ${op} ${rs}`, tree: `(${word(op)} ${left.tree} ${right.tree})`, prec };
  }

  it('parses 1,000 random expressions, written with the fewest parentheses, into the intended trees', () => {
    const rand = prng(0x5e17e1);
    for (let i = 0; i < 1000; i++) {
      const g = gen(rand, 5);
      expect(expr(g.src), g.src).toBe(g.tree);
    }
  });
});

describe('Sentinel parser fuzzing', () => {
  const VOCAB = [
    'import', 'param', 'default', 'as', 'rule', 'when', 'func', 'return', 'if', 'else', 'for', 'case', 'break', 'continue',
    'all', 'any', 'filter', 'map', 'and', 'or', 'xor', 'not', 'in', 'is', 'contains', 'matches', 'empty', 'defined',
    'true', 'false', 'null', 'undefined', 'main', 'x', 'y', 'αβ', '_', '0', '42', '0x1F', '0777', '09', '1.5', '.5e3', '1e',
    '"s"', '"\\n"', '"\\u00e9"', '"\\x', '"unterminated', '`raw`', '`', '"\\q"',
    '+', '-', '*', '/', '%', '+=', '-=', '*=', '/=', '%=', '==', '!=', '<', '<=', '>', '>=', '=', '!',
    '(', ')', '[', ']', '{', '}', ',', '.', ':', ';', '\n', '\n', ' ', '\t', '# c\n', '// c\n', '/* c */', '/*\n*/', '/*',
    '@', '$', '\\', '\u00a0', '\uFEFF', '\uD800', '😀', '\r\n',
  ];

  const CORPUS = [
    'import "strings"\nparam p default ["a"]\nmain = rule when strings.has_prefix(request.path, "x") { a and b }',
    'f = func(a, b) {\n  for a as k, v {\n    if v > 1 { continue } else if v { break } else { x += 1 }\n  }\n  return b\n}',
    'func g(x) {\n  case x {\n  when 1, 2:\n    return "low"\n  else:\n    return x[1:] else ""\n  }\n}',
    'main = rule {\n  all xs as x { x is not empty } and\n  any m as k, v { v matches "^a" } or\n  length(filter xs as x { x in ["a", "b"] }) > 0\n}',
    'v = map [1, 2] as _, id { { "id": id, "n": -id * 2 % 3 } }\nr = rule { v[0]["id"] not in [1] }',
    'x = {"a": [1, 2.5, `raw`], "b": {"c": null, "d": undefined}}\nprint(x.a[0], x["b"].c is defined)',
  ];

  function isSyntaxErrorWithValidPlace(src: string, e: unknown): boolean {
    if (!(e instanceof SentinelSyntaxError)) return false;
    if (e.message.includes('internal parser error')) return false;
    if (!e.message.startsWith(`policy.sentinel:${e.line}:${e.column}: `)) return false;
    // The place must exist in the text (or be just past the end of its line).
    const lines = src.split('\n');
    if (e.line < 1 || e.line > lines.length || e.column < 1) return false;
    return e.column <= [...lines[e.line - 1]].length + 1;
  }

  function check(src: string): 'ok' | 'error' {
    try {
      parsePolicy(src);
      return 'ok';
    } catch (e) {
      if (!isSyntaxErrorWithValidPlace(src, e)) {
        throw new Error(`bad failure for ${JSON.stringify(src)}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
      }
      return 'error';
    }
  }

  it('parses every corpus policy (the mutations start from valid text)', () => {
    for (const src of CORPUS) expect(check(src), src).toBe('ok');
  });

  it('fails only with a placed SentinelSyntaxError on 4,000 random and mutated policies', () => {
    const rand = prng(0xc0ffee);
    const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)];
    const int = (n: number) => Math.floor(rand() * n);
    const outcomes = { ok: 0, error: 0 };
    const started = Date.now();

    // 1,500 token soups.
    for (let i = 0; i < 1500; i++) {
      const n = int(40);
      let src = '';
      for (let k = 0; k < n; k++) src += pick(VOCAB) + (rand() < 0.6 ? ' ' : '');
      outcomes[check(src)]++;
    }
    // 2,000 mutations of valid policies.
    for (let i = 0; i < 2000; i++) {
      let src = pick(CORPUS);
      const edits = 1 + int(4);
      for (let k = 0; k < edits; k++) {
        const at = int(src.length + 1);
        switch (int(6)) {
          case 0: src = src.slice(0, at) + src.slice(at + 1 + int(8)); break;
          case 1: src = src.slice(0, at) + pick(VOCAB) + src.slice(at); break;
          case 2: src = src.slice(0, at) + src.slice(int(src.length), int(src.length) + int(20)) + src.slice(at); break;
          case 3: src = src.slice(0, at); break;
          case 4: src = src.slice(0, at) + String.fromCharCode(int(0x3000)) + src.slice(at + 1); break;
          default: src = src.slice(0, at) + pick(['(', '[', '{', ')', ']', '}', '\n', '"', '`', ',']) + src.slice(at); break;
        }
      }
      outcomes[check(src)]++;
    }
    // 400 strings of random UTF-16 code units (lone surrogates included).
    for (let i = 0; i < 400; i++) {
      const n = int(60);
      let src = '';
      for (let k = 0; k < n; k++) src += String.fromCharCode(rand() < 0.7 ? 32 + int(95) : int(0x10000));
      outcomes[check(src)]++;
    }
    // 100 deeply nested openers and chains, mixed.
    for (let i = 0; i < 100; i++) {
      const unit = pick(['(', '[', '{"k": ', '-', 'not ', 'f(', 'a.', 'a + ', 'rule { ', 'all x as y { ', 'if x { ', 'x else ']);
      const src = `x = ${unit.repeat(50 + int(3000))}${pick(['', 'a', ')', ']'])}`;
      outcomes[check(src)]++;
    }

    expect(outcomes.ok + outcomes.error).toBe(4000);
    // The corpus mutations keep some inputs valid, so both outcomes are exercised.
    expect(outcomes.ok).toBeGreaterThan(50);
    expect(outcomes.error).toBeGreaterThan(2000);
    expect(Date.now() - started).toBeLessThan(15_000);
  });
});
