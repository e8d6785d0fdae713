// What the identity store shows: Vault's response shapes, list key_info, and the view that
// authorisation uses (identity policies, disabled, template values).
import { describe, expect, it } from 'vitest';
import { writeAlias } from '../../../../src/engines/identity/aliases';
import { upsertEntity } from '../../../../src/engines/identity/entities';
import { writeGroupAlias } from '../../../../src/engines/identity/group-aliases';
import { upsertGroup } from '../../../../src/engines/identity/groups';
import { loginEntity } from '../../../../src/engines/identity/login';
import { aliasView, aliasList, entityView, entityList, identityView, entityViews, groupAliasList, groupView, groupList } from '../../../../src/engines/identity/views';
import { dir, fresh, JWT, USERPASS } from './fixtures';

const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

describe('entity views for authorisation', () => {
  it('unions entity and (nested) group policies, lowercased and sorted, and carries template values', async () => {
    const { store } = fresh();
    const { entityId } = await loginEntity(store, { mountAccessor: JWT, mountPath: 'auth/jwt/', mountType: 'jwt', aliasName: 'u1', aliasMetadata: { team: 'blue' } });
    await upsertEntity(store, { id: entityId, name: 'Ursula', policies: ['Zeta', 'alpha'], metadata: { dept: 'eng' } });
    const alias = (await store.aliasByFactors(JWT, 'u1'))!;
    await writeAlias(store, dir, { id: alias.id, name: '', mountAccessor: '', canonicalId: '', customMetadata: { badge: '7' }, sudo: false });
    const { group: inner } = await upsertGroup(store, { name: 'inner', policies: ['inner-p', 'alpha'], memberEntityIds: [entityId] });
    const { group: outer } = await upsertGroup(store, { name: 'Outer', policies: ['outer-p'], memberGroupIds: [inner.id] });

    const view = (await identityView(store, entityId))!;
    expect(view.policies).toEqual(['alpha', 'inner-p', 'outer-p', 'zeta']);
    expect(view.disabled).toBe(false);
    expect(view.context.entity).toEqual({
      id: entityId,
      name: 'Ursula',
      metadata: { dept: 'eng' },
      aliases: [{ mountAccessor: JWT, id: alias.id, name: 'u1', metadata: { team: 'blue' }, customMetadata: { badge: '7' } }],
    });
    expect(view.context.groups).toEqual([
      { id: inner.id, name: 'inner' },
      { id: outer.id, name: 'Outer' },
    ]);
  });

  it('filters root out even if it got into storage some other way', async () => {
    const { store } = fresh();
    const { entity } = await upsertEntity(store, { policies: ['web'] });
    await store.putEntity({ ...entity, policies: ['web', 'ROOT', 'root'] }, entity);
    expect((await identityView(store, entity.id))!.policies).toEqual(['web']);
  });

  it('is null for an unknown entity, in batch too', async () => {
    const { store } = fresh();
    const { entity } = await upsertEntity(store, { disabled: true });
    const views = await entityViews(store, [entity.id, 'ghost', entity.id]);
    expect(Object.keys(views).sort()).toEqual([entity.id, 'ghost'].sort());
    expect(views.ghost).toBeNull();
    expect(views[entity.id]?.disabled).toBe(true);
  });
});

describe('response shapes', () => {
  it('entity reads carry aliases with mount info and group ids', async () => {
    const { store } = fresh();
    const { entity } = await upsertEntity(store, { name: 'shape', policies: ['p'] });
    const alias = (await writeAlias(store, dir, { id: '', name: 'shape', mountAccessor: USERPASS, canonicalId: entity.id, sudo: false }))!.alias;
    const { group: direct } = await upsertGroup(store, { name: 'd', memberEntityIds: [entity.id] });
    const { group: parent } = await upsertGroup(store, { name: 'p', memberGroupIds: [direct.id] });
    const data = await entityView(store, dir, (await store.entity(entity.id))!);
    expect(Object.keys(data)).toEqual([
      'aliases', 'creation_time', 'direct_group_ids', 'disabled', 'group_ids', 'id', 'inherited_group_ids',
      'last_update_time', 'merged_entity_ids', 'metadata', 'name', 'namespace_id', 'policies',
    ]);
    expect(data).toMatchObject({
      direct_group_ids: [direct.id],
      inherited_group_ids: [parent.id],
      group_ids: [direct.id, parent.id],
      merged_entity_ids: null,
      metadata: null,
      namespace_id: 'root',
      policies: ['p'],
      disabled: false,
    });
    expect(data.creation_time).toMatch(TIME);
    expect(data.aliases).toEqual([
      {
        canonical_id: entity.id,
        creation_time: alias.creationTime,
        custom_metadata: {},
        id: alias.id,
        last_update_time: alias.lastUpdateTime,
        local: false,
        merged_from_canonical_ids: null,
        metadata: null,
        mount_accessor: USERPASS,
        mount_path: 'auth/userpass/',
        mount_type: 'userpass',
        name: 'shape',
      },
    ]);
    expect(await aliasView(dir, alias)).toMatchObject({ namespace_id: 'root', mount_path: 'auth/userpass/' });
  });

  it('group reads carry the alias, members, parents and modify_index', async () => {
    const { store } = fresh();
    const written = (await writeGroupAlias(store, dir, { id: '', name: 'gh-team', mountAccessor: JWT, canonicalId: '' }))!;
    const { group: parent } = await upsertGroup(store, { name: 'parent', memberGroupIds: [written.groupId] });
    const data = await groupView(store, dir, (await store.group(written.groupId))!);
    expect(data).toMatchObject({
      type: 'external',
      member_entity_ids: [],
      member_group_ids: null,
      parent_group_ids: [parent.id],
      namespace_id: 'root',
      policies: [],
      metadata: null,
      modify_index: 2,
      alias: {
        id: written.alias.id,
        canonical_id: written.groupId,
        mount_accessor: JWT,
        mount_path: 'auth/jwt/',
        mount_type: 'jwt',
        name: 'gh-team',
        metadata: null,
        merged_from_canonical_ids: null,
      },
    });
    expect((await groupView(store, dir, (await store.group(parent.id))!)).alias).toEqual({});
    expect((await groupView(store, dir, (await store.group(parent.id))!)).member_group_ids).toEqual([written.groupId]);
  });

  it('lists with key_info as Vault does (entity key_info keyed by id, even for name lists)', async () => {
    const { store } = fresh();
    const { entity: bare } = await upsertEntity(store, { name: 'bare' });
    const { entity } = await upsertEntity(store, { name: 'with-alias' });
    const alias = (await writeAlias(store, dir, { id: '', name: 'wa', mountAccessor: USERPASS, canonicalId: entity.id, sudo: false }))!.alias;
    const byId = await entityList(store, dir, 'id');
    expect(byId.keys).toEqual([bare.id, entity.id].sort());
    expect(byId.key_info[bare.id]).toEqual({ name: 'bare' });
    expect(byId.key_info[entity.id]).toEqual({
      name: 'with-alias',
      aliases: [{ id: alias.id, name: 'wa', mount_accessor: USERPASS, mount_path: 'auth/userpass/', mount_type: 'userpass' }],
    });
    const byName = await entityList(store, dir, 'name');
    expect(byName.keys.sort()).toEqual(['bare', 'with-alias']);
    expect(Object.keys(byName.key_info).sort()).toEqual([bare.id, entity.id].sort());

    expect((await aliasList(store, dir)).key_info[alias.id]).toEqual({
      name: 'wa', canonical_id: entity.id, mount_accessor: USERPASS, custom_metadata: {}, metadata: null, local: false,
      mount_path: 'auth/userpass/', mount_type: 'userpass',
    });

    const ga = (await writeGroupAlias(store, dir, { id: '', name: 'team', mountAccessor: JWT, canonicalId: '' }))!;
    const groups = await groupList(store, dir, 'name');
    expect(groups.key_info[ga.groupId]).toMatchObject({ num_member_entities: 0, num_parent_groups: 0, alias: { id: ga.alias.id, name: 'team', mount_accessor: JWT } });
    expect((await groupAliasList(store, dir)).key_info[ga.alias.id]).toMatchObject({ canonical_id: ga.groupId, mount_type: 'jwt', local: false });
  });
});
