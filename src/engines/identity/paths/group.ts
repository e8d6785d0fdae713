// identity/group, group/id/:id, group/name/:name and their lists.

import type { LogicalRequest, PathDef } from '../../../framework/backend';
import { nameRegex } from '../../../framework/backend';
import { notFound } from '../../../framework/errors';
import type { FieldData, FieldSchemas } from '../../../framework/fields';
import { deleteGroup, upsertGroup, type GroupInput } from '../groups';
import { IdentityStore } from '../store';
import type { GroupRecord, MountDirectory } from '../../../core/identity/types';
import { groupView, groupList } from '../views';

const groupFields: FieldSchemas = {
  id: { type: 'string', description: 'ID of the group. If set, updates the corresponding existing group.' },
  type: { type: 'string', description: "Type of the group, 'internal' (default) or 'external'." },
  name: { type: 'string', description: 'Name of the group (group_<hex> if not given).' },
  metadata: { type: 'string-map', description: 'Metadata to be associated with the group.' },
  policies: { type: 'comma-string-list', description: 'Policies to be tied to the group.' },
  member_group_ids: { type: 'comma-string-list', description: 'Group IDs to be assigned as group members.' },
  member_entity_ids: { type: 'comma-string-list', description: 'Entity IDs to be assigned as group members.' },
};

function groupInput(f: FieldData): GroupInput {
  const opt = <T>(name: string): T | undefined => (f.has(name) ? f.get<T>(name) : undefined);
  return {
    id: f.get<string>('id') || undefined,
    name: f.get<string>('name') || undefined,
    type: opt<string>('type'),
    metadata: opt<Record<string, string>>('metadata'),
    policies: opt<string[]>('policies'),
    memberEntityIds: opt<string[]>('member_entity_ids'),
    memberGroupIds: opt<string[]>('member_group_ids'),
  };
}

export function groupPaths(dir: MountDirectory): PathDef[] {
  const store = (req: LogicalRequest) => new IdentityStore(req.storage);
  const write = async (req: LogicalRequest, f: FieldData) => {
    const { group, created } = await upsertGroup(store(req), groupInput(f));
    return created ? { data: { id: group.id, name: group.name } } : null;
  };
  const read = async (req: LogicalRequest, group: GroupRecord | null) => {
    if (!group) throw notFound();
    return { data: await groupView(store(req), dir, group) };
  };
  const remove = async (req: LogicalRequest, group: GroupRecord | null) => {
    if (group) await deleteGroup(store(req), group);
    return null;
  };
  const list = (by: 'id' | 'name') => async (req: LogicalRequest) => {
    const data = await groupList(store(req), dir, by);
    if (data.keys.length === 0) throw notFound();
    return { data: { ...data } };
  };
  return [
    { pattern: 'group', fields: groupFields, summary: 'Create or update a group.', operations: { update: write } },
    { pattern: 'group/id/?', summary: 'List groups by id.', operations: { list: list('id') } },
    {
      pattern: `group/id/${nameRegex('id')}`,
      fields: groupFields,
      summary: 'Update, read or delete a group by id.',
      operations: {
        update: write,
        read: async (req, f) => await read(req, await store(req).group(f.get('id'))),
        delete: async (req, f) => await remove(req, await store(req).group(f.get('id'))),
      },
    },
    { pattern: 'group/name/?', summary: 'List groups by name.', operations: { list: list('name') } },
    {
      pattern: 'group/name/(?<name>.+)',
      fields: groupFields,
      summary: 'Create, update, read or delete a group by name.',
      operations: {
        update: write,
        read: async (req, f) => await read(req, await store(req).groupByName(f.get('name'))),
        delete: async (req, f) => await remove(req, await store(req).groupByName(f.get('name'))),
      },
    },
  ];
}
