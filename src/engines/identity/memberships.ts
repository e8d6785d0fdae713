// Group membership: which groups an entity belongs to (directly, or through nested groups, whose
// members are inherited by every parent), and the changes that keep both sides of a membership
// in step (a group's memberGroupIds and each member's parentGroupIds).

import { badRequest } from '../../framework/errors';
import { formatRFC3339Nano } from '../../framework/duration';
import type { IdentityStore } from './store';
import type { GroupRecord } from '../../core/identity/types';

export interface EntityGroups {
  /** Groups naming the entity as a member, sorted by id. */
  direct: GroupRecord[];
  /** Every ancestor of those, not itself direct, sorted by id. */
  inherited: GroupRecord[];
}

/** Every group above the given ones (parents, their parents, ...), excluding the given ones. */
async function ancestors(store: IdentityStore, start: GroupRecord[]): Promise<GroupRecord[]> {
  const seen = new Set(start.map((g) => g.id));
  const out: GroupRecord[] = [];
  const queue = start.flatMap((g) => g.parentGroupIds);
  while (queue.length > 0) {
    const id = queue.shift()!;
    if (seen.has(id)) continue;
    seen.add(id);
    const group = await store.group(id);
    if (!group) continue;
    out.push(group);
    queue.push(...group.parentGroupIds);
  }
  return out.sort((a, b) => a.id.localeCompare(b.id));
}

export async function entityGroups(store: IdentityStore, entityId: string): Promise<EntityGroups> {
  const direct: GroupRecord[] = [];
  for (const id of await store.directGroupIds(entityId)) {
    const group = await store.group(id);
    if (group) direct.push(group);
  }
  return { direct, inherited: await ancestors(store, direct) };
}

/** Adds or removes an entity as a direct member of a group (no-op when already so). */
export async function setEntityMembership(store: IdentityStore, groupId: string, entityId: string, member: boolean, now: number): Promise<boolean> {
  const group = await store.group(groupId);
  if (!group || group.memberEntityIds.includes(entityId) === member) return false;
  const next: GroupRecord = {
    ...group,
    memberEntityIds: member ? [...group.memberEntityIds, entityId] : group.memberEntityIds.filter((id) => id !== entityId),
    lastUpdateTime: formatRFC3339Nano(now),
  };
  await store.putGroup(next, group);
  return true;
}

/** Whether `candidate` is `groupId` or one of its ancestors (then making it a member would close a loop). */
async function isSelfOrAncestor(store: IdentityStore, groupId: string, candidate: string): Promise<boolean> {
  const queue = [groupId];
  const seen = new Set<string>();
  while (queue.length > 0) {
    const id = queue.shift()!;
    if (id === candidate) return true;
    if (seen.has(id)) continue;
    seen.add(id);
    queue.push(...((await store.group(id))?.parentGroupIds ?? []));
  }
  return false;
}

/**
 * Makes `memberIds` exactly the member groups of `group` (stored or about to be stored), updating
 * each member's parentGroupIds. Refuses unknown groups, the group itself and loops.
 */
export async function setMemberGroups(store: IdentityStore, group: GroupRecord, memberIds: string[], now: number): Promise<void> {
  const wanted = [...new Set(memberIds)];
  // Check every new member before changing anything. Adding members never changes this group's
  // ancestors, so checking each against the current state is enough.
  const added: GroupRecord[] = [];
  for (const id of wanted) {
    if (id === group.id) throw badRequest(`member group ID ${JSON.stringify(id)} is same as the ID of the group`);
    const member = await store.group(id);
    if (!member) throw badRequest(`invalid member group ID ${JSON.stringify(id)}`);
    if (member.parentGroupIds.includes(group.id)) continue;
    // A loop appears if the new member is already above this group.
    if (await isSelfOrAncestor(store, group.id, id)) throw badRequest(`cyclic relationship detected for member group ID ${JSON.stringify(id)}`);
    added.push(member);
  }
  const time = formatRFC3339Nano(now);
  for (const id of group.memberGroupIds) {
    if (wanted.includes(id)) continue;
    const member = await store.group(id);
    if (!member) continue;
    await store.putGroup({ ...member, parentGroupIds: member.parentGroupIds.filter((p) => p !== group.id), lastUpdateTime: time }, member);
  }
  for (const member of added) {
    await store.putGroup({ ...member, parentGroupIds: [...member.parentGroupIds, group.id], lastUpdateTime: time }, member);
  }
  group.memberGroupIds = wanted;
}
