// KV v2 and ACL policies with non-root tokens: create vs update decided by the secret's
// existence (data/ and metadata/), patch needing the patch capability, delete/undelete/destroy as
// updates of their own paths, and lists that do not filter names by policy.
import { beforeAll, describe, expect, it } from 'vitest';
import { api, initCluster, PERMISSION_DENIED, type Cluster } from '../../helpers/api';
import { MERGE_PATCH, mountKv2 } from '../../helpers/kv2';

let c: Cluster;
const root = (method: string, path: string, body?: unknown) => api(method, path, { token: c.root, body });
const as = (token: string, method: string, path: string, body?: unknown, headers?: Record<string, string>) => api(method, path, { token, body, headers });
const tokenWith = async (name: string, policy: string) => {
  expect((await root('PUT', `sys/policies/acl/${name}`, { policy })).status).toBe(204);
  return (await root('POST', 'auth/token/create', { policies: [name] })).body.auth.client_token as string;
};
const denied = (r: { status: number; body: { errors: string[] } }) => {
  expect(r.status).toBe(403);
  expect(r.body.errors).toEqual([PERMISSION_DENIED]);
};

beforeAll(async () => {
  c = await initCluster();
  await mountKv2(c.root, 'kv');
  await root('POST', 'kv/data/existing', { data: { v: 1 } });
  await root('POST', 'kv/metadata/existing', { custom_metadata: { owner: 'ops' } });
  await root('POST', 'kv/data/hidden/secret', { data: { v: 1 } });
});

describe('create vs update on data/', () => {
  it('create alone writes new secrets only', async () => {
    const t = await tokenWith('data-create', 'path "kv/data/*" { capabilities = ["create"] }');
    expect((await as(t, 'POST', 'kv/data/new-one', { data: { v: 1 } })).status).toBe(200);
    denied(await as(t, 'POST', 'kv/data/existing', { data: { v: 2 } }));
    denied(await as(t, 'POST', 'kv/data/new-one', { data: { v: 2 } }));
    denied(await as(t, 'GET', 'kv/data/new-one'));
  });

  it('update alone writes existing secrets only', async () => {
    const t = await tokenWith('data-update', 'path "kv/data/*" { capabilities = ["update"] }');
    expect((await as(t, 'PUT', 'kv/data/existing', { data: { v: 2 } })).body.data.version).toBe(2);
    denied(await as(t, 'PUT', 'kv/data/brand-new', { data: { v: 1 } }));
    expect((await root('GET', 'kv/metadata/brand-new')).status).toBe(404);
  });

  it('a secret with metadata but no version exists: writing it is an update', async () => {
    await root('POST', 'kv/metadata/meta-only', { max_versions: 2 });
    const t = await tokenWith('data-create-2', 'path "kv/data/*" { capabilities = ["create"] }');
    denied(await as(t, 'POST', 'kv/data/meta-only', { data: { v: 1 } }));
  });

  it('reading returns custom_metadata without any right on metadata/', async () => {
    const t = await tokenWith('data-read', 'path "kv/data/*" { capabilities = ["read"] }');
    expect((await as(t, 'GET', 'kv/data/existing')).body.data.metadata.custom_metadata).toEqual({ owner: 'ops' });
    denied(await as(t, 'GET', 'kv/metadata/existing'));
  });
});

describe('patch', () => {
  it('needs the patch capability; update is not enough', async () => {
    const patcher = await tokenWith('patcher', 'path "kv/data/*" { capabilities = ["patch"] }');
    const updater = await tokenWith('updater', 'path "kv/data/*" { capabilities = ["create", "update", "read"] }');
    denied(await as(updater, 'PATCH', 'kv/data/existing', { data: { p: 1 } }, MERGE_PATCH));
    const r = await as(patcher, 'PATCH', 'kv/data/existing', { data: { p: 1 } }, MERGE_PATCH);
    expect(r.status).toBe(200);
    expect((await root('GET', 'kv/data/existing')).body.data.data).toEqual({ v: 2, p: 1 });
    denied(await as(patcher, 'POST', 'kv/data/existing', { data: { v: 3 } }));
  });

  it('patching metadata needs patch on metadata/', async () => {
    const t = await tokenWith('meta-patch', 'path "kv/metadata/*" { capabilities = ["patch"] }');
    expect((await as(t, 'PATCH', 'kv/metadata/existing', { custom_metadata: { extra: 'x' } }, MERGE_PATCH)).status).toBe(204);
    denied(await as(t, 'POST', 'kv/metadata/existing', { custom_metadata: { extra: 'y' } }));
    expect((await root('GET', 'kv/metadata/existing')).body.data.custom_metadata).toEqual({ owner: 'ops', extra: 'x' });
  });
});

describe('create vs update on metadata/', () => {
  it('decides by whether the secret exists', async () => {
    const t = await tokenWith('meta-create', 'path "kv/metadata/*" { capabilities = ["create"] }');
    expect((await as(t, 'POST', 'kv/metadata/fresh', { max_versions: 3 })).status).toBe(204);
    denied(await as(t, 'POST', 'kv/metadata/fresh', { max_versions: 4 }));
    denied(await as(t, 'POST', 'kv/metadata/existing', { max_versions: 4 }));
  });
});

describe('deleting', () => {
  it('soft delete, undelete and destroy are updates of their own paths; DELETE needs delete', async () => {
    const t = await tokenWith(
      'deleter',
      'path "kv/data/*" { capabilities = ["delete"] }\npath "kv/delete/*" { capabilities = ["update"] }\npath "kv/undelete/*" { capabilities = ["update"] }',
    );
    await root('POST', 'kv/data/to-delete', { data: { v: 1 } });
    expect((await as(t, 'DELETE', 'kv/data/to-delete')).status).toBe(204);
    expect((await root('GET', 'kv/data/to-delete')).status).toBe(404);
    expect((await as(t, 'POST', 'kv/undelete/to-delete', { versions: [1] })).status).toBe(204);
    expect((await as(t, 'POST', 'kv/delete/to-delete', { versions: [1] })).status).toBe(204);
    denied(await as(t, 'PUT', 'kv/destroy/to-delete', { versions: [1] }));
    denied(await as(t, 'DELETE', 'kv/metadata/to-delete'));
    expect((await root('GET', 'kv/metadata/to-delete')).body.data.versions['1'].destroyed).toBe(false);
  });
});

describe('listing', () => {
  it('needs list, and shows every name whatever the caller may read', async () => {
    const t = await tokenWith('lister', 'path "kv/metadata/*" { capabilities = ["list"] }\npath "kv/metadata" { capabilities = ["list"] }');
    const r = await as(t, 'GET', 'kv/metadata?list=true');
    expect(r.status).toBe(200);
    expect(r.body.data.keys).toEqual(expect.arrayContaining(['existing', 'hidden/']));
    expect((await as(t, 'GET', 'kv/metadata/hidden?list=true')).body.data.keys).toEqual(['secret']);
    expect((await as(t, 'GET', 'kv/metadata/?list=true&recursive=true')).body.data.keys).toContain('hidden/secret');
    denied(await as(t, 'GET', 'kv/metadata/hidden/secret'));
    const reader = await tokenWith('no-list', 'path "kv/metadata/*" { capabilities = ["read"] }');
    denied(await as(reader, 'GET', 'kv/metadata/hidden?list=true'));
  });
});

describe('upgrade and invalid paths are behind the ACL too', () => {
  it('a token with no rights on a path learns nothing about it', async () => {
    const t = await tokenWith('nothing', 'path "other/*" { capabilities = ["read"] }');
    denied(await as(t, 'GET', 'kv/not-a-kv2-path'));
    denied(await as(t, 'GET', 'kv/config'));
  });
});
