// delete_version_after over time: the due/ index and the sweep the mount's alarm runs.
import { describe, expect, it } from 'vitest';
import { DUE, GONE } from '../../../../../src/engines/kv/v2/layout';
import { overdueGone, sweepDue } from '../../../../../src/engines/kv/v2/timers';
import { kv2 } from './harness';

const scanAll = async (s: { scan(p: string, a: string, l: number): Promise<string[]> }, prefix: string) =>
  (await s.scan(prefix, '', 1000)).map((k) => k.slice(prefix.length));

describe('the deletion sweep', () => {
  it('waits for the deletion time, then records the current version as gone', async () => {
    const { storage, call, backend } = kv2();
    await call('write', 'metadata/k', { delete_version_after: '60s' });
    const written = (await call('write', 'data/k', { data: { v: 1 } })).response!.data!;
    const due = Date.parse(written.deletion_time as string);
    expect(await scanAll(storage, DUE)).toEqual([`${String(due).padStart(15, '0')}/1/k`]);

    expect(await sweepDue(storage, due - 1)).toBe(due);
    expect(await scanAll(storage, GONE)).toEqual([]);
    expect(await overdueGone(storage, due - 1)).toEqual(new Set());
    expect(await overdueGone(storage, due)).toEqual(new Set(['k']));

    // The backend's periodic hook is the sweep once no upgrade is pending.
    expect(await backend.periodic!(storage, due)).toBeNull();
    expect(await scanAll(storage, GONE)).toEqual(['k']);
    expect(await scanAll(storage, DUE)).toEqual([]);
  });

  it('drops stale entries: the version was replaced, undeleted to a later time, or destroyed', async () => {
    const { storage, call } = kv2();
    await call('write', 'metadata/a', { delete_version_after: '1s' });
    for (const k of ['a/1', 'a/2', 'a/3']) await call('write', `metadata/${k}`, { delete_version_after: '1s' });
    await call('write', 'data/a/1', { data: { v: 1 } });
    await call('write', 'data/a/2', { data: { v: 1 } });
    await call('write', 'data/a/3', { data: { v: 1 } });
    await call('write', 'data/a/1', { data: { v: 2 } }); // version 1's entry is stale
    await call('write', 'destroy/a/2', { versions: [1] }); // gone already: destroyed
    const entries = await scanAll(storage, DUE);
    expect(entries).toHaveLength(4);
    const later = Date.now() + 5000;
    expect(await sweepDue(storage, later)).toBeNull();
    expect(await scanAll(storage, DUE)).toEqual([]);
    expect(await scanAll(storage, GONE)).toEqual(['a/1', 'a/2', 'a/3']);
    // A write makes the secret live again.
    await call('write', 'data/a/3', { data: { v: 2 } });
    expect(await scanAll(storage, GONE)).toEqual(['a/1', 'a/2']);
  });

  it('works through a budget at a time, asking to come back at once', async () => {
    const { storage, call } = kv2();
    await call('write', 'config', { delete_version_after: '1s' });
    for (let i = 0; i < 5; i++) await call('write', `data/k${i}`, { data: { i } });
    const later = Date.now() + 5000;
    expect(await sweepDue(storage, later, 2)).toBe(later);
    expect(await scanAll(storage, DUE)).toHaveLength(3);
    expect(await sweepDue(storage, later, 2)).toBe(later);
    expect(await sweepDue(storage, later, 2)).toBeNull();
    expect(await scanAll(storage, GONE)).toHaveLength(5);
  });
});
