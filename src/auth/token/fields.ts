// The token_* fields every role-based auth method carries (Vault's tokenutil.TokenParams): their
// field schemas (with the deprecated aliases policies, bound_cidrs, ttl, max_ttl, period and
// num_uses), parsing with Vault's rules, the read view and what a login hands the host.

import { parseCIDR } from '../../core/tokens/cidr';
import { formatGoDuration } from '../../framework/duration';
import { badRequest } from '../../framework/errors';
import type { FieldData, FieldSchemas } from '../../framework/fields';
import type { LoginAuth } from '../../framework/backend';

/** What a role stores about the tokens it issues. Durations are whole seconds. */
export interface TokenParams {
  ttl: number;
  maxTtl: number;
  explicitMaxTtl: number;
  period: number;
  numUses: number;
  policies: string[];
  boundCidrs: string[];
  noDefaultPolicy: boolean;
  /** 'default', 'service' or 'batch'. */
  tokenType: string;
  /**
   * The deprecated keys, kept only while the role was written through them (Vault mirrors the
   * token_* value into them then, and shows them on read only when set).
   */
  legacy: LegacyTokenParams;
}

export interface LegacyTokenParams {
  policies?: string[];
  boundCidrs?: string[];
  ttl?: number;
  maxTtl?: number;
  period?: number;
  numUses?: number;
}

const deprecated = (name: string): string =>
  `Use "${name}" instead. If this and "${name}" are both specified, only "${name}" will be used.`;

export const TOKEN_FIELDS: FieldSchemas = {
  token_ttl: { type: 'duration', description: 'The initial ttl of the token to generate' },
  token_max_ttl: { type: 'duration', description: 'The maximum lifetime of the generated token' },
  token_explicit_max_ttl: { type: 'duration', description: 'A hard cap on the lifetime of the generated token, renewals included' },
  token_period: { type: 'duration', description: 'Generated tokens are periodic with this period' },
  token_num_uses: { type: 'int', description: 'The maximum number of times a token may be used, a value of zero means unlimited' },
  token_policies: { type: 'comma-string-list', description: 'Comma-separated list of policies' },
  token_bound_cidrs: { type: 'comma-string-list', description: 'CIDR blocks allowed to use the generated token' },
  token_no_default_policy: { type: 'bool', description: "If true, the 'default' policy will not automatically be added to generated tokens" },
  token_type: { type: 'string', description: 'The type of token to generate, service or batch' },
  policies: { type: 'comma-string-list', description: deprecated('token_policies') },
  bound_cidrs: { type: 'comma-string-list', description: deprecated('token_bound_cidrs') },
  ttl: { type: 'duration', description: deprecated('token_ttl') },
  max_ttl: { type: 'duration', description: deprecated('token_max_ttl') },
  period: { type: 'duration', description: deprecated('token_period') },
  num_uses: { type: 'int', description: deprecated('token_num_uses') },
};

export const emptyTokenParams = (): TokenParams => ({
  ttl: 0,
  maxTtl: 0,
  explicitMaxTtl: 0,
  period: 0,
  numUses: 0,
  policies: [],
  boundCidrs: [],
  noDefaultPolicy: false,
  tokenType: 'default',
  legacy: {},
});

const TOKEN_TYPES: Record<string, string> = { '': 'default', default: 'default', service: 'service', batch: 'batch' };

function parseCidrs(list: string[]): string[] {
  const out = list.map((c) => c.trim());
  for (const c of out) if (!parseCIDR(c)) throw badRequest(`error parsing address ${JSON.stringify(c)}: invalid CIDR block or IP address`);
  return out;
}

/** Vault's policyutil.ParsePolicies, applied to the deprecated `policies` key: lowercased, trimmed, unique, sorted. */
function parseLegacyPolicies(list: string[]): string[] {
  return [...new Set(list.map((p) => p.trim().toLowerCase()).filter((p) => p !== ''))].sort();
}

const same = (v: unknown): unknown => v;
/** Deprecated key, its token_* key, the TokenParams/LegacyTokenParams member, how to parse it. */
const LEGACY_KEYS: [string, string, keyof LegacyTokenParams, (raw: never) => unknown][] = [
  ['policies', 'token_policies', 'policies', parseLegacyPolicies],
  ['bound_cidrs', 'token_bound_cidrs', 'boundCidrs', parseCidrs],
  ['num_uses', 'token_num_uses', 'numUses', same],
  ['ttl', 'token_ttl', 'ttl', same],
  ['max_ttl', 'token_max_ttl', 'maxTtl', same],
  ['period', 'token_period', 'period', same],
];

/**
 * Applies the token fields present in a write onto `current` (absent fields keep their value),
 * in Vault's order: the token_* keys and their checks first, then the deprecated keys.
 * Throws a 400 with Vault's message on the first violation.
 */
export function parseTokenFields(current: TokenParams, f: FieldData): TokenParams {
  const p: TokenParams = { ...current, legacy: { ...current.legacy } };
  if (f.has('token_bound_cidrs')) p.boundCidrs = parseCidrs(f.get<string[]>('token_bound_cidrs'));
  if (f.has('token_explicit_max_ttl')) p.explicitMaxTtl = f.get<number>('token_explicit_max_ttl');
  if (f.has('token_max_ttl')) p.maxTtl = f.get<number>('token_max_ttl');
  if (f.has('token_no_default_policy')) p.noDefaultPolicy = f.get<boolean>('token_no_default_policy');
  if (f.has('token_period')) p.period = f.get<number>('token_period');
  if (f.has('token_policies')) p.policies = f.get<string[]>('token_policies');
  if (f.has('token_type')) {
    const raw = f.get<string>('token_type');
    // Own keys only: "constructor" or "toString" is no token type.
    const type = Object.hasOwn(TOKEN_TYPES, raw) ? TOKEN_TYPES[raw] : undefined;
    if (type === undefined) throw badRequest(`invalid 'token_type' value ${JSON.stringify(raw)}`);
    p.tokenType = type;
  }
  if (f.has('token_num_uses')) p.numUses = f.get<number>('token_num_uses');
  if (p.tokenType === 'batch') {
    if (p.period !== 0) throw badRequest("'token_type' cannot be 'batch' or 'default_batch' when set to generate periodic tokens");
    if (p.numUses !== 0) throw badRequest("'token_type' cannot be 'batch' or 'default_batch' when set to generate tokens with limited use count");
  }
  if (f.has('token_ttl')) p.ttl = f.get<number>('token_ttl');
  if (p.ttl > 0 && p.maxTtl > 0 && p.ttl > p.maxTtl) throw badRequest("'token_ttl' cannot be greater than 'token_max_ttl'");
  if (p.numUses < 0) throw badRequest("'token_num_uses' cannot be negative");

  // Deprecated keys (tokenutil.UpgradeValue): a legacy key alone sets the value and is kept;
  // sent with its token_* key, the legacy copy mirrors the new value; a token_* key alone drops it.
  const values = p as unknown as Record<string, unknown>;
  const legacy = p.legacy as Record<string, unknown>;
  for (const [oldKey, newKey, field, parse] of LEGACY_KEYS) {
    if (!f.has(newKey)) {
      if (f.has(oldKey)) legacy[field] = values[field] = parse(f.get(oldKey));
    } else if (f.has(oldKey)) legacy[field] = values[field];
    else delete legacy[field];
  }

  if (p.maxTtl > 0 && p.ttl > p.maxTtl) throw badRequest('ttl should not be greater than max ttl');
  return p;
}

/**
 * Checks against the mount's maximum lease TTL (seconds): a longer period is refused, a longer
 * max TTL only warned about (tokens get truncated). Returns the warnings.
 */
export function checkTokenLimits(p: TokenParams, mountMaxTTL: number): string[] {
  if (mountMaxTTL > 0 && p.period > mountMaxTTL) {
    // Vault quotes the already-quoted durations (%q inside '...').
    throw badRequest(`'period' of '"${formatGoDuration(p.period)}"' is greater than the backend's maximum lease TTL of '"${formatGoDuration(mountMaxTTL)}"'`);
  }
  if (mountMaxTTL > 0 && p.maxTtl > mountMaxTTL) {
    return ["token max ttl is greater than the system or backend mount's maximum TTL value; issued tokens' max TTL value will be truncated"];
  }
  return [];
}

/** The read view: every token_* key, plus the deprecated keys that are set. */
export function tokenFieldsView(p: TokenParams): Record<string, unknown> {
  const view: Record<string, unknown> = {
    token_bound_cidrs: p.boundCidrs,
    token_explicit_max_ttl: p.explicitMaxTtl,
    token_max_ttl: p.maxTtl,
    token_no_default_policy: p.noDefaultPolicy,
    token_num_uses: p.numUses,
    token_period: p.period,
    token_policies: p.policies,
    token_ttl: p.ttl,
    token_type: p.tokenType,
  };
  const l = p.legacy;
  if (l.policies && l.policies.length > 0) view.policies = p.policies;
  if (l.boundCidrs && l.boundCidrs.length > 0) view.bound_cidrs = p.boundCidrs;
  if (l.ttl) view.ttl = l.ttl;
  if (l.maxTtl) view.max_ttl = l.maxTtl;
  if (l.period) view.period = l.period;
  if (l.numUses) view.num_uses = l.numUses;
  return view;
}

/** The token settings of a login (the token-related members of LoginAuth). */
export function tokenLoginFields(
  p: TokenParams,
): Pick<LoginAuth, 'policies' | 'noDefaultPolicy' | 'ttl' | 'maxTtl' | 'explicitMaxTtl' | 'period' | 'numUses' | 'boundCidrs' | 'tokenType'> {
  return {
    policies: [...p.policies],
    noDefaultPolicy: p.noDefaultPolicy,
    ttl: p.ttl,
    maxTtl: p.maxTtl,
    explicitMaxTtl: p.explicitMaxTtl,
    period: p.period,
    numUses: p.numUses,
    boundCidrs: [...p.boundCidrs],
    tokenType: p.tokenType,
  };
}
