// Go's text/template with Vault's template functions. The expected outputs and error messages
// were produced by Go's own text/template (with Vault's functions) on the same templates and data,
// except where a comment says a newer Go release behaves differently.
import { describe, expect, it } from 'vitest';
import { compileTemplate, MAX_TEMPLATE_BYTES, TemplateError } from '../../../src/framework/template';

/** 2024-01-02T15:04:05.123Z, a Tuesday. */
const NOW = new Date(Date.UTC(2024, 0, 2, 15, 4, 5, 123));

const DATA = {
  DisplayName: 'token-alice',
  PolicyName: 'default',
  Type: 'IAM',
  N: 3,
  F: 1.5,
  B: true,
  E: '',
  Z: 0,
  Nil: null,
  L: ['a', 'b', 'c'],
  IL: [3, 1, 2],
  M: { x: 1, y: 'two', z: [1, 2], n: null, l: [1, { k: 'v' }] },
  Empty: [],
  EM: {},
  U: 'héllo wörld',
  S: 'Some string with Multiple Capitals LETTERS',
};

const render = (text: string, data: Record<string, unknown> = DATA): string => compileTemplate(text).render(data, NOW);
const failure = (text: string, data: Record<string, unknown> = DATA): TemplateError => {
  try {
    render(text, data);
  } catch (e) {
    expect(e).toBeInstanceOf(TemplateError);
    return e as TemplateError;
  }
  throw new Error(`expected ${JSON.stringify(text)} to fail`);
};

describe('the API', () => {
  it('compiles once and renders synchronously, any number of times, with its own data and time', () => {
    const t = compileTemplate('{{ .Name }}@{{ unix_time }}');
    expect(t.render({ Name: 'a' }, NOW)).toBe('a@1704207845');
    expect(t.render({ Name: 'b' }, new Date(0))).toBe('b@0');
    expect(t.render({ Name: 'c' })).toMatch(/^c@\d{10}$/);
  });

  it('throws TemplateError, telling parse failures from render failures', () => {
    expect(() => compileTemplate('{{ foo }}')).toThrow(TemplateError);
    expect(failure('{{ foo }}').phase).toBe('parse');
    expect(failure('{{ truncate 0 "x" }}').phase).toBe('execute');
  });

  it('refuses templates of 100,000 bytes or more, as Vault does', () => {
    expect(() => compileTemplate('x'.repeat(MAX_TEMPLATE_BYTES))).toThrow('template too large, length of template must be less than 100,000');
    expect(compileTemplate('x'.repeat(MAX_TEMPLATE_BYTES - 1)).render({})).toHaveLength(MAX_TEMPLATE_BYTES - 1);
  });

  it('renders a missing data map as no value', () => {
    expect(compileTemplate('this is a {{.String}}').render(undefined as unknown as Record<string, unknown>)).toBe('this is a <no value>');
  });
});

describe('text, trim markers and comments', () => {
  it.each([
    ['plain text', 'plain text'],
    ['a {{- " b " -}} c', 'a b c'],
    ['a  {{- /* comment */ -}}  b', 'ab'],
    ['{{/* c */}}x', 'x'],
    ['a{{/* c */ -}}  b', 'ab'],
    ['x {{- 3}}', 'x3'],
    ['{{-3}}', '-3'], // no space after the dash: a negative number, not a trim marker
    ['a\n  {{- .N }}\n  b', 'a3\n  b'],
    ['{{ .N -}}\n\n  z', '3z'],
    ['x\n{{- "\\n" -}}\ny', 'x\ny'],
    ['a {{-\t.N\t-}} b', 'a3b'],
    ['{{  .N  }}', '3'],
    ['{{\n.N\n}}', '3'],
  ])('%j → %j', (text, out) => {
    expect(render(text)).toBe(out);
  });
});

describe('values, fields and variables', () => {
  it.each([
    ['{{ .DisplayName }}', 'token-alice'],
    ['{{ .M.y }}', 'two'],
    ['{{ .M }}', 'map[l:[1 map[k:v]] n:<nil> x:1 y:two z:[1 2]]'],
    ['{{ .L }} {{ .IL }} {{ .Empty }} {{ .EM }}', '[a b c] [3 1 2] [] map[]'],
    ['{{ .F }} {{ .B }} {{ .Z }} {{ .E }}|', '1.5 true 0 |'],
    // Go prints <no value> for a missing key, for a nil, and for fields of either.
    ['{{ .Missing }} {{ .Nil }} {{ .M.missing }} {{ .M.missing.deeper }} {{ .M.n }}', '<no value> <no value> <no value> <no value> <no value>'],
    ['{{ .constructor }} {{ .__proto__ }} {{ .toString }}', '<no value> <no value> <no value>'],
    ['{{ (.M).x }} {{ (.M).missing }} {{ (index .M.l 1).k }}', '1 <no value> v'],
    ['{{ $.N }} {{ $x := 5 }}{{ $x }} {{ $x = 6 }}{{ $x }}', '3 5 6'],
    ['{{ with $x := .M }}{{ $x.x }}{{ end }}', '1'],
    ['{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ $y := 3 }}{{ $y }}{{ end }}{{ $x }}', '32'],
    ['{{ .N | printf "%d" }} {{ .L | printf "%v" }}', '3 [a b c]'],
    ['{{ "a-b-c" | replace "-" "_" | uppercase }}', 'A_B_C'],
    ['{{ .N | }}', '3'], // a trailing | is accepted
    ['{{ index .M "x" | printf "%T" }}', 'int'],
  ])('%j → %j', (text, out) => {
    expect(render(text)).toBe(out);
  });

  it('accepts data in Maps too', () => {
    expect(render('{{ .A.b }}', { A: new Map([['b', 'from a Map']]) })).toBe('from a Map');
  });

  it.each([
    ['{{ "\\x41\\u00e9\\t\\101" }}', 'Aé\tA'],
    ['{{ `raw\\n` }}', 'raw\\n'],
    ["{{ 'a' }} {{ '\\n' }}", '97 10'],
    ['{{ 0x1F }} {{ 0b101 }} {{ 0o17 }} {{ 017 }} {{ 1_000 }} {{ -3 }}', '31 5 15 15 1000 -3'],
    ['{{ 1e3 }} {{ 1.0 }} {{ 1.5e-7 }} {{ 123456789.0 }} {{ 1e21 }}', '1000 1 1.5e-07 1.23456789e+08 1e+21'],
    ['{{ true }} {{ false }}', 'true false'],
    ['{{ eq .Nil nil }} {{ print nil }}', 'true <nil>'],
  ])('literal %j → %j', (text, out) => {
    expect(render(text)).toBe(out);
  });
});

describe('control structures', () => {
  it.each([
    ['{{ if .N }}yes{{ end }}', 'yes'],
    ['{{ if .Z }}yes{{ else }}no{{ end }}', 'no'],
    ['{{ if .E }}a{{ else if .Z }}b{{ else if .B }}c{{ else }}d{{ end }}', 'c'],
    // Go's truth: empty string, 0, false, nil, empty list or map, no value are false.
    ['{{ if .Empty }}a{{ else }}b{{ end }}{{ if .EM }}a{{ else }}b{{ end }}{{ if .Nil }}a{{ else }}b{{ end }}{{ if .Missing }}a{{ else }}b{{ end }}', 'bbbb'],
    ['{{ if .F }}a{{ end }}{{ if .L }}b{{ end }}{{ if .M }}c{{ end }}{{ if .B }}d{{ end }}', 'abcd'],
    ['{{ if $x := .N }}{{ $x }}{{ else }}{{ $x }}{{ end }}', '3'],
    ['{{ with .M }}{{ .y }}{{ end }}', 'two'],
    ['{{ with .E }}x{{ else }}empty{{ end }}', 'empty'],
    ['{{ with .Missing }}x{{ else }}{{ . | printf "%T" }}{{ end }}', 'map[string]interface {}'],
    ['{{ with .E }}a{{ else with .M }}{{ .x }}{{ end }}', '1'], // Go 1.23's {{else with}}
    ['{{ range .L }}[{{ . }}]{{ end }}', '[a][b][c]'],
    ['{{ range $i, $v := .L }}{{ $i }}:{{ $v }} {{ end }}', '0:a 1:b 2:c '],
    ['{{ range $v := .L }}{{ $v }}{{ end }}', 'abc'],
    ['{{ range $k, $v := .M }}{{ $k }}={{ $v }};{{ end }}', 'l=[1 map[k:v]];n=<no value>;x=1;y=two;z=[1 2];'],
    ['{{ range .Empty }}x{{ else }}none{{ end }}{{ range .Missing }}x{{ else }}none{{ end }}', 'nonenone'],
    ['{{ range .L }}{{ if eq . "b" }}{{ break }}{{ end }}{{ . }}{{ end }}', 'a'],
    ['{{ range .L }}{{ if eq . "b" }}{{ continue }}{{ end }}{{ . }}{{ end }}', 'ac'],
    ['{{ $n := 0 }}{{ range .L }}{{ $n = . }}{{ end }}{{ $n }}', 'c'],
    ['{{ $i := 9 }}{{ $v := 9 }}{{ range $i, $v = .L }}{{ end }}{{ $i }}{{ $v }}', '2c'],
    ['{{ range .L }}{{ $.N }}{{ end }}', '333'],
    ['{{ range .M.l }}{{ . }};{{ end }}', '1;map[k:v];'],
    ['{{ range 3 }}{{ . }}{{ end }}{{ range $i := 2 }}{{ $i }}{{ end }}{{ range 0 }}x{{ else }}none{{ end }}', '01201none'], // Go 1.22's range over an int
  ])('%j → %j', (text, out) => {
    expect(render(text)).toBe(out);
  });
});

describe("Go's builtin functions", () => {
  it.each([
    ['{{ and 1 0 2 }} {{ and 1 2 }} {{ or 0 "" "x" }} {{ or 0 "" }}|', '0 2 x |'],
    // and/or stop at the deciding argument: the failing index is never evaluated.
    ['{{ and .Missing (index .Missing 1) }} {{ or 1 (index .Missing 1) }}', '<no value> 1'],
    ['{{ .N | and 1 }} {{ .N | or 0 }} {{ 0 | and 1 }}', '3 3 0'],
    ['{{ not 0 }} {{ not .L }} {{ not .Missing }} {{ .N | not }}', 'true false true false'],
    ['{{ eq 1 1 }} {{ eq "a" "b" }} {{ eq .N 3 }} {{ eq .N 1 2 3 }} {{ eq .F 1.5 }} {{ .N | eq 3 }}', 'true false true true true true'],
    ['{{ eq .Missing .Missing }} {{ eq .Missing "a" }} {{ eq .Nil nil }}', 'true false true'],
    ['{{ ne 1 2 }} {{ lt 1 2 }} {{ le 2 2 }} {{ gt "b" "a" }} {{ ge 1 2 }} {{ lt 1.5 2.5 }}', 'true true true true false true'],
    ['{{ len .L }} {{ len .M }} {{ len "héllo" }} {{ len .Empty }} {{ "abc" | len }}', '3 5 6 0 3'],
    ['{{ index .L 1 }} {{ index .M "y" }} {{ index .M "z" 1 }} {{ index "abc" 1 }} {{ index .L }} {{ index .M "missing" }}', 'b two 2 98 [a b c] <no value>'],
    ['{{ slice .L 1 }} {{ slice .L 1 2 }} {{ slice "abcdef" 2 4 }} {{ slice .L }} {{ slice .L 1 2 3 }}', '[b c] [b] cd [a b c] [b]'],
    ['{{ print "a" "b" 1 2 "c" 3.5 true nil }}', 'ab1 2c3.5 true <nil>'],
    ['{{ print .Missing .Nil }}|{{ print }}|{{ "x" | print "a" "b" }}|{{ 1 | print 2 }}', '<nil> <nil>||abx|2 1'],
    ['{{ println "a" 1 }}', 'a 1\n'],
    ['{{ html "<a href=\\"x\\">&\'</a>" }}', '&lt;a href=&#34;x&#34;&gt;&amp;&#39;&lt;/a&gt;'],
    ['{{ js "a\'b\\"c<>&=\\\\ \\n é" }}', "a\\'b\\\"c\\u003C\\u003E\\u0026\\u003D\\\\ \\u000A é"],
    ['{{ urlquery "a b&c=d/é" }}', 'a+b%26c%3Dd%2F%C3%A9'],
    ['{{ html .Missing }} {{ html 1 2 }} {{ .Missing | urlquery }}', '&lt;no value&gt; 1 2 %3Cno+value%3E'],
  ])('%j → %j', (text, out) => {
    expect(render(text)).toBe(out);
  });

  it.each([
    ['{{ and }}', 'template: template:1:3: executing "template" at <and>: wrong number of args for and: want at least 1 got 0'],
    ['{{ not 1 2 }}', 'template: template:1:3: executing "template" at <not>: wrong number of args for not: want 1 got 2'],
    ['{{ eq 1 }}', 'template: template:1:3: executing "template" at <eq 1>: error calling eq: missing argument for comparison'],
    // Newer Go releases (as here) name the types that do not compare; Go 1.19 did not.
    ['{{ eq 1 "a" }}', 'template: template:1:3: executing "template" at <eq 1 "a">: error calling eq: incompatible types for comparison: int and string'],
    ['{{ eq 1 1.0 }}', 'template: template:1:3: executing "template" at <eq 1 1.0>: error calling eq: incompatible types for comparison: int and float64'],
    ['{{ eq .L .L }}', 'template: template:1:3: executing "template" at <eq .L .L>: error calling eq: non-comparable type [a b c]: []interface {}'],
    ['{{ lt true false }}', 'template: template:1:3: executing "template" at <lt true false>: error calling lt: invalid type for comparison'],
    ['{{ lt .Missing 1 }}', 'template: template:1:3: executing "template" at <lt .Missing 1>: error calling lt: invalid type for comparison'],
    ['{{ gt 1 }}', 'template: template:1:3: executing "template" at <gt>: wrong number of args for gt: want 2 got 1'],
    ['{{ len 3 }}', 'template: template:1:3: executing "template" at <len 3>: error calling len: len of type int'],
    ['{{ len .Nil }}', 'template: template:1:3: executing "template" at <len .Nil>: error calling len: len of nil pointer'],
    ['{{ index .L 5 }}', 'template: template:1:3: executing "template" at <index .L 5>: error calling index: index out of range: 5'],
    ['{{ index .L -1 }}', 'template: template:1:3: executing "template" at <index .L -1>: error calling index: index out of range: -1'],
    ['{{ index .L "a" }}', 'template: template:1:3: executing "template" at <index .L "a">: error calling index: cannot index slice/array with type string'],
    ['{{ index .M 1 }}', 'template: template:1:3: executing "template" at <index .M 1>: error calling index: value has type int; should be string'],
    ['{{ index .Missing 1 }}', 'template: template:1:3: executing "template" at <index .Missing 1>: error calling index: index of untyped nil'],
    ['{{ index 3 1 }}', 'template: template:1:3: executing "template" at <index 3 1>: error calling index: can\'t index item of type int'],
    ['{{ slice .L 2 1 }}', 'template: template:1:3: executing "template" at <slice .L 2 1>: error calling slice: invalid slice index: 2 > 1'],
    ['{{ slice "abc" 1 2 3 }}', 'template: template:1:3: executing "template" at <slice "abc" 1 2 3>: error calling slice: cannot 3-index slice a string'],
    ['{{ slice .L 1 2 3 4 }}', 'template: template:1:3: executing "template" at <slice .L 1 2 3 4>: error calling slice: too many slice indexes: 4'],
    ['{{ slice .Missing 1 }}', 'template: template:1:3: executing "template" at <slice .Missing 1>: error calling slice: slice of untyped nil'],
    // Newer Go releases (as here) name the callee; Go 1.19 did not.
    ['{{ call .N }}', 'template: template:1:3: executing "template" at <call .N>: error calling call: non-function .N of type int'],
    ['{{ call .Missing }}', 'template: template:1:3: executing "template" at <call .Missing>: error calling call: call of nil'],
  ])('%j fails: %s', (text, message) => {
    expect(failure(text).message).toBe(message);
  });
});

describe('printf', () => {
  it.each([
    ['"%s|%d|%v|%q|%x|%X|%t|%%" "s" 42 .L "q\\"" "hi" 255 true', 's|42|[a b c]|"q\\""|6869|FF|true|%'],
    ['"%5s|%-5s|%05d|%-05d|%.2s|%5.1s|%05s" "ab" "ab" 42 42 "abcdef" "xyz" "ab"', '   ab|ab   |00042|42   |ab|    x|000ab'],
    ['"%+d % d %x %X %o %O %b %#x %#o %#b %c %U %#U %q" 5 5 -255 255 8 8 5 255 8 5 65 65 65 65', "+5  5 -ff FF 10 0o10 101 0xff 010 0b101 A U+0041 U+0041 'A' 'A'"],
    ['"%.5s|%.3s|%.10s|%.0s|" "abcdefgh" "héllo" "ab" "ab"', 'abcde|hél|ab||'],
    ['"%x % x %#x % #x %X" "héllo" "abc" "abc" "abc" "abc"', '68c3a96c6c6f 61 62 63 0x616263 0x61 0x62 0x63 616263'],
    ['"%10x|%-10x|%.2x" "abc" "abc" "abcdef"', '    616263|616263    |6162'],
    ['"%q %+q %#q %#q" "héllo\\n" "héllo" "back`tick" "plain"', '"héllo\\n" "h\\u00e9llo" "back`tick" `plain`'],
    ['"%6q|%-6q|%06q" "a" "b" "c"', '   "a"|"b"   |000"c"'],
    ['"%c|%5c|%-3c|%q" 233 65 66 10', "é|    A|B  |'\\n'"],
    ['"%.0d|%5.0d|%.3d|%08.3d" 0 0 7 7', '|     |007|     007'],
    ['"%03d|%+08d|% 08d|%-+8d|%#08x|%#.4x|%08X" -5 5 5 5 255 255 255', '-05|+0000005| 0000005|+5      |0x000000ff|0x00ff|000000FF'],
    ['"%05t|%-6t|%5v" true false nil', '0true|false |<nil>'],
    ['"%f %.2f %e %E %g %G %v" 3.14159 3.14159 1234.5678 0.000123 100000000.0 1e-7 2.5', '3.141590 3.14 1.234568e+03 1.230000E-04 1e+08 1E-07 2.5'],
    // Rounding is to the nearest, ties to even, on the exact binary value.
    ['"%.0f %.0f %.0f %.1f %.3e" 0.5 1.5 2.5 0.25 1.0005', '0 2 2 0.2 1.000e+00'],
    ['"%08.3f|%-8.2f|%+.1f|% .2f|%8.3e" 3.14159 2.5 3.0 2.0 12345.678', '0003.142|2.50    |+3.0| 2.00|1.235e+04'],
    ['"%v %v %v %v %v" 1e6 123456.0 1e-4 1e-5 0.1', '1e+06 123456 0.0001 1e-05 0.1'],
    ['"%#g %#.3g %#.0f %#e" 1.0 2.0 3.0 4.0', '1.00000 2.00 3. 4.000000e+00'],
    ['"%b %x %X %.3x" 1.0 1.5 -0.375 3.14159', '4503599627370496p-52 0x1.8p+00 -0X1.8P-02 0x1.922p+01'],
    ['"%6.2v|%.3v|%+.2e" 3.14159 "abcdef" -0.0', '   3.1|abc|-0.00e+00'],
    ['"%v|%v|%v" 12345678.0 0.000012345 100.0', '1.2345678e+07|1.2345e-05|100'],
    ['"%*d|%-*d|%.*f" 5 1 5 1 2 3.14159', '    1|1    |3.14'],
    ['"%[2]d %[1]d|%[1]d %d|%[2]*[1]d" 1 2', '2 1|1 2| 1'],
    ['"%v %q %d" .L .L .L', '[a b c] ["a" "b" "c"] [%!d(string=a) %!d(string=b) %!d(string=c)]'],
    ['"%s %v %x" .IL .IL .IL', '[%!s(int=3) %!s(int=1) %!s(int=2)] [3 1 2] [3 1 2]'],
    ['"%v|%d" .M .M', 'map[l:[1 map[k:v]] n:<nil> x:1 y:two z:[1 2]]|map[%!d(string=l):[1 map[%!d(string=k):%!d(string=v)]] %!d(string=n):<nil> %!d(string=x):1 %!d(string=y):%!d(string=two) %!d(string=z):[1 2]]'],
    ['"%#v|%#v|%#v" .L "a" (index .M "z")', '[]interface {}{"a", "b", "c"}|"a"|[]interface {}{1, 2}'],
    ['"%T %T %T %T %T" 1 "a" .L .M 1.5', 'int string []interface {} map[string]interface {} float64'],
    // fmt's notation for misuse.
    ['"%d|%s|%z|%d|%.1f" "a" 1 1 .F .N', '%!d(string=a)|%!s(int=1)|%!z(int=1)|%!d(float64=1.5)|%!f(int=3)'],
    ['"%d %d" 1', '1 %!d(MISSING)'],
    ['"%d" 1 2', '1%!(EXTRA int=2)'],
    ['"%"', '%!(NOVERB)'],
    ['"%s|%v|%d|%s" nil nil nil .Missing', '%!s(<nil>)|<nil>|%!d(<nil>)|%!s(<nil>)'],
    ['"%*d" "x" 1', '%!(BADWIDTH)1'],
    ['"%.*d" -1 5', '%!(BADPREC)5'],
    ['"%[3]d|%[x]d" 1 2', '%!d(BADINDEX)|%!d(BADINDEX)'],
  ])('printf %s → %j', (args, out) => {
    expect(render(`{{ printf ${args} }}`)).toBe(out);
  });

  it('checks the format argument', () => {
    expect(failure('{{ printf 5 }}').message).toBe('template: template:1:10: executing "template" at <5>: expected string; found 5');
    expect(failure('{{ printf }}').message).toBe('template: template:1:3: executing "template" at <printf>: wrong number of args for printf: want at least 1 got 0');
  });

  it('refuses to build a result over a megabyte', () => {
    expect(failure('{{ printf "%9999999d" 1 }}').message).toMatch(/error calling printf: result is longer than 1048576 characters$/);
  });
});

describe("Vault's functions", () => {
  it.each([
    // sdk/helper/template funcs_test.go and template_test.go
    ['{{ "foobarbaz" | truncate 1 }}', 'f'],
    ['{{ "foobarbaz" | truncate 5 }}', 'fooba'],
    ['{{ "foobarbaz" | truncate 9 }}', 'foobarbaz'],
    ['{{ "foobarbaz" | truncate 100 }}', 'foobarbaz'],
    ['{{ truncate 2.0 "abc" }}', 'ab'],
    ['{{ truncate_sha256 9 "thisisareallylongstring" }}', 't4bb25641'],
    ['{{ truncate_sha256 12 "thisisareallylongstring" }}', 'this704cd12b'],
    ['{{ truncate_sha256 22 "thisisareallylongstring" }}', 'thisisareallyl7f978be6'],
    ['{{ truncate_sha256 23 "thisisareallylongstring" }}', 'thisisareallylongstring'],
    ['{{ .S | truncate 10 }}', 'Some strin'],
    ['{{ .S | truncate_sha256 20 }}', 'Some string 6841cf80'],
    ['{{ .S | uppercase }}', 'SOME STRING WITH MULTIPLE CAPITALS LETTERS'],
    ['{{ .S | lowercase }}', 'some string with multiple capitals letters'],
    ['{{ .U | uppercase }} {{ uppercase "straße" }} {{ lowercase "ÀÉÎ" }}', 'HÉLLO WÖRLD STRAßE àéî'],
    ['{{ .S | replace " " "." }}', 'Some.string.with.Multiple.Capitals.LETTERS'],
    ['{{ "foo.bar.baz" | replace "." "" }} {{ "foobarbaz" | replace "bar" "_" }} {{ "foobar" | replace "." "_" }}', 'foobarbaz foo_baz foobar'],
    ['{{ replace "" "-" "abc" }}|{{ replace "" "-" "" }}', '-a-b-c-|-'],
    ['{{ .S | sha256 }}', 'da9872dd96609c72897defa11fe81017a62c3f44339d9d3b43fe37540ede3601'],
    ['{{ "" | sha256 }}', 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['{{ "foobar" | sha256 }}', 'c3ab8ff13720e8ad9047dd39466b3c8974e592c2fa383d4a3960714caef0c4f2'],
    ['{{ .S | base64 }}', 'U29tZSBzdHJpbmcgd2l0aCBNdWx0aXBsZSBDYXBpdGFscyBMRVRURVJT'],
    ['{{ unix_time }} {{ unix_time_millis }}', '1704207845 1704207845123'],
    ['{{ timestamp "2006-01-02T15:04:05.000Z" }}', '2024-01-02T15:04:05.123Z'],
    ['{{ random 0 }}|', '|'],
  ])('%j → %j', (text, out) => {
    expect(render(text)).toBe(out);
  });

  it('counts lengths in UTF-8 bytes, as Go does, without splitting a character', () => {
    expect(render('{{ "héllo" | truncate 2 }}|{{ "héllo" | truncate 3 }}')).toBe('h|hé');
    expect(render('{{ "日本語テキスト" | truncate 4 }}')).toBe('日'); // Go would leave half of 本
  });

  it('random: N characters of base62, different each time', () => {
    const t = compileTemplate('{{ random 20 }}');
    const a = t.render({});
    expect(a).toMatch(/^[A-Za-z0-9]{20}$/);
    expect(t.render({})).not.toBe(a);
    for (let n = 1; n < 100; n += 7) expect(render(`{{ random ${n} }}`)).toMatch(new RegExp(`^[A-Za-z0-9]{${n}}$`));
  });

  it('uuid: a random v4 UUID', () => {
    const id = render('{{ uuid }}');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(render('{{ uuid }}')).not.toBe(id);
  });

  it('time functions read the render time, in UTC', () => {
    const t = compileTemplate('{{ unix_time }}-{{ unix_time_millis }}-{{ timestamp "15:04" }}');
    expect(t.render({}, new Date(Date.UTC(2001, 8, 9, 1, 46, 40)))).toBe('1000000000-1000000000000-01:46');
  });

  it.each([
    ['{{ truncate 0 "ab" }}', 'template: template:1:3: executing "template" at <truncate 0 "ab">: error calling truncate: max length must be > 0 but was 0'],
    ['{{ truncate -1 "ab" }}', 'template: template:1:3: executing "template" at <truncate -1 "ab">: error calling truncate: max length must be > 0 but was -1'],
    ['{{ truncate_sha256 8 "x" }}', 'template: template:1:3: executing "template" at <truncate_sha256 8 "x">: error calling truncate_sha256: max length must be > 8 but was 8'],
    ['{{ truncate "3" "ab" }}', 'template: template:1:12: executing "template" at <"3">: expected integer; found "3"'],
    ['{{ truncate 1.5 "ab" }}', 'template: template:1:12: executing "template" at <1.5>: expected integer; found 1.5'],
    ['{{ truncate nil "a" }}', 'template: template:1:12: executing "template" at <nil>: cannot assign nil to int'],
    ['{{ truncate 3 }}', 'template: template:1:3: executing "template" at <truncate>: wrong number of args for truncate: want 2 got 1'],
    ['{{ truncate 3 5 }}', 'template: template:1:14: executing "template" at <5>: expected string; found 5'],
    ['{{ 5 | truncate 3 }}', 'template: template:1:16: executing "template" at <3>: wrong type for value; expected string; got int'],
    ['{{ .Missing | truncate 3 }}', 'template: template:1:23: executing "template" at <3>: invalid value; expected string'],
    ['{{ truncate 3 .Missing }}', 'template: template:1:14: executing "template" at <.Missing>: invalid value; expected string'],
    ['{{ truncate 3 .Nil }}', 'template: template:1:14: executing "template" at <.Nil>: wrong type for value; expected string; got interface {}'],
    ['{{ timestamp 5 }}', 'template: template:1:13: executing "template" at <5>: expected string; found 5'],
    ['{{ random }}', 'template: template:1:3: executing "template" at <random>: wrong number of args for random: want 1 got 0'],
    ['{{ random -1 }}', 'template: template:1:3: executing "template" at <random -1>: error calling random: runtime error: makeslice: cap out of range'],
    ['{{ unix_time 1 }}', 'template: template:1:3: executing "template" at <unix_time>: wrong number of args for unix_time: want 0 got 1'],
  ])('%j fails: %s', (text, message) => {
    expect(failure(text).message).toBe(message);
  });
});

describe("Go's time layouts (timestamp)", () => {
  it.each([
    ['Mon Monday Jan January', 'Tue Tuesday Jan January'],
    ['1 01 2 02 _2 __2 002', '1 01 2 02  2   2 002'],
    ['15 3 03 4 04 5 05 PM pm', '15 3 03 4 04 5 05 PM pm'],
    ['06 2006 MST', '24 2024 UTC'],
    ['-0700 -07:00 -07 -070000 -07:00:00', '+0000 +00:00 +00 +000000 +00:00:00'],
    ['Z0700 Z07:00 Z07 Z070000 Z07:00:00', 'Z Z Z Z Z'],
    ['.000 .000000 .000000000 ,000 .999 .9 .99999999999 .0000000000', '.123 .123000 .123000000 ,123 .123 .1 .123 .123000000'],
    ['Month Janet Mondays _2006 2006-01-02', 'Month Janet Tuesdays _2024 2024-01-02'],
    ['20060102150405', '20240102150405'],
    ['2006-01-02 15:04:05 -0700 MST', '2024-01-02 15:04:05 +0000 UTC'],
    ['Mon, 02 Jan 2006 15:04:05 Z07:00', 'Tue, 02 Jan 2024 15:04:05 Z'],
    ['3:04PM', '3:04PM'],
    ['', ''],
  ])('%j → %j', (layout, out) => {
    expect(render(`{{ timestamp ${JSON.stringify(layout)} }}`)).toBe(out);
  });

  it('formats other times: morning, the 12-hour clock, trimmed fractions, day of year', () => {
    const t = compileTemplate('{{ timestamp "3 03 PM pm .999 .000 _2 002 __2 Jan" }}');
    expect(t.render({}, new Date(Date.UTC(2023, 11, 31, 0, 7, 9, 50)))).toBe('12 12 AM am .05 .050 31 365 365 Dec');
    expect(t.render({}, new Date(Date.UTC(2024, 1, 29, 12, 0, 0, 0)))).toBe('12 12 PM pm  .000 29 060  60 Feb');
  });
});

describe("Vault's default AWS username template", () => {
  // builtin/logical/aws/path_config_root.go defaultUserNameTemplate, verbatim (two spaces included).
  const DEFAULT =
    '{{ if (eq .Type "STS") }}{{ printf "vault-%s-%s"  (unix_time) (random 20) | truncate 32 }}{{ else }}{{ printf "vault-%s-%s-%s" (printf "%s-%s" (.DisplayName) (.PolicyName) | truncate 42) (unix_time) (random 20) | truncate 64 }}{{ end }}';
  const template = compileTemplate(DEFAULT);

  it('IAM: vault-<display>-<policy>-<unix time>-<20 random>, at most 64 characters', () => {
    const name = template.render({ Type: 'IAM', DisplayName: 'token-alice', PolicyName: 'default' }, NOW);
    expect(name).toMatch(/^vault-token-alice-default-1704207845-[A-Za-z0-9]{20}$/);
    expect(name.length).toBeLessThanOrEqual(64);
  });

  it('IAM with long names: display-policy cut to 42, the whole to 64', () => {
    const name = template.render({ Type: 'IAM', DisplayName: 'approle-' + 'd'.repeat(40), PolicyName: 'p'.repeat(30) }, NOW);
    expect(name).toHaveLength(64);
    expect(name).toMatch(/^vault-approle-d{34}-1704207845-[A-Za-z0-9]{4}$/);
  });

  it('STS: vault-<unix time>-<random>, cut to 32 characters', () => {
    const name = template.render({ Type: 'STS', DisplayName: 'token-alice', PolicyName: 'default' }, NOW);
    expect(name).toMatch(/^vault-1704207845-[A-Za-z0-9]{15}$/);
    expect(name).toHaveLength(32);
  });
});

describe('parse errors', () => {
  it.each([
    ['{{ foo }}', 'template: template:1: function "foo" not defined'],
    ['{{ .N | foo }}', 'template: template:1: function "foo" not defined'],
    ['line1\nline2 {{ foo }}', 'template: template:2: function "foo" not defined'],
    ['{{ .N } }}', 'template: template:1: unexpected "}" in operand'],
    ['{{ .N }', 'template: template:1: unexpected "}" in operand'],
    ['{{ .N', 'template: template:1: unclosed action'],
    ['{{ }}', 'template: template:1: missing value for command'],
    ['{{ | .N }}', 'template: template:1: unexpected "|" in command'],
    ['{{ .N || .N }}', 'template: template:1: unexpected "|" in command'],
    ['{{ $x }}', 'template: template:1: undefined variable "$x"'],
    ['{{ if $x := .N }}{{ end }}{{ $x }}', 'template: template:1: undefined variable "$x"'],
    ['{{ end }}', 'template: template:1: unexpected {{end}}'],
    ['{{ else }}', 'template: template:1: unexpected {{else}}'],
    ['{{ if .N }}x', 'template: template:1: unexpected EOF'],
    ['a\n{{ if .N }}\nb\n', 'template: template:4: unexpected EOF'],
    ['{{ if }}{{ end }}', 'template: template:1: missing value for if'],
    ['{{ range }}{{ end }}', 'template: template:1: missing value for range'],
    ['{{ with }}{{ end }}', 'template: template:1: missing value for with'],
    ['{{ if .N }}x{{ else }}y{{ else }}z{{ end }}', 'template: template:1: expected end; found {{else}}'],
    ['{{ break }}', 'template: template:1: {{break}} outside {{range}}'],
    ['{{ continue }}', 'template: template:1: {{continue}} outside {{range}}'],
    ['{{ range .L }}{{ else if .N }}{{ end }}', 'template: template:1: unexpected <if> in input'],
    ['{{/* unclosed', 'template: template:1: unclosed comment'],
    ['{{/* c */ }}', 'template: template:1: comment ends before closing delimiter'],
    ['{{ "abc }}', 'template: template:1: unterminated quoted string'],
    ['{{ `abc }}', 'template: template:1: unterminated raw quoted string'],
    ["{{ 'a }}", 'template: template:1: unterminated character constant'],
    ['{{ "\\q" }}', 'template: template:1: invalid syntax'],
    ['{{ 3x }}', 'template: template:1: bad number syntax: "3x"'],
    ['{{ 99999999999999999999 }}', 'template: template:1: integer overflow: "99999999999999999999"'],
    ['{{ "a" | "b" }}', 'template: template:1: non executable command in pipeline stage 2'],
    ['{{ "a".b }}', 'template: template:1: unexpected . after term "\\"a\\""'],
    ['{{ $x, $y := 1 }}', 'template: template:1: too many declarations in command'],
    ['{{ range $i, $v, $w := .L }}{{ end }}', 'template: template:1: too many declarations in range'],
    ['{{ range $i, 3 := .L }}{{ end }}', 'template: template:1: range can only initialize variables'],
    ['{{ ( }}', 'template: template:1: unclosed left paren'],
    ['{{ ) }}', 'template: template:1: unexpected right paren'], // newer Go's lexer message
    ['{{ # }}', 'template: template:1: unexpected "#" in command'],
    ['{{ é }}', 'template: template:1: function "é" not defined'],
    ['{{ .N:x }}', 'template: template:1: expected :='],
    ['{{ .N-1 }}', "template: template:1: bad character U+002D '-'"],
    ['{{ \u0007 }}', 'template: template:1: unrecognized character in action: U+0007'],
    ['{{ if .N }}\n{{ .N\n', 'template: template:3: unclosed action started at template:2'],
    ['{{ template "x" }}', 'template: template:1: {{template}} is not supported'], // named templates are left out
  ])('%j: %s', (text, message) => {
    expect(() => compileTemplate(text)).toThrow(new TemplateError(message));
    expect(failure(text).message).toBe(message);
  });
});

describe('execution errors', () => {
  it.each([
    ['{{ .N.x }}', 'template: template:1:5: executing "template" at <.N.x>: can\'t evaluate field x in type interface {}'],
    ['{{ $x := .S }}{{ $x.y }}', 'template: template:1:19: executing "template" at <$x.y>: can\'t evaluate field y in type string'],
    ['{{ range .L }}\n{{ .x }}{{ end }}', 'template: template:2:3: executing "template" at <.x>: can\'t evaluate field x in type interface {}'],
    ['{{ .Nil.x }}', 'template: template:1:7: executing "template" at <.Nil.x>: nil pointer evaluating interface {}.x'],
    ['{{ .M.x 1 }}', 'template: template:1:5: executing "template" at <.M.x>: x is not a method but has arguments'],
    ['{{ "a" "b" }}', 'template: template:1:3: executing "template" at <"a">: can\'t give argument to non-function "a"'],
    ['{{ $x := 1 }}{{ $x 2 }}', 'template: template:1:16: executing "template" at <$x>: can\'t give argument to non-function $x'],
    ['{{ nil }}', 'template: template:1:3: executing "template" at <nil>: nil is not a command'],
    ['{{ print (1).x }}', 'template: template:1:10: executing "template" at <1>: can\'t evaluate field x in type int'],
    ['{{ range .E }}x{{ end }}', 'template: template:1:9: executing "template" at <.E>: range can\'t iterate over '],
    // Go 1.22's range over an int, with two variables.
    ['{{ range $i, $v := 3 }}{{ end }}', 'template: template:1:19: executing "template" at <3>: can\'t use 3 to iterate over more than one variable'],
  ])('%j: %s', (text, message) => {
    expect(failure(text).message).toBe(message);
  });
});

// Go has no such limits; a render here must stay bounded.
describe('bounded work', () => {
  it('stops a render that takes too many steps or writes too much', () => {
    expect(failure('{{ range 100000000 }}{{ end }}').message).toMatch(/execution takes more than 1000000 steps$/);
    expect(failure('{{ range 5000 }}{{ printf "%1000s" "" }}{{ end }}').message).toMatch(/output is longer than 1048576 characters$/);
    expect(failure('{{ random 2000000 }}').message).toMatch(/error calling random: length 2000000 is over the limit of 1048576$/);
  });

  it('refuses to print data that contains itself', () => {
    const data: Record<string, unknown> = { x: 1 };
    data.self = data;
    expect(render('{{ .self.self.self.x }}', data)).toBe('1');
    expect(failure('{{ . }}', data).message).toBe('template: template:1:3: executing "template" at <{{.}}>: value is nested too deeply to print');
  });

  it('refuses nesting deeper than the stack can take', () => {
    expect(failure('{{ ' + '('.repeat(5000) + '1' + ')'.repeat(5000) + ' }}').message).toBe('template: template:1: max expression depth exceeded');
    expect(failure('{{ if 1 }}'.repeat(5000)).message).toBe('template: template:1: max control nesting depth exceeded');
    expect(render('{{ ' + '('.repeat(100) + '1' + ')'.repeat(100) + ' }}')).toBe('1');
  });
});
