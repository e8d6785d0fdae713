// KV v2 through the Worker: config, data (read, write with check-and-set, patch, soft delete),
// delete/undelete/destroy, subkeys, pruning, Vault's raw 404 envelopes and invalid paths, bad
// input, and concurrent check-and-set writers.
import { beforeAll, describe, expect, it } from 'vitest';
import { api, initCluster, type Cluster } from '../../helpers/api';
import { GO_TIME, MERGE_PATCH, mountKv2 } from '../../helpers/kv2';

let c: Cluster;
const kv = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => api(method, path, { token: c.root, body, headers });
const write = (path: string, data: unknown, options?: unknown) => kv('POST', `kv/data/${path}`, options === undefined ? { data } : { data, options });
const patch = (path: string, body: unknown) => kv('PATCH', `kv/data/${path}`, body, MERGE_PATCH);

const ENVELOPE_404 = { lease_id: '', renewable: false, lease_duration: 0, wrap_info: null, warnings: null, auth: null, mount_type: '' };

beforeAll(async () => {
  c = await initCluster();
  await mountKv2(c.root, 'kv');
});

describe('config', () => {
  it('reads the defaults, then what was written', async () => {
    const r = await kv('GET', 'kv/config');
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ cas_required: false, delete_version_after: '0s', max_versions: 0 });
    expect((await kv('POST', 'kv/config', { max_versions: 7, delete_version_after: '3h' })).status).toBe(204);
    expect((await kv('GET', 'kv/config')).body.data).toEqual({ cas_required: false, delete_version_after: '3h0m0s', max_versions: 7 });
    await kv('POST', 'kv/config', { delete_version_after: -5 });
    expect((await kv('GET', 'kv/config')).body.data.delete_version_after).toBe('-1s');
    await kv('POST', 'kv/config', { delete_version_after: 0, max_versions: 0 });
    expect((await kv('GET', 'kv/config')).body.data).toEqual({ cas_required: false, delete_version_after: '0s', max_versions: 0 });
  });

  it.each([
    [{ max_versions: -1 }, 'max_versions cannot be negative'],
    [{ max_versions: 'many' }, 'error converting input "many" for field "max_versions": cannot parse "many" as an integer'],
    [{ delete_version_after: 'soon' }, 'error converting input "soon" for field "delete_version_after": time: invalid duration "soon"'],
    [{ cas_required: 'perhaps' }, 'error converting input "perhaps" for field "cas_required": cannot parse "perhaps" as a boolean'],
  ])('refuses %j and changes nothing', async (body, message) => {
    const r = await kv('POST', 'kv/config', body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
    expect((await kv('GET', 'kv/config')).body.data).toEqual({ cas_required: false, delete_version_after: '0s', max_versions: 0 });
  });
});

describe('data', () => {
  it('writes version 1 and answers its metadata', async () => {
    const r = await write('app/db', { user: 'app', password: 's3cret', n: 1, nested: { a: [1, 2] } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ lease_id: '', renewable: false, lease_duration: 0, wrap_info: null, warnings: null, auth: null, mount_type: 'kv' });
    expect(r.body.data).toEqual({ version: 1, created_time: expect.stringMatching(GO_TIME), deletion_time: '', destroyed: false, custom_metadata: null });
  });

  it('reads the current version as data.data and data.metadata', async () => {
    const r = await kv('GET', 'kv/data/app/db');
    expect(r.status).toBe(200);
    expect(r.body.lease_duration).toBe(0);
    expect(r.body.data).toEqual({
      data: { user: 'app', password: 's3cret', n: 1, nested: { a: [1, 2] } },
      metadata: { version: 1, created_time: expect.stringMatching(GO_TIME), deletion_time: '', destroyed: false, custom_metadata: null },
    });
  });

  it('keeps every version; ?version=N reads an older one', async () => {
    expect((await write('app/db', { user: 'app', password: 'rotated' })).body.data.version).toBe(2);
    expect((await kv('GET', 'kv/data/app/db')).body.data.data).toEqual({ user: 'app', password: 'rotated' });
    const old = await kv('GET', 'kv/data/app/db?version=1');
    expect(old.body.data.data.password).toBe('s3cret');
    expect(old.body.data.metadata.version).toBe(1);
    expect((await kv('GET', 'kv/data/app/db?version=0')).body.data.metadata.version).toBe(2);
  });

  it('answers a missing secret or version with 404 and an empty error list', async () => {
    for (const path of ['kv/data/nope', 'kv/data/app/db?version=9']) {
      const r = await kv('GET', path);
      expect(r.status).toBe(404);
      expect(r.body).toEqual({ errors: [] });
    }
  });

  it('shows custom_metadata in data reads and writes', async () => {
    await kv('POST', 'kv/metadata/tagged', { custom_metadata: { owner: 'ops' } });
    expect((await write('tagged', { v: 1 })).body.data.custom_metadata).toEqual({ owner: 'ops' });
    expect((await kv('GET', 'kv/data/tagged')).body.data.metadata.custom_metadata).toEqual({ owner: 'ops' });
  });
});

describe('check-and-set', () => {
  it('cas 0 creates only a new secret; cas N writes only over version N', async () => {
    expect((await write('cas/a', { v: 1 }, { cas: 0 })).status).toBe(200);
    const again = await write('cas/a', { v: 2 }, { cas: 0 });
    expect(again.status).toBe(400);
    expect(again.body.errors).toEqual(['check-and-set parameter did not match the current version']);
    expect((await write('cas/a', { v: 2 }, { cas: 1 })).body.data.version).toBe(2);
    expect((await write('cas/a', { v: 3 }, { cas: '2' })).body.data.version).toBe(3);
    expect((await write('cas/a', { v: 4 }, { cas: 2 })).status).toBe(400);
    expect((await kv('GET', 'kv/data/cas/a')).body.data.data).toEqual({ v: 3 });
  });

  it('refuses an unparsable cas', async () => {
    const r = await write('cas/a', { v: 9 }, { cas: 'three' });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['error parsing check-and-set parameter']);
  });

  it('requires cas when the engine says so', async () => {
    await kv('POST', 'kv/config', { cas_required: true });
    try {
      const r = await write('cas/b', { v: 1 });
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual(['check-and-set parameter required for this call']);
      expect((await write('cas/b', { v: 1 }, { cas: 0 })).status).toBe(200);
      // A key cannot opt out, and says so.
      const m = await kv('POST', 'kv/metadata/cas/b', { cas_required: false });
      expect(m.status).toBe(200);
      expect(m.body.warnings).toEqual(['"cas_required" set to false, but is mandated by backend config. This value will be ignored.']);
      expect((await write('cas/b', { v: 2 })).status).toBe(400);
    } finally {
      await kv('POST', 'kv/config', { cas_required: false });
    }
  });

  it('requires cas when the secret says so', async () => {
    await kv('POST', 'kv/metadata/cas/c', { cas_required: true });
    expect((await write('cas/c', { v: 1 })).body.errors).toEqual(['check-and-set parameter required for this call']);
    expect((await write('cas/c', { v: 1 }, { cas: 0 })).status).toBe(200);
    expect((await write('cas/c', { v: 2 }, { cas: 1 })).status).toBe(200);
  });

  it('50 concurrent writers: exactly one wins each version, and no update is lost', async () => {
    await kv('POST', 'kv/metadata/race', { max_versions: 100 });
    const winners = new Map<number, number>();
    const writer = async (id: number) => {
      for (let attempt = 0; attempt < 200; attempt++) {
        const current = (await kv('GET', 'kv/metadata/race')).body.data.current_version as number;
        const r = await write('race', { writer: id, seq: current + 1 }, { cas: current });
        if (r.status === 200) {
          expect(r.body.data.version).toBe(current + 1);
          expect(winners.has(current + 1)).toBe(false);
          winners.set(current + 1, id);
          return;
        }
        expect(r.body.errors).toEqual(['check-and-set parameter did not match the current version']);
      }
      throw new Error(`writer ${id} never won`);
    };
    await Promise.all(Array.from({ length: 50 }, (_, i) => writer(i)));
    expect(winners.size).toBe(50);
    expect(new Set(winners.values()).size).toBe(50);
    const meta = (await kv('GET', 'kv/metadata/race')).body.data;
    expect(meta.current_version).toBe(50);
    expect(Object.keys(meta.versions)).toHaveLength(50);
    for (const [version, id] of winners) {
      expect((await kv('GET', `kv/data/race?version=${version}`)).body.data.data).toEqual({ writer: id, seq: version });
    }
  }, 120_000);
});

describe('patch', () => {
  it('merges into the current version (null removes) and writes a new version', async () => {
    await write('p/a', { keep: 1, drop: 2, nested: { x: 1, y: 2 } });
    const r = await patch('p/a', { data: { drop: null, added: 'yes', nested: { y: null, z: 3 } } });
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ version: 2, created_time: expect.stringMatching(GO_TIME), deletion_time: '', destroyed: false, custom_metadata: null });
    expect((await kv('GET', 'kv/data/p/a')).body.data.data).toEqual({ keep: 1, added: 'yes', nested: { x: 1, z: 3 } });
  });

  it('checks cas like a write', async () => {
    const r = await patch('p/a', { data: { v: 1 }, options: { cas: 1 } });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['check-and-set parameter did not match the current version']);
    expect((await patch('p/a', { data: { v: 1 }, options: { cas: 2 } })).body.data.version).toBe(3);
  });

  it('needs the merge-patch content type', async () => {
    const r = await kv('PATCH', 'kv/data/p/a', { data: { v: 2 } });
    expect(r.status).toBe(415);
    expect(r.body.errors).toEqual(['PATCH requires Content-Type of application/merge-patch+json, provided application/json']);
  });

  it('answers a missing secret with a bare 404', async () => {
    const r = await patch('p/none', { data: { v: 1 } });
    expect(r.status).toBe(404);
    expect(r.text).toBe('');
  });

  it('refuses a deleted or destroyed current version with a raw 404 carrying its metadata', async () => {
    await write('p/gone', { v: 1 });
    await kv('DELETE', 'kv/data/p/gone');
    const r = await patch('p/gone', { data: { v: 2 } });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({
      ...ENVELOPE_404,
      request_id: expect.any(String),
      data: { version: 1, created_time: expect.stringMatching(GO_TIME), deletion_time: expect.stringMatching(GO_TIME), destroyed: false, custom_metadata: null },
    });
    await kv('PUT', 'kv/destroy/p/gone', { versions: [1] });
    expect((await patch('p/gone', { data: { v: 2 } })).body.data.destroyed).toBe(true);
    expect((await kv('GET', 'kv/metadata/p/gone')).body.data.current_version).toBe(1);
  });

  it('needs data', async () => {
    const r = await patch('p/a', { options: {} });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['no data provided']);
  });
});

describe('delete, undelete, destroy', () => {
  it('DELETE soft-deletes the latest version: a raw 404 with its metadata; older versions stay readable', async () => {
    await write('d/a', { v: 1 });
    await write('d/a', { v: 2 });
    expect((await kv('DELETE', 'kv/data/d/a')).status).toBe(204);
    const r = await kv('GET', 'kv/data/d/a');
    expect(r.status).toBe(404);
    expect(r.headers.get('content-type')).toBe('application/json');
    expect(r.body).toEqual({
      ...ENVELOPE_404,
      request_id: expect.any(String),
      data: { data: null, metadata: { version: 2, created_time: expect.stringMatching(GO_TIME), deletion_time: expect.stringMatching(GO_TIME), destroyed: false, custom_metadata: null } },
    });
    expect((await kv('GET', 'kv/data/d/a?version=1')).body.data.data).toEqual({ v: 1 });
    // Deleting again changes nothing.
    const before = (await kv('GET', 'kv/metadata/d/a')).body.data.versions['2'].deletion_time;
    expect((await kv('DELETE', 'kv/data/d/a')).status).toBe(204);
    expect((await kv('GET', 'kv/metadata/d/a')).body.data.versions['2'].deletion_time).toBe(before);
  });

  it('undelete brings versions back; a write after a delete is a new version', async () => {
    expect((await kv('POST', 'kv/undelete/d/a', { versions: [2] })).status).toBe(204);
    expect((await kv('GET', 'kv/data/d/a')).body.data).toMatchObject({ data: { v: 2 }, metadata: { deletion_time: '' } });
    await kv('POST', 'kv/delete/d/a', { versions: '1,2' });
    expect((await kv('GET', 'kv/data/d/a?version=1')).status).toBe(404);
    expect((await write('d/a', { v: 3 }, { cas: 2 })).body.data.version).toBe(3);
    await kv('POST', 'kv/undelete/d/a', { versions: '1' });
    expect((await kv('GET', 'kv/data/d/a?version=1')).body.data.data).toEqual({ v: 1 });
    expect((await kv('GET', 'kv/data/d/a?version=2')).status).toBe(404);
  });

  it('destroy erases data for good: undelete cannot bring it back', async () => {
    expect((await kv('PUT', 'kv/destroy/d/a', { versions: [1, 3] })).status).toBe(204);
    for (const version of [1, 3]) {
      const r = await kv('GET', `kv/data/d/a?version=${version}`);
      expect(r.status).toBe(404);
      expect(r.body.data.metadata).toMatchObject({ version, destroyed: true });
    }
    await kv('POST', 'kv/undelete/d/a', { versions: [1, 3] });
    expect((await kv('GET', 'kv/data/d/a?version=1')).status).toBe(404);
    const versions = (await kv('GET', 'kv/metadata/d/a')).body.data.versions;
    expect(versions['1']).toMatchObject({ destroyed: true });
    expect(versions['2']).toMatchObject({ destroyed: false, deletion_time: expect.stringMatching(GO_TIME) });
  });

  it.each([
    ['delete', 'POST', 'No version number provided'],
    ['undelete', 'POST', 'No version number provided'],
    ['destroy', 'PUT', 'no version number provided'],
  ])('%s needs versions', async (verb, method, message) => {
    for (const body of [{}, { versions: [] }, { versions: '' }]) {
      const r = await kv(method, `kv/${verb}/d/a`, body);
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual([message]);
    }
    const bad = await kv(method, `kv/${verb}/d/a`, { versions: 'one' });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0]).toContain('error converting input "one" for field "versions"');
  });

  it('acting on a secret or version that does not exist is a no-op', async () => {
    expect((await kv('POST', 'kv/delete/d/none', { versions: [1] })).status).toBe(204);
    expect((await kv('PUT', 'kv/destroy/d/none', { versions: [1] })).status).toBe(204);
    expect((await kv('DELETE', 'kv/data/d/none')).status).toBe(204);
    expect((await kv('POST', 'kv/delete/d/a', { versions: [99] })).status).toBe(204);
    expect((await kv('GET', 'kv/metadata/d/none')).status).toBe(404);
  });
});

describe('subkeys', () => {
  beforeAll(async () => {
    await write('s/a', { top: 'x', map: { inner: { deep: 1 }, flat: true }, empty: {}, list: [1, 2] });
    await write('s/a', { only: 'v2' });
  });

  it('replaces every value with null, to any depth by default', async () => {
    const r = await kv('GET', 'kv/subkeys/s/a?version=1');
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({
      subkeys: { top: null, map: { inner: { deep: null }, flat: null }, empty: null, list: null },
      metadata: { version: 1, created_time: expect.stringMatching(GO_TIME), deletion_time: '', destroyed: false, custom_metadata: null },
    });
    expect((await kv('GET', 'kv/subkeys/s/a')).body.data.subkeys).toEqual({ only: null });
  });

  it('stops at the given depth', async () => {
    expect((await kv('GET', 'kv/subkeys/s/a?version=1&depth=1')).body.data.subkeys).toEqual({ top: null, map: null, empty: null, list: null });
    expect((await kv('GET', 'kv/subkeys/s/a?version=1&depth=2')).body.data.subkeys.map).toEqual({ inner: null, flat: null });
  });

  it('answers deleted versions with the raw 404, missing ones with a plain 404, and refuses a negative depth', async () => {
    await kv('POST', 'kv/delete/s/a', { versions: [2] });
    const r = await kv('GET', 'kv/subkeys/s/a');
    expect(r.status).toBe(404);
    expect(r.body.data).toEqual({ subkeys: null, metadata: expect.objectContaining({ version: 2, deletion_time: expect.stringMatching(GO_TIME) }) });
    expect((await kv('GET', 'kv/subkeys/s/none')).body).toEqual({ errors: [] });
    expect((await kv('GET', 'kv/subkeys/s/a?version=7')).body).toEqual({ errors: [] });
    const bad = await kv('GET', 'kv/subkeys/s/a?depth=-1');
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(['depth must be zero (no limit) or a positive number']);
  });
});

describe('max_versions', () => {
  it('keeps 10 versions by default; oldest_version moves as Vault moves it', async () => {
    for (let i = 1; i <= 12; i++) await write('mv/default', { i });
    const meta = (await kv('GET', 'kv/metadata/mv/default')).body.data;
    expect(meta.current_version).toBe(12);
    expect(meta.oldest_version).toBe(3);
    expect(Object.keys(meta.versions).map(Number).sort((a, b) => a - b)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12]);
    expect((await kv('GET', 'kv/data/mv/default?version=2')).body).toEqual({ errors: [] });
  });

  it('uses the larger of the engine and key settings', async () => {
    await kv('POST', 'kv/config', { max_versions: 3 });
    try {
      for (let i = 1; i <= 5; i++) await write('mv/engine', { i });
      expect(Object.keys((await kv('GET', 'kv/metadata/mv/engine')).body.data.versions)).toEqual(['3', '4', '5']);
      await kv('POST', 'kv/metadata/mv/key', { max_versions: 4 });
      for (let i = 1; i <= 6; i++) await write('mv/key', { i });
      expect(Object.keys((await kv('GET', 'kv/metadata/mv/key')).body.data.versions)).toEqual(['3', '4', '5', '6']);
      await kv('POST', 'kv/metadata/mv/small', { max_versions: 1 });
      for (let i = 1; i <= 5; i++) await write('mv/small', { i });
      expect(Object.keys((await kv('GET', 'kv/metadata/mv/small')).body.data.versions)).toEqual(['3', '4', '5']);
    } finally {
      await kv('POST', 'kv/config', { max_versions: 0 });
    }
  });
});

describe('invalid paths', () => {
  it.each([
    ['GET', 'kv/app/db', "Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API endpoints to use. If using the Vault CLI, use 'vault kv get' for this operation."],
    ['PUT', 'kv/app/db', "Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API endpoints to use. If using the Vault CLI, use 'vault kv put' for this operation."],
    ['DELETE', 'kv/app/db', "Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API endpoints to use. If using the Vault CLI, use 'vault kv delete' for this operation."],
    ['GET', 'kv/app?list=true', "Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API endpoints to use. If using the Vault CLI, use 'vault kv list' for this operation."],
    ['GET', 'kv/data?list=true', "Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API endpoints to use. If using the Vault CLI, use 'vault kv list' for this operation."],
    ['PUT', 'kv/data/folder/', "Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API endpoints to use. If using the Vault CLI, use 'vault kv put' for this operation."],
    ['GET', 'kv/data', 'Non-listing operations on the root of a K/V v2 mount are not supported.'],
    ['GET', 'kv/metadata', 'Non-listing operations on the root of a K/V v2 mount are not supported.'],
    ['PUT', 'kv/destroy', 'Non-listing operations on the root of a K/V v2 mount are not supported.'],
    ['POST', 'kv/undelete', 'Non-listing operations on the root of a K/V v2 mount are not supported.'],
    ['DELETE', 'kv/delete', 'Non-listing operations on the root of a K/V v2 mount are not supported.'],
  ])('%s %s answers a raw 404 with a warning', async (method, path, warning) => {
    const r = await kv(method, path, method === 'GET' || method === 'DELETE' ? undefined : { data: { v: 1 } });
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ ...ENVELOPE_404, request_id: expect.any(String), data: null, warnings: [warning] });
  });

  it('answers an unsupported operation on a valid path with 405', async () => {
    expect((await kv('DELETE', 'kv/config')).status).toBe(405);
    expect((await kv('GET', 'kv/destroy/d/a')).status).toBe(405);
  });
});

describe('bad input leaves nothing behind', () => {
  it.each([
    [{}, 'no data provided'],
    [{ data: null }, 'no data provided'],
    [{ data: 'text' }, 'error converting input "text" for field "data": expected a map, got a string'],
    [{ data: { v: 1 }, options: 'cas=0' }, 'error converting input "cas=0" for field "options": expected a map, got a string'],
  ])('write %j', async (body, message) => {
    const r = await kv('POST', 'kv/data/bad/one', body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
    expect((await kv('GET', 'kv/metadata/bad/one')).status).toBe(404);
  });

  it('a version over the entry size limit is refused with 413 and the secret is unchanged', async () => {
    await write('bad/big', { v: 1 });
    const r = await write('bad/big', { a: 'x'.repeat(600_000), b: 'y'.repeat(600_000) });
    expect(r.status).toBe(413);
    const meta = (await kv('GET', 'kv/metadata/bad/big')).body.data;
    expect(meta.current_version).toBe(1);
    expect(Object.keys(meta.versions)).toEqual(['1']);
    expect((await kv('GET', 'kv/data/bad/big')).body.data.data).toEqual({ v: 1 });
  });

  it('a bad version or depth is a 400', async () => {
    expect((await kv('GET', 'kv/data/bad/big?version=x')).body.errors).toEqual(['error converting input "x" for field "version": cannot parse "x" as an integer']);
    expect((await kv('GET', 'kv/data/bad/big?version=-2')).body.errors).toEqual(['version must be zero (the current version) or a positive version number']);
  });

  it('warns about unknown parameters and still writes', async () => {
    const r = await kv('POST', 'kv/data/bad/extra', { data: { v: 1 }, colour: 'blue' });
    expect(r.status).toBe(200);
    expect(r.body.warnings).toEqual(['Endpoint ignored these unrecognized parameters: [colour]']);
  });
});
