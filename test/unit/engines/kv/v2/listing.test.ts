// Listing: Vault's folder lists and the recursive, paginated listing.
import { describe, expect, it } from 'vitest';
import { utf8 } from '../../../../../src/crypto/encoding';
import { recursiveNames } from '../../../../../src/engines/kv/v2/listing';
import { metaKey } from '../../../../../src/engines/kv/v2/layout';
import { MemoryStorage, type Storage } from '../../../../../src/framework/storage';
import { kv2 } from './harness';

/** Counts how many keys the storage hands out, to show what a page costs. */
class Counting implements Storage {
  handedOut = 0;
  constructor(private readonly inner: Storage) {}
  get(k: string) {
    return this.inner.get(k);
  }
  put(k: string, v: Uint8Array) {
    return this.inner.put(k, v);
  }
  delete(k: string) {
    return this.inner.delete(k);
  }
  async list(p: string) {
    const out = await this.inner.list(p);
    this.handedOut += out.length;
    return out;
  }
  async scan(p: string, a: string, l: number) {
    const out = await this.inner.scan(p, a, l);
    this.handedOut += out.length;
    return out;
  }
}

async function seed(paths: string[]): Promise<Counting> {
  const base = new MemoryStorage();
  for (const p of paths) await base.put(metaKey(p), utf8('{}'));
  return new Counting(base);
}

async function allPages(storage: Storage, folder: string, limit: number): Promise<string[][]> {
  const pages: string[][] = [];
  let after = '';
  for (;;) {
    const page = await recursiveNames(storage, folder, after, limit, null);
    if (page.length === 0) return pages;
    pages.push(page);
    after = page[page.length - 1];
  }
}

describe('recursive listing', () => {
  const paths = ['a', 'a-b', 'a/b', 'a/b/c', 'a.c', 'b/x/y/z', 'é', '\u{1F600}', '\uFF01', 'z'];

  it('lists every secret below a folder, relative to it, in key (code point) order', async () => {
    const s = await seed([...paths, 'other/thing']);
    expect(await recursiveNames(s, '', '', 100, null)).toEqual(['a', 'a-b', 'a.c', 'a/b', 'a/b/c', 'b/x/y/z', 'other/thing', 'z', 'é', '\uFF01', '\u{1F600}']);
    expect(await recursiveNames(s, 'a/', '', 100, null)).toEqual(['b', 'b/c']);
    expect(await recursiveNames(s, 'nothing/', '', 100, null)).toEqual([]);
  });

  it('pages add up to the whole list, each strictly after the previous one', async () => {
    const s = await seed(paths);
    const whole = await recursiveNames(s, '', '', 1000, null);
    for (const limit of [1, 2, 3, 7]) {
      const pages = await allPages(s, '', limit);
      expect(pages.flat()).toEqual(whole);
      expect(pages.every((p, i) => p.length === limit || i === pages.length - 1)).toBe(true);
    }
    expect(await recursiveNames(s, '', 'a/b', 2, null)).toEqual(['a/b/c', 'b/x/y/z']);
    expect(await recursiveNames(s, '', 'a/a', 1, null)).toEqual(['a/b']);
  });

  it('a page costs its own size, however large the folder', async () => {
    const s = await seed(Array.from({ length: 5000 }, (_, i) => `flat/${String(i).padStart(4, '0')}`));
    s.handedOut = 0;
    expect(await recursiveNames(s, 'flat/', '2500', 10, null)).toEqual(Array.from({ length: 10 }, (_, i) => String(2501 + i)));
    expect(s.handedOut).toBe(10);
  });

  it('skips hidden secrets and still fills the page', async () => {
    const s = await seed(['k1', 'k2', 'k3', 'k4', 'k5', 'k6']);
    const hidden = async (p: string) => p === 'k2' || p === 'k3';
    expect(await recursiveNames(s, '', '', 3, hidden)).toEqual(['k1', 'k4', 'k5']);
    expect(await recursiveNames(s, '', 'k4', 3, hidden)).toEqual(['k5', 'k6']);
  });
});

describe('list through the backend', () => {
  it('answers folders, recursive pages and their errors', async () => {
    const { call } = kv2();
    for (const p of ['x/a', 'x/b/c', 'x/b/d', 'y']) expect((await call('write', `data/${p}`, { data: { p } })).status).toBe(200);
    expect((await call('list', 'metadata/')).response?.data).toEqual({ keys: ['x/', 'y'] });
    expect((await call('list', 'metadata/x/')).response?.data).toEqual({ keys: ['a', 'b/'] });
    expect((await call('list', 'metadata/', { recursive: true, limit: 2 })).response?.data).toEqual({ keys: ['x/a', 'x/b/c'] });
    expect((await call('list', 'metadata/', { recursive: 'true', after: 'x/b/c' })).response?.data).toEqual({ keys: ['x/b/d', 'y'] });
    expect((await call('list', 'metadata/', { recursive: true, after: 'y' })).status).toBe(404);
    expect(await call('list', 'metadata/', { recursive: true, limit: 0 })).toEqual({ status: 400, errors: ['limit must be between 1 and 10000'] });
    expect(await call('list', 'metadata/', { recursive: true, limit: 10_001 })).toEqual({ status: 400, errors: ['limit must be between 1 and 10000'] });
    expect((await call('list', 'metadata/x/a/')).status).toBe(404);
  });
});
