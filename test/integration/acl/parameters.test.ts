// ACL parameter constraints (allowed, denied, required) see only the request's own data — never
// the values the router captured from the path (KV v2's `path`, transit's and PKI's `name`) —
// on the paths where captures exist: KV v2 data and metadata, transit and PKI.
import { beforeAll, describe, expect, it } from 'vitest';
import { api, initCluster, PERMISSION_DENIED, tokenWithPolicy, type Cluster } from '../../helpers/api';
import { mountKv2 } from '../../helpers/kv2';

let c: Cluster;
const root = async (method: string, path: string, body?: unknown) => {
  const r = await api(method, path, { token: c.root, body });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r;
};
const as = (token: string, method: string, path: string, body?: unknown) => api(method, path, { token, body });
const tokenWith = (name: string, policy: string) => tokenWithPolicy(c.root, name, policy);
const denied = (r: { status: number; body: { errors: string[] } }) => {
  expect(r.status).toBe(403);
  expect(r.body.errors).toEqual([PERMISSION_DENIED]);
};

beforeAll(async () => {
  c = await initCluster();
  await mountKv2(c.root, 'secret');
  await root('POST', 'sys/mounts/transit', { type: 'transit' });
  await root('POST', 'transit/keys/app', {});
  await root('POST', 'sys/mounts/pki', { type: 'pki', config: { max_lease_ttl: '8760h' } });
  await root('POST', 'pki/root/generate/internal', { common_name: 'Root', ttl: '8760h', key_type: 'ec' });
  await root('POST', 'pki/roles/web', { allowed_domains: 'example.com', allow_subdomains: true, key_type: 'ec' });
  await root('POST', 'secret/data/app/db', { data: { v: 1 } });
});

describe('KV v2 metadata', () => {
  it('allowed_parameters: the body alone is checked, not the captured path', async () => {
    const t = await tokenWith('meta-allowed', 'path "secret/metadata/app/*" { capabilities = ["create", "update"] allowed_parameters = { "max_versions" = [] } }');
    expect((await as(t, 'POST', 'secret/metadata/app/db', { max_versions: 5 })).status).toBe(204);
    denied(await as(t, 'POST', 'secret/metadata/app/db', { cas_required: true }));
  });

  it('denied_parameters and required_parameters', async () => {
    const t = await tokenWith(
      'meta-denied',
      'path "secret/metadata/app/*" { capabilities = ["update"] denied_parameters = { "cas_required" = [] } required_parameters = ["max_versions"] }',
    );
    expect((await as(t, 'POST', 'secret/metadata/app/db', { max_versions: 3 })).status).toBe(204);
    denied(await as(t, 'POST', 'secret/metadata/app/db', { max_versions: 3, cas_required: true }));
    denied(await as(t, 'POST', 'secret/metadata/app/db', { delete_version_after: '1h' }));
  });

  it('a policy naming "path" constrains only a body field of that name', async () => {
    const t = await tokenWith('meta-path', 'path "secret/metadata/app/*" { capabilities = ["update"] denied_parameters = { "path" = [] } }');
    expect((await as(t, 'POST', 'secret/metadata/app/db', { max_versions: 4 })).status).toBe(204);
    denied(await as(t, 'POST', 'secret/metadata/app/db', { max_versions: 4, path: 'x' }));
  });
});

describe('KV v2 data', () => {
  it('allowed, denied and required parameters on a captured path', async () => {
    const allowed = await tokenWith('data-allowed', 'path "secret/data/*" { capabilities = ["create", "update"] allowed_parameters = { "data" = [] "options" = [] } }');
    expect((await as(allowed, 'POST', 'secret/data/app/x', { data: { a: 1 } })).status).toBe(200);
    denied(await as(allowed, 'POST', 'secret/data/app/x', { data: { a: 1 }, version: 1 }));
    const required = await tokenWith('data-required', 'path "secret/data/*" { capabilities = ["create", "update"] required_parameters = ["options"] }');
    expect((await as(required, 'POST', 'secret/data/app/y', { data: { a: 1 }, options: { cas: 0 } })).status).toBe(200);
    denied(await as(required, 'POST', 'secret/data/app/z', { data: { a: 1 } }));
    const deniedData = await tokenWith('data-denied', 'path "secret/data/*" { capabilities = ["create", "update"] denied_parameters = { "options" = [] } }');
    expect((await as(deniedData, 'POST', 'secret/data/app/w', { data: { a: 1 } })).status).toBe(200);
    denied(await as(deniedData, 'POST', 'secret/data/app/w', { data: { a: 2 }, options: { cas: 1 } }));
  });
});

describe('transit', () => {
  it('allowed, denied and required parameters on encrypt/:name', async () => {
    const allowed = await tokenWith('tr-allowed', 'path "transit/encrypt/*" { capabilities = ["update"] allowed_parameters = { "plaintext" = [] } }');
    expect((await as(allowed, 'POST', 'transit/encrypt/app', { plaintext: btoa('x') })).status).toBe(200);
    denied(await as(allowed, 'POST', 'transit/encrypt/app', { plaintext: btoa('x'), key_version: 1 }));
    const deny = await tokenWith('tr-denied', 'path "transit/encrypt/*" { capabilities = ["update"] denied_parameters = { "batch_input" = [] } }');
    expect((await as(deny, 'POST', 'transit/encrypt/app', { plaintext: btoa('x') })).status).toBe(200);
    denied(await as(deny, 'POST', 'transit/encrypt/app', { batch_input: [{ plaintext: btoa('x') }] }));
    const required = await tokenWith('tr-required', 'path "transit/encrypt/*" { capabilities = ["update"] required_parameters = ["plaintext"] }');
    expect((await as(required, 'POST', 'transit/encrypt/app', { plaintext: btoa('x') })).status).toBe(200);
    denied(await as(required, 'POST', 'transit/encrypt/app', { batch_input: [{ plaintext: btoa('x') }] }));
  });
});

describe('PKI', () => {
  it('allowed, denied and required parameters on issue/:name', async () => {
    const allowed = await tokenWith('pki-allowed', 'path "pki/issue/*" { capabilities = ["update"] allowed_parameters = { "common_name" = ["*.example.com"] "ttl" = [] } }');
    expect((await as(allowed, 'POST', 'pki/issue/web', { common_name: 'a.example.com', ttl: '1h' })).status).toBe(200);
    denied(await as(allowed, 'POST', 'pki/issue/web', { common_name: 'a.example.com', alt_names: 'b.example.com' }));
    const deny = await tokenWith('pki-denied', 'path "pki/issue/*" { capabilities = ["update"] denied_parameters = { "ttl" = [] } }');
    expect((await as(deny, 'POST', 'pki/issue/web', { common_name: 'c.example.com' })).status).toBe(200);
    denied(await as(deny, 'POST', 'pki/issue/web', { common_name: 'c.example.com', ttl: '1h' }));
    const required = await tokenWith('pki-required', 'path "pki/issue/*" { capabilities = ["update"] required_parameters = ["ttl"] }');
    expect((await as(required, 'POST', 'pki/issue/web', { common_name: 'd.example.com', ttl: '1h' })).status).toBe(200);
    denied(await as(required, 'POST', 'pki/issue/web', { common_name: 'd.example.com' }));
  });
});
