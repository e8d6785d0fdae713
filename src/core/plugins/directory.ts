// Checking a catalog entry's module against the plugin directory: at registration (as Vault runs
// the binary then), when a mount is enabled, and whenever a mount listing reports whether a plugin
// mount can run. The MountObject hashes the bytes again before every load; this only reports.

import { sha256Hex, type PluginStore } from './store';
import type { PluginRef } from './entry';

/** The deployment's plugin directory and how messages name it. */
export interface PluginDirectory {
  store: PluginStore;
  /** E.g. "the plugin directory (COFFER_PLUGIN_DIR)". */
  label: string;
}

export type FileCheck =
  | { ok: true; bytes: Uint8Array }
  | { ok: false; reason: 'no-directory' }
  | { ok: false; reason: 'missing' }
  | { ok: false; reason: 'mismatch'; actual: string }
  | { ok: false; reason: 'unreadable'; detail: string };

export const NO_DIRECTORY =
  'no plugin directory is configured: set COFFER_PLUGIN_DIR for a local server, or bind the PLUGINS R2 bucket in production';

/** Reads `command` from the directory and compares its sha256 with `sha256` (lower-case hex). */
export async function checkPluginFile(dir: PluginDirectory | null, command: string, sha256: string): Promise<FileCheck> {
  if (!dir) return { ok: false, reason: 'no-directory' };
  let bytes: Uint8Array | null;
  try {
    bytes = await dir.store.read(command);
  } catch (e) {
    return { ok: false, reason: 'unreadable', detail: e instanceof Error ? e.message : String(e) };
  }
  if (bytes === null) return { ok: false, reason: 'missing' };
  const actual = await sha256Hex(bytes);
  return actual === sha256 ? { ok: true, bytes } : { ok: false, reason: 'mismatch', actual };
}

/** How messages name a plugin mount's plugin: `plugin "totp" v1.0.0`. */
export const pluginLabel = (name: string, ref: PluginRef): string => `plugin ${JSON.stringify(name)}${ref.version ? ` ${ref.version}` : ''}`;

/** Why a mount's plugin cannot run as resolved, or null when its module is there, unchanged. */
export async function pluginProblem(dir: PluginDirectory | null, name: string, ref: PluginRef): Promise<string | null> {
  const check = await checkPluginFile(dir, ref.command, ref.sha256);
  return check.ok ? null : problemText(name, ref, check, dir?.label);
}

/** The message for a failed check (listings, reload warnings, and the MountObject's refusal to load). */
export function problemText(name: string, ref: PluginRef, check: Exclude<FileCheck, { ok: true }>, dirLabel = 'the plugin directory'): string {
  const label = pluginLabel(name, ref);
  switch (check.reason) {
    case 'no-directory':
      return `${label} cannot be loaded: ${NO_DIRECTORY}`;
    case 'missing':
      return `${label} cannot be loaded: its module ${JSON.stringify(ref.command)} is missing from ${dirLabel}`;
    case 'mismatch':
      return `${label} refused: the sha256 of ${JSON.stringify(ref.command)} is ${check.actual}, but the catalog entry it runs pins ${ref.sha256} (the file changed after registration; register the new file and reload the mount)`;
    case 'unreadable':
      return `${label} cannot be loaded: reading ${JSON.stringify(ref.command)} failed: ${check.detail}`;
  }
}

/** plugin_status and plugin_error of a plugin mount in sys/mounts and sys/auth listings. */
export interface PluginStatus {
  plugin_status: 'running' | 'failed';
  plugin_error?: string;
}

/**
 * Computes listing statuses, hashing each (command, sha256) once per listing however many mounts
 * run it.
 */
export function pluginStatuses(dir: PluginDirectory | null): (name: string, ref: PluginRef) => Promise<PluginStatus> {
  const seen = new Map<string, Promise<string | null>>();
  return async (name, ref) => {
    const key = `${name}\u0000${ref.version}\u0000${ref.command}\u0000${ref.sha256}`;
    let problem = seen.get(key);
    if (!problem) seen.set(key, (problem = pluginProblem(dir, name, ref)));
    const p = await problem;
    return p === null ? { plugin_status: 'running' } : { plugin_status: 'failed', plugin_error: p };
  };
}
