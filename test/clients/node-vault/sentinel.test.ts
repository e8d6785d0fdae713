// Sentinel role- and endpoint-governing policies (RGPs, EGPs) through node-vault. node-vault has no
// methods for sys/policies/rgp and sys/policies/egp (nor for identity), so those go through its
// generic write/read/list/delete; what the policies govern uses its own methods where it has them
// (mount, addPolicy, tokenCreate, tokenLookupSelf, tokenRenewSelf, addTokenRole, enableAuth,
// jwtLogin), and the override header goes through per-call requestOptions.
//
// The client files share one server and run in parallel: every EGP here governs only this file's
// own mounts and paths, and the one on "*" is guarded by a token metadata tag no other file's
// token carries. Every policy is deleted when its test finishes, whatever the outcome.
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { failure, unique, vault, type Client } from './client';

const root = vault();
const ALLOW = 'main = rule { true }';
const DENY = 'main = rule { false }';
const PERMISSION_DENIED = '1 error occurred:\n\t* permission denied\n\n';
const denial = (kind: 'rgp' | 'egp', name: string, level: string) =>
  `${kind} standard policy "root/${name}" evaluation resulted in denial (enforcement level: ${level})`;

const mount = unique('sentinel');
const acl = unique('sentinel-acl');

beforeAll(async () => {
  await root.mount({ mount_point: mount, type: 'kv', options: { version: '1' } });
  await root.addPolicy({
    name: acl,
    rules: `path "${mount}/*" { capabilities = ["create", "read", "update", "delete", "list"] }\npath "auth/token/create" { capabilities = ["update"] }`,
  });
  for (const path of ['app', 'team/a', 'spin']) await root.write(`${mount}/${path}`, { v: path });
});
afterAll(async () => {
  await root.unmount({ mount_point: mount });
  await root.removePolicy({ name: acl });
});

const drop = async (kind: 'rgp' | 'egp', name: string) => {
  await root.delete(`sys/policies/${kind}/${name}`);
};
/** Writes an RGP, deleted when the test finishes. */
async function putRgp(name: string, policy: string, level = 'hard-mandatory') {
  onTestFinished(() => drop('rgp', name));
  return root.write(`sys/policies/rgp/${name}`, { policy, enforcement_level: level });
}
/** Writes an EGP, deleted when the test finishes. */
async function putEgp(name: string, paths: unknown, policy: string, level = 'hard-mandatory') {
  onTestFinished(() => drop('egp', name));
  return root.write(`sys/policies/egp/${name}`, { policy, enforcement_level: level, paths });
}
/** A token made with tokenCreate (on a client of its own: node-vault switches to the token it creates). */
async function token(policies: string[] = [acl], meta?: Record<string, string>): Promise<string> {
  return (await vault().tokenCreate({ policies, ttl: '15m', ...(meta ? { meta } : {}) })).auth.client_token;
}
/** The keys of a listing; Vault answers an empty one with a 404. */
async function keys(kind: 'rgp' | 'egp'): Promise<string[]> {
  try {
    return (await root.list(`sys/policies/${kind}`)).data.keys;
  } catch (e) {
    if ((e as { response?: { statusCode: number } }).response?.statusCode === 404) return [];
    throw e;
  }
}
/** A 403 and its error text. */
async function forbidden(p: Promise<unknown>): Promise<string> {
  const f = await failure(p);
  expect(f.status).toBe(403);
  return f.errors[0];
}
/** A 400 and its error text. */
async function invalid(p: Promise<unknown>): Promise<string> {
  const f = await failure(p);
  expect(f.status).toBe(400);
  return f.errors[0];
}
/** Per-call headers: a fresh object each time (node-vault adds the token header to it). */
const override = (value: string) => ({ headers: { 'X-Vault-Policy-Override': value } });
/** A client that sends no token at all. */
function anonymous(): Client {
  const c = vault();
  c.token = '';
  return c;
}

describe('managing RGPs and EGPs', () => {
  it('writes, reads, lists and deletes an RGP, lowercasing its name', async () => {
    const raw = unique('Sentinel-Rule');
    const name = raw.toLowerCase();
    expect((await putRgp(raw, ALLOW, 'advisory')).warnings).toEqual([`policy name was converted to ${name}`]);
    expect((await root.read(`sys/policies/rgp/${name}`)).data).toEqual({ name, policy: ALLOW, enforcement_level: 'advisory' });
    expect((await root.read(`sys/policies/rgp/${raw}`)).data.name).toBe(name);
    expect(await keys('rgp')).toContain(name);
    await root.delete(`sys/policies/rgp/${name}`);
    expect((await failure(root.read(`sys/policies/rgp/${name}`))).status).toBe(404);
    expect(await keys('rgp')).not.toContain(name);
  });

  it('writes EGPs with paths as a list or a comma string (and base64 text), listing name_path_map', async () => {
    const listed = unique('egp-list');
    const comma = unique('egp-comma');
    await putEgp(listed, [`/${mount}/*`, `${mount}/app`], ALLOW, 'soft-mandatory');
    await putEgp(comma, `${mount}/x, ${mount}/y/*`, Buffer.from(ALLOW).toString('base64'), 'advisory');
    expect((await root.read(`sys/policies/egp/${listed}`)).data).toEqual({
      name: listed,
      policy: ALLOW,
      enforcement_level: 'soft-mandatory',
      paths: [`${mount}/*`, `${mount}/app`],
    });
    const second = (await root.read(`sys/policies/egp/${comma}`)).data;
    // base64 is decoded before it is stored.
    expect(second.policy).toBe(ALLOW);
    expect(second.paths).toEqual([`${mount}/x`, `${mount}/y/*`]);
    const list = (await root.list('sys/policies/egp')).data;
    expect(list.keys).toEqual(expect.arrayContaining([listed, comma]));
    expect(list.name_path_map[listed]).toEqual([
      { path: `${mount}/*`, glob: true },
      { path: `${mount}/app`, glob: false },
    ]);
    expect(list.name_path_map[comma]).toEqual([
      { path: `${mount}/x`, glob: false },
      { path: `${mount}/y/*`, glob: true },
    ]);
    await root.delete(`sys/policies/egp/${listed}`);
    expect((await failure(root.read(`sys/policies/egp/${listed}`))).status).toBe(404);
    expect(await keys('egp')).not.toContain(listed);
  });

  it.each([
    ['rgp', 'null policy', { policy: null, enforcement_level: 'advisory' }, "'policy' parameter not supplied or empty"],
    ['rgp', 'null enforcement_level', { policy: ALLOW, enforcement_level: null }, 'missing enforcement_level'],
    ['rgp', 'unknown enforcement_level', { policy: ALLOW, enforcement_level: 'strict' }, 'unknown enforcement_level "strict"'],
    ['egp', 'null paths', { policy: ALLOW, enforcement_level: 'advisory', paths: null }, 'paths cannot be empty'],
    ['egp', 'null policy', { policy: null, enforcement_level: 'advisory', paths: ['x'] }, "'policy' parameter not supplied or empty"],
    ['egp', 'null enforcement_level', { policy: ALLOW, enforcement_level: null, paths: ['x'] }, 'missing enforcement_level'],
    ['egp', 'a star inside a path', { policy: ALLOW, enforcement_level: 'advisory', paths: ['x/*/y'] }, '"*" may only end a path'],
  ])('%s: refuses %s with a 400 and stores nothing', async (kind, _what, body, message) => {
    const name = unique('bad');
    onTestFinished(() => drop(kind as 'rgp' | 'egp', name));
    expect(await invalid(root.write(`sys/policies/${kind}/${name}`, body))).toContain(message);
    expect((await failure(root.read(`sys/policies/${kind}/${name}`))).status).toBe(404);
  });

  it('refuses a policy with a syntax error, naming line and column', async () => {
    const name = unique('broken');
    onTestFinished(() => drop('rgp', name));
    onTestFinished(() => drop('egp', name));
    expect(await invalid(root.write(`sys/policies/rgp/${name}`, { policy: 'main = rule {\n  true and\n}', enforcement_level: 'advisory' }))).toMatch(
      new RegExp(`^failed to parse policy: rgp/${name}:3:1: expected `),
    );
    expect(await invalid(root.write(`sys/policies/egp/${name}`, { policy: 'main = rule { 1 + }', enforcement_level: 'advisory', paths: `${mount}/app` }))).toMatch(
      new RegExp(`^failed to parse policy: egp/${name}:1:19: expected expression`),
    );
    expect((await failure(root.read(`sys/policies/rgp/${name}`))).status).toBe(404);
    expect((await failure(root.read(`sys/policies/egp/${name}`))).status).toBe(404);
  });

  it('RGP names share the ACL namespace, both ways (addPolicy refuses an RGP name)', async () => {
    expect(await invalid(root.write(`sys/policies/rgp/${acl}`, { policy: ALLOW, enforcement_level: 'advisory' }))).toContain('an ACL policy has that name');
    const name = unique('shared');
    await putRgp(name, ALLOW, 'advisory');
    expect(await invalid(root.addPolicy({ name, rules: 'path "x" { capabilities = ["read"] }' }))).toContain('an RGP has that name');
  });
});

describe('enforcing EGPs', () => {
  it('hard-mandatory on a glob: a 403 naming the policy and its level; other paths and root pass; deletion lifts it at once', async () => {
    const user = vault(await token());
    const name = unique('no-team');
    await putEgp(name, `${mount}/team/*`, `main = rule { not strings.has_prefix(request.path, "${mount}/team/") }`);
    const text = await forbidden(user.read(`${mount}/team/a`));
    expect(text).toContain(denial('egp', name, 'hard-mandatory'));
    expect(text).toContain('permission denied');
    expect(await forbidden(user.write(`${mount}/team/b`, { v: 1 }))).toContain(denial('egp', name, 'hard-mandatory'));
    expect((await user.read(`${mount}/app`)).data).toEqual({ v: 'app' });
    expect((await root.read(`${mount}/team/a`)).data).toEqual({ v: 'team/a' });
    await drop('egp', name);
    expect((await user.read(`${mount}/team/a`)).data).toEqual({ v: 'team/a' });
  });

  it('hard-mandatory on KV v2 API paths: data/ is governed, metadata/ is not', async () => {
    const kv2 = unique('sentinel-kv2');
    const policy = unique('kv2-acl');
    await root.mount({ mount_point: kv2, type: 'kv', options: { version: '2' } });
    onTestFinished(() => root.unmount({ mount_point: kv2 }));
    await root.addPolicy({ name: policy, rules: `path "${kv2}/*" { capabilities = ["create", "read", "update", "list"] }` });
    onTestFinished(() => root.removePolicy({ name: policy }));
    await root.write(`${kv2}/data/locked/a`, { data: { v: '1' } });
    const user = vault(await token([policy]));
    const name = unique('kv2-lock');
    await putEgp(name, [`${kv2}/data/locked/*`], DENY);
    expect(await forbidden(user.read(`${kv2}/data/locked/a`))).toContain(denial('egp', name, 'hard-mandatory'));
    await forbidden(user.write(`${kv2}/data/locked/b`, { data: { v: '2' } }));
    expect((await user.read(`${kv2}/metadata/locked/a`)).data.current_version).toBe(1);
    await user.write(`${kv2}/data/open/b`, { data: { v: '3' } });
    expect((await user.read(`${kv2}/data/open/b`)).data.data).toEqual({ v: '3' });
    await drop('egp', name);
    expect((await user.read(`${kv2}/data/locked/a`)).data.data).toEqual({ v: '1' });
  });

  it('soft-mandatory: 403 unless X-Vault-Policy-Override is true (requestOptions.headers); never over hard-mandatory', async () => {
    const user = vault(await token());
    const name = unique('soft');
    await putEgp(name, `${mount}/app`, DENY, 'soft-mandatory');
    expect(await forbidden(user.read(`${mount}/app`))).toContain(denial('egp', name, 'soft-mandatory'));
    await forbidden(user.read(`${mount}/app`, override('false')));
    expect((await user.read(`${mount}/app`, override('true'))).data).toEqual({ v: 'app' });
    await user.write(`${mount}/app`, { v: 'app' }, override('true'));
    const bad = await invalid(user.read(`${mount}/app`, override('please')));
    expect(bad).toContain('X-Vault-Policy-Override');
    await putEgp(name, `${mount}/app`, DENY, 'hard-mandatory');
    expect(await forbidden(user.read(`${mount}/app`, override('true')))).toContain(denial('egp', name, 'hard-mandatory'));
  });

  it('advisory never denies', async () => {
    const user = vault(await token());
    const name = unique('advise');
    await putEgp(name, `${mount}/*`, DENY, 'advisory');
    expect((await user.read(`${mount}/app`)).data).toEqual({ v: 'app' });
    await user.write(`${mount}/advised`, { v: 'w' });
    expect((await user.read(`${mount}/advised`)).data).toEqual({ v: 'w' });
    expect((await user.list(mount)).data.keys).toContain('advised');
    await user.delete(`${mount}/advised`);
  });

  it('a `when` guard on undefined denies, so guards read `(x else "")`', async () => {
    const name = unique('guard');
    const untagged = vault(await token([acl], { other: 'x' }));
    await putEgp(name, `${mount}/app`, `main = rule when token.metadata.suite is "${name}" { false }`);
    expect(await forbidden(untagged.read(`${mount}/app`))).toContain('rule main (1:8) = undefined');
    await putEgp(name, `${mount}/app`, `main = rule when (token.metadata.suite else "") is "${name}" { false }`);
    expect((await untagged.read(`${mount}/app`)).data).toEqual({ v: 'app' });
    const tagged = vault(await token([acl], { suite: name }));
    expect(await forbidden(tagged.read(`${mount}/app`))).toContain(denial('egp', name, 'hard-mandatory'));
  });

  it('an EGP on "*" governs kv and auth/token requests of the tagged token only', async () => {
    const tag = unique('node-vault-suite');
    const name = unique('ticketed');
    const policy = `main = rule when (token.metadata.suite else "") is "${tag}" {\n  request.operation not in ["create", "update"] or "ticket" in keys(request.data)\n}`;
    const taggedToken = await token([acl], { suite: tag });
    const tagged = vault(taggedToken);
    const plain = vault(await token());
    // First on this file's mount alone: the guard passes untagged and unauthenticated callers.
    await putEgp(name, `${mount}/*`, policy);
    await plain.write(`${mount}/plain`, { v: 1 });
    expect(await forbidden(anonymous().read(`${mount}/app`))).toBe(PERMISSION_DENIED);
    await forbidden(tagged.write(`${mount}/new`, { v: 1 }));
    // Then on every path.
    await putEgp(name, '*', policy);
    expect(await forbidden(tagged.write(`${mount}/new`, { v: 1 }))).toContain(denial('egp', name, 'hard-mandatory'));
    await tagged.write(`${mount}/new`, { v: 1, ticket: 'T-1' });
    expect((await tagged.read(`${mount}/new`)).data).toEqual({ v: 1, ticket: 'T-1' });
    expect(await forbidden(tagged.tokenRenewSelf())).toContain(denial('egp', name, 'hard-mandatory'));
    await forbidden(tagged.tokenCreate({ policies: [acl], ttl: '5m' }));
    expect((await tagged.tokenLookupSelf()).data.meta).toEqual({ suite: tag });
    // Untagged tokens are not affected.
    await plain.write(`${mount}/plain`, { v: 2 });
    expect((await plain.tokenRenewSelf()).auth.renewable).toBe(true);
    await drop('egp', name);
    await tagged.write(`${mount}/new`, { v: 2 });
    expect((await tagged.tokenRenewSelf()).auth.client_token).toBe(taggedToken);
  });

  it('governs an unauthenticated login path (jwtLogin) with no token data', async () => {
    const path = unique('sentinel-jwt');
    await root.enableAuth({ mount_point: path, type: 'jwt' });
    onTestFinished(() => root.disableAuth({ mount_point: path }));
    const name = unique('login-guard');
    await putEgp(name, `auth/${path}/login`, 'main = rule { request.unauthenticated and token.policies is not defined and request.data.role is not "blocked" }');
    expect(await forbidden(anonymous().jwtLogin({ mount_point: path, role: 'blocked', jwt: 'a.b.c' }))).toContain(denial('egp', name, 'hard-mandatory'));
    // Any other role reaches the method, which refuses it itself.
    expect(await invalid(anonymous().jwtLogin({ mount_point: path, role: 'other', jwt: 'a.b.c' }))).not.toContain(name);
    await drop('egp', name);
    expect(await invalid(anonymous().jwtLogin({ mount_point: path, role: 'blocked', jwt: 'a.b.c' }))).not.toContain(name);
  });

  it('a runaway policy is denied with its limit as the reason, and the mount keeps serving', async () => {
    const user = vault(await token());
    const name = unique('spin');
    await putEgp(name, `${mount}/spin`, 'main = rule { all range(1000000000) as i { i >= 0 } }');
    const text = await forbidden(user.read(`${mount}/spin`));
    expect(text).toContain(denial('egp', name, 'hard-mandatory'));
    expect(text).toMatch(/The specific error was:\n.*step limit/);
    expect((await user.read(`${mount}/app`)).data).toEqual({ v: 'app' });
    await drop('egp', name);
    expect((await user.read(`${mount}/spin`)).data).toEqual({ v: 'spin' });
  });
});

describe('enforcing RGPs', () => {
  const role = unique('sentinel-role');
  const aliases = [unique('erin'), unique('fay')];

  beforeAll(async () => {
    // addTokenRole's schema has no allowed_entity_aliases: the generic write adds them.
    await root.addTokenRole({ role_name: role, allowed_policies: acl });
    await root.write(`auth/token/roles/${role}`, { allowed_entity_aliases: aliases });
    expect((await root.getTokenRole({ role_name: role })).data).toMatchObject({ allowed_policies: [acl], allowed_entity_aliases: aliases });
  });
  afterAll(async () => {
    await root.removeTokenRole({ role_name: role });
  });

  /** A token tied to the entity behind `alias` (tokenCreateRole's schema has no entity_alias). */
  async function entityToken(alias: string): Promise<{ user: Client; entityId: string }> {
    const auth = (await root.write(`auth/token/create/${role}`, { entity_alias: alias, policies: [acl], ttl: '15m' })).auth;
    onTestFinished(() => root.delete(`identity/entity/id/${auth.entity_id}`));
    return { user: vault(auth.client_token), entityId: auth.entity_id };
  }

  it('applies an RGP named in the token policies, with token metadata', async () => {
    const name = unique('team-only');
    await putRgp(name, 'main = rule { token.metadata.team is "blue" }');
    const blue = vault(await token([acl, name], { team: 'blue' }));
    const red = vault(await token([acl, name], { team: 'red' }));
    const plain = vault(await token());
    expect((await blue.read(`${mount}/app`)).data).toEqual({ v: 'app' });
    const text = await forbidden(red.read(`${mount}/app`));
    expect(text).toContain(denial('rgp', name, 'hard-mandatory'));
    expect(text).toContain('rule main (1:8) = false');
    expect((await plain.read(`${mount}/app`)).data).toEqual({ v: 'app' });
    // An RGP grants nothing: the ACL decides first.
    expect(await forbidden(blue.mounts())).toBe(PERMISSION_DENIED);
    await drop('rgp', name);
    expect((await red.read(`${mount}/app`)).data).toEqual({ v: 'app' });
  });

  it('applies an RGP attached to the entity, with entity metadata', async () => {
    const { user, entityId } = await entityToken(aliases[0]);
    const name = unique('org-block');
    await putRgp(name, 'precond = rule { (identity.entity.metadata.org else "") is "acme" }\nmain = rule when precond { false }');
    await root.write(`identity/entity/id/${entityId}`, { policies: [name], metadata: { org: 'acme' } });
    expect((await root.read(`identity/entity/id/${entityId}`)).data.policies).toEqual([name]);
    expect(await forbidden(user.read(`${mount}/app`))).toContain(denial('rgp', name, 'hard-mandatory'));
    await root.write(`identity/entity/id/${entityId}`, { metadata: { org: 'other' } });
    expect((await user.read(`${mount}/app`)).data).toEqual({ v: 'app' });
    await root.write(`identity/entity/id/${entityId}`, { metadata: { org: 'acme' } });
    await forbidden(user.read(`${mount}/app`));
    // Detached from the entity, the RGP no longer applies.
    await root.write(`identity/entity/id/${entityId}`, { policies: [] });
    expect((await user.read(`${mount}/app`)).data).toEqual({ v: 'app' });
  });

  it('applies an RGP attached to a group of the entity, reading identity.groups', async () => {
    const { user, entityId } = await entityToken(aliases[1]);
    const group = unique('ops');
    const name = unique('ops-only');
    await putRgp(name, `main = rule { "${group}" in identity.groups.names and identity.groups.by_name["${group}"].metadata.tier is "1" }`);
    const created = (await root.write('identity/group', { name: group, policies: [name], member_entity_ids: [entityId], metadata: { tier: '2' } })).data;
    onTestFinished(() => root.delete(`identity/group/id/${created.id}`));
    expect(await forbidden(user.read(`${mount}/app`))).toContain(denial('rgp', name, 'hard-mandatory'));
    await root.write(`identity/group/id/${created.id}`, { metadata: { tier: '1' } });
    expect((await user.read(`${mount}/app`)).data).toEqual({ v: 'app' });
    // An entity outside the group is not governed by the group's RGP.
    const other = await entityToken(aliases[0]);
    expect((await other.user.read(`${mount}/app`)).data).toEqual({ v: 'app' });
    await root.write(`identity/group/id/${created.id}`, { metadata: { tier: '3' } });
    await forbidden(user.read(`${mount}/app`));
    await drop('rgp', name);
    expect((await user.read(`${mount}/app`)).data).toEqual({ v: 'app' });
  });
});
