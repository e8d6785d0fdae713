// What auth methods ask of the identity store at login: the entity behind an alias (created on
// first login), the alias's metadata as the method now sees it, and, when the method reports
// group names, exactly those external groups (through their group aliases on the mount).

import { badRequest } from '../../framework/errors';
import { formatRFC3339Nano } from '../../framework/duration';
import { randomUUID } from '../../crypto/random';
import { newEntity } from './entities';
import { setEntityMembership } from './memberships';
import type { IdentityStore } from './store';
import type { AliasRecord, IdentityLoginInput, IdentityLoginResult } from '../../core/identity/types';
import { identityView } from './views';

const sameMap = (a: Record<string, string> | null, b: Record<string, string>): boolean => {
  if (!a) return Object.keys(b).length === 0;
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
};

/** Ids of the external groups the named group aliases on this mount belong to (unknown names are ignored). */
async function externalGroupsFor(store: IdentityStore, accessor: string, names: string[]): Promise<Set<string>> {
  const out = new Set<string>();
  for (const name of names) {
    const alias = name ? await store.groupAliasByFactors(accessor, name) : null;
    const group = alias ? await store.group(alias.canonicalId) : null;
    if (group?.type === 'external') out.add(group.id);
  }
  return out;
}

export async function loginEntity(store: IdentityStore, input: IdentityLoginInput, now = Date.now()): Promise<IdentityLoginResult> {
  if (!input.mountAccessor || !input.aliasName) throw badRequest('a login needs a mount accessor and an alias name');
  const time = formatRFC3339Nano(now);
  let alias = await store.aliasByFactors(input.mountAccessor, input.aliasName);
  let existing = true;
  if (!alias) {
    existing = false;
    const entity = await newEntity(store, now);
    alias = {
      id: randomUUID(),
      canonicalId: entity.id,
      mountAccessor: input.mountAccessor,
      name: input.aliasName,
      metadata: input.aliasMetadata ?? null,
      customMetadata: {},
      creationTime: time,
      lastUpdateTime: time,
      mergedFromCanonicalIds: null,
      local: false,
    };
    entity.aliasIds.push(alias.id);
    await store.putAlias(alias, null);
    await store.putEntity(entity, null);
  } else if (input.aliasMetadata !== undefined && !sameMap(alias.metadata, input.aliasMetadata)) {
    const next: AliasRecord = { ...alias, metadata: input.aliasMetadata, lastUpdateTime: time };
    await store.putAlias(next, alias);
    alias = next;
    // Templated policies may read alias metadata.
    await store.notice();
  }
  const entityId = alias.canonicalId;

  if (input.groupAliasNames !== undefined) {
    const wanted = await externalGroupsFor(store, input.mountAccessor, input.groupAliasNames);
    let changed = false;
    // The entity's current external groups that are fed by this mount.
    for (const groupId of await store.directGroupIds(entityId)) {
      const group = await store.group(groupId);
      if (group?.type !== 'external' || wanted.has(groupId) || !group.aliasId) continue;
      const groupAlias = await store.groupAlias(group.aliasId);
      if (groupAlias?.mountAccessor !== input.mountAccessor) continue;
      changed = (await setEntityMembership(store, groupId, entityId, false, now)) || changed;
    }
    for (const groupId of wanted) changed = (await setEntityMembership(store, groupId, entityId, true, now)) || changed;
    if (changed && existing) await store.notice();
  }

  const view = await identityView(store, entityId);
  if (!view) throw badRequest('the alias is not associated with an entity');
  return { entityId, disabled: view.disabled, policies: view.policies };
}
