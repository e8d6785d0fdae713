// The token an auth method's login issues (Vault's core login handling): policies, type and
// lifetime from what the method returned (the role's token_* fields) within the mount's limits.
// The client's `auth` block is loginAuthBlock (auth/token/auth-block.ts).

import type { LoginAuth, MountConfigView } from '../framework/backend';
import { badRequest } from '../framework/errors';
import { formatRFC3339Nano } from '../framework/duration';
import type { TokenEntry } from '../core/tokens/entry';

export interface LoginContext {
  /** The mount's route prefix, e.g. "auth/jwt/". */
  mountPoint: string;
  mountConfig: MountConfigView;
  /** The auth mount's tuned token_type (default-service, default-batch, service or batch). */
  mountTokenType: string;
  /** The request path, e.g. "auth/jwt/login". */
  path: string;
  entityId: string;
  now: number;
}

/** service or batch: a mount tuned to one type forces it; otherwise the role's choice, else the mount's default. */
function tokenType(login: LoginAuth, mountType: string): 'service' | 'batch' {
  const role = login.tokenType === 'default' ? '' : login.tokenType;
  if (mountType === 'service' || mountType === 'batch') {
    if (role !== '' && role !== mountType) throw badRequest(`role requests a ${role} token but the mount only issues ${mountType} tokens`);
    return mountType;
  }
  if (role === 'service' || role === 'batch') return role;
  return mountType === 'default-batch' ? 'batch' : 'service';
}

/** "auth/jwt/" + "alice" → "jwt-alice" (Vault prefixes the mount path to the method's display name). */
function displayName(mountPoint: string, name: string): string {
  const mount = mountPoint.replace(/^auth\//, '').replace(/\/$/, '').replace(/\//g, '-');
  return `${mount}-${name}`;
}

/** The new token's entry (its accessor is assigned where it is stored). */
export function loginTokenEntry(login: LoginAuth, ctx: LoginContext): Omit<TokenEntry, 'accessor'> {
  const type = tokenType(login, ctx.mountTokenType);
  const policies = [...new Set([...login.policies, ...(login.noDefaultPolicy ? [] : ['default'])])].sort();
  if (type === 'batch' && policies.includes('root')) throw badRequest('batch tokens cannot be root tokens');
  // The role's max TTL caps the token's whole life, renewals included, like explicit_max_ttl does.
  const mountMax = ctx.mountConfig.maxLeaseTTL;
  const maxTtl = login.maxTtl > 0 ? Math.min(login.maxTtl, mountMax) : mountMax;
  const explicitMaxTtl = login.explicitMaxTtl > 0 ? Math.min(login.explicitMaxTtl, maxTtl) : login.maxTtl > 0 ? maxTtl : 0;
  let ttl: number;
  if (login.period > 0) ttl = explicitMaxTtl > 0 ? Math.min(login.period, explicitMaxTtl) : login.period;
  else ttl = Math.min(login.ttl || ctx.mountConfig.defaultLeaseTTL, explicitMaxTtl > 0 ? explicitMaxTtl : maxTtl);
  return {
    policies,
    path: ctx.path,
    meta: Object.keys(login.metadata).length > 0 ? { ...login.metadata } : null,
    displayName: displayName(ctx.mountPoint, login.displayName),
    numUses: type === 'batch' ? 0 : login.numUses,
    creationTime: Math.floor(ctx.now / 1000),
    issueTime: formatRFC3339Nano(ctx.now),
    ttl,
    explicitMaxTtl: type === 'batch' ? 0 : explicitMaxTtl,
    period: type === 'batch' ? 0 : login.period,
    renewable: type === 'service' && ttl > 0,
    orphan: true,
    entityId: ctx.entityId,
    type,
    expireTime: ttl > 0 ? ctx.now + ttl * 1000 : null,
    parent: '',
    role: login.role,
    boundCidrs: login.boundCidrs,
    lastRenewal: null,
  };
}
