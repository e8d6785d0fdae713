// Entity aliases: creation (with or without an entity), one alias per mount accessor per entity,
// updates by id or by mount accessor + name, moving between entities (or joining an entity that
// already has aliases) only with sudo, deletion.
import { describe, expect, it } from 'vitest';
import { deleteAlias, writeAlias, type AliasInput } from '../../../../src/engines/identity/aliases';
import { upsertEntity } from '../../../../src/engines/identity/entities';
import type { IdentityStore } from '../../../../src/engines/identity/store';
import { dir, fresh, JWT, LOCAL, refusal, snapshot, takeNotice, USERPASS } from './fixtures';

const input = (over: Partial<AliasInput>): AliasInput => ({ id: '', name: '', mountAccessor: '', canonicalId: '', sudo: false, ...over });

async function entityWithAlias(store: IdentityStore, name: string, accessor = USERPASS) {
  const { entity } = await upsertEntity(store, { name });
  const written = await writeAlias(store, dir, input({ name, mountAccessor: accessor, canonicalId: entity.id }));
  return { entityId: entity.id, aliasId: written!.alias.id };
}

describe('creating aliases', () => {
  it('creates an entity when no canonical_id is given (no notice: no token can have it yet)', async () => {
    const { mem, store } = fresh();
    const written = await writeAlias(store, dir, input({ name: 'Alice', mountAccessor: USERPASS, customMetadata: { email: 'a@example.com' } }));
    expect(written).not.toBeNull();
    const entity = await store.entity(written!.entityId);
    expect(entity?.name).toMatch(/^entity_[0-9a-f]{8}$/);
    expect(entity?.aliasIds).toEqual([written!.alias.id]);
    expect(written!.alias).toMatchObject({ name: 'Alice', mountAccessor: USERPASS, canonicalId: entity!.id, customMetadata: { email: 'a@example.com' }, metadata: null, local: false });
    expect((await store.aliasByFactors(USERPASS, 'alice'))?.id).toBe(written!.alias.id);
    expect(await takeNotice(mem)).toBe(false);
  });

  it('attaches to an existing entity (a notice: its tokens\' templates may change)', async () => {
    const { mem, store } = fresh();
    const { entity } = await upsertEntity(store, { name: 'e' });
    await takeNotice(mem);
    const written = await writeAlias(store, dir, input({ name: 'e', mountAccessor: JWT, canonicalId: entity.id }));
    expect(written!.entityId).toBe(entity.id);
    expect((await store.entity(entity.id))?.aliasIds).toEqual([written!.alias.id]);
    expect(await takeNotice(mem)).toBe(true);
  });

  it('adds a login to an entity that already has aliases only with sudo (it hands over that user)', async () => {
    const { mem, store } = fresh();
    const victim = await entityWithAlias(store, 'victim', USERPASS);
    const before = snapshot(mem);
    expect(await refusal(writeAlias(store, dir, input({ name: 'attacker', mountAccessor: JWT, canonicalId: victim.entityId })))).toBe(
      'root or sudo privileges required to add an alias to an entity that already has aliases',
    );
    expect(snapshot(mem)).toEqual(before);
    const added = await writeAlias(store, dir, input({ name: 'victim-sso', mountAccessor: JWT, canonicalId: victim.entityId, sudo: true }));
    expect(added!.entityId).toBe(victim.entityId);
    expect((await store.entity(victim.entityId))?.aliasIds).toEqual([victim.aliasId, added!.alias.id]);
  });

  it('marks aliases on local mounts local', async () => {
    const { store } = fresh();
    expect((await writeAlias(store, dir, input({ name: 'x', mountAccessor: LOCAL })))!.alias.local).toBe(true);
  });

  it.each([
    [input({ name: 'x' }), "'id' or 'mount_accessor' and 'name' must be provided"],
    [input({ mountAccessor: USERPASS }), "'id' or 'mount_accessor' and 'name' must be provided"],
    [input({ name: 'x', mountAccessor: 'kv_1234abcd' }), 'invalid mount accessor "kv_1234abcd"'],
    [input({ name: 'x', mountAccessor: USERPASS, canonicalId: 'no-such-entity' }), 'invalid canonical ID'],
    [input({ id: 'no-such-alias', name: 'x' }), 'invalid alias ID provided'],
    [input({ name: 'x', mountAccessor: USERPASS, customMetadata: { '': 'v' } }), 'custom_metadata keys cannot be empty'],
  ])('refuses %j and writes nothing', async (bad, message) => {
    const { mem, store } = fresh();
    await upsertEntity(store, { name: 'someone' });
    const before = snapshot(mem);
    expect(await refusal(writeAlias(store, dir, bad))).toBe(message);
    expect(snapshot(mem)).toEqual(before);
  });

  it('never gives an entity two aliases on one mount accessor', async () => {
    const { mem, store } = fresh();
    const { entityId } = await entityWithAlias(store, 'carol');
    const before = snapshot(mem);
    expect(await refusal(writeAlias(store, dir, input({ name: 'carol-2', mountAccessor: USERPASS, canonicalId: entityId })))).toBe(
      'Alias already exists for requested entity and mount accessor',
    );
    expect(snapshot(mem)).toEqual(before);
  });
});

describe('updating aliases', () => {
  it('an existing mount accessor + name is an update; unchanged input is a no-op', async () => {
    const { mem, store } = fresh();
    const { aliasId } = await entityWithAlias(store, 'dave');
    await takeNotice(mem);
    expect(await writeAlias(store, dir, input({ name: 'dave', mountAccessor: USERPASS }))).toBeNull();
    expect(await takeNotice(mem)).toBe(false);
    const updated = await writeAlias(store, dir, input({ name: 'dave', mountAccessor: USERPASS, customMetadata: { k: 'v' } }));
    expect(updated!.alias.id).toBe(aliasId);
    expect((await store.alias(aliasId))?.customMetadata).toEqual({ k: 'v' });
    expect(await takeNotice(mem)).toBe(true);
  });

  it('renames by id and moves the factors index; refuses a name another alias has', async () => {
    const { mem, store } = fresh();
    const { aliasId } = await entityWithAlias(store, 'erin');
    await entityWithAlias(store, 'frank');
    await writeAlias(store, dir, input({ id: aliasId, name: 'erin2' }));
    expect(await store.aliasByFactors(USERPASS, 'erin')).toBeNull();
    expect((await store.aliasByFactors(USERPASS, 'erin2'))?.id).toBe(aliasId);
    const before = snapshot(mem);
    expect(await refusal(writeAlias(store, dir, input({ id: aliasId, name: 'Frank' })))).toBe('alias with combination of mount accessor and name already exists');
    expect(snapshot(mem)).toEqual(before);
  });

  it('refuses moving an alias onto a mount where its entity already has one', async () => {
    const { store } = fresh();
    const { entityId, aliasId } = await entityWithAlias(store, 'gina');
    await writeAlias(store, dir, input({ name: 'gina', mountAccessor: JWT, canonicalId: entityId, sudo: true }));
    expect(await refusal(writeAlias(store, dir, input({ id: aliasId, mountAccessor: JWT })))).toBe(
      "Alias cannot be updated as the entity already has an alias for the given 'mount_accessor'",
    );
  });

  it('moving an alias to another entity needs sudo', async () => {
    const { mem, store } = fresh();
    const mine = await entityWithAlias(store, 'mallory');
    const victim = (await upsertEntity(store, { name: 'victim', policies: ['admin'] })).entity;
    const before = snapshot(mem);
    // By id and by mount accessor + name alike.
    expect(await refusal(writeAlias(store, dir, input({ id: mine.aliasId, canonicalId: victim.id })))).toBe(
      'root or sudo privileges required to move an alias to another entity',
    );
    expect(await refusal(writeAlias(store, dir, input({ name: 'mallory', mountAccessor: USERPASS, canonicalId: victim.id })))).toBe(
      'root or sudo privileges required to move an alias to another entity',
    );
    expect(snapshot(mem)).toEqual(before);

    const moved = await writeAlias(store, dir, input({ id: mine.aliasId, canonicalId: victim.id, sudo: true }));
    expect(moved!.entityId).toBe(victim.id);
    expect((await store.entity(victim.id))?.aliasIds).toEqual([mine.aliasId]);
    expect((await store.entity(mine.entityId))?.aliasIds).toEqual([]);
    expect((await store.alias(mine.aliasId))?.canonicalId).toBe(victim.id);
    expect(await takeNotice(mem)).toBe(true);
  });

  it('even with sudo, refuses a move that would give the target two aliases on one mount', async () => {
    const { store } = fresh();
    const a = await entityWithAlias(store, 'a');
    const b = await entityWithAlias(store, 'b');
    expect(await refusal(writeAlias(store, dir, input({ id: a.aliasId, canonicalId: b.entityId, sudo: true })))).toBe(
      'Alias cannot be updated as the given entity already has an alias for this mount',
    );
    expect(await refusal(writeAlias(store, dir, input({ id: a.aliasId, canonicalId: 'nobody', sudo: true })))).toBe(
      "given 'canonical_id' is not associated with an entity",
    );
  });

  it('local aliases cannot move between entities', async () => {
    const { store } = fresh();
    const a = await entityWithAlias(store, 'loc', LOCAL);
    const other = (await upsertEntity(store, {})).entity;
    expect(await refusal(writeAlias(store, dir, input({ id: a.aliasId, canonicalId: other.id, sudo: true })))).toBe("local aliases can't be moved between entities");
  });
});

describe('deleting aliases', () => {
  it('detaches from the entity and frees the mount accessor + name', async () => {
    const { mem, store } = fresh();
    const { entityId, aliasId } = await entityWithAlias(store, 'hank');
    await takeNotice(mem);
    await deleteAlias(store, aliasId);
    expect(await store.alias(aliasId)).toBeNull();
    expect(await store.aliasByFactors(USERPASS, 'hank')).toBeNull();
    expect((await store.entity(entityId))?.aliasIds).toEqual([]);
    expect(await takeNotice(mem)).toBe(true);
    await deleteAlias(store, aliasId);
    expect(await takeNotice(mem)).toBe(false);
  });
});
