// What the identity store shows: Vault's response shapes for entities, aliases and groups (keys
// in Go's sorted order), list key_info, and the view authorisation uses (IdentityView).

import { entityGroups } from './memberships';
import type { IdentityStore } from './store';
import type { AliasRecord, EntityRecord, GroupAliasRecord, GroupRecord, IdentityView, MountDirectory } from '../../core/identity/types';
import { effectivePolicies } from './validate';

/** Vault has namespaces; everything here lives in the root one. */
const NAMESPACE_ID = 'root';

/** Go marshals maps with sorted keys; clients never depend on it, but diffs against Vault stay small. */
function sortedKeys(data: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(data).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

async function mountFields(dir: MountDirectory, accessor: string): Promise<Record<string, string>> {
  const mount = await dir.byAccessor(accessor);
  return mount ? { mount_path: mount.path, mount_type: mount.type } : {};
}

/** An entity alias as identity/entity-alias/id/:id returns it (and within an entity). */
export async function aliasView(dir: MountDirectory, alias: AliasRecord): Promise<Record<string, unknown>> {
  return sortedKeys({
    canonical_id: alias.canonicalId,
    creation_time: alias.creationTime,
    custom_metadata: alias.customMetadata,
    id: alias.id,
    last_update_time: alias.lastUpdateTime,
    local: alias.local,
    merged_from_canonical_ids: alias.mergedFromCanonicalIds,
    metadata: alias.metadata,
    mount_accessor: alias.mountAccessor,
    name: alias.name,
    namespace_id: NAMESPACE_ID,
    ...(await mountFields(dir, alias.mountAccessor)),
  });
}

/** A group alias as identity/group-alias/id/:id returns it (Vault reads both kinds alike). */
export async function groupAliasView(dir: MountDirectory, alias: GroupAliasRecord): Promise<Record<string, unknown>> {
  return sortedKeys({
    canonical_id: alias.canonicalId,
    creation_time: alias.creationTime,
    custom_metadata: null,
    id: alias.id,
    last_update_time: alias.lastUpdateTime,
    local: false,
    merged_from_canonical_ids: alias.mergedFromCanonicalIds,
    metadata: null,
    mount_accessor: alias.mountAccessor,
    name: alias.name,
    namespace_id: NAMESPACE_ID,
    ...(await mountFields(dir, alias.mountAccessor)),
  });
}

export async function entityView(store: IdentityStore, dir: MountDirectory, entity: EntityRecord): Promise<Record<string, unknown>> {
  const aliases = [];
  for (const alias of await store.aliasesOf(entity)) {
    const { namespace_id: _ns, ...data } = await aliasView(dir, alias);
    aliases.push(data);
  }
  const { direct, inherited } = await entityGroups(store, entity.id);
  const directIds = direct.map((g) => g.id);
  const inheritedIds = inherited.map((g) => g.id);
  return sortedKeys({
    aliases,
    creation_time: entity.creationTime,
    direct_group_ids: directIds,
    disabled: entity.disabled,
    group_ids: [...directIds, ...inheritedIds],
    id: entity.id,
    inherited_group_ids: inheritedIds,
    last_update_time: entity.lastUpdateTime,
    merged_entity_ids: entity.mergedEntityIds,
    metadata: entity.metadata,
    name: entity.name,
    namespace_id: NAMESPACE_ID,
    policies: entity.policies,
  });
}

export async function groupView(store: IdentityStore, dir: MountDirectory, group: GroupRecord): Promise<Record<string, unknown>> {
  const alias = group.aliasId ? await store.groupAlias(group.aliasId) : null;
  return sortedKeys({
    alias: alias
      ? sortedKeys({
          canonical_id: alias.canonicalId,
          creation_time: alias.creationTime,
          id: alias.id,
          last_update_time: alias.lastUpdateTime,
          merged_from_canonical_ids: alias.mergedFromCanonicalIds,
          metadata: null,
          mount_accessor: alias.mountAccessor,
          name: alias.name,
          ...(await mountFields(dir, alias.mountAccessor)),
        })
      : {},
    creation_time: group.creationTime,
    id: group.id,
    last_update_time: group.lastUpdateTime,
    member_entity_ids: group.memberEntityIds,
    // Vault computes these from its index and leaves them null when there are none.
    member_group_ids: group.memberGroupIds.length > 0 ? [...group.memberGroupIds].sort() : null,
    metadata: group.metadata,
    modify_index: group.modifyIndex,
    name: group.name,
    namespace_id: NAMESPACE_ID,
    parent_group_ids: group.parentGroupIds.length > 0 ? group.parentGroupIds : null,
    policies: group.policies,
    type: group.type,
  });
}

export interface ListData {
  keys: string[];
  key_info: Record<string, unknown>;
}

/** Short alias descriptions for list key_info. */
async function aliasSummary(dir: MountDirectory, alias: { id: string; name: string; mountAccessor: string }): Promise<Record<string, unknown>> {
  return { id: alias.id, name: alias.name, mount_accessor: alias.mountAccessor, ...(await mountFields(dir, alias.mountAccessor)) };
}

/** identity/entity/id and entity/name: keys are ids or names; key_info is keyed by id, as in Vault. */
export async function entityList(store: IdentityStore, dir: MountDirectory, by: 'id' | 'name'): Promise<ListData> {
  const keys: string[] = [];
  const info: Record<string, unknown> = {};
  for (const id of (await store.entityIds()).sort()) {
    const entity = await store.entity(id);
    if (!entity) continue;
    keys.push(by === 'id' ? entity.id : entity.name);
    const aliases = await store.aliasesOf(entity);
    info[entity.id] = {
      name: entity.name,
      ...(aliases.length > 0 ? { aliases: await Promise.all(aliases.map((a) => aliasSummary(dir, a))) } : {}),
    };
  }
  return { keys, key_info: info };
}

/** The key_info entry of an entity or group alias in a listing. */
interface ListedAlias {
  id: string;
  name: string;
  canonicalId: string;
  mountAccessor: string;
  customMetadata: Record<string, string> | null;
  metadata: Record<string, string> | null;
  local: boolean;
}

async function listAliases(ids: string[], read: (id: string) => Promise<ListedAlias | null>, dir: MountDirectory): Promise<ListData> {
  const keys: string[] = [];
  const info: Record<string, unknown> = {};
  for (const id of ids.sort()) {
    const alias = await read(id);
    if (!alias) continue;
    keys.push(alias.id);
    info[alias.id] = {
      name: alias.name,
      canonical_id: alias.canonicalId,
      mount_accessor: alias.mountAccessor,
      custom_metadata: alias.customMetadata,
      metadata: alias.metadata,
      local: alias.local,
      ...(await mountFields(dir, alias.mountAccessor)),
    };
  }
  return { keys, key_info: info };
}

export async function aliasList(store: IdentityStore, dir: MountDirectory): Promise<ListData> {
  return listAliases(await store.aliasIds(), (id) => store.alias(id), dir);
}

/** Group aliases carry no metadata and are never local. */
export async function groupAliasList(store: IdentityStore, dir: MountDirectory): Promise<ListData> {
  return listAliases(
    await store.groupAliasIds(),
    async (id) => {
      const alias = await store.groupAlias(id);
      return alias && { ...alias, customMetadata: null, metadata: null, local: false };
    },
    dir,
  );
}

export async function groupList(store: IdentityStore, dir: MountDirectory, by: 'id' | 'name'): Promise<ListData> {
  const keys: string[] = [];
  const info: Record<string, unknown> = {};
  for (const id of (await store.groupIds()).sort()) {
    const group = await store.group(id);
    if (!group) continue;
    keys.push(by === 'id' ? group.id : group.name);
    const alias = group.aliasId ? await store.groupAlias(group.aliasId) : null;
    info[group.id] = {
      name: group.name,
      num_member_entities: group.memberEntityIds.length,
      num_parent_groups: group.parentGroupIds.length,
      ...(alias ? { alias: await aliasSummary(dir, alias) } : {}),
    };
  }
  return { keys, key_info: info };
}

/** What authorisation needs of an entity, or null when there is no such entity. */
export async function identityView(store: IdentityStore, entityId: string): Promise<IdentityView | null> {
  const entity = await store.entity(entityId);
  if (!entity) return null;
  const { direct, inherited } = await entityGroups(store, entity.id);
  const groups = [...direct, ...inherited];
  const aliases = await store.aliasesOf(entity);
  return {
    policies: effectivePolicies([entity.policies, ...groups.map((g) => g.policies)]),
    disabled: entity.disabled,
    context: {
      entity: {
        id: entity.id,
        name: entity.name,
        metadata: entity.metadata ?? {},
        aliases: aliases.map((a) => ({
          mountAccessor: a.mountAccessor,
          id: a.id,
          name: a.name,
          metadata: a.metadata ?? {},
          customMetadata: a.customMetadata,
        })),
      },
      groups: groups.map((g) => ({ id: g.id, name: g.name })),
    },
    sentinel: {
      entity: {
        id: entity.id,
        name: entity.name,
        metadata: entity.metadata ?? {},
        policies: entity.policies,
        disabled: entity.disabled,
        creation_time: entity.creationTime,
        last_update_time: entity.lastUpdateTime,
        merged_entity_ids: entity.mergedEntityIds ?? [],
        aliases: aliases.map((a) => ({
          id: a.id,
          name: a.name,
          mount_accessor: a.mountAccessor,
          metadata: a.metadata ?? {},
          custom_metadata: a.customMetadata,
          creation_time: a.creationTime,
          last_update_time: a.lastUpdateTime,
          merged_from_entity_ids: a.mergedFromCanonicalIds ?? [],
        })),
      },
      groups: groups.map((g) => ({
        id: g.id,
        name: g.name,
        metadata: g.metadata ?? {},
        policies: g.policies,
        member_entity_ids: g.memberEntityIds,
        parent_group_ids: g.parentGroupIds,
        creation_time: g.creationTime,
        last_update_time: g.lastUpdateTime,
      })),
    },
  };
}

/** Views for several entities (the identity object's RPC for other objects' caches). */
export async function entityViews(store: IdentityStore, ids: string[]): Promise<Record<string, IdentityView | null>> {
  const out: Record<string, IdentityView | null> = {};
  for (const id of new Set(ids)) out[id] = await identityView(store, id);
  return out;
}
