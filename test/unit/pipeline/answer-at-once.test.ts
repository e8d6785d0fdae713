// A read served from memory answers at once: dispatch returns the response itself, not a promise,
// when the handler, the host's hook and the commit have nothing to wait for (src/framework/steps.ts).
// Whatever would need a wait still gets one, with the same answer.
import { describe, expect, it } from 'vitest';
import { dispatchSteps, type Authorizer, type MountContext, type WireRequest } from '../../../src/pipeline/dispatch';
import type { AuthContext, Backend, LogicalResponse } from '../../../src/framework/backend';
import { drive } from '../../../src/framework/steps';
import { MemoryStorage, StorageTransaction, type BatchStorage } from '../../../src/framework/storage';
import { utf8 } from '../../../src/crypto/encoding';
import { kvBackend } from '../../../src/engines/kv';
import { CofferError } from '../../../src/framework/errors';

const root: AuthContext = { accessor: 'a', policies: ['root'], root: true, displayName: 'root', entityId: '', tokenType: 'service', boundCidrs: [] };
const allowAll: Authorizer = { authorize: () => ({ sudo: true }), grantsCreateAndUpdate: () => true };
const mountOf = (version: string): MountContext => ({
  mountPoint: 'kv/',
  mountType: 'kv',
  mountAccessor: 'kv_1',
  mountConfig: { defaultLeaseTTL: 60, maxLeaseTTL: 120 },
  mountOptions: { version },
});
const wire = (operation: WireRequest['operation'], path: string, data: Record<string, unknown> = {}): WireRequest => ({ id: 'r', operation, path: `kv/${path}`, data, auth: root, clientIP: '127.0.0.1', headers: {}, wrapTTL: 0 });

/** The same storage, seen as one that can never answer without waiting. */
function blind(base: MemoryStorage): BatchStorage {
  return { get: (k) => base.get(k), put: (k, v) => base.put(k, v), delete: (k) => base.delete(k), list: (p) => base.list(p), scan: (p, a, l) => base.scan(p, a, l), applyBatch: (ops) => base.applyBatch(ops) };
}

function serve(backend: Backend, version: string, base: BatchStorage, w: WireRequest, beforeCommit?: () => Promise<void> | undefined) {
  return drive(dispatchSteps(backend, w, mountOf(version), new StorageTransaction(base), allowAll, beforeCommit ? { beforeCommit } : {}));
}

async function write(backend: Backend, version: string, base: MemoryStorage, path: string, data: Record<string, unknown>): Promise<void> {
  await serve(backend, version, base, wire('write', path, data));
}

describe('reads answered at once', () => {
  it('KV v1: a stored secret, and a missing one (404), without a promise; the same through storage that must wait', async () => {
    const backend = kvBackend({ version: '1' });
    const base = new MemoryStorage();
    await write(backend, '1', base, 'app/db', { password: 'hunter2', ttl: '90s' });
    const now = serve(backend, '1', base, wire('read', 'app/db')) as LogicalResponse;
    expect(now).not.toBeInstanceOf(Promise);
    expect(now).toEqual({ data: { password: 'hunter2', ttl: '90s' }, lease: { ttl: 90, renewable: false } });
    expect(() => serve(backend, '1', base, wire('read', 'app/none'))).toThrow(CofferError);
    const later = serve(backend, '1', blind(base), wire('read', 'app/db'));
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toEqual(now);
    await expect(serve(backend, '1', blind(base), wire('read', 'app/none'))).rejects.toMatchObject({ status: 404 });
  });

  it('KV v2: the current version and an older one, inline or in a row of their own, without a promise', async () => {
    const backend = kvBackend({ version: '2' });
    const base = new MemoryStorage();
    await write(backend, '2', base, 'data/app', { data: { v: 1 } });
    // Too large to keep inline in the metadata record: stored as a row of its own.
    await write(backend, '2', base, 'data/app', { data: { v: 2, pad: 'x'.repeat(8192) } });
    const current = serve(backend, '2', base, wire('read', 'data/app')) as LogicalResponse;
    expect(current).not.toBeInstanceOf(Promise);
    expect((current.data as { data: { v: number } }).data.v).toBe(2);
    const first = serve(backend, '2', base, wire('read', 'data/app', { version: '1' })) as LogicalResponse;
    expect((first.data as { data: { v: number } }).data).toEqual({ v: 1 });
    const later = serve(backend, '2', blind(base), wire('read', 'data/app'));
    expect(later).toBeInstanceOf(Promise);
    expect(await later).toEqual(current);
  });

  it('lists answer at once too (KV v1, KV v2 metadata); a v2 list that must read further waits', async () => {
    const v1 = kvBackend({ version: '1' });
    const base1 = new MemoryStorage();
    await write(v1, '1', base1, 'app/db', { a: 1 });
    await write(v1, '1', base1, 'app/sub/x', { a: 1 });
    expect(serve(v1, '1', base1, wire('list', 'app/'))).toEqual({ data: { keys: ['db', 'sub/'] } });
    expect(() => serve(v1, '1', base1, wire('list', 'none/'))).toThrow(CofferError);
    expect(await serve(v1, '1', blind(base1), wire('list', 'app/'))).toEqual({ data: { keys: ['db', 'sub/'] } });
    const v2 = kvBackend({ version: '2' });
    const base2 = new MemoryStorage();
    for (const name of ['b', 'a', 'c']) await write(v2, '2', base2, `data/app/${name}`, { data: { v: 1 } });
    expect(serve(v2, '2', base2, wire('list', 'metadata/app/'))).toEqual({ data: { keys: ['a', 'b', 'c'] } });
    expect(serve(v2, '2', base2, wire('list', 'metadata/app/', { after: 'a', limit: '1' }))).toEqual({ data: { keys: ['b'] } });
    const filtered = serve(v2, '2', base2, wire('list', 'metadata/app/', { exclude_deleted: 'true' }));
    expect(filtered).toBeInstanceOf(Promise);
    expect(await filtered).toEqual({ data: { keys: ['a', 'b', 'c'] } });
  });

  it("waits for the host's hook when it has something to do, and for the commit of what a request wrote", async () => {
    const backend = kvBackend({ version: '1' });
    const base = new MemoryStorage();
    await base.put('app/db', utf8('{"a":1}'));
    let hooked = false;
    const waited = serve(backend, '1', base, wire('read', 'app/db'), () => Promise.resolve().then(() => void (hooked = true)));
    expect(waited).toBeInstanceOf(Promise);
    expect(await waited).toMatchObject({ data: { a: 1 } });
    expect(hooked).toBe(true);
    const written = serve(backend, '1', base, wire('write', 'app/other', { b: 2 }));
    expect(written).toBeInstanceOf(Promise);
    await written;
    expect(await base.get('app/other')).not.toBeNull();
  });
});
