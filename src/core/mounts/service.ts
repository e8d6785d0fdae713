// Mount and auth tables: enable, disable, tune, remount, and the routes the Worker caches.
// Table changes are serialised and written straight to the barrier (not the request's
// transaction). Mounts never nest, so a Worker with stale routes either misses a new mount (it
// re-reads the routes) or reaches an object that answers "gone" (disabled, moved or tuned since).

import { randomHex, randomUUID } from '../../crypto/random';
import { formatRFC3339Nano } from '../../framework/duration';
import { badRequest } from '../../framework/errors';
import { convertField, type FieldType } from '../../framework/fields';
import { getJSON, putJSON, type Storage } from '../../framework/storage';
import {
  assertNoConflict,
  AUTH_TOKEN_TYPES,
  buildRoutes,
  LISTING_VISIBILITY,
  normalizeMountPath,
  PROTECTED_SECRET_PATHS,
  routePrefix,
  validateTTLs,
  type MountConfig,
  type MountEntry,
  type MountTable,
  type RouteEntry,
} from './table';
import { Mutex } from '../mutex';
import type { PluginRef, PluginType } from '../plugins/entry';
import { canonicalVersion } from '../plugins/version';
import { BUILTIN_PLUGIN_VERSION } from '../version';

const TABLES_KEY = 'core/mount-tables';
const REMOUNT_PREFIX = 'core/remount/';

interface Tables {
  version: number;
  mounts: MountEntry[];
  auth: MountEntry[];
}

/** How a mount type is hosted and what it accepts; the registry in src/registry.ts provides these. */
export interface MountTypeInfo {
  type: string;
  table: MountTable;
  /** Operators may enable it (false for sys, token, cubbyhole, identity). */
  mountable: boolean;
  /** Whether this type runs in its own MountObject. */
  ownObject: boolean;
  /** Validates and normalises `options`; throws a 400 when they are not acceptable. */
  validateOptions?(options: Record<string, string>, previous: Record<string, string> | null): Record<string, string> | null;
}

/** What mounts of catalog plugins need (src/core/plugins/). */
export interface MountPluginPorts {
  /**
   * The catalog entry a mount of plugin `name` runs at `version` ("" = the pinned version, else the
   * unversioned entry). Null when the catalog has no such plugin for the table; throws a 400 when it
   * has, but not at that version.
   */
  resolve(table: MountTable, name: string, version: string): Promise<PluginRef | null>;
  /** Why the plugin's module cannot be loaded now (missing, changed since registration), or null. */
  problem(name: string, ref: PluginRef): Promise<string | null>;
}

/** Which mounts a plugin reload names (sys/plugins/reload/...). */
export type ReloadTarget = { plugin: string; type: PluginType | 'unknown' } | { mounts: string[] };

/** One mount a reload reached. */
export interface ReloadedMount {
  /** Route prefix: "totp/", "auth/up/". */
  prefix: string;
  /** The catalog entry the mount now runs; absent for built-in mounts (nothing to reload). */
  plugin?: PluginRef;
  /** Why the reloaded plugin cannot run (the mount answers a 5xx until that is fixed). */
  problem?: string;
}

export interface MountServicePorts {
  /**
   * Prepares the mount's Durable Object with its entry (idempotent). For a plugin mount, a new
   * entry (revision bumped by tune or reload) makes the object load the plugin the entry names.
   */
  provision(entry: MountEntry): Promise<void>;
  /** Revokes every lease the mount issued; a message when some could not be (the disable stops). */
  revokeLeases(entry: MountEntry): Promise<string | null>;
  /** Erases the mount's Durable Object: data and alarm. */
  destroy(entry: MountEntry): Promise<void>;
  typeInfo(type: string): MountTypeInfo | undefined;
  /** Absent: the deployment mounts no catalog plugins. */
  plugins?: MountPluginPorts;
}

export interface EnableParams {
  type: string;
  description: string;
  config: Record<string, unknown>;
  options: Record<string, string>;
  local: boolean;
  seal_wrap: boolean;
  external_entropy_access: boolean;
  plugin_version: string;
  /** With type "plugin" (Vault's legacy form): the catalog plugin; config.plugin_name wins. */
  plugin_name: string;
}

const DEFAULT_SECRET_MOUNTS: Array<Pick<MountEntry, 'path' | 'type' | 'description' | 'local'> & { config?: Partial<MountConfig> }> = [
  { path: 'cubbyhole/', type: 'cubbyhole', description: 'per-token private secret storage', local: true },
  { path: 'identity/', type: 'identity', description: 'identity store', local: false },
  { path: 'sys/', type: 'system', description: 'system endpoints used for control, policy and debugging', local: false, config: { passthrough_request_headers: ['Accept'] } },
];

function newEntry(table: MountTable, path: string, type: string, fields: Partial<MountEntry> = {}): MountEntry {
  return {
    table,
    path,
    type,
    description: '',
    uuid: randomUUID(),
    accessor: `${table === 'auth' ? 'auth_' : ''}${type}_${randomHex(4)}`,
    local: false,
    sealWrap: false,
    externalEntropyAccess: false,
    options: null,
    pluginVersion: '',
    config: { default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false },
    revision: 1,
    ...fields,
  };
}

const CONFIG_FIELDS: Record<string, FieldType> = {
  default_lease_ttl: 'duration',
  max_lease_ttl: 'duration',
  force_no_cache: 'bool',
  audit_non_hmac_request_keys: 'comma-string-list',
  audit_non_hmac_response_keys: 'comma-string-list',
  listing_visibility: 'string',
  passthrough_request_headers: 'comma-string-list',
  allowed_response_headers: 'comma-string-list',
  allowed_managed_keys: 'comma-string-list',
  token_type: 'string',
};

/** Parses mount config input (enable's `config` or tune's top-level fields) with Vault's weak typing. */
export function parseConfigInput(raw: Record<string, unknown>, table: MountTable, type: string): Partial<MountConfig> {
  const out: Record<string, unknown> = {};
  for (const [name, ftype] of Object.entries(CONFIG_FIELDS)) {
    const v = raw[name];
    if (v === undefined) continue;
    if ((name === 'default_lease_ttl' || name === 'max_lease_ttl') && v === 'system') {
      out[name] = 0;
      continue;
    }
    try {
      out[name] = convertField(ftype, v);
    } catch (e) {
      throw badRequest(`error converting input ${JSON.stringify(v)} for field "${name}": ${(e as Error).message}`);
    }
  }
  if (out.listing_visibility !== undefined && !LISTING_VISIBILITY.includes(out.listing_visibility as string)) {
    throw badRequest(`invalid listing_visibility ${JSON.stringify(out.listing_visibility)}`);
  }
  if (out.token_type !== undefined && out.token_type !== '') {
    if (table !== 'auth') throw badRequest("'token_type' can only be modified on auth mounts");
    if (type === 'token') throw badRequest("'token_type' cannot be set on the token auth backend");
    if (!AUTH_TOKEN_TYPES.includes(out.token_type as string)) throw badRequest(`invalid value for 'token_type': ${out.token_type}`);
  }
  return out as Partial<MountConfig>;
}

export class MountService {
  private cache: Tables | null = null;
  private readonly lock = new Mutex();

  constructor(
    private readonly storage: Storage,
    private readonly ports: MountServicePorts,
  ) {}

  /** Drops the in-memory copy (after a seal: the next read goes through the barrier again). */
  forget(): void {
    this.cache = null;
  }

  private loading: Promise<Tables> | null = null;

  /** The tables; the first read after init creates the built-in mounts (one read in flight). */
  private load(): Promise<Tables> {
    if (this.cache) return Promise.resolve(this.cache);
    this.loading ??= (async () => {
      try {
        const tables = (await getJSON<Tables>(this.storage, TABLES_KEY)) ?? (await this.createDefaults());
        this.cache = tables;
        return tables;
      } finally {
        this.loading = null;
      }
    })();
    return this.loading;
  }

  /** The built-in mounts every cluster has, created on first use after init. */
  private async createDefaults(): Promise<Tables> {
    const tables: Tables = {
      version: 1,
      mounts: DEFAULT_SECRET_MOUNTS.map((m) =>
        newEntry('mounts', m.path, m.type, {
          description: m.description,
          local: m.local,
          config: { default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false, ...m.config },
        }),
      ),
      auth: [newEntry('auth', 'token/', 'token', { description: 'token based credentials', config: { default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false, token_type: 'default-service' } })],
    };
    for (const e of [...tables.mounts, ...tables.auth]) {
      if (this.ownsObject(e)) await this.ports.provision(e);
    }
    await putJSON(this.storage, TABLES_KEY, tables);
    return tables;
  }

  /** The routes the Worker caches, longest prefix first. */
  async routes(): Promise<RouteEntry[]> {
    const t = await this.load();
    return buildRoutes([...t.mounts, ...t.auth]);
  }

  /** Mounts that live in their own MountObject (for seal and key-rotation announcements). */
  async objectEntries(): Promise<MountEntry[]> {
    const t = await this.load();
    return [...t.mounts, ...t.auth].filter((e) => this.ownsObject(e));
  }

  async list(table: MountTable): Promise<MountEntry[]> {
    return [...(await this.load())[table]].sort((a, b) => a.path.localeCompare(b.path));
  }

  async get(table: MountTable, rawPath: string): Promise<MountEntry | null> {
    const path = normalizeMountPath(rawPath);
    return (await this.load())[table].find((e) => e.path === path) ?? null;
  }

  /** Applies a change to a copy of the tables and persists it; a failed change leaves no trace. */
  private mutate<T>(fn: (t: Tables) => Promise<T>): Promise<T> {
    return this.lock.run(async () => {
      const current = await this.load();
      const next: Tables = structuredClone(current);
      const out = await fn(next);
      next.version = current.version + 1;
      await putJSON(this.storage, TABLES_KEY, next);
      this.cache = next;
      return out;
    });
  }

  /** Whether the mount lives in a MountObject of its own (every catalog plugin's mount does). */
  private ownsObject(e: MountEntry): boolean {
    return e.plugin !== undefined || this.ports.typeInfo(e.type)?.ownObject === true;
  }

  /**
   * A plugin_version given for a built-in type: only the built-in version itself is accepted (and
   * stored as "", as Vault does); anything else is Vault's refusal.
   */
  private builtinVersion(table: MountTable, type: string, raw: string): string {
    const version = canonicalVersion(raw);
    if (version === '' || version === BUILTIN_PLUGIN_VERSION) return '';
    throw badRequest(`cannot select non-builtin version of ${table === 'auth' ? 'auth' : 'secrets'} plugin ${type}`);
  }

  /**
   * The catalog entry a plugin mount runs; null when the catalog has no such plugin for the table
   * (or the deployment mounts no plugins), a 400 when it has but the version rule finds no entry.
   */
  private async resolvePlugin(table: MountTable, type: string, version: string): Promise<PluginRef | null> {
    return this.ports.plugins ? await this.ports.plugins.resolve(table, type, version) : null;
  }

  private allPrefixes(t: Tables, except?: MountEntry): string[] {
    return [...t.mounts, ...t.auth].filter((e) => e !== except).map(routePrefix);
  }

  async enable(table: MountTable, rawPath: string, params: EnableParams): Promise<void> {
    const path = normalizeMountPath(rawPath);
    let type = params.type.trim();
    if (type === 'plugin') {
      // Vault's legacy form: the catalog plugin is named by plugin_name, config.plugin_name first.
      const fromConfig = params.config.plugin_name;
      type = (typeof fromConfig === 'string' && fromConfig.trim()) || params.plugin_name.trim();
      if (type === '') throw badRequest('plugin_name must be provided for plugin backend');
    }
    if (type === '') throw badRequest('backend type must be specified as a string');
    const options: Record<string, string> = { ...params.options };
    // kv-v1 / kv-v2 are aliases for kv with options.version.
    const alias = /^kv-v([12])$/.exec(type);
    if (alias && table === 'mounts') {
      type = 'kv';
      options.version = alias[1];
    }
    const info = this.ports.typeInfo(type);
    let pluginVersion = '';
    let plugin: PluginRef | null = null;
    let finalOptions: Record<string, string> | null;
    if (info) {
      if (info.table !== table) throw badRequest(`plugin not found in the catalog: ${type}`);
      if (!info.mountable) throw badRequest(`${type} ${table === 'auth' ? 'credential' : 'secrets'} backend cannot be instantiated at another path`);
      pluginVersion = this.builtinVersion(table, type, params.plugin_version);
      if ('version' in options && !info.validateOptions) throw badRequest(`secrets engine "${type}" does not allow setting a version`);
      finalOptions = info.validateOptions ? info.validateOptions(options, null) : Object.keys(options).length ? options : null;
    } else {
      pluginVersion = canonicalVersion(params.plugin_version);
      plugin = await this.resolvePlugin(table, type, pluginVersion);
      if (!plugin) throw badRequest(`plugin not found in the catalog: ${type}`);
      // A module that is missing or changed would only fail at its first request: refuse now.
      const problem = await this.ports.plugins?.problem(type, plugin);
      if (problem) throw badRequest(`cannot enable ${table === 'auth' ? 'auth method' : 'secrets engine'} ${JSON.stringify(type)}: ${problem}`);
      // A plugin's options are its own business.
      finalOptions = Object.keys(options).length ? options : null;
    }
    const config = parseConfigInput(params.config, table, type);
    validateTTLs(config.default_lease_ttl ?? 0, config.max_lease_ttl ?? 0);
    if (table === 'mounts' && PROTECTED_SECRET_PATHS.some((p) => path.startsWith(p))) throw badRequest(`cannot mount "${path}"`);

    await this.mutate(async (t) => {
      const prefix = table === 'auth' ? `auth/${path}` : path;
      assertNoConflict(prefix, this.allPrefixes(t));
      const entry = newEntry(table, path, type, {
        description: params.description,
        local: params.local,
        sealWrap: params.seal_wrap,
        externalEntropyAccess: params.external_entropy_access,
        options: finalOptions,
        pluginVersion,
        ...(plugin ? { plugin } : {}),
        config: { default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false, ...config },
      });
      // The object is ready before the table names it, so a routed request never finds it empty.
      if (this.ownsObject(entry)) await this.ports.provision(entry);
      t[table].push(entry);
    });
  }

  async disable(table: MountTable, rawPath: string): Promise<void> {
    const path = normalizeMountPath(rawPath);
    if (table === 'auth' && path === 'token/') throw badRequest('token credential backend cannot be disabled');
    if (table === 'mounts' && PROTECTED_SECRET_PATHS.includes(path)) throw badRequest(`cannot unmount "${path}"`);
    const removed = await this.lock.run(async () => (await this.load())[table].find((e) => e.path === path) ?? null);
    if (!removed) return;
    const ownObject = this.ownsObject(removed);
    // Leases first (Vault revokes a mount's leases on unmount): if that fails, nothing changes.
    const failure = ownObject ? await this.ports.revokeLeases(removed) : null;
    if (failure) throw badRequest(failure);
    await this.mutate(async (t) => {
      t[table] = t[table].filter((e) => e.uuid !== removed.uuid);
    });
    if (ownObject) await this.ports.destroy(removed);
  }

  async tune(table: MountTable, rawPath: string, raw: Record<string, unknown>): Promise<string[]> {
    const path = normalizeMountPath(rawPath);
    if (table === 'mounts' && ['sys/', 'cubbyhole/', 'identity/', 'audit/'].includes(path)) throw badRequest(`cannot tune "${path}"`);
    const warnings: string[] = [];
    await this.mutate(async (t) => {
      const entry = t[table].find((e) => e.path === path);
      if (!entry) throw badRequest(`no mount at "${table === 'auth' ? 'auth/' : ''}${path}"`);
      const config = parseConfigInput(raw, table, entry.type);
      const next: MountConfig = { ...entry.config, ...config };
      validateTTLs(next.default_lease_ttl, next.max_lease_ttl);
      entry.config = next;
      if (raw.description !== undefined) entry.description = String(raw.description);
      if (raw.plugin_version !== undefined) {
        const requested = String(raw.plugin_version ?? '');
        if (entry.plugin) {
          // Checked now, applied at the next reload (Vault's behaviour): the mount keeps running
          // the entry it resolved until sys/plugins/reload names it.
          const version = canonicalVersion(requested);
          const next = await this.resolvePlugin(table, entry.type, version);
          if (!next) throw badRequest(`plugin ${JSON.stringify(entry.type)} is no longer in the catalog`);
          entry.pluginVersion = version;
          if (next.version !== entry.plugin.version || next.sha256 !== entry.plugin.sha256) {
            warnings.push(`plugin_version takes effect when the mount is reloaded (sys/plugins/reload/backend); it runs ${entry.plugin.version || 'the unversioned entry'} until then`);
          }
        } else {
          entry.pluginVersion = this.builtinVersion(table, entry.type, requested);
        }
      }
      if (raw.options !== undefined) {
        const given = convertField('string-map', raw.options) as Record<string, string>;
        const info = this.ports.typeInfo(entry.type);
        if ('version' in given && !info?.validateOptions) throw badRequest(`secrets engine "${entry.type}" does not allow setting a version`);
        const merged: Record<string, string> = { ...(entry.options ?? {}) };
        for (const [k, v] of Object.entries(given)) {
          if (v === '' && k !== 'version') delete merged[k];
          else merged[k] = v;
        }
        entry.options = info?.validateOptions ? info.validateOptions(merged, entry.options) : Object.keys(merged).length ? merged : null;
      }
      entry.revision = (entry.revision ?? 0) + 1;
      if (this.ownsObject(entry)) await this.ports.provision(entry);
    });
    return warnings;
  }

  /**
   * sys/plugins/reload: re-resolves the catalog entry of every plugin mount the target names (its
   * plugin_version, else the pin, else the unversioned entry), bumps its revision and provisions its
   * object again, which loads the plugin anew. Built-in mounts named count as reloaded with nothing
   * to do. All or nothing: a mount that cannot be resolved or found fails the whole reload.
   */
  async reload(target: ReloadTarget): Promise<ReloadedMount[]> {
    const results: ReloadedMount[] = [];
    await this.mutate(async (t) => {
      const chosen = 'mounts' in target ? this.namedMounts(t, target.mounts) : this.mountsOfPlugin(t, target.plugin, target.type);
      const next = new Map<MountEntry, PluginRef>();
      for (const e of chosen) {
        if (!e.plugin) continue;
        const ref = await this.resolvePlugin(e.table, e.type, e.pluginVersion);
        if (!ref) throw badRequest(`cannot reload ${routePrefix(e)}: plugin ${JSON.stringify(e.type)} is no longer in the catalog`);
        next.set(e, ref);
      }
      for (const e of chosen) {
        const ref = next.get(e);
        if (!ref) {
          results.push({ prefix: routePrefix(e) });
          continue;
        }
        e.plugin = ref;
        e.revision = (e.revision ?? 0) + 1;
        await this.ports.provision(e);
        const problem = await this.ports.plugins?.problem(e.type, ref);
        results.push({ prefix: routePrefix(e), plugin: ref, ...(problem ? { problem } : {}) });
      }
    });
    return results;
  }

  /** Mounts named as Vault's reload takes them: "name", "name/", "auth/name", "sys/auth/name". */
  private namedMounts(t: Tables, raw: string[]): MountEntry[] {
    const out: MountEntry[] = [];
    for (const given of raw) {
      let p = given.trim().replace(/^\/+/, '');
      if (p.startsWith('sys/auth/')) p = p.slice('sys/'.length);
      const table: MountTable = p.startsWith('auth/') ? 'auth' : 'mounts';
      const rel = (table === 'auth' ? p.slice('auth/'.length) : p).replace(/\/*$/, '/');
      const entry = rel === '/' ? undefined : t[table].find((e) => e.path === rel);
      if (!entry) throw badRequest(`cannot fetch mount entry on ${JSON.stringify(rel === '/' ? given : table === 'auth' ? `auth/${rel}` : rel)}`);
      if (!out.includes(entry)) out.push(entry);
    }
    return out;
  }

  /** Every mount of a plugin (or built-in type) by name; `type` narrows the table. */
  private mountsOfPlugin(t: Tables, name: string, type: PluginType | 'unknown'): MountEntry[] {
    const tables: MountTable[] = type === 'auth' ? ['auth'] : type === 'secret' ? ['mounts'] : type === 'unknown' ? ['mounts', 'auth'] : [];
    return tables.flatMap((table) => t[table].filter((e) => e.type === name));
  }

  async remount(rawFrom: string, rawTo: string, now = Date.now()): Promise<string> {
    const from = normalizeMountPath(rawFrom);
    const to = normalizeMountPath(rawTo);
    const fromAuth = from.startsWith('auth/');
    if (fromAuth !== to.startsWith('auth/')) {
      throw badRequest(fromAuth ? 'cannot remount auth mount to non-auth mount' : 'cannot remount non-auth mount to auth mount');
    }
    const table: MountTable = fromAuth ? 'auth' : 'mounts';
    const fromPath = fromAuth ? from.slice(5) : from;
    const toPath = fromAuth ? to.slice(5) : to;
    if (fromAuth ? fromPath === 'token/' : PROTECTED_SECRET_PATHS.includes(from)) throw badRequest(`cannot remount "${from}"`);
    if (fromAuth ? toPath === '' : PROTECTED_SECRET_PATHS.some((p) => to.startsWith(p))) throw badRequest(`cannot remount to "${to}"`);
    if (toPath === '') throw badRequest('path cannot be empty');
    const id = randomUUID();
    const start = formatRFC3339Nano(now);
    await this.mutate(async (t) => {
      const entry = t[table].find((e) => e.path === fromPath);
      if (!entry) throw badRequest(`no matching mount at "${from}"`);
      assertNoConflict(to, this.allPrefixes(t, entry));
      entry.path = toPath;
      entry.revision = (entry.revision ?? 0) + 1;
      if (this.ownsObject(entry)) await this.ports.provision(entry);
    });
    await putJSON(this.storage, REMOUNT_PREFIX + id, {
      source_mount: from,
      target_mount: to,
      status: 'success',
      start_time: start,
      end_time: formatRFC3339Nano(Date.now()),
    });
    return id;
  }

  async remountStatus(id: string): Promise<Record<string, unknown> | null> {
    if (!/^[0-9a-f-]{36}$/.test(id)) return null;
    const info = await getJSON<Record<string, unknown>>(this.storage, REMOUNT_PREFIX + id);
    return info ? { migration_id: id, migration_info: info } : null;
  }
}
