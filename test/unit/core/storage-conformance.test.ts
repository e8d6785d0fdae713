// One behavioural contract for every Storage implementation: in-memory, a buffered transaction,
// and the barrier over both memory and a real Durable Object's SQLite database.
import { env, runInDurableObject } from 'cloudflare:test';
import { describe, expect, it } from 'vitest';
import { BarrierStorage, type KeyringSource } from '../../../src/core/barrier/barrier';
import { GroupedWrites } from '../../../src/core/barrier/grouped-writes';
import { Keyring } from '../../../src/core/barrier/keyring';
import { MemoryPhysical } from '../../../src/core/barrier/physical';
import { utf8, fromUtf8 } from '../../../src/crypto/encoding';
import { getJSONNow, MemoryStorage, prefixedTransaction, StorageTransaction, type Storage } from '../../../src/framework/storage';
import { SqlPhysical } from '../../../durable-objects/sqlite-physical';

const ring = Keyring.generate();
const keys: KeyringSource = { get: async () => ring, refresh: async () => ring };

const put = (s: Storage, k: string, v = k) => s.put(k, utf8(v));
const text = async (s: Storage, k: string) => {
  const v = await s.get(k);
  return v === null ? null : fromUtf8(v);
};

const cases: Record<string, (s: Storage) => Promise<void>> = {
  'get of a missing key is null': async (s) => {
    expect(await s.get('nope')).toBeNull();
  },
  'put then get round-trips bytes, including every byte value and empty values': async (s) => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    await s.put('bin', all);
    expect(await s.get('bin')).toEqual(all);
    await s.put('empty', new Uint8Array(0));
    expect(await s.get('empty')).toEqual(new Uint8Array(0));
  },
  'put overwrites': async (s) => {
    await put(s, 'k', 'one');
    await put(s, 'k', 'two');
    expect(await text(s, 'k')).toBe('two');
    expect(await s.list('')).toEqual(['k']);
  },
  'delete removes, and deleting a missing key is a no-op': async (s) => {
    await put(s, 'a/b');
    await s.delete('a/b');
    await s.delete('never/was');
    expect(await s.get('a/b')).toBeNull();
    expect(await s.list('')).toEqual([]);
  },
  'list returns direct children sorted, folders with a trailing slash, once each': async (s) => {
    for (const k of ['b', 'a/x', 'a/y/z', 'c/d', 'a/y/w', 'aa']) await put(s, k);
    expect(await s.list('')).toEqual(['a/', 'aa', 'b', 'c/']);
    expect(await s.list('a/')).toEqual(['x', 'y/']);
    expect(await s.list('a/y/')).toEqual(['w', 'z']);
    expect(await s.list('missing/')).toEqual([]);
  },
  'a key and a folder may share a name': async (s) => {
    await put(s, 'n');
    await put(s, 'n/child');
    expect(await s.list('')).toEqual(['n', 'n/']);
  },
  'a folder disappears with its last key, and only then': async (s) => {
    for (const k of ['p/q/r', 'p/q/s', 'p/t']) await put(s, k);
    await s.delete('p/q/r');
    expect(await s.list('p/')).toEqual(['q/', 't']);
    await s.delete('p/q/s');
    expect(await s.list('p/')).toEqual(['t']);
    await s.delete('p/t');
    expect(await s.list('')).toEqual([]);
  },
  'keys may hold spaces, percent signs and non-ASCII text': async (s) => {
    for (const k of ['dir one/key %20', 'dir one/ключ', 'dir one/😀']) await put(s, k);
    expect(await s.list('dir one/')).toEqual(['key %20', 'ключ', '😀'].sort());
    expect(await text(s, 'dir one/😀')).toBe('dir one/😀');
  },
  'list refuses a prefix that is not a folder': async (s) => {
    await expect(s.list('a')).rejects.toThrow('must be empty or end with "/"');
  },
  'put refuses malformed keys': async (s) => {
    for (const k of ['', 'a/', '/a', 'a//b']) await expect(s.put(k, utf8('x'))).rejects.toThrow('invalid storage key');
  },
  'scan pages through every key below a folder, in key order, after a key, up to a limit': async (s) => {
    for (const k of ['t/b', 't/a/x', 't/a-b', 't/a/y/z', 't/c', 'u/q', 'tt', 's']) await put(s, k);
    expect(await s.scan('t/', '', 100)).toEqual(['t/a-b', 't/a/x', 't/a/y/z', 't/b', 't/c']);
    expect(await s.scan('t/', '', 2)).toEqual(['t/a-b', 't/a/x']);
    expect(await s.scan('t/', 't/a/x', 2)).toEqual(['t/a/y/z', 't/b']);
    expect(await s.scan('t/', 't/c', 2)).toEqual([]);
    expect(await s.scan('t/', 'a', 1)).toEqual(['t/a-b']);
    expect(await s.scan('', 't/b', 3)).toEqual(['t/c', 'tt', 'u/q']);
    expect(await s.scan('', '', 0)).toEqual([]);
    expect(await s.scan('missing/', '', 10)).toEqual([]);
    await expect(s.scan('t', '', 1)).rejects.toThrow('must be empty or end with "/"');
  },
  'scan orders keys by code point (as UTF-8 bytes), not by UTF-16 units': async (s) => {
    for (const k of ['o/\u{1F600}', 'o/\uFF01', 'o/z', 'o/\u00E9']) await put(s, k);
    expect(await s.scan('o/', '', 10)).toEqual(['o/z', 'o/\u00E9', 'o/\uFF01', 'o/\u{1F600}']);
    expect(await s.scan('o/', 'o/\uFF01', 10)).toEqual(['o/\u{1F600}']);
  },
  'values of 512 KiB round-trip': async (s) => {
    const big = Uint8Array.from({ length: 512 * 1024 }, (_, i) => (i * 31) & 0xff);
    await s.put('big', big);
    expect(await s.get('big')).toEqual(big);
  },
};

/** The barrier puts keys unchecked into the physical layer; check them on the way in. */
class CheckedBarrier extends BarrierStorage {
  override async put(key: string, value: Uint8Array) {
    await new MemoryStorage().put(key, value); // same validation as every other implementation
    return super.put(key, value);
  }
}

const implementations: Array<[string, (fn: (s: Storage) => Promise<void>) => Promise<void>]> = [
  ['MemoryStorage', (fn) => fn(new MemoryStorage())],
  ['StorageTransaction (uncommitted view)', (fn) => fn(new StorageTransaction(new MemoryStorage()))],
  ['BarrierStorage over memory', (fn) => fn(new CheckedBarrier(new MemoryPhysical(), keys))],
  [
    'BarrierStorage over Durable Object SQLite',
    (fn) => {
      const stub = env.MOUNTS.get(env.MOUNTS.newUniqueId());
      return runInDurableObject(stub, async (_obj, state) => fn(new CheckedBarrier(new SqlPhysical(state.storage), keys)));
    },
  ],
  [
    'BarrierStorage over grouped writes to SQLite (staged, then flushed)',
    (fn) => {
      const stub = env.MOUNTS.get(env.MOUNTS.newUniqueId());
      return runInDurableObject(stub, async (_obj, state) => {
        const grouped = new GroupedWrites(new SqlPhysical(state.storage), (e) => {
          throw e;
        });
        await fn(new CheckedBarrier(grouped.grouped, keys));
        await grouped.durable();
      });
    },
  ],
];

describe.each(implementations)('Storage conformance: %s', (_name, run) => {
  for (const [name, fn] of Object.entries(cases)) it(name, () => run(fn));
});

describe('StorageTransaction', () => {
  it('applies nothing until commit, then everything at once', async () => {
    const base = new MemoryStorage();
    await put(base, 'old/a');
    const tx = new StorageTransaction(base);
    await put(tx, 'new/b');
    await tx.delete('old/a');
    expect(await tx.list('')).toEqual(['new/']);
    expect(await base.list('')).toEqual(['old/']);
    await tx.commit();
    expect(await base.list('')).toEqual(['new/']);
  });

  it('a folder emptied by deletes in the transaction is not listed', async () => {
    const base = new MemoryStorage();
    for (const k of ['f/x', 'f/y']) await put(base, k);
    const tx = new StorageTransaction(base);
    await tx.delete('f/x');
    expect(await tx.list('')).toEqual(['f/']);
    await tx.delete('f/y');
    expect(await tx.list('')).toEqual([]);
    await put(tx, 'f/z');
    expect(await tx.list('')).toEqual(['f/']);
  });

  it('scan sees the transaction\'s own puts and deletes, and still fills the page', async () => {
    const base = new MemoryStorage();
    for (const k of ['d/1', 'd/2', 'd/3', 'd/4', 'd/5']) await put(base, k);
    const tx = new StorageTransaction(base);
    await tx.delete('d/1');
    await tx.delete('d/2');
    await put(tx, 'd/25');
    await put(tx, 'd/9');
    expect(await tx.scan('d/', '', 3)).toEqual(['d/25', 'd/3', 'd/4']);
    expect(await tx.scan('d/', 'd/4', 10)).toEqual(['d/5', 'd/9']);
    expect(await base.scan('d/', '', 10)).toEqual(['d/1', 'd/2', 'd/3', 'd/4', 'd/5']);
  });

  it('peek sees the transaction\'s own writes, then the storage below; commit with nothing written is not a promise', async () => {
    const base = new MemoryStorage();
    await base.put('v/a', utf8('stored'));
    const tx = new StorageTransaction(base);
    const view = prefixedTransaction(tx, 'v/');
    expect(fromUtf8(view.peek!('a')!)).toBe('stored');
    expect(view.peek!('b')).toBeNull();
    expect(view.commit()).toBeUndefined();
    await view.put('b', utf8('mine'));
    await view.delete('a');
    expect(fromUtf8(view.peek!('b')!)).toBe('mine');
    expect(view.peek!('a')).toBeNull();
    expect(() => getJSONNow(view, 'b')).toThrow(SyntaxError);
    await view.put('j', utf8('{"x":1}'));
    expect(getJSONNow(view, 'j')).toEqual({ x: 1 });
    // Below a storage that cannot peek, there is nothing to answer at once.
    const blind = new StorageTransaction({
      get: (k) => base.get(k),
      put: (k, v) => base.put(k, v),
      delete: (k) => base.delete(k),
      list: (p) => base.list(p),
      scan: (p, a, l) => base.scan(p, a, l),
      applyBatch: (ops) => base.applyBatch(ops),
    });
    expect(blind.peek('v/a')).toBeUndefined();
    expect(getJSONNow(blind, 'v/j')).toBeInstanceOf(Promise);
    const committed = view.commit();
    expect(committed).toBeInstanceOf(Promise);
    await committed;
    expect(fromUtf8(base.peek('v/b')!)).toBe('mine');
  });

  it('a dropped transaction leaves the storage untouched', async () => {
    const base = new MemoryStorage();
    const tx = new StorageTransaction(base);
    await put(tx, 'a');
    expect(base.data.size).toBe(0);
  });
});

/** A SqlPhysical over an object's storage, with its SQL statements counted. */
function countingPhysical(storage: DurableObjectStorage): { p: SqlPhysical; statements: { n: number } } {
  const statements = { n: 0 };
  const sql = new Proxy(storage.sql, {
    get: (target, prop) => (prop === 'exec' ? (q: string, ...b: unknown[]) => (statements.n++, target.exec(q, ...b)) : Reflect.get(target, prop)),
  });
  const watched = { sql, transactionSync: <T>(fn: () => T) => storage.transactionSync(fn) } as unknown as DurableObjectStorage;
  return { p: new SqlPhysical(watched), statements };
}

describe('SqlPhysical', () => {
  it('applies a batch atomically: a failing op rolls back the whole batch', async () => {
    const stub = env.MOUNTS.get(env.MOUNTS.newUniqueId());
    await runInDurableObject(stub, async (_obj, state) => {
      const p = new SqlPhysical(state.storage);
      p.apply([{ key: 'keep', value: utf8('1') }]);
      // A null key violates NOT NULL half-way through the batch.
      const bad = { key: null as unknown as string, value: utf8('3') };
      expect(() => p.apply([{ key: 'a', value: utf8('2') }, bad])).toThrow();
      expect(p.get('a')).toBeNull();
      expect(p.list('')).toEqual(['keep']);
    });
  });

  it('writes a batch in one statement, folders included, and keeps folder counts exact', async () => {
    const stub = env.MOUNTS.get(env.MOUNTS.newUniqueId());
    await runInDurableObject(stub, async (_obj, state) => {
      const p = new SqlPhysical(state.storage);
      p.apply([{ key: 'a/b/1', value: utf8('1') }]);
      const { p: q, statements } = countingPhysical(state.storage);
      statements.n = 0;
      q.apply([{ key: 'a/b/1', value: null }, { key: 'a/b/2', value: utf8('2') }, { key: 'a/c', value: utf8('3') }]);
      expect(statements.n).toBe(1);
      expect(p.list('')).toEqual(['a/']);
      expect(p.list('a/')).toEqual(['b/', 'c']);
      expect(p.list('a/b/')).toEqual(['2']);
      // Rewriting a key counts it once; adding and removing a new key in one batch leaves no folder.
      p.apply([{ key: 'a/b/2', value: utf8('2b') }, { key: 'x/y', value: utf8('1') }, { key: 'x/y', value: null }]);
      expect(p.list('')).toEqual(['a/']);
      p.apply([{ key: 'a/b/2', value: null }]);
      expect(p.list('a/')).toEqual(['c']);
      // Deleting what is not there changes no count.
      p.apply([{ key: 'a/zzz', value: null }, { key: 'a/c', value: null }]);
      expect(p.list('')).toEqual([]);
      expect(state.storage.sql.exec('SELECT count(*) AS n FROM coffer_dirs').one().n).toBe(0);
    });
  });

  it('serves recently read and written values from memory, and never a stale one', async () => {
    const stub = env.MOUNTS.get(env.MOUNTS.newUniqueId());
    await runInDurableObject(stub, async (_obj, state) => {
      const { p, statements } = countingPhysical(state.storage);
      p.apply([{ key: 'k', value: utf8('1') }]);
      statements.n = 0;
      expect(fromUtf8(p.get('k')!)).toBe('1');
      expect(p.get('absent')).toBeNull();
      expect(statements.n).toBe(1); // only the absent key was looked up...
      expect(p.get('absent')).toBeNull();
      expect(statements.n).toBe(1); // ...once
      // A batch that fails changes nothing, in SQLite or in memory.
      const bad = { key: null as unknown as string, value: utf8('x') };
      expect(() => p.apply([{ key: 'k', value: utf8('2') }, { key: 'absent', value: utf8('3') }, bad])).toThrow();
      expect(fromUtf8(p.get('k')!)).toBe('1');
      expect(p.get('absent')).toBeNull();
      // Erasing everything behind its back is followed by createSchema, which forgets.
      await state.storage.deleteAll();
      p.createSchema();
      expect(p.get('k')).toBeNull();
    });
  });

  it('serves recent folder listings from memory, and never a stale one', async () => {
    const stub = env.MOUNTS.get(env.MOUNTS.newUniqueId());
    await runInDurableObject(stub, async (_obj, state) => {
      const { p, statements } = countingPhysical(state.storage);
      p.apply([{ key: 'a/b/1', value: utf8('1') }, { key: 'a/c', value: utf8('2') }]);
      expect(p.list('a/')).toEqual(['b/', 'c']);
      statements.n = 0;
      const listed = p.list('a/');
      expect(listed).toEqual(['b/', 'c']);
      expect(statements.n).toBe(0);
      listed.reverse().push('mine'); // the caller's own array
      expect(p.list('a/')).toEqual(['b/', 'c']);
      // An overwrite of a key that exists changes no folder: still from memory.
      p.apply([{ key: 'a/c', value: utf8('2b') }]);
      statements.n = 0;
      expect(p.list('a/')).toEqual(['b/', 'c']);
      expect(statements.n).toBe(0);
      // A key in a subfolder, its removal, a new key: each seen by the folders above it.
      expect(p.list('')).toEqual(['a/']);
      p.apply([{ key: 'a/b/2', value: utf8('3') }]);
      expect(p.list('a/b/')).toEqual(['1', '2']);
      p.apply([{ key: 'a/b/1', value: null }, { key: 'a/b/2', value: null }]);
      expect(p.list('a/')).toEqual(['c']);
      expect(p.list('a/b/')).toEqual([]);
      p.apply([{ key: 'a/d', value: utf8('4') }, { key: 'z', value: utf8('5') }]);
      expect(p.list('a/')).toEqual(['c', 'd']);
      expect(p.list('')).toEqual(['a/', 'z']);
      // A batch that fails leaves the listings as SQLite has them.
      const bad = { key: null as unknown as string, value: utf8('x') };
      expect(() => p.apply([{ key: 'a/e', value: utf8('6') }, bad])).toThrow();
      expect(p.list('a/')).toEqual(['c', 'd']);
      // Erasing everything behind its back is followed by createSchema, which forgets.
      await state.storage.deleteAll();
      p.createSchema();
      expect(p.list('a/')).toEqual([]);
      expect(p.list('')).toEqual([]);
    });
  });

  it('applies a batch larger than one statement atomically too', async () => {
    const stub = env.MOUNTS.get(env.MOUNTS.newUniqueId());
    await runInDurableObject(stub, async (_obj, state) => {
      const p = new SqlPhysical(state.storage);
      const many = Array.from({ length: 450 }, (_, i) => ({ key: `big/${i}`, value: utf8('v') }));
      const bad = { key: null as unknown as string, value: utf8('x') };
      expect(() => p.apply([...many, bad])).toThrow();
      expect(p.list('')).toEqual([]);
      p.apply(many);
      expect(p.list('big/')).toHaveLength(450);
      p.apply(many.map((op) => ({ key: op.key, value: null })));
      expect(p.list('')).toEqual([]);
    });
  });

  it('writes a batch too big for one statement with the same rows, folders and counts as op by op', async () => {
    const stub = env.MOUNTS.get(env.MOUNTS.newUniqueId());
    await runInDurableObject(stub, async (_obj, state) => {
      // The same batches applied whole here, and op by op (one statement each) in another object.
      const { p: big, statements } = countingPhysical(state.storage);
      const other = env.MOUNTS.get(env.MOUNTS.newUniqueId());
      // Pseudo-random ops over a few nested folders: new keys, overwrites, deletions of present
      // and absent keys, and one key written then deleted (or the reverse) within a batch.
      let seed = 7;
      const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2147483648), seed % n);
      const keyOf = () => ['a/', 'a/b/', 'a/b/c/', 'd/', ''][next(5)] + `k${next(40)}`;
      const batches = Array.from({ length: 12 }, () => Array.from({ length: 30 + next(120) }, () => ({ key: keyOf(), value: next(3) === 0 ? null : utf8(`v${next(9)}`) })));
      const snapshot = (sql: SqlStorage) => ({
        rows: sql.exec('SELECT key, parent, value FROM coffer_kv ORDER BY key').toArray().map((r) => [r.key, r.parent, fromUtf8(new Uint8Array(r.value as ArrayBuffer))]),
        dirs: sql.exec('SELECT path, parent, count FROM coffer_dirs ORDER BY path').toArray().map((r) => [r.path, r.parent, r.count]),
      });
      const perBatch: ReturnType<typeof snapshot>[] = [];
      for (const batch of batches) {
        statements.n = 0;
        big.apply(batch);
        // One statement per 25 ops (in one transaction), not one per op.
        expect(statements.n).toBeLessThan(batch.length / 4);
        perBatch.push(snapshot(state.storage.sql));
      }
      const folders = ['', 'a/', 'a/b/', 'a/b/c/', 'd/'];
      const seen = (q: SqlPhysical) => folders.map((dir) => [q.list(dir), dir === '' ? null : q.count(dir)]);
      const bigSeen = seen(big);
      await runInDurableObject(other, async (_o, st) => {
        const one = new SqlPhysical(st.storage);
        batches.forEach((batch, i) => {
          for (const op of batch) one.apply([op]);
          expect(snapshot(st.storage.sql)).toEqual(perBatch[i]);
        });
        expect(seen(one)).toEqual(bigSeen);
      });
      // Emptied by a big batch: no folder row is left behind.
      const all = snapshot(state.storage.sql).rows.map(([key]) => ({ key: key as string, value: null }));
      big.apply([...all, ...all.slice(0, 30)]);
      expect(snapshot(state.storage.sql)).toEqual({ rows: [], dirs: [] });
    });
  });

  it('lists a folder without scanning the rest of a large table', async () => {
    const stub = env.MOUNTS.get(env.MOUNTS.newUniqueId());
    await runInDurableObject(stub, async (_obj, state) => {
      const p = new SqlPhysical(state.storage);
      const ops = Array.from({ length: 5000 }, (_, i) => ({ key: `bulk/${i}`, value: utf8('v') }));
      p.apply(ops);
      p.apply([{ key: 'small/one', value: utf8('v') }]);
      const cursor = state.storage.sql.exec('SELECT key FROM coffer_kv WHERE parent = ?', 'small/');
      cursor.toArray();
      expect(cursor.rowsRead).toBeLessThan(5);
      expect(p.list('small/')).toEqual(['one']);
    });
  });

  it('scans a page of a large table reading only about that page', async () => {
    const stub = env.MOUNTS.get(env.MOUNTS.newUniqueId());
    await runInDurableObject(stub, async (_obj, state) => {
      // The real storage, with the cursor of each query kept to count the rows it read.
      let last: SqlStorageCursor<Record<string, SqlStorageValue>> | null = null;
      const sql = { exec: (query: string, ...binds: unknown[]) => (last = state.storage.sql.exec(query, ...binds)) };
      const watched = { sql, transactionSync: <T>(fn: () => T) => state.storage.transactionSync(fn) } as unknown as DurableObjectStorage;
      const p = new SqlPhysical(watched);
      p.apply(Array.from({ length: 5000 }, (_, i) => ({ key: `bulk/${String(i).padStart(5, '0')}`, value: utf8('v') })));
      const rowsRead = (run: () => string[]) => {
        const out = run();
        return { out, rows: last!.rowsRead };
      };
      const afterKey = rowsRead(() => p.scan('bulk/', 'bulk/02500', 3));
      expect(afterKey.out).toEqual(['bulk/02501', 'bulk/02502', 'bulk/02503']);
      expect(afterKey.rows).toBeLessThan(10);
      const fromStart = rowsRead(() => p.scan('bulk/', '', 2));
      expect(fromStart.out).toEqual(['bulk/00000', 'bulk/00001']);
      expect(fromStart.rows).toBeLessThan(10);
      expect(rowsRead(() => p.scan('bulk/', 'a', 1)).out).toEqual(['bulk/00000']);
      const whole = rowsRead(() => p.scan('', 'bulk/04998', 5));
      expect(whole.out).toEqual(['bulk/04999']);
      expect(whole.rows).toBeLessThan(10);
    });
  });
});
