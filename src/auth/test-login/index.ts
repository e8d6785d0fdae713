// A test-only auth method whose login takes the outcome as input (alias, policies, token fields),
// so the host side of every login (entity resolution, token issuance, the auth block) is testable
// without an identity provider. Mountable only when the Worker has COFFER_TEST_ENGINES=1.

import type { Backend, LoginAuth } from '../../framework/backend';
import { badRequest } from '../../framework/errors';

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
              role: 'test',
            };
            return { login };
          },
        },
      },
    ],
  };
}
