// sys/policies/rgp and sys/policies/egp: Sentinel role- and endpoint-governing policies. RGP names
// share the ACL namespace (both are attached to tokens, entities and groups by name); EGP names
// are their own. Every change tells all objects at once, as an ACL change does.

import { canonicalPolicyName } from '../../core/acl/policy-store';
import { IMMUTABLE_POLICIES } from '../../core/acl/builtin-policies';
import { parseEgpPath, type GoverningKind } from '../../core/sentinel/governing';
import type { PathDef } from '../../framework/backend';
import { badRequest, notFound } from '../../framework/errors';
import type { SystemServices } from '../context';

const nameField = { name: { type: 'string' as const, description: 'Policy name (lowercased).' } };
const sentinelFields = {
  ...nameField,
  policy: { type: 'string' as const, description: 'The Sentinel policy (or base64 of it).' },
  enforcement_level: { type: 'string' as const, description: 'advisory, soft-mandatory or hard-mandatory.' },
};

export function governingPolicyPaths(s: SystemServices): PathDef[] {
  const changed = async (warning: string | null) => {
    await s.policiesChanged();
    return warning ? { warnings: [warning] } : null;
  };
  // Vault answers an empty listing with a 404.
  const nonEmpty = (keys: string[]) => (keys.length > 0 ? keys : null);
  const found = <T>(p: T | null): T => {
    if (!p) throw notFound();
    return p;
  };
  const readRgp = async (rawName: string) => found(await s.governing.get('rgp', canonicalPolicyName(rawName).name));
  const readEgp = async (rawName: string) => found(await s.governing.get('egp', canonicalPolicyName(rawName).name));
  const remove = async (kind: GoverningKind, rawName: string) => {
    await s.governing.delete(kind, canonicalPolicyName(rawName).name);
    return await changed(null);
  };
  return [
    {
      pattern: 'policies/rgp/?',
      summary: 'List role-governing policies.',
      operations: { list: async () => ({ data: { keys: found(nonEmpty(await s.governing.names('rgp'))) } }) },
    },
    {
      pattern: 'policies/rgp/(?<name>.+)',
      fields: sentinelFields,
      summary: 'Read, write or delete a role-governing policy.',
      operations: {
        read: async (_req, f) => {
          const p = await readRgp(f.get('name'));
          return { data: { name: p.name, policy: p.policy, enforcement_level: p.enforcement_level } };
        },
        update: async (_req, f) => {
          const { name, warning } = canonicalPolicyName(f.get('name'));
          // Attached by name like ACL policies: one name cannot mean both.
          if (IMMUTABLE_POLICIES.includes(name) || name === 'default' || (await s.policies.text(name)) !== null) {
            throw badRequest(`cannot use "${name}" as an RGP name: an ACL policy has that name`);
          }
          await s.governing.putRgp(name, { policy: f.get('policy'), enforcement_level: f.get('enforcement_level') });
          return await changed(warning);
        },
        delete: async (_req, f) => await remove('rgp', f.get('name')),
      },
    },
    {
      pattern: 'policies/egp/?',
      summary: 'List endpoint-governing policies, with the paths each governs.',
      operations: {
        list: async () => {
          const keys = found(nonEmpty(await s.governing.names('egp')));
          const nameMap: Record<string, { path: string; glob: boolean }[]> = {};
          for (const name of keys) {
            const p = await s.governing.get('egp', name);
            if (p) nameMap[name] = p.paths.map((path) => ({ path, glob: parseEgpPath(path).glob }));
          }
          return { data: { keys, name_path_map: nameMap } };
        },
      },
    },
    {
      pattern: 'policies/egp/(?<name>.+)',
      fields: { ...sentinelFields, paths: { type: 'comma-string-list', description: 'Paths governed: exact, glob suffix ("secret/*"), or "*" for every request.' } },
      summary: 'Read, write or delete an endpoint-governing policy.',
      operations: {
        read: async (_req, f) => {
          const p = await readEgp(f.get('name'));
          return { data: { name: p.name, policy: p.policy, enforcement_level: p.enforcement_level, paths: p.paths } };
        },
        update: async (_req, f) => {
          const { name, warning } = canonicalPolicyName(f.get('name'));
          await s.governing.putEgp(name, { policy: f.get('policy'), enforcement_level: f.get('enforcement_level'), paths: f.get('paths') });
          return await changed(warning);
        },
        delete: async (_req, f) => await remove('egp', f.get('name')),
      },
    },
  ];
}
