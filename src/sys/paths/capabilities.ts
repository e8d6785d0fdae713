// sys/capabilities, -self and -accessor: what a token may do on paths.

import type { PathDef } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import type { SystemServices } from '../context';

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
