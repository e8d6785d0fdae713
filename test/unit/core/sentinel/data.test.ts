// The data imports Vault injects into RGPs and EGPs (src/core/sentinel/data/): every field of
// request, token, identity, mfa, namespace and controlgroup, read by real policies through the
// parser and evaluator with the standard imports beside them; unauthenticated requests and
// callers without an entity; laziness (nothing converted until a policy reads it); and the five
// example policies of reference §6.4, each passing and failing.

import { describe, expect, it } from 'vitest';
import { parsePolicy, standardImports } from '../../../../src/core/sentinel';
import { dataImports, type DataFacts, type RequestFacts } from '../../../../src/core/sentinel/data';
import { evaluatePolicy, type PolicyResult } from '../../../../src/core/sentinel/evaluate';
import type { SentinelIdentity } from '../../../../src/core/identity/types';
import type { AuthContext } from '../../../../src/framework/backend';
import { upsertEntity } from '../../../../src/engines/identity/entities';
import { upsertGroup } from '../../../../src/engines/identity/groups';
import { loginEntity } from '../../../../src/engines/identity/login';
import { identityView } from '../../../../src/engines/identity/views';
import { fresh, JWT } from '../../engines/identity/fixtures';

// ---- Facts ---------------------------------------------------------------------------------------

const NOW = Date.parse('2026-06-01T00:00:00Z');
const ISSUED = '2026-05-01T12:00:00.123456789Z';

const request = (over: Partial<RequestFacts> = {}): RequestFacts => ({
  path: 'secret/data/foo',
  operation: 'read',
  data: { paths: 'a,b', nested: { n: 3, f: 1.5, list: ['x', 'y'] } },
  remoteAddr: '10.20.1.5',
  policyOverride: false,
  unauthenticated: false,
  wrapTTL: 0,
  ...over,
});

const auth = (over: Partial<AuthContext> = {}): AuthContext => ({
  accessor: 'acc-1',
  policies: ['default', 'web'],
  root: false,
  displayName: 'userpass-alice',
  entityId: 'e-1',
  tokenType: 'service',
  boundCidrs: [],
  metadata: { team: 'blue' },
  ttl: 3600,
  issueTime: ISSUED,
  tokenPath: 'auth/userpass/login/alice',
  numUses: 5,
  period: 1800,
  explicitMaxTtl: 7200,
  role: 'ops',
  ...over,
});

const identity = (): SentinelIdentity => ({
  entity: {
    id: 'e-1',
    name: 'alice',
    metadata: { org_id: '7' },
    policies: ['ent-p'],
    disabled: false,
    creation_time: '2026-01-01T00:00:00Z',
    last_update_time: '2026-02-01T00:00:00Z',
    merged_entity_ids: ['e-0'],
    aliases: [
      {
        id: 'a-1',
        name: 'alice',
        mount_accessor: 'auth_userpass_1',
        metadata: { k: 'v' },
        custom_metadata: { badge: '7' },
        creation_time: '2026-01-01T00:00:00Z',
        last_update_time: '2026-01-02T00:00:00Z',
        merged_from_entity_ids: [],
      },
    ],
  },
  groups: [
    {
      id: 'g-1', name: 'devs', metadata: { tier: 'a' }, policies: ['dev-p'], member_entity_ids: ['e-1'], parent_group_ids: ['g-2'],
      creation_time: '2026-01-03T00:00:00Z', last_update_time: '2026-01-04T00:00:00Z',
    },
    {
      id: 'g-2', name: 'eng', metadata: {}, policies: [], member_entity_ids: [], parent_group_ids: [],
      creation_time: '2026-01-05T00:00:00Z', last_update_time: '2026-01-06T00:00:00Z',
    },
  ],
});

interface Over {
  request?: Partial<RequestFacts>;
  auth?: Partial<AuthContext> | null;
  identity?: SentinelIdentity | null;
}

const facts = (over: Over = {}): DataFacts => ({
  request: request(over.request),
  auth: over.auth === null ? null : auth(over.auth),
  identity: over.identity === undefined ? identity() : over.identity,
});

// ---- Harness -------------------------------------------------------------------------------------

function run(src: string, f: DataFacts = facts()): PolicyResult {
  return evaluatePolicy(parsePolicy(src), { imports: { ...standardImports(() => NOW), ...dataImports(f) } });
}

/** `expr` (a bool expression over the imports) holds without error. */
function holds(expr: string, f: DataFacts = facts()): void {
  const r = run(`main = rule { ${expr} }`, f);
  expect(r.error, expr).toBeUndefined();
  expect(r.result, `${expr}\n${r.trace.join('\n')}`).toBe(true);
}

const cases = (name: string, exprs: string[], over: Over = {}) =>
  describe(name, () => {
    it.each(exprs)('%s', (expr) => holds(expr, facts(over)));
  });

// ---- request -------------------------------------------------------------------------------------

cases('request', [
  'request.path == "secret/data/foo"',
  'request.operation == "read"',
  'request.data.paths == "a,b"',
  'request.data.nested.n == 3 and request.data.nested.f == 1.5',
  'request.data.nested.list[1] == "y" and request.data["nested"]["list"] == ["x", "y"]',
  'keys(request.data) == ["paths", "nested"]',
  'request.data.missing is not defined',
  'request.connection.remote_addr == "10.20.1.5"',
  'request.policy_override is false',
  'request.unauthenticated is false',
  'request.wrapping.ttl == 0 and request.wrapping.ttl_seconds == 0',
  'request.replication.dr.mode == "disabled" and request.replication.performance.mode == "disabled"',
  'request.replication.mode.dr == "disabled" and request.replication.mode.replication == "disabled"',
  'request.no_such_field is not defined',
]);

cases('request with wrapping, override and an unauthenticated path', [
  'request.wrapping.ttl == 5 * time.minute and request.wrapping.ttl_seconds == 300',
  'request.policy_override is true',
  'request.unauthenticated is true',
  'request.data is empty',
], { request: { wrapTTL: 300, policyOverride: true, unauthenticated: true, data: {} } });

cases('request operations', ['request.operation in ["create", "update"]'], { request: { operation: 'update' } });

// ---- token ---------------------------------------------------------------------------------------

const ISSUED_UNIX = Math.floor(Date.parse('2026-05-01T12:00:00Z') / 1000);

cases('token', [
  `token.creation_time == "${ISSUED}"`,
  `token.creation_time_unix == ${ISSUED_UNIX}`,
  'time.load(token.creation_time).unix == token.creation_time_unix',
  'token.creation_ttl == time.hour and token.creation_ttl_seconds == 3600',
  'time.load(token.creation_time_unix).add(token.creation_ttl).unix == token.creation_time_unix + 3600',
  'token.display_name == "userpass-alice"',
  'token.entity_id == "e-1"',
  'token.explicit_max_ttl == 2 * time.hour and token.explicit_max_ttl_seconds == 7200',
  'token.metadata == {"team": "blue"} and token.metadata.team == "blue"',
  'token.num_uses == 5',
  'token.path == "auth/userpass/login/alice"',
  'token.period == 30 * time.minute and token.period_seconds == 1800',
  'token.policies == ["default", "web"] and "web" in token.policies',
  'token.role == "ops"',
  'token.type == "service"',
  'token.namespace.id == "root" and token.namespace.path == ""',
  'token.no_such_field is not defined',
]);

cases('token with no metadata, role or period (a batch token)', [
  'token.metadata is empty',
  'token.role == ""',
  'token.period == 0 and token.period_seconds == 0',
  'token.type == "batch"',
], { auth: { metadata: null, role: '', period: 0, tokenType: 'batch' } });

cases('token built without the optional fields: those are undefined, metadata is empty', [
  'token.path is not defined and token.role is not defined and token.num_uses is not defined',
  'token.creation_time is not defined and token.creation_ttl is not defined',
  'token.metadata is empty and token.display_name == "userpass-alice"',
], { auth: { metadata: undefined, tokenPath: undefined, role: undefined, numUses: undefined, issueTime: undefined, ttl: undefined } });

const TOKEN_FIELDS = [
  'creation_time', 'creation_time_unix', 'creation_ttl', 'creation_ttl_seconds', 'display_name', 'entity_id',
  'explicit_max_ttl', 'explicit_max_ttl_seconds', 'metadata', 'num_uses', 'path', 'period', 'period_seconds',
  'policies', 'role', 'type', 'namespace',
];

describe('token on an unauthenticated request', () => {
  const anon = () => facts({ auth: null, request: { path: 'auth/userpass/login/alice', operation: 'update', unauthenticated: true } });
  it('answers undefined for every field', () => {
    holds(`all ${JSON.stringify(TOKEN_FIELDS)} as f { token[f] is not defined }`, anon());
  });
  it('every field is defined for a token (the same list)', () => {
    holds(`all ${JSON.stringify(TOKEN_FIELDS)} as f { token[f] is defined }`);
  });
  it('`token.policies else []` gives an empty list', () => {
    holds('(token.policies else []) == []', anon());
  });
  it('a rule over token fields without a default is undefined, so main is false', () => {
    const r = run('main = rule { "web" in token.policies }', anon());
    expect(r.result).toBe(false);
    expect(r.trace).toContain('main is undefined (treated as false)');
  });
});

it('a policy that appends to token.policies changes its own copy (for the run), never the token', () => {
  const f = facts();
  const r = run('append(token.policies, "root")\nmain = rule { "root" in token.policies }', f);
  expect(r).toEqual({ result: true, trace: [] });
  expect(f.auth?.policies).toEqual(['default', 'web']);
});

// ---- identity ------------------------------------------------------------------------------------

cases('identity.entity', [
  'identity.entity.id == "e-1" and identity.entity.name == "alice"',
  'identity.entity.metadata.org_id == "7"',
  'identity.entity.policies == ["ent-p"] and identity.entity.disabled is false',
  'identity.entity.creation_time == "2026-01-01T00:00:00Z" and identity.entity.last_update_time == "2026-02-01T00:00:00Z"',
  'identity.entity.merged_entity_ids == ["e-0"]',
  'length(identity.entity.aliases) == 1',
  'identity.entity.aliases[0].id == "a-1" and identity.entity.aliases[0].name == "alice"',
  'identity.entity.aliases[0].mount_accessor == "auth_userpass_1"',
  'identity.entity.aliases[0].metadata.k == "v" and identity.entity.aliases[0].custom_metadata.badge == "7"',
  'identity.entity.aliases[0].creation_time == "2026-01-01T00:00:00Z" and identity.entity.aliases[0].last_update_time == "2026-01-02T00:00:00Z"',
  'identity.entity.aliases[0].merged_from_entity_ids == []',
  'identity.entity.aliases[0].mount_path is not defined',
]);

cases('identity.groups', [
  'identity.groups.names == ["devs", "eng"]',
  'identity.groups.ids == ["g-1", "g-2"]',
  'keys(identity.groups.by_id) == ["g-1", "g-2"] and keys(identity.groups.by_name) == ["devs", "eng"]',
  'identity.groups.by_id["g-1"].name == "devs" and identity.groups.by_name.eng.id == "g-2"',
  'identity.groups.by_name.devs.metadata.tier == "a" and identity.groups.by_name.devs.policies == ["dev-p"]',
  'identity.groups.by_id["g-1"].member_entity_ids == ["e-1"] and identity.groups.by_id["g-1"].parent_group_ids == ["g-2"]',
  'identity.groups.by_id["g-2"].creation_time == "2026-01-05T00:00:00Z" and identity.groups.by_id["g-2"].last_update_time == "2026-01-06T00:00:00Z"',
  'any identity.groups.by_name as name, g { g.id == "g-2" and name == "eng" }',
  'identity.groups.by_name.nobody is not defined',
]);

cases('identity without an entity', [
  'identity.entity is not defined',
  'identity.entity.name is not defined',
  'identity.groups.names is empty and identity.groups.ids is empty',
  'identity.groups.by_id is empty and identity.groups.by_name is empty',
  '"devs" not in identity.groups.names',
], { identity: null });

it('identity facts come from the identity store (identityView().sentinel)', async () => {
  const { store } = fresh();
  const { entityId } = await loginEntity(store, { mountAccessor: JWT, mountPath: 'auth/jwt/', mountType: 'jwt', aliasName: 'u1', aliasMetadata: { team: 'blue' } });
  await upsertEntity(store, { id: entityId, name: 'Ursula', policies: ['p1'], metadata: { org_id: '100' } });
  const { group: inner } = await upsertGroup(store, { name: 'inner', memberEntityIds: [entityId] });
  const { group: outer } = await upsertGroup(store, { name: 'outer', memberGroupIds: [inner.id] });
  const view = (await identityView(store, entityId))!;
  expect(JSON.parse(JSON.stringify(view.sentinel))).toEqual(view.sentinel);
  const f = facts({ identity: view.sentinel });
  holds(`identity.entity.id == "${entityId}" and identity.entity.name == "Ursula" and identity.entity.metadata.org_id == "100"`, f);
  holds(`identity.entity.aliases[0].name == "u1" and identity.entity.aliases[0].mount_accessor == "${JWT}" and identity.entity.aliases[0].metadata.team == "blue"`, f);
  holds('identity.entity.merged_entity_ids == [] and identity.entity.policies == ["p1"]', f);
  holds(`identity.groups.names == ["inner", "outer"] and identity.groups.by_name.inner.parent_group_ids == ["${outer.id}"]`, f);
  holds(`identity.groups.by_id["${inner.id}"].member_entity_ids == ["${entityId}"]`, f);
});

// ---- mfa, namespace, controlgroup ----------------------------------------------------------------

cases('mfa (no MFA in Coffer: every method fails closed)', [
  'mfa.methods.okta.valid is false',
  'mfa.methods["okta"].valid is false',
  'mfa.methods["any name at all"].valid is false',
  'not (mfa.methods.okta.valid else true)',
]);

it('mfa: changing a method map read by a policy does not make it valid', () => {
  const r = run(`
m = mfa.methods.ping
m["valid"] = true
main = rule { m.valid and mfa.methods.ping.valid }
`);
  expect(r.error).toBeUndefined();
  expect(r.result).toBe(false);
});

it('mfa: a rule requiring a method denies', () => {
  const r = run('import "mfa"\nmain = rule { mfa.methods.okta.valid }');
  expect(r).toEqual({ result: false, trace: ['rule main (2:8) = false'] });
});

cases('namespace and controlgroup', [
  'namespace.id == "root" and namespace.path == ""',
  'controlgroup.time is not defined',
  'controlgroup.authorizations is empty and length(controlgroup.authorizations) == 0',
]);

// ---- the record and laziness ---------------------------------------------------------------------

describe('dataImports', () => {
  it('gives the six imports on a record without a prototype', () => {
    const imports = dataImports(facts());
    expect(Object.getPrototypeOf(imports)).toBeNull();
    expect(Object.keys(imports).sort()).toEqual(['controlgroup', 'identity', 'mfa', 'namespace', 'request', 'token']);
  });

  it('works as explicit imports too, and `import "constructor"` finds nothing', () => {
    expect(run('import "token"\nimport "request"\nmain = rule { token.role == "ops" and request.path is not empty }').result).toBe(true);
    expect(run('import "constructor"\nmain = true').error).toContain('import "constructor" is not available');
  });

  it('an import member is not a function', () => {
    expect(run('main = rule { request.path() == "" }').error).toContain('request.path is not a function');
    expect(run('main = rule { token.nope() }').error).toContain('token.nope does not exist');
  });

  it('does not touch request.data for a policy that reads only request.path', () => {
    const f = facts();
    let touched = 0;
    Object.defineProperty(f.request, 'data', {
      get: () => {
        touched++;
        throw new Error('request.data was touched');
      },
    });
    const imports = dataImports(f);
    expect(touched).toBe(0);
    const r = evaluatePolicy(parsePolicy('main = rule { request.path == "secret/data/foo" }'), { imports });
    expect(r).toEqual({ result: true, trace: [] });
    expect(touched).toBe(0);
    // Reading it does touch it, and the failure is the policy's, not the host's.
    const bad = run('main = rule { request.data is empty }', f);
    expect(touched).toBe(1);
    expect(bad.result).toBe(false);
    expect(bad.error).toContain('request.data was touched');
  });

  it('converts a field once per call, however often the policy reads it', () => {
    const f = facts();
    let reads = 0;
    const data = f.request.data;
    Object.defineProperty(f.request, 'data', {
      get: () => {
        reads++;
        return data;
      },
    });
    holds('request.data.paths == "a,b" and request.data.nested.n == 3 and keys(request.data) is not empty', f);
    expect(reads).toBe(1);
  });

  it('leaves the identity alone until a policy reads it, and converts entity and groups separately', () => {
    const id = identity();
    const seen: string[] = [];
    const spy: SentinelIdentity = {
      get entity() {
        seen.push('entity');
        return id.entity;
      },
      get groups() {
        seen.push('groups');
        return id.groups;
      },
    };
    const f = facts({ identity: spy });
    holds('token.role == "ops" and request.operation == "read"', f);
    expect(seen).toEqual([]);
    holds('"devs" in identity.groups.names and identity.groups.ids[0] == "g-1"', f);
    expect(seen).toEqual(['groups']);
  });
});

// ---- Reference §6.4 example policies -------------------------------------------------------------

const LOGIN_GUARD = `
import "sockaddr"
import "mfa"
import "strings"

# Logins only from the private range
cidrcheck = rule {
    sockaddr.is_contained("10.20.0.0/16", request.connection.remote_addr)
}

# The Ping MFA method must have validated
ping_valid = rule {
    mfa.methods.ping.valid
}

main = rule when strings.has_prefix(request.path, "auth/ldap/login") {
    ping_valid and cidrcheck
}
`;

const IDENTITY_ALLOW = `
main = rule {
    identity.entity.name is "jeff" or
    identity.entity.id is "fe2a5bfd-c483-9263-b0d4-f9d345efdf9f" or
    "sysops" in identity.groups.names or
    "14c0940a-5c07-4b97-81ec-0d423accb8e0" in keys(identity.groups.by_id)
}
`;

const BREAK_GLASS = `
import "time"

# Tokens created before the cutoff are refused everywhere
main = rule when not request.unauthenticated {
    time.load(token.creation_time).unix > time.load("2026-03-01T00:00:00Z").unix
}
`;

const DELEGATED_EGP = `
import "strings"

allowed_prefixes = ["secret/team-a/", "kv/team-a/"]

precond = rule {
    request.operation in ["create", "update"] and
    strings.has_prefix(request.path, "sys/policies/egp/")
}

func paths_allowed(paths) {
    for strings.split(paths, ",") as p {
        p = strings.trim_prefix(strings.trim_space(p), "/")
        ok = any allowed_prefixes as prefix { strings.has_prefix(p, prefix) }
        if not ok {
            return false
        }
    }
    return true
}

main = rule when precond {
    strings.has_prefix(request.path, "sys/policies/egp/team-a-") and
    paths_allowed(request.data.paths)
}
`;

const DENY_ORG = `
precond = rule {
    identity.entity.metadata.org_id is "100"
}

main = rule when precond {
    false
}
`;

const withGroup = (name: string, id = 'g-x'): SentinelIdentity => {
  const i = identity();
  i.groups = [{ ...i.groups[0], id, name }];
  return i;
};

const withEntity = (over: Partial<SentinelIdentity['entity']>): SentinelIdentity => {
  const i = identity();
  i.entity = { ...i.entity, ...over };
  return i;
};

describe('reference §6.4 example policies', () => {
  const ldap = { path: 'auth/ldap/login/alice', operation: 'update', unauthenticated: true };

  it('1. login guard: other paths pass, from anywhere', () => {
    expect(run(LOGIN_GUARD, facts({ request: { remoteAddr: '192.168.1.1' } }))).toEqual({ result: true, trace: [] });
  });
  it('1. login guard: an LDAP login from the range is denied, because MFA fails closed', () => {
    const r = run(LOGIN_GUARD, facts({ auth: null, request: ldap }));
    expect(r.result).toBe(false);
    expect(r.error).toBeUndefined();
    expect(r.trace).toEqual(['rule ping_valid (12:14) = false', 'rule main (16:8) = false']);
  });
  it('1. login guard without its MFA rule: in the range passes, outside is denied', () => {
    const cidrOnly = LOGIN_GUARD.replace('ping_valid and cidrcheck', 'cidrcheck');
    expect(run(cidrOnly, facts({ auth: null, request: ldap })).result).toBe(true);
    const r = run(cidrOnly, facts({ auth: null, request: { ...ldap, remoteAddr: '192.168.1.1' } }));
    expect(r.result).toBe(false);
    expect(r.trace).toContain('rule cidrcheck (7:13) = false');
  });

  it('2. identity allow-list: by entity name', () => {
    expect(run(IDENTITY_ALLOW, facts({ identity: withEntity({ name: 'jeff' }) })).result).toBe(true);
  });
  it('2. identity allow-list: by entity id', () => {
    expect(run(IDENTITY_ALLOW, facts({ identity: withEntity({ id: 'fe2a5bfd-c483-9263-b0d4-f9d345efdf9f' }) })).result).toBe(true);
  });
  it('2. identity allow-list: by group name, and by group id', () => {
    expect(run(IDENTITY_ALLOW, facts({ identity: withGroup('sysops') })).result).toBe(true);
    expect(run(IDENTITY_ALLOW, facts({ identity: withGroup('other', '14c0940a-5c07-4b97-81ec-0d423accb8e0') })).result).toBe(true);
  });
  it('2. identity allow-list: anyone else is denied', () => {
    expect(run(IDENTITY_ALLOW).result).toBe(false);
  });
  it('2. identity allow-list: no entity is denied', () => {
    expect(run(IDENTITY_ALLOW, facts({ identity: null })).result).toBe(false);
  });

  it('3. break glass: a token issued after the cutoff passes', () => {
    expect(run(BREAK_GLASS)).toEqual({ result: true, trace: [] });
  });
  it('3. break glass: a token issued before the cutoff is refused', () => {
    const r = run(BREAK_GLASS, facts({ auth: { issueTime: '2026-02-28T23:59:59Z' } }));
    expect(r.result).toBe(false);
    expect(r.error).toBeUndefined();
  });
  it('3. break glass: unauthenticated requests pass (no token to judge)', () => {
    expect(run(BREAK_GLASS, facts({ auth: null, request: { unauthenticated: true } })).result).toBe(true);
  });

  const egp = (path: string, paths: unknown, operation = 'update') => facts({ request: { path, operation, data: { paths } } });
  it('4. delegated EGP: the team writes a policy over its own paths', () => {
    expect(run(DELEGATED_EGP, egp('sys/policies/egp/team-a-read', 'secret/team-a/x, /kv/team-a/*')).result).toBe(true);
  });
  it('4. delegated EGP: a path outside the team prefixes is refused', () => {
    expect(run(DELEGATED_EGP, egp('sys/policies/egp/team-a-read', 'secret/team-a/x,secret/team-b/y')).result).toBe(false);
  });
  it('4. delegated EGP: a policy name without the team prefix is refused', () => {
    expect(run(DELEGATED_EGP, egp('sys/policies/egp/other', 'secret/team-a/x', 'create')).result).toBe(false);
  });
  it('4. delegated EGP: reads and other paths are not concerned', () => {
    expect(run(DELEGATED_EGP, egp('sys/policies/egp/other', 'x', 'read')).result).toBe(true);
    expect(run(DELEGATED_EGP, egp('secret/data/x', 'x')).result).toBe(true);
  });
  it('4. delegated EGP: paths missing from the body deny', () => {
    const r = run(DELEGATED_EGP, facts({ request: { path: 'sys/policies/egp/team-a-x', operation: 'create', data: {} } }));
    expect(r.result).toBe(false);
  });

  it('5. deny an org: members of the org are denied', () => {
    const r = run(DENY_ORG, facts({ identity: withEntity({ metadata: { org_id: '100' } }) }));
    expect(r).toEqual({ result: false, trace: ['rule precond (2:11) = true', 'rule main (6:8) = false'] });
  });
  it('5. deny an org: other orgs pass', () => {
    expect(run(DENY_ORG).result).toBe(true);
  });
  it('5. deny an org: no entity leaves the guard undefined, so main is not true', () => {
    expect(run(DENY_ORG, facts({ identity: null })).result).toBe(false);
  });
});
