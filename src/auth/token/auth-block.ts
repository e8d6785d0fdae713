// The `auth` block of a response that hands out or renews a token (reference §1.7).
import type { TokenEntry } from '../../core/tokens/entry';

/** `ttl` is what was just granted (creation or renewal), in seconds. */
export function authBlock(token: string, entry: TokenEntry, ttl: number): Record<string, unknown> {
  return {
    client_token: token,
    accessor: entry.accessor,
    policies: entry.policies,
    token_policies: entry.policies,
    metadata: entry.meta,
    lease_duration: ttl,
    renewable: entry.renewable,
    entity_id: entry.entityId,
    token_type: entry.type,
    orphan: entry.orphan,
    mfa_requirement: null,
    num_uses: entry.numUses,
  };
}

/** A login's `auth` block: the entity's policies join the token's; identity_policies only when there are any. */
export function loginAuthBlock(token: string, entry: TokenEntry, identityPolicies: string[]): Record<string, unknown> {
  const block = authBlock(token, entry, entry.ttl);
  block.policies = [...new Set([...entry.policies, ...identityPolicies])].sort();
  if (identityPolicies.length > 0) block.identity_policies = identityPolicies;
  return block;
}
