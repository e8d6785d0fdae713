// The login-time API for auth methods: find or create the entity behind an alias, keep the
// alias's metadata current, and make the entity's external groups for the mount exactly those
// named by the method (through existing group aliases only).
import { describe, expect, it } from 'vitest';
import { upsertEntity } from '../../../../src/engines/identity/entities';
import { writeGroupAlias } from '../../../../src/engines/identity/group-aliases';
import { upsertGroup } from '../../../../src/engines/identity/groups';
import { loginEntity } from '../../../../src/engines/identity/login';
import type { IdentityStore } from '../../../../src/engines/identity/store';
import type { IdentityLoginInput } from '../../../../src/core/identity/types';
import { dir, fresh, JWT, refusal, takeNotice, USERPASS } from './fixtures';

const login = (over: Partial<IdentityLoginInput> = {}): IdentityLoginInput => ({
  mountAccessor: JWT,
  mountPath: 'auth/jwt/',
  mountType: 'jwt',
  aliasName: 'sub-123',
  ...over,
});

async function externalGroup(store: IdentityStore, aliasName: string, accessor = JWT, policies: string[] = []) {
  const written = await writeGroupAlias(store, dir, { id: '', name: aliasName, mountAccessor: accessor, canonicalId: '' });
  await upsertGroup(store, { id: written!.groupId, policies });
  return written!.groupId;
}

describe('logging in', () => {
  it('creates the entity and alias on first login and finds them afterwards', async () => {
    const { mem, store } = fresh();
    const first = await loginEntity(store, login({ aliasMetadata: { role: 'dev' } }));
    expect(first).toEqual({ entityId: expect.any(String), disabled: false, policies: [] });
    const entity = (await store.entity(first.entityId))!;
    expect(entity.name).toMatch(/^entity_[0-9a-f]{8}$/);
    const alias = (await store.aliasByFactors(JWT, 'sub-123'))!;
    expect(alias).toMatchObject({ canonicalId: entity.id, metadata: { role: 'dev' }, customMetadata: {} });
    expect(entity.aliasIds).toEqual([alias.id]);
    expect(await takeNotice(mem)).toBe(false);

    const second = await loginEntity(store, login({ aliasName: 'SUB-123' }));
    expect(second.entityId).toBe(first.entityId);
    expect(await store.entityIds()).toEqual([first.entityId]);
  });

  it('updates the alias metadata when it changed (a notice), and leaves it when not given', async () => {
    const { mem, store } = fresh();
    await loginEntity(store, login({ aliasMetadata: { role: 'dev' } }));
    await takeNotice(mem);
    await loginEntity(store, login({ aliasMetadata: { role: 'dev' } }));
    expect(await takeNotice(mem)).toBe(false);
    await loginEntity(store, login());
    expect((await store.aliasByFactors(JWT, 'sub-123'))?.metadata).toEqual({ role: 'dev' });
    await loginEntity(store, login({ aliasMetadata: { role: 'ops' } }));
    expect((await store.aliasByFactors(JWT, 'sub-123'))?.metadata).toEqual({ role: 'ops' });
    expect(await takeNotice(mem)).toBe(true);
  });

  it('reports the entity\'s identity policies and whether it is disabled', async () => {
    const { store } = fresh();
    const { entityId } = await loginEntity(store, login());
    await upsertEntity(store, { id: entityId, policies: ['mine'], disabled: true });
    const admins = await externalGroup(store, 'admins', JWT, ['admin']);
    expect(await loginEntity(store, login({ groupAliasNames: ['admins'] }))).toEqual({ entityId, disabled: true, policies: ['admin', 'mine'] });
    expect((await store.group(admins))?.memberEntityIds).toEqual([entityId]);
  });

  it('makes the external groups for this mount exactly the named ones', async () => {
    const { mem, store } = fresh();
    const admins = await externalGroup(store, 'admins');
    const devs = await externalGroup(store, 'devs');
    const otherMount = await externalGroup(store, 'admins', USERPASS);
    const { group: internal } = await upsertGroup(store, { name: 'internal' });
    const { entityId } = await loginEntity(store, login({ groupAliasNames: ['admins', 'devs', 'unknown-group'] }));
    // Membership set by other means stays: an internal group and another mount's external group.
    await upsertGroup(store, { id: internal.id, memberEntityIds: [entityId] });
    await loginEntity(store, login({ aliasName: 'someone-else', mountAccessor: USERPASS }));
    const otherMountGroup = (await store.group(otherMount))!;
    await store.putGroup({ ...otherMountGroup, memberEntityIds: [entityId] }, otherMountGroup);
    await takeNotice(mem);

    await loginEntity(store, login({ groupAliasNames: ['DEVS'] }));
    expect((await store.group(admins))?.memberEntityIds).toEqual([]);
    expect((await store.group(devs))?.memberEntityIds).toEqual([entityId]);
    expect((await store.group(otherMount))?.memberEntityIds).toEqual([entityId]);
    expect((await store.group(internal.id))?.memberEntityIds).toEqual([entityId]);
    expect(await takeNotice(mem)).toBe(true);

    // Unchanged groups: no notice. No group names at all: memberships left alone.
    await loginEntity(store, login({ groupAliasNames: ['devs'] }));
    expect(await takeNotice(mem)).toBe(false);
    await loginEntity(store, login());
    expect((await store.group(devs))?.memberEntityIds).toEqual([entityId]);
    await loginEntity(store, login({ groupAliasNames: [] }));
    expect((await store.group(devs))?.memberEntityIds).toEqual([]);
  });

  it('does not create groups for unknown names, and never touches internal groups named like them', async () => {
    const { store } = fresh();
    await upsertGroup(store, { name: 'admins' });
    const { entityId } = await loginEntity(store, login({ groupAliasNames: ['admins'] }));
    expect(await store.groupIds()).toHaveLength(1);
    expect(await store.directGroupIds(entityId)).toEqual([]);
  });

  it('refuses a login without a mount accessor or alias name', async () => {
    const { store } = fresh();
    expect(await refusal(loginEntity(store, login({ aliasName: '' })))).toBe('a login needs a mount accessor and an alias name');
    expect(await refusal(loginEntity(store, login({ mountAccessor: '' })))).toBe('a login needs a mount accessor and an alias name');
  });
});
