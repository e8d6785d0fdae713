// Reading and writing KV v2 records. saveMeta keeps the two indexes (gone/, due/) in step with
// the metadata it writes, so they are never out of date at the moment of writing; time passing
// is the alarm's job (timers.ts), which saveMeta asks for with the request's wakeAt.

import { utf8 } from '../../../crypto/encoding';
import { andThen, type Maybe } from '../../../framework/steps';
import { getJSON, getJSONNow, putJSON, type Storage } from '../../../framework/storage';
import { CONFIG_KEY, dueKey, goneKey, isKeyPath, metaKey, versionKey } from './layout';
import { currentGone, DEFAULT_CONFIG, type EngineConfig, type KeyMeta } from './model';

export const EMPTY = new Uint8Array(0);

export async function readConfig(storage: Storage): Promise<EngineConfig> {
  return { ...DEFAULT_CONFIG, ...(await getJSON<EngineConfig>(storage, CONFIG_KEY)) };
}

export async function writeConfig(storage: Storage, config: EngineConfig): Promise<void> {
  await putJSON(storage, CONFIG_KEY, config);
}

/** A secret's metadata; at once when it is in memory (Storage.peek). */
export function readMeta(storage: Storage, path: string): Maybe<KeyMeta | null> {
  return isKeyPath(path) ? getJSONNow<KeyMeta>(storage, metaKey(path)) : null;
}

export interface SaveOptions {
  /** The request's LogicalRequest.wakeAt. */
  wakeAt?: (at: number) => void;
  /** neverGone() of the metadata as read, before this change: then there is no gone/ entry to delete. */
  wasNeverGone?: boolean;
}

/**
 * Writes a secret's metadata with its index entries: gone/ now, due/ for a deletion still to
 * come (and then asks, through `wakeAt`, for the alarm to record it when it comes).
 */
export async function saveMeta(storage: Storage, path: string, meta: KeyMeta, now: number, opts: SaveOptions = {}): Promise<void> {
  await putJSON(storage, metaKey(path), meta);
  if (currentGone(meta, now)) await storage.put(goneKey(path), EMPTY);
  else if (!opts.wasNeverGone) await storage.delete(goneKey(path));
  const current = meta.versions[meta.current];
  if (current && !current.destroyed && current.deletion !== null && current.deletion > now) {
    await storage.put(dueKey(current.deletion, meta.current, path), EMPTY);
    opts.wakeAt?.(current.deletion);
  }
}

/** Removes a secret altogether: every version's data, its metadata and its index entry. */
export async function eraseKey(storage: Storage, path: string, meta: KeyMeta): Promise<void> {
  for (const n of Object.keys(meta.versions)) if (!meta.inline?.[n]) await storage.delete(versionKey(path, Number(n)));
  await storage.delete(metaKey(path));
  await storage.delete(goneKey(path));
}

// A version's data is kept in the metadata record while it is small (most secrets are): a write
// is then a single row, and so is a read. Larger data, or data past the record's inline budget,
// gets a row of its own. Either way the metadata says which, so the two never disagree.
/** Largest JSON text of one version kept in the record. */
export const INLINE_MAX = 4 * 1024;
/** Most JSON text of all its versions a record keeps (the record stays far below the entry size limit). */
export const INLINE_TOTAL = 24 * 1024;

function inlineBytes(meta: KeyMeta): number {
  let total = 0;
  for (const text of Object.values(meta.inline ?? {})) total += text.length;
  return total;
}

/** A version's data; at once when it is in its record or in memory (Storage.peek). */
export function readVersionData(storage: Storage, path: string, meta: KeyMeta, version: number): Maybe<Record<string, unknown>> {
  const inline = meta.inline?.[version];
  if (inline !== undefined) return JSON.parse(inline) as Record<string, unknown>;
  return andThen(getJSONNow<Record<string, unknown>>(storage, versionKey(path, version)), (data) => {
    // The metadata says the version is there: a missing value is a broken store, not a 404.
    if (data === null) throw new Error('could not find version data');
    return data;
  });
}

/** Stores a version's data (JSON text): in the record when it fits, else in its own row. The caller saves the metadata. */
export async function writeVersionText(storage: Storage, path: string, meta: KeyMeta, version: number, text: string): Promise<void> {
  if (text.length <= INLINE_MAX && inlineBytes(meta) + text.length <= INLINE_TOTAL) {
    (meta.inline ??= {})[version] = text;
    return;
  }
  await storage.put(versionKey(path, version), utf8(text));
}

export async function writeVersionData(storage: Storage, path: string, meta: KeyMeta, version: number, data: Record<string, unknown>): Promise<void> {
  await writeVersionText(storage, path, meta, version, JSON.stringify(data));
}

/** Erases the data of versions, wherever it is. The caller saves the metadata. */
export async function eraseVersionData(storage: Storage, path: string, meta: KeyMeta, versions: number[]): Promise<void> {
  for (const n of versions) {
    if (meta.inline?.[n] !== undefined) delete meta.inline[n];
    else await storage.delete(versionKey(path, n));
  }
  if (meta.inline && Object.keys(meta.inline).length === 0) delete meta.inline;
}
