// From claims to identity: user_claim (JSON pointer), claim_mappings, groups_claim and
// bound_claims (string and glob), through login and directly on the helpers.
import { beforeAll, describe, expect, it } from 'vitest';
import { getClaim, globMatch } from '../../../../src/auth/jwt/claims';
import { claims, engine, expectError, makeKey, sign, type Engine, type TestKey } from './harness';

let key: TestKey;
beforeAll(async () => {
  key = await makeKey('ES256');
});

async function withRole(role: Record<string, unknown>): Promise<Engine> {
  const e = engine();
  await e.call('write', 'config', { jwt_validation_pubkeys: key.pem });
  await e.call('write', 'role/r', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'coffer', ...role });
  return e;
}

const login = async (e: Engine, extra: Record<string, unknown> = {}) => (await e.call('write', 'login', { role: 'r', jwt: await sign(key, claims(extra)) })).login!;
const loginFails = async (e: Engine, extra: Record<string, unknown>, message: string) =>
  expectError(e.call('write', 'login', { role: 'r', jwt: await sign(key, claims(extra)) }), 400, message);

describe('getClaim and globMatch', () => {
  it('reads top-level names and RFC 6901 pointers, integer-truncating numbers', () => {
    const c = { a: { 'b/c': { 'd~e': 'deep' }, list: ['x', 'y'] }, n: 12.7, ns: [1.5, 'z'], nil: null };
    expect(getClaim(c, 'n')).toBe(12);
    expect(getClaim(c, 'ns')).toEqual([1, 'z']);
    expect(getClaim(c, '/a/b~1c/d~0e')).toBe('deep');
    expect(getClaim(c, '/a/list/1')).toBe('y');
    expect(getClaim(c, '/a/list/2')).toBeUndefined();
    expect(getClaim(c, '/a/list/01')).toBeUndefined();
    expect(getClaim(c, '/a/missing/x')).toBeUndefined();
    expect(getClaim(c, 'nil')).toBeUndefined();
    expect(getClaim(c, 'constructor')).toBeUndefined();
    expect(getClaim(c, '/constructor')).toBeUndefined();
  });

  it('globs: * matches any run, nothing else is special', () => {
    expect(globMatch('*', '')).toBe(true);
    expect(globMatch('ops-*', 'ops-team')).toBe(true);
    expect(globMatch('ops-*', 'dev-team')).toBe(false);
    expect(globMatch('*@example.com', 'a@example.com')).toBe(true);
    expect(globMatch('a*b*c', 'aXXbYYc')).toBe(true);
    expect(globMatch('a*b*c', 'acb')).toBe(false);
    expect(globMatch('a*a', 'a')).toBe(false);
    expect(globMatch('a?c', 'abc')).toBe(false);
    expect(globMatch('exact', 'exact')).toBe(true);
  });
});

describe('user_claim', () => {
  it('must be present and a string', async () => {
    const e = await withRole({ user_claim: 'email' });
    expect((await login(e)).aliasName).toBe('alice@example.com');
    await loginFails(e, { email: undefined }, 'claim "email" not found in token');
    await loginFails(e, { email: 42 }, 'claim "email" could not be converted to string');
    await loginFails(e, { email: ['a'] }, 'claim "email" could not be converted to string');
  });

  it('is a JSON pointer only with user_claim_json_pointer', async () => {
    const pointer = await withRole({ user_claim: '/profile/login', user_claim_json_pointer: true });
    expect((await login(pointer, { profile: { login: 'bob' } })).aliasName).toBe('bob');
    await loginFails(pointer, { profile: { name: 'bob' } }, 'claim "/profile/login" not found in token');
    const literal = await withRole({ user_claim: '/profile/login' });
    await loginFails(literal, { profile: { login: 'bob' } }, 'claim "/profile/login" not found in token');
    expect((await login(literal, { '/profile/login': 'carol' })).aliasName).toBe('carol');
  });
});

describe('claim_mappings', () => {
  it('copies strings and integer-coerced numbers to metadata, skips missing claims, adds the role', async () => {
    const e = await withRole({ claim_mappings: { email: 'mail', '/profile/dept': 'dept', level: 'level', absent: 'nothing' } });
    const res = await login(e, { profile: { dept: 'ops' }, level: 3.9 });
    expect(res.metadata).toEqual({ mail: 'alice@example.com', dept: 'ops', level: '3', role: 'r' });
    expect(res.aliasMetadata).toEqual(res.metadata);
  });

  it('refuses values that are not strings or numbers', async () => {
    const e = await withRole({ claim_mappings: { admin: 'admin' } });
    await loginFails(e, { admin: true }, "error converting claim 'admin' to string");
    await loginFails(e, { admin: { x: 1 } }, "error converting claim 'admin' to string");
    await loginFails(e, { admin: ['a'] }, "error converting claim 'admin' to string");
  });
});

describe('groups_claim', () => {
  it('takes a list or a single string, skips empty names, follows JSON pointers', async () => {
    const list = await withRole({ groups_claim: 'groups' });
    expect((await login(list, { groups: ['admins', '', 'ops'] })).groupAliasNames).toEqual(['admins', 'ops']);
    expect((await login(list, { groups: 'solo' })).groupAliasNames).toEqual(['solo']);
    expect((await login(list, { groups: [] })).groupAliasNames).toEqual([]);
    const pointer = await withRole({ groups_claim: '/realm_access/roles' });
    expect((await login(pointer, { realm_access: { roles: ['a', 'b'] } })).groupAliasNames).toEqual(['a', 'b']);
    // No groups_claim: no groups (Vault refreshes the mount's external memberships to none).
    const none = await withRole({});
    expect((await login(none)).groupAliasNames).toEqual([]);
  });

  it('refuses a missing claim, a non-list, and non-string members', async () => {
    const e = await withRole({ groups_claim: 'groups' });
    await loginFails(e, {}, 'failed to fetch groups: "groups" claim not found in token');
    await loginFails(e, { groups: { a: 1 } }, '"groups" claim could not be converted to string list');
    await loginFails(e, { groups: ['ok', 7] }, 'value 7 in groups claim could not be parsed as string');
    await loginFails(e, { groups: [{ name: 'x' }] }, 'value map[name:x] in groups claim could not be parsed as string');
    await loginFails(e, { groups: true }, 'value true in groups claim could not be parsed as string');
  });
});

describe('bound_claims', () => {
  it('string mode: exact values; any expected value matching any actual value passes', async () => {
    const e = await withRole({ bound_claims: { department: ['eng', 'ops'], '/org/id': 42, verified: true, groups: 'admins' } });
    const good = { department: 'ops', org: { id: 42.3 }, verified: true, groups: ['users', 'admins'] };
    expect((await login(e, good)).aliasName).toBe('user-1');
    await loginFails(e, { ...good, department: 'Eng' }, 'error validating claims: claim "department" does not match any associated bound claim values');
    await loginFails(e, { ...good, org: { id: '42' } }, 'error validating claims: claim "/org/id" does not match any associated bound claim values');
    await loginFails(e, { ...good, verified: 'true' }, 'error validating claims: claim "verified" does not match any associated bound claim values');
    await loginFails(e, { ...good, groups: ['users'] }, 'error validating claims: claim "groups" does not match any associated bound claim values');
    await loginFails(e, { ...good, department: undefined }, 'error validating claims: claim "department" is missing');
    await loginFails(e, { ...good, org: {} }, 'error validating claims: claim "/org/id" is missing');
    await loginFails(e, { ...good, department: { a: 1 } }, 'error validating claims: received claim is not a string or list: map[a:1]');
  });

  it('glob mode: patterns against string values', async () => {
    const e = await withRole({ bound_claims_type: 'glob', bound_claims: { email: '*@example.com', '/teams': ['ops-*', 'sre'] } });
    expect((await login(e, { teams: ['dev', 'ops-west'] })).aliasName).toBe('user-1');
    expect((await login(e, { teams: 'sre' })).aliasName).toBe('user-1');
    await loginFails(e, { teams: ['dev'] }, 'error validating claims: claim "/teams" does not match any associated bound claim values');
    await loginFails(e, { teams: ['sre'], email: 'a@evil.com' }, 'error validating claims: claim "email" does not match any associated bound claim values');
    // Non-string actual values never match a glob.
    await loginFails(e, { teams: [7] }, 'error validating claims: claim "/teams" does not match any associated bound claim values');
  });

  it('are checked after the identity: a missing user claim is reported first', async () => {
    const e = await withRole({ user_claim: 'email', bound_claims: { department: 'eng' } });
    await loginFails(e, { email: undefined }, 'claim "email" not found in token');
  });
});
