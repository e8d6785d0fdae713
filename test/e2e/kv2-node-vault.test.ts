// KV version 2 as a node-vault user meets it on a fresh `npm start`: secret/ is versioned, data and
// metadata paths, check-and-set, soft delete / undelete / destroy, and a narrow policy on data/.
import nodeVault from 'node-vault';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLauncher, tempDir, type Server } from './processes';

const ROOT_TOKEN = 'hvs.e2eRootTokenForKV2Tests0000';
type Client = ReturnType<typeof nodeVault>;

async function failure(p: Promise<unknown>): Promise<{ status: number; errors: string[]; body: unknown }> {
  try {
    await p;
  } catch (e) {
    const err = e as { response?: { statusCode: number; body?: { errors?: string[] } } };
    return { status: err.response?.statusCode ?? 0, errors: err.response?.body?.errors ?? [], body: err.response?.body };
  }
  throw new Error('expected the call to fail');
}

describe('KV v2 at secret/ with node-vault', () => {
  let server: Server;
  let vault: Client;
  const client = (token?: string) => nodeVault({ endpoint: server.url, token, noCustomHTTPVerbs: true });

  beforeAll(async () => {
    server = await startLauncher(tempDir('coffer-e2e-kv2-'), { COFFER_DEV_ROOT_TOKEN: ROOT_TOKEN });
    vault = client(ROOT_TOKEN);
  });
  afterAll(async () => {
    await server?.stop('SIGTERM');
  });

  it('writes versions and reads the latest or a chosen one', async () => {
    const v1 = await vault.write('secret/data/app/db', { data: { password: 'one' } });
    expect(v1.data).toMatchObject({ version: 1, destroyed: false, deletion_time: '', custom_metadata: null });
    expect(v1.data.created_time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    await vault.write('secret/data/app/db', { data: { password: 'two' } });

    const latest = await vault.read('secret/data/app/db');
    expect(latest.data.data).toEqual({ password: 'two' });
    expect(latest.data.metadata.version).toBe(2);
    expect((await vault.read('secret/data/app/db?version=1')).data.data).toEqual({ password: 'one' });

    const meta = await vault.read('secret/metadata/app/db');
    expect(meta.data).toMatchObject({ current_version: 2, oldest_version: 0, max_versions: 0, cas_required: false, delete_version_after: '0s' });
    expect(Object.keys(meta.data.versions)).toEqual(['1', '2']);
    expect((await vault.list('secret/metadata/app')).data.keys).toEqual(['db']);
    expect((await vault.list('secret/metadata')).data.keys).toEqual(['app/']);
  });

  it('refuses a stale check-and-set write with Vault\'s message', async () => {
    await vault.write('secret/data/cas', { data: { n: 1 }, options: { cas: 0 } });
    const stale = await failure(vault.write('secret/data/cas', { data: { n: 2 }, options: { cas: 0 } }));
    expect(stale.status).toBe(400);
    expect(stale.errors[0]).toContain('check-and-set parameter did not match the current version');
    expect((await vault.write('secret/data/cas', { data: { n: 2 }, options: { cas: 1 } })).data.version).toBe(2);
  });

  it('soft-deletes, undeletes and destroys versions', async () => {
    await vault.write('secret/data/life', { data: { v: 'a' } });
    await vault.write('secret/data/life', { data: { v: 'b' } });
    await vault.delete('secret/data/life');
    const deleted = await failure(vault.read('secret/data/life'));
    expect(deleted.status).toBe(404);
    // The 404 still carries the version's metadata, as Vault's does.
    expect((deleted.body as { data: { metadata: { version: number; deletion_time: string } } }).data.metadata).toMatchObject({ version: 2 });

    await vault.write('secret/undelete/life', { versions: [2] });
    expect((await vault.read('secret/data/life')).data.data).toEqual({ v: 'b' });

    await vault.write('secret/destroy/life', { versions: [1] });
    expect((await vault.read('secret/metadata/life')).data.versions['1'].destroyed).toBe(true);
    expect((await failure(vault.read('secret/data/life?version=1'))).status).toBe(404);

    await vault.delete('secret/metadata/life');
    expect((await failure(vault.read('secret/metadata/life'))).status).toBe(404);
  });

  it('a token with a policy on secret/data/app/* reads there and nowhere else', async () => {
    await vault.write('secret/data/ops/key', { data: { value: 'hidden' } });
    await vault.addPolicy({
      name: 'kv2-app',
      rules: 'path "secret/data/app/*" { capabilities = ["read"] }\npath "secret/metadata/app/*" { capabilities = ["list", "read"] }',
    });
    const token = (await client(ROOT_TOKEN).tokenCreate({ policies: ['kv2-app'], ttl: '1h' })).auth.client_token;
    const app = client(token);
    expect((await app.read('secret/data/app/db')).data.data).toEqual({ password: 'two' });
    const attempts = [
      () => app.read('secret/data/ops/key'),
      () => app.write('secret/data/app/db', { data: { password: 'stolen' } }),
      () => app.delete('secret/metadata/app/db'),
    ];
    for (const attempt of attempts) {
      const f = await failure(attempt());
      expect(f.status).toBe(403);
      expect(f.errors).toEqual(['1 error occurred:\n\t* permission denied\n\n']);
    }
    expect((await vault.read('secret/data/app/db')).data.data).toEqual({ password: 'two' });
  });
});
