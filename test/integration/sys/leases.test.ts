// Leases (reference §2.9) on secrets from the test-only lease engine: lookup, renewal, revocation
// (also of failing secrets, retried with backoff), prefixes, expiry from the mount's alarm, and
// revocation with the token the secrets were issued to.
import { env, runDurableObjectAlarm } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { shardFor } from '../../../src/core/tokens/entry';
import { api, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const root = (method: string, path: string, body?: unknown) => api(method, path, { token: c.root, body });
const issue = async (name: string, query = 'ttl=1h', token = c.root) => {
  const r = await api('GET', `creds/creds/${name}?${query}`, { token });
  if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
  return r.body as { lease_id: string; lease_duration: number; renewable: boolean; data: { serial: number } };
};
const lookup = (id: string) => root('PUT', 'sys/leases/lookup', { lease_id: id });
const revokedSerials = async (mount = 'creds') => (await root('GET', `${mount}/revoked`)).body.data.serials as number[];
const mountUuid = async (mount: string) => (await root('GET', `sys/mounts/${mount}`)).body.data.uuid as string;
const runMountAlarm = async (mount: string) => runDurableObjectAlarm(env.MOUNTS.get(env.MOUNTS.idFromName(await mountUuid(mount))));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  c = await initCluster();
  expect((await root('POST', 'sys/mounts/creds', { type: 'coffer-test-leases' })).status).toBe(204);
});

describe('reads that write', () => {
  it('are served in the mount\'s order when declared (issuing a credential), and refused when not', async () => {
    expect((await issue('declared')).lease_id).toMatch(/^creds\/creds\/declared\//);
    const r = await root('GET', 'creds/undeclared-write');
    expect(r.status).toBe(500);
    expect(r.body.errors).toEqual(['coffer-test-leases read of undeclared-write wrote to storage; its path belongs in writingReadPaths']);
  });
});

describe('issuing and looking up', () => {
  it('answers a leased secret with its lease id, duration and renewability', async () => {
    const s = await issue('alice');
    expect(s.lease_id).toMatch(/^creds\/creds\/alice\/[A-Za-z0-9]{24}$/);
    // Ids begin with their time: issued one after another, they sort one after another.
    const ids = [s.lease_id as string];
    for (let i = 0; i < 3; i++) {
      await new Promise((r) => setTimeout(r, 5));
      ids.push((await issue('alice')).lease_id as string);
    }
    expect([...ids].sort()).toEqual(ids);
    expect(s.lease_duration).toBe(3600);
    expect(s.renewable).toBe(true);
    const l = (await lookup(s.lease_id)).body.data;
    expect(l).toMatchObject({ id: s.lease_id, renewable: true, last_renewal: null });
    expect(l.ttl).toBeGreaterThan(3590);
    expect(l.issue_time).toMatch(/^\d{4}-/);
  });

  it('caps the TTL at the mount\'s maximum and defaults it to the mount\'s default', async () => {
    await root('POST', 'sys/mounts/creds/tune', { default_lease_ttl: '10m', max_lease_ttl: '2h' });
    expect((await issue('capped', 'ttl=5h')).lease_duration).toBe(7200);
    expect((await issue('defaulted', 'ttl=0')).lease_duration).toBe(600);
    await root('POST', 'sys/mounts/creds/tune', { default_lease_ttl: 'system', max_lease_ttl: 'system' });
  });

  it('refuses unknown leases', async () => {
    for (const id of ['creds/creds/alice/doesnotexist', 'nomount/x/y', 'creds/../sys/x']) {
      const r = await lookup(id);
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual(['invalid lease']);
    }
    expect((await root('PUT', 'sys/leases/lookup', {})).body.errors).toEqual(['lease_id must be specified']);
  });

  it('lists lease ids under a prefix (sudo)', async () => {
    await issue('bob');
    const top = (await root('GET', 'sys/leases/lookup/creds/creds/?list=true')).body.data.keys;
    expect(top).toEqual(expect.arrayContaining(['alice/', 'bob/']));
    const bobs = (await root('GET', 'sys/leases/lookup/creds/creds/bob?list=true')).body.data.keys;
    expect(bobs).toHaveLength(1);
    expect(bobs[0]).toMatch(/^[A-Za-z0-9]{24}$/);
  });
});

describe('renewing', () => {
  it('renews by body, by URL and by the legacy path', async () => {
    const s = await issue('renewer', 'ttl=10m');
    const r = await root('PUT', 'sys/leases/renew', { lease_id: s.lease_id, increment: '30m' });
    expect(r.body).toMatchObject({ lease_id: s.lease_id, renewable: true, lease_duration: 1800 });
    expect((await root('PUT', `sys/leases/renew/${s.lease_id}`, { increment: 120 })).body.lease_duration).toBe(120);
    // Without an increment the TTL last granted is asked for again, as Vault's backends do.
    expect((await root('PUT', 'sys/renew', { lease_id: s.lease_id })).body.lease_duration).toBe(120);
    expect((await lookup(s.lease_id)).body.data.last_renewal).not.toBeNull();
  });

  it('refuses a lease that is not renewable', async () => {
    const s = await issue('fixed', 'ttl=1h&renewable=false');
    const r = await root('PUT', 'sys/leases/renew', { lease_id: s.lease_id });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['lease is not renewable']);
  });
});

describe('revoking', () => {
  it('revokes through the engine, then forgets the lease', async () => {
    const s = await issue('gone');
    expect((await root('PUT', 'sys/leases/revoke', { lease_id: s.lease_id })).status).toBe(204);
    expect(await revokedSerials()).toContain(s.data.serial);
    expect((await lookup(s.lease_id)).status).toBe(400);
    const async = await issue('gone');
    expect((await root('PUT', `sys/revoke/${async.lease_id}`, { sync: false })).status).toBe(202);
    expect(await revokedSerials()).toContain(async.data.serial);
  });

  it('keeps a lease whose revocation fails, and retries it with backoff until it succeeds', async () => {
    const s = await issue('stubborn');
    await root('POST', 'creds/config', { fail_revokes: 2 });
    const r = await root('PUT', 'sys/leases/revoke', { lease_id: s.lease_id });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/failed to revoke lease .*simulated revocation failure \(will retry\)/);
    expect((await lookup(s.lease_id)).body.data.renewable).toBe(false);
    const stuck = (await root('GET', 'sys/leases?type=irrevocable')).body.data;
    expect(stuck.leases).toEqual([{ lease_id: s.lease_id, error: 'simulated revocation failure' }]);
    expect((await root('GET', 'sys/leases/count?type=irrevocable')).body.data.lease_count).toBe(1);
    await sleep(1100);
    await runMountAlarm('creds'); // second failure; next attempt in 2 s
    expect((await lookup(s.lease_id)).status).toBe(200);
    await sleep(2100);
    await runMountAlarm('creds');
    expect((await lookup(s.lease_id)).status).toBe(400);
    expect(await revokedSerials()).toContain(s.data.serial);
  });

  it('revoke-prefix revokes through the engine; revoke-force drops without it (both sudo)', async () => {
    const a = await issue('prefixed');
    const b = await issue('prefixed');
    expect((await root('PUT', 'sys/leases/revoke-prefix/creds/creds/prefixed')).status).toBe(204);
    for (const s of [a, b]) {
      expect((await lookup(s.lease_id)).status).toBe(400);
      expect(await revokedSerials()).toContain(s.data.serial);
    }
    const f = await issue('forced');
    expect((await root('PUT', 'sys/revoke-force/creds/creds/forced')).status).toBe(204);
    expect((await lookup(f.lease_id)).status).toBe(400);
    expect(await revokedSerials()).not.toContain(f.data.serial);
  });

  it('expires leases from the mount\'s alarm', async () => {
    const s = await issue('short', 'ttl=1s');
    await sleep(1100);
    await runMountAlarm('creds');
    expect((await lookup(s.lease_id)).status).toBe(400);
    expect(await revokedSerials()).toContain(s.data.serial);
  });

  it('tidy answers 202 with a warning', async () => {
    const r = await root('POST', 'sys/leases/tidy');
    expect(r.status).toBe(202);
    expect(r.body.warnings).toHaveLength(1);
  });
});

describe('leases and tokens', () => {
  it('revoking a token revokes the leases issued to it', async () => {
    const child = (await root('POST', 'auth/token/create', { ttl: '1h' })).body.auth.client_token;
    const s = await issue('owned', 'ttl=1h', child);
    await root('POST', 'auth/token/revoke', { token: child });
    expect((await lookup(s.lease_id)).status).toBe(400);
    expect(await revokedSerials()).toContain(s.data.serial);
  });

  it('a token that expires takes its leases with it', async () => {
    const child = (await root('POST', 'auth/token/create', { ttl: '1s' })).body.auth.client_token;
    const s = await issue('expiring-owner', 'ttl=1h', child);
    await sleep(1100);
    await runDurableObjectAlarm(env.TOKENS.get(env.TOKENS.idFromName(`token-shard-${shardFor(child, 3)}`)));
    expect((await lookup(s.lease_id)).status).toBe(400);
    expect(await revokedSerials()).toContain(s.data.serial);
  });

  it('the default policy lets a token look up and renew, not revoke, its leases', async () => {
    await root('PUT', 'sys/policies/acl/creds-user', { policy: 'path "creds/creds/*" { capabilities = ["read"] }' });
    const t = (await root('POST', 'auth/token/create', { policies: ['creds-user'], ttl: '1h' })).body.auth.client_token;
    const s = await issue('limited', 'ttl=1h', t);
    expect((await api('PUT', 'sys/leases/lookup', { token: t, body: { lease_id: s.lease_id } })).status).toBe(200);
    expect((await api('PUT', 'sys/leases/renew', { token: t, body: { lease_id: s.lease_id } })).status).toBe(200);
    expect((await api('PUT', 'sys/leases/revoke', { token: t, body: { lease_id: s.lease_id } })).status).toBe(403);
    expect((await api('PUT', 'sys/leases/revoke-prefix/creds', { token: t })).status).toBe(403);
  });
});

describe('leases and mounts', () => {
  it('remounting rewrites lease ids', async () => {
    await root('POST', 'sys/mounts/mover', { type: 'coffer-test-leases' });
    const r = await api('GET', 'mover/creds/x?ttl=1h', { token: c.root });
    await root('POST', 'sys/remount', { from: 'mover', to: 'moved' });
    const moved = r.body.lease_id.replace(/^mover\//, 'moved/');
    expect((await lookup(moved)).body.data.id).toBe(moved);
  });

  it('disabling a mount revokes its leases, and refuses while some cannot be revoked', async () => {
    await root('POST', 'sys/mounts/doomed', { type: 'coffer-test-leases' });
    const id = (await api('GET', 'doomed/creds/x?ttl=1h', { token: c.root })).body.lease_id;
    await root('POST', 'doomed/config', { fail_revokes: 1 });
    const refused = await root('DELETE', 'sys/mounts/doomed');
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0]).toContain('the mount was not disabled');
    expect((await lookup(id)).status).toBe(200);
    expect((await root('DELETE', 'sys/mounts/doomed')).status).toBe(204);
    expect((await root('GET', 'sys/mounts/doomed')).status).toBe(400);
    expect((await lookup(id)).status).toBe(400);
  });

  it('test-only engines are unavailable without COFFER_TEST_ENGINES', async () => {
    // The flag is on in this suite; the registry is what hides the type otherwise.
    const { availableType } = await import('../../../src/registry');
    expect(availableType('coffer-test-leases', false)).toBeUndefined();
    expect(availableType('coffer-test-leases', true)?.type).toBe('coffer-test-leases');
  });
});
