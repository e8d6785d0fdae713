// The plugin catalog (sys/plugins/catalog) and its pins (sys/plugins/pins), in the SystemObject's
// storage behind the barrier:
//   core/plugin-catalog/<type>/<name>   every registered version of one plugin (JSON, by version)
//   core/plugin-pins/<type>/<name>      the pinned version
// and how a mount's plugin is resolved from them. Writes go through whatever Storage the caller
// gives (sys/ handlers: the request's transaction).

import { badRequest } from '../../framework/errors';
import { getJSON, putJSON, type Storage } from '../../framework/storage';
import type { MountTable } from '../mounts/table';
import type { CatalogEntry, PluginRef, PluginType } from './entry';
import { compareVersions } from './version';

export const PLUGIN_TYPES: readonly PluginType[] = ['auth', 'database', 'secret'];

const CATALOG = 'core/plugin-catalog/';
const PINS = 'core/plugin-pins/';

/** Vault's GenericNameRegex: word characters, '-' and '.', starting and ending with a word character. */
const NAME = /^\w(?:[\w.-]*\w)?$/;

export const isPluginName = (name: string): boolean => NAME.test(name);

/** A compiled-in engine or auth method, as the catalog lists it. */
export interface BuiltinPlugin {
  type: PluginType;
  name: string;
}

export interface PinnedVersion {
  type: PluginType;
  name: string;
  version: string;
}

interface StoredPlugin {
  /** By version ("" for the unversioned entry). */
  versions: Record<string, CatalogEntry>;
}

/** The plugin type a mount table's catalog plugins have. */
export const pluginTypeOf = (table: MountTable): PluginType => (table === 'auth' ? 'auth' : 'secret');

export const refOf = (e: CatalogEntry): PluginRef => ({ name: e.name, version: e.version, sha256: e.sha256, command: e.command, args: [...e.args], env: [...e.env] });

export class PluginCatalog {
  constructor(private readonly storage: Storage) {}

  /** Every registered version of a plugin, oldest first ("" first). */
  async versions(type: PluginType, name: string): Promise<CatalogEntry[]> {
    if (!isPluginName(name)) return [];
    const stored = await getJSON<StoredPlugin>(this.storage, `${CATALOG}${type}/${name}`);
    return Object.values(stored?.versions ?? {}).sort((a, b) => compareVersions(a.version, b.version));
  }

  async get(type: PluginType, name: string, version: string): Promise<CatalogEntry | null> {
    return (await this.versions(type, name)).find((e) => e.version === version) ?? null;
  }

  /** Registers a version, or replaces the entry registered at the same (type, name, version). */
  async put(entry: CatalogEntry): Promise<void> {
    const key = `${CATALOG}${entry.type}/${entry.name}`;
    const stored = (await getJSON<StoredPlugin>(this.storage, key)) ?? { versions: {} };
    stored.versions[entry.version] = entry;
    await putJSON(this.storage, key, stored);
  }

  /** Removes one version (nothing when it is not registered). */
  async delete(type: PluginType, name: string, version: string): Promise<void> {
    if (!isPluginName(name)) return;
    const key = `${CATALOG}${type}/${name}`;
    const stored = await getJSON<StoredPlugin>(this.storage, key);
    if (!stored || !(version in stored.versions)) return;
    delete stored.versions[version];
    if (Object.keys(stored.versions).length === 0) await this.storage.delete(key);
    else await putJSON(this.storage, key, stored);
  }

  /** Names with at least one registered version, sorted. */
  async names(type: PluginType): Promise<string[]> {
    return (await this.storage.list(`${CATALOG}${type}/`)).filter((k) => !k.endsWith('/'));
  }

  async pin(type: PluginType, name: string): Promise<string | null> {
    if (!isPluginName(name)) return null;
    return (await getJSON<{ version: string }>(this.storage, `${PINS}${type}/${name}`))?.version ?? null;
  }

  async setPin(type: PluginType, name: string, version: string): Promise<void> {
    await putJSON(this.storage, `${PINS}${type}/${name}`, { version });
  }

  async deletePin(type: PluginType, name: string): Promise<void> {
    if (isPluginName(name)) await this.storage.delete(`${PINS}${type}/${name}`);
  }

  /** Every pin, by type then name. */
  async pins(): Promise<PinnedVersion[]> {
    const out: PinnedVersion[] = [];
    for (const type of PLUGIN_TYPES) {
      for (const name of await this.storage.list(`${PINS}${type}/`)) {
        if (name.endsWith('/')) continue;
        const version = await this.pin(type, name);
        if (version !== null) out.push({ type, name, version });
      }
    }
    return out;
  }
}

const listVersions = (entries: CatalogEntry[]): string => entries.map((e) => e.version || '(unversioned)').join(', ');

/**
 * What a mount of catalog plugin `name` in `table` runs (Vault's rule): the pinned version; else
 * the requested one; else the unversioned entry; else the newest. Null when the catalog has no
 * such plugin for this table; a 400 when the requested or pinned version is not registered.
 */
export async function resolvePlugin(catalog: PluginCatalog, table: MountTable, name: string, requested: string): Promise<PluginRef | null> {
  const type = pluginTypeOf(table);
  const entries = await catalog.versions(type, name);
  if (entries.length === 0) {
    if (table === 'mounts' && (await catalog.versions('database', name)).length > 0) {
      throw badRequest(`plugin ${JSON.stringify(name)} is registered as a database plugin, and Coffer has no database secrets engine to run it in`);
    }
    return null;
  }
  const label = `${type} plugin ${JSON.stringify(name)}`;
  const requestedEntry = requested === '' ? undefined : entries.find((e) => e.version === requested);
  if (requested !== '' && !requestedEntry) throw badRequest(`${label} has no version ${requested} in the catalog (registered: ${listVersions(entries)})`);
  // Vault's order: a pin wins even over the mount's own plugin_version; then that version; then
  // the unversioned entry; then the newest registered version.
  const pinned = await catalog.pin(type, name);
  if (pinned !== null) {
    const hit = entries.find((e) => e.version === pinned);
    if (!hit) throw badRequest(`${label} is pinned to version ${pinned}, which is no longer registered (registered: ${listVersions(entries)})`);
    return refOf(hit);
  }
  // versions() sorts by semver: the last is the newest.
  return refOf(requestedEntry ?? entries.find((e) => e.version === '') ?? entries[entries.length - 1]!);
}
