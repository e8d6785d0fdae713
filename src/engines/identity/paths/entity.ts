// identity/entity, entity/id/:id, entity/name/:name, their lists, batch-delete and merge.

import type { LogicalRequest, PathDef } from '../../../framework/backend';
import { nameRegex } from '../../../framework/backend';
import { notFound } from '../../../framework/errors';
import type { FieldData, FieldSchemas } from '../../../framework/fields';
import { batchDeleteEntities, deleteEntity, upsertEntity, type EntityInput } from '../entities';
import { mergeEntities } from '../merge';
import { IdentityStore } from '../store';
import type { EntityRecord, MountDirectory } from '../../../core/identity/types';
import { entityView, entityList } from '../views';

const entityFields: FieldSchemas = {
  id: { type: 'string', description: 'ID of the entity. If set, updates the corresponding existing entity.' },
  name: { type: 'string', description: 'Name of the entity (entity_<hex> if not given).' },
  metadata: { type: 'string-map', description: 'Metadata to be associated with the entity (a map, or key=value pairs).' },
  policies: { type: 'comma-string-list', description: 'Policies to be tied to the entity.' },
  disabled: { type: 'bool', description: 'Tokens tied to a disabled entity cannot be used (but are not revoked).' },
};

function entityInput(f: FieldData): EntityInput {
  return {
    id: f.get<string>('id') || undefined,
    name: f.get<string>('name') || undefined,
    metadata: f.has('metadata') ? f.get<Record<string, string>>('metadata') : undefined,
    policies: f.has('policies') ? f.get<string[]>('policies') : undefined,
    disabled: f.has('disabled') ? f.get<boolean>('disabled') : undefined,
  };
}

export function entityPaths(dir: MountDirectory): PathDef[] {
  const store = (req: LogicalRequest) => new IdentityStore(req.storage);
  /** New entities are answered with their id and name; updates with 204, as in Vault. */
  const write = async (req: LogicalRequest, f: FieldData) => {
    const { entity, created } = await upsertEntity(store(req), entityInput(f));
    return created ? { data: { aliases: null, id: entity.id, name: entity.name } } : null;
  };
  const read = async (req: LogicalRequest, entity: EntityRecord | null) => {
    if (!entity) throw notFound();
    return { data: await entityView(store(req), dir, entity) };
  };
  const remove = async (req: LogicalRequest, entity: EntityRecord | null) => {
    if (entity) await deleteEntity(store(req), entity);
    return null;
  };
  const list = (by: 'id' | 'name') => async (req: LogicalRequest) => {
    const data = await entityList(store(req), dir, by);
    if (data.keys.length === 0) throw notFound();
    return { data: { ...data } };
  };
  return [
    { pattern: 'entity', fields: entityFields, summary: 'Create or update an entity.', operations: { update: write } },
    { pattern: 'entity/name/?', summary: 'List entities by name.', operations: { list: list('name') } },
    {
      pattern: 'entity/name/(?<name>.+)',
      fields: entityFields,
      summary: 'Create, update, read or delete an entity by name.',
      operations: {
        update: write,
        read: async (req, f) => await read(req, await store(req).entityByName(f.get('name'))),
        delete: async (req, f) => await remove(req, await store(req).entityByName(f.get('name'))),
      },
    },
    { pattern: 'entity/id/?', summary: 'List entities by id.', operations: { list: list('id') } },
    {
      pattern: `entity/id/${nameRegex('id')}`,
      fields: entityFields,
      summary: 'Update, read or delete an entity by id.',
      operations: {
        update: write,
        read: async (req, f) => await read(req, await store(req).entity(f.get('id'))),
        delete: async (req, f) => await remove(req, await store(req).entity(f.get('id'))),
      },
    },
    {
      pattern: 'entity/batch-delete',
      fields: { entity_ids: { type: 'comma-string-list', description: 'Entity IDs to delete.' } },
      summary: 'Delete several entities.',
      operations: {
        update: async (req, f) => {
          await batchDeleteEntities(store(req), f.get('entity_ids'));
          return null;
        },
      },
    },
    {
      pattern: 'entity/merge/?',
      fields: {
        from_entity_ids: { type: 'comma-string-list', description: 'Entity IDs to merge into to_entity_id.' },
        to_entity_id: { type: 'string', description: 'Entity ID into which the others are merged.' },
        force: { type: 'bool', description: "Follow the 'mine' strategy for conflicting MFA secrets." },
        conflicting_alias_ids_to_keep: { type: 'comma-string-list', description: 'Alias IDs to keep where aliases share a mount accessor.' },
      },
      summary: 'Merge entities into one (sudo).',
      operations: {
        update: async (req, f) => {
          await mergeEntities(store(req), dir, {
            toEntityId: f.get('to_entity_id'),
            fromEntityIds: f.get('from_entity_ids'),
            conflictingAliasIdsToKeep: f.get('conflicting_alias_ids_to_keep'),
            force: f.get('force'),
          });
          return null;
        },
      },
    },
  ];
}
