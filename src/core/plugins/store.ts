// The plugin directory: where catalog `command`s name module bundles. An R2 bucket in production
// (binding PLUGINS), a folder of the data dir locally (binding PLUGIN_DIR: a service the launcher
// answers from COFFER_PLUGIN_DIR). Both reduce to "the bytes of this file, or null".

import { toHex } from '../../crypto/encoding';

export interface PluginStore {
  read(command: string): Promise<Uint8Array | null>;
}

/** The parts of an R2 bucket binding the store uses. */
interface BucketLike {
  get(key: string): Promise<{ arrayBuffer(): Promise<ArrayBuffer> } | null>;
}

/** The parts of a service binding the store uses. */
interface FetcherLike {
  fetch(input: string): Promise<Response>;
}

export function bucketStore(bucket: BucketLike): PluginStore {
  return {
    async read(command) {
      const object = await bucket.get(command);
      return object ? new Uint8Array(await object.arrayBuffer()) : null;
    },
  };
}

export function directoryStore(service: FetcherLike): PluginStore {
  return {
    async read(command) {
      const res = await service.fetch(`http://plugin-dir/${command.split('/').map(encodeURIComponent).join('/')}`);
      if (res.status === 404) return null;
      if (!res.ok) throw new Error(`plugin directory answered ${res.status} for ${command}`);
      return new Uint8Array(await res.arrayBuffer());
    },
  };
}

/**
 * Why `command` cannot name a file of the plugin directory, or null. Relative, no "." or ".."
 * segments, no backslashes or control characters: it must not reach outside the directory.
 */
export function commandProblem(command: string): string | null {
  if (command === '') return 'command must be set';
  if (command.startsWith('/')) return 'command must be relative to the plugin directory';
  if (/[\\\u0000-\u001f\u007f]/.test(command)) return 'command contains a backslash or a control character';
  if (command.split('/').some((seg) => seg === '' || seg === '.' || seg === '..')) return 'command must not contain empty, "." or ".." segments';
  return null;
}

export async function sha256Hex(bytes: Uint8Array): Promise<string> {
  return toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)));
}
