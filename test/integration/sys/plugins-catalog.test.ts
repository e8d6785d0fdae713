// sys/plugins/catalog, sys/plugins/pins, sys/plugins/reload, and mounting catalog plugins through
// sys/mounts and sys/auth (reference part B §5). The plugin directory is the PLUGINS R2 bucket;
// the modules put there are minimal plugins (they are mounted and listed here, not served).
import { env } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { assertModuleMatches } from '../../../src/core/plugins/register';
import { sha256Hex } from '../../../src/core/plugins/store';
import { utf8 } from '../../../src/crypto/encoding';
import { BUILTIN_PLUGIN_VERSION } from '../../../src/core/version';
import { api, initCluster, PERMISSION_DENIED, tokenWithPolicy, type Cluster } from '../../helpers/api';

let c: Cluster;
const call = (method: string, path: string, body?: unknown) => api(method, path, { token: c.root, body });
const ok = async (method: string, path: string, body?: unknown) => {
  const r = await call(method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r;
};
const expect400 = async (method: string, path: string, body: unknown, message: string | RegExp) => {
  const r = await call(method, path, body);
  expect(r.status, r.text).toBe(400);
  expect(r.body.errors).toHaveLength(1);
  if (typeof message === 'string') expect(r.body.errors[0]).toBe(message);
  else expect(r.body.errors[0]).toMatch(message);
};

/** A minimal plugin module (the runtime's contract), different bytes per tag. */
const moduleText = (tag: string) =>
  `import { WorkerEntrypoint } from 'cloudflare:workers';\n// ${tag}\nexport default class extends WorkerEntrypoint {\n  async describe() { return { contract: 1, type: ${JSON.stringify(tag)}, paths: [], secretTypes: {}, periodic: false, renewLogin: false }; }\n}\n`;

const sha256 = (content: string | Uint8Array): Promise<string> => sha256Hex(typeof content === 'string' ? utf8(content) : content);

/** Puts a module into the plugin directory; its sha256. */
async function putModule(command: string, tag: string): Promise<string> {
  const text = moduleText(tag);
  await env.PLUGINS!.put(command, text);
  return sha256(text);
}

/** Puts a module and registers it; its sha256. */
async function register(type: string, name: string, version: string, command: string, extra: Record<string, unknown> = {}): Promise<string> {
  const sha = await putModule(command, `${name}-${version || 'unversioned'}`);
  await ok('POST', `sys/plugins/catalog/${type}/${name}`, { sha256: sha, command, ...(version ? { version } : {}), ...extra });
  return sha;
}

beforeAll(async () => {
  c = await initCluster();
});

describe('the catalog of built-ins', () => {
  it('lists Coffer\'s mountable engines and methods by type and in detailed, test-only types left out', async () => {
    const r = await ok('GET', 'sys/plugins/catalog');
    expect(r.body.data.auth).toEqual(['jwt', 'oidc']);
    expect(r.body.data.secret).toEqual(['aws', 'kv', 'pki', 'transit']);
    expect(r.body.data.database).toBeUndefined();
    expect(r.body.data.detailed).toContainEqual({ type: 'secret', name: 'kv', version: BUILTIN_PLUGIN_VERSION, builtin: true, deprecation_status: 'supported' });
    expect(r.body.data.detailed).toContainEqual({ type: 'auth', name: 'jwt', version: BUILTIN_PLUGIN_VERSION, builtin: true, deprecation_status: 'supported' });
    expect(r.body.data.detailed.map((d: { name: string }) => d.name)).not.toContain('coffer-test-leases');
    expect(BUILTIN_PLUGIN_VERSION).toMatch(/^v\d+\.\d+\.\d+\+builtin/);
  });

  it('lists one type and reads a built-in', async () => {
    expect((await ok('GET', 'sys/plugins/catalog/auth?list=true')).body.data.keys).toEqual(['jwt', 'oidc']);
    expect((await ok('GET', 'sys/plugins/catalog/database?list=true')).body.data.keys).toEqual([]);
    const kv = await ok('GET', 'sys/plugins/catalog/secret/kv');
    expect(kv.body.data).toEqual({ name: 'kv', command: '', args: [], sha256: '', builtin: true, version: BUILTIN_PLUGIN_VERSION, deprecation_status: 'supported' });
    expect((await ok('GET', `sys/plugins/catalog/secret/kv?version=${encodeURIComponent(BUILTIN_PLUGIN_VERSION)}`)).body.data.builtin).toBe(true);
    expect((await call('GET', 'sys/plugins/catalog/auth/kv')).status).toBe(404);
  });
});

describe('registering', () => {
  let sha: string;
  beforeAll(async () => {
    sha = await putModule('reg/alpha.js', 'alpha');
  });

  it.each([
    ['no sha256', { command: 'reg/alpha.js' }, 'missing SHA-256 value'],
    ['a short sha256', { command: 'reg/alpha.js', sha256: 'abcd' }, 'sha256 must be the 64 hexadecimal characters of a SHA-256 digest, got "abcd"'],
    ['a non-hex sha256', { command: 'reg/alpha.js', sha256: 'z'.repeat(64) }, /^sha256 must be the 64 hexadecimal characters/],
    ['no command', { sha256: 'a'.repeat(64) }, 'must provide command: the module file in the plugin directory'],
    ['a command leaving the directory', { sha256: 'a'.repeat(64), command: '../alpha.js' }, 'invalid command "../alpha.js": command must not contain empty, "." or ".." segments'],
    ['an absolute command', { sha256: 'a'.repeat(64), command: '/etc/alpha.js' }, 'invalid command "/etc/alpha.js": command must be relative to the plugin directory'],
    ['args in command and args', { sha256: 'a'.repeat(64), command: 'reg/alpha.js --x', args: ['--y'] }, 'must not specify args in command and args field'],
    ['an env entry without "="', { sha256: 'a'.repeat(64), command: 'reg/alpha.js', env: ['A=1', 'NOPE'] }, 'invalid env entry "NOPE": each entry is KEY=VALUE'],
    ['an env entry without a key', { sha256: 'a'.repeat(64), command: 'reg/alpha.js', env: ['=1'] }, 'invalid env entry "=1": each entry is KEY=VALUE'],
    ['a version that is no semver', { sha256: 'a'.repeat(64), command: 'reg/alpha.js', version: 'one' }, 'version "one" is not a valid semantic version: Malformed version: one'],
    ['a builtin version', { sha256: 'a'.repeat(64), command: 'reg/alpha.js', version: '1.0.0+builtin' }, 'version "v1.0.0+builtin" is not allowed because \'builtin\' is a reserved metadata identifier'],
    ['an oci_image', { sha256: 'a'.repeat(64), command: 'reg/alpha.js', oci_image: 'alpha:1' }, /^oci_image and runtime are not supported/],
  ])('refuses %s', async (_what, body, message) => {
    await expect400('POST', 'sys/plugins/catalog/secret/alpha', body, message);
  });

  it.each([
    ['kv', 'secret'],
    ['jwt', 'auth'],
    ['token', 'auth'],
    ['plugin', 'secret'],
    ['kv-v2', 'secret'],
  ])('refuses the built-in name %s', async (name, type) => {
    await expect400('POST', `sys/plugins/catalog/${type}/${name}`, { sha256: sha, command: 'reg/alpha.js' }, `"${name}" is the name of one of Coffer's built-in engines or auth methods: overriding a built-in plugin is not supported; register the plugin under another name`);
  });

  it('refuses a name outside Vault\'s rules', async () => {
    await expect400('POST', 'sys/plugins/catalog/secret/-alpha', { sha256: sha, command: 'reg/alpha.js' }, /^invalid plugin name "-alpha"/);
    await expect400('POST', 'sys/plugins/catalog/secret/a/b', { sha256: sha, command: 'reg/alpha.js' }, /^invalid plugin name "a\/b"/);
  });

  it('refuses a command naming no file, naming the command and the directory', async () => {
    await expect400('POST', 'sys/plugins/catalog/secret/alpha', { sha256: sha, command: 'reg/nothing.js' }, 'cannot register plugin "alpha": command "reg/nothing.js" names no file in the plugin directory (the R2 bucket bound as PLUGINS)');
  });

  it('refuses a sha256 the file does not have, giving both', async () => {
    const other = 'b'.repeat(64);
    await expect400('POST', 'sys/plugins/catalog/secret/alpha', { sha256: other, command: 'reg/alpha.js' }, `cannot register plugin "alpha": the sha256 given does not match "reg/alpha.js" (given ${other}, the file's is ${sha})`);
    expect((await call('GET', 'sys/plugins/catalog/secret/alpha')).status).toBe(404);
  });

  it('refuses a file that is not a self-contained ES module with a default export', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['bad/syntax.js', 'export default class {', /^cannot register plugin "broken": "bad\/syntax\.js" cannot run: plugin bundle, 1:\d+: syntax error/],
      ['bad/imports.js', "import x from 'lodash';\nexport default x;", /"bad\/imports\.js" cannot run: plugin bundle, 1:1: imports "lodash": a plugin must be one self-contained bundle/],
      ['bad/no-default.js', 'export const x = 1;', /"bad\/no-default\.js" cannot run: plugin bundle: has no default export/],
    ];
    for (const [command, text, message] of cases) {
      await env.PLUGINS!.put(command, text);
      await expect400('POST', 'sys/plugins/catalog/secret/broken', { sha256: await sha256(text), command }, message);
    }
    const binary = new Uint8Array([0xff, 0xfe, 0x00]);
    await env.PLUGINS!.put('bad/binary.js', binary);
    await expect400('POST', 'sys/plugins/catalog/secret/broken', { sha256: await sha256(binary), command: 'bad/binary.js' }, 'cannot register plugin "broken": "bad/binary.js" is not UTF-8 JavaScript');
    expect((await call('GET', 'sys/plugins/catalog/secret/broken')).status).toBe(404);
  });

  it('says when the deployment has no plugin directory', async () => {
    const entry = { type: 'secret' as const, name: 'alpha', version: '', sha256: sha, command: 'reg/alpha.js', args: [], env: [] };
    await expect(assertModuleMatches(null, entry)).rejects.toMatchObject({
      status: 400,
      errors: ['cannot register plugin "alpha": no plugin directory is configured: set COFFER_PLUGIN_DIR for a local server, or bind the PLUGINS R2 bucket in production'],
    });
  });

  it('refuses the untyped legacy registration', async () => {
    await expect400('POST', 'sys/plugins/catalog/alpha', { sha256: sha, command: 'reg/alpha.js' }, 'a plugin type is required: register "alpha" at sys/plugins/catalog/<auth|database|secret>/alpha');
  });

  it('registers, reads without env, and updates the same version in place', async () => {
    const r = await call('POST', 'sys/plugins/catalog/secret/alpha', { sha256: sha.toUpperCase(), command: 'reg/alpha.js --fast', env: ['TOKEN=s3cret'] });
    expect(r.status, r.text).toBe(204);
    expect((await ok('GET', 'sys/plugins/catalog/secret/alpha')).body.data).toEqual({ name: 'alpha', command: 'reg/alpha.js', args: ['--fast'], sha256: sha, builtin: false, version: '' });
    const sha2 = await putModule('reg/alpha-2.js', 'alpha-2');
    await ok('POST', 'sys/plugins/catalog/secret/alpha', { sha256: sha2, command: 'reg/alpha-2.js', args: ['a', 'b'] });
    expect((await ok('GET', 'sys/plugins/catalog/secret/alpha')).body.data).toMatchObject({ command: 'reg/alpha-2.js', args: ['a', 'b'], sha256: sha2 });
  });

  it('keeps versions side by side, normalised with a "v"; a versioned plugin is read with its version', async () => {
    const s1 = await register('secret', 'beta', '1.0.0', 'reg/beta-1.js');
    const s2 = await register('secret', 'beta', 'v1.1', 'reg/beta-2.js');
    expect((await call('GET', 'sys/plugins/catalog/secret/beta')).status).toBe(404);
    expect((await ok('GET', 'sys/plugins/catalog/secret/beta?version=1.0.0')).body.data).toMatchObject({ version: 'v1.0.0', sha256: s1 });
    expect((await ok('GET', 'sys/plugins/catalog/secret/beta?version=v1.1.0')).body.data).toMatchObject({ version: 'v1.1.0', sha256: s2 });
    expect((await call('GET', 'sys/plugins/catalog/secret/beta?version=2.0.0')).status).toBe(404);
    await expect400('GET', 'sys/plugins/catalog/secret/beta?version=x.y', undefined, 'version "x.y" is not a valid semantic version: Malformed version: x.y');

    expect((await ok('GET', 'sys/plugins/catalog/secret?list=true')).body.data.keys).toEqual(['alpha', 'aws', 'beta', 'kv', 'pki', 'transit']);
    const all = (await ok('GET', 'sys/plugins/catalog')).body.data;
    expect(all.secret).toEqual(['alpha', 'aws', 'beta', 'kv', 'pki', 'transit']);
    const beta = all.detailed.filter((d: { name: string }) => d.name === 'beta');
    expect(beta).toEqual([
      { type: 'secret', name: 'beta', version: 'v1.0.0', builtin: false, sha256: s1 },
      { type: 'secret', name: 'beta', version: 'v1.1.0', builtin: false, sha256: s2 },
    ]);
    // Semantic order: numbers compare as numbers, a pre-release before its release.
    await register('secret', 'beta', '1.10.0', 'reg/beta-10.js');
    await register('secret', 'beta', '1.1.0-rc.1', 'reg/beta-rc.js');
    const order = (await ok('GET', 'sys/plugins/catalog')).body.data.detailed.filter((d: { name: string }) => d.name === 'beta').map((d: { version: string }) => d.version);
    expect(order).toEqual(['v1.0.0', 'v1.1.0-rc.1', 'v1.1.0', 'v1.10.0']);
  });

  it('lists database plugins under their own key', async () => {
    const s = await register('database', 'dbplug', '', 'reg/db.js');
    const all = (await ok('GET', 'sys/plugins/catalog')).body.data;
    expect(all.database).toEqual(['dbplug']);
    expect(all.detailed).toContainEqual({ type: 'database', name: 'dbplug', version: '', builtin: false, sha256: s });
  });

  it('deletes one version (204, also when absent), never a built-in version', async () => {
    await register('secret', 'gamma', '1.0.0', 'reg/gamma-1.js');
    await register('secret', 'gamma', '2.0.0', 'reg/gamma-2.js');
    expect((await call('DELETE', 'sys/plugins/catalog/secret/gamma?version=3.0.0')).status).toBe(204);
    expect((await call('DELETE', 'sys/plugins/catalog/secret/gamma?version=1.0.0')).status).toBe(204);
    expect((await call('GET', 'sys/plugins/catalog/secret/gamma?version=1.0.0')).status).toBe(404);
    expect((await call('GET', 'sys/plugins/catalog/secret/gamma?version=2.0.0')).status).toBe(200);
    await expect400('DELETE', `sys/plugins/catalog/secret/kv?version=${encodeURIComponent(BUILTIN_PLUGIN_VERSION)}`, undefined, `version "${BUILTIN_PLUGIN_VERSION}" cannot be deleted`);
    await expect400('DELETE', 'sys/plugins/catalog/secret/kv', undefined, `version "${BUILTIN_PLUGIN_VERSION}" cannot be deleted`);
    expect((await call('DELETE', 'sys/plugins/catalog/secret/gamma?version=2.0.0')).status).toBe(204);
    expect((await ok('GET', 'sys/plugins/catalog/secret?list=true')).body.data.keys).not.toContain('gamma');
  });

  it('answers the untyped legacy read and delete with Vault\'s warnings only', async () => {
    const read = await ok('GET', 'sys/plugins/catalog/alpha');
    expect(read.body.data).toBeNull();
    expect(read.body.warnings).toEqual(['Deprecated API endpoint, cannot read plugin information from catalog for "alpha"']);
    const del = await ok('DELETE', 'sys/plugins/catalog/alpha');
    expect(del.body.warnings).toEqual(['Deprecated API endpoint, cannot deregister plugin from catalog for "alpha"']);
    expect((await call('GET', 'sys/plugins/catalog/secret/alpha')).status).toBe(200);
  });

  it('needs sudo for catalog entries, not for the catalog listing', async () => {
    const token = await tokenWithPolicy(c.root, 'plugins-no-sudo', 'path "sys/plugins/*" { capabilities = ["create", "read", "update", "delete", "list"] }');
    const as = (method: string, path: string, body?: unknown) => api(method, path, { token, body });
    const write = await as('POST', 'sys/plugins/catalog/secret/delta', { sha256: sha, command: 'reg/alpha.js' });
    expect(write.status).toBe(403);
    expect(write.body.errors).toEqual([PERMISSION_DENIED]);
    expect((await as('GET', 'sys/plugins/catalog/secret/alpha')).status).toBe(403);
    expect((await as('GET', 'sys/plugins/catalog')).status).toBe(200);
  });
});

describe('pins', () => {
  beforeAll(async () => {
    await register('secret', 'pinny', '1.0.0', 'pins/1.js');
    await register('secret', 'pinny', '2.0.0', 'pins/2.js');
  });

  it.each([
    ['no version', {}, 'missing version: give the registered version to pin'],
    ['an unregistered version', { version: '3.0.0' }, 'cannot pin secret plugin "pinny" to v3.0.0: that version is not registered in the catalog (registered: v1.0.0, v2.0.0)'],
    ['a builtin version', { version: BUILTIN_PLUGIN_VERSION }, `version "${BUILTIN_PLUGIN_VERSION}" is a builtin version and cannot be pinned`],
    ['a version that is no semver', { version: 'latest' }, 'version "latest" is not a valid semantic version: Malformed version: latest'],
  ])('refuses %s', async (_what, body, message) => {
    await expect400('POST', 'sys/plugins/pins/secret/pinny', body, message);
  });

  it('refuses a plugin that is not in the catalog', async () => {
    await expect400('POST', 'sys/plugins/pins/auth/pinny', { version: '1.0.0' }, 'cannot pin auth plugin "pinny" to v1.0.0: that version is not registered in the catalog');
  });

  it('pins, reads, lists and unpins', async () => {
    expect((await call('GET', 'sys/plugins/pins/secret/pinny')).status).toBe(404);
    expect((await call('POST', 'sys/plugins/pins/secret/pinny', { version: '2.0.0' })).status).toBe(204);
    expect((await ok('GET', 'sys/plugins/pins/secret/pinny')).body.data).toEqual({ name: 'pinny', type: 'secret', version: 'v2.0.0' });
    expect((await ok('GET', 'sys/plugins/pins')).body.data.pinned_versions).toContainEqual({ name: 'pinny', type: 'secret', version: 'v2.0.0' });
    expect((await ok('GET', 'sys/plugins/pins?list=true')).body.data.pinned_versions).toContainEqual({ name: 'pinny', type: 'secret', version: 'v2.0.0' });
    // A pinned version cannot be deleted from the catalog.
    await expect400('DELETE', 'sys/plugins/catalog/secret/pinny?version=2.0.0', undefined, 'cannot delete secret plugin "pinny" version v2.0.0: it is pinned; delete the pin first (sys/plugins/pins/secret/pinny)');
    expect((await call('DELETE', 'sys/plugins/pins/secret/pinny')).status).toBe(204);
    expect((await call('DELETE', 'sys/plugins/pins/secret/pinny')).status).toBe(204);
    expect((await call('GET', 'sys/plugins/pins/secret/pinny')).status).toBe(404);
    expect((await ok('GET', 'sys/plugins/pins')).body.data.pinned_versions).not.toContainEqual(expect.objectContaining({ name: 'pinny' }));
  });
});

describe('mounting catalog plugins', () => {
  let v1: string;
  let v2: string;
  beforeAll(async () => {
    v1 = await register('secret', 'totpish', '1.0.0', 'mount/totpish-1.js');
    v2 = await register('secret', 'totpish', '1.1.0', 'mount/totpish-2.js');
  });

  it('refuses unknown versions and plugins', async () => {
    await expect400('POST', 'sys/mounts/t0', { type: 'totpish', plugin_version: '9.0.0' }, 'secret plugin "totpish" has no version v9.0.0 in the catalog (registered: v1.0.0, v1.1.0)');
    await expect400('POST', 'sys/mounts/t0', { type: 'totpish', plugin_version: 'nine' }, 'version "nine" is not a valid semantic version: Malformed version: nine');
    await expect400('POST', 'sys/auth/t0', { type: 'totpish' }, 'plugin not found in the catalog: totpish');
    await expect400('POST', 'sys/mounts/t0', { type: 'nosuchplugin' }, 'plugin not found in the catalog: nosuchplugin');
  });

  it('mounts the requested version and lists what it runs', async () => {
    expect((await call('POST', 'sys/mounts/t1', { type: 'totpish', plugin_version: '1.0.0', description: 'codes' })).status).toBe(204);
    const info = (await ok('GET', 'sys/mounts/t1')).body.data;
    expect(info).toMatchObject({ type: 'totpish', description: 'codes', plugin_version: 'v1.0.0', running_plugin_version: 'v1.0.0', running_sha256: v1, plugin_status: 'running' });
    expect(info).not.toHaveProperty('deprecation_status');
    expect(info).not.toHaveProperty('plugin_error');
    expect(info.accessor).toMatch(/^totpish_[0-9a-f]{8}$/);
    const listed = (await ok('GET', 'sys/mounts')).body.data['t1/'];
    expect(listed).toEqual(info);
    // Built-in mounts keep their shape.
    expect((await ok('GET', 'sys/mounts')).body.data['cubbyhole/']).toMatchObject({ deprecation_status: 'supported', running_plugin_version: BUILTIN_PLUGIN_VERSION, running_sha256: '' });
    expect((await ok('GET', 'sys/mounts')).body.data['cubbyhole/']).not.toHaveProperty('plugin_status');
  });

  it('runs, as Vault does, the pinned version (even over plugin_version), else the requested one, else the unversioned entry, else the newest', async () => {
    // Versioned entries only: the newest.
    await ok('POST', 'sys/mounts/t0', { type: 'totpish' });
    expect((await ok('GET', 'sys/mounts/t0')).body.data).toMatchObject({ plugin_version: '', running_plugin_version: 'v1.1.0', running_sha256: v2 });
    await ok('POST', 'sys/plugins/pins/secret/totpish', { version: '1.0.0' });
    await ok('POST', 'sys/mounts/t2', { type: 'totpish' });
    expect((await ok('GET', 'sys/mounts/t2')).body.data).toMatchObject({ plugin_version: '', running_plugin_version: 'v1.0.0', running_sha256: v1 });
    // The pin wins over the mount's own version (which must still be registered).
    await ok('POST', 'sys/mounts/t3', { type: 'totpish', plugin_version: 'v1.1.0' });
    expect((await ok('GET', 'sys/mounts/t3')).body.data).toMatchObject({ plugin_version: 'v1.1.0', running_plugin_version: 'v1.0.0' });
    await ok('DELETE', 'sys/plugins/pins/secret/totpish');

    const u = await register('secret', 'totpish', '', 'mount/totpish-u.js');
    await ok('POST', 'sys/mounts/t4', { type: 'totpish' });
    expect((await ok('GET', 'sys/mounts/t4')).body.data).toMatchObject({ plugin_version: '', running_plugin_version: '', running_sha256: u, plugin_status: 'running' });
    await ok('POST', 'sys/mounts/t5', { type: 'totpish', plugin_version: '1.0.0' });
    expect((await ok('GET', 'sys/mounts/t5')).body.data).toMatchObject({ plugin_version: 'v1.0.0', running_plugin_version: 'v1.0.0' });
  });

  it('accepts Vault\'s legacy type "plugin" with plugin_name, config.plugin_name first', async () => {
    await ok('POST', 'sys/mounts/legacy1', { type: 'plugin', plugin_name: 'totpish', plugin_version: '1.0.0' });
    expect((await ok('GET', 'sys/mounts/legacy1')).body.data).toMatchObject({ type: 'totpish', running_plugin_version: 'v1.0.0' });
    await ok('POST', 'sys/mounts/legacy2', { type: 'plugin', plugin_name: 'nosuch', config: { plugin_name: 'totpish' }, plugin_version: '1.1.0' });
    expect((await ok('GET', 'sys/mounts/legacy2')).body.data).toMatchObject({ type: 'totpish', running_plugin_version: 'v1.1.0' });
    await expect400('POST', 'sys/mounts/legacy3', { type: 'plugin' }, 'plugin_name must be provided for plugin backend');
  });

  it('mounts an auth plugin with sys/auth', async () => {
    const sha = await register('auth', 'userpassish', '0.1.0', 'mount/userpassish.js');
    await ok('POST', 'sys/auth/up', { type: 'userpassish', plugin_version: '0.1.0' });
    const info = (await ok('GET', 'sys/auth')).body.data['up/'];
    expect(info).toMatchObject({ type: 'userpassish', plugin_version: 'v0.1.0', running_plugin_version: 'v0.1.0', running_sha256: sha, plugin_status: 'running' });
    expect(info.accessor).toMatch(/^auth_userpassish_[0-9a-f]{8}$/);
    expect((await ok('GET', 'sys/auth/up')).body.data).toMatchObject({ running_sha256: sha, plugin_status: 'running' });
    await expect400('POST', 'sys/mounts/up2', { type: 'userpassish', plugin_version: '0.1.0' }, 'plugin not found in the catalog: userpassish');
  });

  it('refuses to mount a database plugin', async () => {
    await expect400('POST', 'sys/mounts/db', { type: 'dbplug' }, 'plugin "dbplug" is registered as a database plugin, and Coffer has no database secrets engine to run it in');
  });

  it('refuses plugin_version on a built-in type, except its own version', async () => {
    await expect400('POST', 'sys/mounts/kvx', { type: 'kv', plugin_version: 'v1.0.0' }, 'cannot select non-builtin version of secrets plugin kv');
    await expect400('POST', 'sys/auth/jwtx', { type: 'jwt', plugin_version: '2.0.0' }, 'cannot select non-builtin version of auth plugin jwt');
    await ok('POST', 'sys/mounts/kvx', { type: 'kv', plugin_version: BUILTIN_PLUGIN_VERSION });
    expect((await ok('GET', 'sys/mounts/kvx')).body.data).toMatchObject({ type: 'kv', plugin_version: '', running_plugin_version: BUILTIN_PLUGIN_VERSION });
    await expect400('POST', 'sys/mounts/kvx/tune', { plugin_version: '1.0.0' }, 'cannot select non-builtin version of secrets plugin kv');
  });

  it('refuses to mount a plugin whose module changed, and lists a mounted one as failed once it does', async () => {
    const sha = await register('secret', 'fragile', '', 'mount/fragile.js');
    await ok('POST', 'sys/mounts/fragile', { type: 'fragile' });
    await env.PLUGINS!.put('mount/fragile.js', moduleText('tampered'));
    const tampered = await sha256(moduleText('tampered'));
    const expected = `plugin "fragile" refused: the sha256 of "mount/fragile.js" is ${tampered}, but the catalog entry it runs pins ${sha} (the file changed after registration; register the new file and reload the mount)`;
    expect((await ok('GET', 'sys/mounts')).body.data['fragile/']).toMatchObject({ plugin_status: 'failed', plugin_error: expected, running_sha256: sha });
    expect((await ok('GET', 'sys/mounts/fragile')).body.data).toMatchObject({ plugin_status: 'failed', plugin_error: expected });
    await expect400('POST', 'sys/mounts/fragile2', { type: 'fragile' }, `cannot enable secrets engine "fragile": ${expected}`);

    await env.PLUGINS!.delete('mount/fragile.js');
    expect((await ok('GET', 'sys/mounts/fragile')).body.data).toMatchObject({
      plugin_status: 'failed',
      plugin_error: 'plugin "fragile" cannot be loaded: its module "mount/fragile.js" is missing from the plugin directory (the R2 bucket bound as PLUGINS)',
    });
    // Other plugin mounts are unaffected.
    expect((await ok('GET', 'sys/mounts')).body.data['t1/'].plugin_status).toBe('running');
  });

  it('checks a tuned plugin_version and applies it only at the next reload', async () => {
    await expect400('POST', 'sys/mounts/t1/tune', { plugin_version: '7.0.0' }, 'secret plugin "totpish" has no version v7.0.0 in the catalog (registered: (unversioned), v1.0.0, v1.1.0)');
    await expect400('POST', 'sys/mounts/t1/tune', { plugin_version: 'seven' }, 'version "seven" is not a valid semantic version: Malformed version: seven');
    const r = await ok('POST', 'sys/mounts/t1/tune', { plugin_version: '1.1.0' });
    expect(r.body.warnings).toEqual(['plugin_version takes effect when the mount is reloaded (sys/plugins/reload/backend); it runs v1.0.0 until then']);
    expect((await ok('GET', 'sys/mounts/t1/tune')).body.data.plugin_version).toBe('v1.1.0');
    expect((await ok('GET', 'sys/mounts/t1')).body.data).toMatchObject({ plugin_version: 'v1.1.0', running_plugin_version: 'v1.0.0', running_sha256: v1 });

    const reload = await ok('POST', 'sys/plugins/reload/backend', { mounts: ['t1'] });
    expect(reload.body.data.reload_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(reload.body.warnings ?? null).toBeNull();
    expect((await ok('GET', 'sys/mounts/t1')).body.data).toMatchObject({ plugin_version: 'v1.1.0', running_plugin_version: 'v1.1.0', running_sha256: v2 });
  });
});

describe('reloading', () => {
  it.each([
    ['plugin and mounts', { plugin: 'totpish', mounts: ['t1'] }, 'plugin and mounts cannot be set at the same time'],
    ['neither', {}, 'plugin or mounts must be provided'],
    ['an unknown scope', { plugin: 'totpish', scope: 'cluster' }, "reload scope must be omitted or 'global'"],
    ['a mount that does not exist', { mounts: ['t1', 'nowhere'] }, 'cannot fetch mount entry on "nowhere/"'],
    ['an auth mount that does not exist', { mounts: 'auth/nowhere' }, 'cannot fetch mount entry on "auth/nowhere/"'],
  ])('refuses %s', async (_what, body, message) => {
    await expect400('POST', 'sys/plugins/reload/backend', body, message);
  });

  it('refuses an unknown scope on reload/:type/:name', async () => {
    await expect400('POST', 'sys/plugins/reload/secret/totpish', { scope: 'x' }, "reload scope must be omitted or 'global'");
  });

  it('re-resolves every mount of a plugin from the pin, and reports per mount', async () => {
    const v2 = (await ok('GET', 'sys/plugins/catalog/secret/totpish?version=1.1.0')).body.data.sha256;
    // A pin moves every mount of the plugin at the reload, even one with its own plugin_version.
    await ok('POST', 'sys/plugins/pins/secret/totpish', { version: '1.1.0' });
    expect((await ok('GET', 'sys/mounts/t4')).body.data.running_plugin_version).toBe('');
    const r = await ok('POST', 'sys/plugins/reload/secret/totpish', {});
    const id = r.body.data.reload_id;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect((await ok('GET', 'sys/mounts/t4')).body.data).toMatchObject({ plugin_version: '', running_plugin_version: 'v1.1.0', running_sha256: v2 });
    expect((await ok('GET', 'sys/mounts/t3')).body.data).toMatchObject({ plugin_version: 'v1.1.0', running_plugin_version: 'v1.1.0' });
    expect((await ok('GET', 'sys/mounts/t5')).body.data).toMatchObject({ plugin_version: 'v1.0.0', running_plugin_version: 'v1.1.0' });

    const status = (await ok('GET', `sys/plugins/reload/backend/status?reload_id=${id}`)).body.data;
    expect(status.reload_id).toBe(id);
    expect(Object.keys(status.results).sort()).toEqual(['legacy1/', 'legacy2/', 't0/', 't1/', 't2/', 't3/', 't4/', 't5/']);
    expect(status.results['t4/']).toMatchObject({ error: '', running_plugin_version: 'v1.1.0', running_sha256: v2 });
    expect(Date.parse(status.results['t4/'].timestamp)).toBeGreaterThan(Date.now() - 60_000);
    expect(Date.parse(status.timestamp)).toBeGreaterThan(Date.now() - 60_000);
    await ok('DELETE', 'sys/plugins/pins/secret/totpish');
  });

  it('answers a global reload 202 and reports a mount whose plugin cannot run', async () => {
    await register('secret', 'brittle', '', 'reload/brittle.js');
    await ok('POST', 'sys/mounts/brittle', { type: 'brittle' });
    await env.PLUGINS!.delete('reload/brittle.js');
    const r = await call('POST', 'sys/plugins/reload/backend', { plugin: 'brittle', scope: 'global' });
    expect(r.status).toBe(202);
    const problem = 'plugin "brittle" cannot be loaded: its module "reload/brittle.js" is missing from the plugin directory (the R2 bucket bound as PLUGINS)';
    expect(r.body.warnings).toEqual([`brittle/ was reloaded, but its plugin cannot run: ${problem}`]);
    const status = (await ok('GET', `sys/plugins/reload/backend/status?reload_id=${r.body.data.reload_id}`)).body.data;
    expect(status.results['brittle/'].error).toBe(problem);
  });

  it('counts named built-in mounts as reloaded, and warns when nothing was', async () => {
    const r = await ok('POST', 'sys/plugins/reload/backend', { mounts: 'sys/auth/token,cubbyhole/' });
    expect(r.body.warnings ?? null).toBeNull();
    const status = (await ok('GET', `sys/plugins/reload/backend/status?reload_id=${r.body.data.reload_id}`)).body.data;
    expect(status.results).toEqual({ 'auth/token/': { timestamp: expect.any(String), error: '' }, 'cubbyhole/': { timestamp: expect.any(String), error: '' } });

    const none = await ok('POST', 'sys/plugins/reload/backend', { plugin: 'nosuchplugin' });
    expect(none.body.data.reload_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(none.body.warnings).toEqual(['no plugins were reloaded: no mount runs plugin "nosuchplugin"']);
    const auth = await ok('POST', 'sys/plugins/reload/auth/totpish', {});
    expect(auth.body.warnings).toEqual(['no plugins were reloaded: no mount runs auth plugin "totpish"']);
  });

  it('refuses a reload whose mount can no longer be resolved, changing nothing', async () => {
    await register('secret', 'fleeting', '2.0.0', 'reload/fleeting.js');
    await ok('POST', 'sys/mounts/fleeting', { type: 'fleeting', plugin_version: '2.0.0' });
    const del = await ok('DELETE', 'sys/plugins/catalog/secret/fleeting?version=2.0.0');
    expect(del.body.warnings).toEqual([
      'fleeting/ still runs this version: it keeps running until reloaded, and a reload fails until another version is registered or selected (tune plugin_version)',
    ]);
    await expect400('POST', 'sys/plugins/reload/backend', { plugin: 'fleeting' }, 'cannot reload fleeting/: plugin "fleeting" is no longer in the catalog');
    expect((await ok('GET', 'sys/mounts/fleeting')).body.data.running_plugin_version).toBe('v2.0.0');
  });

  it('answers the status of unknown or missing reload ids clearly', async () => {
    const r = await call('GET', 'sys/plugins/reload/backend/status?reload_id=00000000-0000-0000-0000-000000000000');
    expect(r.status).toBe(404);
    expect(r.body.errors).toEqual(['no plugin reload with id "00000000-0000-0000-0000-000000000000" (the last 20 reloads are kept)']);
    await expect400('GET', 'sys/plugins/reload/backend/status', undefined, 'missing reload_id');
  });
});
