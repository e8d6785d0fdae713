// The aws engine survives kill -9 in the middle of making an IAM user: the user named in the
// write-ahead entry is rolled back after the restart (the entry's alarm fires on its own), no
// lease is left for it, and after a burst cut off by a crash every IAM user belongs to a lease —
// revoking them all leaves IAM as it was. Against the IAM/STS emulator, in this process.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awsEmulator, type AwsEmulatorControl } from '../emulators/aws-iam-sts/client';
import { startAwsEmulator, type AwsEmulator } from '../emulators/aws-iam-sts/server';
import { burst, client, crash, restart, statusOf, type Client } from './crash';
import { startLauncher, tempDir, type Server } from './processes';

const ROOT_TOKEN = 'hvs.e2eRootTokenForCrashAwsTest0';
const ADMIN = { accessKeyId: 'AKIACRASHADMIN000001', secretAccessKey: 'crash/admin/secret/EXAMPLE000000000000001' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let dir: string;
let server: Server;
let vault: Client;
let aws: AwsEmulator;
let emu: AwsEmulatorControl;

/** IAM users other than the engine's own. */
const made = async () => (await emu.state()).users.filter((u) => u.userName !== 'vault-admin');

/** Waits until `check` holds (the rollback runs from an alarm a few seconds after the entry). */
async function eventually(check: () => Promise<boolean>, ms = 30_000): Promise<void> {
  const until = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > until) throw new Error('condition not reached in time');
    await sleep(250);
  }
}

const leaseIds = async (): Promise<string[]> => {
  try {
    return ((await vault.list('sys/leases/lookup/aws/creds/crashy')).data.keys ?? []) as string[];
  } catch {
    return [];
  }
};

beforeAll(async () => {
  aws = await startAwsEmulator();
  const endpoint = `${aws.base}/t/crash`;
  emu = awsEmulator(endpoint);
  await emu.reset({ users: [{ userName: 'vault-admin', accessKeys: [ADMIN] }], groups: [{ groupName: 'developers' }] });
  dir = tempDir('coffer-e2e-crash-aws-');
  server = await startLauncher(dir, { COFFER_DEV_ROOT_TOKEN: ROOT_TOKEN });
  vault = client(server, ROOT_TOKEN);
  await vault.mount({ mount_point: 'aws', type: 'aws' });
  await vault.write('aws/config/root', { access_key: ADMIN.accessKeyId, secret_key: ADMIN.secretAccessKey, iam_endpoint: endpoint, sts_endpoint: endpoint, region: 'us-east-1' });
  await vault.write('aws/roles/crashy', { credential_type: 'iam_user', policy_arns: ['arn:aws:iam::aws:policy/ReadOnlyAccess'], iam_groups: ['developers'] });
});
afterAll(async () => {
  await server?.stop('SIGTERM');
  await aws?.close();
});

describe('kill -9 while an IAM user is being made', () => {
  it('rolls the user back after the restart, and records no lease for it', async () => {
    // Held long enough to crash meanwhile, short enough to land before the restart is up (a
    // rollback racing it would meet DeleteConflict and retry a minute later).
    await emu.faults({ delays: [{ action: 'AddUserToGroup', ms: 1_500 }] });
    const pending = vault.read('aws/creds/crashy').catch(() => null);
    await eventually(async () => (await made()).length === 1, 10_000);
    await crash(server);
    await pending;
    server = await restart(dir);
    vault = client(server, ROOT_TOKEN);
    // Nothing else touches the mount: its alarm alone finds the entry and deletes the user.
    await eventually(async () => (await made()).length === 0);
    const calls = (await emu.calls()).map((c) => c.action);
    expect(calls.slice(calls.indexOf('CreateUser'))).toContain('DeleteUser');
    expect(await leaseIds()).toEqual([]);
  }, 120_000);

  it('leaves every IAM user behind a lease after a burst, so revoking them all leaves none', async () => {
    await emu.faults({ delays: [] });
    const result = await burst(server, 4, 1_500, async () => (await vault.read('aws/creds/crashy')).data.access_key as string);
    server = await restart(dir);
    vault = client(server, ROOT_TOKEN);
    expect(result.refused).toEqual([]);
    expect(result.acked.length).toBeGreaterThan(3);
    // Once a possible entry is rolled back, users and leases match one to one.
    await eventually(async () => (await made()).length === (await leaseIds()).length);
    const keys = new Set((await made()).flatMap((u) => u.accessKeys.map((k) => k.accessKeyId)));
    for (const key of result.acked) expect(keys.has(key), key).toBe(true);
    expect(await statusOf(() => vault.write('sys/leases/revoke-prefix/aws/creds/crashy', {}))).toBe(200);
    expect(await made()).toEqual([]);
  }, 120_000);
});
