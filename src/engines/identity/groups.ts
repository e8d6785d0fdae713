// Groups: internal groups list their members; external groups get theirs from auth methods at
// login (through their group alias). Nested groups pass their members on to every parent.

import { badRequest } from '../../framework/errors';
import { formatRFC3339Nano } from '../../framework/duration';
import { randomUUID } from '../../crypto/random';
import { setMemberGroups } from './memberships';
import type { IdentityStore } from './store';
import type { GroupRecord, GroupType } from '../../core/identity/types';
import { generateName, identityPolicies, validateMetadata } from './validate';

export interface GroupInput {
  /** Update this group (must exist). */
  id?: string;
  /** Create or update by this name (case-insensitive); renames when an id is given. */
  name?: string;
  type?: string;
  metadata?: Record<string, string>;
  policies?: string[];
  memberEntityIds?: string[];
  memberGroupIds?: string[];
}

export interface GroupWrite {
  group: GroupRecord;
  created: boolean;
}

/** A new, unstored group record. */
export async function newGroup(store: IdentityStore, type: GroupType, now: number, name = ''): Promise<GroupRecord> {
  const time = formatRFC3339Nano(now);
  return {
    id: randomUUID(),
    name: name || (await generateName('group', async (n) => (await store.groupByName(n)) !== null)),
    type,
    metadata: null,
    policies: [],
    memberEntityIds: [],
    memberGroupIds: [],
    parentGroupIds: [],
    creationTime: time,
    lastUpdateTime: time,
    modifyIndex: 0,
    aliasId: null,
  };
}

/** Vault's group create-or-update (identity/group, group/id/:id, group/name/:name). */
export async function upsertGroup(store: IdentityStore, input: GroupInput, now = Date.now()): Promise<GroupWrite> {
  let stored: GroupRecord | null = null;
  if (input.id) {
    stored = await store.group(input.id);
    if (!stored) throw badRequest('invalid group ID');
  } else if (input.name) {
    stored = await store.groupByName(input.name);
  }
  const policies = input.policies !== undefined ? identityPolicies(input.policies, 'group') : undefined;

  let type: GroupType = stored?.type ?? 'internal';
  if (input.type !== undefined && input.type !== '') {
    if (stored && input.type !== stored.type) throw badRequest('group type cannot be changed');
    if (input.type !== 'internal' && input.type !== 'external') throw badRequest(`invalid group type ${JSON.stringify(input.type)}`);
    type = input.type;
  }
  if (input.name) {
    const byName = await store.groupByName(input.name);
    if (byName && byName.id !== stored?.id) throw badRequest('group name is already in use');
  }
  if (input.metadata !== undefined) validateMetadata('group', input.metadata);
  if (input.memberEntityIds !== undefined && type === 'external') throw badRequest("member entities can't be set manually for external groups");
  if (input.memberGroupIds !== undefined && type === 'external') throw badRequest("member groups can't be set for external groups");
  const memberEntityIds = input.memberEntityIds !== undefined ? [...new Set(input.memberEntityIds)] : undefined;
  for (const id of memberEntityIds ?? []) {
    if (!(await store.entity(id))) throw badRequest(`invalid entity ID ${JSON.stringify(id)}`);
  }

  const group: GroupRecord = stored
    ? { ...stored, memberGroupIds: [...stored.memberGroupIds], lastUpdateTime: formatRFC3339Nano(now) }
    : await newGroup(store, type, now, input.name);
  if (input.name) group.name = input.name;
  if (policies !== undefined) group.policies = policies;
  if (input.metadata !== undefined) group.metadata = input.metadata;
  if (memberEntityIds !== undefined) group.memberEntityIds = memberEntityIds;
  if (input.memberGroupIds !== undefined) await setMemberGroups(store, group, input.memberGroupIds, now);
  await store.putGroup(group, stored);
  // A new group with no members changes nothing for existing tokens; anything else may.
  if (stored || group.memberEntityIds.length > 0 || group.memberGroupIds.length > 0) await store.notice();
  return { group, created: !stored };
}

/** Deletes a group: its alias, its place in its parents and its children's parent lists. */
export async function deleteGroup(store: IdentityStore, group: GroupRecord, now = Date.now()): Promise<void> {
  const time = formatRFC3339Nano(now);
  if (group.aliasId) {
    const alias = await store.groupAlias(group.aliasId);
    if (alias) await store.removeGroupAlias(alias);
  }
  for (const id of group.memberGroupIds) {
    const member = await store.group(id);
    if (member) await store.putGroup({ ...member, parentGroupIds: member.parentGroupIds.filter((p) => p !== group.id), lastUpdateTime: time }, member);
  }
  for (const id of group.parentGroupIds) {
    const parent = await store.group(id);
    if (parent) await store.putGroup({ ...parent, memberGroupIds: parent.memberGroupIds.filter((m) => m !== group.id), lastUpdateTime: time }, parent);
  }
  await store.removeGroup(group);
  await store.notice();
}
