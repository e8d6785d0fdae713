// aws creds/:name for iam_user roles against the IAM/STS emulator: Vault's exact call sequence
// (reference §3.4), the user IAM ends up with, the response and lease shapes, usernames from
// templates and their caps, renewal and revocation (Vault's deletion sequence), failures at each
// step rolled back at once (or, when that fails too, by the periodic work), throttling with
// max_retries, wait_for_usable, and the secret key kept out of audit entries.
import { env, runDurableObjectAlarm } from 'cloudflare:test';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { api, caller, initCluster, type Cluster } from '../../helpers/api';
import { sink, sinkURL } from '../../helpers/audit-sink';
import { actions, ADMIN_KEY, ADMIN_USER, awsWorld } from '../../helpers/aws';
import { emptyRootConfig, ROOT_KEY } from '../../../src/engines/aws/config';
import { settleWriteAhead } from '../../../src/engines/aws/wal';
import { MemoryStorage, putJSON } from '../../../src/framework/storage';

let c: Cluster;
const { call, ok } = caller(() => c.root);
const world = awsWorld('creds');
const { emu } = world;

const FULL_ROLE = {
  credential_type: 'iam_user',
  policy_arns: ['arn:aws:iam::aws:policy/ReadOnlyAccess', 'arn:aws:iam::123456789012:policy/extra'],
  policy_document: '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "ec2:Describe*", "Resource": "*"}]}',
  iam_groups: ['developers', 'auditors'],
  iam_tags: { team: 'platform', env: 'test' },
  user_path: '/coffer/',
  permissions_boundary_arn: 'arn:aws:iam::123456789012:policy/boundary',
};

/** Users other than the admin the engine is configured with. */
const madeUsers = async () => (await emu.state()).users.filter((u) => u.userName !== ADMIN_USER);

/** The mount's object, to run its alarm. */
async function mountObject(path: string) {
  const uuid = (await ok('GET', `sys/mounts/${path}`)).body.data.uuid as string;
  return env.MOUNTS.get(env.MOUNTS.idFromName(uuid));
}

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/aws', { type: 'aws' });
  await ok('PUT', 'sys/audit/aws-creds', { type: 'http', options: { url: sinkURL('aws-creds') } });
});

beforeEach(async () => {
  await world.reset(c.root, 'aws', undefined, { max_retries: 0 });
  await ok('POST', 'aws/roles/full', FULL_ROLE);
  await ok('POST', 'aws/roles/plain', { credential_type: 'iam_user', policy_arns: ['arn:aws:iam::aws:policy/ReadOnlyAccess'] });
});

describe('creds for an iam_user role', () => {
  it('makes the user with Vault\'s call sequence and answers the key behind a renewable lease', async () => {
    await ok('POST', 'aws/config/lease', { lease: '1h', lease_max: '2h' });
    const r = await ok('GET', 'aws/creds/full');
    expect(r.body.data).toEqual({ access_key: expect.stringMatching(/^AKIA[A-Z0-9]{16}$/), secret_key: expect.any(String), security_token: null });
    expect(r.body.lease_id).toMatch(/^aws\/creds\/full\/[A-Za-z0-9]{24}$/);
    expect(r.body.renewable).toBe(true);
    expect(r.body.lease_duration).toBe(3600);

    const calls = (await emu.calls()).filter((x) => x.accessKeyId === ADMIN_KEY.accessKeyId);
    expect(calls.map((x) => x.action)).toEqual([
      'CreateUser',
      'AttachUserPolicy',
      'AttachUserPolicy',
      'PutUserPolicy',
      'AddUserToGroup',
      'AddUserToGroup',
      'TagUser',
      'CreateAccessKey',
    ]);
    const [user] = await madeUsers();
    expect(user.userName).toMatch(/^vault-root-full-\d{10}-[A-Za-z0-9]{20}$/);
    expect(user).toMatchObject({
      path: '/coffer/',
      permissionsBoundary: 'arn:aws:iam::123456789012:policy/boundary',
      attachedPolicies: FULL_ROLE.policy_arns,
      groups: ['developers', 'auditors'],
      tags: [
        { Key: 'env', Value: 'test' },
        { Key: 'team', Value: 'platform' },
      ],
    });
    // The inline policy is named after the role and holds the compacted document.
    expect(user.inlinePolicies).toEqual({ full: '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:Describe*","Resource":"*"}]}' });
    expect(user.accessKeys.map((k) => [k.accessKeyId, k.secretAccessKey])).toEqual([[r.body.data.access_key, r.body.data.secret_key]]);
  });

  it('answers POST like GET, and the lease TTL falls back to the mount when config/lease is unset', async () => {
    await ok('POST', 'sys/mounts/unleased', { type: 'aws' });
    await world.reset(c.root, 'unleased');
    await ok('POST', 'unleased/roles/plain', { credential_type: 'iam_user', policy_arns: ['arn:aws:iam::aws:policy/ReadOnlyAccess'] });
    const r = await ok('POST', 'unleased/creds/plain', {});
    expect(r.body.data.access_key).toMatch(/^AKIA/);
    expect(r.body.lease_duration).toBe(768 * 3600);
    expect(await actions(emu)).toEqual(['CreateUser', 'AttachUserPolicy', 'CreateAccessKey']);
  });

  it('caps the lease at lease_max when lease is 0', async () => {
    await ok('POST', 'aws/config/lease', { lease: '0s', lease_max: '45m' });
    expect((await ok('GET', 'aws/creds/plain')).body.lease_duration).toBe(2700);
  });

  it('renews within config/lease and revokes by deleting the user in Vault\'s order', async () => {
    await ok('POST', 'aws/config/lease', { lease: '1h', lease_max: '2h' });
    const issued = (await ok('GET', 'aws/creds/full')).body;
    const renewed = await ok('PUT', 'sys/leases/renew', { lease_id: issued.lease_id, increment: 7200 });
    expect(renewed.body.lease_duration).toBe(3600);
    expect(renewed.body.renewable).toBe(true);

    const before = (await emu.calls()).length;
    expect((await call('PUT', 'sys/leases/revoke', { lease_id: issued.lease_id })).status).toBe(204);
    expect((await emu.calls()).slice(before).map((x) => x.action)).toEqual([
      'ListGroupsForUser',
      'ListUserPolicies',
      'ListAttachedUserPolicies',
      'ListAccessKeys',
      'DeleteAccessKey',
      'DetachUserPolicy',
      'DetachUserPolicy',
      'DeleteUserPolicy',
      'RemoveUserFromGroup',
      'RemoveUserFromGroup',
      'DeleteUser',
    ]);
    expect(await madeUsers()).toEqual([]);
    expect((await emu.state()).groups.find((g) => g.groupName === 'developers')?.members).toEqual([]);
  });

  it('keeps a lease whose user cannot be deleted yet, and retries', async () => {
    const issued = (await ok('GET', 'aws/creds/plain')).body;
    await emu.faults({ faults: [{ action: 'DeleteUser', status: 500, code: 'ServiceFailure', message: 'try later' }] });
    const r = await call('PUT', 'sys/leases/revoke', { lease_id: issued.lease_id });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toContain('ServiceFailure: try later');
    expect(await madeUsers()).toHaveLength(1);
    expect((await call('PUT', 'sys/leases/revoke', { lease_id: issued.lease_id })).status).toBe(204);
    expect(await madeUsers()).toEqual([]);
  });

  it('revokes every lease of a prefix', async () => {
    // A role of its own: the users of earlier tests' leases went with the emulator's reset.
    await ok('POST', 'aws/roles/prefixed', { credential_type: 'iam_user', policy_arns: ['arn:aws:iam::aws:policy/ReadOnlyAccess'] });
    await ok('GET', 'aws/creds/prefixed');
    await ok('GET', 'aws/creds/prefixed');
    expect(await madeUsers()).toHaveLength(2);
    await ok('PUT', 'sys/leases/revoke-prefix/aws/creds/prefixed');
    expect(await madeUsers()).toEqual([]);
  });

  it('names users from username_template, with the token display name and the role', async () => {
    await ok('POST', 'aws/config/root', { username_template: '{{ printf "%s.%s.%s" (.Type | lowercase) .DisplayName .PolicyName }}' });
    const token = (await ok('POST', 'auth/token/create', { display_name: 'Ops Team' })).body.auth.client_token as string;
    await api('GET', 'aws/creds/plain', { token });
    expect((await madeUsers()).map((u) => u.userName)).toEqual(['iam.token-Ops-Team.plain']);
  });

  it('refuses a username over 64 characters with Vault\'s 500, before any AWS call', async () => {
    await ok('POST', 'aws/config/root', { username_template: `{{ printf "%s" "${'x'.repeat(65)}" }}` });
    const r = await call('GET', 'aws/creds/plain');
    expect(r.status).toBe(500);
    expect(r.body.errors).toEqual(['the username generated by the template exceeds the IAM username length limits of 64 chars']);
    expect(await emu.calls()).toEqual([]);
  });

  it('answers Vault\'s error for an unknown role, and serves a (non-legacy) iam_user role on sts too', async () => {
    expect((await call('GET', 'aws/creds/nope')).body).toEqual({ errors: ['Role "nope" not found'] });
    const r = await ok('POST', 'aws/sts/plain', {});
    expect(r.body.lease_id).toMatch(/^aws\/sts\/plain\//);
    expect(r.body.renewable).toBe(true);
    expect(await madeUsers()).toHaveLength(1);
  });
});

describe('failures while making the user', () => {
  const steps: [string, string][] = [
    ['CreateUser', 'Error creating IAM user'],
    ['AttachUserPolicy', 'Error attaching user policy'],
    ['PutUserPolicy', 'Error putting user policy'],
    ['AddUserToGroup', 'Error adding user to group'],
    ['TagUser', 'Error adding tags to user'],
    ['CreateAccessKey', 'Error creating access keys'],
  ];
  for (const [action, prefix] of steps) {
    it(`rolls back the user when ${action} fails`, async () => {
      await emu.faults({ faults: [{ action, status: 409, code: 'LimitExceeded', message: `no more ${action}` }] });
      const r = await call('GET', 'aws/creds/full');
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual([expect.stringMatching(new RegExp(`^${prefix}: LimitExceeded: no more ${action}\\n\\tstatus code: 409, request id: [0-9a-f-]{36}$`))]);
      expect(await madeUsers()).toEqual([]);
      expect((await emu.state()).groups.every((g) => g.members.length === 0)).toBe(true);
    });
  }

  it('retries throttling max_retries times, and answers 502 when AWS keeps throttling', async () => {
    await ok('POST', 'aws/config/root', { max_retries: 2 });
    await emu.faults({ faults: [{ action: 'CreateAccessKey', times: 2, status: 400, code: 'Throttling', message: 'Rate exceeded' }] });
    expect((await call('GET', 'aws/creds/plain')).status).toBe(200);
    expect((await actions(emu)).filter((a) => a === 'CreateAccessKey')).toHaveLength(3);

    await emu.faults({ faults: [{ action: 'CreateAccessKey', times: 3, status: 400, code: 'Throttling', message: 'Rate exceeded' }] });
    const r = await call('GET', 'aws/creds/plain');
    expect(r.status).toBe(502);
    expect(r.body.errors[0]).toMatch(/^Error creating access keys: Throttling: Rate exceeded/);
    expect(await madeUsers()).toHaveLength(1);
  });

  it('rolls back, from the periodic work, a user the request could not delete itself', async () => {
    const object = await mountObject('aws');
    await ok('POST', 'aws/roles/orphan', FULL_ROLE);
    // The key cannot be made, and the immediate undo fails at its first call: the write-ahead
    // entry, stored before CreateUser, is what remains of the user.
    await emu.faults({
      faults: [
        { action: 'CreateAccessKey', status: 409, code: 'LimitExceeded', message: 'no key' },
        { action: 'ListGroupsForUser', status: 500, code: 'ServiceFailure', message: 'IAM is down' },
      ],
    });
    expect((await call('GET', 'aws/creds/orphan')).status).toBe(400);
    expect(await madeUsers()).toHaveLength(1);
    // The alarm may already have fired on its own (it is set a few seconds out).
    await runDurableObjectAlarm(object);
    for (let i = 0; i < 50 && (await madeUsers()).length > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(await madeUsers()).toEqual([]);
    expect((await emu.state()).groups.every((g) => g.members.length === 0)).toBe(true);
    // The entry is gone: the next run has nothing to do.
    const after = (await emu.calls()).length;
    await runDurableObjectAlarm(object);
    expect((await emu.calls()).length).toBe(after);
    // No lease was recorded for it.
    expect((await call('GET', 'sys/leases/lookup/aws/creds/orphan?list=true')).status).toBe(404);
  });
});

describe('beside the write order', () => {
  /** The request's status; its name goes to `order` when it answers, so `order` is the order answers came in. */
  const answered = (order: string[], name: string, p: Promise<{ status: number }>) =>
    p.then((r) => {
      order.push(name);
      return r.status;
    });

  it("makes an IAM user while another request's user is held at AWS, and a role write is not held up either", async () => {
    // A role of its own: its leases are this test's only.
    await ok('POST', 'aws/roles/side', { credential_type: 'iam_user', policy_arns: ['arn:aws:iam::aws:policy/ReadOnlyAccess'] });
    // The first CreateUser only is held: the requests sent meanwhile get theirs at once.
    await emu.faults({ delays: [{ action: 'CreateUser', ms: 1_500, times: 1 }] });
    const order: string[] = [];
    const first = answered(order, 'first', call('GET', 'aws/creds/side'));
    await new Promise((r) => setTimeout(r, 200));
    const second = answered(order, 'second', call('GET', 'aws/creds/side'));
    const write = answered(order, 'write', call('POST', 'aws/roles/other', { credential_type: 'iam_user', policy_arns: ['arn:aws:iam::aws:policy/ReadOnlyAccess'] }));
    expect(await Promise.all([first, second, write])).toEqual([200, 200, 204]);
    // In the write order the second user and the role write would have waited for the first.
    expect(order.indexOf('first')).toBe(2);
    const users = await madeUsers();
    expect(users).toHaveLength(2);
    expect(users.every((u) => u.accessKeys.length === 1)).toBe(true);
    expect((await ok('GET', 'sys/leases/lookup/aws/creds/side?list=true')).body.data.keys).toHaveLength(2);
  });

  it('leaves the write-ahead entry of a request still running to it when the periodic work runs', async () => {
    const object = await mountObject('aws');
    // The entry is stored before CreateUser; the request is then held at CreateAccessKey.
    await emu.faults({ delays: [{ action: 'CreateAccessKey', ms: 1_500, times: 1 }] });
    const running = call('GET', 'aws/creds/plain');
    for (let i = 0; i < 50 && (await madeUsers()).length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await madeUsers()).toHaveLength(1);
    await runDurableObjectAlarm(object);
    // Not rolled back: the user is there, and nothing was deleted at AWS.
    expect(await madeUsers()).toHaveLength(1);
    expect((await actions(emu)).filter((a) => a.startsWith('Delete') || a.startsWith('List'))).toEqual([]);
    const r = await running;
    expect(r.status).toBe(200);
    const [user] = await madeUsers();
    expect(user.accessKeys.map((k) => k.accessKeyId)).toEqual([r.body.data.access_key]);
    // The request removed its entry with its lease: the next run has nothing to roll back.
    await runDurableObjectAlarm(object);
    expect(await madeUsers()).toHaveLength(1);
    expect((await actions(emu)).filter((a) => a.startsWith('Delete'))).toEqual([]);
  });
});

describe('the periodic work', () => {
  it('tries a failed rollback again only once its retry time has come, however often it runs meanwhile', async () => {
    // The engine's storage as the periodic work sees it: root config and two write-ahead entries,
    // one of a request still running ("live") and one left behind for a user IAM never made.
    const storage = new MemoryStorage();
    await putJSON(storage, ROOT_KEY, { ...emptyRootConfig(), accessKey: ADMIN_KEY.accessKeyId, secretKey: ADMIN_KEY.secretAccessKey, iamEndpoint: world.endpoint, stsEndpoint: world.endpoint, region: 'us-east-1', maxRetries: 0 });
    await putJSON(storage, 'wal/left', { kind: 'iam_user', userName: 'vault-left-behind', createdAt: 0 });
    await putJSON(storage, 'wal/live', { kind: 'iam_user', userName: 'vault-running', createdAt: 0 });
    const mount = { mountAllowedManagedKeys: [], liveWriteAhead: new Set(['live']) };
    const host = { env: {} };
    await emu.faults({ faults: [{ action: 'ListGroupsForUser', status: 500, code: 'ServiceFailure', message: 'IAM is down' }] });
    const t0 = Date.now();
    const listed = async () => (await actions(emu)).filter((a) => a === 'ListGroupsForUser').length;

    // The rollback fails: it stays; the running request's entry is looked at again in 5 s.
    expect(await settleWriteAhead(host, storage, t0, mount)).toBe(t0 + 5_000);
    expect(await listed()).toBe(1);
    // Runs for the running request meanwhile leave the failed one alone until its minute is up.
    expect(await settleWriteAhead(host, storage, t0 + 5_000, mount)).toBe(t0 + 10_000);
    expect(await settleWriteAhead(host, storage, t0 + 55_000, mount)).toBe(t0 + 60_000);
    expect(await listed()).toBe(1);
    // Once it is, the rollback runs again (and succeeds: IAM has no such user).
    expect(await settleWriteAhead(host, storage, t0 + 60_000, mount)).toBe(t0 + 65_000);
    expect(await listed()).toBe(2);
    expect([...storage.data.keys()].filter((k) => k.startsWith('wal/'))).toEqual(['wal/live']);
    // Once that request is gone without removing its entry, its user is rolled back too.
    expect(await settleWriteAhead(host, storage, t0 + 65_000, { mountAllowedManagedKeys: [], liveWriteAhead: new Set() })).toBeNull();
    expect(storage.data.size).toBe(1);
  });
});

describe('wait_for_usable', () => {
  it('polls STS with the new key until it is accepted', async () => {
    await ok('POST', 'aws/roles/waiting', { credential_type: 'iam_user', policy_arns: ['arn:aws:iam::aws:policy/ReadOnlyAccess'], wait_for_usable: true });
    await emu.faults({ faults: [{ action: 'GetCallerIdentity', times: 2, status: 403, code: 'InvalidClientTokenId', message: 'The security token included in the request is invalid.' }] });
    const r = await ok('GET', 'aws/creds/waiting');
    const polls = (await emu.calls()).filter((x) => x.action === 'GetCallerIdentity');
    expect(polls).toHaveLength(3);
    expect(polls.every((p) => p.accessKeyId === r.body.data.access_key)).toBe(true);
    expect(r.body.warnings ?? null).toBeNull();
  });

  it('answers with a warning when STS never accepts it within the bound', async () => {
    await ok('POST', 'aws/roles/waiting', { credential_type: 'iam_user', policy_arns: ['arn:aws:iam::aws:policy/ReadOnlyAccess'], wait_for_usable: true });
    await emu.faults({ faults: [{ action: 'GetCallerIdentity', times: 1000, status: 403, code: 'InvalidClientTokenId', message: 'not yet' }] });
    const r = await ok('GET', 'aws/creds/waiting');
    expect(r.body.data.access_key).toMatch(/^AKIA/);
    expect(r.body.warnings).toEqual([expect.stringContaining('not yet accepted by STS')]);
  }, 20_000);
});

describe('audit', () => {
  it('never records a secret key in plaintext', async () => {
    const issued = (await ok('GET', 'aws/creds/plain')).body.data;
    await ok('GET', 'aws/config/root');
    const raw = (await sink('aws-creds')).raw.join('\n');
    expect(raw).toContain('aws/creds/plain');
    expect(raw).not.toContain(issued.secret_key);
    expect(raw).not.toContain(ADMIN_KEY.secretAccessKey);
  });
});
