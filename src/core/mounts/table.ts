// Mount tables: the model, path rules, and the JSON shapes of sys/mounts and sys/auth.

import { badRequest } from '../../framework/errors';
import type { PluginRef } from '../plugins/entry';
import { BUILTIN_PLUGIN_VERSION } from '../version';

export type MountTable = 'mounts' | 'auth';

/** Config block, stored with Vault's wire names. TTLs in seconds; 0 = system default. */
export interface MountConfig {
  default_lease_ttl: number;
  max_lease_ttl: number;
  force_no_cache: boolean;
  audit_non_hmac_request_keys?: string[];
  audit_non_hmac_response_keys?: string[];
  listing_visibility?: string;
  passthrough_request_headers?: string[];
  allowed_response_headers?: string[];
  allowed_managed_keys?: string[];
  token_type?: string;
}

export interface MountEntry {
  table: MountTable;
  /** Path inside its table, with trailing slash: "secret/", or "jwt/" for auth/jwt/. */
  path: string;
  type: string;
  description: string;
  uuid: string;
  accessor: string;
  local: boolean;
  sealWrap: boolean;
  externalEntropyAccess: boolean;
  options: Record<string, string> | null;
  pluginVersion: string;
  /** For a mount of a catalog plugin (type = the plugin's name): the version it runs. */
  plugin?: PluginRef;
  config: MountConfig;
  /**
   * Bumped whenever the entry changes (tune, remount). Requests carry the revision of the route
   * they were sent by, so an object answers "gone" to a Worker whose cached routes are stale.
   */
  revision: number;
}

/** System-wide TTL defaults (Vault: 768h for both). */
export const SYSTEM_DEFAULT_LEASE_TTL = 768 * 3600;
export const SYSTEM_MAX_LEASE_TTL = 768 * 3600;

/** Secrets mounts that cannot be mounted over, unmounted or tuned. */
export const PROTECTED_SECRET_PATHS = ['sys/', 'cubbyhole/', 'identity/', 'auth/', 'audit/'];
export const LISTING_VISIBILITY = ['', 'unauth', 'hidden'];
export const AUTH_TOKEN_TYPES = ['default-service', 'default-batch', 'service', 'batch'];

/** The logical prefix a mount serves: "secret/" or "auth/jwt/". */
export const routePrefix = (e: Pick<MountEntry, 'table' | 'path'>): string => (e.table === 'auth' ? `auth/${e.path}` : e.path);

/** Normalises a user-supplied mount path to "a/b/" and refuses anything ambiguous. */
export function normalizeMountPath(raw: string): string {
  const p = raw.replace(/^\/+/, '').replace(/\/+$/, '');
  if (p === '') throw badRequest('path cannot be empty');
  for (const seg of p.split('/')) {
    if (seg === '' || seg === '.' || seg === '..') throw badRequest(`invalid mount path "${raw}": empty, "." and ".." segments are not allowed`);
    // Control characters, spaces and ACL glob characters would make policies ambiguous.
    if (/[\u0000-\u0020\u007f*+]/.test(seg)) throw badRequest(`invalid mount path "${raw}": contains a control character, space, "*" or "+"`);
  }
  return `${p}/`;
}

/** Refuses a new route prefix that equals, contains or lies inside an existing one. */
export function assertNoConflict(prefix: string, existing: string[]): void {
  for (const other of existing) {
    if (prefix.startsWith(other)) {
      throw badRequest(prefix === other ? `path is already in use at ${other}` : `existing mount at ${other}`);
    }
    if (other.startsWith(prefix)) throw badRequest(`path is already in use at ${other}`);
  }
}

export function effectiveTTLs(config: MountConfig): { defaultLeaseTTL: number; maxLeaseTTL: number } {
  const maxLeaseTTL = config.max_lease_ttl || SYSTEM_MAX_LEASE_TTL;
  const defaultLeaseTTL = Math.min(config.default_lease_ttl || SYSTEM_DEFAULT_LEASE_TTL, maxLeaseTTL);
  return { defaultLeaseTTL, maxLeaseTTL };
}

/**
 * A mount's max may exceed the system max (Vault: the PKI tutorial tunes pki to 87600h); a default
 * may exceed it only under a max of the mount's own.
 */
export function validateTTLs(defaultTTL: number, maxTTL: number): void {
  if (maxTTL === 0 && defaultTTL > SYSTEM_MAX_LEASE_TTL) {
    throw badRequest(`given default lease TTL greater than system max lease TTL of ${SYSTEM_MAX_LEASE_TTL}`);
  }
  if (defaultTTL > 0 && maxTTL > 0 && defaultTTL > maxTTL) throw badRequest('given default lease TTL greater than given max lease TTL');
}

const OPTIONAL_CONFIG_KEYS = [
  'audit_non_hmac_request_keys',
  'audit_non_hmac_response_keys',
  'listing_visibility',
  'passthrough_request_headers',
  'allowed_response_headers',
  'allowed_managed_keys',
] as const;

/** The config object as sys/mounts shows it: list keys appear only when set. */
function configInfo(e: MountEntry): Record<string, unknown> {
  const c = e.config;
  const out: Record<string, unknown> = {
    default_lease_ttl: c.default_lease_ttl,
    max_lease_ttl: c.max_lease_ttl,
    force_no_cache: c.force_no_cache,
  };
  for (const k of OPTIONAL_CONFIG_KEYS) {
    const v = c[k];
    if (v !== undefined && (!Array.isArray(v) || v.length > 0) && v !== '') out[k] = v;
  }
  if (e.table === 'auth') out.token_type = c.token_type || 'default-service';
  return out;
}

/**
 * One mount as GET sys/mounts and GET sys/mounts/:path show it. A catalog plugin's mount shows the
 * version and sha256 it runs (and no deprecation_status, as Vault shows external plugins), plus
 * Coffer's plugin_status / plugin_error when the caller computed them (../plugins/directory.ts).
 */
export function mountInfo(e: MountEntry, plugin?: { plugin_status: string; plugin_error?: string }): Record<string, unknown> {
  return {
    accessor: e.accessor,
    config: configInfo(e),
    ...(e.plugin ? {} : { deprecation_status: 'supported' }),
    description: e.description,
    external_entropy_access: e.externalEntropyAccess,
    local: e.local,
    options: e.options,
    plugin_version: e.pluginVersion,
    running_plugin_version: e.plugin ? e.plugin.version : BUILTIN_PLUGIN_VERSION,
    running_sha256: e.plugin ? e.plugin.sha256 : '',
    seal_wrap: e.sealWrap,
    type: e.type,
    uuid: e.uuid,
    ...(e.plugin && plugin ? plugin : {}),
  };
}

/** GET sys/mounts/:path/tune: effective TTLs plus whatever optional settings are set. */
export function tuneInfo(e: MountEntry): Record<string, unknown> {
  const ttls = effectiveTTLs(e.config);
  const out: Record<string, unknown> = {
    default_lease_ttl: ttls.defaultLeaseTTL,
    description: e.description,
    force_no_cache: e.config.force_no_cache,
    max_lease_ttl: ttls.maxLeaseTTL,
  };
  if (e.options && Object.keys(e.options).length > 0) out.options = e.options;
  if (e.pluginVersion) out.plugin_version = e.pluginVersion;
  if (e.externalEntropyAccess) out.external_entropy_access = true;
  for (const k of OPTIONAL_CONFIG_KEYS) {
    const v = e.config[k];
    if (v !== undefined && (!Array.isArray(v) || v.length > 0) && v !== '') out[k] = v;
  }
  if (e.table === 'auth') out.token_type = e.config.token_type || 'default-service';
  return out;
}

/** What the Worker needs to route a request, derived from the tables. */
export interface RouteEntry {
  prefix: string;
  uuid: string;
  type: string;
  table: MountTable;
  revision: number;
  passthroughRequestHeaders: string[];
  /** Headers a backend's raw response may send (tune allowed_response_headers), lowercased. */
  allowedResponseHeaders: string[];
}

export function buildRoutes(entries: MountEntry[]): RouteEntry[] {
  return entries
    .map((e) => ({
      prefix: routePrefix(e),
      uuid: e.uuid,
      type: e.type,
      table: e.table,
      revision: e.revision ?? 0,
      passthroughRequestHeaders: e.config.passthrough_request_headers ?? [],
      allowedResponseHeaders: (e.config.allowed_response_headers ?? []).map((h) => h.toLowerCase()),
    }))
    .sort((a, b) => b.prefix.length - a.prefix.length || a.prefix.localeCompare(b.prefix));
}

/** Longest-prefix match; "secret" (no slash) addresses the root of "secret/". */
export function findRoute(routes: RouteEntry[], path: string): RouteEntry | null {
  for (const r of routes) {
    if (path.startsWith(r.prefix) || path === r.prefix.slice(0, -1)) return r;
  }
  return null;
}
