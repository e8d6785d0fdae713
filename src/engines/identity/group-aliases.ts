// Group aliases: the name an auth method reports for a group (an IdP group claim, an LDAP group)
// tied to one external group. A group has at most one alias; giving it another replaces the old
// one, as Vault does. Aliases only matter at the next login, so no notice to token holders.

import { badRequest } from '../../framework/errors';
import { formatRFC3339Nano } from '../../framework/duration';
import { randomUUID } from '../../crypto/random';
import { newGroup } from './groups';
import type { IdentityStore } from './store';
import type { GroupAliasRecord, GroupRecord, MountDirectory } from '../../core/identity/types';

export interface GroupAliasInput {
  /** Update this group alias (must exist). */
  id: string;
  name: string;
  mountAccessor: string;
  /** The external group to tie the alias to; "" on create makes a new external group. */
  canonicalId: string;
}

export interface GroupAliasWrite {
  alias: GroupAliasRecord;
  groupId: string;
}

/** Detaches whatever alias a group has now (before it gets another one). */
async function dropCurrentAlias(store: IdentityStore, group: GroupRecord, keep: string): Promise<void> {
  if (!group.aliasId || group.aliasId === keep) return;
  const old = await store.groupAlias(group.aliasId);
  if (old) await store.removeGroupAlias(old);
}

/** identity/group-alias and group-alias/id/:id; null when nothing changes. */
export async function writeGroupAlias(store: IdentityStore, dir: MountDirectory, input: GroupAliasInput, now = Date.now()): Promise<GroupAliasWrite | null> {
  let alias: GroupAliasRecord | null = null;
  if (input.id) {
    alias = await store.groupAlias(input.id);
    if (!alias) throw badRequest('invalid group alias ID');
  }
  if (!input.name) throw badRequest('missing alias name');
  if (!input.mountAccessor) throw badRequest('missing mount_accessor');
  if (alias && alias.name === input.name && alias.mountAccessor === input.mountAccessor && (!input.canonicalId || input.canonicalId === alias.canonicalId)) {
    return null;
  }
  let target: GroupRecord | null = null;
  if (input.canonicalId) {
    target = await store.group(input.canonicalId);
    if (!target) throw badRequest("invalid group ID given in 'canonical_id'");
    if (target.type !== 'external') throw badRequest("alias can't be set on an internal group");
  }
  const mount = await dir.byAccessor(input.mountAccessor);
  if (!mount) throw badRequest(`invalid mount accessor ${JSON.stringify(input.mountAccessor)}`);
  if (mount.local) throw badRequest(`mount accessor ${JSON.stringify(input.mountAccessor)} is a local mount`);
  const other = await store.groupAliasByFactors(input.mountAccessor, input.name);
  if (other && other.id !== alias?.id) throw badRequest('combination of mount and group alias name is already in use');

  const time = formatRFC3339Nano(now);
  if (!alias) {
    const group = target ?? (await newGroup(store, 'external', now));
    const created: GroupAliasRecord = {
      id: randomUUID(),
      canonicalId: group.id,
      mountAccessor: input.mountAccessor,
      name: input.name,
      creationTime: time,
      lastUpdateTime: time,
      mergedFromCanonicalIds: null,
    };
    await dropCurrentAlias(store, group, created.id);
    await store.putGroupAlias(created, null);
    await store.putGroup({ ...group, aliasId: created.id, lastUpdateTime: time }, target);
    return { alias: created, groupId: group.id };
  }

  const previous = await store.group(alias.canonicalId);
  if (!previous) throw badRequest('group alias is not associated with a group');
  const next: GroupAliasRecord = { ...alias, name: input.name, mountAccessor: input.mountAccessor, lastUpdateTime: time };
  if (target && target.id !== previous.id) {
    await dropCurrentAlias(store, target, alias.id);
    next.canonicalId = target.id;
    await store.putGroup({ ...previous, aliasId: null, lastUpdateTime: time }, previous);
    await store.putGroup({ ...target, aliasId: alias.id, lastUpdateTime: time }, target);
  }
  await store.putGroupAlias(next, alias);
  return { alias: next, groupId: next.canonicalId };
}

/** Detaches and deletes a group alias; unknown ids are a no-op. */
export async function deleteGroupAlias(store: IdentityStore, id: string, now = Date.now()): Promise<void> {
  const alias = await store.groupAlias(id);
  if (!alias) return;
  const group = await store.group(alias.canonicalId);
  if (group && group.aliasId === alias.id) await store.putGroup({ ...group, aliasId: null, lastUpdateTime: formatRFC3339Nano(now) }, group);
  await store.removeGroupAlias(alias);
}
