// A Merkle repair of a large object is cut into calls of bounded size, and records the position
// only with its last write (a repair cut short is done again, never taken as done). A round says
// whether the primary had more than it took (the next round then comes at once).
import { describe, expect, it } from 'vitest';
import { followOnce, repairObject, type FollowerPorts } from '../../../../src/core/replication/follower';
import type { WirePage } from '../../../../src/core/replication/stream';
import { bucketOf, entryHash, MerkleIndex } from '../../../../src/core/replication/merkle';
import { toBase64, utf8 } from '../../../../src/crypto/encoding';
import { bytesToHex } from '@noble/hashes/utils.js';

/** An object's contents as a map, with the Merkle answers the ports give. */
function side(data: Map<string, string>) {
  const merkle = (buckets?: number[]) => {
    if (!buckets) {
      const index = MerkleIndex.build([...data].map(([k, v]) => [k, utf8(v)] as const));
      return { root: index.root(), buckets: index.bucketHexes() };
    }
    const wanted = new Set(buckets);
    return { entries: Object.fromEntries([...data].filter(([k]) => wanted.has(bucketOf(k))).map(([k, v]) => [k, bytesToHex(entryHash(k, utf8(v)))])) };
  };
  return { data, merkle };
}

describe('repairObject', () => {
  it('copies 1,200 differing keys in calls of at most 500, and records the position once, last', async () => {
    const primary = side(new Map(Array.from({ length: 1300 }, (_, i) => [`k/${i}`, `v${i}`])));
    const secondary = side(new Map([...Array.from({ length: 100 }, (_, i) => [`k/${i}`, `v${i}`] as [string, string]), ['stray', 'x']]));
    const valueCalls: number[] = [];
    const repairs: { size: number; resumeAfter: number | null }[] = [];
    const ports = {
      remoteMerkle: async (_o: string, b?: number[]) => primary.merkle(b),
      merkle: async (_o: string, b?: number[]) => secondary.merkle(b),
      remoteValues: async (_o: string, keys: string[]) => {
        valueCalls.push(keys.length);
        return Object.fromEntries(keys.map((k) => [k, toBase64(utf8(primary.data.get(k)!))]));
      },
      repair: async (_o: string, values: Record<string, string | null>, resumeAfter: number | null) => {
        repairs.push({ size: Object.keys(values).length, resumeAfter });
        for (const [k, v] of Object.entries(values)) {
          if (v === null) secondary.data.delete(k);
          else secondary.data.set(k, atob(v));
        }
      },
    } as unknown as FollowerPorts;
    await repairObject(ports, 'mount/x', 77);
    expect(Math.max(...valueCalls)).toBeLessThanOrEqual(500);
    expect(valueCalls.reduce((a, b) => a + b, 0)).toBe(1200);
    expect(Math.max(...repairs.map((r) => r.size))).toBeLessThanOrEqual(500);
    expect(repairs.map((r) => r.resumeAfter)).toEqual([...repairs.slice(1).map(() => null), 77]);
    expect(secondary.merkle().root).toBe(primary.merkle().root);
    expect(secondary.data.has('stray')).toBe(false);
  });

  it('with nothing different, still records the position', async () => {
    const both = side(new Map([['a', '1']]));
    const repairs: (number | null)[] = [];
    const ports = {
      remoteMerkle: async (_o: string, b?: number[]) => both.merkle(b),
      merkle: async (_o: string, b?: number[]) => both.merkle(b),
      repair: async (_o: string, _v: Record<string, string | null>, resumeAfter: number | null) => void repairs.push(resumeAfter),
    } as unknown as FollowerPorts;
    await repairObject(ports, 'system', 5);
    expect(repairs).toEqual([5]);
  });
});

describe('followOnce', () => {
  /** A primary with one object whose log holds seq 1..recorded; a page gives at most `limit`. */
  function primaryWith(recorded: number) {
    let position = 0;
    const page = (after: number, limit: number): WirePage => {
      const entries = [];
      for (let seq = after + 1; seq <= Math.min(recorded, after + limit); seq++) entries.push({ seq, batch: seq, key: `k${seq}`, value: toBase64(utf8(`v${seq}`)) });
      return { entries, last: recorded, first: 0 };
    };
    const ports = {
      position: async () => position,
      pull: async (positions: Record<string, number>, limit: number) => ({ cluster_id: 'c', objects: ['system'], pages: { system: page(positions.system ?? 0, limit) }, now: 0 }),
      apply: async (_o: string, p: WirePage) => (position = p.entries[p.entries.length - 1].seq),
    } as unknown as FollowerPorts;
    return ports;
  }

  it('asks again at once while a page stops short of the primary\'s last entry, not when it reached it', async () => {
    const ports = primaryWith(25);
    const first = await followOnce(ports, ['system'], 10);
    expect({ applied: first.applied, more: first.more }).toEqual({ applied: 10, more: true });
    expect((await followOnce(ports, ['system'], 10)).more).toBe(true);
    const third = await followOnce(ports, ['system'], 10);
    expect({ applied: third.applied, more: third.more, lastRemoteWal: third.lastRemoteWal }).toEqual({ applied: 5, more: false, lastRemoteWal: 25 });
    expect(await followOnce(ports, ['system'], 10)).toMatchObject({ applied: 0, more: false });
  });
});
