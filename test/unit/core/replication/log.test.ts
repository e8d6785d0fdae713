// The DR replication log and Merkle index over real Durable Object SQLite (workerd): entries are
// recorded in the transaction of the change (a failed batch leaves none), every write path is
// captured (new key, overwrite fast path, upsert, delete, multi-statement batch), pages end on
// batch boundaries, trimming keeps sequence numbers rising, a secondary applies pages
// idempotently and ends byte-identical, and a Merkle comparison finds and repairs a corrupted
// or missing entry.
import { env, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { SqlPhysical } from '../../../../durable-objects/sqlite-physical';
import { bucketOf, bucketRepair, differingBuckets, entryHash, MerkleIndex } from '../../../../src/core/replication/merkle';
import { fromUtf8, utf8 } from '../../../../src/crypto/encoding';
import type { StorageOp } from '../../../../src/framework/storage';

type Stub = DurableObjectStub;

/** Runs `fn` in the object behind `stub` with a fresh view of its SQLite physical layer. */
const on = <T,>(stub: Stub, fn: (p: SqlPhysical, sql: SqlStorage) => T): Promise<T> =>
  runInDurableObject(stub, (_o, state) => fn(new SqlPhysical(state.storage), state.storage.sql));
const fresh = (): Stub => env.MOUNTS.get(env.MOUNTS.newUniqueId());

const put = (key: string, value: string): StorageOp => ({ key, value: utf8(value) });
const del = (key: string): StorageOp => ({ key, value: null });
const rows = (sql: SqlStorage) =>
  sql
    .exec<{ key: string; value: ArrayBuffer }>('SELECT key, value FROM coffer_kv ORDER BY key')
    .toArray()
    .map((r) => [r.key, fromUtf8(new Uint8Array(r.value))]);
const logged = (p: SqlPhysical) => p.log.since(0, 1000).entries.map((e) => [e.seq, e.key, e.value === null ? null : fromUtf8(e.value)]);

/** Ships everything after the secondary's position, a page at a time, as the secondary's pull would. */
async function ship(primary: Stub, secondary: Stub, source = 'obj', page = 3): Promise<number> {
  let pages = 0;
  for (;;) {
    const after = await on(secondary, (s) => s.log.applied(source).seq);
    const { entries } = await on(primary, (p) => p.log.since(after, page));
    if (entries.length === 0) return pages;
    await on(secondary, (s) => s.applyReplicated(source, entries));
    pages++;
  }
}

describe('recording', () => {
  it('records nothing until started, then every change with rising sequence numbers', () =>
    on(fresh(), (primary) => {
      primary.apply([put('a', '1')]);
      expect(primary.log.recording).toBe(false);
      expect(logged(primary)).toEqual([]);
      primary.log.start();
      primary.apply([put('a', '2')]); // overwrite fast path
      primary.apply([put('b/c', '3'), put('a', '4')]); // new key and upsert in one statement
      primary.apply([del('b/c')]);
      primary.apply([del('missing')]); // deletes nothing: nothing to record
      expect(logged(primary)).toEqual([
        [1, 'a', '2'],
        [2, 'b/c', '3'],
        [3, 'a', '4'],
        [4, 'b/c', null],
      ]);
      const batches = primary.log.since(0, 10).entries.map((e) => e.batch);
      expect(batches[1]).toBe(batches[2]);
      expect(new Set(batches).size).toBe(3);
    }));

  it('a batch that fails leaves neither its rows nor its entries', () =>
    on(fresh(), (primary, sqlP) => {
      primary.log.start();
      primary.apply([put('ok', '1')]);
      // 60 ops: several statements in one transaction; the last value is beyond SQLite's limit.
      const ops = Array.from({ length: 60 }, (_, i) => put(`k/${i}`, String(i)));
      // The database refuses the last row (a trigger stands in for a full disk or a constraint).
      sqlP.exec("CREATE TRIGGER test_refuse BEFORE INSERT ON coffer_kv WHEN NEW.key = 'bad' BEGIN SELECT RAISE(ABORT, 'refused'); END");
      ops.push(put('bad', 'x'));
      expect(() => primary.apply(ops)).toThrow();
      expect(rows(sqlP)).toEqual([['ok', '1']]);
      expect(logged(primary)).toEqual([[1, 'ok', '1']]);
    }));

  it('pages never split a batch, and trimming keeps numbering', () =>
    on(fresh(), (primary) => {
      primary.log.start();
      primary.apply(Array.from({ length: 5 }, (_, i) => put(`x/${i}`, 'v')));
      primary.apply([put('y', 'v')]);
      const page = primary.log.since(0, 2);
      expect(page.entries.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
      expect(page.last).toBe(6);
      primary.log.trim(6);
      expect(primary.log.since(0, 10)).toEqual({ entries: [], last: 6, first: 6 });
      primary.apply([put('z', 'v')]);
      expect(primary.log.since(6, 10).entries.map((e) => e.seq)).toEqual([7]);
      primary.log.stop();
      primary.apply([put('z', 'w')]);
      expect(primary.log.recording).toBe(false);
      expect(primary.log.since(0, 10).entries).toEqual([]);
    }));
});

describe('applying on a secondary', () => {
  it('ends byte-identical, and applying a page again changes nothing', async () => {
    const [primary, secondary] = [fresh(), fresh()];
    const last = await on(primary, (p) => {
      p.log.start();
      p.apply([put('a/1', 'one'), put('a/2', 'two')]);
      p.apply([put('b', 'bee')]);
      p.apply([del('a/1'), put('a/3', 'three')]);
      p.apply([put('b', 'bee2')]);
      return p.log.lastSeq();
    });
    expect(await ship(primary, secondary)).toBeGreaterThan(1);
    const want = await on(primary, (_p, sql) => rows(sql));
    expect(await on(secondary, (_s, sql) => rows(sql))).toEqual(want);
    const again = await on(primary, (p) => p.log.since(0, 100).entries);
    await on(secondary, (s) => {
      expect(s.list('a/')).toEqual(['2', '3']);
      expect(s.applyReplicated('obj', again)).toEqual({ seq: last });
      // Positions are kept per source object.
      expect(s.log.applied('other')).toEqual({ seq: 0 });
      expect(fromUtf8(s.get('b')!)).toBe('bee2');
    });
    expect(await on(secondary, (_s, sql) => rows(sql))).toEqual(want);
  });

  it('a secondary that caches a value reads the replicated one afterwards', async () => {
    const [primary, secondary] = [fresh(), fresh()];
    await on(primary, (p) => {
      p.log.start();
      p.apply([put('hot', 'old')]);
    });
    expect(await ship(primary, secondary)).toBe(1);
    const entries = await on(primary, (p) => {
      p.apply([put('hot', 'new')]);
      return p.log.since(1, 10).entries;
    });
    await on(secondary, (s, sql) => {
      expect(rows(sql)).toEqual([['hot', 'old']]);
      expect(fromUtf8(s.get('hot')!)).toBe('old');
      s.applyReplicated('obj', entries);
      expect(fromUtf8(s.get('hot')!)).toBe('new');
    });
  });
});

describe('the Merkle index', () => {
  it('is the same on both sides after shipping, and the same built at once or change by change', async () => {
    const [primary, secondary] = [fresh(), fresh()];
    const incremental = await on(primary, (p) => {
      p.log.start();
      const index = new MerkleIndex();
      for (let i = 0; i < 50; i++) {
        const key = `k/${i % 20}`;
        const before = p.get(key);
        p.apply([i % 7 === 6 ? del(key) : put(key, `v${i}`)]);
        index.change(key, before, p.get(key));
      }
      return index.root();
    });
    await ship(primary, secondary, 'obj', 7);
    const a = await on(primary, (p) => p.log.merkle().root());
    expect(a).toMatch(/^[0-9a-f]{40}$/);
    expect(await on(secondary, (s) => s.log.merkle().root())).toBe(a);
    expect(incremental).toBe(a);
    expect(new MerkleIndex().root()).not.toBe(a);
  });

  it('finds a corrupted, a missing and a stray entry on the secondary and repairs them', async () => {
    const [primary, secondary] = [fresh(), fresh()];
    await on(primary, (p) => {
      p.log.start();
      p.apply(Array.from({ length: 40 }, (_, i) => put(`data/${i}`, `value-${i}`)));
    });
    await ship(primary, secondary);
    // Corrupt one stored value, lose another and add one behind the log's back.
    const bucketsS = await on(secondary, (_s, sql) => {
      sql.exec('UPDATE coffer_kv SET value = ? WHERE key = ?', utf8('tampered'), 'data/7');
      sql.exec('DELETE FROM coffer_kv WHERE key = ?', 'data/9');
      sql.exec('INSERT INTO coffer_kv (key, parent, value) VALUES (?, ?, ?)', 'stray', '', utf8('x'));
      return new SqlPhysical({ sql } as unknown as DurableObjectStorage).log.merkle().bucketHexes();
    });
    const bucketsP = await on(primary, (p) => p.log.merkle().bucketHexes());
    const buckets = differingBuckets(bucketsP, bucketsS);
    expect([...buckets].sort((x, y) => x - y)).toEqual([...new Set([bucketOf('data/7'), bucketOf('data/9'), bucketOf('stray')])].sort((x, y) => x - y));
    const want = await on(primary, (p) => p.log.bucketEntries(buckets));
    const { copy, remove } = bucketRepair(want, await on(secondary, (s) => s.log.bucketEntries(buckets)));
    expect(copy).toEqual(['data/7', 'data/9']);
    expect(remove).toEqual(['stray']);
    const values = await on(primary, (p) => copy.map((key) => ({ key, value: p.get(key) })));
    await on(secondary, (s) => s.apply([...values, ...remove.map(del)]));
    expect(await on(secondary, (s) => s.log.merkle().root())).toBe(await on(primary, (p) => p.log.merkle().root()));
    expect(await on(secondary, (_s, sql) => rows(sql))).toEqual(await on(primary, (_p, sql) => rows(sql)));
  });

  it('frames entries so that key and value boundaries cannot be shifted', () => {
    expect(entryHash('ab', utf8('c'))).not.toEqual(entryHash('a', utf8('bc')));
  });
});
