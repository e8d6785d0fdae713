// Groups and group aliases: create/update by id or name, types, member entities and groups on
// both sides of a membership, loops refused, nested inheritance, deletion, group aliases.
import { describe, expect, it } from 'vitest';
import { upsertEntity } from '../../../../src/engines/identity/entities';
import { deleteGroupAlias, writeGroupAlias } from '../../../../src/engines/identity/group-aliases';
import { deleteGroup, upsertGroup, type GroupInput } from '../../../../src/engines/identity/groups';
import { entityGroups } from '../../../../src/engines/identity/memberships';
import type { IdentityStore } from '../../../../src/engines/identity/store';
import { dir, fresh, JWT, LOCAL, refusal, snapshot, takeNotice, USERPASS } from './fixtures';

const group = async (store: IdentityStore, name: string, extra: Parameters<typeof upsertGroup>[1] = {}) => (await upsertGroup(store, { name, ...extra })).group;

describe('creating and updating groups', () => {
  it('creates an internal group named group_<8 hex>, lowercasing and deduplicating policies', async () => {
    const { mem, store } = fresh();
    const { group: g, created } = await upsertGroup(store, { policies: ['Web', 'db', 'web'] });
    expect(created).toBe(true);
    expect(g.name).toMatch(/^group_[0-9a-f]{8}$/);
    expect(g).toMatchObject({ type: 'internal', policies: ['web', 'db'], memberEntityIds: [], memberGroupIds: [], parentGroupIds: [], modifyIndex: 1, aliasId: null });
    // An empty new group changes nothing for anyone's tokens.
    expect(await takeNotice(mem)).toBe(false);
  });

  it('updates by name (case-insensitively) and by id; bumps modify_index; notices', async () => {
    const { mem, store } = fresh();
    const g = await group(store, 'Ops');
    const again = await upsertGroup(store, { name: 'OPS', metadata: { tier: '1' } });
    expect(again.created).toBe(false);
    expect(again.group).toMatchObject({ id: g.id, name: 'OPS', metadata: { tier: '1' }, modifyIndex: 2 });
    await upsertGroup(store, { id: g.id, name: 'ops-renamed' });
    expect(await store.groupByName('ops')).toBeNull();
    expect((await store.groupByName('OPS-RENAMED'))?.modifyIndex).toBe(3);
    expect(await takeNotice(mem)).toBe(true);
  });

  it.each<[GroupInput, string]>([
    [{ policies: ['root'] }, 'policies cannot contain root'],
    [{ policies: ['Root'] }, 'policies cannot contain root'],
    [{ type: 'federated' }, 'invalid group type "federated"'],
    [{ id: 'nope' }, 'invalid group ID'],
    [{ memberEntityIds: ['ghost'] }, 'invalid entity ID "ghost"'],
    [{ memberGroupIds: ['ghost'] }, 'invalid member group ID "ghost"'],
    [{ type: 'external', memberEntityIds: [] }, "member entities can't be set manually for external groups"],
    [{ type: 'external', memberGroupIds: [] }, "member groups can't be set for external groups"],
    [{ name: 'taken-name', id: 'set-below' }, 'group name is already in use'],
    [{ metadata: { 'a b': 'c' } }, 'invalid group metadata: failed to load metadata pair ("a b", "c"): key contains invalid characters'],
  ])('refuses %j and writes nothing', async (input, message) => {
    const { mem, store } = fresh();
    await group(store, 'taken-name');
    const mine = await group(store, 'mine');
    const before = snapshot(mem);
    const given = input.id === 'set-below' ? { ...input, id: mine.id } : input;
    expect(await refusal(upsertGroup(store, given))).toBe(message);
    expect(snapshot(mem)).toEqual(before);
  });

  it('refuses to change a group\'s type', async () => {
    const { store } = fresh();
    const g = await group(store, 'ext', { type: 'external' });
    expect(await refusal(upsertGroup(store, { id: g.id, type: 'internal' }))).toBe('group type cannot be changed');
  });
});

describe('memberships', () => {
  it('keeps member entities indexed and both sides of group membership in step', async () => {
    const { store } = fresh();
    const e1 = (await upsertEntity(store, {})).entity;
    const e2 = (await upsertEntity(store, {})).entity;
    const child = await group(store, 'child', { memberEntityIds: [e1.id, e1.id] });
    const parent = await group(store, 'parent', { memberGroupIds: [child.id], memberEntityIds: [e2.id] });
    expect((await store.group(child.id))?.memberEntityIds).toEqual([e1.id]);
    expect((await store.group(child.id))?.parentGroupIds).toEqual([parent.id]);
    expect((await store.group(parent.id))?.memberGroupIds).toEqual([child.id]);
    expect(await store.directGroupIds(e1.id)).toEqual([child.id]);

    // Replacing the member lists removes the old members on both sides.
    await upsertGroup(store, { id: parent.id, memberGroupIds: [], memberEntityIds: [e1.id] });
    expect((await store.group(child.id))?.parentGroupIds).toEqual([]);
    expect(await store.directGroupIds(e2.id)).toEqual([]);
    expect((await store.directGroupIds(e1.id)).sort()).toEqual([child.id, parent.id].sort());
  });

  it('members of a subgroup inherit every ancestor', async () => {
    const { store } = fresh();
    const e = (await upsertEntity(store, {})).entity;
    const leaf = await group(store, 'leaf', { memberEntityIds: [e.id] });
    const mid = await group(store, 'mid', { memberGroupIds: [leaf.id] });
    const top = await group(store, 'top', { memberGroupIds: [mid.id] });
    const side = await group(store, 'side', { memberGroupIds: [leaf.id], memberEntityIds: [e.id] });
    const { direct, inherited } = await entityGroups(store, e.id);
    expect(direct.map((g) => g.id).sort()).toEqual([leaf.id, side.id].sort());
    expect(inherited.map((g) => g.id).sort()).toEqual([mid.id, top.id].sort());
  });

  it.each([
    ['itself', (ids: Record<string, string>) => ({ id: ids.a, memberGroupIds: [ids.a] }), (ids: Record<string, string>) => `member group ID "${ids.a}" is same as the ID of the group`],
    ['its parent', (ids: Record<string, string>) => ({ id: ids.b, memberGroupIds: [ids.a] }), (ids: Record<string, string>) => `cyclic relationship detected for member group ID "${ids.a}"`],
    ['its grandparent', (ids: Record<string, string>) => ({ id: ids.c, memberGroupIds: [ids.a] }), (ids: Record<string, string>) => `cyclic relationship detected for member group ID "${ids.a}"`],
  ])('refuses making a group a member of %s, writing nothing', async (_what, request, message) => {
    const { mem, store } = fresh();
    const c = await group(store, 'c');
    const b = await group(store, 'b', { memberGroupIds: [c.id] });
    const a = await group(store, 'a', { memberGroupIds: [b.id] });
    const ids = { a: a.id, b: b.id, c: c.id };
    const before = snapshot(mem);
    expect(await refusal(upsertGroup(store, request(ids)))).toBe(message(ids));
    expect(snapshot(mem)).toEqual(before);
  });

  it('deleting a group detaches it from parents, children and member entities', async () => {
    const { mem, store } = fresh();
    const e = (await upsertEntity(store, {})).entity;
    const child = await group(store, 'child');
    const middle = await group(store, 'middle', { memberGroupIds: [child.id], memberEntityIds: [e.id] });
    const parent = await group(store, 'parent', { memberGroupIds: [middle.id] });
    await takeNotice(mem);
    await deleteGroup(store, (await store.group(middle.id))!);
    expect(await store.group(middle.id)).toBeNull();
    expect(await store.groupByName('middle')).toBeNull();
    expect((await store.group(child.id))?.parentGroupIds).toEqual([]);
    expect((await store.group(parent.id))?.memberGroupIds).toEqual([]);
    expect(await store.directGroupIds(e.id)).toEqual([]);
    expect(await takeNotice(mem)).toBe(true);
  });
});

describe('group aliases', () => {
  const input = (over: Partial<Parameters<typeof writeGroupAlias>[2]>) => ({ id: '', name: '', mountAccessor: '', canonicalId: '', ...over });

  it('creates an external group when no canonical_id is given; no notice', async () => {
    const { mem, store } = fresh();
    const written = await writeGroupAlias(store, dir, input({ name: 'admins', mountAccessor: JWT }));
    const g = await store.group(written!.groupId);
    expect(g).toMatchObject({ type: 'external', aliasId: written!.alias.id });
    expect(g!.name).toMatch(/^group_[0-9a-f]{8}$/);
    expect((await store.groupAliasByFactors(JWT, 'ADMINS'))?.id).toBe(written!.alias.id);
    expect(await takeNotice(mem)).toBe(false);
  });

  it.each([
    [input({ mountAccessor: JWT }), 'missing alias name'],
    [input({ name: 'x' }), 'missing mount_accessor'],
    [input({ name: 'x', mountAccessor: 'nope' }), 'invalid mount accessor "nope"'],
    [input({ name: 'x', mountAccessor: LOCAL }), `mount accessor "${LOCAL}" is a local mount`],
    [input({ name: 'x', mountAccessor: JWT, canonicalId: 'ghost' }), "invalid group ID given in 'canonical_id'"],
    [input({ id: 'ghost', name: 'x', mountAccessor: JWT }), 'invalid group alias ID'],
    [input({ name: 'taken', mountAccessor: JWT }), 'combination of mount and group alias name is already in use'],
    [input({ name: 'x', mountAccessor: JWT, canonicalId: 'internal' }), "alias can't be set on an internal group"],
  ])('refuses %j and writes nothing', async (request, message) => {
    const { mem, store } = fresh();
    await writeGroupAlias(store, dir, input({ name: 'taken', mountAccessor: JWT }));
    const internal = await group(store, 'internal-group');
    const before = snapshot(mem);
    const given = request.canonicalId === 'internal' ? { ...request, canonicalId: internal.id } : request;
    expect(await refusal(writeGroupAlias(store, dir, given))).toBe(message);
    expect(snapshot(mem)).toEqual(before);
  });

  it('gives a group one alias: a second replaces the first', async () => {
    const { store } = fresh();
    const ext = await group(store, 'ext', { type: 'external' });
    const first = await writeGroupAlias(store, dir, input({ name: 'one', mountAccessor: JWT, canonicalId: ext.id }));
    const second = await writeGroupAlias(store, dir, input({ name: 'two', mountAccessor: USERPASS, canonicalId: ext.id }));
    expect((await store.group(ext.id))?.aliasId).toBe(second!.alias.id);
    expect(await store.groupAlias(first!.alias.id)).toBeNull();
    expect(await store.groupAliasByFactors(JWT, 'one')).toBeNull();
  });

  it('updates by id (rename, move to another external group) and deletes', async () => {
    const { store } = fresh();
    const a = await group(store, 'a', { type: 'external' });
    const b = await group(store, 'b', { type: 'external' });
    const alias = (await writeGroupAlias(store, dir, input({ name: 'devs', mountAccessor: JWT, canonicalId: a.id })))!.alias;
    expect(await writeGroupAlias(store, dir, input({ id: alias.id, name: 'devs', mountAccessor: JWT }))).toBeNull();
    const moved = await writeGroupAlias(store, dir, input({ id: alias.id, name: 'developers', mountAccessor: JWT, canonicalId: b.id }));
    expect(moved!.groupId).toBe(b.id);
    expect((await store.group(a.id))?.aliasId).toBeNull();
    expect((await store.group(b.id))?.aliasId).toBe(alias.id);
    expect(await store.groupAliasByFactors(JWT, 'devs')).toBeNull();
    await deleteGroupAlias(store, alias.id);
    expect(await store.groupAlias(alias.id)).toBeNull();
    expect((await store.group(b.id))?.aliasId).toBeNull();
  });

  it('deleting an external group deletes its alias', async () => {
    const { store } = fresh();
    const written = await writeGroupAlias(store, dir, input({ name: 'ephemeral', mountAccessor: JWT }));
    await deleteGroup(store, (await store.group(written!.groupId))!);
    expect(await store.groupAlias(written!.alias.id)).toBeNull();
    expect(await store.groupAliasByFactors(JWT, 'ephemeral')).toBeNull();
  });
});
