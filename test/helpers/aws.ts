// The AWS world of the aws engine's integration tests: the IAM/STS emulator (started by the
// global setup) as one tenant per test file, so files running side by side do not meet, and a
// mounted aws engine configured against it.
import { inject } from 'vitest';
import { awsEmulator, type AwsEmulatorControl, type ResetBody } from '../emulators/aws-iam-sts/client';
import { api } from './api';

/** The IAM user whose key the engine is configured with. */
export const ADMIN_USER = 'vault-admin';
export const ADMIN_KEY = { accessKeyId: 'AKIAADMINEXAMPLE0001', secretAccessKey: 'admin/secret/key/EXAMPLE0000000000000001' };

export const DEV_GROUP_POLICY = '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:GetObject","Resource":"*"}]}';

/** The account every test starts from: the admin user, two groups and three roles. */
export const SEED: ResetBody = {
  users: [{ userName: ADMIN_USER, accessKeys: [ADMIN_KEY] }],
  groups: [
    { groupName: 'developers', attachedPolicies: ['arn:aws:iam::aws:policy/ReadOnlyAccess'], inlinePolicies: { 'dev-s3': DEV_GROUP_POLICY } },
    { groupName: 'auditors' },
  ],
  roles: [{ roleName: 'deployer', maxSessionDuration: 7200 }, { roleName: 'reader' }, { roleName: 'partner', externalId: 'partner-ext-id' }],
};

export interface AwsWorld {
  emu: AwsEmulatorControl;
  /** The tenant's endpoint: what iam_endpoint and sts_endpoint are set to. */
  endpoint: string;
  /** Resets the tenant to SEED (or `seed`) and writes config/root at `mount` with the admin key. */
  reset(token: string, mount?: string, seed?: ResetBody, config?: Record<string, unknown>): Promise<void>;
}

export function awsWorld(tenant: string): AwsWorld {
  const endpoint = `http://127.0.0.1:${inject('awsPort')}/t/${tenant}`;
  const emu = awsEmulator(endpoint);
  return {
    emu,
    endpoint,
    async reset(token, mount = 'aws', seed = SEED, config = {}) {
      await emu.reset(seed);
      const r = await api('POST', `${mount}/config/root`, {
        token,
        body: { access_key: ADMIN_KEY.accessKeyId, secret_key: ADMIN_KEY.secretAccessKey, iam_endpoint: endpoint, sts_endpoint: endpoint, region: 'us-east-1', sts_region: '', sts_fallback_endpoints: [], sts_fallback_regions: [], username_template: '', max_retries: -1, ...config },
      });
      if (r.status !== 204) throw new Error(`config/root: ${r.status} ${r.text}`);
    },
  };
}

/** The actions of the calls the emulator saw, in order. */
export const actions = async (emu: AwsEmulatorControl): Promise<string[]> => (await emu.calls()).map((c) => c.action ?? '?');
