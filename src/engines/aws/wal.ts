// The engine's periodic work: settles the write-ahead entries requests left behind (they failed,
// or the object was reset mid-request). The host runs this in the mount's write order, so no
// entry it meets belongs to a request still running. An IAM user is rolled back (deleted); a
// root rotation is finished. An entry whose work fails stays, and is tried again later.

import { WAL_PREFIX } from '../../framework/backend';
import { getJSON, type Storage } from '../../framework/storage';
import { iamClient, loadRootConfig, type AwsHost } from './config';
import { deleteIamUser, type IamUserWal } from './iam-user';
import { finishRotation, type RotateRootWal } from './rotate-root';

const RETRY_MS = 60_000;

export async function settleWriteAhead(host: AwsHost, storage: Storage, now: number): Promise<number | null> {
  let left = false;
  for (const id of await storage.list(WAL_PREFIX)) {
    const key = `${WAL_PREFIX}${id}`;
    const entry = await getJSON<IamUserWal | RotateRootWal>(storage, key);
    try {
      if (entry?.kind === 'iam_user') await deleteIamUser(iamClient(await loadRootConfig(storage), host), entry.userName, { tolerateMissing: true });
      else if (entry?.kind === 'rotate-root') await finishRotation(host, storage, entry);
      await storage.delete(key);
    } catch {
      left = true;
    }
  }
  return left ? now + RETRY_MS : null;
}
