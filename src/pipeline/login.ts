// The token an auth method's login issues (Vault's core login handling): policies, type and
// lifetime from what the method returned (the role's token_* fields) within the mount's limits;
// the entity behind the login's alias; and the client's `auth` block (auth/token/auth-block.ts).

import type { LoginAuth, LogicalResponse, MountConfigView } from '../framework/backend';
import { badRequest, permissionDenied } from '../framework/errors';
import { formatRFC3339Nano } from '../framework/duration';
import { newServiceToken, type TokenEntry } from '../core/tokens/entry';
import type { IdentityLoginInput, IdentityLoginResult } from '../core/identity/types';
import type { MetricsRegistry } from '../core/metrics/registry';
import { countTokenCreation } from '../core/metrics/requests';
import { loginAuthBlock } from '../auth/token/auth-block';
import type { MountContext } from './dispatch';

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

/** What issuing a login needs from the auth mount's host. */
export interface LoginPorts {
  /** The entity behind an alias (created when new). */
  identity(input: IdentityLoginInput): Promise<IdentityLoginResult>;
  /** Stores a service token on its shard (the one `token` belongs to), or seals a batch token. */
  issue(token: string, partial: Omit<TokenEntry, 'accessor'>): Promise<{ token: string; entry: TokenEntry }>;
  metrics: MetricsRegistry;
}

/** The auth mount a login is served on. */
export interface LoginMount {
  context: MountContext;
  /** The auth mount's tuned token_type (unset: default-service). */
  tokenType?: string;
}

/**
 * Turns a login handler's result into a token: the entity behind the alias (created when new),
 * then the token on its shard, then Vault's `auth` block in place of `response.login`.
 */
export async function issueLogin(response: LogicalResponse, mount: LoginMount, path: string, ports: LoginPorts): Promise<void> {
  const login = response.login!;
  delete response.login;
  const { context } = mount;
  const identity = await ports.identity({
    mountAccessor: context.mountAccessor,
    mountPath: context.mountPoint,
    mountType: context.mountType,
    aliasName: login.aliasName,
    aliasMetadata: login.aliasMetadata,
    groupAliasNames: login.groupAliasNames,
  });
  if (identity.disabled) throw permissionDenied();
  const partial = loginTokenEntry(login, {
    mountPoint: context.mountPoint,
    mountConfig: context.mountConfig,
    mountTokenType: mount.tokenType || 'default-service',
    path,
    entityId: identity.entityId,
    now: Date.now(),
  });
  const issued = await ports.issue(newServiceToken(), partial);
  countTokenCreation(ports.metrics, { authMethod: context.mountType, mountPoint: context.mountPoint, ttl: issued.entry.ttl, type: issued.entry.type });
  response.auth = loginAuthBlock(issued.token, issued.entry, identity.policies);
}
