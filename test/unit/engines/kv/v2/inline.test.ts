// Where a version's data lives: small data in the secret's metadata record (one row per write),
// large data or data past the record's budget in a row of its own. Whichever it is, every
// operation sees the same secret.
import { describe, expect, it } from 'vitest';
import { fromUtf8 } from '../../../../../src/crypto/encoding';
import { ROOT } from '../../../../../src/engines/kv/v2/layout';
import { INLINE_MAX, INLINE_TOTAL } from '../../../../../src/engines/kv/v2/store';
import { kv2 } from './harness';

const blob = (n: number) => ({ b: 'x'.repeat(n) });
const record = async (storage: { get(k: string): Promise<Uint8Array | null> }, path: string) =>
  JSON.parse(fromUtf8((await storage.get(`${ROOT}meta/${path}`))!)) as { inline?: Record<string, string> };
const rows = (storage: { data: Map<string, Uint8Array> }, path: string) =>
  [...storage.data.keys()].filter((k) => k.startsWith(`${ROOT}ver/${path}/`)).sort();

describe('version data placement', () => {
  it('keeps small versions in the record and large ones in rows, and reads both', async () => {
    const { storage, call } = kv2();
    await call('write', 'data/s', { data: { a: 1 } });
    await call('write', 'data/s', { data: blob(INLINE_MAX + 1) });
    expect(Object.keys((await record(storage, 's')).inline!)).toEqual(['1']);
    expect(rows(storage, 's')).toEqual([`${ROOT}ver/s/2`]);
    expect((await call('read', 'data/s', { version: 1 })).response?.data).toMatchObject({ data: { a: 1 } });
    expect((await call('read', 'data/s')).response?.data).toMatchObject({ data: blob(INLINE_MAX + 1) });
    // A patch reads the large current version and writes the merged one (large too).
    await call('patch', 'data/s', { data: { c: 3 } });
    expect((await call('read', 'data/s')).response?.data).toMatchObject({ data: { ...blob(INLINE_MAX + 1), c: 3 } });
    expect(rows(storage, 's')).toEqual([`${ROOT}ver/s/2`, `${ROOT}ver/s/3`]);
    expect((await call('read', 'subkeys/s', { version: 1 })).response?.data).toMatchObject({ subkeys: { a: null } });
  });

  it('stops inlining at the record budget, and pruning makes room again', async () => {
    const { storage, call } = kv2();
    await call('write', 'metadata/p', { max_versions: 3 });
    const size = JSON.stringify(blob(INLINE_MAX - 20)).length;
    const fit = Math.floor(INLINE_TOTAL / size);
    expect(fit).toBeGreaterThan(3);
    // With 3 versions kept the budget is never reached: nothing ever leaves the record.
    for (let i = 0; i < 6; i++) await call('write', 'data/p', { data: blob(INLINE_MAX - 20) });
    expect(rows(storage, 'p')).toEqual([]);
    expect(Object.keys((await record(storage, 'p')).inline!)).toEqual(['4', '5', '6']);
    // Keep more than fit: the versions written while the record is full get rows...
    const kept = fit + 2;
    await call('write', 'metadata/p', { max_versions: kept });
    for (let i = 0; i < fit; i++) await call('write', 'data/p', { data: blob(INLINE_MAX - 20) });
    const inline = Object.keys((await record(storage, 'p')).inline!).map(Number);
    expect(inline).toHaveLength(fit);
    expect(rows(storage, 'p')).toHaveLength(kept - fit);
    // ...and once pruning frees room in the record, the newest version is back in it.
    const latest = 6 + fit;
    expect(inline).toContain(latest);
    expect(rows(storage, 'p')).not.toContain(`${ROOT}ver/p/${latest}`);
    for (let v = latest - kept + 1; v <= latest; v++) expect((await call('read', 'data/p', { version: v })).status).toBe(200);
  });

  it('destroy and metadata delete erase data wherever it is', async () => {
    const { storage, call } = kv2();
    await call('write', 'data/d', { data: { small: true } });
    await call('write', 'data/d', { data: blob(INLINE_MAX + 1) });
    await call('write', 'destroy/d', { versions: [1, 2] });
    expect((await record(storage, 'd')).inline).toBeUndefined();
    expect(rows(storage, 'd')).toEqual([]);
    expect((await call('read', 'data/d', { version: 1 })).status).toBe(404);
    await call('write', 'data/d', { data: blob(INLINE_MAX + 1) });
    await call('write', 'data/d', { data: { small: true } });
    await call('delete', 'metadata/d');
    expect([...storage.data.keys()].filter((k) => k.includes('/d'))).toEqual([]);
  });
});
