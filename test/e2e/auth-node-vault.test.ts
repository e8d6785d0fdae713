// Tokens, policies and response wrapping as a node-vault user meets them, against the real
// launcher: a narrow-policy token does exactly what its policy allows and gets Vault's 403
// otherwise; renew and revoke flows; wrapped responses unwrap exactly once.
import nodeVault from 'node-vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLauncher, tempDir, type Server } from './processes';

const ROOT_TOKEN = 'hvs.e2eRootTokenForAuthTests00';
type Client = ReturnType<typeof nodeVault>;

/** The status and first error of a rejected node-vault call. */
async function failure(p: Promise<unknown>): Promise<{ status: number; error: string }> {
  try {
    await p;
  } catch (e) {
    const err = e as { response?: { statusCode: number; body?: { errors?: string[] } } };
    return { status: err.response?.statusCode ?? 0, error: err.response?.body?.errors?.[0] ?? '' };
  }
  throw new Error('expected the call to fail');
}

describe('tokens, policies and wrapping with node-vault', () => {
  let server: Server;
  let root: Client;
  const client = (token?: string) => nodeVault({ endpoint: server.url, token, noCustomHTTPVerbs: true });
  // node-vault's tokenCreate switches the client to the new token: mint with a fresh root client.
  const mint = (body: Record<string, unknown>) => client(ROOT_TOKEN).tokenCreate(body);

  beforeAll(async () => {
    server = await startLauncher(tempDir('coffer-e2e-auth-'), { COFFER_DEV_ROOT_TOKEN: ROOT_TOKEN });
    root = client(ROOT_TOKEN);
    // These flows use unversioned KV paths; secret/ is KV v2 (test/e2e/kv2-node-vault.test.ts).
    await root.mount({ mount_point: 'kv', type: 'kv', options: { version: '1' } });
    await root.write('kv/app/db', { user: 'app', password: 'pw1' });
    await root.write('kv/ops/key', { value: 'hidden' });
    await root.addPolicy({
      name: 'app',
      rules: [
        'path "kv/app/*" { capabilities = ["read", "list"] }',
        'path "kv/app/config" { capabilities = ["create", "update", "read"] }',
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await server?.stop('SIGTERM');
  });

  it('a narrow-policy token does what its policy allows, and nothing else', async () => {
    const created = await mint({ policies: ['app'], ttl: '1h' });
    expect(created.auth.policies).toEqual(['app', 'default']);
    const app = client(created.auth.client_token);

    expect((await app.read('kv/app/db')).data).toEqual({ user: 'app', password: 'pw1' });
    expect((await app.list('kv/app')).data.keys).toEqual(['db']);
    await app.write('kv/app/config', { level: 'debug' });
    expect((await app.read('kv/app/config')).data).toEqual({ level: 'debug' });

    // Thunks, not promises: a call started early could reject before failure() awaits it.
    for (const attempt of [
      () => app.write('kv/app/db', { password: 'stolen' }),
      () => app.read('kv/ops/key'),
      () => app.delete('kv/app/db'),
      () => app.mounts(),
      () => app.addPolicy({ name: 'mine', rules: 'path "*" { capabilities = ["sudo"] }' }),
      () => app.tokenCreate({ policies: ['root'] }),
    ]) {
      expect(await failure(attempt())).toEqual({ status: 403, error: '1 error occurred:\n\t* permission denied\n\n' });
    }
    // Nothing the refused calls tried took effect.
    expect((await root.read('kv/app/db')).data.password).toBe('pw1');
  });

  it('looks up, renews and revokes itself', async () => {
    const created = await mint({ policies: ['app'], ttl: '10m', explicit_max_ttl: '2h' });
    const app = client(created.auth.client_token);
    const self = await app.tokenLookupSelf();
    expect(self.data).toMatchObject({ policies: ['app', 'default'], creation_ttl: 600, explicit_max_ttl: 7200, renewable: true });

    const renewed = await app.tokenRenewSelf({ increment: '1h' });
    expect(renewed.auth.lease_duration).toBe(3600);
    expect(renewed.auth.client_token).toBe(created.auth.client_token);

    await app.tokenRevokeSelf();
    // Vault 1.17+ names both reasons for a token that is no longer valid.
    expect(await failure(app.tokenLookupSelf())).toEqual({ status: 403, error: '2 errors occurred:\n\t* permission denied\n\t* invalid token\n\n' });
  });

  it('revoking a parent revokes its children; revoke-accessor works for operators', async () => {
    await root.addPolicy({ name: 'issuer', rules: 'path "auth/token/create" { capabilities = ["update"] }' });
    const parentToken = (await mint({ policies: ['app', 'issuer'], ttl: '1h' })).auth.client_token;
    const child = await client(parentToken).tokenCreate({ policies: ['app'], ttl: '30m' });
    expect(child.auth.orphan).toBe(false);
    await root.tokenRevoke({ token: parentToken });
    expect((await failure(client(child.auth.client_token).read('kv/app/db'))).status).toBe(403);

    const other = await mint({ policies: ['app'], ttl: '1h' });
    await root.tokenRevokeAccessor({ accessor: other.auth.accessor });
    expect((await failure(client(other.auth.client_token).read('kv/app/db'))).status).toBe(403);
  });

  it('wrapped responses unwrap exactly once', async () => {
    const wrapped = await root.read('kv/app/db', { headers: { 'X-Vault-Wrap-TTL': '5m' } });
    expect(wrapped.data).toBeNull();
    expect(wrapped.wrap_info).toMatchObject({ ttl: 300, creation_path: 'kv/app/db' });

    // An unprivileged holder unwraps with its own token (the default policy allows it)...
    const holder = client((await mint({ policies: ['default'], ttl: '1h' })).auth.client_token);
    const unwrapped = await holder.unwrap({ token: wrapped.wrap_info.token });
    expect(unwrapped.data).toEqual({ user: 'app', password: 'pw1' });
    // ...and only once.
    expect(await failure(holder.unwrap({ token: wrapped.wrap_info.token }))).toEqual({ status: 400, error: 'wrapping token is not valid or does not exist' });

    // A wrapped token: the wrapping token alone unwraps it.
    const wrappedToken = await mint({ policies: ['app'], ttl: '1h', requestOptions: { headers: { 'X-Vault-Wrap-TTL': '60' } } });
    const auth = (await client(wrappedToken.wrap_info.token).unwrap({})).auth;
    expect(auth.accessor).toBe(wrappedToken.wrap_info.wrapped_accessor);
    expect((await client(auth.client_token).read('kv/app/db')).data.user).toBe('app');
  });
});
