// The host side of every auth method's login, through the Worker with a test-only method whose
// login takes its outcome as input: the entity behind the alias (created once, reused), group
// aliases bringing identity policies, the token's policies, type and lifetime within the mount's
// limits, the auth block, bound CIDRs, and a disabled entity refused.
import { beforeAll, describe, expect, it } from 'vitest';
import { api, caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { ok } = caller(() => c.root);
let accessor = '';
const login = (body: Record<string, unknown>, path = 'auth/test-login/login') => api('POST', path, { body });
const lookupSelf = (token: string) => api('GET', 'auth/token/lookup-self', { token });

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/auth/test-login', { type: 'coffer-test-login' });
  accessor = (await ok('GET', 'sys/auth')).body.data['test-login/'].accessor;
});

describe('a login', () => {
  it('needs no token, and answers Vault\'s auth block for a new orphan service token', async () => {
    const r = await login({ alias: 'alice', policies: 'dev,ops', metadata: { role: 'demo', email: 'a@example.com' }, ttl: '1h' });
    expect(r.status).toBe(200);
    expect(r.body.auth).toEqual({
      client_token: expect.stringMatching(/^hvs\./),
      accessor: expect.any(String),
      policies: ['default', 'dev', 'ops'],
      token_policies: ['default', 'dev', 'ops'],
      metadata: { role: 'demo', email: 'a@example.com' },
      lease_duration: 3600,
      renewable: true,
      entity_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      token_type: 'service',
      orphan: true,
      mfa_requirement: null,
      num_uses: 0,
    });
    const self = (await lookupSelf(r.body.auth.client_token)).body.data;
    expect(self).toMatchObject({
      display_name: 'test-login-alice',
      path: 'auth/test-login/login',
      policies: ['default', 'dev', 'ops'],
      meta: { role: 'demo', email: 'a@example.com' },
      entity_id: r.body.auth.entity_id,
      orphan: true,
    });
  });

  it('finds the same entity for the same alias, and records the alias on this mount', async () => {
    const a = (await login({ alias: 'bob', alias_metadata: { team: 'x' } })).body.auth;
    const b = (await login({ alias: 'bob', alias_metadata: { team: 'y' } })).body.auth;
    expect(b.entity_id).toBe(a.entity_id);
    const entity = (await ok('GET', `identity/entity/id/${a.entity_id}`)).body.data;
    expect(entity.aliases).toEqual([expect.objectContaining({ name: 'bob', mount_accessor: accessor, metadata: { team: 'y' } })]);
    expect((await login({ alias: 'carol' })).body.auth.entity_id).not.toBe(a.entity_id);
  });

  it('group aliases bring their external group\'s policies', async () => {
    const group = (await ok('POST', 'identity/group', { name: 'admins-ext', type: 'external', policies: ['admin-policy'] })).body.data;
    await ok('POST', 'identity/group-alias', { name: 'admins', mount_accessor: accessor, canonical_id: group.id });
    const r = (await login({ alias: 'dave', groups: 'admins,unknown', policies: 'dev' })).body.auth;
    expect(r.identity_policies).toEqual(['admin-policy']);
    expect(r.token_policies).toEqual(['default', 'dev']);
    expect(r.policies).toEqual(['admin-policy', 'default', 'dev']);
    const groups = (await ok('GET', `identity/group/id/${group.id}`)).body.data;
    expect(groups.member_entity_ids).toContain(r.entity_id);
    // Leaving the group at the next login removes the membership.
    expect((await login({ alias: 'dave', groups: '' })).body.auth.identity_policies).toBeUndefined();
  });

  it('leaves out default when asked', async () => {
    expect((await login({ alias: 'erin', policies: 'dev', no_default_policy: true })).body.auth.policies).toEqual(['dev']);
  });
});

describe('token lifetime and type', () => {
  beforeAll(async () => {
    await ok('POST', 'sys/auth/short', { type: 'coffer-test-login', config: { default_lease_ttl: '30m', max_lease_ttl: '2h' } });
  });

  it('uses the mount default, caps at the mount maximum and the method\'s max TTL', async () => {
    const path = 'auth/short/login';
    expect((await login({ alias: 'a' }, path)).body.auth.lease_duration).toBe(1800);
    expect((await login({ alias: 'a', ttl: '5h' }, path)).body.auth.lease_duration).toBe(7200);
    expect((await login({ alias: 'a', ttl: '90m', max_ttl: '1h' }, path)).body.auth.lease_duration).toBe(3600);
    const capped = (await login({ alias: 'a', ttl: '20m', max_ttl: '1h' }, path)).body.auth;
    expect((await lookupSelf(capped.client_token)).body.data.explicit_max_ttl).toBe(3600);
    const periodic = (await login({ alias: 'a', period: '15m' }, path)).body.auth;
    expect(periodic.lease_duration).toBe(900);
    expect((await lookupSelf(periodic.client_token)).body.data.period).toBe(900);
    expect((await login({ alias: 'a', num_uses: 3 }, path)).body.auth.num_uses).toBe(3);
  });

  it('issues batch tokens when asked or when the mount is tuned to', async () => {
    const batch = (await login({ alias: 'b', token_type: 'batch', policies: 'dev' })).body.auth;
    expect(batch).toMatchObject({ client_token: expect.stringMatching(/^hvb\./), token_type: 'batch', renewable: false, accessor: '' });
    expect((await lookupSelf(batch.client_token)).body.data).toMatchObject({ type: 'batch', policies: ['default', 'dev'] });
    await ok('POST', 'sys/auth/short/tune', { token_type: 'batch' });
    expect((await login({ alias: 'b' }, 'auth/short/login')).body.auth.token_type).toBe('batch');
    const refused = await login({ alias: 'b', token_type: 'service' }, 'auth/short/login');
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual(['role requests a service token but the mount only issues batch tokens']);
  });
});

describe('refusals', () => {
  it('binds the token to the given CIDR blocks', async () => {
    const t = (await login({ alias: 'f', bound_cidrs: '10.0.0.0/8' })).body.auth.client_token;
    const from = (ip: string) => api('GET', 'auth/token/lookup-self', { token: t, headers: { 'CF-Connecting-IP': ip } });
    expect((await from('10.1.2.3')).status).toBe(200);
    expect((await from('192.0.2.1')).status).toBe(403);
  });

  it('refuses a disabled entity, and issues nothing', async () => {
    const first = (await login({ alias: 'mallory' })).body.auth;
    await ok('POST', `identity/entity/id/${first.entity_id}`, { disabled: true });
    const r = await login({ alias: 'mallory' });
    expect(r.status).toBe(403);
    expect(r.body.auth).toBeUndefined();
  });

  it('a method\'s own 400 issues no token', async () => {
    const r = await login({ alias: '' });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['missing alias']);
  });
});

describe('renewing a login token', () => {
  const renewSelf = (token: string, body: Record<string, unknown> = {}) => api('POST', 'auth/token/renew-self', { token, body });

  it('uses the role\'s current TTL, max TTL and period', async () => {
    await ok('POST', 'auth/test-login/role/r1', { ttl: '10m', max_ttl: '1h' });
    const t = (await login({ alias: 'renewer', ttl: '5m', role: 'r1' })).body.auth.client_token;
    expect((await renewSelf(t)).body.auth.lease_duration).toBe(600);
    const long = await renewSelf(t, { increment: '3h' });
    expect(long.body.auth.lease_duration).toBeGreaterThan(3500);
    expect(long.body.auth.lease_duration).toBeLessThanOrEqual(3600);
    expect(long.body.warnings[0]).toMatch(/exceeded the effective max_ttl/);
    await ok('POST', 'auth/test-login/role/r1', { ttl: '10m', max_ttl: '1h', period: '20m' });
    expect((await renewSelf(t)).body.auth.lease_duration).toBe(1200);
    // By token and by accessor too.
    const accessor = (await lookupSelf(t)).body.data.accessor;
    expect((await api('POST', 'auth/token/renew-accessor', { token: c.root, body: { accessor } })).body.auth.lease_duration).toBe(1200);
  });

  it('fails once the role is gone, leaving the token as it was', async () => {
    await ok('POST', 'auth/test-login/role/r2', { ttl: '10m' });
    const t = (await login({ alias: 'orphaned', ttl: '5m', role: 'r2' })).body.auth.client_token;
    await ok('DELETE', 'auth/test-login/role/r2');
    const r = await renewSelf(t);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['role "r2" could not be found']);
    const self = await lookupSelf(t);
    expect(self.status).toBe(200);
    expect(self.body.data.ttl).toBeLessThanOrEqual(300);
  });

  it('a login without a role renews within the token\'s own limits', async () => {
    const t = (await login({ alias: 'plain', ttl: '5m' })).body.auth.client_token;
    expect((await renewSelf(t, { increment: '15m' })).body.auth.lease_duration).toBe(900);
  });
});
