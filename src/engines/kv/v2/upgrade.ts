// The v1→v2 upgrade in place: tuning a kv mount from version 1 to 2 leaves its plain keys where
// they were; each becomes version 1 of a versioned secret. The mount's alarm (Backend.periodic)
// migrates them a chunk at a time, each chunk in one transaction that writes the new records and
// deletes the plain keys, so the work resumes where it stopped after a restart or a failure: the
// keys left outside ROOT are exactly the work left. Until none is left, every operation answers
// Vault's 400.

import { badRequest } from '../../../framework/errors';
import { compareKeys, type Storage } from '../../../framework/storage';
import { fromUtf8 } from '../../../crypto/encoding';
import { ROOT, ROOT_END } from './layout';
import { newMeta } from './model';
import { saveMeta, writeVersionText } from './store';

export const UPGRADE_MESSAGE =
  'Upgrading from non-versioned to versioned data. This backend will be unavailable for a brief period and will resume service shortly.';

/** Plain keys migrated per transaction. */
export const UPGRADE_CHUNK = 100;

/** The first `limit` keys outside ROOT, in key order: the plain keys still to migrate. */
export async function plainKeys(storage: Storage, limit: number): Promise<string[]> {
  // Keys sort in two runs around ROOT's block: those before it, then those after ROOT_END.
  const before = (await storage.scan('', '', limit)).filter((k) => compareKeys(k, ROOT) < 0);
  if (before.length >= limit) return before;
  return [...before, ...(await storage.scan('', ROOT_END, limit - before.length))];
}

/** A plain v1 key becomes version 1 of a secret (oldest_version 1, as Vault's upgrade leaves it). */
async function migrate(storage: Storage, key: string, now: number): Promise<void> {
  const value = await storage.get(key);
  if (value === null) return;
  const meta = newMeta(now);
  meta.current = 1;
  meta.oldest = 1;
  meta.versions[1] = { created: now, deletion: null, destroyed: false };
  // A v1 value is the JSON text of the secret, which is exactly what a version's data is.
  await writeVersionText(storage, key, meta, 1, fromUtf8(value));
  await saveMeta(storage, key, meta, now);
  await storage.delete(key);
}

/** Whether the mount still holds plain keys; once it does not, it never will again. */
export class UpgradeGate {
  private done = false;

  /**
   * Throws Vault's 400 while plain keys remain, and asks for the migration to run now: a retried
   * request keeps the upgrade moving even if its alarm was lost.
   */
  /** Whether the mount is past its upgrade (check() would pass at once). */
  passed(): boolean {
    return this.done;
  }

  async check(storage: Storage, wakeAt?: (at: number) => void): Promise<void> {
    if (this.done) return;
    if ((await plainKeys(storage, 1)).length > 0) {
      wakeAt?.(Date.now());
      throw badRequest(UPGRADE_MESSAGE);
    }
    this.done = true;
  }

  /** Migrates one chunk; true when there was nothing left to migrate. */
  async step(storage: Storage, now: number): Promise<boolean> {
    if (this.done) return true;
    const keys = await plainKeys(storage, UPGRADE_CHUNK);
    for (const key of keys) await migrate(storage, key, now);
    // Marked done only once a run finds nothing: this chunk may still fail to commit.
    if (keys.length === 0) this.done = true;
    return keys.length === 0;
  }
}
