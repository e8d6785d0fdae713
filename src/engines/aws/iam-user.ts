// iam_user credentials (reference §3.4): an IAM user made for one lease, and deleted with it.
// The user is named in a write-ahead entry before it exists; the entry leaves storage in the
// same transaction that records the lease. So at every moment the user is reachable from a lease
// (revoked with it) or from the entry (rolled back by wal.ts): no failure orphans it.

import type { LeaseView, LogicalRequest, LogicalResponse, SecretType } from '../../framework/backend';
import { WAL_PREFIX } from '../../framework/backend';
import { randomUUID } from '../../crypto/random';
import { utf8 } from '../../crypto/encoding';
import { AwsError, child, members, text, type QueryClient } from './client';
import { iamClient, loadLeaseConfig, loadRootConfig, stsClient, type AwsHost } from './config';
import type { Role } from './role';
import { withPrefix } from './failures';
import { generateUsername } from './username';

/** The write-ahead entry of a user being made. */
export interface IamUserWal {
  kind: 'iam_user';
  userName: string;
  createdAt: number;
}

/** A lease this young may name a user IAM does not show yet (eventual consistency): NoSuchEntity is then an error. */
const YOUNG_LEASE_MS = 5 * 60_000;
const LIST_PAGE = 1000;

export async function createIamUser(req: LogicalRequest, host: AwsHost, roleName: string, role: Role): Promise<LogicalResponse> {
  const config = await loadRootConfig(req.storage);
  const userName = generateUsername(config, 'IAM', req.auth?.displayName ?? '', roleName);
  const iam = await withPrefix('Error creating IAM user', () => iamClient(config, host));
  if (!req.putWAL) throw new Error('this host cannot record a write-ahead entry; IAM users are not made without one');
  const walId = randomUUID();
  const wal: IamUserWal = { kind: 'iam_user', userName, createdAt: Date.now() };
  await req.putWAL(walId, utf8(JSON.stringify(wal)));

  let key: { id: string; secret: string };
  try {
    key = await makeUser(iam, userName, roleName, role);
  } catch (e) {
    // Undo at once where AWS lets us; the entry stays for the periodic work should this fail too.
    await deleteIamUser(iam, userName, { tolerateMissing: true }).catch(() => undefined);
    throw e;
  }
  const warnings: string[] = [];
  if (role.waitForUsable && !(await usableSoon(config, host, key))) {
    warnings.push(`the new access key was not yet accepted by STS after ${USABLE_WAIT_MS / 1000}s; it may fail for a few more seconds`);
  }
  await req.storage.delete(`${WAL_PREFIX}${walId}`);
  const lease = await loadLeaseConfig(req.storage);
  const ttl = lease ? (lease.leaseMax > 0 && (lease.lease === 0 || lease.lease > lease.leaseMax) ? lease.leaseMax : lease.lease) : 0;
  return {
    data: { access_key: key.id, secret_key: key.secret, security_token: null },
    secret: { type: 'access_keys', ttl, renewable: true, internal: { username: userName, policy: roleName, is_sts: false } },
    ...(warnings.length > 0 ? { warnings } : {}),
  };
}

/** Vault's sequence: user, managed policies, inline policy, groups, tags, then the key. */
async function makeUser(iam: QueryClient, userName: string, roleName: string, role: Role): Promise<{ id: string; secret: string }> {
  await withPrefix('Error creating IAM user', () =>
    iam.call('CreateUser', { UserName: userName, Path: role.userPath || '/', PermissionsBoundary: role.permissionsBoundaryArn || undefined }),
  );
  for (const arn of role.policyArns) await withPrefix('Error attaching user policy', () => iam.call('AttachUserPolicy', { UserName: userName, PolicyArn: arn }));
  if (role.policyDocument) {
    await withPrefix('Error putting user policy', () => iam.call('PutUserPolicy', { UserName: userName, PolicyName: roleName, PolicyDocument: role.policyDocument }));
  }
  for (const group of role.iamGroups) await withPrefix('Error adding user to group', () => iam.call('AddUserToGroup', { GroupName: group, UserName: userName }));
  const tags = Object.keys(role.iamTags)
    .sort()
    .map((k) => ({ Key: k, Value: role.iamTags[k] }));
  if (tags.length > 0) await withPrefix('Error adding tags to user', () => iam.call('TagUser', { UserName: userName, Tags: tags }));
  const created = await withPrefix('Error creating access keys', () => iam.call('CreateAccessKey', { UserName: userName }));
  const accessKey = child(created, 'AccessKey');
  return { id: text(accessKey, 'AccessKeyId'), secret: text(accessKey, 'SecretAccessKey') };
}

/** How long `wait_for_usable` waits at most for STS to accept a new key. */
const USABLE_WAIT_MS = 10_000;

/** Polls GetCallerIdentity with the new key, backing off, until it works or the wait is over. */
async function usableSoon(config: Parameters<typeof stsClient>[0], host: AwsHost, key: { id: string; secret: string }): Promise<boolean> {
  const sts = stsClient(config && { ...config, maxRetries: 0 }, host, { accessKeyId: key.id, secretAccessKey: key.secret });
  const deadline = Date.now() + USABLE_WAIT_MS;
  for (let delay = 100; ; delay = Math.min(delay * 2, 2_000)) {
    try {
      await sts.call('GetCallerIdentity');
      return true;
    } catch {
      if (Date.now() + delay > deadline) return false;
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}

/** Every page of a List call's `<listName>` members. */
async function listAll(iam: QueryClient, action: string, userName: string, listName: string): Promise<unknown[]> {
  const out: unknown[] = [];
  let marker: string | undefined;
  do {
    const page = await iam.call(action, { UserName: userName, MaxItems: LIST_PAGE, Marker: marker });
    out.push(...members(page, listName));
    marker = text(page, 'IsTruncated') === 'true' ? text(page, 'Marker') || undefined : undefined;
  } while (marker);
  return out;
}

/**
 * Deletes a user Vault-style: look up its groups, policies and keys, delete the keys, detach and
 * delete the policies, leave the groups, delete the user. A user IAM does not know is already
 * gone when `tolerateMissing` (a rollback, or a lease old enough for IAM to have caught up).
 */
export async function deleteIamUser(iam: QueryClient, userName: string, opts: { tolerateMissing: boolean }): Promise<void> {
  let groups: unknown[];
  try {
    groups = await listAll(iam, 'ListGroupsForUser', userName, 'Groups');
  } catch (e) {
    if (e instanceof AwsError && e.code === 'NoSuchEntity' && opts.tolerateMissing) return;
    throw e;
  }
  const inline = await listAll(iam, 'ListUserPolicies', userName, 'PolicyNames');
  const attached = await listAll(iam, 'ListAttachedUserPolicies', userName, 'AttachedPolicies');
  const keys = await listAll(iam, 'ListAccessKeys', userName, 'AccessKeyMetadata');
  for (const k of keys) await iam.call('DeleteAccessKey', { UserName: userName, AccessKeyId: text(k, 'AccessKeyId') });
  for (const p of attached) await iam.call('DetachUserPolicy', { UserName: userName, PolicyArn: text(p, 'PolicyArn') });
  for (const name of inline) await iam.call('DeleteUserPolicy', { UserName: userName, PolicyName: typeof name === 'string' ? name : '' });
  for (const g of groups) await iam.call('RemoveUserFromGroup', { UserName: userName, GroupName: text(g, 'GroupName') });
  await iam.call('DeleteUser', { UserName: userName });
}

/** The leases of every credential the engine issues; STS credentials simply expire. */
export function accessKeys(host: AwsHost): SecretType {
  return {
    async revoke(lease: LeaseView, storage) {
      if (lease.internal.is_sts === true) return;
      const userName = lease.internal.username;
      if (typeof userName !== 'string' || !userName) throw new Error('secret is missing username internal data');
      const iam = iamClient(await loadRootConfig(storage), host);
      await deleteIamUser(iam, userName, { tolerateMissing: Date.now() - lease.issueTime > YOUNG_LEASE_MS });
    },
    // Vault re-reads config/lease: the TTL is its lease, and no renewal goes past lease_max.
    async renew(lease: LeaseView, ttl: number, storage) {
      const config = await loadLeaseConfig(storage);
      if (!config) return ttl;
      let granted = config.lease > 0 ? Math.min(ttl, config.lease) : ttl;
      if (config.leaseMax > 0) granted = Math.min(granted, Math.floor((lease.issueTime + config.leaseMax * 1000 - Date.now()) / 1000));
      return Math.max(0, granted);
    },
  };
}
