// Token roles (auth/token/roles/:name): what a role allows, and how a role shapes a token.

export interface TokenRole {
  name: string;
  allowedPolicies: string[];
  disallowedPolicies: string[];
  allowedPoliciesGlob: string[];
  disallowedPoliciesGlob: string[];
  orphan: boolean;
  renewable: boolean;
  pathSuffix: string;
  allowedEntityAliases: string[];
  boundCidrs: string[];
  explicitMaxTtl: number;
  period: number;
  /** service, batch, default-service or default-batch. */
  tokenType: string;
  noDefaultPolicy: boolean;
  numUses: number;
}

/** Vault's glob: `*` matches any run of characters (anywhere in the pattern). */
export function globMatch(pattern: string, value: string): boolean {
  const parts = pattern.split('*');
  if (parts.length === 1) return pattern === value;
  if (!value.startsWith(parts[0]) || !value.endsWith(parts[parts.length - 1])) return false;
  let pos = parts[0].length;
  const end = value.length - parts[parts.length - 1].length;
  for (let i = 1; i < parts.length - 1; i++) {
    const at = value.indexOf(parts[i], pos);
    if (at < 0 || at + parts[i].length > end) return false;
    pos = at + parts[i].length;
  }
  return pos <= end;
}

/** The role's verdict on one requested policy name ("default" is allowed unless disallowed). */
export function roleAllowsPolicy(role: TokenRole, policy: string): boolean {
  if (role.disallowedPolicies.includes(policy)) return false;
  if (role.disallowedPoliciesGlob.some((g) => globMatch(g, policy))) return false;
  if (policy === 'default') return true;
  const restricted = role.allowedPolicies.length > 0 || role.allowedPoliciesGlob.length > 0;
  if (!restricted) return true;
  return role.allowedPolicies.includes(policy) || role.allowedPoliciesGlob.some((g) => globMatch(g, policy));
}
