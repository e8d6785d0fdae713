// The engine's periodic work: settles the write-ahead entries requests left behind (they failed,
// or the object was reset mid-request). The entries of requests still running (the host names
// them: PeriodicContext.liveWriteAhead) are theirs, and are looked at again shortly. An IAM user
// is rolled back (deleted); a root rotation is finished. An entry whose work fails stays, and is
// tried again once its retry time (kept in the entry) has come, however often the work runs
// meanwhile for the entries of running requests.

import { WAL_PREFIX, type PeriodicContext } from '../../framework/backend';
import { getJSON, putJSON, type Storage } from '../../framework/storage';
import { iamClient, loadRootConfig, type AwsHost } from './config';
import { deleteIamUser, type IamUserWal } from './iam-user';
import { finishRotation, type RotateRootWal } from './rotate-root';

const RETRY_MS = 60_000;
/** When to look again at the entries of requests that were still running. */
const LIVE_RECHECK_MS = 5_000;

/** A stored entry; `retryAt` is set once its work has failed. */
type Entry = (IamUserWal | RotateRootWal) & { retryAt?: number };

export async function settleWriteAhead(host: AwsHost, storage: Storage, now: number, mount?: PeriodicContext): Promise<number | null> {
  let next = Infinity;
  for (const id of await storage.list(WAL_PREFIX)) {
    if (mount?.liveWriteAhead?.has(id)) {
      next = Math.min(next, now + LIVE_RECHECK_MS);
      continue;
    }
    const key = `${WAL_PREFIX}${id}`;
    const entry = await getJSON<Entry>(storage, key);
    if (entry?.retryAt !== undefined && entry.retryAt > now) {
      next = Math.min(next, entry.retryAt);
      continue;
    }
    try {
      if (entry?.kind === 'iam_user') await deleteIamUser(iamClient(await loadRootConfig(storage), host), entry.userName, { tolerateMissing: true });
      else if (entry?.kind === 'rotate-root') await finishRotation(host, storage, entry);
      await storage.delete(key);
    } catch {
      if (entry) await putJSON(storage, key, { ...entry, retryAt: now + RETRY_MS });
      next = Math.min(next, now + RETRY_MS);
    }
  }
  return next === Infinity ? null : next;
}
