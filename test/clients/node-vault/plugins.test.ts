// Catalog plugins through node-vault: registration and reloads with its generic write/read/list,
// mounting with mount() and enableAuth(), the shipped TOTP engine (codes checked against Debian's
// oathtool) and userpass method (node-vault's own userpassLogin), versions side by side with
// pins, and a misbehaving plugin's errors. The bundles are in the launcher's plugin directory.
import { execFileSync } from 'node:child_process';
import { copyFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { failure, unique, vault } from './client';

const root = vault();
const plugins = inject('clientPlugins');

const oathtool = (secret: string, args: string[] = []): string => execFileSync('oathtool', ['--totp', ...args, '-b', secret], { encoding: 'utf8' }).trim();

describe('TOTP plugin', () => {
  it('registers, mounts and generates codes oathtool agrees with', async () => {
    const name = unique('totp');
    const mount = unique('totp');
    await root.write(`sys/plugins/catalog/secret/${name}`, { sha256: plugins.sha256.totp, command: 'totp.js' });
    expect((await root.read(`sys/plugins/catalog/secret/${name}`)).data).toMatchObject({ name, command: 'totp.js', sha256: plugins.sha256.totp, builtin: false, version: '' });
    await root.mount({ mount_point: mount, type: name });
    const made = await root.write(`${mount}/keys/web`, { generate: true, issuer: 'Coffer', account_name: 'ada' });
    const secret = new URL(made.data.url).searchParams.get('secret')!;
    let agreed = false;
    for (let i = 0; i < 2 && !agreed; i++) agreed = (await root.read(`${mount}/code/web`)).data.code === oathtool(secret);
    expect(agreed).toBe(true);
    expect((await root.write(`${mount}/code/web`, { code: oathtool(secret) })).data.valid).toBe(true);
    expect((await root.list(`${mount}/keys`)).data.keys).toEqual(['web']);
    const bad = await failure(root.write(`${mount}/keys/x`, { generate: true, account_name: 'no issuer' }));
    expect(bad.status).toBe(400);
  });
});

describe('userpass plugin', () => {
  it('logs in with node-vault’s userpassLogin and gets a Coffer token', async () => {
    const name = unique('userpass');
    const mount = unique('up');
    await root.write(`sys/plugins/catalog/auth/${name}`, { sha256: plugins.sha256.userpass, command: 'userpass.js', version: '1.0.0' });
    await root.enableAuth({ mount_point: mount, type: name, plugin_version: 'v1.0.0' });
    await root.write(`auth/${mount}/users/grace`, { password: 'hopper', token_policies: ['default', 'ops'], token_ttl: '1h' });
    const client = vault('');
    const login = await client.userpassLogin({ mount_point: mount, username: 'grace', password: 'hopper' });
    expect(login.auth.policies.sort()).toEqual(['default', 'ops']);
    expect(login.auth.lease_duration).toBe(3600);
    expect(client.token).toBe(login.auth.client_token);
    expect((await client.tokenLookupSelf()).data).toMatchObject({ display_name: `${mount}-grace`, path: `auth/${mount}/login/grace` });
    const wrong = await failure(vault('').userpassLogin({ mount_point: mount, username: 'grace', password: 'nope' }));
    expect(wrong).toEqual({ status: 400, errors: ['invalid username or password'] });
    const listed = (await root.auths()).data[`${mount}/`];
    expect(listed).toMatchObject({ type: name, plugin_version: 'v1.0.0', running_plugin_version: 'v1.0.0', running_sha256: plugins.sha256.userpass });
  });
});

describe('versions, pins and a misbehaving plugin', () => {
  it('two versions side by side; pin and reload switch between them', async () => {
    const name = unique('mb');
    const mount = unique('mb');
    for (const v of ['1', '2']) await root.write(`sys/plugins/catalog/secret/${name}`, { sha256: plugins.sha256.misbehave, command: 'misbehave.js', version: `v${v}.0.0`, env: [`ECHO_VERSION=${v}`] });
    expect((await root.read('sys/plugins/catalog')).data.detailed.filter((d: { name: string }) => d.name === name).map((d: { version: string }) => d.version)).toEqual(['v1.0.0', 'v2.0.0']);
    // Versioned entries only and no pin: the newest.
    await root.mount({ mount_point: mount, type: name });
    expect((await root.read(`${mount}/version`)).data.version).toBe('2');
    await root.write(`sys/plugins/pins/secret/${name}`, { version: 'v1.0.0' });
    const reloaded = await root.write(`sys/plugins/reload/secret/${name}`, {});
    expect(reloaded.data.reload_id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await root.read(`${mount}/version`)).data.version).toBe('1');
    // The catalog's other endpoints as node-vault reaches them: LIST of a type, pins read and
    // listed, the reload's status, and deleting one version (JSON nulls are zero values).
    expect((await root.list('sys/plugins/catalog/secret')).data.keys).toContain(name);
    expect((await root.read(`sys/plugins/pins/secret/${name}`)).data).toEqual({ name, type: 'secret', version: 'v1.0.0' });
    expect((await root.read('sys/plugins/pins')).data.pinned_versions).toContainEqual({ name, type: 'secret', version: 'v1.0.0' });
    const status = await root.read(`sys/plugins/reload/backend/status?reload_id=${reloaded.data.reload_id}`);
    expect(status.data.results[`${mount}/`]).toMatchObject({ error: '', running_plugin_version: 'v1.0.0' });
    await root.write(`sys/plugins/catalog/secret/${name}`, { sha256: plugins.sha256.misbehave, command: 'misbehave.js', version: 'v3.0.0', args: null, env: null });
    expect((await root.read(`sys/plugins/catalog/secret/${name}?version=v3.0.0`)).data).toMatchObject({ args: [], version: 'v3.0.0' });
    await root.delete(`sys/plugins/catalog/secret/${name}?version=v3.0.0`);
    expect((await failure(root.read(`sys/plugins/catalog/secret/${name}?version=v3.0.0`))).status).toBe(404);
    await root.delete(`sys/plugins/pins/secret/${name}`);
    expect((await failure(root.read(`sys/plugins/pins/secret/${name}`))).status).toBe(404);
    // Registered with versions only: a read must say which.
    expect((await failure(root.read(`sys/plugins/catalog/secret/${name}`))).status).toBe(404);
    expect((await root.read(`sys/plugins/catalog/secret/${name}?version=v2.0.0`)).data.version).toBe('v2.0.0');
  });

  it('a throwing or looping plugin answers a clear error and the mount keeps serving', async () => {
    const name = unique('mb');
    const mount = unique('mb');
    const command = `${unique('misbehave')}.js`;
    copyFileSync(path.join(plugins.dir, 'misbehave.js'), path.join(plugins.dir, command));
    try {
      await root.write(`sys/plugins/catalog/secret/${name}`, { sha256: plugins.sha256.misbehave, command });
      await root.mount({ mount_point: mount, type: name });
      expect(await failure(root.read(`${mount}/throw`))).toEqual({ status: 500, errors: [`plugin "${name}" failed during read throw: the plugin gave up`] });
      const loop = await failure(root.read(`${mount}/loop`));
      expect(loop.status).toBe(500);
      expect(loop.errors[0]).toContain('exceeded its step budget');
      await root.write(`${mount}/item/a`, { value: 'still here' });
      expect((await root.read(`${mount}/item/a`)).data.value).toBe('still here');
    } finally {
      rmSync(path.join(plugins.dir, command), { force: true });
    }
  });
});
