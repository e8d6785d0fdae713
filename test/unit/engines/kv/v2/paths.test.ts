// The KV v2 backend's routing through the real pipeline: which definition serves which path,
// and Vault's raw 404 envelopes.
import { describe, expect, it } from 'vitest';
import type { Authorizer } from '../../../../../src/pipeline/dispatch';
import { invalidPathWarning, ROOT_WARNING } from '../../../../../src/engines/kv/v2/paths/invalid';
import { kv2 } from './harness';

describe('routing', () => {
  it.each([
    ['read', 'foo', invalidPathWarning('read')],
    ['write', 'foo/bar', invalidPathWarning('update')],
    ['patch', 'foo', invalidPathWarning('patch')],
    ['delete', '', invalidPathWarning('delete')],
    ['list', '', invalidPathWarning('list')],
    ['list', 'data/', invalidPathWarning('list')],
    ['read', 'data/', invalidPathWarning('read')],
    ['read', 'data', ROOT_WARNING],
    ['write', 'metadata', ROOT_WARNING],
    ['delete', 'destroy', ROOT_WARNING],
    ['read', 'subkeys', invalidPathWarning('read')],
    ['list', 'config/', invalidPathWarning('list')],
  ] as const)('%s %j is not a KV v2 path', async (op, path, warning) => {
    const r = await kv2().call(op, path);
    expect(r.status).toBe(404);
    expect(r.response?.raw?.body).toEqual({
      request_id: 'req',
      lease_id: '',
      renewable: false,
      lease_duration: 0,
      data: null,
      wrap_info: null,
      warnings: [warning],
      auth: null,
      mount_type: '',
    });
  });

  it('a deleted version answers with its metadata in a raw 404; a missing one with a plain 404', async () => {
    const { call } = kv2();
    await call('write', 'data/a', { data: { v: 1 } });
    await call('delete', 'data/a');
    const r = await call('read', 'data/a');
    expect(r.status).toBe(404);
    expect(r.response?.raw?.body).toMatchObject({ request_id: 'req', data: { data: null, metadata: { version: 1, destroyed: false } } });
    expect(await call('read', 'data/b')).toEqual({ status: 404, errors: [] });
  });

  it('existence decides create vs update for data/ and metadata/', async () => {
    const checked: string[] = [];
    const recorder: Authorizer = {
      authorize: ({ capability, path }) => {
        checked.push(`${capability} ${path}`);
        return { sudo: false };
      },
      grantsCreateAndUpdate: () => false,
    };
    const { call } = kv2(recorder);
    await call('write', 'data/a', { data: { v: 1 } });
    await call('write', 'data/a', { data: { v: 2 } });
    await call('write', 'metadata/b', { max_versions: 1 });
    await call('write', 'data/b', { data: { v: 1 } });
    await call('write', 'metadata/a', { max_versions: 1 });
    await call('patch', 'data/a', { data: { v: 3 } });
    expect(checked).toEqual(['create kv/data/a', 'update kv/data/a', 'create kv/metadata/b', 'update kv/data/b', 'update kv/metadata/a', 'patch kv/data/a']);
  });
});
