// The rules of token creation and renewal (reference §3.3): policies, parentage, TTLs, batch and
// periodic tokens. Pure functions over plain values; the token store persists what they decide.

import type { RenewLimits } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import { formatGoDuration, formatRFC3339Nano } from '../../framework/duration';
import { roleAllowsPolicy, type TokenRole } from './roles';
import type { TokenEntry } from './entry';

/** Policies no token may be given explicitly. */
const RESERVED_POLICIES = ['response-wrapping', 'control-group'];

/** Lowercased, trimmed, deduplicated, sorted; "root" anywhere makes it exactly ["root"]. */
export function normalizePolicies(policies: string[], addDefault: boolean): string[] {
  const set = new Set(policies.map((p) => p.trim().toLowerCase()).filter((p) => p !== ''));
  if (set.has('root')) return ['root'];
  if (addDefault) set.add('default');
  return [...set].sort();
}

export function sanitizeDisplayName(name: string): string {
  const cleaned = name.trim().replace(/[^A-Za-z0-9]+/g, '-');
  return cleaned === '' ? 'token' : `token-${cleaned}`;
}

export interface CreateParams {
  id: string;
  policies: string[] | null;
  meta: Record<string, string>;
  noParent: boolean;
  noDefaultPolicy: boolean;
  renewable: boolean | null;
  ttl: number;
  explicitMaxTtl: number;
  displayName: string;
  numUses: number;
  period: number;
  type: string;
}

export interface CreateContext {
  /** The caller's token. */
  parent: TokenEntry;
  /** The caller holds root, or sudo on the create path. */
  sudo: boolean;
  /** auth/token/create-orphan: orphans without sudo. */
  orphanEndpoint: boolean;
  role: TokenRole | null;
  /** Effective TTLs of the auth/token/ mount and its default token type. */
  mount: { defaultLeaseTTL: number; maxLeaseTTL: number; tokenType: string };
  now: number;
}

export interface CreatedToken {
  entry: Omit<TokenEntry, 'accessor'>;
  warnings: string[];
}

function tokenType(params: CreateParams, ctx: CreateContext): 'service' | 'batch' {
  const roleType = ctx.role?.tokenType ?? '';
  const requested = params.type;
  if (requested !== '' && requested !== 'service' && requested !== 'batch') {
    throw badRequest(`invalid 'type' value "${requested}": must be "service" or "batch"`);
  }
  if (roleType === 'service' || roleType === 'batch') {
    if (requested !== '' && requested !== roleType) throw badRequest(`role only allows "${roleType}" tokens`);
    return roleType;
  }
  if (requested !== '') return requested;
  const fallback = roleType || ctx.mount.tokenType;
  return fallback === 'batch' || fallback === 'default-batch' ? 'batch' : 'service';
}

function choosePolicies(params: CreateParams, ctx: CreateContext, noDefault: boolean): string[] {
  const { parent, role } = ctx;
  for (const p of params.policies ?? []) {
    if (RESERVED_POLICIES.includes(p.trim().toLowerCase())) throw badRequest(`cannot assign policy "${p.trim().toLowerCase()}"`);
  }
  if (role) {
    // A role decides what may be granted; the parent's own policies do not limit it.
    const requested = params.policies ?? role.allowedPolicies;
    const policies = normalizePolicies(requested, false);
    for (const p of policies) {
      if (p === 'root' && !parent.policies.includes('root')) throw badRequest('root tokens may only be created by a root token');
      if (!roleAllowsPolicy(role, p)) throw badRequest(`token policies (${JSON.stringify(policies)}) must be subset of the role's allowed policies and not in its disallowed policies`);
    }
    const withDefault = !noDefault && !policies.includes('root') && roleAllowsPolicy(role, 'default');
    return normalizePolicies(policies, withDefault);
  }
  const requested = params.policies ?? parent.policies.filter((p) => !(noDefault && p === 'default'));
  const policies = normalizePolicies(requested, !noDefault);
  const parentIsRoot = parent.policies.includes('root');
  if (policies.includes('root') && !parentIsRoot) throw badRequest('root tokens may only be created by a root token');
  if (!ctx.sudo && !parentIsRoot) {
    const parentSet = new Set(parent.policies);
    const extra = policies.filter((p) => !parentSet.has(p) && !(p === 'default' && !noDefault));
    if (extra.length > 0) throw badRequest('child policies must be subset of parent');
  }
  return policies;
}

/** Decides a new token's entry from the request, the caller and the role. Throws 400s. */
export function createTokenEntry(params: CreateParams, ctx: CreateContext): CreatedToken {
  const { parent, role, now } = ctx;
  const warnings: string[] = [];
  const need = (what: string) => badRequest(`root or sudo privileges required to ${what}`);
  if (params.id !== '' && !ctx.sudo) throw need('specify token id');
  if (params.noParent && !ctx.sudo && !ctx.orphanEndpoint) throw need('create orphan token');
  if (params.period > 0 && !ctx.sudo && !role) throw need('create periodic token');
  if (params.numUses < 0) throw badRequest('number of uses cannot be negative');
  if (parent.type === 'batch') throw badRequest('batch tokens cannot create child tokens');
  if (parent.numUses > 0) throw badRequest('tokens with a use limit (num_uses) cannot create child tokens');
  if (params.id !== '' && (params.id.includes('.') || /^(hvs|hvb|s|b)\./.test(params.id))) {
    throw badRequest('custom token ids cannot contain "." or start with a token prefix');
  }

  const type = tokenType(params, ctx);
  const noDefault = params.noDefaultPolicy || (role?.noDefaultPolicy ?? false);
  const policies = choosePolicies(params, ctx, noDefault);
  const orphan = role ? role.orphan || params.noParent : params.noParent || ctx.orphanEndpoint;
  const numUses = params.numUses || role?.numUses || 0;
  const period = params.period || role?.period || 0;
  let explicitMaxTtl = params.explicitMaxTtl;
  if (role?.explicitMaxTtl && (explicitMaxTtl === 0 || role.explicitMaxTtl < explicitMaxTtl)) explicitMaxTtl = role.explicitMaxTtl;

  if (type === 'batch') {
    for (const [name, set] of [['explicit_max_ttl', params.explicitMaxTtl > 0], ['num_uses', numUses > 0], ['period', period > 0], ['id', params.id !== '']] as const) {
      if (set) throw badRequest(`batch tokens cannot have "${name}" set`);
    }
    if (policies.includes('root')) throw badRequest('batch tokens cannot be root tokens');
  }

  // TTL: periodic tokens live for their period; others for the requested or default TTL, capped
  // by explicit_max_ttl and the mount's maximum. A root token asked for no TTL never expires.
  let ttl: number;
  const rootForever = policies.includes('root') && params.ttl === 0 && explicitMaxTtl === 0 && period === 0;
  if (rootForever) {
    if (parent.expireTime !== null) throw badRequest('expiring root tokens cannot create non-expiring root tokens');
    ttl = 0;
  } else if (period > 0) {
    ttl = explicitMaxTtl > 0 ? Math.min(period, explicitMaxTtl) : period;
  } else {
    ttl = params.ttl || ctx.mount.defaultLeaseTTL;
    let max = ctx.mount.maxLeaseTTL;
    if (explicitMaxTtl > 0 && explicitMaxTtl < max) max = explicitMaxTtl;
    if (ttl > max) {
      warnings.push(`TTL of "${formatGoDuration(ttl)}" exceeded the effective max_ttl of "${formatGoDuration(max)}"; TTL value is capped accordingly`);
      ttl = max;
    }
  }

  const renewable = ttl > 0 && type === 'service' && (params.renewable ?? true) && (role?.renewable ?? true);
  const path = role ? `auth/token/create/${role.name}${role.pathSuffix ? `/${role.pathSuffix}` : ''}` : ctx.orphanEndpoint ? 'auth/token/create-orphan' : 'auth/token/create';
  return {
    warnings,
    entry: {
      policies,
      path,
      meta: Object.keys(params.meta).length > 0 ? params.meta : null,
      displayName: sanitizeDisplayName(params.displayName),
      numUses,
      creationTime: Math.floor(now / 1000),
      issueTime: formatRFC3339Nano(now),
      ttl,
      explicitMaxTtl,
      period,
      renewable,
      orphan,
      parent: orphan ? '' : parent.accessor,
      role: role?.name ?? '',
      boundCidrs: role ? role.boundCidrs : parent.boundCidrs,
      entityId: parent.entityId,
      type,
      expireTime: ttl > 0 ? now + ttl * 1000 : null,
      lastRenewal: null,
    },
  };
}

/**
 * Renewal (framework.CalculateTTL): periodic tokens get their period again; others the increment
 * (or their creation TTL), never past creation + min(max TTL, explicit max TTL).
 */
export function renewTTL(
  current: TokenEntry,
  increment: number,
  mountMaxTTL: number,
  now: number,
  limits?: RenewLimits,
): { ttl: number; warnings: string[] } {
  const warnings: string[] = [];
  // An auth method's current role settings replace the ones the token was issued with.
  const entry = limits ? withLimits(current, limits) : current;
  const elapsed = Math.floor(now / 1000) - entry.creationTime;
  if (entry.period > 0) {
    let ttl = entry.period;
    if (entry.explicitMaxTtl > 0) ttl = Math.min(ttl, entry.explicitMaxTtl - elapsed);
    return { ttl: Math.max(0, ttl), warnings };
  }
  let ttl = increment > 0 ? increment : entry.ttl;
  let max = mountMaxTTL;
  if (entry.explicitMaxTtl > 0 && entry.explicitMaxTtl < max) max = entry.explicitMaxTtl;
  const remaining = max - elapsed;
  if (ttl > remaining) {
    warnings.push(`TTL of "${formatGoDuration(ttl)}" exceeded the effective max_ttl of "${formatGoDuration(Math.max(0, remaining))}"; TTL value is capped accordingly`);
    ttl = remaining;
  }
  return { ttl: Math.max(0, ttl), warnings };
}

function withLimits(entry: TokenEntry, limits: RenewLimits): TokenEntry {
  const caps = [entry.explicitMaxTtl, limits.maxTtl].filter((n) => n > 0);
  return {
    ...entry,
    period: limits.period,
    ttl: limits.ttl || entry.ttl,
    explicitMaxTtl: caps.length > 0 ? Math.min(...caps) : 0,
  };
}
