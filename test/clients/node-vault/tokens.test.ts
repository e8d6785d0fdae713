// node-vault's token methods, token roles and automatic token renewal, and the two generated
// methods that always send the LIST verb (which the Workers runtime refuses before Coffer runs).
import { describe, expect, it } from 'vitest';
import { failure, unique, vault } from './client';

// tokenCreate, tokenCreateOrphan, tokenCreateRole and tokenRenew make node-vault use the token they
// return from then on, so each of those calls gets a root client of its own.
const root = vault();
const create = async (body: Record<string, unknown> = {}) => (await vault().tokenCreate({ policies: ['default'], ttl: '1h', ...body })).auth;

describe('creating tokens', () => {
  it('tokenCreate with every field node-vault knows', async () => {
    const client = vault();
    const auth = (
      await client.tokenCreate({
        policies: ['default', 'reader'],
        meta: { app: 'web' },
        no_default_policy: false,
        renewable: true,
        ttl: '2h',
        explicit_max_ttl: '3h',
        display_name: 'web app',
        num_uses: 4,
      })
    ).auth;
    expect(auth).toMatchObject({ policies: ['default', 'reader'], metadata: { app: 'web' }, lease_duration: 7200, renewable: true, num_uses: 4, orphan: false });
    expect(client.token).toBe(auth.client_token);
    const looked = (await root.tokenLookup({ token: auth.client_token })).data;
    expect(looked).toMatchObject({ display_name: 'token-web-app', explicit_max_ttl: 10800, num_uses: 4, meta: { app: 'web' } });
  });

  it('tokenCreate with a custom id, and tokenCreateOrphan', async () => {
    const id = unique('my-token');
    expect((await vault().tokenCreate({ id, policies: ['default'], ttl: '5m' })).auth.client_token).toBe(id);
    expect((await vault().tokenCreateOrphan({ policies: ['default'], ttl: '5m' })).auth.orphan).toBe(true);
  });

  it('addTokenRole, getTokenRole, tokenRoles, tokenCreateRole and removeTokenRole', async () => {
    const role_name = unique('role');
    // node-vault's schema takes the policy lists as comma-separated strings.
    await root.addTokenRole({ role_name, allowed_policies: 'default,app', orphan: true, renewable: true, path_suffix: 'ci', period: 3600 });
    const role = (await root.getTokenRole({ role_name })).data;
    expect(role).toMatchObject({ allowed_policies: ['app', 'default'], orphan: true, path_suffix: 'ci', period: 3600, token_period: 3600 });
    expect((await root.tokenRoles()).data.keys).toContain(role_name);
    const auth = (await vault().tokenCreateRole({ role_name, policies: ['app'] })).auth;
    expect(auth).toMatchObject({ orphan: true, lease_duration: 3600, policies: ['app', 'default'] });
    expect((await root.tokenLookup({ token: auth.client_token })).data.path).toBe(`auth/token/create/${role_name}/ci`);
    await root.removeTokenRole({ role_name });
    expect((await failure(root.getTokenRole({ role_name }))).status).toBe(404);
  });
});

describe('using tokens', () => {
  it('tokenLookupSelf, tokenLookupAccessor and tokenRenewSelf', async () => {
    const auth = await create({ ttl: '10m', explicit_max_ttl: '1h' });
    const user = vault(auth.client_token);
    expect((await user.tokenLookupSelf()).data).toMatchObject({ id: auth.client_token, policies: ['default'] });
    expect((await root.tokenLookupAccessor({ accessor: auth.accessor })).data).toMatchObject({ id: '', accessor: auth.accessor });
    expect((await user.tokenRenewSelf({ increment: '30m' })).auth.lease_duration).toBe(1800);
    expect((await vault().tokenRenew({ token: auth.client_token, increment: 600 })).auth.lease_duration).toBe(600);
  });

  it('tokenRevoke takes the children, tokenRevokeOrphan leaves them', async () => {
    const creator = unique('creator');
    await root.addPolicy({ name: creator, rules: 'path "auth/token/create" { capabilities = ["update"] }' });
    const parent = await create({ policies: ['default', creator] });
    const child = (await vault(parent.client_token).tokenCreate({ policies: ['default'], ttl: '10m' })).auth;
    await root.tokenRevoke({ token: parent.client_token });
    expect((await failure(root.tokenLookup({ token: child.client_token }))).status).toBe(403);

    const other = await create({ policies: ['default', creator] });
    const kept = (await vault(other.client_token).tokenCreate({ policies: ['default'], ttl: '10m' })).auth;
    await root.tokenRevokeOrphan({ token: other.client_token });
    expect((await root.tokenLookup({ token: kept.client_token })).data.orphan).toBe(true);
  });

  it("expired tokens are revoked by the shard's alarm, with their children", async () => {
    const creator = unique('creator');
    await root.addPolicy({ name: creator, rules: 'path "auth/token/create" { capabilities = ["update"] }' });
    const parents = await Promise.all([1, 2, 3].map(() => create({ policies: ['default', creator], ttl: '3s' })));
    // The children's own TTL is an hour: only their parents' expiry ends them.
    const children = await Promise.all(parents.map(async (p) => (await vault(p.client_token).tokenCreate({ policies: ['default'], ttl: '1h' })).auth));
    const bystander = await create();
    const gone = [...parents, ...children].map((a) => a.accessor);
    let keys: string[] = [];
    for (const deadline = Date.now() + 30_000; ; ) {
      keys = (await root.list('auth/token/accessors')).data.keys;
      if (!gone.some((a) => keys.includes(a))) break;
      if (Date.now() > deadline) throw new Error(`still listed after 30 s: ${gone.filter((a) => keys.includes(a))}`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    for (const t of [...parents, ...children]) expect((await failure(root.tokenLookup({ token: t.client_token }))).status).toBe(403);
    expect(keys).toContain(bystander.accessor);
    expect((await root.tokenLookup({ token: bystander.client_token })).data.accessor).toBe(bystander.accessor);
  });

  it('tokenRevokeAccessor and tokenRevokeSelf', async () => {
    const first = await create();
    const second = await create();
    await root.tokenRevokeAccessor({ accessor: first.accessor });
    await vault(second.client_token).tokenRevokeSelf();
    for (const t of [first, second]) expect((await failure(root.tokenLookup({ token: t.client_token }))).status).toBe(403);
  });

  it('startTokenRenewal renews a short token before it expires', async () => {
    const auth = await create({ ttl: '3s', explicit_max_ttl: '1h' });
    const user = vault(auth.client_token);
    const renewed = new Promise<{ auth: { lease_duration: number } }>((resolve, reject) => {
      user.once('token:renewed', resolve);
      user.once('token:error:renew', reject);
    });
    await user.startTokenRenewal({ increment: 600 });
    try {
      expect((await renewed).auth.lease_duration).toBe(600);
    } finally {
      user.stopTokenRenewal();
    }
    expect((await user.tokenLookupSelf()).data.ttl).toBeGreaterThan(500);
  });
});

describe('methods that always send LIST', () => {
  // node-vault sends tokenAccessors() and transitListKeys() with the LIST verb even with
  // noCustomHTTPVerbs; the Workers runtime answers unknown methods 501 before a Worker runs
  // (cloudflare/workerd#6877). The README says so and names the replacement: vault.list(path).
  it('tokenAccessors gets the runtime\'s 501; list("auth/token/accessors") works', async () => {
    expect((await failure(root.tokenAccessors())).status).toBe(501);
    const auth = await create();
    expect((await root.list('auth/token/accessors')).data.keys).toContain(auth.accessor);
  });
});
