// Group commit (src/core/barrier/grouped-writes.ts) over a real Durable Object's SQLite database: staged
// writes are readable at once, reach SQLite together, in order, before durable() settles; the
// immediate view never sees past them; a failed flush leaves nothing staged behind.
import type { RouteEntry } from '../../../../src/core/mounts/table';
import { env, runInDurableObject } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { GroupedWrites } from '../../../../src/core/barrier/grouped-writes';
import type { Physical } from '../../../../src/core/barrier/physical';
import { fromUtf8, utf8 } from '../../../../src/crypto/encoding';
import type { StorageOp } from '../../../../src/framework/storage';
import { SqlPhysical } from '../../../../durable-objects/sqlite-physical';
import { systemStub, tokenShardStub } from '../../../../src/rpc/stubs';
import type { MountObject } from '../../../../durable-objects/mount';
import type { TokenStoreObject } from '../../../../durable-objects/token-store';
import type { WireRequest } from '../../../../src/pipeline/dispatch';
import { newServiceToken, rootTokenEntry } from '../../../../src/core/tokens/entry';
import { api, caller, initCluster } from '../../../helpers/api';

/** Runs `fn` inside a fresh Durable Object with its SQLite physical layer. */
function inObject(fn: (p: SqlPhysical, sql: SqlStorage) => Promise<void>): Promise<void> {
  const stub = env.MOUNTS.get(env.MOUNTS.newUniqueId());
  return runInDurableObject(stub, async (_obj, state) => fn(new SqlPhysical(state.storage), state.storage.sql));
}

const stored = (sql: SqlStorage, key: string): string | null => {
  const rows = sql.exec<{ value: ArrayBuffer }>('SELECT value FROM coffer_kv WHERE key = ?', key).toArray();
  return rows.length === 0 ? null : fromUtf8(new Uint8Array(rows[0].value));
};

const text = (v: Uint8Array | null) => (v === null ? null : fromUtf8(v));
const put = (key: string, value: string): StorageOp => ({ key, value: utf8(value) });
const del = (key: string): StorageOp => ({ key, value: null });
const noFailure = (e: unknown) => {
  throw e;
};

/** A physical layer that records every batch it applies, and fails the ones naming `poison`. */
class Recording implements Physical {
  readonly batches: StorageOp[][] = [];
  constructor(private readonly inner: Physical) {}
  get = (key: string) => this.inner.get(key);
  list = (prefix: string) => this.inner.list(prefix);
  scan = (prefix: string, after: string, limit: number) => this.inner.scan(prefix, after, limit);
  apply(ops: StorageOp[]) {
    if (ops.some((op) => op.key === 'poison')) throw new Error('disk on fire');
    this.batches.push(ops);
    this.inner.apply(ops);
  }
}

describe('grouped writes', () => {
  it('stage writes: readable at once, in SQLite only once flushed, and durable() settles after that', () =>
    inObject(async (p, sql) => {
      const g = new GroupedWrites(p, noFailure);
      g.grouped.apply([put('a', '1')]);
      expect(text(g.grouped.get('a'))).toBe('1');
      expect(stored(sql, 'a')).toBeNull();
      expect(g.pending).toBe(true);
      await g.durable();
      expect(stored(sql, 'a')).toBe('1');
      expect(g.pending).toBe(false);
      // Nothing staged: durable() settles without waiting for a flush.
      await g.durable();
    }));

  it('writes the batches of many requests in one synchronous apply, in the order they were staged', () =>
    inObject(async (p, sql) => {
      const rec = new Recording(p);
      const g = new GroupedWrites(rec, noFailure);
      const request = async (ops: StorageOp[]) => {
        await Promise.resolve();
        g.grouped.apply(ops);
        await g.durable();
        return text(g.grouped.get('k'));
      };
      const replies = await Promise.all([request([put('k', 'one'), put('x/1', 'a')]), request([put('k', 'two')]), request([del('x/1'), put('x/2', 'b')])]);
      expect(rec.batches.map((ops) => ops.map((op) => op.key))).toEqual([['k', 'x/1', 'k', 'x/1', 'x/2']]);
      expect(replies).toEqual(['two', 'two', 'two']);
      expect(stored(sql, 'k')).toBe('two');
      expect(stored(sql, 'x/1')).toBeNull();
      expect(p.list('x/')).toEqual(['2']);
    }));

  it('later writes staged over earlier ones read back as the latest, deletions included', () =>
    inObject(async (p) => {
      p.apply([put('gone', 'old')]);
      const g = new GroupedWrites(p, noFailure);
      g.grouped.apply([put('k', '1')]);
      g.grouped.apply([put('k', '2'), del('gone')]);
      expect(text(g.grouped.get('k'))).toBe('2');
      expect(g.grouped.get('gone')).toBeNull();
      await g.durable();
      expect(text(p.get('k'))).toBe('2');
      expect(p.get('gone')).toBeNull();
    }));

  it('the immediate view writes what is staged first: its reads see it and its writes come after it', () =>
    inObject(async (p, sql) => {
      const g = new GroupedWrites(p, noFailure);
      g.grouped.apply([put('k', 'staged')]);
      g.immediate.apply([put('k', 'immediate')]);
      expect(stored(sql, 'k')).toBe('immediate');
      g.grouped.apply([put('r', 'staged')]);
      expect(text(g.immediate.get('r'))).toBe('staged');
      expect(stored(sql, 'r')).toBe('staged');
      expect(g.pending).toBe(false);
    }));

  it('lists and scans through the grouped view include staged keys (they are written first)', () =>
    inObject(async (p) => {
      const g = new GroupedWrites(p, noFailure);
      g.grouped.apply([put('f/a', '1'), put('f/b/c', '2')]);
      expect(g.grouped.list('f/')).toEqual(['a', 'b/']);
      g.grouped.apply([del('f/a')]);
      expect(g.grouped.scan('f/', '', 10)).toEqual(['f/b/c']);
    }));

  it('a flush that fails rejects every waiter, calls onFailure once and leaves no staged value readable', () =>
    inObject(async (p) => {
      const failures: unknown[] = [];
      const g = new GroupedWrites(new Recording(p), (e) => failures.push(e));
      g.grouped.apply([put('before', '1')]);
      g.grouped.apply([put('poison', 'x')]);
      g.grouped.apply([put('after', '2')]);
      const settled = await Promise.allSettled([g.durable(), g.durable()]);
      expect(settled.map((r) => (r.status === 'rejected' ? (r.reason as Error).message : 'fulfilled'))).toEqual(['disk on fire', 'disk on fire']);
      expect(failures).toHaveLength(1);
      // None of the group was written, and nothing staged is still served from memory.
      expect(g.grouped.get('before')).toBeNull();
      expect(g.grouped.get('after')).toBeNull();
      expect(g.grouped.get('poison')).toBeNull();
      expect(g.pending).toBe(false);
    }));

  it('flushes without a waiter too: a staged write is never left behind', () =>
    inObject(async (p, sql) => {
      const g = new GroupedWrites(p, noFailure);
      g.grouped.apply([put('orphan', '1')]);
      await new Promise((resolve) => setTimeout(resolve, 5));
      expect(stored(sql, 'orphan')).toBe('1');
    }));

  it('writes at once when no timer can be set (the 10,000-timer quota), and groups again once one can', () =>
    inObject(async (p, sql) => {
      const g = new GroupedWrites(p, noFailure);
      // Fill this I/O context's timers for real until workerd refuses one.
      const held: ReturnType<typeof setTimeout>[] = [];
      let refused: unknown = null;
      while (refused === null && held.length < 20_000) {
        try {
          held.push(setTimeout(() => undefined, 60_000));
        } catch (e) {
          refused = e;
        }
      }
      expect((refused as Error | null)?.name).toBe('QuotaExceededError');
      g.grouped.apply([put('no-timer', '1')]);
      expect(stored(sql, 'no-timer')).toBe('1');
      expect(g.pending).toBe(false);
      for (const t of held) clearTimeout(t);
      // Not left waiting for a timer that was never set: the next group flushes on its timer.
      g.grouped.apply([put('timer-again', '2')]);
      expect(stored(sql, 'timer-again')).toBeNull();
      const hung = new Promise((_, reject) => setTimeout(() => reject(new Error('durable() never settled')), 2_000));
      await Promise.race([g.durable(), hung]);
      expect(stored(sql, 'timer-again')).toBe('2');
    }));
});

describe('objects that group their writes', () => {
  let root = '';
  const { ok } = caller(() => root);
  beforeAll(async () => {
    root = (await initCluster()).root;
  });

  it("a mount's requests reply only once their writes are in SQLite, and writes served together are flushed together", async () => {
    await ok('POST', 'sys/mounts/grouped', { type: 'kv', options: { version: '2' } });
    const route = ((await systemStub(env).routes()) as RouteEntry[]).find((r) => r.prefix === 'grouped/')!;
    const stub = env.MOUNTS.get(env.MOUNTS.idFromName(route.uuid)) as DurableObjectStub<MountObject>;
    const wire = (key: string): WireRequest => ({ id: key, operation: 'write', path: `grouped/data/${key}`, data: { data: { v: key } }, auth: null, clientIP: '127.0.0.1', headers: {}, wrapTTL: 0 });
    await runInDurableObject(stub, async (obj, state) => {
      const rows = () => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM coffer_kv WHERE key LIKE 'logical/%'").one().n;
      const before = rows();
      // Each reply is checked the moment it arrives: its rows must be there already.
      const seen = await Promise.all(
        Array.from({ length: 20 }, async (_, i) => {
          const result = await obj.handle(route.prefix, route.revision, wire(`k${i}`), root);
          expect(result.kind).toBe('ok');
          return rows() - before;
        }),
      );
      expect(Math.min(...seen)).toBeGreaterThanOrEqual(20);
    });
    for (const i of [0, 19]) expect((await api('GET', `grouped/data/k${i}`, { token: root })).body.data.data).toEqual({ v: `k${i}` });
  });

  it("a token shard answers a login only once the token is in SQLite; logins served together are flushed together", async () => {
    const stub = tokenShardStub(env, 1) as DurableObjectStub<TokenStoreObject>;
    const { accessor: _none, ...partial } = { ...rootTokenEntry(''), policies: ['default'], path: 'auth/jwt/login', ttl: 600, expireTime: Date.now() + 600_000 };
    const tokens = Array.from({ length: 20 }, () => newServiceToken());
    await runInDurableObject(stub, async (obj, state) => {
      const rows = () => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM coffer_kv WHERE key LIKE 'tokens/%'").one().n;
      const before = rows();
      const seen = await Promise.all(
        tokens.map(async (token) => {
          const issued = await obj.issueLogin(token, partial);
          expect(issued.entry.accessor).not.toBe('');
          return rows() - before;
        }),
      );
      expect(Math.min(...seen)).toBe(20);
      // The tokens are there for everything else the shard does.
      expect((await obj.lookupToken(tokens[7]))?.path).toBe('auth/jwt/login');
    });
  });

  it('a mount object whose flush fails fails the waiting requests and resets itself', async () => {
    await ok('POST', 'sys/mounts/doomed', { type: 'kv', options: { version: '2' } });
    const route = ((await systemStub(env).routes()) as RouteEntry[]).find((r) => r.prefix === 'doomed/')!;
    const stub = env.MOUNTS.get(env.MOUNTS.idFromName(route.uuid)) as DurableObjectStub<MountObject>;
    const outcome = await runInDurableObject(stub, async (obj, state) => {
      // Watched instead of done: a real reset would also end this test's own call into the object.
      const resets: string[] = [];
      state.abort = (reason?: string) => void resets.push(reason ?? '');
      const { grouped } = obj as unknown as { grouped: GroupedWrites };
      // A row SQLite refuses (NOT NULL key) stands for a write the disk could not take.
      grouped.grouped.apply([{ key: null as unknown as string, value: utf8('x') }]);
      const waited = await grouped.durable()!.then(
        () => 'settled',
        () => 'rejected',
      );
      return { waited, resets };
    });
    expect(outcome.waited).toBe('rejected');
    expect(outcome.resets).toEqual([expect.stringMatching(/^storage write failed: /)]);
    expect((await api('POST', 'doomed/data/after', { token: root, body: { data: { ok: true } } })).status).toBe(200);
  });
});
