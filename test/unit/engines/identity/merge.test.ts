// Merging entities: aliases and group memberships move to the target, conflicts on a mount
// accessor are refused unless the operator picks the alias to keep, and the sources disappear.
import { describe, expect, it } from 'vitest';
import { writeAlias } from '../../../../src/engines/identity/aliases';
import { upsertEntity } from '../../../../src/engines/identity/entities';
import { upsertGroup } from '../../../../src/engines/identity/groups';
import { mergeEntities, type MergeInput } from '../../../../src/engines/identity/merge';
import type { IdentityStore } from '../../../../src/engines/identity/store';
import { CofferError } from '../../../../src/framework/errors';
import { dir, fresh, JWT, refusal, snapshot, takeNotice, USERPASS } from './fixtures';

async function person(store: IdentityStore, name: string, accessors: string[], policies: string[] = []) {
  const { entity } = await upsertEntity(store, { name, policies });
  const aliases: Record<string, string> = {};
  // (Root set-up: a second alias on an entity needs sudo.)
  for (const accessor of accessors) {
    aliases[accessor] = (await writeAlias(store, dir, { id: '', name: `${name}@${accessor}`, mountAccessor: accessor, canonicalId: entity.id, sudo: true }))!.alias.id;
  }
  return { id: entity.id, aliases };
}

const merge = (over: Partial<MergeInput>): MergeInput => ({ toEntityId: '', fromEntityIds: [], conflictingAliasIdsToKeep: [], force: false, ...over });

describe('merging entities', () => {
  it('moves aliases and memberships to the target and deletes the source; policies stay', async () => {
    const { mem, store } = fresh();
    const to = await person(store, 'to', [USERPASS], ['to-policy']);
    const from = await person(store, 'from', [JWT], ['from-policy']);
    const { group } = await upsertGroup(store, { name: 'g', memberEntityIds: [from.id] });
    await takeNotice(mem);

    await mergeEntities(store, dir, merge({ toEntityId: to.id, fromEntityIds: [from.id] }));
    expect(await store.entity(from.id)).toBeNull();
    expect(await store.entityByName('from')).toBeNull();
    const target = (await store.entity(to.id))!;
    expect(target.aliasIds).toEqual([to.aliases[USERPASS], from.aliases[JWT]]);
    expect(target.mergedEntityIds).toEqual([from.id]);
    expect(target.policies).toEqual(['to-policy']);
    const moved = (await store.alias(from.aliases[JWT]))!;
    expect(moved).toMatchObject({ canonicalId: to.id, mergedFromCanonicalIds: [from.id] });
    expect((await store.aliasByFactors(JWT, 'from@' + JWT))?.canonicalId).toBe(to.id);
    expect((await store.group(group.id))?.memberEntityIds).toEqual([to.id]);
    expect(await store.directGroupIds(to.id)).toEqual([group.id]);
    expect(await takeNotice(mem)).toBe(true);
  });

  it('carries over the entities a source had itself absorbed', async () => {
    const { store } = fresh();
    const a = await person(store, 'a', []);
    const b = await person(store, 'b', []);
    const c = await person(store, 'c', []);
    await mergeEntities(store, dir, merge({ toEntityId: b.id, fromEntityIds: [c.id] }));
    await mergeEntities(store, dir, merge({ toEntityId: a.id, fromEntityIds: [b.id] }));
    expect((await store.entity(a.id))?.mergedEntityIds).toEqual([c.id, b.id]);
  });

  it('refuses to give the target two aliases on one mount, listing the clash, and writes nothing', async () => {
    const { mem, store } = fresh();
    const to = await person(store, 'to', [USERPASS]);
    const from = await person(store, 'from', [USERPASS, JWT]);
    const before = snapshot(mem);
    let error: unknown;
    try {
      await mergeEntities(store, dir, merge({ toEntityId: to.id, fromEntityIds: [from.id] }));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(CofferError);
    const e = error as CofferError;
    expect(e.status).toBe(400);
    expect(e.errors[0]).toContain('toEntity and at least one fromEntity have aliases with the same mount accessor');
    expect(e.errors[0]).toContain(`conflicting toEntity alias ID: ${to.aliases[USERPASS]}, conflicting fromEntity alias ID: ${from.aliases[USERPASS]}`);
    expect((e.extra?.data as { data: unknown[] }).data).toEqual([
      { alias: `to@${USERPASS}`, entity: 'to', entity_id: to.id, mount: 'userpass', mount_path: 'auth/userpass/' },
      { alias: `from@${USERPASS}`, entity: 'from', entity_id: from.id, mount: 'userpass', mount_path: 'auth/userpass/' },
    ]);
    expect(snapshot(mem)).toEqual(before);
  });

  it('keeps the target\'s alias when told to, deleting the source\'s', async () => {
    const { store } = fresh();
    const to = await person(store, 'to', [USERPASS]);
    const from = await person(store, 'from', [USERPASS, JWT]);
    await mergeEntities(store, dir, merge({ toEntityId: to.id, fromEntityIds: [from.id], conflictingAliasIdsToKeep: [to.aliases[USERPASS]] }));
    expect((await store.entity(to.id))?.aliasIds).toEqual([to.aliases[USERPASS], from.aliases[JWT]]);
    expect(await store.alias(from.aliases[USERPASS])).toBeNull();
    expect(await store.aliasByFactors(USERPASS, `from@${USERPASS}`)).toBeNull();
  });

  it('keeps the source\'s alias when told to, deleting the target\'s', async () => {
    const { store } = fresh();
    const to = await person(store, 'to', [USERPASS]);
    const from = await person(store, 'from', [USERPASS]);
    await mergeEntities(store, dir, merge({ toEntityId: to.id, fromEntityIds: [from.id], conflictingAliasIdsToKeep: [from.aliases[USERPASS]] }));
    expect((await store.entity(to.id))?.aliasIds).toEqual([from.aliases[USERPASS]]);
    expect(await store.alias(to.aliases[USERPASS])).toBeNull();
    expect((await store.alias(from.aliases[USERPASS]))?.canonicalId).toBe(to.id);
  });

  it.each([
    ['no target', () => merge({ fromEntityIds: ['x'] }), 'missing entity id to merge to'],
    ['no sources', (ids: Record<string, string>) => merge({ toEntityId: ids.to }), 'missing entity ids to merge from'],
    ['unknown target', (ids: Record<string, string>) => merge({ toEntityId: 'ghost', fromEntityIds: [ids.a] }), 'entity id to merge to is invalid'],
    ['unknown source', (ids: Record<string, string>) => merge({ toEntityId: ids.to, fromEntityIds: ['ghost'] }), 'entity id to merge from is invalid'],
    ['target among sources', (ids: Record<string, string>) => merge({ toEntityId: ids.to, fromEntityIds: [ids.to] }), 'to_entity_id should not be present in from_entity_ids'],
    [
      'keep list with several sources',
      (ids: Record<string, string>) => merge({ toEntityId: ids.to, fromEntityIds: [ids.a, ids.b], conflictingAliasIdsToKeep: ['x'] }),
      'aliases conflicts cannot be resolved with multiple from entity ids - merge one entity at a time',
    ],
    [
      'two sources on one mount',
      (ids: Record<string, string>) => merge({ toEntityId: ids.to, fromEntityIds: [ids.a, ids.b] }),
      `mount accessor ${JWT} found in multiple fromEntities, merge should be done with one fromEntity at a time`,
    ],
    [
      'a keep list naming neither alias',
      (ids: Record<string, string>) => merge({ toEntityId: ids.to, fromEntityIds: [ids.c], conflictingAliasIdsToKeep: ['unrelated'] }),
      (ids: Record<string, string>) => `conflicting mount accessors in following alias IDs and neither were present in conflicting_alias_ids_to_keep: ${ids.cAlias}, ${ids.toAlias}`,
    ],
  ])('refuses %s and writes nothing', async (_name, request, message) => {
    const { mem, store } = fresh();
    const to = await person(store, 'to', [USERPASS]);
    const a = await person(store, 'a', [JWT]);
    const b = await person(store, 'b', [JWT]);
    const c = await person(store, 'c', [USERPASS]);
    const ids = { to: to.id, a: a.id, b: b.id, c: c.id, cAlias: c.aliases[USERPASS], toAlias: to.aliases[USERPASS] };
    const before = snapshot(mem);
    const expected = typeof message === 'function' ? message(ids) : message;
    expect(await refusal(mergeEntities(store, dir, request(ids)))).toBe(expected);
    expect(snapshot(mem)).toEqual(before);
  });
});
