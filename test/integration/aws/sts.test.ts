// aws sts/:name (and creds/:name) for the STS credential types against the IAM/STS emulator:
// AssumeRole, GetFederationToken and GetSessionToken with every parameter Vault sends, the
// role_arn, role_session_name and ttl rules, iam_groups merged into the session policy,
// session tags (with identity templates resolved for the caller), leases that carry the
// credentials' expiry and revoke as a no-op, AWS errors with Vault's messages, and the STS
// fallback endpoints.
import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { api, caller, initCluster, type Cluster } from '../../helpers/api';
import { ADMIN_KEY, awsWorld, DEV_GROUP_POLICY } from '../../helpers/aws';

let c: Cluster;
const { call, ok } = caller(() => c.root);
const world = awsWorld('sts');
const { emu } = world;

const ROLE = (name: string) => `arn:aws:iam::123456789012:role/${name}`;
const DOC = '{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"ec2:*","Resource":"*"}]}';

/** The last STS call the emulator saw (its decoded form). */
const lastCall = async () => {
  const calls = await emu.calls();
  return calls[calls.length - 1];
};
const lastTemp = async () => {
  const temps = (await emu.state()).tempCredentials;
  return temps[temps.length - 1];
};

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/aws', { type: 'aws', config: { max_lease_ttl: '10h' } });
});

beforeEach(async () => {
  await world.reset(c.root);
});

describe('assumed_role', () => {
  beforeEach(async () => {
    await ok('POST', 'aws/roles/deploy', {
      credential_type: 'assumed_role',
      role_arns: [ROLE('deployer')],
      policy_arns: ['arn:aws:iam::aws:policy/ReadOnlyAccess'],
      policy_document: DOC,
    });
  });

  it('assumes the role with Vault\'s parameters and answers credentials behind a non-renewable lease', async () => {
    const r = await ok('POST', 'aws/sts/deploy', {});
    expect(r.body.data).toEqual({
      access_key: expect.stringMatching(/^ASIA/),
      secret_key: expect.any(String),
      security_token: expect.any(String),
      arn: expect.stringMatching(/^arn:aws:sts::123456789012:assumed-role\/deployer\/vault-root-deploy-\d{10}-[A-Za-z0-9]{20}$/),
    });
    expect(r.body.lease_id).toMatch(/^aws\/sts\/deploy\/[A-Za-z0-9]{24}$/);
    expect(r.body.renewable).toBe(false);
    expect(r.body.lease_duration).toBeGreaterThan(3590);
    expect(r.body.lease_duration).toBeLessThanOrEqual(3600);
    const sent = await lastCall();
    expect(sent).toMatchObject({ service: 'sts', action: 'AssumeRole', accessKeyId: ADMIN_KEY.accessKeyId, status: 200 });
    expect(sent.params).toMatchObject({
      RoleArn: ROLE('deployer'),
      DurationSeconds: '3600',
      Policy: DOC,
      'PolicyArns.member.1.arn': 'arn:aws:iam::aws:policy/ReadOnlyAccess',
    });
    expect(sent.params).not.toHaveProperty('ExternalId');
    const temp = await lastTemp();
    expect(temp.accessKeyId).toBe(r.body.data.access_key);
  });

  it('answers GET on sts and on creds too', async () => {
    expect((await ok('GET', 'aws/sts/deploy')).body.data.arn).toContain('assumed-role/deployer');
    expect((await ok('GET', 'aws/creds/deploy')).body.data.arn).toContain('assumed-role/deployer');
  });

  it('uses role_session_name normalised and cut to 64 characters', async () => {
    await ok('POST', 'aws/sts/deploy', { role_session_name: 'alice smith/ci#42' });
    expect((await lastCall()).params.RoleSessionName).toBe('alice_smith_ci_42');
    await ok('POST', 'aws/sts/deploy', { role_session_name: 'x'.repeat(80) });
    expect((await lastCall()).params.RoleSessionName).toBe('x'.repeat(64));
  });

  it('applies the ttl rules: given, else default_sts_ttl, else 3600; capped by max_sts_ttl or the mount', async () => {
    await ok('POST', 'aws/sts/deploy', { ttl: '30m' });
    expect((await lastCall()).params.DurationSeconds).toBe('1800');
    await ok('POST', 'aws/roles/deploy', { default_sts_ttl: 1200, max_sts_ttl: 5400 });
    await ok('POST', 'aws/sts/deploy', {});
    expect((await lastCall()).params.DurationSeconds).toBe('1200');
    await ok('POST', 'aws/sts/deploy', { ttl: 7200 });
    expect((await lastCall()).params.DurationSeconds).toBe('5400');
    await ok('POST', 'aws/roles/deploy', { default_sts_ttl: 0, max_sts_ttl: 0 });
    const r = await call('POST', 'aws/sts/deploy', { ttl: '20h' });
    // Capped by the mount's max_lease_ttl (10h); AWS then refuses more than the role's 2h.
    expect((await lastCall()).params.DurationSeconds).toBe('36000');
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^Error assuming role: ValidationError: /);
  });

  it('chooses among several role_arns only when told', async () => {
    await ok('POST', 'aws/roles/deploy', { role_arns: [ROLE('deployer'), ROLE('reader')] });
    expect((await call('POST', 'aws/sts/deploy', {})).body.errors).toEqual(['did not supply a role_arn parameter and unable to determine one']);
    expect((await call('POST', 'aws/sts/deploy', { role_arn: ROLE('other') })).body.errors).toEqual([
      `role_arn "${ROLE('other')}" not in allowed role arns for Vault role "deploy"`,
    ]);
    await ok('POST', 'aws/sts/deploy', { role_arn: ROLE('reader') });
    expect((await lastCall()).params.RoleArn).toBe(ROLE('reader'));
  });

  it('sends external_id and session_tags', async () => {
    await ok('POST', 'aws/roles/partner', { credential_type: 'assumed_role', role_arns: [ROLE('partner')], external_id: 'partner-ext-id', session_tags: ['project=apollo', 'cost=42'] });
    await ok('POST', 'aws/sts/partner', {});
    expect((await lastCall()).params).toMatchObject({
      ExternalId: 'partner-ext-id',
      'Tags.member.1.Key': 'cost',
      'Tags.member.1.Value': '42',
      'Tags.member.2.Key': 'project',
      'Tags.member.2.Value': 'apollo',
    });
    await ok('POST', 'aws/roles/partner', { external_id: 'wrong' });
    const r = await call('POST', 'aws/sts/partner', {});
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^Error assuming role: AccessDenied: .*\n\tstatus code: 403, request id: /);
  });

  it('resolves identity templates in session tag values for the caller', async () => {
    await ok('POST', 'aws/roles/tagged', {
      credential_type: 'assumed_role',
      role_arns: [ROLE('deployer')],
      session_tags: { who: '{{identity.entity.name}}', team: '{{identity.entity.metadata.team}}', fixed: 'yes' },
    });
    await ok('PUT', 'sys/policies/acl/sts-user', { policy: 'path "aws/sts/*" { capabilities = ["update"] }' });
    const entity = (await ok('POST', 'identity/entity', { name: 'alice', metadata: { team: 'payments' }, policies: ['sts-user'] })).body.data.id as string;
    const tokenMount = (await ok('GET', 'sys/auth')).body.data['token/'].accessor as string;
    await ok('POST', 'identity/entity-alias', { name: 'alice-token', canonical_id: entity, mount_accessor: tokenMount });
    await ok('POST', 'auth/token/roles/ent', { allowed_entity_aliases: ['alice-token'] });
    const token = (await ok('POST', 'auth/token/create/ent', { entity_alias: 'alice-token', policies: ['sts-user'] })).body.auth.client_token as string;
    const r = await api('POST', 'aws/sts/tagged', { token, body: {} });
    expect(r.status).toBe(200);
    expect((await lastTemp()).tags).toEqual([
      { Key: 'fixed', Value: 'yes' },
      { Key: 'team', Value: 'payments' },
      { Key: 'who', Value: 'alice' },
    ]);
    // A caller without an entity cannot fill the templates.
    const plain = await call('POST', 'aws/sts/tagged', {});
    expect(plain.status).toBe(400);
    expect(plain.body.errors[0]).toContain('session tag "team"');
  });

  it('merges the iam_groups\' policies into the session policy', async () => {
    await ok('POST', 'aws/roles/grouped', { credential_type: 'assumed_role', role_arns: [ROLE('deployer')], policy_document: DOC, iam_groups: ['developers'] });
    await ok('POST', 'aws/sts/grouped', {});
    const all = await emu.calls();
    expect(all.slice(-4).map((x) => x.action)).toEqual(['ListAttachedGroupPolicies', 'ListGroupPolicies', 'GetGroupPolicy', 'AssumeRole']);
    const sent = all[all.length - 1].params;
    expect(sent['PolicyArns.member.1.arn']).toBe('arn:aws:iam::aws:policy/ReadOnlyAccess');
    expect(JSON.parse(sent.Policy)).toEqual({
      Version: '2012-10-17',
      Statement: [...JSON.parse(DEV_GROUP_POLICY).Statement, ...JSON.parse(DOC).Statement],
    });
  });

  it('revokes as a no-op: STS credentials cannot be withdrawn', async () => {
    const lease = (await ok('POST', 'aws/sts/deploy', {})).body.lease_id as string;
    const before = (await emu.calls()).length;
    expect((await call('PUT', 'sys/leases/revoke', { lease_id: lease })).status).toBe(204);
    expect((await emu.calls()).length).toBe(before);
    const renew = await call('PUT', 'sys/leases/renew', { lease_id: (await ok('POST', 'aws/sts/deploy', {})).body.lease_id });
    expect(renew.status).toBe(400);
    expect(renew.body.errors).toEqual(['lease is not renewable']);
  });
});

describe('federation_token', () => {
  it('gets a federation token named by the STS template (32 characters)', async () => {
    await ok('POST', 'aws/roles/fed', { credential_type: 'federation_token', policy_document: DOC, policy_arns: ['arn:aws:iam::aws:policy/ReadOnlyAccess'] });
    const r = await ok('POST', 'aws/sts/fed', { ttl: '2h' });
    expect(Object.keys(r.body.data).sort()).toEqual(['access_key', 'secret_key', 'security_token']);
    expect(r.body.renewable).toBe(false);
    const sent = (await lastCall()).params;
    expect(sent).toMatchObject({ Action: 'GetFederationToken', DurationSeconds: '7200', Policy: DOC, 'PolicyArns.member.1.arn': 'arn:aws:iam::aws:policy/ReadOnlyAccess' });
    expect(sent.Name).toMatch(/^vault-\d{10}-[A-Za-z0-9]{15}$/);
    expect(sent.Name).toHaveLength(32);
  });

  it('refuses a role left without any policy once its groups are read', async () => {
    await ok('POST', 'aws/roles/fed-bare', { credential_type: 'federation_token', iam_groups: ['auditors'] });
    const r = await call('POST', 'aws/sts/fed-bare', {});
    expect(r.body.errors).toEqual(['must specify at least one of policy_arns or policy_document with federation_token credential type']);
  });

  it('maps AWS errors to Vault\'s message', async () => {
    await ok('POST', 'aws/roles/fed', { credential_type: 'federation_token', policy_document: DOC });
    await emu.faults({ faults: [{ action: 'GetFederationToken', status: 403, code: 'AccessDenied', message: 'not allowed' }] });
    const r = await call('POST', 'aws/sts/fed', {});
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^Error generating STS keys: AccessDenied: not allowed\n\tstatus code: 403, request id: /);
  });

  it('refuses a name over 32 characters from a custom template with Vault\'s 500', async () => {
    await ok('POST', 'aws/config/root', { username_template: '{{ if eq .Type "STS" }}{{ random 33 }}{{ else }}x{{ end }}' });
    await ok('POST', 'aws/roles/fed', { credential_type: 'federation_token', policy_document: DOC });
    const r = await call('POST', 'aws/sts/fed', {});
    expect(r.status).toBe(500);
    expect(r.body.errors).toEqual(['the username generated by the template exceeds the STS username length limits of 32 chars']);
  });
});

describe('session_token', () => {
  it('gets a session token, with the MFA device and code when the role names one', async () => {
    await ok('POST', 'aws/roles/session', { credential_type: 'session_token' });
    const r = await ok('POST', 'aws/sts/session', { ttl: '1h' });
    expect(Object.keys(r.body.data).sort()).toEqual(['access_key', 'secret_key', 'security_token']);
    expect((await lastCall()).params).toEqual({ Action: 'GetSessionToken', Version: '2011-06-15', DurationSeconds: '3600' });

    await ok('POST', 'aws/roles/mfa', { credential_type: 'session_token', mfa_serial_number: 'arn:aws:iam::123456789012:mfa/alice' });
    await ok('POST', 'aws/sts/mfa', { mfa_code: '123456' });
    expect((await lastCall()).params).toMatchObject({ SerialNumber: 'arn:aws:iam::123456789012:mfa/alice', TokenCode: '123456' });
  });
});

describe('write order', () => {
  it("issues STS credentials and IAM users beside the mount's writes", async () => {
    await ok('POST', 'aws/roles/deploy', { credential_type: 'assumed_role', role_arns: [ROLE('deployer')] });
    await ok('POST', 'aws/roles/user', { credential_type: 'iam_user', policy_arns: ['arn:aws:iam::aws:policy/ReadOnlyAccess'] });
    const order: string[] = [];
    const track = (name: string, p: Promise<{ status: number }>) => p.then((r) => (order.push(name), r));

    // AssumeRole is held at AWS: a role write sent meanwhile is not held up behind it.
    await emu.faults({ delays: [{ action: 'AssumeRole', ms: 1_000 }] });
    const sts = track('sts', call('POST', 'aws/sts/deploy', {}));
    await new Promise((r) => setTimeout(r, 200));
    const write = track('write', call('POST', 'aws/roles/other', { credential_type: 'assumed_role', role_arns: [ROLE('reader')] }));
    expect((await Promise.all([sts, write])).map((r) => r.status)).toEqual([200, 204]);
    expect(order).toEqual(['write', 'sts']);

    // CreateUser is held: the role write does not wait for the IAM user either (its write-ahead
    // entry is left to it by the periodic work while it runs).
    await emu.faults({ delays: [{ action: 'CreateUser', ms: 1_000 }] });
    const user = call('GET', 'aws/creds/user');
    await new Promise((r) => setTimeout(r, 200));
    expect((await call('POST', 'aws/roles/other', { external_id: 'x' })).status).toBe(204);
    // Answered while CreateUser was still held (the emulator logs a call once it answered it).
    expect((await emu.calls()).map((x) => x.action)).not.toContain('CreateUser');
    expect((await user).status).toBe(200);
  });
});

describe('bad input', () => {
  beforeEach(async () => {
    await ok('POST', 'aws/roles/deploy', { credential_type: 'assumed_role', role_arns: [ROLE('deployer')] });
  });
  const refused: [string, Record<string, unknown>, string][] = [
    ['a ttl that is not a duration', { ttl: 'soon' }, 'error converting input "soon" for field "ttl"'],
    ['a negative ttl', { ttl: -5 }, 'error converting input -5 for field "ttl": cannot provide negative value'],
    ['a role_arn that is not a string', { role_arn: { arn: 'x' } }, 'error converting input {"arn":"x"} for field "role_arn"'],
  ];
  for (const [what, body, message] of refused) {
    it(`refuses ${what} before any AWS call`, async () => {
      const r = await call('POST', 'aws/sts/deploy', body);
      expect(r.status).toBe(400);
      expect(r.body.errors[0]).toContain(message);
      expect(await emu.calls()).toEqual([]);
    });
  }

  it('takes JSON null as the zero value (ttl 0: AWS then refuses it)', async () => {
    const r = await call('POST', 'aws/sts/deploy', { ttl: null, role_session_name: null });
    expect((await lastCall()).params.DurationSeconds).toBe('0');
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^Error assuming role: ValidationError: /);
  });
});

describe('endpoints', () => {
  it('falls back to the next STS endpoint when the first cannot be reached', async () => {
    await ok('POST', 'aws/roles/deploy', { credential_type: 'assumed_role', role_arns: [ROLE('deployer')] });
    await ok('POST', 'aws/config/root', { sts_endpoint: 'http://127.0.0.1:9/', sts_fallback_endpoints: [world.endpoint], sts_fallback_regions: ['eu-west-1'] });
    await ok('POST', 'aws/sts/deploy', {});
    expect(await lastCall()).toMatchObject({ action: 'AssumeRole', status: 200 });
  });

  it('answers an error naming the request failure when no endpoint answers', async () => {
    await ok('POST', 'aws/roles/deploy', { credential_type: 'assumed_role', role_arns: [ROLE('deployer')] });
    await ok('POST', 'aws/config/root', { sts_endpoint: 'http://127.0.0.1:9/' });
    const r = await call('POST', 'aws/sts/deploy', {});
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^Error assuming role: RequestError: send request failed/);
  });
});
