// sys/plugins/catalog, sys/plugins/pins and sys/plugins/reload. The catalog and pins live in the
// SystemObject's storage (src/core/plugins/catalog.ts), written through the request's transaction;
// mounting and reloading go through the mount tables (src/core/mounts/service.ts). catalog/* is a
// sudo path (SYS_SUDO_PATHS, as in Vault); GET sys/plugins/catalog is not.

import { routePrefix, type MountEntry } from '../../core/mounts/table';
import type { ReloadedMount, ReloadTarget } from '../../core/mounts/service';
import { isPluginName, PLUGIN_TYPES, PluginCatalog, type PinnedVersion } from '../../core/plugins/catalog';
import type { CatalogEntry, PluginType } from '../../core/plugins/entry';
import { assertModuleMatches, catalogEntryOf } from '../../core/plugins/register';
import { canonicalVersion, compareVersions, isBuiltinVersion } from '../../core/plugins/version';
import { BUILTIN_PLUGIN_VERSION } from '../../core/version';
import { nameRegex, type LogicalRequest, type LogicalResponse, type PathDef } from '../../framework/backend';
import { formatRFC3339Nano } from '../../framework/duration';
import { badRequest, CofferError, notFound } from '../../framework/errors';
import type { FieldSchemas } from '../../framework/fields';
import { getJSON, putJSON, type Storage } from '../../framework/storage';
import type { SystemServices } from '../context';

const TYPE = '(?<type>auth|database|secret)';

const typeField = { type: 'string', description: 'Plugin type: auth, database or secret.' } as const;
const nameField = { type: 'string', description: 'The plugin name in the catalog.' } as const;
const versionField = { type: 'string', description: 'Semantic version ("v" optional); empty for the unversioned entry.' } as const;

const registerFields: FieldSchemas = {
  type: typeField,
  name: nameField,
  version: versionField,
  sha256: { type: 'string', description: 'SHA-256 of the module file, hex (required); checked before every load.' },
  sha_256: { type: 'string', description: 'Older spelling of sha256.' },
  command: { type: 'string', description: 'The module file, relative to the plugin directory (required).' },
  args: { type: 'string-list', description: 'Arguments handed to the plugin.' },
  env: { type: 'string-list', description: 'KEY=VALUE entries: the plugin isolate\'s env (COFFER_ALLOW_NETWORK=1 grants fetch).' },
  oci_image: { type: 'string', description: 'Not supported (plugins are modules, not containers).' },
  runtime: { type: 'string', description: 'Not supported.' },
};

/** GET sys/plugins/catalog: names per type (built-ins included) and every version in `detailed`. */
async function catalogListing(s: SystemServices, catalog: PluginCatalog): Promise<Record<string, unknown>> {
  const data: Record<string, unknown> = {};
  const detailed: Array<Record<string, unknown>> = [];
  for (const type of PLUGIN_TYPES) {
    const builtins = s.plugins.builtins.filter((b) => b.type === type).map((b) => b.name);
    const registered = await catalog.names(type);
    const names = [...new Set([...builtins, ...registered])].sort();
    if (names.length > 0) data[type] = names;
    const rows: Array<{ type: PluginType; name: string; version: string } & Record<string, unknown>> = builtins.map((name) => ({
      type,
      name,
      version: BUILTIN_PLUGIN_VERSION,
      builtin: true,
      deprecation_status: 'supported',
    }));
    for (const name of registered) {
      for (const e of await catalog.versions(type, name)) rows.push({ type, name, version: e.version, builtin: false, sha256: e.sha256 });
    }
    rows.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : compareVersions(a.version, b.version)));
    detailed.push(...rows);
  }
  data.detailed = detailed;
  return data;
}

/** Env is left out, as Vault leaves it out: it may hold credentials. */
const entryView = (e: CatalogEntry): Record<string, unknown> => ({ name: e.name, command: e.command, args: e.args, sha256: e.sha256, builtin: false, version: e.version });

/** Mounts currently running (type, name, version). */
function mountsRunning(entries: MountEntry[], type: PluginType, name: string, version: string): string[] {
  const table = type === 'auth' ? 'auth' : type === 'secret' ? 'mounts' : null;
  return entries.filter((e) => e.table === table && e.plugin?.name === name && e.plugin.version === version).map(routePrefix);
}

function catalogPaths(s: SystemServices): PathDef[] {
  const catalog = (req: LogicalRequest) => new PluginCatalog(req.storage);
  const builtinOf = (type: PluginType, name: string) => s.plugins.builtins.find((b) => b.type === type && b.name === name);
  const deprecated = (what: string, name: string): LogicalResponse => ({ warnings: [`Deprecated API endpoint, cannot ${what} catalog for ${JSON.stringify(name)}`] });

  return [
    {
      pattern: 'plugins/catalog/?',
      summary: 'Lists the plugins in the catalog: names per type, and every version in detailed.',
      operations: {
        read: async (req) => ({ data: await catalogListing(s, catalog(req)) }),
      },
    },
    {
      pattern: `plugins/catalog/${TYPE}/?`,
      fields: { type: typeField },
      summary: 'Lists the plugin names of one type (built-ins included).',
      operations: {
        list: async (req, f) => {
          const type = f.get<PluginType>('type');
          const names = new Set([...s.plugins.builtins.filter((b) => b.type === type).map((b) => b.name), ...(await catalog(req).names(type))]);
          return { data: { keys: [...names].sort() } };
        },
      },
    },
    {
      pattern: `plugins/catalog/${TYPE}/(?<name>.+)`,
      fields: registerFields,
      summary: 'Registers, reads or removes one version of a plugin.',
      operations: {
        update: async (req, f) => {
          const entry = catalogEntryOf(
            {
              type: f.get('type'),
              name: f.get('name'),
              sha256: f.get<string>('sha256') || f.get<string>('sha_256'),
              command: f.get('command'),
              args: f.get('args'),
              env: f.get('env'),
              version: f.get('version'),
              ociImage: f.get('oci_image'),
              runtime: f.get('runtime'),
            },
            s.plugins.isBuiltinName,
          );
          // As Vault runs the binary at registration: the module must be there, with these bytes.
          await assertModuleMatches(s.plugins.directory, entry);
          await catalog(req).put(entry);
          return null;
        },
        read: async (req, f) => {
          const type = f.get<PluginType>('type');
          const name = f.get<string>('name');
          const version = canonicalVersion(f.get('version'));
          if (builtinOf(type, name) && (version === '' || version === BUILTIN_PLUGIN_VERSION)) {
            return { data: { name, command: '', args: [], sha256: '', builtin: true, version: BUILTIN_PLUGIN_VERSION, deprecation_status: 'supported' } };
          }
          // Registered with a version, a plugin is read with that version (no default), as in Vault.
          const entry = isPluginName(name) ? await catalog(req).get(type, name, version) : null;
          if (!entry) throw notFound();
          return { data: entryView(entry) };
        },
        delete: async (req, f) => {
          const type = f.get<PluginType>('type');
          const name = f.get<string>('name');
          const version = canonicalVersion(f.get('version'));
          if (isBuiltinVersion(version) || (version === '' && builtinOf(type, name))) throw badRequest(`version ${JSON.stringify(version || BUILTIN_PLUGIN_VERSION)} cannot be deleted`);
          const plugins = catalog(req);
          if (!(await plugins.get(type, name, version))) return null;
          if ((await plugins.pin(type, name)) === version) {
            throw badRequest(`cannot delete ${type} plugin ${JSON.stringify(name)} version ${version || '(unversioned)'}: it is pinned; delete the pin first (sys/plugins/pins/${type}/${name})`);
          }
          await plugins.delete(type, name, version);
          const users = mountsRunning([...(await s.mounts.list('mounts')), ...(await s.mounts.list('auth'))], type, name, version);
          if (users.length === 0) return null;
          return {
            warnings: [`${users.join(', ')} still run${users.length === 1 ? 's' : ''} this version: it keeps running until reloaded, and a reload fails until another version is registered or selected (tune plugin_version)`],
          };
        },
      },
    },
    {
      // Vault's untyped endpoint (before plugin types): reads and deletes only warn.
      pattern: 'plugins/catalog/(?<name>.+)',
      fields: { name: nameField, ...Object.fromEntries(Object.entries(registerFields).filter(([k]) => k !== 'type' && k !== 'name')) },
      summary: 'Deprecated untyped catalog endpoint.',
      operations: {
        read: async (_req, f) => deprecated('read plugin information from', f.get('name')),
        delete: async (_req, f) => deprecated('deregister plugin from', f.get('name')),
        update: async (_req, f) => {
          throw badRequest(`a plugin type is required: register ${JSON.stringify(f.get('name'))} at sys/plugins/catalog/<auth|database|secret>/${f.get<string>('name')}`);
        },
      },
    },
  ];
}

function pinPaths(): PathDef[] {
  const pins = (req: LogicalRequest) => new PluginCatalog(req.storage);
  const listing = async (req: LogicalRequest): Promise<LogicalResponse> => ({ data: { pinned_versions: await pins(req).pins() } });
  return [
    {
      pattern: 'plugins/pins/?',
      summary: 'Lists every pinned plugin version.',
      operations: { read: listing, list: listing },
    },
    {
      pattern: `plugins/pins/${TYPE}/${nameRegex('name')}`,
      fields: { type: typeField, name: nameField, version: { type: 'string', description: 'The registered version every mount of the plugin without a plugin_version runs (after a reload).' } },
      summary: 'Pins, reads or unpins the version of a plugin.',
      operations: {
        update: async (req, f) => {
          const type = f.get<PluginType>('type');
          const name = f.get<string>('name');
          const raw = f.get<string>('version');
          if (raw === '') throw badRequest('missing version: give the registered version to pin');
          const version = canonicalVersion(raw);
          if (isBuiltinVersion(version)) throw badRequest(`version ${JSON.stringify(version)} is a builtin version and cannot be pinned`);
          const catalog = pins(req);
          if (!(await catalog.get(type, name, version))) {
            const known = (await catalog.versions(type, name)).map((e) => e.version || '(unversioned)');
            throw badRequest(`cannot pin ${type} plugin ${JSON.stringify(name)} to ${version}: that version is not registered in the catalog${known.length ? ` (registered: ${known.join(', ')})` : ''}`);
          }
          await catalog.setPin(type, name, version);
          return null;
        },
        read: async (req, f) => {
          const type = f.get<PluginType>('type');
          const name = f.get<string>('name');
          const version = await pins(req).pin(type, name);
          if (version === null) throw notFound();
          return { data: { name, type, version } satisfies PinnedVersion };
        },
        delete: async (req, f) => {
          await pins(req).deletePin(f.get('type'), f.get('name'));
          return null;
        },
      },
    },
  ];
}

/** What GET sys/plugins/reload/backend/status answers, kept for the last reloads. */
interface ReloadRecord {
  reload_id: string;
  timestamp: string;
  /** By mount (route prefix): when it was reloaded, and why its plugin cannot run ("" when it can). */
  results: Record<string, { timestamp: string; error: string; running_plugin_version?: string; running_sha256?: string }>;
}

const RELOADS_KEY = 'core/plugin-reloads';
const RELOADS_KEPT = 20;

async function recordReload(storage: Storage, record: ReloadRecord): Promise<void> {
  const kept = (await getJSON<ReloadRecord[]>(storage, RELOADS_KEY)) ?? [];
  await putJSON(storage, RELOADS_KEY, [...kept, record].slice(-RELOADS_KEPT));
}

function reloadPaths(s: SystemServices): PathDef[] {
  const scopeField = { type: 'string', description: 'Empty (this cluster) or "global"; one Coffer deployment is one cluster, so both reload everywhere.' } as const;

  const checkScope = (scope: string): void => {
    if (scope !== '' && scope !== 'global') throw badRequest("reload scope must be omitted or 'global'");
  };

  const reload = async (req: LogicalRequest, scope: string, target: ReloadTarget, nothing: string): Promise<LogicalResponse> => {
    const reloaded: ReloadedMount[] = await s.mounts.reload(target);
    const timestamp = formatRFC3339Nano(Date.now());
    const results: ReloadRecord['results'] = {};
    const warnings: string[] = [];
    for (const r of reloaded) {
      results[r.prefix] = {
        timestamp,
        error: r.problem ?? '',
        ...(r.plugin ? { running_plugin_version: r.plugin.version, running_sha256: r.plugin.sha256 } : {}),
      };
      if (r.problem) warnings.push(`${r.prefix} was reloaded, but its plugin cannot run: ${r.problem}`);
    }
    if (reloaded.length === 0) warnings.push(nothing);
    await recordReload(req.storage, { reload_id: req.id, timestamp, results });
    // Vault answers a global reload 202 (it continues on other nodes); here it is already done.
    return { data: { reload_id: req.id }, ...(warnings.length ? { warnings } : {}), ...(scope === 'global' ? { status: 202 } : {}) };
  };

  return [
    {
      pattern: 'plugins/reload/backend/status',
      fields: { reload_id: { type: 'string', description: 'The reload_id a reload answered.' } },
      summary: 'What a recent plugin reload did, per mount.',
      operations: {
        read: async (req, f) => {
          const id = f.get<string>('reload_id');
          if (id === '') throw badRequest('missing reload_id');
          const found = ((await getJSON<ReloadRecord[]>(req.storage, RELOADS_KEY)) ?? []).find((r) => r.reload_id === id);
          if (!found) throw new CofferError(404, [`no plugin reload with id ${JSON.stringify(id)} (the last ${RELOADS_KEPT} reloads are kept)`]);
          return { data: { ...found } };
        },
      },
    },
    {
      pattern: 'plugins/reload/backend',
      fields: {
        plugin: { type: 'string', description: 'Reload every mount of this plugin (catalog name or built-in type).' },
        mounts: { type: 'comma-string-list', description: 'Reload these mounts ("auth/" prefix for auth methods).' },
        scope: scopeField,
      },
      summary: 'Reloads plugin mounts: each resolves its catalog entry again and loads it anew.',
      operations: {
        update: async (req, f) => {
          const scope = f.get<string>('scope');
          checkScope(scope);
          const plugin = f.get<string>('plugin');
          const mounts = f.get<string[]>('mounts');
          if (plugin !== '' && mounts.length > 0) throw badRequest('plugin and mounts cannot be set at the same time');
          if (plugin === '' && mounts.length === 0) throw badRequest('plugin or mounts must be provided');
          const target: ReloadTarget = plugin !== '' ? { plugin, type: 'unknown' } : { mounts };
          return reload(req, scope, target, `no plugins were reloaded: no mount runs plugin ${JSON.stringify(plugin)}`);
        },
      },
    },
    {
      pattern: `plugins/reload/(?<type>auth|database|secret|unknown)/${nameRegex('name')}`,
      fields: { type: { type: 'string', description: 'auth, database, secret, or unknown (every type).' }, name: nameField, scope: scopeField },
      summary: 'Reloads every mount of a plugin.',
      operations: {
        update: async (req, f) => {
          const type = f.get<PluginType | 'unknown'>('type');
          const name = f.get<string>('name');
          const what = type === 'unknown' ? `plugin ${JSON.stringify(name)}` : `${type} plugin ${JSON.stringify(name)}`;
          checkScope(f.get('scope'));
          return reload(req, f.get('scope'), { plugin: name, type }, `no plugins were reloaded: no mount runs ${what}`);
        },
      },
    },
  ];
}

export function pluginPaths(s: SystemServices): PathDef[] {
  return [...catalogPaths(s), ...pinPaths(), ...reloadPaths(s)];
}
