// auth/token/roles and roles/:role_name.
import { parseCIDR } from '../../../core/tokens/cidr';
import { normalizePolicies } from '../../../core/tokens/rules';
import type { TokenRole } from '../../../core/tokens/roles';
import type { FieldData, FieldSchemas } from '../../../framework/fields';
import type { PathDef } from '../../../framework/backend';
import { badRequest, notFound } from '../../../framework/errors';
import type { TokenOps } from '../ops';

const TOKEN_TYPES = ['service', 'batch', 'default-service', 'default-batch'];

const roleFields: FieldSchemas = {
  role_name: { type: 'string', description: 'Name of the role.' },
  allowed_policies: { type: 'comma-string-list', description: 'Policies tokens of this role may have.' },
  disallowed_policies: { type: 'comma-string-list', description: 'Policies tokens of this role may never have.' },
  allowed_policies_glob: { type: 'comma-string-list', description: 'Globs of allowed policies.' },
  disallowed_policies_glob: { type: 'comma-string-list', description: 'Globs of disallowed policies.' },
  orphan: { type: 'bool', description: 'Tokens of this role are orphans.' },
  renewable: { type: 'bool', description: 'Tokens of this role can be renewed.', default: true },
  path_suffix: { type: 'string', description: 'Suffix of the tokens\' creation path (for revoke-prefix).' },
  allowed_entity_aliases: { type: 'comma-string-list', description: 'Entity aliases tokens of this role may be tied to.' },
  token_bound_cidrs: { type: 'comma-string-list', description: 'CIDR blocks tokens of this role may be used from.' },
  bound_cidrs: { type: 'comma-string-list', description: 'Deprecated alias of token_bound_cidrs.' },
  token_explicit_max_ttl: { type: 'duration', description: 'Hard limit on the life of tokens of this role.' },
  explicit_max_ttl: { type: 'duration', description: 'Deprecated alias of token_explicit_max_ttl.' },
  token_period: { type: 'duration', description: 'Tokens of this role are periodic with this period.' },
  period: { type: 'duration', description: 'Deprecated alias of token_period.' },
  token_type: { type: 'string', description: 'service, batch, default-service or default-batch.' },
  token_no_default_policy: { type: 'bool', description: 'Do not attach the default policy.' },
  token_num_uses: { type: 'int', description: 'Number of uses of tokens of this role.' },
};

const emptyRole = (name: string): TokenRole => ({
  name,
  allowedPolicies: [],
  disallowedPolicies: [],
  allowedPoliciesGlob: [],
  disallowedPoliciesGlob: [],
  orphan: false,
  renewable: true,
  pathSuffix: '',
  allowedEntityAliases: [],
  boundCidrs: [],
  explicitMaxTtl: 0,
  period: 0,
  tokenType: 'default-service',
  noDefaultPolicy: false,
  numUses: 0,
});

/** Vault's strutil.RemoveDuplicates(list, true): lowercased, trimmed, no empties, deduplicated, sorted. */
const lowerSet = (list: string[]) => [...new Set(list.map((p) => p.trim().toLowerCase()).filter((p) => p !== ''))].sort();

/** Applies the fields the caller sent onto a role (absent fields keep their value). */
function applyFields(role: TokenRole, f: FieldData): TokenRole {
  const next = { ...role };
  const pick = <T>(name: string, deprecated?: string): T | undefined =>
    f.has(name) ? f.get<T>(name) : deprecated && f.has(deprecated) ? f.get<T>(deprecated) : undefined;
  // Stored as Vault stores them, so they read back sorted (allowed ones as policy names: root alone).
  next.allowedPolicies = normalizePolicies(pick<string[]>('allowed_policies') ?? next.allowedPolicies, false);
  next.disallowedPolicies = lowerSet(pick<string[]>('disallowed_policies') ?? next.disallowedPolicies);
  next.allowedPoliciesGlob = lowerSet(pick<string[]>('allowed_policies_glob') ?? next.allowedPoliciesGlob);
  next.disallowedPoliciesGlob = lowerSet(pick<string[]>('disallowed_policies_glob') ?? next.disallowedPoliciesGlob);
  next.orphan = pick<boolean>('orphan') ?? next.orphan;
  next.renewable = pick<boolean>('renewable') ?? next.renewable;
  next.pathSuffix = pick<string>('path_suffix') ?? next.pathSuffix;
  next.allowedEntityAliases = pick<string[]>('allowed_entity_aliases') ?? next.allowedEntityAliases;
  next.boundCidrs = pick<string[]>('token_bound_cidrs', 'bound_cidrs') ?? next.boundCidrs;
  next.explicitMaxTtl = pick<number>('token_explicit_max_ttl', 'explicit_max_ttl') ?? next.explicitMaxTtl;
  next.period = pick<number>('token_period', 'period') ?? next.period;
  next.tokenType = pick<string>('token_type') ?? next.tokenType;
  next.noDefaultPolicy = pick<boolean>('token_no_default_policy') ?? next.noDefaultPolicy;
  next.numUses = pick<number>('token_num_uses') ?? next.numUses;

  if (next.pathSuffix.split('/').some((seg) => seg === '..' || seg === '.')) throw badRequest('path_suffix cannot contain "." or ".." segments');
  if (!TOKEN_TYPES.includes(next.tokenType)) throw badRequest(`invalid 'token_type' value "${next.tokenType}"`);
  for (const c of next.boundCidrs) if (!parseCIDR(c)) throw badRequest(`invalid CIDR block ${JSON.stringify(c)} in token_bound_cidrs`);
  if (next.numUses < 0) throw badRequest('token_num_uses cannot be negative');
  if (next.tokenType === 'batch') {
    if (next.period > 0) throw badRequest('"token_period" cannot be set when "token_type" is "batch"');
    if (next.explicitMaxTtl > 0) throw badRequest('"token_explicit_max_ttl" cannot be set when "token_type" is "batch"');
    if (next.numUses > 0) throw badRequest('"token_num_uses" cannot be set when "token_type" is "batch"');
  }
  return next;
}

function roleView(r: TokenRole): Record<string, unknown> {
  return {
    allowed_entity_aliases: r.allowedEntityAliases,
    allowed_policies: r.allowedPolicies,
    allowed_policies_glob: r.allowedPoliciesGlob,
    disallowed_policies: r.disallowedPolicies,
    disallowed_policies_glob: r.disallowedPoliciesGlob,
    explicit_max_ttl: r.explicitMaxTtl,
    name: r.name,
    orphan: r.orphan,
    path_suffix: r.pathSuffix,
    period: r.period,
    renewable: r.renewable,
    token_explicit_max_ttl: r.explicitMaxTtl,
    token_no_default_policy: r.noDefaultPolicy,
    token_period: r.period,
    token_type: r.tokenType,
    ...(r.boundCidrs.length > 0 ? { bound_cidrs: r.boundCidrs, token_bound_cidrs: r.boundCidrs } : {}),
    ...(r.numUses > 0 ? { token_num_uses: r.numUses } : {}),
  };
}

export function rolePaths(ops: TokenOps): PathDef[] {
  const write = async (_req: unknown, f: FieldData) => {
    const name = f.get<string>('role_name');
    await ops.putRole(applyFields((await ops.role(name)) ?? emptyRole(name), f));
    return null;
  };
  return [
    {
      pattern: 'roles/?',
      summary: 'List token roles.',
      operations: {
        list: async () => {
          const keys = await ops.roles();
          if (keys.length === 0) throw notFound();
          return { data: { keys } };
        },
      },
    },
    {
      pattern: 'roles/(?<role_name>\\w(?:[\\w.-]*\\w)?)',
      fields: roleFields,
      summary: 'Create, read, update or delete a token role.',
      existenceCheck: async (_req, f) => (await ops.role(f.get('role_name'))) !== null,
      operations: {
        read: async (_req, f) => {
          const role = await ops.role(f.get('role_name'));
          if (!role) throw notFound();
          return { data: roleView(role) };
        },
        create: write,
        update: write,
        delete: async (_req, f) => {
          await ops.deleteRole(f.get('role_name'));
          return null;
        },
      },
    },
  ];
}
