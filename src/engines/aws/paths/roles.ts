// roles/ (LIST) and roles/:name (GET, POST/PUT, DELETE) of the AWS engine (reference §3.2).
// As in Vault, a write is always an update (the path has no existence check, so writing a new
// role takes the `update` capability), answers 204, or 200 with only warnings; LIST shows the
// legacy entries not yet upgraded after the current ones.

import type { PathDef } from '../../../framework/backend';
import { notFound } from '../../../framework/errors';
import { deleteRole, listRoleNames, loadRole, ROLE_NAME, roleView, saveRole } from '../role';
import { parseRoleWrite, ROLE_FIELDS } from '../role-write';

export function rolePaths(): PathDef[] {
  return [
    {
      pattern: 'roles/?',
      summary: 'List the roles.',
      operations: {
        list: async (req) => {
          const keys = await listRoleNames(req.storage);
          if (keys.length === 0) throw notFound();
          return { data: { keys } };
        },
      },
    },
    {
      pattern: `roles/${ROLE_NAME}`,
      fields: { name: { type: 'string', description: 'Name of the role.', required: true }, ...ROLE_FIELDS },
      summary: 'Create, read, update or delete a role.',
      operations: {
        read: async (req, f) => {
          const loaded = await loadRole(req.storage, f.get<string>('name'));
          if (!loaded) throw notFound();
          return { data: roleView(loaded) };
        },
        update: async (req, f) => {
          const name = f.get<string>('name');
          const { entry, warnings } = parseRoleWrite(f, await loadRole(req.storage, name));
          await saveRole(req.storage, name, entry);
          return warnings.length > 0 ? { warnings } : null;
        },
        delete: async (req, f) => {
          if (!(await deleteRole(req.storage, f.get<string>('name')))) throw notFound();
          return null;
        },
      },
    },
  ];
}
