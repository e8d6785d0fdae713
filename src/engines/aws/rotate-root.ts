// config/rotate-root (reference §3.1): GetUser (the key's own user) → CreateAccessKey → store →
// DeleteAccessKey of the old key. The new key is in a write-ahead entry before the old one is
// deleted, so a failure after that point is finished by the periodic work (wal.ts), never
// leaving the engine without a working key.

import { WAL_PREFIX, type LogicalRequest } from '../../framework/backend';
import { badRequest, CofferError } from '../../framework/errors';
import { putJSON, type Storage } from '../../framework/storage';
import { utf8 } from '../../crypto/encoding';
import { randomUUID } from '../../crypto/random';
import { AwsError, child, text } from './client';
import { iamClient, loadRootConfig, ROOT_KEY, type AwsHost } from './config';

export interface RotateRootWal {
  kind: 'rotate-root';
  userName: string;
  oldAccessKey: string;
  newAccessKey: string;
  newSecretKey: string;
}

const internal = (message: string, e: unknown): CofferError =>
  new CofferError(e instanceof AwsError && e.throttled ? 502 : 500, [`${message}: ${e instanceof Error ? e.message : String(e)}`]);

export async function rotateRoot(req: LogicalRequest, host: AwsHost): Promise<string> {
  const config = await loadRootConfig(req.storage);
  if (!config) throw badRequest('no configuration found for config/root');
  if (!config.accessKey || !config.secretKey) throw badRequest('Cannot call config/rotate-root when either access_key or secret_key is empty');
  const iam = iamClient(config, host);
  let userName: string;
  try {
    userName = text(child(await iam.call('GetUser'), 'User'), 'UserName');
  } catch (e) {
    throw internal('error calling GetUser', e);
  }
  if (!userName) throw new CofferError(500, ['nil response from GetUser']);
  let created: Record<string, unknown>;
  try {
    // AWS refuses a third key (LimitExceeded): the configured key must be the user's only one.
    created = child(await iam.call('CreateAccessKey', { UserName: userName }), 'AccessKey');
  } catch (e) {
    throw internal('error calling CreateAccessKey', e);
  }
  const wal: RotateRootWal = { kind: 'rotate-root', userName, oldAccessKey: config.accessKey, newAccessKey: text(created, 'AccessKeyId'), newSecretKey: text(created, 'SecretAccessKey') };
  if (!req.putWAL) throw new Error('this host cannot record a write-ahead entry; the root key is not rotated without one');
  const walId = randomUUID();
  await req.putWAL(walId, utf8(JSON.stringify(wal)));
  await putJSON(req.storage, ROOT_KEY, { ...config, accessKey: wal.newAccessKey, secretKey: wal.newSecretKey });
  try {
    await deleteOldKey(host, config, wal);
  } catch (e) {
    throw internal('error deleting old access key', e);
  }
  await req.storage.delete(`${WAL_PREFIX}${walId}`);
  return wal.newAccessKey;
}

/** Deletes the old key with the new one, as Vault does (a key already gone is fine). */
async function deleteOldKey(host: AwsHost, config: Parameters<typeof iamClient>[0], wal: RotateRootWal): Promise<void> {
  const iam = iamClient(config, host, { accessKeyId: wal.newAccessKey, secretAccessKey: wal.newSecretKey });
  try {
    await iam.call('DeleteAccessKey', { UserName: wal.userName, AccessKeyId: wal.oldAccessKey });
  } catch (e) {
    if (!(e instanceof AwsError && e.code === 'NoSuchEntity')) throw e;
  }
}

/**
 * Finishes a rotation its request did not: while the configuration still holds the old key (or
 * already the new one) the new key is stored and the old one deleted. A configuration written
 * since with other keys wins: the unused new key is deleted instead.
 */
export async function finishRotation(host: AwsHost, storage: Storage, wal: RotateRootWal): Promise<void> {
  const config = await loadRootConfig(storage);
  if (config && (config.accessKey === wal.oldAccessKey || config.accessKey === wal.newAccessKey)) {
    const rotated = { ...config, accessKey: wal.newAccessKey, secretKey: wal.newSecretKey };
    await deleteOldKey(host, rotated, wal);
    await putJSON(storage, ROOT_KEY, rotated);
    return;
  }
  const iam = iamClient(config, host);
  try {
    await iam.call('DeleteAccessKey', { UserName: wal.userName, AccessKeyId: wal.newAccessKey });
  } catch (e) {
    if (!(e instanceof AwsError && e.code === 'NoSuchEntity')) throw e;
  }
}
