// identity/entity/merge: folds entities into one. The from-entities' aliases move to the target
// (an entity never ends up with two aliases on one mount: such conflicts are refused unless the
// operator says which alias to keep), their group memberships go with them, and they are deleted.
// Policies are not merged, as in Vault. The endpoint needs sudo (see index.ts).

import { CofferError, badRequest } from '../../framework/errors';
import { formatRFC3339Nano } from '../../framework/duration';
import { setEntityMembership } from './memberships';
import type { IdentityStore } from './store';
import type { AliasRecord, EntityRecord, MountDirectory } from '../../core/identity/types';

export interface MergeInput {
  toEntityId: string;
  fromEntityIds: string[];
  /** Alias ids to keep where the target and a from-entity both have an alias on one mount. */
  conflictingAliasIdsToKeep: string[];
  /** MFA secret conflicts (Vault); accepted, nothing to merge here. */
  force: boolean;
}

interface Clash {
  alias: string;
  entity: string;
  entity_id: string;
  mount: string;
  mount_path: string;
}

async function clashEntry(dir: MountDirectory, entity: EntityRecord, alias: AliasRecord): Promise<Clash> {
  const mount = await dir.byAccessor(alias.mountAccessor);
  return { alias: alias.name, entity: entity.name, entity_id: entity.id, mount: mount?.type ?? '', mount_path: mount?.path ?? '' };
}

export async function mergeEntities(store: IdentityStore, dir: MountDirectory, input: MergeInput, now = Date.now()): Promise<void> {
  if (!input.toEntityId) throw badRequest('missing entity id to merge to');
  const fromIds = [...new Set(input.fromEntityIds.filter((id) => id !== ''))];
  if (fromIds.length === 0) throw badRequest('missing entity ids to merge from');
  const keep = new Set(input.conflictingAliasIdsToKeep);
  if (fromIds.length > 1 && keep.size > 0) {
    throw badRequest('aliases conflicts cannot be resolved with multiple from entity ids - merge one entity at a time');
  }
  const target = await store.entity(input.toEntityId);
  if (!target) throw badRequest('entity id to merge to is invalid');
  const targetAliases = await store.aliasesOf(target);

  // Validate everything first and collect conflicts, so the operator sees every clash at once.
  const sources: { entity: EntityRecord; aliases: AliasRecord[] }[] = [];
  const accessorOwner = new Map<string, string>();
  const clashes: string[] = [];
  const clashData: Clash[] = [];
  for (const id of fromIds) {
    if (id === target.id) throw badRequest('to_entity_id should not be present in from_entity_ids');
    const entity = await store.entity(id);
    if (!entity) throw badRequest('entity id to merge from is invalid');
    const aliases = await store.aliasesOf(entity);
    for (const alias of aliases) {
      const owner = accessorOwner.get(alias.mountAccessor);
      if (owner !== undefined && owner !== id) {
        throw badRequest(`mount accessor ${alias.mountAccessor} found in multiple fromEntities, merge should be done with one fromEntity at a time`);
      }
      accessorOwner.set(alias.mountAccessor, id);
      const theirs = targetAliases.find((a) => a.mountAccessor === alias.mountAccessor);
      if (!theirs) continue;
      if (keep.has(theirs.id) || keep.has(alias.id)) continue;
      if (keep.size > 0) {
        throw badRequest(`conflicting mount accessors in following alias IDs and neither were present in conflicting_alias_ids_to_keep: ${alias.id}, ${theirs.id}`);
      }
      clashes.push(
        `mountAccessor: ${alias.mountAccessor}, toEntity ID: ${target.id}, fromEntity ID: ${id}, conflicting toEntity alias ID: ${theirs.id}, conflicting fromEntity alias ID: ${alias.id}`,
      );
      clashData.push(await clashEntry(dir, target, theirs), await clashEntry(dir, entity, alias));
    }
    sources.push({ entity, aliases });
  }
  if (clashes.length > 0) {
    const message = `toEntity and at least one fromEntity have aliases with the same mount accessor, repeat the merge request specifying exactly one fromEntity, clashes: ${clashes.join('; ')}`;
    throw new CofferError(400, [message], { data: { error: message, data: clashData } });
  }

  const time = formatRFC3339Nano(now);
  const merged: EntityRecord = { ...target, aliasIds: [...target.aliasIds], lastUpdateTime: time, mergedEntityIds: [...(target.mergedEntityIds ?? [])] };
  for (const { entity, aliases } of sources) {
    for (const alias of aliases) {
      const theirs = targetAliases.find((a) => a.mountAccessor === alias.mountAccessor && merged.aliasIds.includes(a.id));
      if (theirs && keep.has(theirs.id)) {
        // The target's alias stays; this one goes.
        await store.removeAlias(alias);
        continue;
      }
      if (theirs) {
        await store.removeAlias(theirs);
        merged.aliasIds = merged.aliasIds.filter((id) => id !== theirs.id);
      }
      const moved: AliasRecord = {
        ...alias,
        canonicalId: merged.id,
        mergedFromCanonicalIds: [...(alias.mergedFromCanonicalIds ?? []), entity.id],
        lastUpdateTime: time,
      };
      await store.putAlias(moved, alias);
      merged.aliasIds.push(moved.id);
    }
    merged.mergedEntityIds!.push(...(entity.mergedEntityIds ?? []), entity.id);
    // Memberships move to the target.
    for (const groupId of await store.directGroupIds(entity.id)) {
      await setEntityMembership(store, groupId, entity.id, false, now);
      await setEntityMembership(store, groupId, merged.id, true, now);
    }
    await store.removeEntity(entity);
  }
  await store.putEntity(merged, target);
  await store.notice();
}
