// ACL policies end to end: sys/policies/acl and sys/policy, the default policy, tokens limited by
// policies on every kind of object, sudo paths, parameters, immediate effect of policy changes,
// sys/capabilities*, and a table of path tricks that must never reach what a deny covers.
import { SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, initCluster, PERMISSION_DENIED, type Cluster } from '../../helpers/api';

let c: Cluster;
const root = (method: string, path: string, body?: unknown) => api(method, path, { token: c.root, body });
const putPolicy = async (name: string, policy: string) => {
  const r = await root('PUT', `sys/policies/acl/${name}`, { policy });
  if (r.status !== 204 && r.status !== 200) throw new Error(`${r.status} ${r.text}`);
};
const tokenWith = async (policies: string[], extra: Record<string, unknown> = {}) =>
  (await root('POST', 'auth/token/create', { policies, ...extra })).body.auth.client_token as string;

beforeAll(async () => {
  c = await initCluster();
  await root('POST', 'sys/mounts/secret', { type: 'kv' });
  await root('PUT', 'secret/app/config', { password: 'app-secret' });
  await root('PUT', 'secret/admin/keys', { master: 'admin-secret' });
});

describe('managing policies', () => {
  it('lists default and root, and the legacy listing too', async () => {
    expect((await root('GET', 'sys/policies/acl?list=true')).body.data.keys).toEqual(['default', 'root']);
    const legacy = (await root('GET', 'sys/policy')).body;
    expect(legacy.data).toEqual({ keys: ['default', 'root'], policies: ['default', 'root'] });
    expect(legacy.policies).toEqual(['default', 'root']);
    expect((await root('GET', 'sys/policies/acl/default')).body.data.policy).toContain('auth/token/lookup-self');
  });

  it('writes, reads and deletes a policy; names are lowercased with a warning', async () => {
    const r = await root('PUT', 'sys/policies/acl/Readers', { policy: 'path "secret/*" { capabilities = ["read"] }' });
    expect(r.status).toBe(200);
    expect(r.body.warnings).toEqual(['policy name was converted to readers']);
    expect((await root('GET', 'sys/policies/acl/readers')).body.data).toEqual({ name: 'readers', policy: 'path "secret/*" { capabilities = ["read"] }' });
    expect((await root('GET', 'sys/policy/readers')).body.data.rules).toContain('secret/*');
    const legacy = await root('PUT', 'sys/policy/legacy', { rules: 'path "x" { policy = "read" }' });
    expect(legacy.body.warnings).toEqual(["'rules' is deprecated, please use 'policy' instead"]);
    expect((await root('DELETE', 'sys/policies/acl/legacy')).status).toBe(204);
    expect((await root('GET', 'sys/policies/acl/legacy')).status).toBe(404);
  });

  it('accepts JSON and base64 documents', async () => {
    await putPolicy('json', JSON.stringify({ path: { 'secret/json/*': { capabilities: ['read'] } } }));
    await putPolicy('b64', btoa('path "secret/b64/*" { capabilities = ["read"] }'));
    expect((await root('GET', 'sys/policies/acl/b64')).status).toBe(200);
  });

  it.each([
    ['empty', '', "'policy' parameter not supplied or empty"],
    ['syntax', 'path "a" {\n  capabilities = ["read"\n', 'failed to parse policy: '],
    ['capability', 'path "a" { capabilities = ["fly"] }', 'failed to parse policy: '],
    ['root', 'path "a" { capabilities = ["read"] }', 'cannot update "root" policy'],
    ['response-wrapping', 'path "a" { capabilities = ["read"] }', 'cannot update "response-wrapping" policy'],
  ])('refuses policy %s', async (name, policy, message) => {
    const r = await root('PUT', `sys/policies/acl/${name}`, { policy });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toContain(message);
  });

  it('keeps line numbers in parse errors', async () => {
    const r = await root('PUT', 'sys/policies/acl/bad', { policy: 'path "a" {\n  capabilities = ["read"]\n  bogus = 1\n}' });
    expect(r.body.errors[0]).toMatch(/line 3/);
  });

  it.each([
    ['root', 'cannot delete "root" policy'],
    ['default', 'cannot delete default policy'],
    ['response-wrapping', 'cannot delete "response-wrapping" policy'],
  ])('refuses to delete %s', async (name, message) => {
    const r = await root('DELETE', `sys/policies/acl/${name}`);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
  });
});

describe('tokens limited by policies', () => {
  let reader = '';
  beforeAll(async () => {
    await putPolicy(
      'app-reader',
      `path "secret/app/*" { capabilities = ["read", "list"] }
       path "secret/app" { capabilities = ["list"] }
       path "secret/*" { capabilities = ["read"] }
       path "secret/admin/*" { capabilities = ["deny"] }`,
    );
    reader = await tokenWith(['app-reader']);
  });

  it('reads what the policy allows, and nothing else', async () => {
    expect((await api('GET', 'secret/app/config', { token: reader })).body.data).toEqual({ password: 'app-secret' });
    expect((await api('GET', 'secret/app?list=true', { token: reader })).body.data.keys).toEqual(['config']);
    const write = await api('PUT', 'secret/app/config', { token: reader, body: { password: 'stolen' } });
    expect(write.status).toBe(403);
    expect(write.body.errors).toEqual([PERMISSION_DENIED]);
    expect((await api('GET', 'secret/admin/keys', { token: reader })).status).toBe(403);
    expect((await root('GET', 'secret/app/config')).body.data.password).toBe('app-secret');
  });

  it('can do what the default policy allows', async () => {
    expect((await api('GET', 'auth/token/lookup-self', { token: reader })).body.data.policies).toEqual(['app-reader', 'default']);
    expect((await api('PUT', 'cubbyhole/mine', { token: reader, body: { a: 1 } })).status).toBe(204);
    expect((await api('POST', 'sys/capabilities-self', { token: reader, body: { paths: ['secret/app/x'] } })).body.data.capabilities).toEqual(['list', 'read']);
    expect((await api('GET', 'sys/mounts', { token: reader })).status).toBe(403);
  });

  it('decides create vs update by whether the key exists', async () => {
    await putPolicy('creator', 'path "secret/drop/*" { capabilities = ["create"] }');
    const t = await tokenWith(['creator']);
    expect((await api('PUT', 'secret/drop/new', { token: t, body: { v: 1 } })).status).toBe(204);
    expect((await api('PUT', 'secret/drop/new', { token: t, body: { v: 2 } })).status).toBe(403);
    expect((await root('GET', 'secret/drop/new')).body.data).toEqual({ v: 1 });
  });

  it('enforces parameter constraints', async () => {
    await putPolicy(
      'params',
      `path "secret/params/*" {
         capabilities = ["create", "update"]
         allowed_parameters = { "color" = ["red", "blue"], "size" = [] }
         required_parameters = ["color"]
       }`,
    );
    const t = await tokenWith(['params']);
    expect((await api('PUT', 'secret/params/a', { token: t, body: { color: 'red', size: 9 } })).status).toBe(204);
    expect((await api('PUT', 'secret/params/a', { token: t, body: { color: 'green' } })).status).toBe(403);
    expect((await api('PUT', 'secret/params/a', { token: t, body: { size: 1 } })).status).toBe(403);
    expect((await api('PUT', 'secret/params/a', { token: t, body: { color: 'blue', shape: 'x' } })).status).toBe(403);
  });

  it('requires sudo on sudo paths', async () => {
    await putPolicy('mounter', 'path "sys/mounts/*" { capabilities = ["create", "read", "update", "delete"] }\npath "sys/auth/*" { capabilities = ["read"] }');
    const t = await tokenWith(['mounter']);
    expect((await api('POST', 'sys/mounts/by-mounter', { token: t, body: { type: 'kv' } })).status).toBe(204);
    expect((await api('GET', 'sys/auth/token', { token: t })).status).toBe(403);
    await putPolicy('mounter', 'path "sys/mounts/*" { capabilities = ["create", "read", "update", "delete"] }\npath "sys/auth/*" { capabilities = ["read", "sudo"] }');
    expect((await api('GET', 'sys/auth/token', { token: t })).status).toBe(200);
  });

  it('applies policy changes at once, on every object that already cached the ACL', async () => {
    await putPolicy('flip', 'path "secret/app/*" { capabilities = ["read"] }');
    const t = await tokenWith(['flip']);
    expect((await api('GET', 'secret/app/config', { token: t })).status).toBe(200);
    await putPolicy('flip', 'path "secret/app/*" { capabilities = ["deny"] }');
    expect((await api('GET', 'secret/app/config', { token: t })).status).toBe(403);
    await putPolicy('flip', 'path "secret/app/*" { capabilities = ["read"] }');
    expect((await api('GET', 'secret/app/config', { token: t })).status).toBe(200);
    await root('DELETE', 'sys/policies/acl/flip');
    expect((await api('GET', 'secret/app/config', { token: t })).status).toBe(403);
  });

  it('limits child tokens to a subset of the parent\'s policies without sudo', async () => {
    await putPolicy('spawner', 'path "auth/token/create" { capabilities = ["update"] }');
    const t = await tokenWith(['spawner', 'app-reader']);
    const ok = await api('POST', 'auth/token/create', { token: t, body: { policies: ['app-reader'] } });
    expect(ok.body.auth.policies).toEqual(['app-reader', 'default']);
    const escalate = await api('POST', 'auth/token/create', { token: t, body: { policies: ['mounter'] } });
    expect(escalate.body.errors).toEqual(['child policies must be subset of parent']);
    const rootChild = await api('POST', 'auth/token/create', { token: t, body: { policies: ['root'] } });
    expect(rootChild.body.errors).toEqual(['root tokens may only be created by a root token']);
    const customId = await api('POST', 'auth/token/create', { token: t, body: { id: 'chosen' } });
    expect(customId.body.errors).toEqual(['root or sudo privileges required to specify token id']);
    const orphan = await api('POST', 'auth/token/create', { token: t, body: { no_parent: true } });
    expect(orphan.body.errors).toEqual(['root or sudo privileges required to create orphan token']);
  });

  it('shows only the mounts a token may use in sys/internal/ui/mounts', async () => {
    const mounts = (await api('GET', 'sys/internal/ui/mounts', { token: reader })).body.data.secret;
    // identity/ through the default policy's identity/oidc/provider/+/authorize rule.
    expect(Object.keys(mounts).sort()).toEqual(['cubbyhole/', 'identity/', 'secret/', 'sys/']);
    expect((await api('GET', 'sys/internal/ui/mounts/secret/app/x', { token: reader })).body.data.path).toBe('secret/');
    expect((await api('GET', 'sys/internal/ui/mounts/by-mounter/x', { token: reader })).status).toBe(403);
  });
});

describe('sys/capabilities', () => {
  it('reports root for root, sorted capabilities per path, and deny for no match', async () => {
    const t = await tokenWith(['app-reader']);
    const self = (await api('POST', 'sys/capabilities-self', { token: c.root, body: { paths: ['anything'] } })).body;
    expect(self.data).toEqual({ anything: ['root'], capabilities: ['root'] });
    const r = await root('POST', 'sys/capabilities', { token: t, paths: ['secret/app/x', 'secret/admin/keys', 'nowhere'] });
    expect(r.body.data).toEqual({ 'secret/app/x': ['list', 'read'], 'secret/admin/keys': ['deny'], nowhere: ['deny'] });
    expect(r.body['secret/app/x']).toEqual(['list', 'read']);
    const accessor = (await api('GET', 'auth/token/lookup-self', { token: t })).body.data.accessor;
    expect((await root('POST', 'sys/capabilities-accessor', { accessor, paths: 'secret/app/x' })).body.data.capabilities).toEqual(['list', 'read']);
  });

  it.each([
    ['sys/capabilities', { token: 'hvs.nope00000000000000000000', paths: ['a'] }, 'invalid token'],
    ['sys/capabilities-accessor', { accessor: 'nope', paths: ['a'] }, 'invalid accessor'],
    ['sys/capabilities-self', {}, 'paths must be supplied'],
  ])('refuses %s with %j', async (path, body, message) => {
    const r = await root('POST', path, body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
  });
});

describe('path tricks never reach what a deny covers', () => {
  let t = '';
  beforeAll(async () => {
    await putPolicy('broad', 'path "secret/*" { capabilities = ["read", "list"] }\npath "secret/admin/*" { capabilities = ["deny"] }');
    t = await tokenWith(['broad']);
  });

  // Raw paths as a client could put them on the wire (fetch keeps percent-escapes as sent).
  it.each([
    '/v1/secret/admin/keys',
    '/v1/secret//admin/keys',
    '/v1/secret/%61dmin/keys',
    '/v1/secret%2Fadmin%2Fkeys',
    '/v1/secret/admin%2Fkeys',
    '/v1/secret/admin/./keys',
    '/v1/secret/./admin/keys',
    '/v1/secret/x/../admin/keys',
    '/v1/secret/x/%2e%2e/admin/keys',
    '/v1/secret/x/%252e%252e/admin/keys',
    '/v1/secret/admin/keys%00',
    '/v1/secret/admin/%2e/keys',
    '/v1//secret/admin/keys',
    '/v1/secret/admin/keys/',
    '/v1/secret/admin/keys?list=false',
    '/v1/secret/admin?list=true',
    '/v1/secret/admin/?list=true',
    '/v1/sys/../secret/admin/keys',
  ])('%s', async (path) => {
    const res = await SELF.fetch(`http://coffer.test${path}`, { headers: { 'X-Vault-Token': t } });
    const text = await res.text();
    expect(res.status).not.toBe(200);
    expect(text).not.toContain('admin-secret');
    expect(text).not.toContain('"keys"');
  });

  it('while the rest of the mount stays readable', async () => {
    expect((await api('GET', 'secret/app/config', { token: t })).status).toBe(200);
  });
});
