// A plugin catalog entry, and the snapshot of one a mount runs (kept in its mount entry, so the
// hosting object loads exactly what was resolved at mount, tune or reload time).

export type PluginType = 'auth' | 'secret' | 'database';

/** One registered plugin version (sys/plugins/catalog/:type/:name). */
export interface CatalogEntry {
  type: PluginType;
  name: string;
  /** Semantic version with a leading "v", or "" when registered without one. */
  version: string;
  /** Lower-case hex. */
  sha256: string;
  /** The module file, relative to the plugin directory. */
  command: string;
  args: string[];
  /** "K=V" entries: the isolate's env. */
  env: string[];
}

/** What a mount of a plugin runs: the catalog entry as resolved for it. */
export type PluginRef = Omit<CatalogEntry, 'type'>;
