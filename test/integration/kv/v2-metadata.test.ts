// KV v2 metadata through the Worker: read, write, patch and delete of a secret's metadata,
// custom_metadata limits, and listing (Vault's folders, exclude_deleted, and recursive pages).
import { beforeAll, describe, expect, it } from 'vitest';
import { api, initCluster, type Cluster } from '../../helpers/api';
import { GO_TIME, MERGE_PATCH, mountKv2 } from '../../helpers/kv2';

let c: Cluster;
const kv = (method: string, path: string, body?: unknown, headers?: Record<string, string>) => api(method, path, { token: c.root, body, headers });
const write = (path: string, data: unknown) => kv('POST', `kv/data/${path}`, { data });
const list = async (path: string) => {
  const r = await kv('GET', `kv/metadata/${path}${path.includes('?') ? '&' : '?'}list=true`);
  return r.status === 200 ? (r.body.data.keys as string[]) : r.status;
};

beforeAll(async () => {
  c = await initCluster();
  await mountKv2(c.root, 'kv');
});

describe('reading metadata', () => {
  it('shows settings and every version', async () => {
    await write('m/a', { v: 1 });
    await write('m/a', { v: 2 });
    await kv('DELETE', 'kv/data/m/a');
    const r = await kv('GET', 'kv/metadata/m/a');
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({
      cas_required: false,
      created_time: expect.stringMatching(GO_TIME),
      current_version: 2,
      custom_metadata: null,
      delete_version_after: '0s',
      max_versions: 0,
      oldest_version: 0,
      updated_time: expect.stringMatching(GO_TIME),
      versions: {
        '1': { created_time: expect.stringMatching(GO_TIME), deletion_time: '', destroyed: false },
        '2': { created_time: expect.stringMatching(GO_TIME), deletion_time: expect.stringMatching(GO_TIME), destroyed: false },
      },
    });
    expect(r.body.data.created_time).toBe(r.body.data.versions['1'].created_time);
    expect(r.body.data.updated_time).toBe(r.body.data.versions['2'].created_time);
  });

  it('answers a missing secret with 404', async () => {
    expect((await kv('GET', 'kv/metadata/m/none')).body).toEqual({ errors: [] });
  });
});

describe('writing metadata', () => {
  it('creates metadata without a version', async () => {
    const r = await kv('POST', 'kv/metadata/m/settings', { max_versions: 5, cas_required: true, delete_version_after: '90m', custom_metadata: { team: 'ops', n: 3 } });
    expect(r.status).toBe(204);
    const meta = (await kv('GET', 'kv/metadata/m/settings')).body.data;
    expect(meta).toMatchObject({ max_versions: 5, cas_required: true, delete_version_after: '1h30m0s', custom_metadata: { team: 'ops', n: '3' }, current_version: 0, versions: {} });
    expect((await kv('GET', 'kv/data/m/settings')).body).toEqual({ errors: [] });
  });

  it('writes nothing when no setting is given', async () => {
    expect((await kv('POST', 'kv/metadata/m/nothing', {})).status).toBe(204);
    expect((await kv('GET', 'kv/metadata/m/nothing')).status).toBe(404);
  });

  it('replaces custom_metadata as a whole; an empty map clears it', async () => {
    await kv('POST', 'kv/metadata/m/settings', { custom_metadata: { only: 'this' } });
    expect((await kv('GET', 'kv/metadata/m/settings')).body.data).toMatchObject({ custom_metadata: { only: 'this' }, max_versions: 5 });
    await kv('POST', 'kv/metadata/m/settings', { custom_metadata: {} });
    expect((await kv('GET', 'kv/metadata/m/settings')).body.data.custom_metadata).toBeNull();
  });

  it.each([
    ['kv/metadata/', { max_versions: 1 }, 'missing path'],
    ['kv/metadata/m/folder/', { max_versions: 1 }, 'cannot write metadata to a path ending in "/"'],
    ['kv/metadata/m/bad', { max_versions: -2 }, 'max_versions cannot be negative'],
    ['kv/metadata/m/bad', { delete_version_after: '-1h' }, 'error converting input "-1h" for field "delete_version_after": cannot provide negative value'],
    ['kv/metadata/m/bad', { custom_metadata: 'a=b' }, 'error converting input "a=b" for field "custom_metadata": expected a map, got a string'],
    ['kv/metadata/m/bad', { custom_metadata: { nested: { a: 1 } } }, 'custom_metadata validation failed: value for key "nested" must be a string'],
  ])('POST %s %j is refused', async (path, body, message) => {
    const r = await kv('POST', path, body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
    expect((await kv('GET', 'kv/metadata/m/bad')).status).toBe(404);
  });
});

describe('custom_metadata limits', () => {
  const refused = async (custom: Record<string, unknown>) => {
    const r = await kv('POST', 'kv/metadata/m/limits', { custom_metadata: custom });
    expect(r.status).toBe(400);
    expect((await kv('GET', 'kv/metadata/m/limits')).status).toBe(404);
    return r.body.errors as string[];
  };

  it('at most 64 keys', async () => {
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v']));
    expect(await refused(many)).toEqual(['1 error occurred:\n\t* custom_metadata validation failed: payload must contain at most 64 keys, provided 65\n\n']);
    const fine = Object.fromEntries(Array.from({ length: 64 }, (_, i) => [`k${i}`, 'v']));
    expect((await kv('POST', 'kv/metadata/m/sixty-four', { custom_metadata: fine })).status).toBe(204);
  });

  it('keys of 1..128 bytes, values of 1..512 bytes, printable only; every violation is reported', async () => {
    const errors = await refused({ ['k'.repeat(129)]: 'v', empty: '', long: 'v'.repeat(513), 'bell\u0007': 'ok', tab: 'a\tb' });
    expect(errors).toHaveLength(1);
    const message = errors[0];
    expect(message.startsWith('5 errors occurred:\n')).toBe(true);
    expect(message).toContain(`\t* custom_metadata validation failed: length of key "${'k'.repeat(129)}" is 129 but must be 0 < len(key) <= 128\n`);
    expect(message).toContain('\t* custom_metadata validation failed: length of value for key "empty" is 0 but must be 0 < len(value) <= 512\n');
    expect(message).toContain('\t* custom_metadata validation failed: length of value for key "long" is 513 but must be 0 < len(value) <= 512\n');
    expect(message).toContain('\t* custom_metadata validation failed: key "bell\\u0007" (bell\u0007) contains unprintable characters\n');
    expect(message).toContain('\t* custom_metadata validation failed: value for key "tab" contains unprintable characters\n');
  });

  it('counts bytes, not characters', async () => {
    expect(await refused({ ['é'.repeat(65)]: 'v' })).toEqual([
      `1 error occurred:\n\t* custom_metadata validation failed: length of key "${'é'.repeat(65)}" is 130 but must be 0 < len(key) <= 128\n\n`,
    ]);
    expect((await kv('POST', 'kv/metadata/m/unicode', { custom_metadata: { ['é'.repeat(64)]: 'ünïcødé ok' } })).status).toBe(204);
  });
});

describe('patching metadata', () => {
  beforeAll(async () => {
    await kv('POST', 'kv/metadata/m/p', { max_versions: 3, custom_metadata: { a: '1', b: '2' } });
  });

  it('merges custom_metadata (null removes a key) and replaces the settings given', async () => {
    const r = await kv('PATCH', 'kv/metadata/m/p', { custom_metadata: { b: null, c: '3' }, cas_required: true }, MERGE_PATCH);
    expect(r.status).toBe(204);
    expect((await kv('GET', 'kv/metadata/m/p')).body.data).toMatchObject({ custom_metadata: { a: '1', c: '3' }, cas_required: true, max_versions: 3 });
    await kv('PATCH', 'kv/metadata/m/p', { custom_metadata: null }, MERGE_PATCH);
    expect((await kv('GET', 'kv/metadata/m/p')).body.data.custom_metadata).toBeNull();
  });

  it('refuses a patch that would pass 64 keys, and changes nothing', async () => {
    await kv('PATCH', 'kv/metadata/m/p', { custom_metadata: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`a${i}`, 'v'])) }, MERGE_PATCH);
    const r = await kv('PATCH', 'kv/metadata/m/p', { custom_metadata: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`b${i}`, 'v'])), max_versions: 9 }, MERGE_PATCH);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['1 error occurred:\n\t* custom_metadata validation failed: payload must contain at most 64 keys, provided 80\n\n']);
    const meta = (await kv('GET', 'kv/metadata/m/p')).body.data;
    expect(Object.keys(meta.custom_metadata)).toHaveLength(40);
    expect(meta.max_versions).toBe(3);
  });

  it('answers a missing secret with a bare 404, and needs the merge-patch content type', async () => {
    const r = await kv('PATCH', 'kv/metadata/m/none', { max_versions: 1 }, MERGE_PATCH);
    expect(r.status).toBe(404);
    expect(r.text).toBe('');
    expect((await kv('PATCH', 'kv/metadata/m/p', { max_versions: 1 })).status).toBe(415);
  });
});

describe('deleting metadata', () => {
  it('removes the secret, every version and its listing', async () => {
    await write('del/x', { v: 1 });
    await write('del/x', { v: 2 });
    await write('del/keep', { v: 1 });
    expect((await kv('DELETE', 'kv/metadata/del/x')).status).toBe(204);
    expect((await kv('GET', 'kv/metadata/del/x')).status).toBe(404);
    expect((await kv('GET', 'kv/data/del/x?version=1')).status).toBe(404);
    expect(await list('del')).toEqual(['keep']);
    expect((await kv('DELETE', 'kv/metadata/del/x')).status).toBe(204);
    // A new secret at the same path starts again at version 1.
    expect((await write('del/x', { v: 'again' })).body.data.version).toBe(1);
  });
});

describe('listing', () => {
  beforeAll(async () => {
    for (const k of ['l/a', 'l/b/c', 'l/b/d', 'l/e/f/g', 'l/a-b', 'l/zz']) await write(k, { k });
  });

  it('lists direct children, folders ending in "/"', async () => {
    expect(await list('l')).toEqual(['a', 'a-b', 'b/', 'e/', 'zz']);
    expect(await list('l/')).toEqual(['a', 'a-b', 'b/', 'e/', 'zz']);
    expect(await list('l/b')).toEqual(['c', 'd']);
    expect(await list('')).toEqual(expect.arrayContaining(['l/', 'm/', 'del/']));
    expect((await kv('GET', 'kv/metadata?list=true')).body.data.keys).toEqual(expect.arrayContaining(['l/']));
  });

  it('answers a file or an empty folder with 404', async () => {
    expect(await list('l/a')).toBe(404);
    expect(await list('l/nothing')).toBe(404);
  });

  it('exclude_deleted leaves out secrets whose current version is deleted or destroyed', async () => {
    await kv('DELETE', 'kv/data/l/a');
    await kv('PUT', 'kv/destroy/l/zz', { versions: [1] });
    await kv('POST', 'kv/metadata/l/empty', { max_versions: 2 });
    expect(await list('l?exclude_deleted=true')).toEqual(['a-b', 'b/', 'e/', 'empty']);
    expect(await list('l')).toEqual(['a', 'a-b', 'b/', 'e/', 'empty', 'zz']);
    // A new version brings a secret back.
    await write('l/a', { back: true });
    expect(await list('l?exclude_deleted=true')).toEqual(['a', 'a-b', 'b/', 'e/', 'empty']);
    await kv('POST', 'kv/undelete/l/zz', { versions: [1] });
    expect(await list('l?exclude_deleted=true')).not.toContain('zz');
  });
});

describe('recursive listing (beyond Vault)', () => {
  beforeAll(async () => {
    for (const k of ['r/a', 'r/a-b', 'r/b/c', 'r/b/d/e', 'r/b.x', 'r/c', 'r/z/z/z']) await write(k, { k });
  });

  it('lists every secret below the folder as a relative path, in key order, with no folder entries', async () => {
    expect(await list('r?recursive=true')).toEqual(['a', 'a-b', 'b.x', 'b/c', 'b/d/e', 'c', 'z/z/z']);
    expect(await list('r/b/?recursive=true')).toEqual(['c', 'd/e']);
  });

  it('pages with after (exclusive) and limit', async () => {
    const pages: string[][] = [];
    let after = '';
    for (;;) {
      const page = await list(`r?recursive=true&limit=3${after ? `&after=${encodeURIComponent(after)}` : ''}`);
      if (page === 404) break;
      pages.push(page as string[]);
      after = pages[pages.length - 1][pages[pages.length - 1].length - 1];
      if ((page as string[]).length < 3) break;
    }
    expect(pages).toEqual([['a', 'a-b', 'b.x'], ['b/c', 'b/d/e', 'c'], ['z/z/z']]);
    expect(await list('r?recursive=true&after=z/z/z')).toBe(404);
    expect(await list('r?recursive=true&after=b')).toEqual(['b.x', 'b/c', 'b/d/e', 'c', 'z/z/z']);
  });

  it('honours exclude_deleted', async () => {
    await kv('DELETE', 'kv/data/r/b/c');
    expect(await list('r?recursive=true&exclude_deleted=true&limit=2')).toEqual(['a', 'a-b']);
    expect(await list('r?recursive=true&exclude_deleted=true&after=b.x&limit=2')).toEqual(['b/d/e', 'c']);
  });

  it.each([
    ['limit=0', 'limit must be between 1 and 10000'],
    ['limit=10001', 'limit must be between 1 and 10000'],
    ['limit=ten', 'error converting input "ten" for field "limit": cannot parse "ten" as an integer'],
    ['recursive=maybe', 'error converting input "maybe" for field "recursive": cannot parse "maybe" as a boolean'],
  ])('refuses %s', async (query, message) => {
    const r = await kv('GET', `kv/metadata/r?list=true&${query.startsWith('recursive') ? '' : 'recursive=true&'}${query}`);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
  });

  it('plain lists accept after and limit too', async () => {
    expect(await list('r?after=a-b&limit=2')).toEqual(['b.x', 'b/']);
  });
});
