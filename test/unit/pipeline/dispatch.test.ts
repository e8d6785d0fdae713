import { describe, expect, it } from 'vitest';
import { dispatch, type AuthorizationRequest, type Authorizer, type MountContext, type WireRequest } from '../../../src/pipeline/dispatch';
import { permissionDenied } from '../../../src/framework/errors';
import { utf8 } from '../../../src/crypto/encoding';
import type { AuthContext, Backend } from '../../../src/framework/backend';
import { badRequest, CofferError } from '../../../src/framework/errors';
import { MemoryStorage, StorageTransaction } from '../../../src/framework/storage';

const root: AuthContext = { accessor: 'a', policies: ['root'], root: true, displayName: 'root', entityId: '', tokenType: 'service', boundCidrs: [] };
const mount: MountContext = {
  mountPoint: 'toy/',
  mountType: 'toy',
  mountAccessor: 'toy_1',
  mountConfig: { defaultLeaseTTL: 60, maxLeaseTTL: 120 },
  mountOptions: {},
};

/** Root passes everything; anyone else nothing. */
const rootOnlyAuthorizer: Authorizer = {
  authorize: ({ auth }) => {
    if (!auth?.root) throw permissionDenied();
    return { sudo: true };
  },
  grantsCreateAndUpdate: ({ auth }) => auth?.root === true,
};

const calls: string[] = [];
const backend: Backend = {
  type: 'toy',
  unauthenticatedPaths: ['public'],
  sudoPaths: ['admin/*'],
  paths: [
    {
      pattern: 'items/(?<name>\\w+)',
      fields: { name: { type: 'string', description: 'n' }, count: { type: 'int', description: 'c' } },
      existenceCheck: async (req, f) => (await req.storage.get(`items/${f.get('name')}`)) !== null,
      operations: {
        create: async (req, f) => {
          calls.push(`create ${f.get('name')} ${f.get('count')}`);
          await req.storage.put(`items/${f.get('name')}`, utf8(String(f.get('count'))));
          return null;
        },
        update: async (req, f) => {
          calls.push(`update ${f.get('name')}`);
          await req.storage.put(`items/${f.get('name')}`, utf8('updated'));
          return { data: { ok: true } };
        },
        read: async (_req, f) => ({ data: { name: f.get('name') } }),
      },
    },
    {
      pattern: 'fails',
      operations: {
        update: async (req) => {
          await req.storage.put('partial', utf8('x'));
          throw badRequest('handler failed after writing');
        },
      },
    },
    { pattern: 'only-update', operations: { update: async () => ({ data: { via: 'update' } }) }, existenceCheck: async () => false },
    { pattern: 'public', operations: { read: async () => ({ data: { public: true } }) } },
    { pattern: 'admin/(?<x>.+)', fields: { x: { type: 'string', description: '' } }, operations: { read: async () => ({ data: {} }) } },
  ],
};

function wire(operation: WireRequest['operation'], path: string, data: Record<string, unknown> = {}, auth: AuthContext | null = root): WireRequest {
  return { id: 'r', operation, path: `toy/${path}`, data, auth, clientIP: '127.0.0.1', headers: {}, wrapTTL: 0 };
}

async function run(w: WireRequest, base = new MemoryStorage(), seen: AuthorizationRequest[] = []) {
  const response = await dispatch(backend, w, mount, new StorageTransaction(base), {
    authorize: (req) => {
      seen.push(req);
      return rootOnlyAuthorizer.authorize(req);
    },
    // Exercise the existence checks: pretend the caller may not do both.
    grantsCreateAndUpdate: () => false,
  });
  return { response, base, seen };
}

describe('logical dispatch', () => {
  it('resolves a write to create when the existence check fails, update otherwise', async () => {
    const seen: AuthorizationRequest[] = [];
    const base = new MemoryStorage();
    await run(wire('write', 'items/a', { count: '3' }), base, seen);
    await run(wire('write', 'items/a', {}), base, seen);
    expect(seen.map((s) => s.capability)).toEqual(['create', 'update']);
    expect(calls.slice(-2)).toEqual(['create a 3', 'update a']);
  });

  it('skips the existence check when one handler serves both and the caller may do both', async () => {
    let checked = 0;
    const same: Backend = {
      type: 'same',
      paths: [
        {
          pattern: 'k',
          existenceCheck: async () => {
            checked++;
            return false;
          },
          operations: { update: async () => ({ data: { done: true } }) },
        },
      ],
    };
    const tx = () => new StorageTransaction(new MemoryStorage());
    const w = { ...wire('write', 'k'), path: 'same/k' };
    const m = { ...mount, mountPoint: 'same/' };
    await dispatch(same, w, m, tx(), rootOnlyAuthorizer);
    expect(checked).toBe(0);
    await dispatch(same, w, m, tx(), { ...rootOnlyAuthorizer, grantsCreateAndUpdate: () => false });
    expect(checked).toBe(1);
  });

  it('uses the update handler for a create when a path has no create handler', async () => {
    const { response, seen } = await run(wire('write', 'only-update'));
    expect(seen[0].capability).toBe('create');
    expect(response.data).toEqual({ via: 'update' });
  });

  it('answers unknown paths with 404 and unsupported operations with 405', async () => {
    await expect(run(wire('read', 'nowhere'))).rejects.toMatchObject({ status: 404, errors: ['1 error occurred:\n\t* unsupported path\n\n'] });
    await expect(run(wire('delete', 'items/a'))).rejects.toMatchObject({ status: 405, errors: ['1 error occurred:\n\t* unsupported operation\n\n'] });
  });

  it('checks authorisation before reporting field errors', async () => {
    await expect(run(wire('write', 'items/a', { count: 'many' }, null))).rejects.toMatchObject({ status: 403 });
    await expect(run(wire('write', 'items/a', { count: 'many' }))).rejects.toMatchObject({
      status: 400,
      errors: ['error converting input "many" for field "count": cannot parse "many" as an integer'],
    });
  });

  it("with an outcome the Worker ran first: takes it unvalidated, validates before running the handler itself", async () => {
    const counted: Backend = {
      type: 'counted',
      paths: [{ pattern: 'n', fields: { count: { type: 'int', description: 'c' } }, operations: { update: async (_req, f) => ({ data: { count: f.get('count') } }) } }],
    };
    const w = (count: unknown) => ({ ...wire('write', 'n', { count }), path: 'counted/n' });
    const m = { ...mount, mountPoint: 'counted/' };
    const tx = () => new StorageTransaction(new MemoryStorage());
    const taken = () => () => ({ answered: true as const });
    // Taken: the Worker validated the same fields; its outcome stands.
    expect(await dispatch(counted, w('many'), m, tx(), rootOnlyAuthorizer, { answer: taken })).toEqual({ answered: true });
    // Not taken: the object validates, and a bad field is refused as without the hook.
    await expect(dispatch(counted, w('many'), m, tx(), rootOnlyAuthorizer, { answer: () => null })).rejects.toMatchObject({ status: 400 });
    expect(await dispatch(counted, w('7'), m, tx(), rootOnlyAuthorizer, { answer: () => null })).toEqual({ data: { count: 7 } });
    // Authorisation still comes first.
    await expect(dispatch(counted, w('many'), m, tx(), { ...rootOnlyAuthorizer, authorize: () => { throw permissionDenied(); } }, { answer: taken })).rejects.toMatchObject({ status: 403 });
  });

  it('skips authorisation on unauthenticated paths and flags sudo paths', async () => {
    const { response } = await run(wire('read', 'public', {}, null));
    expect(response.data).toEqual({ public: true });
    const { seen } = await run(wire('read', 'admin/thing'));
    expect(seen[0]).toMatchObject({ sudo: true, path: 'toy/admin/thing', capability: 'read' });
  });

  it('warns about unrecognised parameters', async () => {
    const { response } = await run(wire('write', 'items/b', { count: 1, bogus: 1, other: 2 }));
    expect(response.warnings).toEqual(['Endpoint ignored these unrecognized parameters: [bogus other]']);
  });

  it('commits writes only when the handler succeeds', async () => {
    const base = new MemoryStorage();
    const err = await run(wire('write', 'fails'), base).catch((e) => e);
    expect(err).toBeInstanceOf(CofferError);
    expect(base.data.size).toBe(0);
    await run(wire('write', 'items/c', { count: 1 }), base);
    expect([...base.data.keys()]).toEqual(['items/c']);
  });
});
