// Entities over an in-memory store: create/update by id or name, names case-insensitive, root
// never assignable, metadata limits, deletion with aliases and memberships.
import { describe, expect, it } from 'vitest';
import { writeAlias } from '../../../../src/engines/identity/aliases';
import { batchDeleteEntities, deleteEntity, upsertEntity } from '../../../../src/engines/identity/entities';
import { upsertGroup } from '../../../../src/engines/identity/groups';
import { dir, fresh, refusal, snapshot, takeNotice, USERPASS } from './fixtures';

describe('creating entities', () => {
  it('generates an id, an entity_<8 hex> name and RFC 3339 times; a new entity is no notice', async () => {
    const { mem, store } = fresh();
    const { entity, created } = await upsertEntity(store, {}, Date.UTC(2024, 4, 1, 10, 0, 0, 123));
    expect(created).toBe(true);
    expect(entity.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(entity.name).toMatch(/^entity_[0-9a-f]{8}$/);
    expect(entity.creationTime).toBe('2024-05-01T10:00:00.123Z');
    expect(entity).toMatchObject({ policies: [], metadata: null, disabled: false, mergedEntityIds: null, aliasIds: [] });
    expect(await store.entity(entity.id)).toEqual(entity);
    expect(await takeNotice(mem)).toBe(false);
  });

  it('keeps the given case but finds names case-insensitively', async () => {
    const { store } = fresh();
    const { entity } = await upsertEntity(store, { name: 'Alice', policies: ['b', 'a', 'b', ' '] });
    expect(entity.name).toBe('Alice');
    expect(entity.policies).toEqual(['a', 'b']);
    expect((await store.entityByName('ALICE'))?.id).toBe(entity.id);
  });

  it('a taken name selects that entity for update (create-or-update by name)', async () => {
    const { mem, store } = fresh();
    const first = await upsertEntity(store, { name: 'bob' });
    await takeNotice(mem);
    const again = await upsertEntity(store, { name: 'BOB', disabled: true, metadata: { team: 'x' } });
    expect(again.created).toBe(false);
    expect(again.entity.id).toBe(first.entity.id);
    expect(again.entity).toMatchObject({ name: 'BOB', disabled: true, metadata: { team: 'x' } });
    expect(await takeNotice(mem)).toBe(true);
  });

  it('updates by id, renaming and moving the name index', async () => {
    const { store } = fresh();
    const { entity } = await upsertEntity(store, { name: 'old' });
    await upsertEntity(store, { id: entity.id, name: 'new', policies: ['p'] });
    expect(await store.entityByName('old')).toBeNull();
    expect((await store.entityByName('new'))?.policies).toEqual(['p']);
    expect((await store.entity(entity.id))?.name).toBe('new');
  });

  it.each([
    [{ id: 'no-such-id' }, 'entity not found from id'],
    [{ policies: ['root'] }, 'policies cannot contain root'],
    [{ policies: ['web', 'ROOT'] }, 'policies cannot contain root'],
    [{ policies: [' root '] }, 'policies cannot contain root'],
    [{ metadata: { 'bad key': 'v' } }, 'invalid entity metadata: failed to load metadata pair ("bad key", "v"): key contains invalid characters'],
    [{ metadata: { 'vault-x': 'v' } }, 'key prefix "vault-" is reserved for internal use'],
    [{ metadata: { k: 'v'.repeat(513) } }, 'value is too long (limit: 512 characters)'],
    [{ metadata: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`k${i}`, 'v'])) }, 'metadata cannot contain more than 64 key/value pairs'],
  ])('refuses %j and writes nothing', async (input, message) => {
    const { mem, store } = fresh();
    const before = snapshot(mem);
    expect(await refusal(upsertEntity(store, input))).toContain(message);
    expect(snapshot(mem)).toEqual(before);
  });

  it('refuses a rename onto another entity\'s name, and root on an existing entity', async () => {
    const { mem, store } = fresh();
    await upsertEntity(store, { name: 'taken' });
    const { entity } = await upsertEntity(store, { name: 'mine', policies: ['p'] });
    const before = snapshot(mem);
    expect(await refusal(upsertEntity(store, { id: entity.id, name: 'TAKEN' }))).toBe('entity name is already in use');
    expect(await refusal(upsertEntity(store, { id: entity.id, policies: ['root'] }))).toBe('policies cannot contain root');
    expect(snapshot(mem)).toEqual(before);
  });
});

describe('deleting entities', () => {
  it('removes the entity, its aliases, its memberships and its indexes', async () => {
    const { mem, store } = fresh();
    const { entity } = await upsertEntity(store, { name: 'gone' });
    const alias = await writeAlias(store, dir, { id: '', name: 'gone-login', mountAccessor: USERPASS, canonicalId: entity.id, sudo: false });
    const { entity: other } = await upsertEntity(store, { name: 'stays' });
    const { group } = await upsertGroup(store, { name: 'g', memberEntityIds: [entity.id, other.id] });
    await takeNotice(mem);

    await deleteEntity(store, (await store.entity(entity.id))!);
    expect(await store.entity(entity.id)).toBeNull();
    expect(await store.entityByName('gone')).toBeNull();
    expect(await store.alias(alias!.alias.id)).toBeNull();
    expect(await store.aliasByFactors(USERPASS, 'gone-login')).toBeNull();
    expect((await store.group(group.id))?.memberEntityIds).toEqual([other.id]);
    expect(await store.directGroupIds(entity.id)).toEqual([]);
    expect(await takeNotice(mem)).toBe(true);
    expect([...mem.data.keys()].some((k) => k.includes(entity.id))).toBe(false);
  });

  it('batch-deletes known ids and skips unknown ones; an empty list is refused', async () => {
    const { store } = fresh();
    const a = (await upsertEntity(store, {})).entity;
    const b = (await upsertEntity(store, {})).entity;
    const c = (await upsertEntity(store, {})).entity;
    await batchDeleteEntities(store, [a.id, 'nope', b.id, a.id]);
    expect(await store.entityIds()).toEqual([c.id]);
    expect(await refusal(batchDeleteEntities(store, []))).toBe('missing entity ids to delete');
  });
});
