// Entity aliases: the link between a login on an auth mount (mount accessor + name) and an
// entity. An entity holds at most one alias per mount accessor, and moving an alias to another
// entity, or adding one to an entity that already has aliases (either hands whoever logs in
// through it another user's entity and policies), needs sudo.

import { badRequest } from '../../framework/errors';
import { formatRFC3339Nano } from '../../framework/duration';
import { randomUUID } from '../../crypto/random';
import { newEntity } from './entities';
import type { IdentityStore } from './store';
import type { AliasRecord, EntityRecord, MountDirectory } from '../../core/identity/types';
import { validateCustomMetadata } from './validate';

export interface AliasInput {
  /** Update this alias (must exist). */
  id: string;
  name: string;
  mountAccessor: string;
  /** The entity to attach to: for a new alias, "" creates a new entity; for an update, "" keeps it. */
  canonicalId: string;
  customMetadata?: Record<string, string>;
  /** The caller holds root or sudo on the path. */
  sudo: boolean;
}

export interface AliasWrite {
  alias: AliasRecord;
  entityId: string;
}

const ADD_NEEDS_SUDO = 'root or sudo privileges required to add an alias to an entity that already has aliases';

const sameMap = (a: Record<string, string>, b: Record<string, string>): boolean => {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
};

const hasAliasOn = async (store: IdentityStore, entity: EntityRecord, accessor: string, except = ''): Promise<boolean> =>
  (await store.aliasesOf(entity)).some((a) => a.mountAccessor === accessor && a.id !== except);

async function authMount(dir: MountDirectory, accessor: string) {
  const mount = await dir.byAccessor(accessor);
  if (!mount) throw badRequest(`invalid mount accessor ${JSON.stringify(accessor)}`);
  return mount;
}

/**
 * identity/entity-alias and entity-alias/id/:id. Returns null when nothing changes (Vault answers
 * such an update with 204).
 */
export async function writeAlias(store: IdentityStore, dir: MountDirectory, input: AliasInput, now = Date.now()): Promise<AliasWrite | null> {
  if (input.customMetadata !== undefined) validateCustomMetadata(input.customMetadata);
  if (input.id) {
    const alias = await store.alias(input.id);
    if (!alias) throw badRequest('invalid alias ID provided');
    if (!input.mountAccessor && !input.name && !input.canonicalId && input.customMetadata === undefined) return null;
    return await updateAlias(store, dir, alias, {
      ...input,
      name: input.name || alias.name,
      mountAccessor: input.mountAccessor || alias.mountAccessor,
    }, now);
  }
  if (!input.mountAccessor || !input.name) throw badRequest("'id' or 'mount_accessor' and 'name' must be provided");
  const mount = await authMount(dir, input.mountAccessor);
  const existing = await store.aliasByFactors(input.mountAccessor, input.name);
  if (existing) return await updateAlias(store, dir, existing, input, now);

  let stored: EntityRecord | null = null;
  if (input.canonicalId) {
    stored = await store.entity(input.canonicalId);
    if (!stored) throw badRequest('invalid canonical ID');
    if (await hasAliasOn(store, stored, input.mountAccessor)) throw badRequest('Alias already exists for requested entity and mount accessor');
    // An entity someone already logs in as: a new login into it hands over that user's identity
    // and policies, as moving an alias would. (A new, alias-less entity is the usual set-up flow.)
    if (stored.aliasIds.length > 0 && !input.sudo) throw badRequest(ADD_NEEDS_SUDO);
  }
  const entity = stored ? { ...stored, aliasIds: [...stored.aliasIds] } : await newEntity(store, now);
  const time = formatRFC3339Nano(now);
  const alias: AliasRecord = {
    id: randomUUID(),
    canonicalId: entity.id,
    mountAccessor: input.mountAccessor,
    name: input.name,
    metadata: null,
    customMetadata: input.customMetadata ?? {},
    creationTime: time,
    lastUpdateTime: time,
    mergedFromCanonicalIds: null,
    local: mount.local,
  };
  entity.aliasIds.push(alias.id);
  await store.putAlias(alias, null);
  await store.putEntity(entity, stored);
  // A new alias on an existing entity changes its tokens' templated paths.
  if (stored) await store.notice();
  return { alias, entityId: entity.id };
}

async function updateAlias(
  store: IdentityStore,
  dir: MountDirectory,
  alias: AliasRecord,
  input: AliasInput,
  now: number,
): Promise<AliasWrite | null> {
  const customMetadata = input.customMetadata ?? alias.customMetadata;
  const moving = input.canonicalId !== '' && input.canonicalId !== alias.canonicalId;
  if (input.name === alias.name && input.mountAccessor === alias.mountAccessor && !moving && sameMap(customMetadata, alias.customMetadata)) return null;
  // Whoever logs in through this alias would act as the other entity: an escalation, so sudo only.
  if (moving && !input.sudo) throw badRequest('root or sudo privileges required to move an alias to another entity');

  const current = await store.entity(alias.canonicalId);
  if (!current) throw badRequest('given alias is not associated with an entity');
  const next: AliasRecord = { ...alias, customMetadata, lastUpdateTime: formatRFC3339Nano(now) };
  if (input.mountAccessor !== alias.mountAccessor && !moving && (await hasAliasOn(store, current, input.mountAccessor, alias.id))) {
    throw badRequest("Alias cannot be updated as the entity already has an alias for the given 'mount_accessor'");
  }
  if (input.name !== alias.name || input.mountAccessor !== alias.mountAccessor) {
    const mount = await authMount(dir, input.mountAccessor);
    const other = await store.aliasByFactors(input.mountAccessor, input.name);
    if (other && other.id !== alias.id) throw badRequest('alias with combination of mount accessor and name already exists');
    next.name = input.name;
    next.mountAccessor = input.mountAccessor;
    next.local = mount.local;
  }

  if (moving) {
    if (alias.local) throw badRequest("local aliases can't be moved between entities");
    const target = await store.entity(input.canonicalId);
    if (!target) throw badRequest("given 'canonical_id' is not associated with an entity");
    if (await hasAliasOn(store, target, next.mountAccessor)) {
      throw badRequest('Alias cannot be updated as the given entity already has an alias for this mount');
    }
    next.canonicalId = target.id;
    await store.putEntity({ ...current, aliasIds: current.aliasIds.filter((id) => id !== alias.id) }, current);
    await store.putEntity({ ...target, aliasIds: [...target.aliasIds, alias.id] }, target);
  }
  await store.putAlias(next, alias);
  await store.notice();
  return { alias: next, entityId: next.canonicalId };
}

/** Detaches and deletes an alias; unknown ids are a no-op. */
export async function deleteAlias(store: IdentityStore, id: string): Promise<void> {
  const alias = await store.alias(id);
  if (!alias) return;
  const entity = await store.entity(alias.canonicalId);
  if (entity) await store.putEntity({ ...entity, aliasIds: entity.aliasIds.filter((a) => a !== id) }, entity);
  await store.removeAlias(alias);
  await store.notice();
}
