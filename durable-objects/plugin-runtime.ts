// Loads a mount's plugin into an isolate of its own (the Worker Loader) and gives the MountObject
// its Backend. Before every load the module's bytes are read from the plugin directory and hashed:
// a file that no longer matches the catalog's sha256 is never run, and the mount answers a 500
// naming the plugin and the mismatch until the file is restored or the plugin re-registered.
// The isolate has no bindings and, unless its catalog env grants COFFER_ALLOW_NETWORK=1, no
// network; it reaches the mount's storage only through the capability each call carries.

import { RpcTarget } from 'cloudflare:workers';
import type { PluginRef } from '../src/core/plugins/entry';
import type { PluginEntrypoint, PluginStorage } from '../src/core/plugins/contract';
import { pluginLabel, problemText } from '../src/core/plugins/directory';
import { instrumentPlugin } from '../src/core/plugins/instrument';
import { pluginBackend } from '../src/core/plugins/proxy';
import { sha256Hex } from '../src/core/plugins/store';
import { strictUtf8 } from '../src/crypto/encoding';
import type { Backend } from '../src/framework/backend';
import { SharedDeadlines } from '../src/framework/deadline';
import { CofferError } from '../src/framework/errors';
import type { Storage } from '../src/framework/storage';
import type { Env } from '../src/rpc/env';
import { pluginStoreOf } from './plugin-store';

/** Steps (loop iterations and function entries) one call may take: about a second of a tight loop. */
const FUEL_PER_CALL = 200_000_000;
/** How long one call may take, awaits included (the catalog env's COFFER_CALL_DEADLINE_MS, within bounds). */
const CALL_DEADLINE_MS = 30_000;
const DEADLINE_BOUNDS = [100, 300_000] as const;
/** The CPU limit the Worker Loader enforces in production (not enforced locally: fuel is the guard there). */
const CPU_MS = 30_000;
const COMPATIBILITY_DATE = '2025-09-01';
/** Longest log line kept from a plugin. */
const MAX_LOG_LINE = 4096;

/** The mount's storage and log for one plugin call; its storage is dead once the call has ended. */
class StorageCapability extends RpcTarget implements PluginStorage {
  #inner: Storage | null;

  constructor(
    inner: Storage,
    readonly label: string,
  ) {
    super();
    this.#inner = inner;
  }

  #use(): Storage {
    if (!this.#inner) throw new Error('this storage capability belonged to a call that has ended');
    return this.#inner;
  }

  get(key: string) {
    return this.#use().get(checkKey(key));
  }
  put(key: string, value: Uint8Array) {
    if (!(value instanceof Uint8Array)) throw new TypeError('storage values must be Uint8Array');
    return this.#use().put(checkKey(key), value);
  }
  delete(key: string) {
    return this.#use().delete(checkKey(key));
  }
  list(prefix: string) {
    return this.#use().list(checkKey(prefix, true));
  }
  scan(prefix: string, after: string, limit: number) {
    return this.#use().scan(checkKey(prefix, true), checkKey(after, true), Math.max(0, Math.min(Number(limit) || 0, 10_000)));
  }
  revoke(): void {
    this.#inner = null;
  }
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string): void {
    const line = `[${this.label}] ${String(message).slice(0, MAX_LOG_LINE)}`;
    if (level === 'error') console.error(line);
    else if (level === 'warn') console.warn(line);
    else console.log(line);
  }
}

function checkKey(key: unknown, emptyOk = false): string {
  if (typeof key !== 'string' || (!emptyOk && key === '')) throw new TypeError('storage keys must be non-empty strings');
  return key;
}

/**
 * The isolate's env: the catalog entry's K=V entries, and its args (a module has no command line)
 * as the JSON list COFFER_PLUGIN_ARGS.
 */
function envOf(entries: string[], args: string[]): Record<string, string> {
  const out: Record<string, string> = args.length > 0 ? { COFFER_PLUGIN_ARGS: JSON.stringify(args) } : {};
  for (const e of entries) {
    const i = e.indexOf('=');
    if (i > 0) out[e.slice(0, i)] = e.slice(i + 1);
  }
  return out;
}

export interface PluginMount {
  uuid: string;
  type: string;
  mountPoint: string;
  revision: number;
  plugin: PluginRef;
}

/** Hashes, checks, instruments and loads the mount's plugin; its Backend. Throws a 500 CofferError naming the problem. */
export async function loadPlugin(env: Env, mount: PluginMount): Promise<Backend> {
  const ref = mount.plugin;
  const label = pluginLabel(mount.type, ref);
  const fail = (why: string) => new CofferError(500, [`${label} cannot be loaded: ${why}`]);
  const refuse = (check: Parameters<typeof problemText>[2]) => new CofferError(500, [problemText(mount.type, ref, check)]);
  const store = pluginStoreOf(env);
  if (!store) throw refuse({ ok: false, reason: 'no-directory' });
  if (!env.LOADER) throw fail('this deployment has no Worker Loader binding (LOADER)');
  let bytes: Uint8Array | null;
  try {
    bytes = await store.read(ref.command);
  } catch (e) {
    throw refuse({ ok: false, reason: 'unreadable', detail: e instanceof Error ? e.message : String(e) });
  }
  if (!bytes) throw refuse({ ok: false, reason: 'missing' });
  const sha256 = await sha256Hex(bytes);
  if (sha256 !== ref.sha256) throw refuse({ ok: false, reason: 'mismatch', actual: sha256 });
  const vars = envOf(ref.env, ref.args);
  const source = strictUtf8(bytes);
  if (source === null) throw fail(`${ref.command} is not UTF-8 JavaScript`);
  // One isolate per mount and load (the revision changes on every reload): plugin globals never
  // carry one mount's data into another's.
  const id = `${mount.uuid}:${mount.revision}:${sha256}`;
  const worker = env.LOADER.get(id, () => {
    const { mainModule, modules } = instrumentPlugin(source, { fuel: FUEL_PER_CALL });
    return {
      compatibilityDate: COMPATIBILITY_DATE,
      mainModule,
      modules,
      env: vars,
      // null: fetch() and connect() throw. Granted, the isolate inherits the Worker's plain network.
      ...(vars.COFFER_ALLOW_NETWORK === '1' ? {} : { globalOutbound: null }),
      limits: { cpuMs: CPU_MS },
    };
  });
  const plugin = worker.getEntrypoint(undefined, { limits: { cpuMs: CPU_MS } }) as unknown as PluginEntrypoint;
  const asked = Number(vars.COFFER_CALL_DEADLINE_MS);
  const deadlineMs = Number.isFinite(asked) && asked > 0 ? Math.min(Math.max(asked, DEADLINE_BOUNDS[0]), DEADLINE_BOUNDS[1]) : CALL_DEADLINE_MS;
  const deadlines = new SharedDeadlines(deadlineMs);
  let description;
  try {
    description = await deadlines.race(plugin.describe(), () => new Error(`it did not describe itself within ${deadlineMs / 1000}s`));
  } catch (e) {
    throw fail(`loading it failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  const logLabel = `${label} at ${mount.mountPoint}`;
  return pluginBackend(mount.type, description, plugin, {
    label,
    storage: (storage) => {
      const cap = new StorageCapability(storage, logLabel);
      return { value: cap, revoke: () => cap.revoke() };
    },
    deadlines,
  });
}
