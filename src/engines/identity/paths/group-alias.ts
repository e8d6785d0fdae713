// identity/group-alias, group-alias/id/:id and its list.

import type { LogicalRequest, PathDef } from '../../../framework/backend';
import { nameRegex } from '../../../framework/backend';
import { notFound } from '../../../framework/errors';
import type { FieldData, FieldSchemas } from '../../../framework/fields';
import { deleteGroupAlias, writeGroupAlias } from '../group-aliases';
import { IdentityStore } from '../store';
import type { MountDirectory } from '../../../core/identity/types';
import { groupAliasView, groupAliasList } from '../views';

const groupAliasFields: FieldSchemas = {
  id: { type: 'string', description: 'ID of the group alias.' },
  name: { type: 'string', description: 'Alias of the group (as the auth method names the group).' },
  mount_accessor: { type: 'string', description: 'Accessor of the auth mount the alias belongs to.' },
  canonical_id: { type: 'string', description: 'ID of the external group the alias belongs to (a new one if not given).' },
};

export function groupAliasPaths(dir: MountDirectory): PathDef[] {
  const store = (req: LogicalRequest) => new IdentityStore(req.storage);
  const write = async (req: LogicalRequest, f: FieldData) => {
    const written = await writeGroupAlias(store(req), dir, {
      id: f.get('id'),
      name: f.get('name'),
      mountAccessor: f.get('mount_accessor'),
      canonicalId: f.get('canonical_id'),
    });
    return written ? { data: { canonical_id: written.groupId, id: written.alias.id } } : null;
  };
  return [
    { pattern: 'group-alias', fields: groupAliasFields, summary: 'Create or update a group alias.', operations: { update: write } },
    {
      pattern: 'group-alias/id/?',
      summary: 'List group aliases by id.',
      operations: {
        list: async (req) => {
          const data = await groupAliasList(store(req), dir);
          if (data.keys.length === 0) throw notFound();
          return { data: { ...data } };
        },
      },
    },
    {
      pattern: `group-alias/id/${nameRegex('id')}`,
      fields: groupAliasFields,
      summary: 'Update, read or delete a group alias by id.',
      operations: {
        update: write,
        read: async (req, f) => {
          const alias = await store(req).groupAlias(f.get('id'));
          if (!alias) throw notFound();
          return { data: await groupAliasView(dir, alias) };
        },
        delete: async (req, f) => {
          await deleteGroupAlias(store(req), f.get('id'));
          return null;
        },
      },
    },
  ];
}
