// sys/policies/acl (and the legacy sys/policy); sys/policies/rgp and egp in policies-governing.ts.

import { canonicalPolicyName } from '../../core/acl/policy-store';
import type { PathDef } from '../../framework/backend';
import { badRequest, notFound } from '../../framework/errors';
import type { SystemServices } from '../context';
import { governingPolicyPaths } from './policies-governing';

const nameField = { name: { type: 'string' as const, description: 'Policy name (lowercased).' } };

export function policyPaths(s: SystemServices): PathDef[] {
  // Handlers await these rather than return them: a name check throws before the first await,
  // and workerd reports a rejected promise that is only adopted a microtask later as unhandled.
  const read = async (rawName: string) => {
    const { name } = canonicalPolicyName(rawName);
    const text = await s.policies.text(name);
    if (text === null) throw notFound();
    return { name, text };
  };
  const write = async (rawName: string, text: string, extraWarnings: string[] = []) => {
    const { name, warning } = canonicalPolicyName(rawName);
    // RGPs are attached by name like ACL policies: one name cannot mean both.
    if (await s.governing.get('rgp', name)) throw badRequest(`cannot use "${name}" as an ACL policy name: an RGP has that name`);
    await s.policies.put(name, text);
    await s.policiesChanged();
    const warnings = [...extraWarnings, ...(warning ? [warning] : [])];
    return warnings.length ? { warnings } : null;
  };
  const remove = async (rawName: string) => {
    await s.policies.delete(canonicalPolicyName(rawName).name);
    await s.policiesChanged();
    return null;
  };
  return [
    ...governingPolicyPaths(s),
    {
      pattern: 'policies/acl/?',
      summary: 'List ACL policies.',
      operations: { list: async () => ({ data: { keys: await s.policies.names() } }) },
    },
    {
      pattern: 'policies/acl/(?<name>.+)',
      fields: { ...nameField, policy: { type: 'string', description: 'The policy document (HCL or JSON, or base64 of either).' } },
      summary: 'Read, write or delete an ACL policy.',
      operations: {
        read: async (_req, f) => {
          const { name, text } = await read(f.get('name'));
          return { data: { name, policy: text } };
        },
        update: async (_req, f) => await write(f.get('name'), f.get('policy')),
        delete: async (_req, f) => await remove(f.get('name')),
      },
    },
    {
      pattern: 'policy',
      summary: 'List ACL policies (legacy).',
      operations: {
        read: async () => {
          const names = await s.policies.names();
          return { data: { keys: names, policies: names } };
        },
      },
    },
    {
      pattern: 'policy/(?<name>.+)',
      fields: {
        ...nameField,
        policy: { type: 'string', description: 'The policy document.' },
        rules: { type: 'string', description: 'Deprecated: the policy document.' },
      },
      summary: 'Read, write or delete an ACL policy (legacy).',
      operations: {
        read: async (_req, f) => {
          const { name, text } = await read(f.get('name'));
          return { data: { name, rules: text } };
        },
        update: async (_req, f) => {
          const usedRules = !f.get<string>('policy') && f.get<string>('rules');
          return await write(f.get('name'), f.get<string>('policy') || f.get<string>('rules'), usedRules ? ["'rules' is deprecated, please use 'policy' instead"] : []);
        },
        delete: async (_req, f) => await remove(f.get('name')),
      },
    },
  ];
}
