// Deletion times reached with time. A version past its deletion_time reads as deleted at once
// (model.isDeleted, at read time); the alarm then records it in the gone/ index that
// exclude_deleted lists use, and drops the due/ entry. Entries are hints: each is checked against
// the metadata, so a stale one (the version was since replaced, undeleted or destroyed) just goes.

import type { Storage } from '../../../framework/storage';
import { DUE, goneKey, parseDueKey } from './layout';
import { currentGone } from './model';
import { EMPTY, readMeta } from './store';

/** due/ entries handled per run; more than that and the host is asked to come back at once. */
export const SWEEP_BUDGET = 200;

/** Records every deletion that has come due; returns when the next one is due (null: none). */
export async function sweepDue(storage: Storage, now: number, budget = SWEEP_BUDGET): Promise<number | null> {
  const keys = await storage.scan(DUE, '', budget);
  for (const key of keys) {
    const due = parseDueKey(key);
    if (due && due.at > now) return due.at;
    if (due) {
      const meta = await readMeta(storage, due.path);
      if (meta && meta.current === due.version && currentGone(meta, now)) await storage.put(goneKey(due.path), EMPTY);
    }
    await storage.delete(key);
  }
  return keys.length === budget ? now : null;
}

/** Secrets whose current version has come due but the alarm has not recorded yet (normally none). */
export async function overdueGone(storage: Storage, now: number): Promise<Set<string>> {
  const gone = new Set<string>();
  let after = '';
  for (;;) {
    const keys = await storage.scan(DUE, after, 100);
    for (const key of keys) {
      const due = parseDueKey(key);
      if (!due) continue;
      if (due.at > now) return gone;
      const meta = await readMeta(storage, due.path);
      if (meta && meta.current === due.version && currentGone(meta, now)) gone.add(due.path);
    }
    if (keys.length < 100) return gone;
    after = keys[keys.length - 1];
  }
}
