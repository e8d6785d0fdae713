// LruMap: bounded by weight and by entries, least recently used out first, in batches; a read
// moves its entry only from the older half.
import { describe, expect, it } from 'vitest';
import { LruMap } from '../../../src/core/lru-map';
import { Rng } from '../../helpers/fuzz/random';

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

  it('moves a read entry to the newest end only from the older half, and keeps what was read lately', () => {
    const m = new LruMap<number>((v) => v, 80);
    for (let i = 0; i < 8; i++) m.set(`k${i}`, 10);
    const all = Array.from({ length: 12 }, (_, i) => `k${i}`);
    m.get('k6'); // in the newer half: stays where it is
    m.get('k2'); // in the older half: moves behind k7
    m.set('k8', 10); // out: k0 and k1, the oldest
    expect(keys(m, all)).toEqual(['k2', 'k3', 'k4', 'k5', 'k6', 'k7', 'k8']);
    // Reading one key again and again does not move it once it is new (nor evict anything).
    for (let i = 0; i < 1_000; i++) expect(m.get('k8')).toBe(10);
    m.set('k9', 10);
    m.set('k10', 10); // out: the two oldest by their last move
    expect(m.size).toBe(7);
    expect(keys(m, all).includes('k8')).toBe(true);
  });

  it('matches a plain model of the policy over random operations', () => {
    // The model: an array from oldest to newest; a read moves an entry whose last set or move is
    // more than half the size ago; eviction from the oldest end down to 7/8 of the bounds.
    type Entry = { key: string; value: number; at: number };
    for (const [seed, maxWeight, maxEntries] of [
      [1, 200, Infinity],
      [2, 10_000, 24],
      [3, 120, 16],
    ] as const) {
      const rng = new Rng(seed);
      const m = new LruMap<number>((v) => v, maxWeight, maxEntries);
      let model: Entry[] = [];
      let moves = 0;
      const weight = () => model.reduce((w, e) => w + e.value, 0);
      for (let op = 0; op < 5_000; op++) {
        const key = `k${rng.int(0, 40)}`;
        const roll = rng.int(0, 9);
        if (roll < 5) {
          const i = model.findIndex((x) => x.key === key);
          if (i >= 0 && moves - model[i].at > model.length >> 1) {
            const [e] = model.splice(i, 1);
            model.push({ ...e, at: ++moves });
          }
          expect(m.get(key)).toBe(i >= 0 ? model.find((x) => x.key === key)!.value : undefined);
        } else if (roll < 9) {
          const value = rng.int(1, 30);
          m.set(key, value);
          model = model.filter((x) => x.key !== key);
          model.push({ key, value, at: ++moves });
          if (weight() > maxWeight || model.length > maxEntries) {
            while (model.length > 0 && (weight() > (maxWeight * 7) / 8 || model.length > (maxEntries * 7) / 8)) model.shift();
          }
        } else {
          m.delete(key);
          model = model.filter((x) => x.key !== key);
        }
        expect(m.size).toBe(model.length);
      }
      expect(keys(m, model.map((e) => e.key)).length).toBe(model.length);
    }
  });

  it('holds null values (an absent key remembered as such)', () => {
    const m = new LruMap<Uint8Array | null>((v) => v?.length ?? 0, 10);
    m.set('gone', null);
    expect(m.get('gone')).toBeNull();
    expect(m.get('never')).toBeUndefined();
  });
});
