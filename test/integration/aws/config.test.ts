// aws config/root, config/lease and config/rotate-root: the read shapes (never the secret key),
// defaults, merging, every write error, the default username template, and the root rotation
// against the IAM/STS emulator — Vault's call sequence, its refusal when the user holds another
// key, and a rotation interrupted after the new key exists finished by the periodic work.
import { env, runDurableObjectAlarm } from 'cloudflare:test';
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { api, caller, initCluster, type Cluster } from '../../helpers/api';
import { actions, ADMIN_KEY, ADMIN_USER, awsWorld, SEED } from '../../helpers/aws';

let c: Cluster;
const { call, ok } = caller(() => c.root);
const world = awsWorld('config');
const { emu } = world;

const DEFAULT_TEMPLATE =
  '{{ if (eq .Type "STS") }}{{ printf "vault-%s-%s"  (unix_time) (random 20) | truncate 32 }}{{ else }}{{ printf "vault-%s-%s-%s" (printf "%s-%s" (.DisplayName) (.PolicyName) | truncate 42) (unix_time) (random 20) | truncate 64 }}{{ end }}';

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/aws', { type: 'aws' });
  await ok('POST', 'sys/mounts/fresh', { type: 'aws' });
});

describe('config/root', () => {
  it('is absent until written', async () => {
    expect(await call('GET', 'fresh/config/root')).toMatchObject({ status: 404, body: { errors: [] } });
  });

  it('reads back every field but the secret key, with the defaults', async () => {
    await ok('POST', 'fresh/config/root', { access_key: 'AKIAEXAMPLE', secret_key: 'very-secret' });
    const r = await ok('GET', 'fresh/config/root');
    expect(r.body.data).toEqual({
      access_key: 'AKIAEXAMPLE',
      region: '',
      iam_endpoint: '',
      sts_endpoint: '',
      sts_region: '',
      sts_fallback_endpoints: [],
      sts_fallback_regions: [],
      max_retries: -1,
      username_template: DEFAULT_TEMPLATE,
      role_arn: '',
      identity_token_audience: '',
      identity_token_ttl: 0,
      rotation_period: 0,
      rotation_schedule: '',
      rotation_window: 0,
      disable_automated_rotation: false,
    });
    expect(r.text).not.toContain('very-secret');
  });

  it('changes only the fields a write names, but a write without username_template resets it to the default', async () => {
    await ok('POST', 'fresh/config/root', {
      region: 'eu-west-1',
      sts_region: 'eu-central-1',
      sts_fallback_endpoints: 'https://sts.eu-west-1.amazonaws.com,https://sts.us-east-1.amazonaws.com',
      sts_fallback_regions: ['eu-west-1', 'us-east-1'],
      max_retries: '5',
      username_template: '{{ .PolicyName }}',
    });
    let data = (await ok('GET', 'fresh/config/root')).body.data;
    expect(data).toMatchObject({
      access_key: 'AKIAEXAMPLE',
      region: 'eu-west-1',
      sts_region: 'eu-central-1',
      sts_fallback_endpoints: ['https://sts.eu-west-1.amazonaws.com', 'https://sts.us-east-1.amazonaws.com'],
      sts_fallback_regions: ['eu-west-1', 'us-east-1'],
      max_retries: 5,
      username_template: '{{ .PolicyName }}',
    });
    await ok('POST', 'fresh/config/root', { region: 'eu-west-2' });
    data = (await ok('GET', 'fresh/config/root')).body.data;
    expect(data).toMatchObject({ region: 'eu-west-2', max_retries: 5, username_template: DEFAULT_TEMPLATE });
    await ok('POST', 'fresh/config/root', { username_template: '{{ .PolicyName }}' });
    await ok('POST', 'fresh/config/root', { username_template: null });
    expect((await ok('GET', 'fresh/config/root')).body.data.username_template).toBe(DEFAULT_TEMPLATE);
  });

  const refused: [string, Record<string, unknown>, string][] = [
    ['fallback lists of different lengths', { sts_fallback_endpoints: ['https://a.example'], sts_fallback_regions: [] }, 'fallback endpoints and fallback regions must be the same length'],
    ['a template that does not parse', { username_template: '{{ nope }}' }, 'unable to initialize username template: '],
    ['max_retries below -1', { max_retries: -2 }, 'max_retries must be -1 (the SDK default) or more'],
    ['max_retries not a number', { max_retries: 'many' }, 'error converting input "many" for field "max_retries"'],
    ['an endpoint that is not a URL', { iam_endpoint: 'iam.local' }, 'invalid endpoint "iam.local": expected an http(s) URL'],
    ['an access key beside identity_token_audience', { access_key: 'AKIA', identity_token_audience: 'aud', role_arn: 'arn:aws:iam::1:role/x' }, "only one of 'access_key' or 'identity_token_audience' can be set"],
    ['identity_token_audience without role_arn', { access_key: '', identity_token_audience: 'aud' }, "missing required 'role_arn' when 'identity_token_audience' is set"],
    ['workload identity federation', { access_key: '', identity_token_audience: 'aud', role_arn: 'arn:aws:iam::1:role/x' }, 'plugin workload identity federation'],
    ['automated rotation', { rotation_period: '24h' }, 'automated root rotation'],
  ];
  for (const [what, body, message] of refused) {
    it(`refuses ${what}, changing nothing`, async () => {
      const before = (await ok('GET', 'fresh/config/root')).body.data;
      const r = await call('POST', 'fresh/config/root', body);
      expect(r.status).toBe(400);
      expect(r.body.errors.join('\n')).toContain(message);
      expect((await ok('GET', 'fresh/config/root')).body.data).toEqual(before);
    });
  }
});

describe('config/lease', () => {
  it('is absent until written, then reads back as Go durations', async () => {
    expect((await call('GET', 'fresh/config/lease')).status).toBe(404);
    await ok('POST', 'fresh/config/lease', { lease: '30m', lease_max: '12h' });
    expect((await ok('GET', 'fresh/config/lease')).body.data).toEqual({ lease: '30m0s', lease_max: '12h0m0s' });
    await ok('POST', 'fresh/config/lease', { lease: '90s', lease_max: '1h30m' });
    expect((await ok('GET', 'fresh/config/lease')).body.data).toEqual({ lease: '1m30s', lease_max: '1h30m0s' });
  });

  const refused: [Record<string, unknown>, string][] = [
    [{ lease_max: '1h' }, "'lease' is a required parameter"],
    [{ lease: '1h' }, "'lease_max' is a required parameter"],
    [{ lease: '1h', lease_max: null }, "'lease_max' is a required parameter"],
    [{ lease: 'soon', lease_max: '1h' }, 'Invalid lease: time: invalid duration "soon"'],
    [{ lease: '1h', lease_max: '3600' }, 'Invalid lease_max: '],
    [{ lease: '-1h', lease_max: '1h' }, 'lease and lease_max cannot be negative'],
  ];
  for (const [body, message] of refused) {
    it(`refuses ${JSON.stringify(body)}`, async () => {
      const r = await call('POST', 'fresh/config/lease', body);
      expect(r.status).toBe(400);
      expect(r.body.errors[0]).toContain(message);
      expect((await ok('GET', 'fresh/config/lease')).body.data).toEqual({ lease: '1m30s', lease_max: '1h30m0s' });
    });
  }
});

describe('config/rotate-root', () => {
  beforeEach(async () => {
    await world.reset(c.root);
  });

  it('refuses without stored keys', async () => {
    await ok('POST', 'sys/mounts/empty', { type: 'aws' });
    expect((await call('POST', 'empty/config/rotate-root')).body.errors).toEqual(['no configuration found for config/root']);
    await ok('POST', 'empty/config/root', { region: 'us-east-1' });
    expect((await call('POST', 'empty/config/rotate-root')).body.errors).toEqual(['Cannot call config/rotate-root when either access_key or secret_key is empty']);
  });

  it('makes a new key, stores it and deletes the old one', async () => {
    const r = await ok('POST', 'aws/config/rotate-root');
    const next = r.body.data.access_key as string;
    expect(next).toMatch(/^AKIA[A-Z0-9]{16}$/);
    expect(Object.keys(r.body.data)).toEqual(['access_key']);
    const calls = await emu.calls();
    expect(calls.map((x) => [x.action, x.accessKeyId])).toEqual([
      ['GetUser', ADMIN_KEY.accessKeyId],
      ['CreateAccessKey', ADMIN_KEY.accessKeyId],
      ['DeleteAccessKey', next],
    ]);
    expect(calls[2].params.AccessKeyId).toBe(ADMIN_KEY.accessKeyId);
    const admin = (await emu.state()).users.find((u) => u.userName === ADMIN_USER)!;
    expect(admin.accessKeys.map((k) => k.accessKeyId)).toEqual([next]);
    expect((await ok('GET', 'aws/config/root')).body.data.access_key).toBe(next);
    // The engine works with the new key.
    await ok('POST', 'aws/roles/r', { credential_type: 'iam_user', policy_arns: ['arn:aws:iam::aws:policy/ReadOnlyAccess'] });
    await ok('GET', 'aws/creds/r');
    expect((await emu.calls()).slice(3).every((x) => x.accessKeyId === next)).toBe(true);
  });

  it('refuses when the user already holds another key (AWS\'s limit of two)', async () => {
    await emu.reset({ ...SEED, users: [{ userName: ADMIN_USER, accessKeys: [ADMIN_KEY, { accessKeyId: 'AKIAOTHERKEY00000001', secretAccessKey: 'other' }] }] });
    const r = await call('POST', 'aws/config/rotate-root');
    expect(r.status).toBe(500);
    expect(r.body.errors[0]).toMatch(/^error calling CreateAccessKey: LimitExceeded: /);
    expect((await ok('GET', 'aws/config/root')).body.data.access_key).toBe(ADMIN_KEY.accessKeyId);
    expect(await actions(emu)).toEqual(['GetUser', 'CreateAccessKey']);
  });

  it('finishes, from the periodic work, a rotation whose old key could not be deleted', async () => {
    // One call and the three retries of the SDK's default fail.
    await emu.faults({ faults: [{ action: 'DeleteAccessKey', times: 4, status: 500, code: 'ServiceFailure', message: 'down' }] });
    const r = await call('POST', 'aws/config/rotate-root');
    expect(r.status).toBe(500);
    expect(r.body.errors[0]).toMatch(/^error deleting old access key: ServiceFailure: down/);
    const admin = () => emu.state().then((s) => s.users.find((u) => u.userName === ADMIN_USER)!);
    const [, next] = (await admin()).accessKeys.map((k) => k.accessKeyId);
    const uuid = (await ok('GET', 'sys/mounts/aws')).body.data.uuid as string;
    await runDurableObjectAlarm(env.MOUNTS.get(env.MOUNTS.idFromName(uuid)));
    expect((await admin()).accessKeys.map((k) => k.accessKeyId)).toEqual([next]);
    expect((await ok('GET', 'aws/config/root')).body.data.access_key).toBe(next);
  });

  it('answers GetUser failures with Vault\'s message', async () => {
    await emu.faults({ faults: [{ action: 'GetUser', status: 403, code: 'AccessDenied', message: 'no iam:GetUser' }] });
    const r = await call('POST', 'aws/config/rotate-root');
    expect(r.status).toBe(500);
    expect(r.body.errors[0]).toMatch(/^error calling GetUser: AccessDenied: no iam:GetUser/);
  });
});

describe('credentials from the environment', () => {
  it('uses the Worker\'s AWS_* variables when config/root has no keys (none here: the SDK\'s error)', async () => {
    await ok('POST', 'sys/mounts/envaws', { type: 'aws' });
    await ok('POST', 'envaws/config/root', { iam_endpoint: world.endpoint });
    await ok('POST', 'envaws/roles/r', { credential_type: 'iam_user', policy_arns: ['arn:aws:iam::aws:policy/ReadOnlyAccess'] });
    const r = await api('GET', 'envaws/creds/r', { token: c.root });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^Error creating IAM user: NoCredentialProviders: no valid providers in chain/);
  });
});
