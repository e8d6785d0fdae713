// identity/lookup/entity and lookup/group: find one by id, name, alias id, or alias name and
// mount accessor. Exactly one way must be given; no match is an empty (204) answer.

import type { LogicalRequest, PathDef } from '../../../framework/backend';
import { badRequest } from '../../../framework/errors';
import type { FieldData, FieldSchemas } from '../../../framework/fields';
import { IdentityStore } from '../store';
import type { MountDirectory } from '../../../core/identity/types';
import { entityView, groupView } from '../views';

const lookupFields = (what: string): FieldSchemas => ({
  id: { type: 'string', description: `ID of the ${what}.` },
  name: { type: 'string', description: `Name of the ${what}.` },
  alias_id: { type: 'string', description: `ID of an alias of the ${what}.` },
  alias_name: { type: 'string', description: 'Name of the alias (with alias_mount_accessor).' },
  alias_mount_accessor: { type: 'string', description: 'Accessor of the mount of the alias (with alias_name).' },
});

type Query = { by: 'id' | 'name' | 'alias_id'; value: string } | { by: 'factors'; accessor: string; name: string };

/** Vault's rules on which parameters go together (presence counts, even when empty). */
function query(f: FieldData): Query {
  const given = ['id', 'name', 'alias_id', 'alias_name', 'alias_mount_accessor'].filter((k) => f.has(k));
  const aliasName = f.get<string>('alias_name');
  const accessor = f.get<string>('alias_mount_accessor');
  if (given.length === 0) throw badRequest('query parameter not supplied');
  if (given.length > 1 && !(given.length === 2 && aliasName && accessor)) {
    throw badRequest('query parameter conflict; please supply distinct set of query parameters');
  }
  if (given.length === 1 && (aliasName || accessor)) throw badRequest("both 'alias_name' and 'alias_mount_accessor' needs to be set");
  if (aliasName && accessor) return { by: 'factors', accessor, name: aliasName };
  const by = given[0] as 'id' | 'name' | 'alias_id';
  return { by, value: f.get<string>(by) };
}

export function lookupPaths(dir: MountDirectory): PathDef[] {
  const store = (req: LogicalRequest) => new IdentityStore(req.storage);
  return [
    {
      pattern: 'lookup/entity',
      fields: lookupFields('entity'),
      summary: 'Find an entity by id, name, alias id, or alias name and mount accessor.',
      operations: {
        update: async (req, f) => {
          const s = store(req);
          const q = query(f);
          let entityId = '';
          if (q.by === 'factors') entityId = (await s.aliasByFactors(q.accessor, q.name))?.canonicalId ?? '';
          else if (q.by === 'id') entityId = q.value;
          else if (q.by === 'name') entityId = (await s.entityByName(q.value))?.id ?? '';
          else entityId = (await s.alias(q.value))?.canonicalId ?? '';
          const entity = await s.entity(entityId);
          return entity ? { data: await entityView(s, dir, entity) } : null;
        },
      },
    },
    {
      pattern: 'lookup/group',
      fields: lookupFields('group'),
      summary: 'Find a group by id, name, alias id, or alias name and mount accessor.',
      operations: {
        update: async (req, f) => {
          const s = store(req);
          const q = query(f);
          let groupId = '';
          if (q.by === 'factors') groupId = (await s.groupAliasByFactors(q.accessor, q.name))?.canonicalId ?? '';
          else if (q.by === 'id') groupId = q.value;
          else if (q.by === 'name') groupId = (await s.groupByName(q.value))?.id ?? '';
          else groupId = (await s.groupAlias(q.value))?.canonicalId ?? '';
          const group = await s.group(groupId);
          return group ? { data: await groupView(s, dir, group) } : null;
        },
      },
    },
  ];
}
