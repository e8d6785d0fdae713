import { describe, expect, it } from 'vitest';
import { ACL, type AclRequest } from '../../../../src/core/acl/acl';
import { parsePolicy, type Policy } from '../../../../src/core/acl/policy';
import type { IdentityContext } from '../../../../src/framework/identity-templates';
import type { Operation } from '../../../../src/framework/backend';

const acl = (...texts: string[]): ACL => ACL.compile(texts.map((t, i) => parsePolicy(`p${i}`, t)));

const req = (operation: Operation, path: string, data: Record<string, unknown> = {}, wrapTTL = 0): AclRequest => ({
  operation,
  path,
  data,
  wrapTTL,
});

const allowed = (a: ACL, operation: Operation, path: string, data: Record<string, unknown> = {}, wrapTTL = 0) =>
  a.check(req(operation, path, data, wrapTTL)).allowed;

describe('ACL: matching', () => {
  const a = acl(`
    path "secret/exact" { capabilities = ["read"] }
    path "secret/glob*" { capabilities = ["list"] }
    path "secret/seg/+/x" { capabilities = ["update"] }
    path "secret/lit/*/x" { capabilities = ["delete"] }
  `);

  it.each<[Operation, string, boolean]>([
    ['read', 'secret/exact', true],
    ['read', 'secret/Exact', false],
    ['read', 'secret/exact/', false],
    ['read', 'secret/exactly', false],
    ['update', 'secret/exact', false],
    ['list', 'secret/glob', true],
    ['list', 'secret/globe/', true],
    ['list', 'secret/glo/', false],
    ['update', 'secret/seg/a/x', true],
    ['update', 'secret/seg/a/b/x', false],
    ['update', 'secret/seg//x', false],
    ['delete', 'secret/lit/*/x', true],
    ['delete', 'secret/lit/a/x', false],
    ['read', 'other/path', false],
  ])('%s %s → %s', (op, path, expected) => {
    expect(allowed(a, op, path)).toBe(expected);
  });

  it('explains refusals', () => {
    expect(a.check(req('read', 'nope'))).toEqual({ allowed: false, sudo: false, reason: 'no policy rule matches "nope"' });
    expect(a.check(req('update', 'secret/exact'))).toEqual({
      allowed: false,
      sudo: false,
      reason: 'rule "secret/exact" does not grant "update"',
      rule: 'secret/exact',
    });
  });

  it('only ONE rule applies: capabilities are not unioned across patterns', () => {
    const b = acl('path "secret/*" { capabilities = ["read"] }', 'path "secret/foo" { capabilities = ["update"] }');
    expect(allowed(b, 'update', 'secret/foo')).toBe(true);
    expect(allowed(b, 'read', 'secret/foo')).toBe(false);
    expect(allowed(b, 'read', 'secret/bar')).toBe(true);
  });

  it('an exact rule beats any glob, including a deny glob', () => {
    const b = acl('path "secret/*" { capabilities = ["deny"] }\npath "secret/open" { capabilities = ["read"] }');
    expect(allowed(b, 'read', 'secret/open')).toBe(true);
    expect(allowed(b, 'read', 'secret/other')).toBe(false);
  });

  it('a more specific deny glob wins over a broader grant', () => {
    const b = acl('path "secret/*" { capabilities = ["read", "list"] }\npath "secret/private/*" { capabilities = ["deny"] }');
    expect(allowed(b, 'read', 'secret/public')).toBe(true);
    expect(allowed(b, 'read', 'secret/private/key')).toBe(false);
    expect(allowed(b, 'list', 'secret/private/')).toBe(false);
    expect(b.check(req('read', 'secret/private/key')).reason).toBe('rule "secret/private/*" denies access');
  });

  // Each pair: the higher-priority rule grants read only, the lower grants update only.
  it.each<[string, string, string]>([
    ['secret/a*', 'secret/*', 'secret/abc'],
    ['secret/a/+', 'secret/+/foo', 'secret/a/foo'],
    ['secret/*', '+/a/b', 'secret/a/b'],
    ['secret/+/foo', 'secret/+/foo*', 'secret/a/foo'],
    ['secret/+/b', 'secret/+/+', 'secret/a/b'],
    ['secret/+/bc*', 'secret/+/b*', 'secret/a/bcd'],
    ['a/+/b/+', 'a/+/+/c', 'a/z/b/c'],
  ])('priority: %s beats %s for %s', (higher, lower, path) => {
    for (const order of [
      [higher, lower],
      [lower, higher],
    ]) {
      const b = acl(`path "${order[0]}" { capabilities = ["${order[0] === higher ? 'read' : 'update'}"] }
                     path "${order[1]}" { capabilities = ["${order[1] === higher ? 'read' : 'update'}"] }`);
      expect(b.check(req('read', path))).toEqual({ allowed: true, sudo: false, rule: higher });
      expect(allowed(b, 'update', path)).toBe(false);
    }
  });
});

describe('ACL: list requests and trailing slashes', () => {
  it.each<[string, Operation, string, boolean]>([
    ['secret/foo', 'list', 'secret/foo/', true],
    ['secret/foo/', 'list', 'secret/foo/', true],
    ['secret/foo', 'list', 'secret/foo', true],
    ['secret/foo', 'read', 'secret/foo/', false],
    ['secret/foo/', 'read', 'secret/foo', false],
    ['secret/foo/', 'list', 'secret/foo', false],
    ['secret/foo*', 'list', 'secret/foo/', true],
    ['secret/+', 'list', 'secret/foo/', false],
    ['secret/+/', 'list', 'secret/foo/', true],
    ['secret/+/*', 'list', 'secret/foo/', true],
  ])('rule %s, %s %s → %s', (pattern, op, path, expected) => {
    expect(allowed(acl(`path "${pattern}" { capabilities = ["read", "list"] }`), op, path)).toBe(expected);
  });

  it('the slashed exact rule is preferred over the trimmed one', () => {
    const b = acl('path "secret/foo" { capabilities = ["list"] }\npath "secret/foo/" { capabilities = ["deny"] }');
    expect(allowed(b, 'list', 'secret/foo/')).toBe(false);
  });

  it('a deny glob under a listable glob also covers LIST of its own root', () => {
    // The shape of OpenBao GHSA-xp3c-3jw3-4vcr: LIST foo/metadata/private/ must hit the deny.
    const b = acl('path "foo/metadata/*" { capabilities = ["list"] }\npath "foo/metadata/private/*" { capabilities = ["deny"] }');
    expect(allowed(b, 'list', 'foo/metadata/')).toBe(true);
    expect(allowed(b, 'list', 'foo/metadata/private/')).toBe(false);
    expect(allowed(b, 'list', 'foo/metadata/private/app/')).toBe(false);
    expect(b.capabilities('foo/metadata/private/')).toEqual(['deny']);
  });

  it('an exact deny without the slash covers LIST with the slash', () => {
    const b = acl('path "secret/*" { capabilities = ["list"] }\npath "secret/private" { capabilities = ["deny"] }');
    expect(allowed(b, 'list', 'secret/private/')).toBe(false);
    expect(b.capabilities('secret/private/')).toEqual(['deny']);
    expect(allowed(b, 'list', 'secret/public/')).toBe(true);
  });

  it('an exact rule without the slash beats a glob for LIST', () => {
    const b = acl('path "secret/*" { capabilities = ["deny"] }\npath "secret/foo" { capabilities = ["list"] }');
    expect(allowed(b, 'list', 'secret/foo/')).toBe(true);
  });
});

describe('ACL: merging identical patterns', () => {
  it('ORs capabilities across policies and repeated blocks', () => {
    const b = acl(
      'path "secret/*" { capabilities = ["read"] }\npath "secret/*" { capabilities = ["list"] }',
      'path "secret/*" { capabilities = ["update"] }',
    );
    expect(b.capabilities('secret/x')).toEqual(['list', 'read', 'update']);
  });

  it('deny anywhere leaves deny only, whatever the order', () => {
    const grant = 'path "secret/x" { capabilities = ["read", "sudo"] }';
    const deny = 'path "secret/x" { capabilities = ["deny"] }';
    for (const b of [acl(grant, deny), acl(deny, grant), acl(`${grant}\n${deny}\n${grant}`)]) {
      expect(b.capabilities('secret/x')).toEqual(['deny']);
      expect(b.check(req('read', 'secret/x'))).toMatchObject({ allowed: false, sudo: false });
    }
  });

  it('does not merge different patterns that look alike', () => {
    const b = acl('path "secret/x" { capabilities = ["read"] }', 'path "secret/x*" { capabilities = ["update"] }');
    expect(b.capabilities('secret/x')).toEqual(['read']);
    expect(b.capabilities('secret/xy')).toEqual(['update']);
  });

  it('takes the smaller non-zero wrapping TTLs', () => {
    const b = acl(
      'path "w" { capabilities = ["update"]\n min_wrapping_ttl = 60\n max_wrapping_ttl = 600 }',
      'path "w" { capabilities = ["update"]\n min_wrapping_ttl = 30 }',
      'path "w" { capabilities = ["update"]\n max_wrapping_ttl = 300 }',
    );
    expect(allowed(b, 'update', 'w', {}, 30)).toBe(true);
    expect(allowed(b, 'update', 'w', {}, 29)).toBe(false);
    expect(allowed(b, 'update', 'w', {}, 300)).toBe(true);
    expect(allowed(b, 'update', 'w', {}, 301)).toBe(false);
  });

  it('merges allowed parameters: lists concatenated, an empty list wins', () => {
    const b = acl(
      'path "p" { capabilities = ["update"]\n allowed_parameters = { a = ["x"], b = ["y"] } }',
      'path "p" { capabilities = ["update"]\n allowed_parameters = { a = ["z"], b = [] , c = ["w"] } }',
    );
    expect(allowed(b, 'update', 'p', { a: 'x' })).toBe(true);
    expect(allowed(b, 'update', 'p', { a: 'z' })).toBe(true);
    expect(allowed(b, 'update', 'p', { a: 'q' })).toBe(false);
    expect(allowed(b, 'update', 'p', { b: 'anything' })).toBe(true);
    expect(allowed(b, 'update', 'p', { c: 'w' })).toBe(true);
    expect(allowed(b, 'update', 'p', { d: 1 })).toBe(false);
  });

  it('merges denied parameters and unions required parameters', () => {
    const b = acl(
      'path "p" { capabilities = ["create"]\n denied_parameters = { a = ["x"] }\n required_parameters = ["r1"] }',
      'path "p" { capabilities = ["create"]\n denied_parameters = { a = ["y"] }\n required_parameters = ["R2"] }',
    );
    expect(allowed(b, 'create', 'p', { r1: 1, r2: 2 })).toBe(true);
    expect(allowed(b, 'create', 'p', { r1: 1 })).toBe(false);
    expect(allowed(b, 'create', 'p', { r2: 2 })).toBe(false);
    expect(allowed(b, 'create', 'p', { r1: 1, r2: 2, a: 'x' })).toBe(false);
    expect(allowed(b, 'create', 'p', { r1: 1, r2: 2, a: 'y' })).toBe(false);
    expect(allowed(b, 'create', 'p', { r1: 1, r2: 2, a: 'z' })).toBe(true);
  });

  it('a deny merge clears parameters and TTLs of the pattern', () => {
    const b = acl('path "p" { capabilities = ["deny"] }', 'path "p" { capabilities = ["read"]\n max_wrapping_ttl = 60 }');
    expect(b.check(req('read', 'p', {}, 30)).reason).toBe('rule "p" denies access');
  });
});

describe('ACL: parameter constraints by operation', () => {
  const b = acl(`path "p" {
    capabilities = ["create", "read", "update", "patch", "delete", "list"]
    denied_parameters = { "*" = [] }
  }`);

  it.each<[Operation, boolean]>([
    ['read', false],
    ['create', false],
    ['update', false],
    ['patch', false],
    ['delete', true],
    ['list', true],
  ])('%s with data → allowed %s', (op, expected) => {
    expect(allowed(b, op, 'p', { k: 'v' })).toBe(expected);
  });

  it('no data passes denied "*"', () => {
    expect(allowed(b, 'update', 'p', {})).toBe(true);
  });

  it('required parameters are not checked for list and delete', () => {
    const c = acl('path "p" { capabilities = ["list", "delete", "read"]\n required_parameters = ["x"] }');
    expect(allowed(c, 'list', 'p')).toBe(true);
    expect(allowed(c, 'delete', 'p')).toBe(true);
    expect(allowed(c, 'read', 'p')).toBe(false);
    expect(c.check(req('read', 'p')).reason).toBe('rule "p": required parameter "x" is missing');
  });

  it('glob and list values from a full policy', () => {
    const c = acl(`path "auth/token/create" {
      capabilities = ["update"]
      allowed_parameters = {
        "policies" = ["dev-*", "default"]
        "ttl" = []
        "renewable" = [true]
        "num_uses" = [1, 2]
      }
    }`);
    const ok = (data: Record<string, unknown>) => allowed(c, 'update', 'auth/token/create', data);
    expect(ok({ policies: ['dev-a', 'default'], ttl: '1h' })).toBe(true);
    expect(ok({ policies: ['dev-a', 'root'] })).toBe(false);
    expect(ok({ policies: 'dev-b' })).toBe(true);
    expect(ok({ renewable: true, num_uses: 2 })).toBe(true);
    expect(ok({ renewable: false })).toBe(false);
    expect(ok({ num_uses: 3 })).toBe(false);
    expect(ok({ period: '1h' })).toBe(false);
  });
});

describe('ACL: wrapping TTL', () => {
  it.each<[string, number, boolean]>([
    ['max_wrapping_ttl = "1m"', 0, false],
    ['max_wrapping_ttl = "1m"', 30, true],
    ['max_wrapping_ttl = "1m"', 60, true],
    ['max_wrapping_ttl = "1m"', 61, false],
    ['min_wrapping_ttl = "1m"', 0, false],
    ['min_wrapping_ttl = "1m"', 59, false],
    ['min_wrapping_ttl = "1m"', 60, true],
    ['min_wrapping_ttl = "1m"', 86400, true],
    ['min_wrapping_ttl = 60\n max_wrapping_ttl = 120', 90, true],
    ['min_wrapping_ttl = 60\n max_wrapping_ttl = 120', 121, false],
    ['min_wrapping_ttl = 60\n max_wrapping_ttl = 60', 60, true],
    ['', 0, true],
    ['', 3600, true],
  ])('%s with wrap TTL %i → %s', (setting, ttl, expected) => {
    const b = acl(`path "w" { capabilities = ["read", "list"]\n ${setting} }`);
    expect(allowed(b, 'read', 'w', {}, ttl)).toBe(expected);
    // Wrapping constraints apply to every operation, list included.
    expect(allowed(b, 'list', 'w', {}, ttl)).toBe(expected);
  });

  it('explains a missing wrap', () => {
    const b = acl('path "w" { capabilities = ["read"]\n max_wrapping_ttl = 60 }');
    expect(b.check(req('read', 'w')).reason).toBe('rule "w" requires response wrapping with a TTL of at most 60s');
  });
});

describe('ACL: sudo', () => {
  it('reports sudo from the rule that applied', () => {
    const b = acl('path "sys/*" { capabilities = ["read"] }\npath "sys/raw/*" { capabilities = ["read", "sudo"] }');
    expect(b.check(req('read', 'sys/raw/x'))).toEqual({ allowed: true, sudo: true, rule: 'sys/raw/*' });
    expect(b.check(req('read', 'sys/mounts'))).toEqual({ allowed: true, sudo: false, rule: 'sys/*' });
  });

  it('sudo alone does not grant an operation', () => {
    const b = acl('path "sys/seal" { capabilities = ["sudo"] }');
    expect(b.check(req('update', 'sys/seal'))).toMatchObject({ allowed: false, sudo: false });
  });
});

describe('ACL: root', () => {
  it('a policy named root allows everything with sudo', () => {
    const root = ACL.compile([{ name: 'root', rules: [], templated: false }, parsePolicy('x', 'path "*" { capabilities = ["deny"] }')]);
    expect(root.root).toBe(true);
    expect(root.check(req('delete', 'sys/raw/anything', { a: 1 }))).toEqual({ allowed: true, sudo: true });
    expect(root.capabilities('anything')).toEqual(['root']);
  });

  it('other ACLs are not root', () => {
    expect(acl('path "*" { capabilities = ["sudo", "read"] }').root).toBe(false);
    expect(ACL.compile([]).root).toBe(false);
  });
});

describe('ACL: capabilities()', () => {
  const b = acl(`
    path "secret/*" { capabilities = ["update", "read", "sudo", "create", "list", "delete", "patch", "subscribe"] }
    path "secret/deny/*" { capabilities = ["deny"] }
    path "secret/none" { capabilities = [] }
    path "secret/dir" { capabilities = ["list"] }
  `);

  it.each<[string, string[]]>([
    ['secret/x', ['create', 'delete', 'list', 'patch', 'read', 'subscribe', 'sudo', 'update']],
    ['secret/deny/x', ['deny']],
    ['secret/none', ['deny']],
    ['secret/dir/', ['list']],
    ['secret/dir', ['list']],
    ['elsewhere', ['deny']],
  ])('%s → %j', (path, caps) => {
    expect(b.capabilities(path)).toEqual(caps);
  });

  it('an empty ACL reports deny', () => {
    expect(ACL.compile([]).capabilities('secret/x')).toEqual(['deny']);
  });
});

describe('ACL: templated policies', () => {
  const identity: IdentityContext = {
    entity: {
      id: 'e1',
      name: 'alice',
      metadata: { team: 'blue', evil: '*' },
      aliases: [{ mountAccessor: 'auth_up_1', id: 'a1', name: 'alice-up', metadata: {}, customMetadata: {} }],
    },
    groups: [{ id: 'g1', name: 'ops' }],
  };
  const templated = parsePolicy(
    'tpl',
    `
    path "secret/data/{{identity.entity.name}}/*" { capabilities = ["read", "update"] }
    path "secret/data/teams/{{ identity.entity.metadata.team }}/*" { capabilities = ["read"] }
    path "secret/data/groups/{{identity.groups.ids.g1.name}}" { capabilities = ["read"] }
    path "secret/data/missing/{{identity.entity.metadata.nope}}" { capabilities = ["read"] }
    path "secret/data/evil/{{identity.entity.metadata.evil}}" { capabilities = ["read"] }
    `,
  );

  it('resolves templates against the identity', () => {
    const a = ACL.compile([templated], identity);
    expect(allowed(a, 'update', 'secret/data/alice/x')).toBe(true);
    expect(allowed(a, 'update', 'secret/data/bob/x')).toBe(false);
    expect(allowed(a, 'read', 'secret/data/teams/blue/x')).toBe(true);
    expect(allowed(a, 'read', 'secret/data/teams/red/x')).toBe(false);
    expect(allowed(a, 'read', 'secret/data/groups/ops')).toBe(true);
  });

  it('skips rules whose templates cannot be resolved', () => {
    const a = ACL.compile([templated], identity);
    expect(allowed(a, 'read', 'secret/data/missing/')).toBe(false);
    expect(a.capabilities('secret/data/missing/x')).toEqual(['deny']);
  });

  it('a user-controlled value never turns into a glob', () => {
    const a = ACL.compile([templated], identity);
    expect(allowed(a, 'read', 'secret/data/evil/anything')).toBe(false);
    expect(allowed(a, 'read', 'secret/data/evil/*')).toBe(false);
  });

  it('without an identity, only untemplated rules remain', () => {
    const mixed = parsePolicy('m', 'path "a/{{identity.entity.id}}" { capabilities = ["read"] }\npath "b" { capabilities = ["read"] }');
    const a = ACL.compile([mixed]);
    expect(allowed(a, 'read', 'b')).toBe(true);
    expect(allowed(a, 'read', 'a/')).toBe(false);
    expect(allowed(a, 'read', 'a/{{identity.entity.id}}')).toBe(false);
  });

  it('resolved patterns merge with identical literal patterns', () => {
    const a = ACL.compile(
      [templated, parsePolicy('lit', 'path "secret/data/alice/*" { capabilities = ["deny"] }')],
      identity,
    );
    expect(allowed(a, 'read', 'secret/data/alice/x')).toBe(false);
  });

  it('rules a caller built by hand with malformed patterns never match', () => {
    const hand: Policy = {
      name: 'hand',
      templated: false,
      rules: [
        {
          pattern: 'secret/+*',
          capabilities: ['read'],
          allowedParameters: {},
          deniedParameters: {},
          requiredParameters: [],
          minWrappingTTL: 0,
          maxWrappingTTL: 0,
          templated: false,
        },
      ],
    };
    expect(allowed(ACL.compile([hand]), 'read', 'secret/+x')).toBe(false);
  });
});
