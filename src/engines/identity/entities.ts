// Entities: create or update (by id or by name), delete (with their aliases and memberships).
// Merging lives in merge.ts.

import { badRequest } from '../../framework/errors';
import { formatRFC3339Nano } from '../../framework/duration';
import { randomUUID } from '../../crypto/random';
import { setEntityMembership } from './memberships';
import type { IdentityStore } from './store';
import type { EntityRecord } from '../../core/identity/types';
import { generateName, identityPolicies, validateMetadata } from './validate';

export interface EntityInput {
  /** Update this entity (must exist). */
  id?: string;
  /** Create or find by this name (case-insensitive); renames when an id is given. */
  name?: string;
  metadata?: Record<string, string>;
  policies?: string[];
  disabled?: boolean;
}

export interface EntityWrite {
  entity: EntityRecord;
  created: boolean;
}

/** A new entity record (not stored), named "entity_<hex>" unless a name is given. */
export async function newEntity(store: IdentityStore, now: number, name = ''): Promise<EntityRecord> {
  const time = formatRFC3339Nano(now);
  return {
    id: randomUUID(),
    name: name || (await generateName('entity', async (n) => (await store.entityByName(n)) !== null)),
    metadata: null,
    policies: [],
    disabled: false,
    creationTime: time,
    lastUpdateTime: time,
    mergedEntityIds: null,
    aliasIds: [],
  };
}

/**
 * Vault's entity create-or-update: an id names an existing entity to update; otherwise a name
 * that is taken selects that entity; otherwise a new one is made. Existing entities changing is
 * something tokens already issued must hear about.
 */
export async function upsertEntity(store: IdentityStore, input: EntityInput, now = Date.now()): Promise<EntityWrite> {
  let stored: EntityRecord | null = null;
  if (input.id) {
    stored = await store.entity(input.id);
    if (!stored) throw badRequest('entity not found from id');
  }
  if (input.name) {
    const byName = await store.entityByName(input.name);
    if (byName && !stored) stored = byName;
    else if (byName && byName.id !== stored?.id) throw badRequest('entity name is already in use');
  }
  const policies = input.policies !== undefined ? identityPolicies(input.policies, 'entity') : undefined;
  if (input.metadata !== undefined) validateMetadata('entity', input.metadata);

  const entity: EntityRecord = stored ? { ...stored, lastUpdateTime: formatRFC3339Nano(now) } : await newEntity(store, now, input.name);
  if (input.name) entity.name = input.name;
  if (policies !== undefined) entity.policies = policies;
  if (input.metadata !== undefined) entity.metadata = input.metadata;
  if (input.disabled !== undefined) entity.disabled = input.disabled;
  await store.putEntity(entity, stored);
  if (stored) await store.notice();
  return { entity, created: !stored };
}

/** Deletes an entity, its aliases and its group memberships. */
export async function deleteEntity(store: IdentityStore, entity: EntityRecord, now = Date.now()): Promise<void> {
  for (const groupId of await store.directGroupIds(entity.id)) await setEntityMembership(store, groupId, entity.id, false, now);
  for (const alias of await store.aliasesOf(entity)) await store.removeAlias(alias);
  await store.removeEntity(entity);
  await store.notice();
}

/** Deletes each listed entity that exists (unknown ids are skipped, as Vault does). */
export async function batchDeleteEntities(store: IdentityStore, ids: string[], now = Date.now()): Promise<void> {
  if (ids.length === 0) throw badRequest('missing entity ids to delete');
  for (const id of new Set(ids)) {
    const entity = await store.entity(id);
    if (entity) await deleteEntity(store, entity, now);
  }
}
