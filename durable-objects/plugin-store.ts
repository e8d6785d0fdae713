// The plugin directory this deployment has: the launcher's folder service, else the R2 bucket.
import { bucketStore, directoryStore, type PluginStore } from '../src/core/plugins/store';
import type { Env } from '../src/rpc/env';

export function pluginStoreOf(env: Env): PluginStore | null {
  if (env.PLUGIN_DIR) return directoryStore(env.PLUGIN_DIR);
  if (env.PLUGINS) return bucketStore(env.PLUGINS);
  return null;
}
