// identity/entity-alias, entity-alias/id/:id and its list.

import type { LogicalRequest, PathDef } from '../../../framework/backend';
import { nameRegex } from '../../../framework/backend';
import { notFound } from '../../../framework/errors';
import type { FieldData, FieldSchemas } from '../../../framework/fields';
import { deleteAlias, writeAlias } from '../aliases';
import { IdentityStore } from '../store';
import type { MountDirectory } from '../../../core/identity/types';
import { aliasView, aliasList } from '../views';

const aliasFields: FieldSchemas = {
  id: { type: 'string', description: 'ID of the entity alias. If set, updates the corresponding entity alias.' },
  entity_id: { type: 'string', description: 'Deprecated: use canonical_id.' },
  canonical_id: { type: 'string', description: 'Entity ID to which this alias belongs (a new entity if not given).' },
  mount_accessor: { type: 'string', description: 'Accessor of the auth mount the alias belongs to.' },
  name: { type: 'string', description: 'Name of the alias: the identifier of the client in the auth method.' },
  custom_metadata: { type: 'string-map', description: 'User-provided key-value pairs.' },
};

export function aliasPaths(dir: MountDirectory): PathDef[] {
  const store = (req: LogicalRequest) => new IdentityStore(req.storage);
  const write = async (req: LogicalRequest, f: FieldData) => {
    const written = await writeAlias(store(req), dir, {
      id: f.get('id'),
      name: f.get('name'),
      mountAccessor: f.get('mount_accessor'),
      canonicalId: f.get<string>('canonical_id') || f.get<string>('entity_id'),
      customMetadata: f.has('custom_metadata') ? f.get<Record<string, string>>('custom_metadata') : undefined,
      sudo: req.sudo === true,
    });
    return written ? { data: { canonical_id: written.entityId, id: written.alias.id } } : null;
  };
  return [
    { pattern: 'entity-alias', fields: aliasFields, summary: 'Create an entity alias (or update one found by mount accessor and name).', operations: { update: write } },
    {
      pattern: 'entity-alias/id/?',
      summary: 'List entity aliases by id.',
      operations: {
        list: async (req) => {
          const data = await aliasList(store(req), dir);
          if (data.keys.length === 0) throw notFound();
          return { data: { ...data } };
        },
      },
    },
    {
      pattern: `entity-alias/id/${nameRegex('id')}`,
      fields: aliasFields,
      summary: 'Update, read or delete an entity alias by id.',
      operations: {
        update: write,
        read: async (req, f) => {
          const alias = await store(req).alias(f.get('id'));
          if (!alias) throw notFound();
          return { data: await aliasView(dir, alias) };
        },
        delete: async (req, f) => {
          await deleteAlias(store(req), f.get('id'));
          return null;
        },
      },
    },
  ];
}
