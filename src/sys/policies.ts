// sys/policies/acl (and the legacy sys/policy), and sys/capabilities, -self and -accessor.

import { canonicalPolicyName } from '../core/acl/policy-store';
import type { PathDef } from '../framework/backend';
import { badRequest, notFound } from '../framework/errors';
import type { SystemServices } from './context';

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

const pathsField = {
  paths: { type: 'comma-string-list' as const, description: 'Paths to report capabilities on.' },
  path: { type: 'comma-string-list' as const, description: 'Deprecated: use paths.' },
};

function capabilitiesData(caps: Record<string, string[]>): Record<string, unknown> {
  const paths = Object.keys(caps);
  return paths.length === 1 ? { ...caps, capabilities: caps[paths[0]] } : { ...caps };
}

export function capabilityPaths(s: SystemServices): PathDef[] {
  const paths = (f: { get<T>(n: string): T }) => {
    const list = [...f.get<string[]>('paths'), ...f.get<string[]>('path')];
    if (list.length === 0) throw badRequest('paths must be supplied');
    return list;
  };
  return [
    {
      pattern: 'capabilities',
      fields: { token: { type: 'string', description: 'The token to check.' }, ...pathsField },
      summary: 'Capabilities of a token on paths.',
      operations: {
        update: async (_req, f) => {
          const subject = await s.tokenPolicies({ token: f.get('token') });
          if (!subject) throw badRequest('invalid token');
          return { data: capabilitiesData(await s.capabilities(subject, paths(f))) };
        },
      },
    },
    {
      pattern: 'capabilities-self',
      fields: pathsField,
      summary: 'Capabilities of the calling token on paths.',
      operations: {
        update: async (req, f) => {
          if (!req.auth) throw badRequest('invalid token');
          return { data: capabilitiesData(await s.capabilities({ policies: req.auth.policies, entityId: req.auth.entityId }, paths(f))) };
        },
      },
    },
    {
      pattern: 'capabilities-accessor',
      fields: { accessor: { type: 'string', description: 'Accessor of the token to check.' }, ...pathsField },
      summary: 'Capabilities of a token, by accessor, on paths.',
      operations: {
        update: async (_req, f) => {
          const subject = await s.tokenPolicies({ accessor: f.get('accessor') });
          if (!subject) throw badRequest('invalid accessor');
          return { data: capabilitiesData(await s.capabilities(subject, paths(f))) };
        },
      },
    },
  ];
}
