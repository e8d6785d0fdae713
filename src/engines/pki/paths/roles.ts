// roles/ (LIST) and roles/:name (GET, POST, PATCH, DELETE). A write answers with the role as read
// back, plus Vault's warnings (generate_lease, an issuer_ref that resolves to nothing yet).

import { nameRegex, type LogicalRequest, type PathDef } from '../../../framework/backend';
import { badRequest, notFound } from '../../../framework/errors';
import type { FieldData } from '../../../framework/fields';
import { deleteRole, listRoles, loadRole, roleFromWrite, roleView, ROLE_FIELDS, saveRole, validateRole, type RoleEntry } from '../role';
import { findIssuer } from '../store';

/** Vault warns (but stores the role) when its issuer_ref does not resolve today. */
async function issuerWarnings(req: LogicalRequest, role: RoleEntry): Promise<string[]> {
  if (await findIssuer(req.storage, role.issuerRef)) return [];
  if (role.issuerRef === 'default') {
    return ['Issuing Certificate was set to default, but no default issuing certificate (configurable at /config/issuers) is currently set'];
  }
  return [`Issuing Certificate was set to ${role.issuerRef} but no issuing certificate currently has that name`];
}

async function write(req: LogicalRequest, f: FieldData, base: RoleEntry | null) {
  const { role, warnings } = roleFromWrite(f, base);
  validateRole(role);
  const all = [...(await issuerWarnings(req, role)), ...warnings];
  await saveRole(req.storage, f.get<string>('name'), role);
  return { data: roleView(role), ...(all.length ? { warnings: all } : {}) };
}

export function rolePaths(): PathDef[] {
  return [
    {
      pattern: 'roles/?',
      summary: 'List the roles.',
      operations: {
        list: async (req) => {
          const keys = (await listRoles(req.storage)).filter((k) => !k.endsWith('/'));
          if (keys.length === 0) throw notFound();
          return { data: { keys } };
        },
      },
    },
    {
      pattern: `roles/${nameRegex('name')}`,
      fields: { name: { type: 'string', description: 'Role name', required: true }, ...ROLE_FIELDS },
      summary: 'Create, read, patch or delete a role.',
      operations: {
        read: async (req, f) => {
          const role = await loadRole(req.storage, f.get<string>('name'));
          if (!role) throw notFound();
          return { data: roleView(role) };
        },
        update: async (req, f) => await write(req, f, null),
        patch: async (req, f) => {
          const old = await loadRole(req.storage, f.get<string>('name'));
          if (!old) throw badRequest('Unable to fetch role entry to patch');
          return await write(req, f, old);
        },
        delete: async (req, f) => {
          await deleteRole(req.storage, f.get<string>('name'));
          return null;
        },
      },
    },
  ];
}
