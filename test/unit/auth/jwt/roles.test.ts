// auth/<mount>/role/:name and LIST role: every field, Vault's validation messages, the token
// fields with their deprecated aliases, and the warnings.
import { describe, expect, it } from 'vitest';
import { engine, expectError, MOUNT_MAX_TTL } from './harness';

const jwtRole = { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'coffer' };

describe('role CRUD', () => {
  it('creates a jwt role and reads back every field with its default', async () => {
    const { call } = engine();
    expect(await call('write', 'role/dev', jwtRole)).toEqual({});
    expect((await call('read', 'role/dev')).data).toEqual({
      role_type: 'jwt',
      expiration_leeway: 150,
      not_before_leeway: 150,
      clock_skew_leeway: 60,
      bound_audiences: ['coffer'],
      bound_subject: '',
      bound_claims_type: 'string',
      bound_claims: null,
      claim_mappings: null,
      user_claim: 'sub',
      user_claim_json_pointer: false,
      groups_claim: '',
      allowed_redirect_uris: [],
      oidc_scopes: [],
      verbose_oidc_logging: false,
      max_age: 0,
      token_bound_cidrs: [],
      token_explicit_max_ttl: 0,
      token_max_ttl: 0,
      token_no_default_policy: false,
      token_num_uses: 0,
      token_period: 0,
      token_policies: [],
      token_ttl: 0,
      token_type: 'default',
    });
  });

  it('stores every field as given', async () => {
    const { call } = engine();
    await call('write', 'role/full', {
      role_type: 'oidc',
      expiration_leeway: '2m',
      not_before_leeway: -1,
      clock_skew_leeway: 30,
      bound_audiences: ['a', 'b'],
      bound_subject: 'alice',
      bound_claims_type: 'glob',
      bound_claims: { '/groups/0': 'ops-*', team: ['red', 'blue'] },
      claim_mappings: { email: 'mail', '/profile/name': 'name' },
      user_claim: '/profile/login',
      user_claim_json_pointer: true,
      groups_claim: '/groups',
      allowed_redirect_uris: 'https://app/callback,http://localhost:8250/oidc/callback',
      oidc_scopes: 'email,profile',
      max_age: '1h',
      token_ttl: '1h',
      token_max_ttl: '2h',
      token_explicit_max_ttl: 10800,
      token_policies: 'dev,ops',
      token_bound_cidrs: '10.0.0.0/8, 192.168.1.1',
      token_no_default_policy: true,
      token_num_uses: 5,
      token_period: 0,
      token_type: 'service',
    });
    expect((await call('read', 'role/full')).data).toMatchObject({
      role_type: 'oidc',
      expiration_leeway: 120,
      not_before_leeway: -1,
      clock_skew_leeway: 30,
      bound_audiences: ['a', 'b'],
      bound_subject: 'alice',
      bound_claims_type: 'glob',
      bound_claims: { '/groups/0': 'ops-*', team: ['red', 'blue'] },
      claim_mappings: { email: 'mail', '/profile/name': 'name' },
      user_claim: '/profile/login',
      user_claim_json_pointer: true,
      groups_claim: '/groups',
      allowed_redirect_uris: ['https://app/callback', 'http://localhost:8250/oidc/callback'],
      oidc_scopes: ['email', 'profile'],
      max_age: 3600,
      token_ttl: 3600,
      token_max_ttl: 7200,
      token_explicit_max_ttl: 10800,
      token_policies: ['dev', 'ops'],
      token_bound_cidrs: ['10.0.0.0/8', '192.168.1.1'],
      token_no_default_policy: true,
      token_num_uses: 5,
      token_type: 'service',
    });
  });

  it('lists, updates in place, deletes; names are case-insensitive; missing roles read 404', async () => {
    const { call } = engine();
    await expectError(call('list', 'role'), 404);
    await call('write', 'role/B-Role', jwtRole);
    await call('write', 'role/a.role', { ...jwtRole, bound_subject: 's' });
    expect((await call('list', 'role')).data).toEqual({ keys: ['a.role', 'b-role'] });
    expect((await call('read', 'role/b-role')).data?.user_claim).toBe('sub');
    // An update changes only what it sends.
    await call('write', 'role/b-role', { groups_claim: 'groups' });
    const data = (await call('read', 'role/B-ROLE')).data!;
    expect(data).toMatchObject({ role_type: 'jwt', groups_claim: 'groups', bound_audiences: ['coffer'], user_claim: 'sub' });
    await call('delete', 'role/b-role');
    await expectError(call('read', 'role/b-role'), 404);
    expect((await call('list', 'role')).data).toEqual({ keys: ['a.role'] });
  });
});

describe('role validation', () => {
  it('refuses an unknown role_type and bound_claims_type', async () => {
    const { call } = engine();
    await expectError(call('write', 'role/r', { ...jwtRole, role_type: 'saml' }), 400, "invalid 'role_type': saml");
    await expectError(call('write', 'role/r', { ...jwtRole, bound_claims_type: 'regex' }), 400, "invalid 'bound_claims_type': regex");
    await expectError(call('read', 'role/r'), 404);
  });

  it('needs a user claim, redirect URIs for oidc roles, and a bound constraint for jwt roles', async () => {
    const { call } = engine();
    await expectError(call('write', 'role/r', { role_type: 'jwt', bound_audiences: 'x' }), 400, 'a user claim must be defined on the role');
    await expectError(call('write', 'role/r', { user_claim: 'sub' }), 400, "'allowed_redirect_uris' must be set if 'role_type' is 'oidc' or unspecified.");
    await expectError(call('write', 'role/r', { role_type: 'oidc', user_claim: 'sub' }), 400, "'allowed_redirect_uris' must be set if 'role_type' is 'oidc' or unspecified.");
    await expectError(call('write', 'role/r', { role_type: 'jwt', user_claim: 'sub' }), 400, 'must have at least one bound constraint when creating/updating a role');
    // Any one of the four constraints is enough; oidc roles need none.
    for (const [i, bound] of [{ bound_audiences: 'a' }, { bound_subject: 's' }, { bound_claims: { k: 'v' } }, { token_bound_cidrs: '10.0.0.0/8' }, { bound_cidrs: '10.0.0.0/8' }].entries()) {
      await call('write', `role/ok${i}`, { role_type: 'jwt', user_claim: 'sub', ...bound });
    }
    await call('write', 'role/web', { user_claim: 'sub', allowed_redirect_uris: 'https://app/cb' });
    expect((await call('read', 'role/web')).data?.role_type).toBe('oidc');
  });

  it('glob bound claims must be strings or lists of strings', async () => {
    const { call } = engine();
    await expectError(call('write', 'role/r', { ...jwtRole, bound_claims_type: 'glob', bound_claims: { k: { a: 'b' } } }), 400, 'claim is not a string or list: map[a:b]');
    await expectError(call('write', 'role/r', { ...jwtRole, bound_claims_type: 'glob', bound_claims: { k: ['x', 1] } }), 400, 'claim is not a string: 1');
    await expectError(call('write', 'role/r', { ...jwtRole, bound_claims_type: 'glob', bound_claims: { k: true } }), 400, 'claim is not a string: true');
    // String mode takes any JSON value.
    await call('write', 'role/r', { ...jwtRole, bound_claims: { n: 10, b: true, l: ['x', 2] } });
    // Switching an existing role to glob checks the stored claims too.
    await expectError(call('write', 'role/r', { bound_claims_type: 'glob' }), 400, 'claim is not a string: 10');
  });

  it('claim_mappings may not target "role" or map two claims to one key', async () => {
    const { call } = engine();
    await expectError(call('write', 'role/r', { ...jwtRole, claim_mappings: { email: 'role' } }), 400, 'metadata key "role" is reserved and may not be a mapping destination');
    await expectError(call('write', 'role/r', { ...jwtRole, claim_mappings: { email: 'm', mail: 'm' } }), 400, 'multiple keys are mapped to metadata key "m"');
  });

  it('checks the token fields with Vault messages', async () => {
    const { call } = engine();
    await expectError(call('write', 'role/r', { ...jwtRole, token_ttl: '2h', token_max_ttl: '1h' }), 400, "'token_ttl' cannot be greater than 'token_max_ttl'");
    await expectError(call('write', 'role/r', { ...jwtRole, ttl: '2h', max_ttl: '1h' }), 400, 'ttl should not be greater than max ttl');
    await expectError(call('write', 'role/r', { ...jwtRole, token_ttl: '2h', max_ttl: '1h' }), 400, 'ttl should not be greater than max ttl');
    await expectError(call('write', 'role/r', { ...jwtRole, token_type: 'weird' }), 400, "invalid 'token_type' value \"weird\"");
    // Names every object inherits were once taken for a type (and the role stored with none).
    for (const name of ['constructor', 'toString', '__proto__']) {
      await expectError(call('write', 'role/r', { ...jwtRole, token_type: name }), 400, `invalid 'token_type' value "${name}"`);
    }
    await expectError(call('write', 'role/r', { ...jwtRole, token_type: 'batch', token_period: 60 }), 400, "'token_type' cannot be 'batch' or 'default_batch' when set to generate periodic tokens");
    await expectError(call('write', 'role/r', { ...jwtRole, token_type: 'batch', token_num_uses: 3 }), 400, "'token_type' cannot be 'batch' or 'default_batch' when set to generate tokens with limited use count");
    await expectError(call('write', 'role/r', { ...jwtRole, token_num_uses: -1 }), 400, "'token_num_uses' cannot be negative");
    await expectError(call('write', 'role/r', { ...jwtRole, token_bound_cidrs: '10.0.0.0/33' }), 400, 'error parsing address "10.0.0.0/33": invalid CIDR block or IP address');
    await expectError(call('write', 'role/r', { ...jwtRole, token_period: MOUNT_MAX_TTL + 1 }), 400, `'period' of '"24h0m1s"' is greater than the backend's maximum lease TTL of '"24h0m0s"'`);
    await expectError(call('write', 'role/r', { ...jwtRole, token_ttl: '-1s' }), 400);
    await expectError(call('read', 'role/r'), 404);
    await call('write', 'role/r', { ...jwtRole, token_type: 'batch' });
    expect((await call('read', 'role/r')).data?.token_type).toBe('batch');
    await call('write', 'role/r', { token_type: '' });
    expect((await call('read', 'role/r')).data?.token_type).toBe('default');
  });

  it('shows the deprecated keys only while they are set, mirroring the token_* values', async () => {
    const { call } = engine();
    await call('write', 'role/r', { ...jwtRole, policies: 'Dev, ops,dev', bound_cidrs: '10.0.0.0/8', ttl: '1m', max_ttl: '1h', period: '30m', num_uses: 3 });
    expect((await call('read', 'role/r')).data).toMatchObject({
      policies: ['dev', 'ops'],
      token_policies: ['dev', 'ops'],
      bound_cidrs: ['10.0.0.0/8'],
      token_bound_cidrs: ['10.0.0.0/8'],
      ttl: 60,
      token_ttl: 60,
      max_ttl: 3600,
      token_max_ttl: 3600,
      period: 1800,
      token_period: 1800,
      num_uses: 3,
      token_num_uses: 3,
    });
    // token_* keys alone replace the values and drop the legacy copies.
    await call('write', 'role/r', { token_policies: 'admin', token_ttl: 120, token_max_ttl: 0, token_period: 0, token_num_uses: 0, token_bound_cidrs: '' });
    const data = (await call('read', 'role/r')).data!;
    expect(data).toMatchObject({ token_policies: ['admin'], token_ttl: 120, token_period: 0 });
    for (const legacy of ['policies', 'bound_cidrs', 'ttl', 'max_ttl', 'period', 'num_uses']) expect(data).not.toHaveProperty(legacy);
    // Both keys: the token_* value wins and the legacy key mirrors it.
    await call('write', 'role/r', { token_policies: 'a', policies: 'b' });
    expect((await call('read', 'role/r')).data).toMatchObject({ token_policies: ['a'], policies: ['a'] });
  });
});

describe('role write warnings', () => {
  it('warns when token_max_ttl exceeds the mount maximum and when verbose OIDC logging is on; otherwise 204', async () => {
    const { call } = engine();
    expect(await call('write', 'role/r', { ...jwtRole, token_max_ttl: MOUNT_MAX_TTL + 60 })).toEqual({
      warnings: ["token max ttl is greater than the system or backend mount's maximum TTL value; issued tokens' max TTL value will be truncated"],
    });
    expect(await call('write', 'role/r', { token_max_ttl: 60, verbose_oidc_logging: true })).toEqual({
      warnings: ['verbose_oidc_logging has been enabled for this role. This is not recommended in production since sensitive information may be present in OIDC responses.'],
    });
    expect(await call('write', 'role/r', { verbose_oidc_logging: false })).toEqual({});
  });

  it('warns about unknown fields, as every endpoint does', async () => {
    const { call } = engine();
    expect((await call('write', 'role/r', { ...jwtRole, bogus: 1 })).warnings).toEqual(['Endpoint ignored these unrecognized parameters: [bogus]']);
  });
});
