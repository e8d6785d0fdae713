// PathDef.prefetch: the host's side (templates checked against the path's fields, filled from a
// request's fields, read in its transaction and sent with the call) and the plugin's side (the
// call's storage answers those keys without a call back until it writes them). Through the
// Worker Loader: test/integration/plugins/runtime.test.ts.
import { describe, expect, it } from 'vitest';
import { withPrefetched } from '../../../../plugins/sdk/prefetched';
import type { PluginEntrypoint, PluginRequest, PluginStorage } from '../../../../src/core/plugins/contract';
import { compilePrefetch, prefetchProblem, readAhead } from '../../../../src/core/plugins/prefetch';
import { pluginBackend } from '../../../../src/core/plugins/proxy';
import { fromUtf8, utf8 } from '../../../../src/crypto/encoding';
import { SharedDeadlines } from '../../../../src/framework/deadline';
import type { AuthContext } from '../../../../src/framework/backend';
import { FieldData, type FieldSchemas } from '../../../../src/framework/fields';
import { MemoryStorage, StorageTransaction, type Storage } from '../../../../src/framework/storage';
import { dispatch, type Authorizer, type MountContext } from '../../../../src/pipeline/dispatch';

const FIELDS: FieldSchemas = {
  name: { type: 'string', description: 'a name' },
  other: { type: 'string', description: 'another' },
  count: { type: 'int', description: 'a number' },
};

describe('prefetch templates, checked', () => {
  it('accepts templates over the string fields of operations the path serves', () => {
    expect(prefetchProblem({ read: ['key/{name}', 'used/{name}/{other}', 'config'] }, ['read', 'update'], FIELDS)).toBeNull();
  });

  it.each([
    [{ delete: ['key/{name}'] }, 'prefetches for delete, which the path does not serve'],
    [{ read: ['key/{missing}'] }, 'names "missing", which is not a string field of the path'],
    [{ read: ['key/{count}'] }, 'names "count", which is not a string field of the path'],
    [{ read: ['key/{name'] }, 'has an unmatched brace'],
    [{ read: ['key/}{name}'] }, 'has an unmatched brace'],
    [{ read: [''] }, 'holds "", not a key template'],
    [{ read: 'key/{name}' }, 'prefetch of read is not a list of key templates'],
  ])('refuses %j', (prefetch, message) => {
    expect(prefetchProblem(prefetch as never, ['read', 'update'], FIELDS)).toContain(message);
  });

  it('refuses a placeholder when the path declares no fields', () => {
    expect(prefetchProblem({ read: ['key/{name}'] }, ['read'], undefined)).toContain('not a string field');
  });
});

describe('prefetch keys, filled', () => {
  const fields = (data: Record<string, unknown>) => {
    const f = new FieldData(FIELDS, data);
    f.validate();
    return f;
  };

  it('fills every placeholder from the fields, once per key', () => {
    const keys = compilePrefetch(['key/{name}', 'pair/{name}/{other}', 'key/{name}', 'config']);
    expect(keys(fields({ name: 'web', other: 'x' }))).toEqual(['key/web', 'pair/web/x', 'config']);
  });

  it('gives no key for a template whose field is empty', () => {
    expect(compilePrefetch(['key/{name}', 'pair/{name}/{other}'])(fields({ name: 'web' }))).toEqual(['key/web']);
  });
});

describe('reading ahead', () => {
  it('reads present and absent keys, and leaves out a key the storage refuses', async () => {
    const memory = new MemoryStorage();
    await memory.put('key/web', utf8('v'));
    const refusing: Storage = {
      ...memory,
      get: (key) => (key.includes('//') ? Promise.reject(new Error('invalid storage key')) : memory.get(key)),
      put: (k, v) => memory.put(k, v),
      delete: (k) => memory.delete(k),
      list: (p) => memory.list(p),
      scan: (p, a, l) => memory.scan(p, a, l),
    };
    const read = await readAhead(refusing, ['key/web', 'key/none', 'key//bad']);
    expect(read.map(([k, v]) => [k, v && fromUtf8(v)])).toEqual([
      ['key/web', 'v'],
      ['key/none', null],
    ]);
  });

  it("sees the request's own writes: it reads in the request's transaction", async () => {
    const tx = new StorageTransaction(new MemoryStorage());
    await tx.put('key/web', utf8('pending'));
    expect((await readAhead(tx, ['key/web']))[0]![1]).toEqual(utf8('pending'));
  });
});

/** A capability that counts the calls it gets, over MemoryStorage. */
function countingCap(memory = new MemoryStorage()): { cap: PluginStorage; calls: string[] } {
  const calls: string[] = [];
  const cap: PluginStorage = {
    get: (k) => (calls.push(`get ${k}`), memory.get(k)),
    put: (k, v) => (calls.push(`put ${k}`), memory.put(k, v)),
    delete: (k) => (calls.push(`delete ${k}`), memory.delete(k)),
    list: (p) => (calls.push(`list ${p}`), memory.list(p)),
    scan: (p, a, l) => (calls.push(`scan ${p}`), memory.scan(p, a, l)),
    log: (level, m) => void calls.push(`log ${level} ${m}`),
  };
  return { cap, calls };
}

describe("the plugin's storage with prefetched keys", () => {
  it('answers them without a call back, as copies', async () => {
    const { cap, calls } = countingCap();
    const storage = withPrefetched(cap, [
      ['key/web', utf8('v1')],
      ['key/none', null],
    ]);
    const first = (await storage.get('key/web'))!;
    first[0] = 0;
    expect(fromUtf8((await storage.get('key/web'))!)).toBe('v1');
    expect(await storage.get('key/none')).toBeNull();
    expect(calls).toEqual([]);
  });

  it('sends every other read, and every write, to the host; a written key is read from the host after', async () => {
    const memory = new MemoryStorage();
    const { cap, calls } = countingCap(memory);
    const storage = withPrefetched(cap, [
      ['key/web', utf8('v1')],
      ['key/gone', utf8('g')],
    ]);
    await storage.put('key/web', utf8('v2'));
    expect(fromUtf8((await storage.get('key/web'))!)).toBe('v2');
    await storage.delete('key/gone');
    expect(await storage.get('key/gone')).toBeNull();
    await storage.get('key/other');
    await storage.list('key/');
    await storage.scan('key/', '', 10);
    storage.log('info', 'hello');
    expect(calls).toEqual(['put key/web', 'get key/web', 'delete key/gone', 'get key/gone', 'get key/other', 'list key/', 'scan key/', 'log info hello']);
  });

  it('is the capability itself when nothing was prefetched', () => {
    const { cap } = countingCap();
    expect(withPrefetched(cap, undefined)).toBe(cap);
    expect(withPrefetched(cap, [])).toBe(cap);
  });
});

describe('the host sends the operation’s keys with the call', () => {
  const root: AuthContext = { accessor: 'a', policies: ['root'], root: true, displayName: 'root', entityId: '', tokenType: 'service', boundCidrs: [] };
  const allowAll: Authorizer = { authorize: () => ({ sudo: true }), grantsCreateAndUpdate: () => false };
  const mount: MountContext = { mountPoint: 'p/', mountType: 'p', mountAccessor: 'p_1', mountConfig: { defaultLeaseTTL: 3600, maxLeaseTTL: 86400 }, mountOptions: {} };

  function host() {
    const seen: PluginRequest[] = [];
    const plugin = {
      handle: async (_i: number, request: PluginRequest) => (seen.push(request), { ok: true, value: { response: null, wakeAt: null } }),
    } as unknown as PluginEntrypoint;
    const backend = pluginBackend(
      'p',
      {
        contract: 1,
        type: 'p',
        secretTypes: {},
        periodic: false,
        renewLogin: false,
        paths: [
          {
            pattern: 'item/(?<name>\\w+)',
            fields: { name: { type: 'string', description: 'n' }, value: { type: 'string', description: 'v' } },
            operations: ['read', 'update', 'delete'],
            existenceCheck: false,
            createIsUpdate: true,
            prefetch: { read: ['item/{name}', 'meta/{name}'], update: ['item/{name}'] },
          },
        ],
      },
      plugin,
      { label: 'plugin "p"', deadlines: new SharedDeadlines(1000), storage: (s) => ({ value: s as PluginStorage, revoke: () => undefined }) },
    );
    const memory = new MemoryStorage();
    const call = (operation: 'read' | 'write' | 'delete', path: string, data = {}) =>
      dispatch(backend, { id: 'r', operation, path: `p/${path}`, data, auth: root, clientIP: '10.0.0.5', headers: {}, wrapTTL: 0 }, mount, new StorageTransaction(memory), allowAll, {});
    return { seen, memory, call };
  }

  it('per operation: a read, a write (no existence check: an update) and an operation without templates', async () => {
    const { seen, memory, call } = host();
    await memory.put('item/web', utf8('stored'));
    await call('read', 'item/web');
    await call('write', 'item/new', { value: 'x' });
    await call('delete', 'item/web');
    expect(seen.map((r) => [r.operation, r.prefetched?.map(([k, v]) => [k, v && fromUtf8(v)])])).toEqual([
      ['read', [['item/web', 'stored'], ['meta/web', null]]],
      ['update', [['item/new', null]]],
      ['delete', undefined],
    ]);
  });

  it('refuses a description with a bad template, naming the path', () => {
    const plugin = {} as PluginEntrypoint;
    expect(() =>
      pluginBackend(
        'p',
        { contract: 1, type: 'p', secretTypes: {}, periodic: false, renewLogin: false, paths: [{ pattern: 'x/(?<n>\\w+)', operations: ['read'], existenceCheck: false, prefetch: { read: ['x/{m}'] } }] },
        plugin,
        { label: 'plugin "p"', deadlines: new SharedDeadlines(1000), storage: (s) => ({ value: s as PluginStorage, revoke: () => undefined }) },
      ),
    ).toThrow('plugin "p": path "x/(?<n>\\\\w+)" prefetch template "x/{m}" names "m", which is not a string field of the path');
  });
});
