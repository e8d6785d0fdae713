// IdentityCache (entity views fetched from the identity object, bounded in age, cleared on
// notice) and AclCache using it: identity policies and templates in the ACL, disabled or deleted
// entities refused, compiled ACLs keyed by entity and rebuilt when the view changes.
import { describe, expect, it } from 'vitest';
import { AclCache } from '../../../../src/core/acl/cache';
import { IdentityCache, type IdentityView } from '../../../../src/core/identity/cache';
import type { AuthContext } from '../../../../src/framework/backend';
import { CofferError } from '../../../../src/framework/errors';

const view = (over: Partial<IdentityView> = {}): IdentityView => ({
  policies: [],
  disabled: false,
  context: { entity: { id: 'e1', name: 'ent', metadata: {}, aliases: [] }, groups: [] },
  sentinel: {
    entity: { id: 'e1', name: 'ent', metadata: {}, policies: [], disabled: false, creation_time: '', last_update_time: '', merged_entity_ids: [], aliases: [] },
    groups: [],
  },
  ...over,
});

function fakeIdentity(initial: Record<string, IdentityView | null>) {
  const views = { ...initial };
  const calls: string[][] = [];
  return {
    views,
    calls,
    fetch: async (ids: string[]) => {
      calls.push(ids);
      return Object.fromEntries(ids.map((id) => [id, views[id] ?? null]));
    },
  };
}

const POLICIES: Record<string, string> = {
  tokenpol: 'path "token/*" { capabilities = ["read"] }',
  entitypol: 'path "entity/*" { capabilities = ["read"] }',
  grouppol: 'path "group/*" { capabilities = ["update"] }',
  templated: 'path "home/{{identity.entity.name}}/*" { capabilities = ["read"] }\npath "teams/{{identity.groups.ids.g1.name}}" { capabilities = ["read"] }',
  root: '',
};
const policyFetch = async (names: string[]) => Object.fromEntries(names.map((n) => [n, POLICIES[n] ?? null]));

const auth = (entityId: string, policies = ['tokenpol']): AuthContext =>
  ({ accessor: 'acc', policies, root: policies.includes('root'), displayName: 't', entityId, tokenType: 'service', boundCidrs: [] }) as AuthContext;

const read = (path: string) => ({ operation: 'read' as const, path, data: {}, wrapTTL: 0 });

async function status(p: Promise<unknown>): Promise<number> {
  try {
    await p;
    return 200;
  } catch (e) {
    return e instanceof CofferError ? e.status : 500;
  }
}

describe('IdentityCache', () => {
  it('fetches once, shares concurrent fetches, and re-fetches after a minute', async () => {
    const idt = fakeIdentity({ e1: view() });
    const cache = new IdentityCache(idt.fetch);
    const [a, b] = await Promise.all([cache.viewOf('e1', 1000), cache.viewOf('e1', 1000)]);
    expect(a).toBe(b);
    expect(idt.calls).toEqual([['e1']]);
    await cache.viewOf('e1', 1000 + 59_000);
    expect(idt.calls).toHaveLength(1);
    await cache.viewOf('e1', 1000 + 60_000);
    expect(idt.calls).toHaveLength(2);
  });

  it('remembers that an entity does not exist, until cleared', async () => {
    const idt = fakeIdentity({});
    const cache = new IdentityCache(idt.fetch);
    expect(await cache.viewOf('ghost')).toBeNull();
    expect(await cache.viewOf('ghost')).toBeNull();
    expect(idt.calls).toHaveLength(1);
    cache.clear();
    idt.views.ghost = view();
    expect(await cache.viewOf('ghost')).not.toBeNull();
  });

  it('does not keep a view fetched across a clear (it may predate the change)', async () => {
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    let version = 1;
    const cache = new IdentityCache(async (ids) => {
      const v = version;
      await gate;
      return Object.fromEntries(ids.map((id) => [id, view({ policies: [`v${v}`] })]));
    });
    const stale = cache.viewOf('e1');
    version = 2;
    cache.clear();
    release();
    expect((await stale)?.policies).toEqual(['v1']);
    expect((await cache.viewOf('e1'))?.policies).toEqual(['v2']);
  });

  it('answers 503 while sealed', async () => {
    const cache = new IdentityCache(async () => null);
    expect(await status(cache.viewOf('e1'))).toBe(503);
  });
});

describe('AclCache with identity', () => {
  it('adds the entity\'s identity policies to the token\'s', async () => {
    const idt = fakeIdentity({ e1: view({ policies: ['entitypol', 'grouppol'] }) });
    const acls = new AclCache(policyFetch, { identity: new IdentityCache(idt.fetch) });
    const acl = await acls.aclFor(auth('e1'));
    expect(acl.check(read('token/x')).allowed).toBe(true);
    expect(acl.check(read('entity/x')).allowed).toBe(true);
    expect(acl.check({ ...read('group/x'), operation: 'update' }).allowed).toBe(true);
    // A token without an entity gets only its own.
    const plain = await acls.aclFor(auth(''));
    expect(plain.check(read('entity/x')).allowed).toBe(false);
  });

  it('resolves templated paths against the entity', async () => {
    const idt = fakeIdentity({
      e1: view({ policies: ['templated'], context: { entity: { id: 'e1', name: 'alice', metadata: {}, aliases: [] }, groups: [{ id: 'g1', name: 'blue' }] } }),
    });
    const acls = new AclCache(policyFetch, { identity: new IdentityCache(idt.fetch) });
    const acl = await acls.aclFor(auth('e1'));
    expect(acl.check(read('home/alice/notes')).allowed).toBe(true);
    expect(acl.check(read('home/bob/notes')).allowed).toBe(false);
    expect(acl.check(read('teams/blue')).allowed).toBe(true);
  });

  it('never lets identity policies carry root', async () => {
    const idt = fakeIdentity({ e1: view({ policies: ['root', 'entitypol'] }) });
    const acls = new AclCache(policyFetch, { identity: new IdentityCache(idt.fetch) });
    const acl = await acls.aclFor(auth('e1'));
    expect(acl.root).toBe(false);
    expect(acl.check(read('sys/mounts')).allowed).toBe(false);
  });

  it('refuses tokens whose entity is disabled or gone (403)', async () => {
    const idt = fakeIdentity({ off: view({ disabled: true }) });
    const acls = new AclCache(policyFetch, { identity: new IdentityCache(idt.fetch) });
    expect(await status(acls.aclFor(auth('off')))).toBe(403);
    expect(await status(acls.aclFor(auth('deleted')))).toBe(403);
    // Root tokens with a disabled entity are refused too, as in Vault.
    expect(await status(acls.aclFor(auth('off', ['root'])))).toBe(403);
  });

  it('keys compiled ACLs by entity, and clear() drops the views too', async () => {
    const idt = fakeIdentity({ e1: view({ policies: ['entitypol'] }), e2: view() });
    const acls = new AclCache(policyFetch, { identity: new IdentityCache(idt.fetch) });
    expect((await acls.aclFor(auth('e1'))).check(read('entity/x')).allowed).toBe(true);
    expect((await acls.aclFor(auth('e2'))).check(read('entity/x')).allowed).toBe(false);
    idt.views.e1 = view({ policies: [] });
    // Still cached until told otherwise...
    expect((await acls.aclFor(auth('e1'))).check(read('entity/x')).allowed).toBe(true);
    acls.clear();
    expect((await acls.aclFor(auth('e1'))).check(read('entity/x')).allowed).toBe(false);
  });

  it('rebuilds an ACL when the entity view it was compiled from was refreshed', async () => {
    const idt = fakeIdentity({ e1: view({ policies: ['entitypol'] }) });
    const identity = new IdentityCache(idt.fetch);
    const acls = new AclCache(policyFetch, { identity });
    expect((await acls.aclFor(auth('e1'), 0)).check(read('entity/x')).allowed).toBe(true);
    idt.views.e1 = view({ policies: [] });
    identity.clear();
    expect((await acls.aclFor(auth('e1'), 1)).check(read('entity/x')).allowed).toBe(false);
  });
});
