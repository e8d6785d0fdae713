// A test-only auth method whose login takes the outcome as input (alias, policies, token fields),
// so the host side of every login (entity resolution, token issuance, the auth block) is testable
// without an identity provider. Mountable only when the Worker has COFFER_TEST_ENGINES=1.

import type { Backend, LoginAuth, RenewLimits } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import { getJSON, putJSON } from '../../framework/storage';

export function testLoginBackend(): Backend {
  return {
    type: 'coffer-test-login',
    unauthenticatedPaths: ['login'],
    paths: [
      {
        pattern: 'login',
        fields: {
          alias: { type: 'string', description: 'Alias (user) name', required: true },
          alias_metadata: { type: 'string-map', description: 'Alias metadata' },
          groups: { type: 'comma-string-list', description: 'Group alias names' },
          policies: { type: 'comma-string-list', description: 'Token policies' },
          no_default_policy: { type: 'bool', description: 'Leave out default' },
          metadata: { type: 'string-map', description: 'Token metadata' },
          ttl: { type: 'duration', description: 'Token TTL' },
          max_ttl: { type: 'duration', description: 'Token max TTL' },
          explicit_max_ttl: { type: 'duration', description: 'Explicit max TTL' },
          period: { type: 'duration', description: 'Period' },
          num_uses: { type: 'int', description: 'Uses' },
          bound_cidrs: { type: 'comma-string-list', description: 'CIDRs' },
          token_type: { type: 'string', description: 'Token type' },
          role: { type: 'string', description: 'Role whose limits apply at renewal (role/<name>)' },
        },
        operations: {
          update: async (_req, f) => {
            if (f.get<string>('alias') === '') throw badRequest('missing alias');
            const login: LoginAuth = {
              aliasName: f.get('alias'),
              aliasMetadata: f.get('alias_metadata'),
              ...(f.has('groups') ? { groupAliasNames: f.get<string[]>('groups') } : {}),
              policies: f.get('policies'),
              noDefaultPolicy: f.get('no_default_policy'),
              metadata: f.get('metadata'),
              displayName: f.get('alias'),
              ttl: f.get('ttl'),
              maxTtl: f.get('max_ttl'),
              explicitMaxTtl: f.get('explicit_max_ttl'),
              period: f.get('period'),
              numUses: f.get('num_uses'),
              boundCidrs: f.get('bound_cidrs'),
              tokenType: f.get('token_type'),
              role: f.get('role'),
            };
            return { login };
          },
        },
      },
      {
        // Renewal limits of a role, as a method's role would have them.
        pattern: 'role/(?<name>\\w+)',
        fields: {
          name: { type: 'string', description: 'Role name', required: true },
          ttl: { type: 'duration', description: 'TTL at renewal' },
          max_ttl: { type: 'duration', description: 'Max TTL' },
          period: { type: 'duration', description: 'Period' },
        },
        operations: {
          update: async (req, f) => {
            const limits: RenewLimits = { ttl: f.get('ttl'), maxTtl: f.get('max_ttl'), period: f.get('period') };
            await putJSON(req.storage, `role/${f.get<string>('name')}`, limits);
            return null;
          },
          delete: async (req, f) => {
            await req.storage.delete(`role/${f.get<string>('name')}`);
            return null;
          },
        },
      },
    ],
    renewLogin: async (storage, role) => {
      if (role === '') return { ttl: 0, maxTtl: 0, period: 0 };
      const limits = await getJSON<RenewLimits>(storage, `role/${role}`);
      if (!limits) throw badRequest(`role "${role}" could not be found`);
      return limits;
    },
  };
}
