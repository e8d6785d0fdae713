// Reading and writing KV v2 records. saveMeta keeps the two indexes (gone/, due/) in step with
// the metadata it writes, so they are never out of date at the moment of writing; time passing
// is the alarm's job (timers.ts).

import { fromUtf8, utf8 } from '../../../crypto/encoding';
import { getJSON, putJSON, type Storage } from '../../../framework/storage';
import { CONFIG_KEY, dueKey, goneKey, isKeyPath, metaKey, versionKey } from './layout';
import { currentGone, DEFAULT_CONFIG, type EngineConfig, type KeyMeta } from './model';

export const EMPTY = new Uint8Array(0);

export async function readConfig(storage: Storage): Promise<EngineConfig> {
  return { ...DEFAULT_CONFIG, ...(await getJSON<EngineConfig>(storage, CONFIG_KEY)) };
}

export async function writeConfig(storage: Storage, config: EngineConfig): Promise<void> {
  await putJSON(storage, CONFIG_KEY, config);
}

export async function readMeta(storage: Storage, path: string): Promise<KeyMeta | null> {
  return isKeyPath(path) ? await getJSON<KeyMeta>(storage, metaKey(path)) : null;
}

/** Writes a secret's metadata with its index entries: gone/ now, due/ for a deletion still to come. */
export async function saveMeta(storage: Storage, path: string, meta: KeyMeta, now: number): Promise<void> {
  await putJSON(storage, metaKey(path), meta);
  if (currentGone(meta, now)) await storage.put(goneKey(path), EMPTY);
  else await storage.delete(goneKey(path));
  const current = meta.versions[meta.current];
  if (current && !current.destroyed && current.deletion !== null && current.deletion > now) {
    await storage.put(dueKey(current.deletion, meta.current, path), EMPTY);
  }
}

/** Removes a secret altogether: every version's data, its metadata and its index entry. */
export async function eraseKey(storage: Storage, path: string, meta: KeyMeta): Promise<void> {
  for (const n of Object.keys(meta.versions)) await storage.delete(versionKey(path, Number(n)));
  await storage.delete(metaKey(path));
  await storage.delete(goneKey(path));
}

export async function readVersionData(storage: Storage, path: string, version: number): Promise<Record<string, unknown>> {
  const raw = await storage.get(versionKey(path, version));
  // The metadata says the version is there: a missing value is a broken store, not a 404.
  if (raw === null) throw new Error('could not find version data');
  return JSON.parse(fromUtf8(raw)) as Record<string, unknown>;
}

export async function writeVersionData(storage: Storage, path: string, version: number, data: Record<string, unknown>): Promise<void> {
  await storage.put(versionKey(path, version), utf8(JSON.stringify(data)));
}

export async function eraseVersionData(storage: Storage, path: string, versions: number[]): Promise<void> {
  for (const n of versions) await storage.delete(versionKey(path, n));
}
