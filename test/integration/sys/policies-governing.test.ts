// Sentinel RGPs and EGPs end to end in workerd: the sys/policies/rgp|egp endpoints and their bad
// input, then enforcement in the one pipeline on every kind of object (sys on the SystemObject,
// auth/token on a token shard, kv and jwt on mount objects): levels, the override header, EGP
// globs and "*", unauthenticated login paths, RGPs via token, entity and group, deletion lifting
// a policy at once, a runaway policy, and the audit entries that carry the trace.
import { afterAll, beforeAll, describe, expect, it, vi, type MockInstance } from 'vitest';
import { api, caller, initCluster, PERMISSION_DENIED, type Cluster } from '../../helpers/api';

let c: Cluster;
let logSpy: MockInstance<typeof console.log>;
let warnSpy: MockInstance<typeof console.warn>;
const { call: root, ok } = caller(() => c.root);
const as = (token: string, method: string, path: string, body?: unknown, headers?: Record<string, string>) => api(method, path, { token, body, headers });

const ALLOW = 'main = rule { true }';
const DENY = 'main = rule { false }';
const reader = 'path "secret/*" { capabilities = ["create", "read", "update", "list"] }\npath "auth/token/lookup-self" { capabilities = ["read"] }';

async function tokenWith(policies: string[], meta?: Record<string, string>): Promise<string> {
  return (await ok('POST', 'auth/token/create', { policies, ...(meta ? { meta } : {}) })).body.auth.client_token as string;
}
const putRgp = (name: string, policy: string, level = 'hard-mandatory') => ok('PUT', `sys/policies/rgp/${name}`, { policy, enforcement_level: level });
const putEgp = (name: string, paths: unknown, policy: string, level = 'hard-mandatory') =>
  ok('PUT', `sys/policies/egp/${name}`, { policy, enforcement_level: level, paths });
const auditLines = (): any[] =>
  logSpy.mock.calls
    .map((args) => args.map(String).join(' '))
    .filter((line) => line.startsWith('SENTINEL-AUDIT: '))
    .map((line) => JSON.parse(line.slice('SENTINEL-AUDIT: '.length)));

beforeAll(async () => {
  logSpy = vi.spyOn(console, 'log').mockImplementation(() => undefined);
  warnSpy = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
  c = await initCluster();
  await ok('POST', 'sys/mounts/secret', { type: 'kv' });
  await ok('PUT', 'secret/app', { v: 'app' });
  await ok('PUT', 'secret/team/a', { v: 'a' });
  await ok('PUT', 'sys/policies/acl/reader', { policy: reader });
});
afterAll(() => {
  logSpy.mockRestore();
  warnSpy.mockRestore();
});

describe('managing RGPs and EGPs', () => {
  it('writes, reads, lists and deletes an RGP', async () => {
    expect((await root('PUT', 'sys/policies/rgp/Team-Rule', { policy: ALLOW, enforcement_level: 'advisory' })).body.warnings).toEqual([
      'policy name was converted to team-rule',
    ]);
    const read = (await root('GET', 'sys/policies/rgp/team-rule')).body;
    expect(read.data).toEqual({ name: 'team-rule', policy: ALLOW, enforcement_level: 'advisory' });
    expect((await root('GET', 'sys/policies/rgp?list=true')).body.data.keys).toEqual(['team-rule']);
    expect((await root('DELETE', 'sys/policies/rgp/team-rule')).status).toBe(204);
    expect((await root('GET', 'sys/policies/rgp/team-rule')).status).toBe(404);
    expect((await root('GET', 'sys/policies/rgp?list=true')).status).toBe(404);
  });

  it('writes an EGP with paths as a list or a comma string, and lists name_path_map', async () => {
    expect((await root('PUT', 'sys/policies/egp/one', { policy: ALLOW, enforcement_level: 'soft-mandatory', paths: ['/secret/*', 'sys/mounts'] })).status).toBe(204);
    expect((await root('PUT', 'sys/policies/egp/two', { policy: btoa(ALLOW), enforcement_level: 'advisory', paths: 'secret/app, *' })).status).toBe(204);
    expect((await root('GET', 'sys/policies/egp/one')).body.data).toEqual({ name: 'one', policy: ALLOW, enforcement_level: 'soft-mandatory', paths: ['secret/*', 'sys/mounts'] });
    // base64 is decoded before it is stored.
    expect((await root('GET', 'sys/policies/egp/two')).body.data.policy).toBe(ALLOW);
    const list = (await root('GET', 'sys/policies/egp?list=true')).body.data;
    expect(list.keys).toEqual(['one', 'two']);
    expect(list.name_path_map).toEqual({
      one: [
        { path: 'secret/*', glob: true },
        { path: 'sys/mounts', glob: false },
      ],
      two: [
        { path: 'secret/app', glob: false },
        { path: '*', glob: true },
      ],
    });
    await ok('DELETE', 'sys/policies/egp/one');
    await ok('DELETE', 'sys/policies/egp/two');
  });

  it('refuses a policy that does not parse with line, column and what was expected', async () => {
    const r = await root('PUT', 'sys/policies/rgp/broken', { policy: 'main = rule {\n  true and\n}', enforcement_level: 'advisory' });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^failed to parse policy: rgp\/broken:3:1: expected /);
    const e = await root('PUT', 'sys/policies/egp/broken', { policy: 'main = rule { 1 + }', enforcement_level: 'advisory', paths: '*' });
    expect(e.body.errors[0]).toMatch(/^failed to parse policy: egp\/broken:1:19: expected expression/);
    expect((await root('GET', 'sys/policies/rgp/broken')).status).toBe(404);
  });

  it.each([
    ['rgp', 'no policy', { enforcement_level: 'advisory' }, "'policy' parameter not supplied or empty"],
    ['rgp', 'null policy', { policy: null, enforcement_level: 'advisory' }, "'policy' parameter not supplied or empty"],
    ['rgp', 'no level', { policy: ALLOW }, 'missing enforcement_level'],
    ['rgp', 'null level', { policy: ALLOW, enforcement_level: null }, 'missing enforcement_level'],
    ['rgp', 'unknown level', { policy: ALLOW, enforcement_level: 'strict' }, 'unknown enforcement_level "strict"'],
    ['rgp', 'level of the wrong type', { policy: ALLOW, enforcement_level: ['advisory'] }, 'enforcement_level'],
    ['egp', 'no paths', { policy: ALLOW, enforcement_level: 'advisory' }, 'paths cannot be empty'],
    ['egp', 'null paths', { policy: ALLOW, enforcement_level: 'advisory', paths: null }, 'paths cannot be empty'],
    ['egp', 'blank paths', { policy: ALLOW, enforcement_level: 'advisory', paths: ' , ' }, 'paths cannot be empty'],
    ['egp', 'a star inside a path', { policy: ALLOW, enforcement_level: 'advisory', paths: ['secret/*/x'] }, '"*" may only end a path'],
    ['egp', 'paths of the wrong type', { policy: ALLOW, enforcement_level: 'advisory', paths: { a: 1 } }, 'paths'],
  ])('%s: refuses %s', async (kind, _what, body, message) => {
    const r = await root('PUT', `sys/policies/${kind}/bad`, body);
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toContain(message);
    expect((await root('GET', `sys/policies/${kind}/bad`)).status).toBe(404);
  });

  it('RGP names share the ACL namespace, both ways', async () => {
    expect((await root('PUT', 'sys/policies/rgp/reader', { policy: ALLOW, enforcement_level: 'advisory' })).body.errors[0]).toContain('an ACL policy has that name');
    expect((await root('PUT', 'sys/policies/rgp/default', { policy: ALLOW, enforcement_level: 'advisory' })).status).toBe(400);
    expect((await root('PUT', 'sys/policies/rgp/root', { policy: ALLOW, enforcement_level: 'advisory' })).status).toBe(400);
    await putRgp('shared', ALLOW);
    expect((await root('PUT', 'sys/policies/acl/shared', { policy: reader })).body.errors[0]).toContain('an RGP has that name');
    // EGP names are their own.
    await putEgp('reader', 'nothing/here', ALLOW);
    await ok('DELETE', 'sys/policies/egp/reader');
    await ok('DELETE', 'sys/policies/rgp/shared');
  });

  it('is governed by ACLs like any sys path', async () => {
    const t = await tokenWith(['reader']);
    expect((await as(t, 'PUT', 'sys/policies/rgp/x', { policy: ALLOW, enforcement_level: 'advisory' })).body.errors).toEqual([PERMISSION_DENIED]);
    expect((await as(t, 'GET', 'sys/policies/egp?list=true')).status).toBe(403);
  });
});

describe('hostile policy texts', () => {
  it('mutated and random texts are stored or refused with a 400, never crash the object, and never stay half-written', async () => {
    const seeds = [
      'import "strings"\nmain = rule when request.operation is "update" { strings.has_prefix(request.path, "secret/") }',
      'f = func(x) { for x as k, v { if v > 1 { return true } } return false }\nmain = rule { f({"a": 1, "b": 2}) }',
      'main = rule { all [1, 2, 3] as n { n in range(0, 4) } and any {"k": "v"} as k, v { v matches "^v$" } }',
    ];
    let state = 7;
    const rand = (n: number) => {
      state = (state * 1103515245 + 12345) % 2147483648;
      return state % n;
    };
    const alphabet = '{}[]()"\\\n =!<>+-*/%,.:;#abcdefrule main when import func return all any as in is not and or else filter map 0123456789\u0000\u00e9\ud83d\ude00';
    const texts: string[] = [];
    for (let i = 0; i < 60; i++) {
      let t = seeds[i % seeds.length];
      for (let m = 0; m < 1 + rand(4); m++) {
        const at = rand(t.length + 1);
        t = rand(2) ? t.slice(0, at) + alphabet[rand(alphabet.length)] + t.slice(at) : t.slice(0, at) + t.slice(at + 1 + rand(3));
      }
      texts.push(t);
    }
    for (let i = 0; i < 20; i++) texts.push(Array.from({ length: 1 + rand(200) }, () => alphabet[rand(alphabet.length)]).join(''));
    for (const [i, policy] of texts.entries()) {
      const r = await root('PUT', `sys/policies/rgp/fuzz-${i}`, { policy, enforcement_level: 'advisory' });
      expect([204, 400], `${r.status} ${r.text} for ${JSON.stringify(policy)}`).toContain(r.status);
      const read = await root('GET', `sys/policies/rgp/fuzz-${i}`);
      expect(read.status).toBe(r.status === 204 ? 200 : 404);
      if (r.status === 204) await ok('DELETE', `sys/policies/rgp/fuzz-${i}`);
    }
    expect((await root('GET', 'secret/app')).status).toBe(200);
  });
});

describe('enforcing EGPs', () => {
  it('hard-mandatory denies with a 403 naming the policy, its level and the trace; deletion lifts it at once', async () => {
    const t = await tokenWith(['reader']);
    await putEgp('no-team', 'secret/team/*', 'is_team = rule { strings.has_prefix(request.path, "secret/team/") }\nmain = rule { not is_team }');
    const r = await as(t, 'GET', 'secret/team/a');
    expect(r.status).toBe(403);
    const text = r.body.errors[0] as string;
    expect(text).toMatch(/^2 errors occurred:\n\t\* egp standard policy "root\/no-team" evaluation resulted in denial \(enforcement level: hard-mandatory\)\./);
    expect(text).toContain('rule is_team (1:11) = true');
    expect(text).toContain('permission denied');
    // Other paths are not governed by it; root tokens never are.
    expect((await as(t, 'GET', 'secret/app')).status).toBe(200);
    expect((await root('GET', 'secret/team/a')).status).toBe(200);
    await ok('DELETE', 'sys/policies/egp/no-team');
    expect((await as(t, 'GET', 'secret/team/a')).status).toBe(200);
  });

  it('soft-mandatory denies unless X-Vault-Policy-Override is true; advisory never denies', async () => {
    const t = await tokenWith(['reader']);
    await putEgp('soft', 'secret/app', DENY, 'soft-mandatory');
    expect((await as(t, 'GET', 'secret/app')).status).toBe(403);
    expect((await as(t, 'GET', 'secret/app', undefined, { 'X-Vault-Policy-Override': 'false' })).status).toBe(403);
    expect((await as(t, 'GET', 'secret/app', undefined, { 'X-Vault-Policy-Override': 'true' })).status).toBe(200);
    const bad = await as(t, 'GET', 'secret/app', undefined, { 'X-Vault-Policy-Override': 'please' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toContain('X-Vault-Policy-Override');
    // Override never lifts hard-mandatory.
    await putEgp('soft', 'secret/app', DENY, 'hard-mandatory');
    expect((await as(t, 'GET', 'secret/app', undefined, { 'X-Vault-Policy-Override': 'true' })).status).toBe(403);
    await putEgp('soft', 'secret/app', DENY, 'advisory');
    warnSpy.mockClear();
    expect((await as(t, 'GET', 'secret/app')).status).toBe(200);
    expect(warnSpy.mock.calls.map((a) => String(a[0]))).toContain('advisory policy "egp/soft" failed for read secret/app');
    await ok('DELETE', 'sys/policies/egp/soft');
  });

  it('an EGP on "*" governs every object, sees the operation and data, and spares root generation', async () => {
    // Writes need a "ticket" field; reads pass.
    await putEgp('ticketed', '*', 'main = rule when request.operation in ["create", "update"] { "ticket" in keys(request.data) }');
    const t = await tokenWith(['reader']);
    expect((await as(t, 'PUT', 'secret/new', { v: 1 })).status).toBe(403);
    expect((await as(t, 'PUT', 'secret/new', { v: 1, ticket: 'T-1' })).status).toBe(204);
    expect((await as(t, 'GET', 'secret/new')).status).toBe(200);
    // A token shard (auth/token) and the SystemObject (sys/) enforce it too.
    expect((await as(t, 'POST', 'auth/token/renew-self', {})).status).toBe(403);
    expect((await as(t, 'GET', 'auth/token/lookup-self')).status).toBe(200);
    // Root generation stays reachable whatever the EGPs say.
    expect((await api('GET', 'sys/generate-root/attempt')).status).toBe(200);
    await ok('DELETE', 'sys/policies/egp/ticketed');
  });

  it('governs unauthenticated login paths, with no token data', async () => {
    await ok('POST', 'sys/auth/jwt', { type: 'jwt' });
    await putEgp('login-guard', 'auth/jwt/login', 'main = rule { request.unauthenticated and token.policies is not defined and sockaddr.is_contained("10.0.0.0/8", request.connection.remote_addr) }');
    const r = await api('POST', 'auth/jwt/login', { body: { role: 'x', jwt: 'a.b.c' } });
    expect(r.status).toBe(403);
    expect(r.body.errors[0]).toContain('egp standard policy "root/login-guard"');
    // From an allowed address the request reaches the method (which refuses the JWT itself).
    const allowed = await api('POST', 'auth/jwt/login', { body: { role: 'x', jwt: 'a.b.c' }, headers: { 'CF-Connecting-IP': '10.1.2.3' } });
    expect(allowed.body.errors[0]).not.toContain('login-guard');
    expect(allowed.status).toBe(400);
    await ok('DELETE', 'sys/policies/egp/login-guard');
  });

  it('a runaway policy ends in a denial with the limit as its reason, and the object keeps serving', async () => {
    await putEgp('spin', 'secret/app', 'f = func(n) { return f(n + 1) }\nloop = rule { all range(1000000000) as i { i >= 0 } }\nmain = rule { loop }');
    const t = await tokenWith(['reader']);
    const r = await as(t, 'GET', 'secret/app');
    expect(r.status).toBe(403);
    expect(r.body.errors[0]).toMatch(/The specific error was:\n.*(steps|limit)/);
    await ok('DELETE', 'sys/policies/egp/spin');
    expect((await as(t, 'GET', 'secret/app')).status).toBe(200);
  });
});

describe('enforcing RGPs', () => {
  it('applies RGPs named in the token policies, with token data', async () => {
    await putRgp('team-only', 'main = rule { token.metadata.team is "blue" }');
    const blue = await tokenWith(['reader', 'team-only'], { team: 'blue' });
    const red = await tokenWith(['reader', 'team-only'], { team: 'red' });
    const plain = await tokenWith(['reader']);
    expect((await as(blue, 'GET', 'secret/app')).status).toBe(200);
    const denied = await as(red, 'GET', 'secret/app');
    expect(denied.status).toBe(403);
    expect(denied.body.errors[0]).toContain('rgp standard policy "root/team-only" evaluation resulted in denial (enforcement level: hard-mandatory)');
    expect((await as(plain, 'GET', 'secret/app')).status).toBe(200);
    // An RGP does not grant anything: the ACL still decides first.
    expect((await as(blue, 'GET', 'sys/mounts')).body.errors).toEqual([PERMISSION_DENIED]);
    await ok('DELETE', 'sys/policies/rgp/team-only');
    expect((await as(red, 'GET', 'secret/app')).status).toBe(200);
  });

  it('applies RGPs attached to the entity and to its groups, with identity data', async () => {
    await ok('POST', 'auth/token/roles/people', { allowed_policies: ['reader'], allowed_entity_aliases: ['erin', 'fay'] });
    const erin = (await ok('POST', 'auth/token/create/people', { entity_alias: 'erin', policies: ['reader'] })).body.auth;
    const fay = (await ok('POST', 'auth/token/create/people', { entity_alias: 'fay', policies: ['reader'] })).body.auth;
    await putRgp('org-block', 'precond = rule { identity.entity.metadata.org is "acme" }\nmain = rule when precond { false }');
    await ok('POST', `identity/entity/id/${erin.entity_id}`, { policies: ['org-block'], metadata: { org: 'acme' } });
    expect((await as(erin.client_token, 'GET', 'secret/app')).status).toBe(403);
    await ok('POST', `identity/entity/id/${erin.entity_id}`, { metadata: { org: 'other' } });
    expect((await as(erin.client_token, 'GET', 'secret/app')).status).toBe(200);

    await putRgp('ops-only', 'main = rule { "ops" in identity.groups.names and identity.groups.by_name["ops"].metadata.tier is "1" }');
    const group = (await ok('POST', 'identity/group', { name: 'ops', policies: ['ops-only'], member_entity_ids: [fay.entity_id], metadata: { tier: '2' } })).body.data;
    expect((await as(fay.client_token, 'GET', 'secret/app')).status).toBe(403);
    await ok('POST', `identity/group/id/${group.id}`, { metadata: { tier: '1' } });
    expect((await as(fay.client_token, 'GET', 'secret/app')).status).toBe(200);
    await ok('DELETE', 'sys/policies/rgp/ops-only');
    await ok('DELETE', 'sys/policies/rgp/org-block');
  });
});

describe('audit entries', () => {
  it('carry the evaluated policies, the override and the trace of a denial', async () => {
    await ok('PUT', 'sys/audit/sentinel', { type: 'file', options: { file_path: 'stdout', prefix: 'SENTINEL-AUDIT: ', log_raw: 'true' } });
    const t = await tokenWith(['reader']);
    await putEgp('audited', 'secret/app', 'main = rule { request.operation is "list" }', 'soft-mandatory');
    logSpy.mockClear();
    expect((await as(t, 'GET', 'secret/app', undefined, { 'X-Vault-Policy-Override': 'true' })).status).toBe(200);
    expect((await as(t, 'GET', 'secret/app')).status).toBe(403);
    const entries = auditLines().filter((e) => e.request.path === 'secret/app');
    expect(entries.map((e) => e.type)).toEqual(['request', 'response', 'request', 'response']);
    expect(entries[0].request.policy_override).toBe(true);
    expect(entries[0].request.sentinel).toEqual([{ policy: 'egp/audited', level: 'soft-mandatory', passed: false, overridden: true, trace: ['rule main (1:8) = false'] }]);
    expect(entries[2].request.policy_override).toBeUndefined();
    expect(entries[2].request.sentinel[0]).toMatchObject({ policy: 'egp/audited', passed: false });
    expect(entries[3].error).toContain('egp standard policy "root/audited" evaluation resulted in denial (enforcement level: soft-mandatory)');
    await ok('DELETE', 'sys/audit/sentinel');
    await ok('DELETE', 'sys/policies/egp/audited');
  });
});
