import { describe, expect, it } from 'vitest';
import { PolicyError } from '../../../../src/core/acl/errors';
import { HclObject, parseHcl, type HclValue } from '../../../../src/core/acl/hcl';

/** The tree as plain data: objects become { key: value } (labels joined into the key). */
function plain(v: HclValue): unknown {
  if (Array.isArray(v)) return v.map(plain);
  if (v instanceof HclObject) {
    return v.items.map((it) => [[it.key, ...it.labels].join(' '), plain(it.value)]);
  }
  return v;
}

const parse = (src: string): unknown => plain(parseHcl(src));

describe('HCL parser: syntax features', () => {
  it.each<[string, string, unknown]>([
    ['attribute with =', 'a = "x"', [['a', 'x']]],
    ['attribute with :', 'a: "x"', [['a', 'x']]],
    ['quoted key', '"a b" = 1', [['a b', 1]]],
    ['identifier with dots and dashes', 'a.b-c_d = true', [['a.b-c_d', true]]],
    ['booleans', 'a = true\nb = false', [['a', true], ['b', false]]],
    ['integers, negatives and floats', 'a = 3600\nb = -2\nc = 1.5\nd = 1e3', [['a', 3600], ['b', -2], ['c', 1.5], ['d', 1000]]],
    ['empty list', 'a = []', [['a', []]]],
    ['list with trailing comma', 'a = ["x", "y",]', [['a', ['x', 'y']]]],
    ['multi-line list', 'a = [\n  "x",\n  "y"\n]', [['a', ['x', 'y']]]],
    ['mixed list values', 'a = ["x", 1, true, ["n"]]', [['a', ['x', 1, true, ['n']]]]],
    ['labelled block', 'path "secret/*" { c = ["read"] }', [['path secret/*', [['c', ['read']]]]]],
    ['block without label', 'b { c = 1 }', [['b', [['c', 1]]]]],
    ['two labels', 'f "a" "b" { }', [['f a b', []]]],
    ['object value', 'o = { k = ["v"] }', [['o', [['k', ['v']]]]]],
    ['object with quoted keys and colons', 'o = { "*": [], "k": ["v"] }', [['o', [['*', []], ['k', ['v']]]]]],
    ['object items separated by commas', 'o = { a = 1, b = 2, }', [['o', [['a', 1], ['b', 2]]]]],
    ['object items separated by newlines', 'o = {\n a = 1\n b = 2\n}', [['o', [['a', 1], ['b', 2]]]]],
    ['nested block inside object', 'o = { f "x" { g = 1 } }', [['o', [['f x', [['g', 1]]]]]]],
    ['repeated keys are kept in order', 'p "a" {}\np "a" {}', [['p a', []], ['p a', []]]],
    ['hash comment', '# c\na = 1 # trailing', [['a', 1]]],
    ['slash comment', '// c\na = 1 // trailing', [['a', 1]]],
    ['block comment', '/* a = 2\n b */ a = 1 /* x */', [['a', 1]]],
    ['comment markers inside strings are text', 'a = "# // /* */"', [['a', '# // /* */']]],
    ['empty document', '', []],
    ['only comments', '# nothing\n/* here */', []],
    ['CRLF line endings', 'a = 1\r\nb = 2\r\n', [['a', 1], ['b', 2]]],
    ['interpolation is literal', 'a = "${x}"', [['a', '${x}']]],
  ])('%s', (_name, src, expected) => {
    expect(parse(src)).toEqual(expected);
  });

  it.each<[string, string]>([
    ['"a\\"b"', 'a"b'],
    ['"a\\\\b"', 'a\\b'],
    ['"a\\nb"', 'a\nb'],
    ['"a\\tb"', 'a\tb'],
    ['"a\\rb"', 'a\rb'],
    ['"a\\/b"', 'a/b'],
    ['"\\u00e9"', 'é'],
    ['"\\U0001F600"', '😀'],
    ['"ünïcode"', 'ünïcode'],
  ])('string escape %s', (literal, expected) => {
    expect(parse(`a = ${literal}`)).toEqual([['a', expected]]);
  });

  it('records the line of each item', () => {
    const doc = parseHcl('# one\n\npath "a" {\n  capabilities = ["read"]\n}\n/* x\n y */ name = "n"');
    expect(doc.items.map((i) => i.line)).toEqual([3, 7]);
    expect((doc.items[0].value as HclObject).items[0].line).toBe(4);
  });
});

describe('HCL parser: errors carry line numbers', () => {
  it.each<[string, string, string]>([
    ['missing =', 'path "a" {\n\n  capabilities ["read"]\n}', 'line 3: expected "=" after "capabilities"'],
    ['missing value', 'a =', 'line 1: expected a value after "a =", found end of input'],
    ['bare word value', 'a = read', 'line 1: expected a value after "a =", found "read" (strings must be double-quoted)'],
    ['unquoted duration', 'a = 1h', 'line 1: invalid number "1h" (durations and other text must be quoted)'],
    ['lone minus', 'a = -', 'line 1: invalid number "-" (durations and other text must be quoted)'],
    ['unterminated string', 'a = "abc', 'line 1: unterminated string'],
    ['string across lines', 'a = "ab\ncd"', 'line 1: unterminated string (a string cannot span lines)'],
    ['bad escape', 'a = "\\q"', 'line 1: invalid escape sequence "\\q" in string'],
    ['short unicode escape', 'a = "\\u12"', 'line 1: invalid escape sequence "\\u12" in string'],
    ['code point out of range', 'a = "\\U00110000"', 'line 1: invalid escape sequence "\\U00110000" in string'],
    ['unclosed block', 'path "a" {\n  c = 1\n', 'line 3: unclosed "{" opened on line 1'],
    ['stray closing brace', 'a = 1\n}', 'line 2: unexpected "}"'],
    ['unclosed list', 'a = ["x",\n', 'line 2: unclosed "[" opened on line 1'],
    ['missing comma in list', 'a = [\n"x"\n"y"]', 'line 3: expected "," or "]" after a list element, found string "y"'],
    ['label without block', 'path "a" = {}', 'line 1: expected "{" after path "a", found "="'],
    ['key expected', '= 1', 'line 1: expected a key, found "="'],
    ['list as key', '[1] = 2', 'line 1: expected a key, found "["'],
    ['unexpected character', 'a = 1\n  @', 'line 2: unexpected character "@"'],
    ['unterminated block comment', 'a = 1\n/* never closed', 'line 2: unterminated "/*" comment'],
    ['error line after a block comment', '/*\n\n*/ a b', 'line 3: expected "=" after "a"'],
    ['heredocs are not supported', 'a = <<EOF\nx\nEOF', 'line 1: unexpected character "<"'],
  ])('%s', (_name, src, message) => {
    let caught: unknown;
    try {
      parseHcl(src);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(PolicyError);
    expect((caught as Error).message).toBe(message);
  });

  it('refuses absurd nesting without overflowing the stack', () => {
    expect(() => parseHcl(`a = ${'['.repeat(10_000)}`)).toThrow(/nesting too deep/);
    expect(() => parseHcl(`${'a {'.repeat(10_000)}`)).toThrow(/nesting too deep/);
  });
});
