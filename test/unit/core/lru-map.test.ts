// LruMap: bounded by weight and by entries, least recently used out first, in batches.
import { describe, expect, it } from 'vitest';
import { LruMap } from '../../../src/core/lru-map';

const keys = (m: LruMap<number>, all: string[]) => all.filter((k) => m.get(k) !== undefined);

describe('LruMap', () => {
  it('evicts the least recently used entries down to 7/8 of the weight bound', () => {
    const m = new LruMap<number>((v) => v, 80);
    for (let i = 0; i < 8; i++) m.set(`k${i}`, 10);
    expect(m.size).toBe(8);
    m.get('k0'); // now the most recently used
    m.set('k8', 10); // 90 > 80: out until the weight is at most 70
    expect(m.size).toBe(7);
    const all = Array.from({ length: 9 }, (_, i) => `k${i}`);
    expect(keys(m, all)).toEqual(['k0', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8']);
  });

  it('evicts by entry count, and keeps its weight right through replacements and deletions', () => {
    const m = new LruMap<number>((v) => v, 1_000, 16);
    for (let i = 0; i < 17; i++) m.set(`k${i}`, 1);
    expect(m.size).toBe(14);
    expect(m.get('k0')).toBeUndefined();
    expect(m.get('k16')).toBe(1);
    const w = new LruMap<number>((v) => v, 100);
    w.set('a', 60);
    w.set('a', 30); // replaced: 30, not 90
    w.set('b', 60);
    expect([w.get('a'), w.get('b')]).toEqual([30, 60]);
    w.delete('a');
    w.set('c', 40); // 100: within the bound
    expect([w.get('b'), w.get('c')]).toEqual([60, 40]);
    w.clear();
    expect(w.size).toBe(0);
    w.set('d', 100);
    expect(w.get('d')).toBe(100);
  });

  it('holds null values (an absent key remembered as such)', () => {
    const m = new LruMap<Uint8Array | null>((v) => v?.length ?? 0, 10);
    m.set('gone', null);
    expect(m.get('gone')).toBeNull();
    expect(m.get('never')).toBeUndefined();
  });
});
