import { describe, expect, it } from 'vitest';
import { parsePolicy, PolicyError, type PathRule } from '../../../../src/core/acl/policy';

const b64 = (s: string): string => btoa(String.fromCharCode(...new TextEncoder().encode(s)));

function rule(overrides: Partial<PathRule>): PathRule {
  return {
    pattern: '',
    capabilities: [],
    allowedParameters: {},
    deniedParameters: {},
    requiredParameters: [],
    minWrappingTTL: 0,
    maxWrappingTTL: 0,
    templated: false,
    ...overrides,
  };
}

function parseError(text: string): string {
  try {
    parsePolicy('p', text);
  } catch (err) {
    expect(err).toBeInstanceOf(PolicyError);
    return (err as Error).message;
  }
  throw new Error('expected a PolicyError');
}

const FULL_HCL = `
name = "ignored"
# every block key at once
path "/secret/data/*" {
  capabilities = ["update", "read", "create", "read"]
  allowed_parameters = {
    "Foo" = ["bar", 1, true]
    zip = []
    "*" = []
  }
  denied_parameters = { "Secret": [] }
  required_parameters = ["Name", "ttl"]
  min_wrapping_ttl = "1m"
  max_wrapping_ttl = 3600
  mfa_methods = ["totp"]
  control_group = {
    factor "ops" {
      identity {
        group_names = ["managers"]
        approvals = 1
      }
    }
  }
  subscribe_event_types = ["kv*"]
  comment = "all the things"
}
`;

describe('parsePolicy: HCL', () => {
  it('parses every block key', () => {
    expect(parsePolicy('full', FULL_HCL)).toEqual({
      name: 'full',
      templated: false,
      rules: [
        rule({
          pattern: 'secret/data/*',
          capabilities: ['create', 'read', 'update'],
          allowedParameters: { foo: ['bar', 1, true], zip: [], '*': [] },
          deniedParameters: { secret: [] },
          requiredParameters: ['name', 'ttl'],
          minWrappingTTL: 60,
          maxWrappingTTL: 3600,
        }),
      ],
    });
  });

  it('keeps repeated blocks for the same pattern as separate rules, in order', () => {
    const p = parsePolicy('p', 'path "a" { capabilities = ["read"] }\npath "b" {}\npath "a" { capabilities = ["list"] }');
    expect(p.rules.map((r) => [r.pattern, r.capabilities])).toEqual([
      ['a', ['read']],
      ['b', []],
      ['a', ['list']],
    ]);
  });

  it('normalises capabilities: sorted, deduplicated, deny alone', () => {
    const caps = (list: string) => parsePolicy('p', `path "a" { capabilities = [${list}] }`).rules[0].capabilities;
    expect(caps('"sudo", "list", "create", "list", "patch", "subscribe", "delete", "update", "read"')).toEqual([
      'create',
      'delete',
      'list',
      'patch',
      'read',
      'subscribe',
      'sudo',
      'update',
    ]);
    expect(caps('"read", "deny", "sudo"')).toEqual(['deny']);
    expect(caps('')).toEqual([]);
  });

  it.each<[string, string[]]>([
    ['deny', ['deny']],
    ['read', ['list', 'read']],
    ['write', ['create', 'delete', 'list', 'read', 'update']],
    ['sudo', ['create', 'delete', 'list', 'read', 'sudo', 'update']],
  ])('legacy policy = "%s"', (legacy, expected) => {
    expect(parsePolicy('p', `path "a" { policy = "${legacy}" }`).rules[0].capabilities).toEqual(expected);
  });

  it('legacy policy adds to explicit capabilities', () => {
    const r = parsePolicy('p', 'path "a" {\n policy = "read"\n capabilities = ["update"]\n}').rules[0];
    expect(r.capabilities).toEqual(['list', 'read', 'update']);
    expect(parsePolicy('p', 'path "a" { policy = "deny"\n capabilities = ["read"] }').rules[0].capabilities).toEqual([
      'deny',
    ]);
  });

  it.each<[string, number]>([
    ['"1h"', 3600],
    ['3600', 3600],
    ['"90s"', 90],
    ['"300"', 300],
    ['"2d"', 172800],
    ['1.9', 1],
  ])('wrapping TTL %s = %i seconds', (value, seconds) => {
    const r = parsePolicy('p', `path "a" { min_wrapping_ttl = ${value}\n max_wrapping_ttl = ${value} }`).rules[0];
    expect([r.minWrappingTTL, r.maxWrappingTTL]).toEqual([seconds, seconds]);
  });

  it('merges parameter keys that differ only in case (empty list wins)', () => {
    const r = parsePolicy('p', 'path "a" { allowed_parameters = { "A" = ["x"], "a" = ["y"], "B" = ["z"], "b" = [] } }')
      .rules[0];
    expect(r.allowedParameters).toEqual({ a: ['x', 'y'], b: [] });
  });

  it('keeps structured parameter values as plain data', () => {
    const r = parsePolicy('p', 'path "a" { allowed_parameters = { k = [["x", "y"], { n = 1 }] } }').rules[0];
    expect(r.allowedParameters).toEqual({ k: [['x', 'y'], { n: 1 }] });
  });

  it('a "__proto__" parameter key is an ordinary key', () => {
    const r = parsePolicy('p', 'path "a" { denied_parameters = { "__proto__" = ["x"] } }').rules[0];
    expect(Object.getPrototypeOf(r.deniedParameters)).toBe(Object.prototype);
    expect(Object.hasOwn(r.deniedParameters, '__proto__')).toBe(true);
  });

  it.each<[string, string]>([
    ['/secret/foo', 'secret/foo'],
    ['secret/foo/', 'secret/foo/'],
    ['*', '*'],
    ['', ''],
    ['secret/*/x', 'secret/*/x'],
    ['secret/+/x/+', 'secret/+/x/+'],
    ['secret/+/foo*', 'secret/+/foo*'],
    ['+', '+'],
  ])('pattern %j is kept as %j', (written, stored) => {
    expect(parsePolicy('p', `path "${written}" {}`).rules[0].pattern).toBe(stored);
  });

  it('an empty document has no rules', () => {
    expect(parsePolicy('empty', '# nothing')).toEqual({ name: 'empty', rules: [], templated: false });
  });

  it('marks templated rules and policies', () => {
    const p = parsePolicy('t', 'path "a/{{ identity.entity.id }}/*" {}\npath "b" {}');
    expect(p.templated).toBe(true);
    expect(p.rules.map((r) => r.templated)).toEqual([true, false]);
    expect(p.rules[0].pattern).toBe('a/{{ identity.entity.id }}/*');
  });
});

describe('parsePolicy: JSON and base64', () => {
  const json = JSON.stringify({
    name: 'x',
    path: {
      'secret/data/*': { capabilities: ['create', 'read'] },
      'secret/metadata/*': { capabilities: ['list'], allowed_parameters: { '*': [] }, max_wrapping_ttl: '1h' },
    },
  });
  const expected = [
    rule({ pattern: 'secret/data/*', capabilities: ['create', 'read'] }),
    rule({ pattern: 'secret/metadata/*', capabilities: ['list'], allowedParameters: { '*': [] }, maxWrappingTTL: 3600 }),
  ];

  it('accepts the JSON form', () => {
    expect(parsePolicy('j', json).rules).toEqual(expected);
    expect(parsePolicy('j', `\n  ${json}`).rules).toEqual(expected);
  });

  it('accepts JSON with lists of path objects and of block objects', () => {
    const text = JSON.stringify({
      path: [{ a: { capabilities: ['read'] } }, { a: [{ capabilities: ['list'] }, { policy: 'deny' }] }],
    });
    expect(parsePolicy('j', text).rules.map((r) => r.capabilities)).toEqual([['read'], ['list'], ['deny']]);
  });

  it('accepts the HCL equivalent of the JSON form', () => {
    expect(parsePolicy('h', 'path = { "secret/data/*" = { capabilities = ["create", "read"] } }').rules).toEqual([
      expected[0],
    ]);
  });

  it('decodes base64 of HCL and of JSON', () => {
    expect(parsePolicy('b', b64(FULL_HCL))).toEqual(parsePolicy('b', FULL_HCL));
    expect(parsePolicy('b', b64(json)).rules).toEqual(expected);
    // Go's decoder ignores line breaks (e.g. `base64` wrapping at 76 columns).
    expect(parsePolicy('b', b64(FULL_HCL).replace(/(.{76})/g, '$1\n')).rules).toEqual(parsePolicy('b', FULL_HCL).rules);
  });

  it('reports errors against the decoded text when it reads as text', () => {
    expect(parseError(b64('path "a" {\n  bogus = 1\n}'))).toBe('path "a": invalid key "bogus" on line 2');
  });

  it('reports errors against the text as written when the decoding is binary', () => {
    // "abcd" is valid base64 but decodes to invalid UTF-8; "AAAA" decodes to NUL bytes.
    expect(parseError('abcd')).toBe('line 1: expected "=" after "abcd"');
    expect(parseError('AAAA')).toBe('line 1: expected "=" after "AAAA"');
  });

  it.each<[string, string]>([
    ['{"path": ', 'invalid JSON policy: '],
    ['{"path": {"a": null}}', 'invalid JSON policy: $.path.a is null'],
    ['{"path": {"a": "read"}}', 'path "a": expected an object'],
    ['{"path": {"a": {"capabilities": ["fly"]}}}', 'path "a": invalid capability "fly"'],
    ['{"path": {"a": {"bogus": 1}}}', 'path "a": invalid key "bogus"'],
    ['{"paths": {}}', 'invalid key "paths"'],
    ['{"path": "a"}', 'expected path "<pattern>" { ... }'],
  ])('JSON error for %s', (text, message) => {
    expect(parseError(text).startsWith(message)).toBe(true);
  });
});

describe('parsePolicy: validation errors', () => {
  it.each<[string, string, string]>([
    ['unknown top-level key', 'name = "x"\npaths "a" {}', 'invalid key "paths" on line 2'],
    ['unknown block key', 'path "a" {\n  capabilities = []\n  capability = ["read"]\n}', 'path "a": invalid key "capability" on line 3'],
    ['block keys are case-sensitive', 'path "a" { Capabilities = [] }', 'path "a": invalid key "Capabilities" on line 1'],
    ['invalid capability', 'path "/a/b" { capabilities = ["read", "root"] }', 'path "a/b": invalid capability "root"'],
    ['capability case', 'path "a" { capabilities = ["Read"] }', 'path "a": invalid capability "Read"'],
    ['capabilities not a list', 'path "a" { capabilities = "read" }', 'path "a": capabilities must be a list of strings on line 1'],
    ['capabilities with a number', 'path "a" { capabilities = [1] }', 'path "a": capabilities must be a list of strings on line 1'],
    ['invalid legacy policy', 'path "a" { policy = "admin" }', 'path "a": invalid policy "admin" (expected "deny", "read", "write" or "sudo") on line 1'],
    ['legacy policy not a string', 'path "a" { policy = ["read"] }', 'path "a": invalid policy value (expected "deny", "read", "write" or "sudo") on line 1'],
    ['duplicate key', 'path "a" {\n capabilities = []\n capabilities = ["read"]\n}', 'path "a": duplicate key "capabilities" on line 3'],
    ['label on a block key', 'path "a" { allowed_parameters "x" {} }', 'path "a": unexpected label after "allowed_parameters" on line 1'],
    ['parameters not an object', 'path "a" { allowed_parameters = ["x"] }', 'path "a": allowed_parameters must be an object mapping parameter names to lists of values on line 1'],
    ['parameter value not a list', 'path "a" {\n denied_parameters = {\n  "k" = "v"\n }\n}', 'path "a": denied_parameters "k" must be a list of values on line 3'],
    ['required not strings', 'path "a" { required_parameters = [1] }', 'path "a": required_parameters must be a list of strings on line 1'],
    ['bad duration', 'path "a" { min_wrapping_ttl = "soon" }', 'path "a": invalid min_wrapping_ttl: time: invalid duration "soon" on line 1'],
    ['duration of wrong type', 'path "a" { max_wrapping_ttl = true }', 'path "a": max_wrapping_ttl must be a duration string or a number of seconds on line 1'],
    ['negative duration', 'path "a" { max_wrapping_ttl = -5 }', 'path "a": max_wrapping_ttl cannot be negative on line 1'],
    ['max below min', 'path "a" {\n min_wrapping_ttl = "1h"\n max_wrapping_ttl = "30m"\n}', 'max_wrapping_ttl cannot be less than min_wrapping_ttl'],
    ['mfa_methods not strings', 'path "a" { mfa_methods = "totp" }', 'path "a": mfa_methods must be a list of strings on line 1'],
    ['subscribe_event_types not strings', 'path "a" { subscribe_event_types = [true] }', 'path "a": subscribe_event_types must be a list of strings on line 1'],
    ['comment not a string', 'path "a" { comment = 1 }', 'path "a": comment must be a string on line 1'],
    ['control_group not an object', 'path "a" { control_group = [] }', 'path "a": control_group must be an object on line 1'],
    ['path without a block', 'path = "a"', 'expected path "<pattern>" { ... } on line 1'],
    ['path with two labels', 'path "a" "b" {}', 'expected path "<pattern>" { ... }, found 2 labels on line 1'],
    ['+* is forbidden', 'path "secret/+*" {}', 'path "secret/+*": invalid use of wildcards ("+*" is forbidden)'],
    ['+* after a segment', 'path "secret/+/+*" {}', 'path "secret/+/+*": invalid use of wildcards ("+*" is forbidden)'],
    ['+ inside a segment', 'path "secret/a+b" {}', 'path "secret/a+b": "+" must occupy a whole path segment'],
    ['+ prefixing a segment', 'path "secret/+a/x" {}', 'path "secret/+a/x": "+" must occupy a whole path segment'],
    ['+ next to a template', 'path "secret/{{identity.entity.id}}+" {}', 'path "secret/{{identity.entity.id}}+": "+" must occupy a whole path segment'],
    ['unclosed template', 'path "secret/{{identity.entity.id" {}', 'path "secret/{{identity.entity.id": unbalanced template braces: "{{" without "}}"'],
    ['stray template close', 'path "secret/identity.entity.id}}" {}', 'path "secret/identity.entity.id}}": unbalanced template braces: "}}" without "{{"'],
    ['nested template', 'path "secret/{{a{{identity.entity.id}}" {}', 'path "secret/{{a{{identity.entity.id}}": unbalanced template braces: nested "{{"'],
    ['unknown template', 'path "secret/{{identity.entity.email}}" {}', 'path "secret/{{identity.entity.email}}": unknown template "{{identity.entity.email}}"'],
    ['empty template', 'path "secret/{{ }}" {}', 'path "secret/{{ }}": unknown template "{{ }}"'],
  ])('%s', (_name, text, message) => {
    expect(parseError(text)).toBe(message);
  });

  it('HCL syntax errors keep their line number', () => {
    expect(parseError('path "a" {\n\n  capabilities ["read"]\n}')).toBe('line 3: expected "=" after "capabilities"');
  });
});
