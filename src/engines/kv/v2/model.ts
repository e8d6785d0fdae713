// The version state machine of a KV v2 secret, as pure functions over its metadata record.
// A version is active, soft-deleted (deletion_time reached: data kept, not returned) or
// destroyed (data erased). Times are ms since the epoch; durations are seconds.

import { badRequest } from '../../../framework/errors';

export interface VersionRecord {
  created: number;
  /** When the version is (or was) soft-deleted; null: never. A future time is a scheduled deletion. */
  deletion: number | null;
  destroyed: boolean;
}

export interface KeyMeta {
  created: number;
  updated: number;
  /** Latest version number (0: none yet). */
  current: number;
  /** Vault's oldest_version: below it versions were pruned (0 until the first pruning). */
  oldest: number;
  maxVersions: number;
  casRequired: boolean;
  /** Seconds; 0: the engine's setting applies. */
  deleteVersionAfter: number;
  customMetadata: Record<string, string> | null;
  versions: Record<string, VersionRecord>;
  /** The JSON text of versions whose data is kept in this record rather than in a row of its own (store.ts). */
  inline?: Record<string, string>;
}

export interface EngineConfig {
  maxVersions: number;
  casRequired: boolean;
  /** Seconds; 0: none; DELETE_AFTER_DISABLED: ignored on every key. */
  deleteVersionAfter: number;
}

export const DEFAULT_MAX_VERSIONS = 10;
/** Vault stores a negative engine delete_version_after as -1s: "disabled on all keys". */
export const DELETE_AFTER_DISABLED = -1;
export const DEFAULT_CONFIG: EngineConfig = { maxVersions: 0, casRequired: false, deleteVersionAfter: 0 };

export function newMeta(now: number): KeyMeta {
  return { created: now, updated: now, current: 0, oldest: 0, maxVersions: 0, casRequired: false, deleteVersionAfter: 0, customMetadata: null, versions: {} };
}

/** Soft-deleted: the deletion time has come (a version reads as deleted from that very ms). */
export const isDeleted = (v: VersionRecord, now: number): boolean => v.deletion !== null && v.deletion <= now;
export const isLive = (v: VersionRecord, now: number): boolean => !v.destroyed && !isDeleted(v, now);

/** Whether the current version exists and is deleted or destroyed (it hides the key from exclude_deleted lists). */
export function currentGone(meta: KeyMeta, now: number): boolean {
  const v = meta.versions[meta.current];
  return v !== undefined && !isLive(v, now);
}

/**
 * Whether the current version can never have been gone: none yet, or one with no deletion time
 * that is not destroyed. Then no gone/ entry exists for the secret, whatever the clock says.
 */
export function neverGone(meta: KeyMeta): boolean {
  const v = meta.versions[meta.current];
  return v === undefined || (v.deletion === null && !v.destroyed);
}

/** created + the smaller non-zero delete_version_after of engine and key (a key cannot outlast its engine). */
export function deletionTime(created: number, config: EngineConfig, meta: KeyMeta): number | null {
  if (config.deleteVersionAfter === DELETE_AFTER_DISABLED) return null;
  const candidates = [config.deleteVersionAfter, meta.deleteVersionAfter].filter((s) => s > 0);
  return candidates.length === 0 ? null : created + Math.min(...candidates) * 1000;
}

/** Versions kept: the larger of the key's and the engine's max_versions, 10 when both are 0. */
export function maxVersionsFor(meta: KeyMeta, config: EngineConfig): number {
  return Math.max(meta.maxVersions, config.maxVersions) || DEFAULT_MAX_VERSIONS;
}

/**
 * Appends a version created now. Returns its number and the versions pruned to stay within
 * max_versions (their data must be erased). Pruning follows Vault exactly, oldest_version included.
 */
export function addVersion(meta: KeyMeta, now: number, config: EngineConfig): { version: number; pruned: number[] } {
  meta.current += 1;
  meta.versions[meta.current] = { created: now, deletion: deletionTime(now, config, meta), destroyed: false };
  meta.updated = now;
  const max = maxVersionsFor(meta, config);
  const pruned: number[] = [];
  if (meta.current - meta.oldest >= max) {
    const last = meta.current - max;
    for (let v = meta.oldest; v <= last; v++) {
      if (meta.versions[v]) pruned.push(v);
      delete meta.versions[v];
    }
    meta.oldest = last + 1;
  }
  return { version: meta.current, pruned };
}

/** DELETE data/<path>: soft-deletes the latest version unless it is already deleted or destroyed. */
export function softDeleteLatest(meta: KeyMeta, now: number): boolean {
  return softDelete(meta, [meta.current], now);
}

/** delete/<path>: soft-deletes each live version listed (unknown ones are skipped). */
export function softDelete(meta: KeyMeta, versions: number[], now: number): boolean {
  let changed = false;
  for (const n of versions) {
    const v = meta.versions[n];
    if (!v || !isLive(v, now)) continue;
    v.deletion = now;
    changed = true;
  }
  return changed;
}

/** undelete/<path>: clears the deletion of each listed version not destroyed, re-applying delete_version_after from now. */
export function undelete(meta: KeyMeta, versions: number[], now: number, config: EngineConfig): boolean {
  let changed = false;
  for (const n of versions) {
    const v = meta.versions[n];
    if (!v || v.destroyed) continue;
    v.deletion = deletionTime(now, config, meta);
    changed = true;
  }
  return changed;
}

/** destroy/<path>: marks each listed version destroyed; returns those whose data must be erased. */
export function destroy(meta: KeyMeta, versions: number[]): number[] {
  const erased: number[] = [];
  for (const n of new Set(versions)) {
    const v = meta.versions[n];
    if (!v || v.destroyed) continue;
    v.destroyed = true;
    erased.push(n);
  }
  return erased;
}

/** Vault decodes cas weakly (mapstructure): integers, integer strings, booleans; null and "" are 0. */
function parseCas(raw: unknown): number | null {
  if (raw === null || raw === '') return 0;
  if (typeof raw === 'boolean') return raw ? 1 : 0;
  if (typeof raw === 'number' && Number.isSafeInteger(raw)) return raw;
  if (typeof raw === 'string' && /^\s*[-+]?\d+\s*$/.test(raw) && Number.isSafeInteger(Number(raw))) return Number(raw);
  return null;
}

/** The check-and-set rules: cas must equal the current version (0: the key has none), and is required when the engine or key says so. */
export function checkCas(options: Record<string, unknown>, config: EngineConfig, meta: KeyMeta): void {
  if (Object.prototype.hasOwnProperty.call(options, 'cas')) {
    const cas = parseCas(options.cas);
    if (cas === null) throw badRequest('error parsing check-and-set parameter');
    if (cas !== meta.current) throw badRequest('check-and-set parameter did not match the current version');
  } else if (config.casRequired || meta.casRequired) {
    throw badRequest('check-and-set parameter required for this call');
  }
}
