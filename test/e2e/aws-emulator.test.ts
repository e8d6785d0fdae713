// The AWS IAM + STS emulator (test/emulators/aws-iam-sts) driven by the official AWS SDK v3
// clients, so that what the AWS secrets engine's tests rely on is known to match what a real AWS
// client sends and understands: awsQuery form bodies, SigV4 (checked with an independent signer;
// a wrong secret, an unknown or disabled key, a stale date, a changed body and a missing or wrong
// session token are all refused), the IAM and STS actions with AWS's result shapes, errors and
// limits, paging, and the control API (reset, state, call log, faults, delays, clock).
import {
  AddUserToGroupCommand,
  AttachUserPolicyCommand,
  CreateAccessKeyCommand,
  CreateGroupCommand,
  CreateUserCommand,
  DeleteAccessKeyCommand,
  DeleteUserCommand,
  DeleteUserPolicyCommand,
  DetachUserPolicyCommand,
  GetGroupPolicyCommand,
  GetUserCommand,
  GetUserPolicyCommand,
  IAMClient,
  ListAccessKeysCommand,
  ListAttachedGroupPoliciesCommand,
  ListAttachedUserPoliciesCommand,
  ListGroupPoliciesCommand,
  ListGroupsForUserCommand,
  ListUserPoliciesCommand,
  ListUsersCommand,
  ListUserTagsCommand,
  paginateListUsers,
  PutUserPolicyCommand,
  RemoveUserFromGroupCommand,
  TagUserCommand,
  UpdateAccessKeyCommand,
} from '@aws-sdk/client-iam';
import { AssumeRoleCommand, GetCallerIdentityCommand, GetFederationTokenCommand, GetSessionTokenCommand, STSClient } from '@aws-sdk/client-sts';
import { AwsClient } from 'aws4fetch';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { awsEmulator, type AwsEmulatorControl, type ResetBody } from '../emulators/aws-iam-sts/client';
import { startAwsEmulator, type AwsEmulator } from '../emulators/aws-iam-sts/server';

interface Creds {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

const ROOT: Creds = { accessKeyId: 'AKIAROOTKEY000000001', secretAccessKey: 'rootsecretrootsecretrootsecretrootsecret' };
const ALICE: Creds = { accessKeyId: 'AKIAALICEKEY00000001', secretAccessKey: 'alice/secret+alice/secret+alice/secret+a' };
const ACCOUNT = '123456789012';
const DOC = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 's3:GetObject', Resource: 'arn:aws:s3:::b/*' }] });
const GROUP_DOC = JSON.stringify({ Version: '2012-10-17', Statement: { Effect: 'Allow', Action: 'ec2:Describe*', Resource: '*' } });

const SEED: ResetBody = {
  root: ROOT,
  groups: [{ groupName: 'devs', path: '/teams/', attachedPolicies: ['arn:aws:iam::aws:policy/ReadOnlyAccess'], inlinePolicies: { 'devs-inline': GROUP_DOC } }],
  users: [{ userName: 'alice', accessKeys: [ALICE], attachedPolicies: ['arn:aws:iam::aws:policy/IAMFullAccess'], groups: ['devs'] }],
  roles: [
    { roleName: 'deployer', path: '/ci/', maxSessionDuration: 7200 },
    { roleName: 'partner', externalId: 'ext-123' },
  ],
};

let emu: AwsEmulator;
let control: AwsEmulatorControl;

const iam = (creds: Creds, extra: { maxAttempts?: number; systemClockOffset?: number } = {}) =>
  new IAMClient({ endpoint: emu.base, region: 'us-east-1', credentials: creds, maxAttempts: 1, ...extra });
const sts = (creds: Creds, extra: { maxAttempts?: number; systemClockOffset?: number; region?: string } = {}) =>
  new STSClient({ endpoint: emu.base, region: 'us-east-1', credentials: creds, maxAttempts: 1, ...extra });

interface Failure {
  code: string;
  status: number | undefined;
  message: string;
  type: string | undefined;
  fault: string | undefined;
}

/** The AWS error a call failed with (the call must fail). */
async function failure(p: Promise<unknown>): Promise<Failure> {
  try {
    await p;
  } catch (e) {
    const err = e as { Code?: string; name: string; message: string; Type?: string; $fault?: string; $metadata?: { httpStatusCode?: number } };
    return { code: err.Code ?? err.name, status: err.$metadata?.httpStatusCode, message: err.message, type: err.Type, fault: err.$fault };
  }
  throw new Error('the call succeeded');
}

/** A Query API call signed by aws4fetch, the signer the product uses. */
const post = (aws: AwsClient, body: string) =>
  aws.fetch(`${emu.base}/`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' }, body });

const KEY_ID = /^AKIA[A-Z0-9]{16}$/;
const TEMP_KEY_ID = /^ASIA[A-Z0-9]{16}$/;

beforeAll(async () => {
  emu = await startAwsEmulator();
  control = awsEmulator(emu.base);
});
afterAll(() => emu.close());
beforeEach(async () => {
  await control.reset(SEED);
});

describe('wire protocol', () => {
  it('reads the SDK clients as awsQuery form posts and logs each call', async () => {
    await iam(ALICE).send(new CreateUserCommand({ UserName: 'bob', Tags: [{ Key: 'team', Value: 'a b' }] }));
    await sts(ALICE).send(new GetCallerIdentityCommand({}));
    const calls = await control.calls();
    expect(calls).toEqual([
      {
        service: 'iam',
        action: 'CreateUser',
        region: 'us-east-1',
        params: { Action: 'CreateUser', Version: '2010-05-08', UserName: 'bob', 'Tags.member.1.Key': 'team', 'Tags.member.1.Value': 'a b' },
        accessKeyId: ALICE.accessKeyId,
        status: 200,
      },
      { service: 'sts', action: 'GetCallerIdentity', region: 'us-east-1', params: { Action: 'GetCallerIdentity', Version: '2011-06-15' }, accessKeyId: ALICE.accessKeyId, status: 200 },
    ]);
  });

  it('answers text/xml documents in the service namespace, errors as ErrorResponse', async () => {
    const aws = new AwsClient({ ...ALICE, service: 'iam', region: 'us-east-1' });
    const ok = await post(aws, 'Action=GetUser&Version=2010-05-08');
    expect(ok.status).toBe(200);
    expect(ok.headers.get('content-type')).toBe('text/xml');
    const xml = await ok.text();
    expect(xml).toMatch(/^<GetUserResponse xmlns="https:\/\/iam\.amazonaws\.com\/doc\/2010-05-08\/"><GetUserResult><User><Path>\/<\/Path><UserName>alice<\/UserName>/);
    expect(xml).toMatch(/<ResponseMetadata><RequestId>[0-9a-f-]{36}<\/RequestId><\/ResponseMetadata><\/GetUserResponse>/);

    const none = await post(aws, 'Action=GetUser&Version=2010-05-08&UserName=nobody');
    expect(none.status).toBe(404);
    expect(await none.text()).toMatch(
      /^<ErrorResponse xmlns="https:\/\/iam\.amazonaws\.com\/doc\/2010-05-08\/"><Error><Type>Sender<\/Type><Code>NoSuchEntity<\/Code><Message>The user with name nobody cannot be found\.<\/Message><\/Error><RequestId>[0-9a-f-]{36}<\/RequestId><\/ErrorResponse>/,
    );

    const stsAws = new AwsClient({ ...ALICE, service: 'sts', region: 'us-east-1' });
    const who = await post(stsAws, 'Action=GetCallerIdentity&Version=2011-06-15');
    expect(await who.text()).toContain('<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>');
  });

  it('accepts the query-string form (GET) signed by aws4fetch, the product signer', async () => {
    const aws = new AwsClient({ ...ALICE, service: 'iam', region: 'us-east-1' });
    const res = await aws.fetch(`${emu.base}/?Action=ListUsers&Version=2010-05-08&MaxItems=1`);
    expect(res.status).toBe(200);
    expect(await res.text()).toContain('<Users><member><Path>/</Path><UserName>alice</UserName>');
  });

  it('escapes XML in messages (the SDK reads back exactly what was sent)', async () => {
    const f = await failure(iam(ALICE).send(new GetUserCommand({ UserName: `x<&>'"y` })));
    expect(f).toMatchObject({ code: 'ValidationError', status: 400 });
    expect(f.message).toContain(`Value 'x<&>'"y' at 'userName'`);
  });

  it('refuses an action of the other service, a wrong Version, and no Action', async () => {
    expect(await failure(sts(ALICE).send(new GetUserCommand({}) as never))).toMatchObject({ code: 'InvalidAction', status: 400 });
    const aws = new AwsClient({ ...ALICE, service: 'iam', region: 'us-east-1' });
    const wrong = await post(aws, 'Action=GetUser&Version=2011-06-15');
    expect(wrong.status).toBe(400);
    expect(await wrong.text()).toContain('<Code>InvalidAction</Code>');
    const noAction = await post(aws, 'Version=2010-05-08');
    expect(await noAction.text()).toContain('<Code>MissingAction</Code>');
    // A body that is not a form is not read (fetch labels a string body text/plain).
    const plain = await aws.fetch(`${emu.base}/`, { method: 'POST', body: 'Action=GetUser&Version=2010-05-08' });
    expect(plain.status).toBe(400);
    expect(await plain.text()).toContain('<Code>MissingAction</Code><Message>Missing Action (the body was not read: its Content-Type is text/plain;charset=UTF-8');
  });
});

describe('authentication', () => {
  it('knows who signed: the root, a user, by key', async () => {
    expect(await sts(ROOT).send(new GetCallerIdentityCommand({}))).toMatchObject({ UserId: ACCOUNT, Account: ACCOUNT, Arn: `arn:aws:iam::${ACCOUNT}:root` });
    const state = await control.state();
    expect(await sts(ALICE).send(new GetCallerIdentityCommand({}))).toMatchObject({ UserId: state.users[0].userId, Account: ACCOUNT, Arn: `arn:aws:iam::${ACCOUNT}:user/alice` });
  });

  it('refuses a wrong secret with SignatureDoesNotMatch, on IAM and STS', async () => {
    const wrong = { ...ALICE, secretAccessKey: ALICE.secretAccessKey.replace(/^a/, 'b') };
    for (const f of [await failure(iam(wrong).send(new GetUserCommand({}))), await failure(sts(wrong).send(new GetCallerIdentityCommand({})))]) {
      expect(f).toMatchObject({ code: 'SignatureDoesNotMatch', status: 403, type: 'Sender' });
      expect(f.message).toContain('The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.');
    }
    expect((await control.calls()).map((c) => [c.service, c.status, c.code])).toEqual([
      ['iam', 403, 'SignatureDoesNotMatch'],
      ['sts', 403, 'SignatureDoesNotMatch'],
    ]);
  });

  it('refuses an unknown key id with InvalidClientTokenId', async () => {
    const f = await failure(sts({ accessKeyId: 'AKIANOSUCHKEY0000000', secretAccessKey: ALICE.secretAccessKey }).send(new GetCallerIdentityCommand({})));
    expect(f).toEqual({ code: 'InvalidClientTokenId', status: 403, message: 'The security token included in the request is invalid.', type: 'Sender', fault: 'client' });
  });

  it('refuses a request without Authorization with MissingAuthenticationToken', async () => {
    const res = await fetch(`${emu.base}/`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'Action=GetCallerIdentity&Version=2011-06-15' });
    expect(res.status).toBe(403);
    const xml = await res.text();
    expect(xml).toContain('<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">');
    expect(xml).toContain('<Code>MissingAuthenticationToken</Code>');
  });

  it('refuses a body changed after signing, even with a signed X-Amz-Content-Sha256', async () => {
    const aws = new AwsClient({ ...ROOT, service: 'iam', region: 'us-east-1' });
    const body = 'Action=CreateUser&Version=2010-05-08&UserName=good';
    for (const headers of [{}, { 'X-Amz-Content-Sha256': createHash('sha256').update(body).digest('hex') }] as Record<string, string>[]) {
      const signed = await aws.sign(`${emu.base}/`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
      const res = await fetch(signed.url, { method: 'POST', headers: signed.headers, body: body.replace('good', 'evil') });
      expect(res.status).toBe(403);
      expect(await res.text()).toContain('<Code>SignatureDoesNotMatch</Code>');
    }
    expect((await control.state()).users.map((u) => u.userName)).toEqual(['alice']);
  });

  it('refuses an X-Amz-Date more than 15 minutes off; the SDK corrects its clock from the Date header', async () => {
    const f = await failure(sts(ALICE, { systemClockOffset: -20 * 60_000 }).send(new GetCallerIdentityCommand({})));
    expect(f).toMatchObject({ code: 'SignatureDoesNotMatch', status: 403 });
    expect(f.message).toMatch(/^Signature expired: \d{8}T\d{6}Z is now earlier than \d{8}T\d{6}Z \(\d{8}T\d{6}Z - 15 min\.\)$/);
    const ahead = await failure(sts(ALICE, { systemClockOffset: 20 * 60_000 }).send(new GetCallerIdentityCommand({})));
    expect(ahead.message).toMatch(/^Signature not yet current: /);

    // The SDK takes the server's time from the error's Date header, so its next call is fresh.
    const skewed = sts(ALICE, { systemClockOffset: -20 * 60_000 });
    expect(await failure(skewed.send(new GetCallerIdentityCommand({})))).toMatchObject({ code: 'SignatureDoesNotMatch' });
    expect((await skewed.send(new GetCallerIdentityCommand({}))).Arn).toBe(`arn:aws:iam::${ACCOUNT}:user/alice`);
  });

  it('takes any region (logging it) but only the iam and sts services in the scope', async () => {
    // A custom IAM endpoint is signed for the configured region (Vault's rule).
    const aws = new AwsClient({ ...ALICE, service: 'iam', region: 'eu-west-1' });
    expect((await post(aws, 'Action=GetUser&Version=2010-05-08')).status).toBe(200);
    expect((await sts(ALICE, { region: 'eu-central-1' }).send(new GetCallerIdentityCommand({}))).Arn).toContain('user/alice');
    expect((await control.calls()).map((c) => [c.service, c.region])).toEqual([
      ['iam', 'eu-west-1'],
      ['sts', 'eu-central-1'],
    ]);
    const s3 = new AwsClient({ ...ALICE, service: 's3', region: 'us-east-1' });
    const res = await post(s3, 'Action=GetUser&Version=2010-05-08');
    expect(res.status).toBe(403);
    expect(await res.text()).toContain('<Code>SignatureDoesNotMatch</Code><Message>Credential should be scoped to correct service: &apos;iam&apos; or &apos;sts&apos;, not &apos;s3&apos;. </Message>');
    const nowhere = new AwsClient({ ...ALICE, service: 'iam', region: 'nowhere' });
    expect((await post(nowhere, 'Action=GetUser&Version=2010-05-08')).status).toBe(403);
  });

  it('stops taking a key once Inactive or deleted', async () => {
    const created = await iam(ROOT).send(new CreateAccessKeyCommand({ UserName: 'alice' }));
    const second: Creds = { accessKeyId: created.AccessKey!.AccessKeyId!, secretAccessKey: created.AccessKey!.SecretAccessKey! };
    expect((await sts(second).send(new GetCallerIdentityCommand({}))).Arn).toContain('user/alice');

    await iam(ROOT).send(new UpdateAccessKeyCommand({ UserName: 'alice', AccessKeyId: second.accessKeyId, Status: 'Inactive' }));
    expect(await failure(sts(second).send(new GetCallerIdentityCommand({})))).toMatchObject({ code: 'InvalidClientTokenId', status: 403 });
    await iam(ROOT).send(new UpdateAccessKeyCommand({ UserName: 'alice', AccessKeyId: second.accessKeyId, Status: 'Active' }));
    expect((await sts(second).send(new GetCallerIdentityCommand({}))).Arn).toContain('user/alice');

    await iam(ROOT).send(new DeleteAccessKeyCommand({ UserName: 'alice', AccessKeyId: second.accessKeyId }));
    expect(await failure(sts(second).send(new GetCallerIdentityCommand({})))).toMatchObject({ code: 'InvalidClientTokenId', status: 403 });
  });

  it('takes temporary credentials only with their session token, and only until they expire', async () => {
    const out = await sts(ALICE).send(new AssumeRoleCommand({ RoleArn: `arn:aws:iam::${ACCOUNT}:role/ci/deployer`, RoleSessionName: 'build-1', DurationSeconds: 900 }));
    const c = out.Credentials!;
    const temp: Creds = { accessKeyId: c.AccessKeyId!, secretAccessKey: c.SecretAccessKey!, sessionToken: c.SessionToken! };
    expect((await sts(temp).send(new GetCallerIdentityCommand({}))).Arn).toBe(`arn:aws:sts::${ACCOUNT}:assumed-role/deployer/build-1`);

    // aws4fetch signs X-Amz-Security-Token too.
    const aws = new AwsClient({ ...temp, service: 'iam', region: 'us-east-1' });
    expect((await post(aws, 'Action=ListUsers&Version=2010-05-08')).status).toBe(200);

    const noToken = { accessKeyId: temp.accessKeyId, secretAccessKey: temp.secretAccessKey };
    expect(await failure(sts(noToken).send(new GetCallerIdentityCommand({})))).toMatchObject({ code: 'InvalidClientTokenId', status: 403 });
    expect(await failure(sts({ ...temp, sessionToken: `${temp.sessionToken}x` }).send(new GetCallerIdentityCommand({})))).toMatchObject({ code: 'InvalidClientTokenId' });
    // A long-term key sent with a session token is not a valid pairing either.
    expect(await failure(sts({ ...ALICE, sessionToken: temp.sessionToken }).send(new GetCallerIdentityCommand({})))).toMatchObject({ code: 'InvalidClientTokenId' });

    await control.clock({ advanceMs: 899_000 });
    expect((await sts(temp).send(new GetCallerIdentityCommand({}))).Account).toBe(ACCOUNT);
    await control.clock({ advanceMs: 1_000 });
    expect(await failure(sts(temp).send(new GetCallerIdentityCommand({})))).toEqual({
      code: 'ExpiredToken',
      status: 403,
      message: 'The security token included in the request is expired',
      type: 'Sender',
      fault: 'client',
    });
    expect((await control.state()).tempCredentials[0].expired).toBe(true);
  });
});

describe('IAM users', () => {
  it('creates a user with path, permissions boundary and tags, and reads it back', async () => {
    const boundary = `arn:aws:iam::${ACCOUNT}:policy/boundaries/dev`;
    const { User: u } = await iam(ROOT).send(
      new CreateUserCommand({ UserName: 'vault-token-1', Path: '/vault/', PermissionsBoundary: boundary, Tags: [{ Key: 'owner', Value: 'coffer' }] }),
    );
    expect(u).toMatchObject({
      Path: '/vault/',
      UserName: 'vault-token-1',
      Arn: `arn:aws:iam::${ACCOUNT}:user/vault/vault-token-1`,
      PermissionsBoundary: { PermissionsBoundaryType: 'PermissionsBoundaryPolicy', PermissionsBoundaryArn: boundary },
      Tags: [{ Key: 'owner', Value: 'coffer' }],
    });
    expect(u!.UserId).toMatch(/^AIDA[A-Z0-9]{17}$/);
    expect(u!.CreateDate).toBeInstanceOf(Date);
    expect(Math.abs(u!.CreateDate!.getTime() - Date.now())).toBeLessThan(5_000);
    expect((await iam(ROOT).send(new GetUserCommand({ UserName: 'VAULT-TOKEN-1' }))).User).toEqual(u);

    const state = await control.state();
    expect(state.users.find((x) => x.userName === 'vault-token-1')).toMatchObject({ path: '/vault/', permissionsBoundary: boundary, tags: [{ Key: 'owner', Value: 'coffer' }] });
  });

  it('refuses a second user of the same name, case-insensitively', async () => {
    expect(await failure(iam(ROOT).send(new CreateUserCommand({ UserName: 'ALICE' })))).toEqual({
      code: 'EntityAlreadyExists',
      status: 409,
      message: 'User with name ALICE already exists.',
      type: 'Sender',
      fault: 'client',
    });
  });

  it('answers GetUser without UserName with the caller, and NoSuchEntity for nobody', async () => {
    expect((await iam(ALICE).send(new GetUserCommand({}))).User).toMatchObject({ UserName: 'alice', Arn: `arn:aws:iam::${ACCOUNT}:user/alice` });
    expect((await iam(ROOT).send(new GetUserCommand({}))).User).toMatchObject({ UserId: ACCOUNT, Arn: `arn:aws:iam::${ACCOUNT}:root` });
    expect(await failure(iam(ALICE).send(new GetUserCommand({ UserName: 'nobody' })))).toEqual({
      code: 'NoSuchEntity',
      status: 404,
      message: 'The user with name nobody cannot be found.',
      type: 'Sender',
      fault: 'client',
    });
  });

  it('checks names and paths', async () => {
    expect(await failure(iam(ROOT).send(new CreateUserCommand({ UserName: 'a'.repeat(65) })))).toMatchObject({ code: 'ValidationError', status: 400 });
    expect(await failure(iam(ROOT).send(new CreateUserCommand({ UserName: 'x', Path: 'no-slashes' })))).toMatchObject({ code: 'ValidationError', status: 400 });
    expect(await failure(iam(ROOT).send(new CreateUserCommand({ UserName: 'x', PermissionsBoundary: 'not-an-arn' })))).toMatchObject({ code: 'InvalidInput', status: 400 });
  });

  it('pages ListUsers with MaxItems and Marker', async () => {
    for (const name of ['erin', 'bob', 'dave', 'carol']) await iam(ROOT).send(new CreateUserCommand({ UserName: name }));
    const first = await iam(ROOT).send(new ListUsersCommand({ MaxItems: 2 }));
    expect(first.Users!.map((u) => u.UserName)).toEqual(['alice', 'bob']);
    expect(first.IsTruncated).toBe(true);
    expect(first.Marker).toBeTruthy();
    const names: string[] = [];
    for await (const page of paginateListUsers({ client: iam(ROOT), pageSize: 2 }, {})) names.push(...page.Users!.map((u) => u.UserName!));
    expect(names).toEqual(['alice', 'bob', 'carol', 'dave', 'erin']);
    const all = await iam(ROOT).send(new ListUsersCommand({}));
    expect(all.IsTruncated).toBe(false);
    expect(all.Marker).toBeUndefined();
    expect(await failure(iam(ROOT).send(new ListUsersCommand({ MaxItems: 0 })))).toMatchObject({ code: 'ValidationError' });
  });

  it('refuses DeleteUser while the user has keys, policies or groups', async () => {
    const conflict = async () => failure(iam(ROOT).send(new DeleteUserCommand({ UserName: 'alice' })));
    expect(await conflict()).toMatchObject({ code: 'DeleteConflict', status: 409, message: 'Cannot delete entity, must delete access keys first.' });
    await iam(ROOT).send(new DeleteAccessKeyCommand({ UserName: 'alice', AccessKeyId: ALICE.accessKeyId }));
    await iam(ROOT).send(new PutUserPolicyCommand({ UserName: 'alice', PolicyName: 'p', PolicyDocument: DOC }));
    expect(await conflict()).toMatchObject({ code: 'DeleteConflict', message: 'Cannot delete entity, must delete policies first.' });
    await iam(ROOT).send(new DeleteUserPolicyCommand({ UserName: 'alice', PolicyName: 'p' }));
    expect(await conflict()).toMatchObject({ code: 'DeleteConflict', message: 'Cannot delete entity, must detach all policies first.' });
    await iam(ROOT).send(new DetachUserPolicyCommand({ UserName: 'alice', PolicyArn: 'arn:aws:iam::aws:policy/IAMFullAccess' }));
    expect(await conflict()).toMatchObject({ code: 'DeleteConflict', message: 'Cannot delete entity, must remove users from group first.' });
    await iam(ROOT).send(new RemoveUserFromGroupCommand({ UserName: 'alice', GroupName: 'devs' }));
    await iam(ROOT).send(new DeleteUserCommand({ UserName: 'alice' }));
    expect((await control.state()).users).toEqual([]);
    expect(await failure(iam(ROOT).send(new DeleteUserCommand({ UserName: 'alice' })))).toMatchObject({ code: 'NoSuchEntity', status: 404 });
  });
});

describe('IAM access keys', () => {
  it('issues AKIA keys with 40-character secrets, at most two per user', async () => {
    await iam(ROOT).send(new CreateUserCommand({ UserName: 'bob' }));
    const a = (await iam(ROOT).send(new CreateAccessKeyCommand({ UserName: 'bob' }))).AccessKey!;
    expect(a).toMatchObject({ UserName: 'bob', Status: 'Active' });
    expect(a.AccessKeyId).toMatch(KEY_ID);
    expect(a.SecretAccessKey).toHaveLength(40);
    expect(a.CreateDate).toBeInstanceOf(Date);
    const b = (await iam(ROOT).send(new CreateAccessKeyCommand({ UserName: 'bob' }))).AccessKey!;
    expect(await failure(iam(ROOT).send(new CreateAccessKeyCommand({ UserName: 'bob' })))).toEqual({
      code: 'LimitExceeded',
      status: 409,
      message: 'Cannot exceed quota for AccessKeysPerUser: 2',
      type: 'Sender',
      fault: 'client',
    });
    const listed = await iam(ROOT).send(new ListAccessKeysCommand({ UserName: 'bob' }));
    expect(listed.AccessKeyMetadata!.map((k) => [k.UserName, k.AccessKeyId, k.Status])).toEqual([
      ['bob', a.AccessKeyId, 'Active'],
      ['bob', b.AccessKeyId, 'Active'],
    ]);
    expect(listed.IsTruncated).toBe(false);

    // The new key signs.
    const bob = { accessKeyId: b.AccessKeyId!, secretAccessKey: b.SecretAccessKey! };
    expect((await iam(bob).send(new GetUserCommand({}))).User!.UserName).toBe('bob');
    const state = await control.state();
    expect(state.users.find((u) => u.userName === 'bob')!.accessKeys.map((k) => k.secretAccessKey)).toEqual([a.SecretAccessKey, b.SecretAccessKey]);
  });

  it('acts on the caller when UserName is left out', async () => {
    const mine = (await iam(ALICE).send(new CreateAccessKeyCommand({}))).AccessKey!;
    expect(mine.UserName).toBe('alice');
    expect((await iam(ALICE).send(new ListAccessKeysCommand({}))).AccessKeyMetadata).toHaveLength(2);
    await iam(ALICE).send(new DeleteAccessKeyCommand({ AccessKeyId: mine.AccessKeyId }));
    expect((await control.state()).users[0].accessKeys.map((k) => k.accessKeyId)).toEqual([ALICE.accessKeyId]);
  });

  it('answers NoSuchEntity for a key that is not the user’s', async () => {
    await iam(ROOT).send(new CreateUserCommand({ UserName: 'bob' }));
    const f = await failure(iam(ROOT).send(new DeleteAccessKeyCommand({ UserName: 'bob', AccessKeyId: ALICE.accessKeyId })));
    expect(f).toMatchObject({ code: 'NoSuchEntity', status: 404, message: `The Access Key with id ${ALICE.accessKeyId} cannot be found.` });
    expect(await failure(iam(ROOT).send(new UpdateAccessKeyCommand({ UserName: 'alice', AccessKeyId: ALICE.accessKeyId, Status: 'Paused' as never })))).toMatchObject({
      code: 'ValidationError',
    });
  });
});

describe('IAM policies, groups, tags', () => {
  it('attaches and detaches managed policies, refusing malformed ARNs', async () => {
    await iam(ROOT).send(new AttachUserPolicyCommand({ UserName: 'alice', PolicyArn: `arn:aws:iam::${ACCOUNT}:policy/team/Custom` }));
    await iam(ROOT).send(new AttachUserPolicyCommand({ UserName: 'alice', PolicyArn: 'arn:aws:iam::aws:policy/service-role/AWSLambdaRole' }));
    const listed = await iam(ROOT).send(new ListAttachedUserPoliciesCommand({ UserName: 'alice' }));
    expect(listed.AttachedPolicies).toEqual([
      { PolicyName: 'IAMFullAccess', PolicyArn: 'arn:aws:iam::aws:policy/IAMFullAccess' },
      { PolicyName: 'Custom', PolicyArn: `arn:aws:iam::${ACCOUNT}:policy/team/Custom` },
      { PolicyName: 'AWSLambdaRole', PolicyArn: 'arn:aws:iam::aws:policy/service-role/AWSLambdaRole' },
    ]);
    const paged = await iam(ROOT).send(new ListAttachedUserPoliciesCommand({ UserName: 'alice', MaxItems: 1 }));
    expect(paged).toMatchObject({ IsTruncated: true, AttachedPolicies: [{ PolicyName: 'IAMFullAccess' }] });
    const rest = await iam(ROOT).send(new ListAttachedUserPoliciesCommand({ UserName: 'alice', Marker: paged.Marker }));
    expect(rest.AttachedPolicies!.map((p) => p.PolicyName)).toEqual(['Custom', 'AWSLambdaRole']);
    const byPath = await iam(ROOT).send(new ListAttachedUserPoliciesCommand({ UserName: 'alice', PathPrefix: '/service-role/' }));
    expect(byPath.AttachedPolicies!.map((p) => p.PolicyName)).toEqual(['AWSLambdaRole']);

    for (const bad of ['IAMFullAccess', 'arn:aws:iam::aws:role/x', 'arn:aws:s3:::bucket', 'arn:aws:iam::12345:policy/x']) {
      expect(await failure(iam(ROOT).send(new AttachUserPolicyCommand({ UserName: 'alice', PolicyArn: bad })))).toMatchObject({
        code: 'InvalidInput',
        status: 400,
        message: `ARN ${bad} is not valid.`,
      });
    }
    expect(await failure(iam(ROOT).send(new AttachUserPolicyCommand({ UserName: 'nobody', PolicyArn: 'arn:aws:iam::aws:policy/X' })))).toMatchObject({ code: 'NoSuchEntity' });
    await iam(ROOT).send(new DetachUserPolicyCommand({ UserName: 'alice', PolicyArn: `arn:aws:iam::${ACCOUNT}:policy/team/Custom` }));
    expect(await failure(iam(ROOT).send(new DetachUserPolicyCommand({ UserName: 'alice', PolicyArn: `arn:aws:iam::${ACCOUNT}:policy/team/Custom` })))).toMatchObject({
      code: 'NoSuchEntity',
      status: 404,
    });
    expect((await control.state()).users[0].attachedPolicies).toEqual(['arn:aws:iam::aws:policy/IAMFullAccess', 'arn:aws:iam::aws:policy/service-role/AWSLambdaRole']);
  });

  it('puts, lists, reads (URL-encoded, as AWS answers) and deletes inline policies', async () => {
    await iam(ROOT).send(new PutUserPolicyCommand({ UserName: 'alice', PolicyName: 'zeta', PolicyDocument: DOC }));
    await iam(ROOT).send(new PutUserPolicyCommand({ UserName: 'alice', PolicyName: 'alpha', PolicyDocument: DOC }));
    expect((await iam(ROOT).send(new ListUserPoliciesCommand({ UserName: 'alice' }))).PolicyNames).toEqual(['alpha', 'zeta']);
    const got = await iam(ROOT).send(new GetUserPolicyCommand({ UserName: 'alice', PolicyName: 'zeta' }));
    expect(got).toMatchObject({ UserName: 'alice', PolicyName: 'zeta' });
    expect(got.PolicyDocument).toBe(encodeURIComponent(DOC));
    expect(decodeURIComponent(got.PolicyDocument!)).toBe(DOC);
    expect(await failure(iam(ROOT).send(new PutUserPolicyCommand({ UserName: 'alice', PolicyName: 'bad', PolicyDocument: 'not json' })))).toMatchObject({
      code: 'MalformedPolicyDocument',
      status: 400,
    });
    await iam(ROOT).send(new DeleteUserPolicyCommand({ UserName: 'alice', PolicyName: 'zeta' }));
    expect(await failure(iam(ROOT).send(new GetUserPolicyCommand({ UserName: 'alice', PolicyName: 'zeta' })))).toMatchObject({
      code: 'NoSuchEntity',
      message: 'The user policy with name zeta cannot be found.',
    });
    expect((await control.state()).users[0].inlinePolicies).toEqual({ alpha: DOC });
  });

  it('adds users to existing groups only, and lists groups and their policies', async () => {
    expect(await failure(iam(ROOT).send(new AddUserToGroupCommand({ UserName: 'alice', GroupName: 'ghosts' })))).toEqual({
      code: 'NoSuchEntity',
      status: 404,
      message: 'The group with name ghosts cannot be found.',
      type: 'Sender',
      fault: 'client',
    });
    const { Group: g } = await iam(ROOT).send(new CreateGroupCommand({ GroupName: 'ops' }));
    expect(g).toMatchObject({ Path: '/', GroupName: 'ops', Arn: `arn:aws:iam::${ACCOUNT}:group/ops` });
    expect(g!.GroupId).toMatch(/^AGPA[A-Z0-9]{17}$/);
    expect(await failure(iam(ROOT).send(new CreateGroupCommand({ GroupName: 'OPS' })))).toMatchObject({ code: 'EntityAlreadyExists', status: 409 });
    await iam(ROOT).send(new AddUserToGroupCommand({ UserName: 'alice', GroupName: 'ops' }));
    const groups = await iam(ROOT).send(new ListGroupsForUserCommand({ UserName: 'alice' }));
    expect(groups.Groups!.map((x) => [x.GroupName, x.Path, x.Arn])).toEqual([
      ['devs', '/teams/', `arn:aws:iam::${ACCOUNT}:group/teams/devs`],
      ['ops', '/', `arn:aws:iam::${ACCOUNT}:group/ops`],
    ]);
    expect(groups.Groups![1].CreateDate).toBeInstanceOf(Date);
    expect(groups.IsTruncated).toBe(false);
    await iam(ROOT).send(new RemoveUserFromGroupCommand({ UserName: 'alice', GroupName: 'ops' }));
    expect((await control.state()).users[0].groups).toEqual(['devs']);

    expect((await iam(ALICE).send(new ListAttachedGroupPoliciesCommand({ GroupName: 'devs' }))).AttachedPolicies).toEqual([
      { PolicyName: 'ReadOnlyAccess', PolicyArn: 'arn:aws:iam::aws:policy/ReadOnlyAccess' },
    ]);
    expect((await iam(ALICE).send(new ListGroupPoliciesCommand({ GroupName: 'devs' }))).PolicyNames).toEqual(['devs-inline']);
    const gp = await iam(ALICE).send(new GetGroupPolicyCommand({ GroupName: 'devs', PolicyName: 'devs-inline' }));
    expect(gp).toMatchObject({ GroupName: 'devs', PolicyName: 'devs-inline', PolicyDocument: encodeURIComponent(GROUP_DOC) });
    expect(await failure(iam(ALICE).send(new ListGroupPoliciesCommand({ GroupName: 'ghosts' })))).toMatchObject({ code: 'NoSuchEntity' });
  });

  it('tags users, at most 50 tags', async () => {
    await iam(ROOT).send(new TagUserCommand({ UserName: 'alice', Tags: [{ Key: 'a', Value: '1' }, { Key: 'b', Value: '2' }] }));
    await iam(ROOT).send(new TagUserCommand({ UserName: 'alice', Tags: [{ Key: 'A', Value: '3' }] }));
    expect((await iam(ROOT).send(new ListUserTagsCommand({ UserName: 'alice' }))).Tags).toEqual([
      { Key: 'A', Value: '3' },
      { Key: 'b', Value: '2' },
    ]);
    const many = Array.from({ length: 48 }, (_, i) => ({ Key: `k${i}`, Value: 'v' }));
    await iam(ROOT).send(new TagUserCommand({ UserName: 'alice', Tags: many }));
    const paged = await iam(ROOT).send(new ListUserTagsCommand({ UserName: 'alice', MaxItems: 10 }));
    expect(paged.Tags).toHaveLength(10);
    expect(paged.IsTruncated).toBe(true);
    expect(await failure(iam(ROOT).send(new TagUserCommand({ UserName: 'alice', Tags: [{ Key: 'one-too-many', Value: 'v' }] })))).toMatchObject({
      code: 'LimitExceeded',
      status: 409,
    });
    const tooMany = Array.from({ length: 51 }, (_, i) => ({ Key: `t${i}`, Value: 'v' }));
    expect(await failure(iam(ROOT).send(new CreateUserCommand({ UserName: 'bob', Tags: tooMany })))).toMatchObject({ code: 'ValidationError', status: 400 });
  });
});

describe('STS', () => {
  it('assumes a role, recording session policy, policy ARNs, tags and external id', async () => {
    const policy = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 's3:*', Resource: '*' }] });
    const out = await sts(ALICE).send(
      new AssumeRoleCommand({
        RoleArn: `arn:aws:iam::${ACCOUNT}:role/partner`,
        RoleSessionName: 'vault-alice@example.com',
        ExternalId: 'ext-123',
        DurationSeconds: 1800,
        Policy: policy,
        PolicyArns: [{ arn: 'arn:aws:iam::aws:policy/ReadOnlyAccess' }],
        Tags: [{ Key: 'project', Value: 'coffer' }],
      }),
    );
    const c = out.Credentials!;
    expect(c.AccessKeyId).toMatch(TEMP_KEY_ID);
    expect(c.SecretAccessKey).toHaveLength(40);
    expect(c.SessionToken!.length).toBeGreaterThan(100);
    expect(Math.abs(c.Expiration!.getTime() - (Date.now() + 1800_000))).toBeLessThan(5_000);
    const state = await control.state();
    const roleId = state.roles.find((r) => r.roleName === 'partner')!.roleId;
    expect(roleId).toMatch(/^AROA[A-Z0-9]{17}$/);
    expect(out.AssumedRoleUser).toEqual({ AssumedRoleId: `${roleId}:vault-alice@example.com`, Arn: `arn:aws:sts::${ACCOUNT}:assumed-role/partner/vault-alice@example.com` });
    expect(out.PackedPolicySize).toBeGreaterThan(0);
    expect(state.tempCredentials).toEqual([
      expect.objectContaining({
        accessKeyId: c.AccessKeyId,
        action: 'AssumeRole',
        issuedTo: ALICE.accessKeyId,
        roleArn: `arn:aws:iam::${ACCOUNT}:role/partner`,
        roleSessionName: 'vault-alice@example.com',
        policy,
        policyArns: ['arn:aws:iam::aws:policy/ReadOnlyAccess'],
        tags: [{ Key: 'project', Value: 'coffer' }],
        externalId: 'ext-123',
        durationSeconds: 1800,
        expired: false,
      }),
    ]);
    const temp = { accessKeyId: c.AccessKeyId!, secretAccessKey: c.SecretAccessKey!, sessionToken: c.SessionToken! };
    expect(await sts(temp).send(new GetCallerIdentityCommand({}))).toMatchObject({
      UserId: `${roleId}:vault-alice@example.com`,
      Account: ACCOUNT,
      Arn: `arn:aws:sts::${ACCOUNT}:assumed-role/partner/vault-alice@example.com`,
    });
    // Assumed-role credentials are no IAM user: GetUser needs a name.
    expect(await failure(iam(temp).send(new GetUserCommand({})))).toMatchObject({ code: 'ValidationError' });
  });

  it('checks the external id, the role, the session name and the duration', async () => {
    const assume = (input: Partial<ConstructorParameters<typeof AssumeRoleCommand>[0]>, creds = ALICE) =>
      failure(sts(creds).send(new AssumeRoleCommand({ RoleArn: `arn:aws:iam::${ACCOUNT}:role/partner`, RoleSessionName: 's1', ExternalId: 'ext-123', ...input })));
    const denied = `User: arn:aws:iam::${ACCOUNT}:user/alice is not authorized to perform: sts:AssumeRole on resource: arn:aws:iam::${ACCOUNT}:role/partner`;
    expect(await assume({ ExternalId: undefined })).toMatchObject({ code: 'AccessDenied', status: 403, message: denied });
    expect(await assume({ ExternalId: 'ext-999' })).toMatchObject({ code: 'AccessDenied', status: 403 });
    expect(await assume({ RoleArn: `arn:aws:iam::${ACCOUNT}:role/nobody` })).toMatchObject({ code: 'AccessDenied', status: 403 });
    expect(await assume({ RoleSessionName: 'x' })).toMatchObject({ code: 'ValidationError', status: 400 });
    expect(await assume({ RoleSessionName: 'has space' })).toMatchObject({ code: 'ValidationError' });
    expect(await assume({ DurationSeconds: 899 })).toMatchObject({ code: 'ValidationError', status: 400 });
    expect(await assume({ DurationSeconds: 3601 })).toMatchObject({
      code: 'ValidationError',
      message: 'The requested DurationSeconds exceeds the MaxSessionDuration set for this role.',
    });
    expect(await assume({ Policy: '{not json' })).toMatchObject({ code: 'MalformedPolicyDocument', status: 400 });
    expect(await assume({ TokenCode: '12345', SerialNumber: 'arn:aws:iam::123456789012:mfa/alice' })).toMatchObject({ code: 'ValidationError' });
    expect(await assume({}, ROOT)).toMatchObject({ code: 'AccessDenied', message: 'Roles may not be assumed by root accounts.' });

    // deployer allows up to two hours, but not from a role session (role chaining: one hour).
    const long = await sts(ALICE).send(new AssumeRoleCommand({ RoleArn: `arn:aws:iam::${ACCOUNT}:role/ci/deployer`, RoleSessionName: 'long', DurationSeconds: 7200 }));
    const c = long.Credentials!;
    const chained = { accessKeyId: c.AccessKeyId!, secretAccessKey: c.SecretAccessKey!, sessionToken: c.SessionToken! };
    const f = await failure(sts(chained).send(new AssumeRoleCommand({ RoleArn: `arn:aws:iam::${ACCOUNT}:role/ci/deployer`, RoleSessionName: 'again', DurationSeconds: 7200 })));
    expect(f).toMatchObject({ code: 'ValidationError', message: 'The requested DurationSeconds exceeds the 1 hour session limit for roles assumed by role chaining.' });
    const again = await sts(chained).send(new AssumeRoleCommand({ RoleArn: `arn:aws:iam::${ACCOUNT}:role/ci/deployer`, RoleSessionName: 'again', SerialNumber: 'arn:aws:iam::123456789012:mfa/alice', TokenCode: '123456' }));
    expect(again.AssumedRoleUser!.Arn).toBe(`arn:aws:sts::${ACCOUNT}:assumed-role/deployer/again`);
    expect(again.PackedPolicySize).toBeUndefined();
    expect((await control.state()).tempCredentials[1]).toMatchObject({ issuedTo: chained.accessKeyId, serialNumber: 'arn:aws:iam::123456789012:mfa/alice', tokenCode: '123456', durationSeconds: 3600 });
  });

  it('issues federation tokens to IAM users, not to session credentials', async () => {
    const policy = JSON.stringify({ Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: 'sqs:*', Resource: '*' }] });
    const out = await sts(ALICE).send(new GetFederationTokenCommand({ Name: 'vault-fed', Policy: policy, DurationSeconds: 129600, PolicyArns: [{ arn: 'arn:aws:iam::aws:policy/ReadOnlyAccess' }] }));
    expect(out.FederatedUser).toEqual({ FederatedUserId: `${ACCOUNT}:vault-fed`, Arn: `arn:aws:sts::${ACCOUNT}:federated-user/vault-fed` });
    expect(out.Credentials!.AccessKeyId).toMatch(TEMP_KEY_ID);
    expect(Math.abs(out.Credentials!.Expiration!.getTime() - (Date.now() + 129600_000))).toBeLessThan(5_000);
    expect(out.PackedPolicySize).toBeGreaterThan(0);
    const c = out.Credentials!;
    const fed = { accessKeyId: c.AccessKeyId!, secretAccessKey: c.SecretAccessKey!, sessionToken: c.SessionToken! };
    expect(await sts(fed).send(new GetCallerIdentityCommand({}))).toMatchObject({ UserId: `${ACCOUNT}:vault-fed`, Arn: `arn:aws:sts::${ACCOUNT}:federated-user/vault-fed` });
    expect(await failure(sts(fed).send(new GetFederationTokenCommand({ Name: 'again' })))).toMatchObject({
      code: 'AccessDenied',
      status: 403,
      message: 'Cannot call GetFederationToken with session credentials',
    });
    expect(await failure(sts(ALICE).send(new GetFederationTokenCommand({ Name: 'x' })))).toMatchObject({ code: 'ValidationError' });
    expect(await failure(sts(ALICE).send(new GetFederationTokenCommand({ Name: 'a'.repeat(33) })))).toMatchObject({ code: 'ValidationError' });
    expect(await failure(sts(ALICE).send(new GetFederationTokenCommand({ Name: 'ok-name', DurationSeconds: 129601 })))).toMatchObject({ code: 'ValidationError' });
    expect((await control.state()).tempCredentials[0]).toMatchObject({ action: 'GetFederationToken', name: 'vault-fed', policy, policyArns: ['arn:aws:iam::aws:policy/ReadOnlyAccess'], durationSeconds: 129600 });

    // The root gets an hour at most.
    const rootFed = await sts(ROOT).send(new GetFederationTokenCommand({ Name: 'rooted', DurationSeconds: 7200 }));
    expect(Math.abs(rootFed.Credentials!.Expiration!.getTime() - (Date.now() + 3600_000))).toBeLessThan(5_000);
  });

  it('issues session tokens (with MFA) that act as the user', async () => {
    const out = await sts(ALICE).send(new GetSessionTokenCommand({ DurationSeconds: 900, SerialNumber: 'arn:aws:iam::123456789012:mfa/alice', TokenCode: '654321' }));
    const c = out.Credentials!;
    expect(c.AccessKeyId).toMatch(TEMP_KEY_ID);
    const session = { accessKeyId: c.AccessKeyId!, secretAccessKey: c.SecretAccessKey!, sessionToken: c.SessionToken! };
    expect(await sts(session).send(new GetCallerIdentityCommand({}))).toMatchObject({ Arn: `arn:aws:iam::${ACCOUNT}:user/alice` });
    expect((await iam(session).send(new GetUserCommand({}))).User!.UserName).toBe('alice');
    expect(await failure(sts(session).send(new GetSessionTokenCommand({})))).toMatchObject({ code: 'AccessDenied', message: 'Cannot call GetSessionToken with session credentials' });
    expect(await failure(sts(ALICE).send(new GetSessionTokenCommand({ SerialNumber: 'arn:aws:iam::123456789012:mfa/alice', TokenCode: 'abcdef' })))).toMatchObject({ code: 'ValidationError' });
    expect(await failure(sts(ALICE).send(new GetSessionTokenCommand({ DurationSeconds: 600 })))).toMatchObject({ code: 'ValidationError' });
    const dflt = await sts(ALICE).send(new GetSessionTokenCommand({}));
    expect(Math.abs(dflt.Credentials!.Expiration!.getTime() - (Date.now() + 43200_000))).toBeLessThan(5_000);
    expect((await control.state()).tempCredentials[0]).toMatchObject({ action: 'GetSessionToken', serialNumber: 'arn:aws:iam::123456789012:mfa/alice', tokenCode: '654321', durationSeconds: 900 });
  });
});

describe('control API', () => {
  it('injects throttling the SDK retries through, and counts calls with `after`', async () => {
    await control.faults({ faults: [{ action: 'CreateAccessKey', status: 400, code: 'Throttling', times: 2 }] });
    const out = await iam(ROOT, { maxAttempts: 3 }).send(new CreateAccessKeyCommand({ UserName: 'alice' }));
    expect(out.$metadata.attempts).toBe(3);
    expect((await control.calls()).map((c) => [c.action, c.status, c.code])).toEqual([
      ['CreateAccessKey', 400, 'Throttling'],
      ['CreateAccessKey', 400, 'Throttling'],
      ['CreateAccessKey', 200, undefined],
    ]);
    expect((await control.state()).users[0].accessKeys).toHaveLength(2);
    expect((await control.pendingFaults()).faults).toEqual([]);

    await control.faults({ faults: [{ action: 'ListUsers', after: 1, status: 500, code: 'ServiceFailure' }] });
    await iam(ROOT).send(new ListUsersCommand({}));
    expect(await failure(iam(ROOT).send(new ListUsersCommand({})))).toMatchObject({ code: 'ServiceFailure', status: 500, type: 'Receiver', fault: 'server' });
    await iam(ROOT).send(new ListUsersCommand({}));
  });

  it('answers a faulted call without performing it', async () => {
    await control.faults({ faults: [{ action: 'CreateUser', status: 409, code: 'ConcurrentModification', message: 'try again' }] });
    expect(await failure(iam(ROOT).send(new CreateUserCommand({ UserName: 'bob' })))).toMatchObject({ code: 'ConcurrentModification', status: 409, message: 'try again' });
    expect((await control.state()).users.map((u) => u.userName)).toEqual(['alice']);
  });

  it('holds a delayed call before performing it', async () => {
    await control.faults({ delays: [{ action: 'CreateUser', ms: 400 }] });
    const started = Date.now();
    const pending = iam(ROOT).send(new CreateUserCommand({ UserName: 'slow' }));
    await new Promise((r) => setTimeout(r, 150));
    expect((await control.state()).users.map((u) => u.userName)).toEqual(['alice']);
    await pending;
    expect(Date.now() - started).toBeGreaterThanOrEqual(400);
    expect((await control.state()).users.map((u) => u.userName)).toEqual(['alice', 'slow']);
  });

  it('keeps tenants apart: /t/<name> is an account of its own, for API and control alike', async () => {
    const a = awsEmulator(`${emu.base}/t/tenant-a`);
    const b = awsEmulator(`${emu.base}/t/tenant-b`);
    await a.reset({ users: [{ userName: 'only-in-a', accessKeys: [ALICE] }] });
    await b.reset({ users: [{ userName: 'only-in-b' }] });
    const inA = new IAMClient({ endpoint: `${emu.base}/t/tenant-a`, region: 'us-east-1', credentials: ALICE, maxAttempts: 1 });
    expect((await inA.send(new GetUserCommand({}))).User!.UserName).toBe('only-in-a');
    await inA.send(new CreateUserCommand({ UserName: 'made-in-a' }));
    const inB = new IAMClient({ endpoint: `${emu.base}/t/tenant-b`, region: 'us-east-1', credentials: ALICE, maxAttempts: 1 });
    expect(await failure(inB.send(new GetUserCommand({})))).toMatchObject({ code: 'InvalidClientTokenId' });
    expect((await a.state()).users.map((u) => u.userName)).toEqual(['only-in-a', 'made-in-a']);
    expect((await b.state()).users.map((u) => u.userName)).toEqual(['only-in-b']);
    expect((await a.calls()).map((c) => c.action)).toEqual(['GetUser', 'CreateUser']);
    expect((await b.calls()).map((c) => c.code)).toEqual(['InvalidClientTokenId']);
    // The default tenant saw none of it.
    expect(await control.calls()).toEqual([]);
    expect((await control.state()).users.map((u) => u.userName)).toEqual(['alice']);
    // The tenant prefix is part of what was signed.
    const aws = new AwsClient({ ...ALICE, service: 'iam', region: 'us-east-1' });
    const signed = await aws.sign(`${emu.base}/t/tenant-a/`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: 'Action=GetUser&Version=2010-05-08' });
    const moved = await fetch(signed.url.replace('/t/tenant-a/', '/t/tenant-b/'), { method: 'POST', headers: signed.headers, body: 'Action=GetUser&Version=2010-05-08' });
    expect(moved.status).toBe(403);
  });

  it('refuses a seed that does not hold together, and resets clear everything', async () => {
    const res = await fetch(`${emu.base}/_emulator/reset`, { method: 'POST', body: JSON.stringify({ users: [{ userName: 'x', groups: ['nope'] }] }) });
    expect(res.status).toBe(400);
    expect(await res.text()).toContain('The group with name nope cannot be found.');
    await control.reset(SEED);
    await control.faults({ faults: [{ action: '*', status: 500, code: 'ServiceFailure', times: 5 }] });
    await control.clock({ advanceMs: 60_000 });
    const state = await control.reset({});
    expect(state.root.accessKeys[0].accessKeyId).toBe('AKIAIOSFODNN7EXAMPLE');
    expect(state.users).toEqual([]);
    expect(Math.abs(Date.parse(state.now) - Date.now())).toBeLessThan(5_000);
    expect(await control.calls()).toEqual([]);
    expect(await control.pendingFaults()).toEqual({ faults: [], delays: [] });
  });

  it('answers and logs every one of 600 signed calls from 16 concurrent callers, as under the bench', async () => {
    const client = sts(ALICE);
    const n = 600;
    const started = performance.now();
    let next = 0;
    const arns: string[] = [];
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next++ < n) arns.push((await client.send(new GetCallerIdentityCommand({}))).Arn ?? '');
      }),
    );
    // Logged for the reader: speed is the bench's to measure (a timing assertion here failed on a slow day).
    console.log(`aws emulator: ${(n / ((performance.now() - started) / 1000)).toFixed(0)} signed SDK calls/s (client and server in one process)`);
    expect(arns).toHaveLength(n);
    expect(new Set(arns)).toEqual(new Set([`arn:aws:iam::${ACCOUNT}:user/alice`]));
    const calls = await control.calls();
    expect(calls).toHaveLength(n);
    expect(calls.every((c) => c.action === 'GetCallerIdentity' && c.status === 200 && c.accessKeyId === ALICE.accessKeyId)).toBe(true);
  });
});
