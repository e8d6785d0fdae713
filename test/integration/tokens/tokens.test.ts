// The token store (reference §3): create, lookup, renew, revoke (whole subtrees, across shards),
// orphans, use limits, batch tokens, roles, bound CIDRs, accessors, tidy.
import { env, runDurableObjectAlarm } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { shardFor } from '../../../src/core/tokens/entry';
import { api, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const post = (path: string, body: unknown, token = c.root) => api('POST', `auth/token/${path}`, { token, body });
const create = async (body: Record<string, unknown> = {}, token = c.root) => {
  const r = await post('create', body, token);
  if (r.status !== 200) throw new Error(`create failed: ${r.status} ${r.text}`);
  return r.body.auth as Record<string, any>;
};
const lookup = (token: string) => post('lookup', { token });

beforeAll(async () => {
  c = await initCluster();
  await api('POST', 'sys/mounts/secret', { token: c.root, body: { type: 'kv' } });
  await api('PUT', 'secret/probe', { token: c.root, body: { ok: true } });
});

describe('creating tokens', () => {
  it('returns Vault\'s auth block and a working token', async () => {
    const r = await post('create', { policies: ['web', 'DB ', 'web'], ttl: '1h', meta: { user: 'armon' }, display_name: 'ci job!' });
    expect(r.status).toBe(200);
    expect(r.body.data).toBeNull();
    const a = r.body.auth;
    expect(Object.keys(a)).toEqual(['client_token', 'accessor', 'policies', 'token_policies', 'metadata', 'lease_duration', 'renewable', 'entity_id', 'token_type', 'orphan', 'mfa_requirement', 'num_uses']);
    expect(a.client_token).toMatch(/^hvs\.[A-Za-z0-9]{24}$/);
    expect(a.accessor).toMatch(/^[A-Za-z0-9]{24}$/);
    expect(shardFor(a.accessor, 3)).toBe(shardFor(a.client_token, 3));
    expect(a).toMatchObject({ policies: ['db', 'default', 'web'], metadata: { user: 'armon' }, lease_duration: 3600, renewable: true, token_type: 'service', orphan: false, num_uses: 0 });
    const l = (await lookup(a.client_token)).body.data;
    expect(l).toMatchObject({ display_name: 'token-ci-job-', path: 'auth/token/create', creation_ttl: 3600, explicit_max_ttl: 0, id: a.client_token });
    expect(l.expire_time).toMatch(/^\d{4}-/);
  });

  it('inherits the parent\'s policies, and a root parent\'s child is root', async () => {
    const child = await create({ ttl: '1h' });
    expect(child.policies).toEqual(['root']);
    expect((await api('GET', 'secret/probe', { token: child.client_token })).status).toBe(200);
  });

  it('leaves out the default policy on request', async () => {
    expect((await create({ policies: ['web'], no_default_policy: true })).policies).toEqual(['web']);
  });

  it('caps the TTL at explicit_max_ttl, with a warning', async () => {
    const r = await post('create', { policies: ['web'], ttl: '2h', explicit_max_ttl: '1h' });
    expect(r.body.auth.lease_duration).toBe(3600);
    expect(r.body.warnings[0]).toContain('exceeded the effective max_ttl of "1h0m0s"');
  });

  it('makes periodic, orphan, use-limited and custom-id tokens for root', async () => {
    const periodic = await create({ policies: ['web'], period: '30m' });
    expect(periodic.lease_duration).toBe(1800);
    expect((await lookup(periodic.client_token)).body.data.period).toBe(1800);
    expect((await create({ no_parent: true, policies: ['web'] })).orphan).toBe(true);
    expect((await create({ num_uses: 3, policies: ['web'] })).num_uses).toBe(3);
    const custom = await create({ id: 'my-custom-token', policies: ['web'] });
    expect(custom.client_token).toBe('my-custom-token');
    expect((await post('create', { id: 'my-custom-token' })).body.errors).toEqual(['cannot create a token with a duplicate ID']);
  });

  it('a root token with no TTL never expires; one with a TTL does', async () => {
    const forever = (await lookup((await create({})).client_token)).body.data;
    expect(forever).toMatchObject({ ttl: 0, expire_time: null, renewable: false });
    const expiring = await create({ ttl: '10m' });
    const r = await post('create', {}, expiring.client_token);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['expiring root tokens cannot create non-expiring root tokens']);
  });

  it.each([
    [{ policies: ['response-wrapping'] }, 'cannot assign policy "response-wrapping"'],
    [{ type: 'weird' }, `invalid 'type' value "weird": must be "service" or "batch"`],
    [{ type: 'batch', policies: ['web'], num_uses: 2 }, 'batch tokens cannot have "num_uses" set'],
    [{ type: 'batch', policies: ['web'], period: '1h' }, 'batch tokens cannot have "period" set'],
    [{ type: 'batch' }, 'batch tokens cannot be root tokens'],
    [{ num_uses: -1 }, 'number of uses cannot be negative'],
    [{ id: 'hvs.looks-real' }, 'custom token ids cannot contain "." or start with a token prefix'],
    [{ ttl: 'forever' }, 'error converting input "forever" for field "ttl": time: invalid duration "forever"'],
    [{ role_name: 'nosuchrole' }, 'unknown role nosuchrole'],
  ])('refuses %j', async (body, message) => {
    const r = await post('create', body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
  });

  it('a use-limited token cannot create children', async () => {
    const limited = await create({ num_uses: 5 });
    const r = await post('create', {}, limited.client_token);
    expect(r.body.errors).toEqual(['tokens with a use limit (num_uses) cannot create child tokens']);
  });
});

describe('looking up', () => {
  it('looks up self, by token and by accessor (without the id)', async () => {
    const t = await create({ policies: ['web'], ttl: '1h' });
    const self = (await api('GET', 'auth/token/lookup-self', { token: c.root })).body.data;
    expect(self).toMatchObject({ policies: ['root'], path: 'auth/token/root', orphan: true });
    const byAcc = (await post('lookup-accessor', { accessor: t.accessor })).body.data;
    expect(byAcc).toMatchObject({ id: '', accessor: t.accessor, policies: ['default', 'web'] });
    expect((await api('GET', `auth/token/lookup?token=${t.client_token}`, { token: c.root })).body.data.accessor).toBe(t.accessor);
  });

  it('answers an unknown token with 403 "bad token"', async () => {
    for (const r of [await lookup('hvs.unknown00000000000000000'), await post('lookup-accessor', { accessor: 'nope' })]) {
      expect(r.status).toBe(403);
      expect(r.body.errors).toEqual(['bad token']);
    }
  });
});

describe('renewing', () => {
  it('renews by token, accessor and self within the max TTL', async () => {
    const t = await create({ policies: ['web'], ttl: '10m', explicit_max_ttl: '1h' });
    const r = await post('renew', { token: t.client_token, increment: '30m' });
    expect(r.body.auth.lease_duration).toBe(1800);
    expect((await lookup(t.client_token)).body.data.last_renewal_time).toBeGreaterThan(0);
    const capped = await post('renew-accessor', { accessor: t.accessor, increment: '5h' });
    expect(capped.body.auth.lease_duration).toBeGreaterThan(3500);
    expect(capped.body.auth.lease_duration).toBeLessThanOrEqual(3600);
    expect(capped.body.auth.client_token).toBe('');
    expect(capped.body.warnings[0]).toContain('exceeded the effective max_ttl');
    const child = await create({ ttl: '10m' });
    expect((await post('renew-self', { increment: '20m' }, child.client_token)).body.auth.lease_duration).toBe(1200);
  });

  it('refuses to renew what cannot be renewed', async () => {
    const self = await post('renew-self', {});
    expect([self.status, self.body.errors]).toEqual([400, ['lease is not renewable']]);
    // Tokens on every shard (the refusal crosses an RPC when the token lives elsewhere).
    for (let i = 0; i < 6; i++) {
      const fixed = await create({ policies: ['web'], renewable: false });
      const r = await post('renew', { token: fixed.client_token });
      expect([r.status, r.body.errors]).toEqual([400, ['lease is not renewable']]);
    }
    const unknown = await post('renew', { token: 'hvs.unknown00000000000000000' });
    expect([unknown.status, unknown.body.errors]).toEqual([400, ['invalid token']]);
  });
});

describe('revoking', () => {
  /** Root creates A; A creates B; B creates C (root children, so they may create). */
  async function chain() {
    const a = await create({ ttl: '1h' });
    const b = await create({ ttl: '1h' }, a.client_token);
    const cc = await create({ ttl: '1h' }, b.client_token);
    return [a, b, cc];
  }

  it("draws a created token for its parent's shard, so the token and the link to it are written together", async () => {
    const [a, b, cc] = await chain();
    const rootShard = shardFor(c.root, 3);
    for (const t of [a, b, cc]) expect(shardFor(t.client_token, 3)).toBe(rootShard);
    const orphan = await create({ no_parent: true });
    expect(shardFor(orphan.client_token, 3)).toBe(rootShard);
  });

  it('revokes a token with its whole subtree, on every shard', async () => {
    // Drawn tokens share their parent's shard; tokens of chosen IDs live where their IDs hash, so
    // B and C are given IDs of the other two shards.
    const a = await create({ ttl: '1h' });
    const others = [0, 1, 2].filter((n) => n !== shardFor(a.client_token, 3));
    const idOn = (shard: number) => Array.from({ length: 100 }, (_, i) => `subtree-${shard}-${i}`).find((id) => shardFor(id, 3) === shard)!;
    const b = await create({ ttl: '1h', id: idOn(others[0]) }, a.client_token);
    const cc = await create({ ttl: '1h', id: idOn(others[1]) }, b.client_token);
    const dd = await create({ ttl: '1h' }, cc.client_token);
    const tokens = [a, b, cc, dd];
    expect(new Set(tokens.map((t) => shardFor(t.client_token, 3))).size).toBe(3);
    for (const t of tokens) expect((await api('GET', 'secret/probe', { token: t.client_token })).status).toBe(200);
    expect((await post('revoke', { token: tokens[0].client_token })).status).toBe(204);
    for (const t of tokens) {
      expect((await api('GET', 'secret/probe', { token: t.client_token })).status).toBe(403);
      expect((await lookup(t.client_token)).status).toBe(403);
    }
  });

  it('a parent revoked while its children are being created leaves none of them alive', async () => {
    for (let round = 0; round < 5; round++) {
      const parent = await create({ ttl: '1h' });
      const creating = Array.from({ length: 40 }, () => post('create', { ttl: '1h' }, parent.client_token));
      // Revoked once the first creations are answered, while later ones are on their way.
      await Promise.race(creating);
      const revoked = post('revoke', { token: parent.client_token });
      const made = await Promise.all(creating);
      expect((await revoked).status).toBe(204);
      for (const r of made) {
        if (r.status !== 200) {
          expect(r.status).toBeGreaterThanOrEqual(400);
          continue;
        }
        expect((await lookup(r.body.auth.client_token)).status).toBe(403);
      }
    }
  });

  it('revoke-orphan leaves the children alive as orphans', async () => {
    const [a, b, cc] = await chain();
    expect((await post('revoke-orphan', { token: a.client_token })).status).toBe(204);
    expect((await lookup(a.client_token)).status).toBe(403);
    expect((await lookup(b.client_token)).body.data.orphan).toBe(true);
    expect((await lookup(cc.client_token)).body.data.orphan).toBe(false);
    // b is now a root of its own subtree.
    await post('revoke', { token: b.client_token });
    expect((await lookup(cc.client_token)).status).toBe(403);
  });

  it('revokes by accessor and self; revoking the unknown is not an error', async () => {
    const t = await create({ ttl: '1h' });
    expect((await post('revoke-accessor', { accessor: t.accessor })).status).toBe(204);
    expect((await lookup(t.client_token)).status).toBe(403);
    const s = await create({ ttl: '1h' });
    expect((await post('revoke-self', {}, s.client_token)).status).toBe(204);
    expect((await lookup(s.client_token)).status).toBe(403);
    expect((await post('revoke', { token: 'hvs.unknown00000000000000000' })).status).toBe(204);
  });
});

describe('use limits and expiry', () => {
  it('a token with num_uses works that many times, then is revoked', async () => {
    const t = await create({ num_uses: 2 });
    expect((await api('GET', 'secret/probe', { token: t.client_token })).status).toBe(200);
    expect((await api('GET', 'secret/probe', { token: t.client_token })).status).toBe(200);
    expect((await api('GET', 'secret/probe', { token: t.client_token })).status).toBe(403);
    expect((await lookup(t.client_token)).status).toBe(403);
  });

  it('an expired token stops working, with its children', async () => {
    const t = await create({ ttl: '1s' });
    const child = await create({ ttl: '1h' }, t.client_token);
    await new Promise((r) => setTimeout(r, 1200));
    expect((await api('GET', 'secret/probe', { token: t.client_token })).status).toBe(403);
    // The shard's alarm revokes the expired token's subtree.
    await runDurableObjectAlarm(env.TOKENS.get(env.TOKENS.idFromName(`token-shard-${shardFor(t.client_token, 3)}`)));
    expect((await lookup(child.client_token)).status).toBe(403);
  });
});

describe('batch tokens', () => {
  it('are encrypted, self-contained, not renewable or revocable, and die with their parent', async () => {
    const parent = await create({ ttl: '1h' });
    const r = await post('create', { type: 'batch', policies: ['web'], ttl: '20m' }, parent.client_token);
    const batch = r.body.auth;
    expect(batch.client_token).toMatch(/^hvb\./);
    expect(batch).toMatchObject({ accessor: '', token_type: 'batch', renewable: false, lease_duration: 1200 });
    expect((await lookup(batch.client_token)).body.data).toMatchObject({ type: 'batch', policies: ['default', 'web'] });
    expect((await post('renew', { token: batch.client_token })).body.errors).toEqual(['batch tokens cannot be renewed']);
    expect((await post('revoke', { token: batch.client_token })).body.errors).toEqual(['batch tokens cannot be revoked']);
    const tampered = batch.client_token.slice(0, -3) + (batch.client_token.endsWith('A') ? 'BBB' : 'AAA');
    expect((await lookup(tampered)).status).toBe(403);
    await post('revoke', { token: parent.client_token });
    expect((await lookup(batch.client_token)).status).toBe(403);
  });

  it('a batch token cannot create tokens', async () => {
    const b = (await post('create', { type: 'batch', policies: ['web'] })).body.auth;
    const r = await post('create', {}, b.client_token);
    expect(r.status).toBe(403); // no policy grants it auth/token/create (and it could not anyway)
  });
});

describe('roles', () => {
  it('creates, reads, lists and deletes roles', async () => {
    expect((await api('POST', 'auth/token/roles/ci', { token: c.root, body: { allowed_policies: 'web,DB', orphan: true, token_period: '1h', path_suffix: 'v1' } })).status).toBe(204);
    const role = (await api('GET', 'auth/token/roles/ci', { token: c.root })).body.data;
    expect(role).toMatchObject({ name: 'ci', allowed_policies: ['db', 'web'], orphan: true, token_period: 3600, period: 3600, renewable: true, token_type: 'default-service', path_suffix: 'v1' });
    expect((await api('GET', 'auth/token/roles?list=true', { token: c.root })).body.data.keys).toEqual(['ci']);
    // Updating keeps what is not sent.
    await api('POST', 'auth/token/roles/ci', { token: c.root, body: { renewable: false } });
    expect((await api('GET', 'auth/token/roles/ci', { token: c.root })).body.data).toMatchObject({ renewable: false, orphan: true });
  });

  it('shapes tokens created against the role', async () => {
    const r = await post('create/ci', { policies: ['web'] });
    expect(r.body.auth).toMatchObject({ policies: ['default', 'web'], orphan: true, lease_duration: 3600 });
    expect((await lookup(r.body.auth.client_token)).body.data).toMatchObject({ path: 'auth/token/create/ci/v1', role: 'ci', period: 3600 });
    const bad = await post('create/ci', { policies: ['admin'] });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toContain("must be subset of the role's allowed policies");
    expect((await post('create/ci', {})).body.auth.policies).toEqual(['db', 'default', 'web']);
  });

  it('binds tokens to CIDR blocks', async () => {
    await api('POST', 'auth/token/roles/office', { token: c.root, body: { token_bound_cidrs: ['10.0.0.0/8', '2001:db8::/32'], allowed_policies: 'root' } });
    const t = (await post('create/office', { policies: ['root'], ttl: '1h' })).body.auth;
    expect((await lookup(t.client_token)).body.data.bound_cidrs).toEqual(['10.0.0.0/8', '2001:db8::/32']);
    const from = (ip: string) => api('GET', 'secret/probe', { token: t.client_token, headers: { 'CF-Connecting-IP': ip } });
    expect((await from('10.20.30.40')).status).toBe(200);
    expect((await from('2001:db8::1')).status).toBe(200);
    const outside = await from('192.0.2.1');
    expect(outside.status).toBe(403);
    expect(outside.body.errors).toEqual(['1 error occurred:\n\t* permission denied\n\n']);
  });

  it.each([
    [{ token_type: 'odd' }, `invalid 'token_type' value "odd"`],
    [{ token_bound_cidrs: ['10.0.0.0/33'] }, 'invalid CIDR block "10.0.0.0/33" in token_bound_cidrs'],
    [{ token_type: 'batch', token_period: '1h' }, '"token_period" cannot be set when "token_type" is "batch"'],
    [{ path_suffix: 'a/../b' }, 'path_suffix cannot contain "." or ".." segments'],
  ])('refuses role %j', async (body, message) => {
    const r = await api('POST', 'auth/token/roles/badrole', { token: c.root, body });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
    expect((await api('GET', 'auth/token/roles/badrole', { token: c.root })).status).toBe(404);
  });

  it('deletes a role', async () => {
    expect((await api('DELETE', 'auth/token/roles/office', { token: c.root })).status).toBe(204);
    expect((await api('GET', 'auth/token/roles/office', { token: c.root })).status).toBe(404);
  });
});

describe('accessors and tidy', () => {
  it('lists accessors across shards (sudo) and tidies', async () => {
    const t = await create({ ttl: '1h' });
    const keys = (await api('GET', 'auth/token/accessors?list=true', { token: c.root })).body.data.keys;
    expect(keys).toContain(t.accessor);
    const r = await post('tidy', {});
    expect(r.status).toBe(200);
    expect(r.body.warnings).toHaveLength(1);
  });
});
