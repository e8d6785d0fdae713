// node-vault against the AWS secrets engine (generic mount/write/read/list/delete and its lease
// methods renew and revoke), with the AWS SDK v3 as the independent judge of what Coffer issues:
// the keys and temporary credentials it answers are used against the suite's IAM/STS emulator (a
// tenant of this file's own), which verifies every signature as AWS does.
import { GetUserCommand, IAMClient, ListAccessKeysCommand } from '@aws-sdk/client-iam';
import { GetCallerIdentityCommand, STSClient } from '@aws-sdk/client-sts';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { awsEmulator, type ResetBody } from '../../emulators/aws-iam-sts/client';
import { failure, unique, vault } from './client';

const root = vault();

const ACCOUNT = '123456789012';
const ADMIN_USER = 'vault-admin';
const ADMIN_KEY = { accessKeyId: 'AKIANODEVAULTADMIN01', secretAccessKey: 'node-vault/admin/secret/EXAMPLE000000001' };
const READ_ONLY = 'arn:aws:iam::aws:policy/ReadOnlyAccess';
const DOC = '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:Describe*","Resource":"*"}]}';
const SEED: ResetBody = {
  users: [{ userName: ADMIN_USER, accessKeys: [ADMIN_KEY] }],
  groups: [{ groupName: 'developers' }],
  roles: [{ roleName: 'deployer', maxSessionDuration: 7200 }, { roleName: 'reader' }],
};
const roleArn = (name: string) => `arn:aws:iam::${ACCOUNT}:role/${name}`;

/** A role's read shape with nothing set (lists and maps never written read as null). */
const NOTHING = {
  credential_type: '',
  policy_arns: null,
  role_arns: null,
  policy_document: '',
  iam_groups: null,
  iam_tags: null,
  session_tags: null,
  external_id: '',
  default_sts_ttl: 0,
  max_sts_ttl: 0,
  user_path: '',
  permissions_boundary_arn: '',
  mfa_serial_number: '',
  wait_for_usable: false,
};

interface Issued {
  access_key: string;
  secret_key: string;
  security_token: string | null;
  arn?: string;
}

/** A mount of its own, configured against a tenant of its own (reset to SEED). */
async function awsMount(prefix: string) {
  const mount = unique(prefix);
  const endpoint = `${inject('awsEmulator')}/t/${mount}`;
  const emu = awsEmulator(endpoint);
  await emu.reset(SEED);
  await root.mount({ mount_point: mount, type: 'aws' });
  await root.write(`${mount}/config/root`, {
    access_key: ADMIN_KEY.accessKeyId,
    secret_key: ADMIN_KEY.secretAccessKey,
    region: 'us-east-1',
    iam_endpoint: endpoint,
    sts_endpoint: endpoint,
  });
  return { mount, endpoint, emu };
}

const credentials = (c: Issued) => ({ accessKeyId: c.access_key, secretAccessKey: c.secret_key, ...(c.security_token ? { sessionToken: c.security_token } : {}) });
const sts = (endpoint: string, c: Issued) => new STSClient({ endpoint, region: 'us-east-1', maxAttempts: 1, credentials: credentials(c) });
const iam = (endpoint: string, c: Issued) => new IAMClient({ endpoint, region: 'us-east-1', maxAttempts: 1, credentials: credentials(c) });
const whoAmI = (endpoint: string, c: Issued) => sts(endpoint, c).send(new GetCallerIdentityCommand({}));

/** The AWS error code a call failed with (the call must fail). */
async function awsFailure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
  } catch (e) {
    return (e as { name: string }).name;
  }
  throw new Error('the AWS call succeeded');
}

describe('the aws engine through node-vault', () => {
  let mount: string;
  let endpoint: string;
  let emu: ReturnType<typeof awsEmulator>;

  beforeAll(async () => {
    ({ mount, endpoint, emu } = await awsMount('aws'));
  });

  it('config/root and config/lease read back (never the secret key)', async () => {
    const rootConfig = await root.read(`${mount}/config/root`);
    expect(rootConfig.data).toMatchObject({ access_key: ADMIN_KEY.accessKeyId, region: 'us-east-1', iam_endpoint: endpoint, sts_endpoint: endpoint, max_retries: -1 });
    expect(rootConfig.data).not.toHaveProperty('secret_key');
    expect(JSON.stringify(rootConfig)).not.toContain(ADMIN_KEY.secretAccessKey);
    expect((await failure(root.read(`${mount}/config/lease`))).status).toBe(404);
    await root.write(`${mount}/config/lease`, { lease: '1h', lease_max: '2h' });
    expect((await root.read(`${mount}/config/lease`)).data).toEqual({ lease: '1h0m0s', lease_max: '2h0m0s' });
    expect(await failure(root.write(`${mount}/config/lease`, { lease: '1h' }))).toEqual({ status: 400, errors: ["'lease_max' is a required parameter"] });
  });

  it('roles of every credential type: write, read, list and delete', async () => {
    await root.write(`${mount}/roles/app`, {
      credential_type: 'iam_user',
      policy_arns: [READ_ONLY],
      policy_document: DOC,
      iam_groups: ['developers'],
      iam_tags: { team: 'platform' },
    });
    await root.write(`${mount}/roles/deploy`, { credential_type: 'assumed_role', role_arns: [roleArn('deployer'), roleArn('reader')], default_sts_ttl: '30m', max_sts_ttl: '2h' });
    await root.write(`${mount}/roles/fed`, { credential_type: 'federation_token', policy_document: DOC });
    await root.write(`${mount}/roles/session`, { credential_type: 'session_token' });
    await root.write(`${mount}/roles/doomed`, { credential_type: 'iam_user', policy_arns: READ_ONLY });

    expect((await root.read(`${mount}/roles/app`)).data).toEqual({
      ...NOTHING,
      credential_type: 'iam_user',
      policy_arns: [READ_ONLY],
      policy_document: DOC,
      iam_groups: ['developers'],
      iam_tags: { team: 'platform' },
    });
    expect((await root.read(`${mount}/roles/deploy`)).data).toEqual({
      ...NOTHING,
      credential_type: 'assumed_role',
      role_arns: [roleArn('deployer'), roleArn('reader')],
      default_sts_ttl: 1800,
      max_sts_ttl: 7200,
    });
    expect((await root.read(`${mount}/roles/fed`)).data).toEqual({ ...NOTHING, credential_type: 'federation_token', policy_document: DOC });
    expect((await root.read(`${mount}/roles/session`)).data).toEqual({ ...NOTHING, credential_type: 'session_token' });
    expect((await root.list(`${mount}/roles`)).data.keys).toEqual(['app', 'deploy', 'doomed', 'fed', 'session']);

    await root.delete(`${mount}/roles/doomed`);
    expect((await failure(root.read(`${mount}/roles/doomed`))).status).toBe(404);
    expect((await root.list(`${mount}/roles`)).data.keys).toEqual(['app', 'deploy', 'fed', 'session']);
    expect(await failure(root.write(`${mount}/roles/bad`, { credential_type: 'session_token', policy_arns: READ_ONLY }))).toEqual({
      status: 400,
      errors: ['error(s) validating supplied role data: "1 error occurred:\\n\\t* cannot supply a policy or role when using credential_type session_token\\n\\n"'],
    });
  });

  it('iam_user keys work with the AWS SDK until the lease is revoked', async () => {
    const issued = await root.read(`${mount}/creds/app`);
    const keys = issued.data as Issued;
    expect(keys).toEqual({ access_key: expect.stringMatching(/^AKIA[A-Z0-9]{16}$/), secret_key: expect.any(String), security_token: null });
    expect(issued.lease_id).toMatch(new RegExp(`^${mount}/creds/app/[A-Za-z0-9]{24}$`));
    expect([issued.lease_duration, issued.renewable]).toEqual([3600, true]);

    const [user] = (await emu.state()).users.filter((u) => u.userName !== ADMIN_USER);
    expect(user.userName).toMatch(/^vault-root-app-\d{10}-[A-Za-z0-9]{20}$/);
    const identity = await whoAmI(endpoint, keys);
    expect([identity.Arn, identity.Account, identity.UserId]).toEqual([`arn:aws:iam::${ACCOUNT}:user/${user.userName}`, ACCOUNT, user.userId]);

    const self = await iam(endpoint, keys).send(new GetUserCommand({}));
    expect(self.User).toMatchObject({ UserName: user.userName, Arn: identity.Arn, Tags: [{ Key: 'team', Value: 'platform' }] });
    const listed = await iam(endpoint, keys).send(new ListAccessKeysCommand({ UserName: user.userName }));
    expect(listed.AccessKeyMetadata?.map((k) => [k.UserName, k.AccessKeyId, k.Status])).toEqual([[user.userName, keys.access_key, 'Active']]);

    const renewed = await root.renew({ lease_id: issued.lease_id, increment: 7200 });
    expect([renewed.lease_id, renewed.lease_duration, renewed.renewable]).toEqual([issued.lease_id, 3600, true]);

    await root.revoke({ lease_id: issued.lease_id });
    expect((await emu.state()).users.map((u) => u.userName)).toEqual([ADMIN_USER]);
    expect(await awsFailure(whoAmI(endpoint, keys))).toBe('InvalidClientTokenId');
    expect((await failure(root.renew({ lease_id: issued.lease_id }))).status).toBe(400);
  });

  it('assumed_role credentials act as the assumed role, with role_arn, ttl and role_session_name from the body', async () => {
    const issued = await root.write(`${mount}/sts/deploy`, { role_arn: roleArn('reader'), ttl: '20m', role_session_name: 'node-vault-ci' });
    const creds = issued.data as Issued;
    expect(creds).toEqual({
      access_key: expect.stringMatching(/^ASIA[A-Z0-9]{16}$/),
      secret_key: expect.any(String),
      security_token: expect.any(String),
      arn: `arn:aws:sts::${ACCOUNT}:assumed-role/reader/node-vault-ci`,
    });
    expect(issued.renewable).toBe(false);
    expect(issued.lease_duration).toBeGreaterThan(1190);
    expect(issued.lease_duration).toBeLessThanOrEqual(1200);
    const identity = await whoAmI(endpoint, creds);
    expect(identity.Arn).toBe(`arn:aws:sts::${ACCOUNT}:assumed-role/reader/node-vault-ci`);
    // Without the session token, the temporary key is not accepted.
    expect(await awsFailure(whoAmI(endpoint, { ...creds, security_token: null }))).toBe('InvalidClientTokenId');

    // The role's default_sts_ttl, and a session name from the username template.
    const byDefault = await root.read(`${mount}/creds/deploy?role_arn=${encodeURIComponent(roleArn('deployer'))}`);
    expect(byDefault.lease_duration).toBeGreaterThan(1790);
    expect(byDefault.lease_duration).toBeLessThanOrEqual(1800);
    expect((await whoAmI(endpoint, byDefault.data)).Arn).toMatch(new RegExp(`^arn:aws:sts::${ACCOUNT}:assumed-role/deployer/vault-root-deploy-\\d{10}-[A-Za-z0-9]{20}$`));

    // Revoking is a no-op for STS credentials: they keep working until they expire.
    await root.revoke({ lease_id: issued.lease_id });
    expect((await whoAmI(endpoint, creds)).Arn).toBe(`arn:aws:sts::${ACCOUNT}:assumed-role/reader/node-vault-ci`);
    expect(await failure(root.renew({ lease_id: byDefault.lease_id }))).toEqual({ status: 400, errors: ['lease is not renewable'] });
  });

  it('federation_token and session_token credentials act as the federated user and as the engine\'s own user', async () => {
    const fed = (await root.write(`${mount}/sts/fed`, { ttl: '1h' })).data as Issued;
    expect(Object.keys(fed).sort()).toEqual(['access_key', 'secret_key', 'security_token']);
    const federated = await whoAmI(endpoint, fed);
    expect(federated.Arn).toMatch(new RegExp(`^arn:aws:sts::${ACCOUNT}:federated-user/vault-\\d{10}-[A-Za-z0-9]{15}$`));
    const temp = (await emu.state()).tempCredentials.find((t) => t.accessKeyId === fed.access_key)!;
    expect([temp.action, temp.arn, temp.policy, temp.durationSeconds]).toEqual(['GetFederationToken', federated.Arn, DOC, 3600]);

    const session = (await root.write(`${mount}/sts/session`, {})).data as Issued;
    expect((await whoAmI(endpoint, session)).Arn).toBe(`arn:aws:iam::${ACCOUNT}:user/${ADMIN_USER}`);
  });
});

describe('config/rotate-root through node-vault', () => {
  it('replaces the engine\'s key: the old one is refused by AWS, the engine goes on with the new one', async () => {
    const { mount, endpoint, emu } = await awsMount('aws-rotate');
    const rotated = await root.write(`${mount}/config/rotate-root`, {});
    expect(Object.keys(rotated.data)).toEqual(['access_key']);
    const next = rotated.data.access_key as string;
    expect(next).toMatch(/^AKIA[A-Z0-9]{16}$/);
    expect(next).not.toBe(ADMIN_KEY.accessKeyId);
    expect((await root.read(`${mount}/config/root`)).data.access_key).toBe(next);
    const admin = (await emu.state()).users.find((u) => u.userName === ADMIN_USER)!;
    expect(admin.accessKeys.map((k) => k.accessKeyId)).toEqual([next]);
    const old: Issued = { access_key: ADMIN_KEY.accessKeyId, secret_key: ADMIN_KEY.secretAccessKey, security_token: null };
    expect(await awsFailure(whoAmI(endpoint, old))).toBe('InvalidClientTokenId');

    await root.write(`${mount}/roles/after`, { credential_type: 'iam_user', policy_arns: READ_ONLY });
    const keys = (await root.read(`${mount}/creds/after`)).data as Issued;
    expect((await whoAmI(endpoint, keys)).Arn).toMatch(new RegExp(`^arn:aws:iam::${ACCOUNT}:user/vault-root-after-`));
  });
});
