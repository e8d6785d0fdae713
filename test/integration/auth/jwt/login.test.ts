// The JWT auth method through the Worker: enabling it, config and roles over HTTP, JWT logins
// (PEM keys and a JWKS URL served from Node) answering Vault's auth block with an entity alias
// and group aliases, bound CIDRs, refusals, and renewal re-reading the role.
import { beforeAll, describe, expect, it } from 'vitest';
import { api, caller, initCluster, PERMISSION_DENIED, type Cluster } from '../../../helpers/api';
import { jwksURL, putJwks } from '../../../helpers/jwks-server';
import { claims, makeKey, sign, unsignedToken, type TestKey } from '../../../helpers/jwt';

let c: Cluster;
const { ok, call } = caller(() => c.root);
let accessor = '';
let rsa: TestKey;
let ec: TestKey;

const login = (body: Record<string, unknown>, headers: Record<string, string> = {}, mount = 'jwt') => api('POST', `auth/${mount}/login`, { body, headers });
const lookupSelf = (token: string) => api('GET', 'auth/token/lookup-self', { token });

beforeAll(async () => {
  c = await initCluster();
  [rsa, ec] = await Promise.all([makeKey('RS256'), makeKey('ES256')]);
  await ok('POST', 'sys/auth/jwt', { type: 'jwt' });
  accessor = (await ok('GET', 'sys/auth')).body.data['jwt/'].accessor;
  await ok('POST', 'auth/jwt/config', { jwt_validation_pubkeys: [rsa.pem, ec.pem], bound_issuer: 'https://issuer.example', oidc_client_secret: '', default_role: 'dev' });
  await ok('POST', 'auth/jwt/role/dev', {
    role_type: 'jwt',
    user_claim: 'sub',
    bound_audiences: 'coffer',
    claim_mappings: { email: 'email' },
    token_policies: 'dev',
    token_ttl: '1h',
    token_max_ttl: '2h',
  });
});

describe('enabling and configuring', () => {
  it('is listed as a jwt auth method; config and roles read back over HTTP', async () => {
    expect((await ok('GET', 'sys/auth')).body.data['jwt/']).toMatchObject({ type: 'jwt' });
    const config = (await ok('GET', 'auth/jwt/config')).body.data;
    expect(config).toMatchObject({ bound_issuer: 'https://issuer.example', default_role: 'dev', namespace_in_state: true });
    expect(config).not.toHaveProperty('oidc_client_secret');
    expect((await ok('GET', 'auth/jwt/role/dev')).body.data).toMatchObject({ role_type: 'jwt', token_policies: ['dev'], token_ttl: 3600 });
    expect((await ok('GET', 'auth/jwt/role?list=true')).body.data.keys).toEqual(['dev']);
  });

  it('config and roles need a token; login does not', async () => {
    expect((await api('GET', 'auth/jwt/config')).status).toBe(403);
    expect((await api('POST', 'auth/jwt/role/x', { body: { user_claim: 'sub' } })).status).toBe(403);
    expect((await login({ jwt: await sign(rsa, claims()) })).status).toBe(200);
  });

  it('a bad write is a 400 with Vault\'s message', async () => {
    const r = await call('POST', 'auth/jwt/config', {});
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(["exactly one of 'jwt_validation_pubkeys', 'jwks_url', 'jwks_pairs' or 'oidc_discovery_url' must be set"]);
    const role = await call('POST', 'auth/jwt/role/bad', { role_type: 'jwt', user_claim: 'sub' });
    expect(role.status).toBe(400);
    expect(role.body.errors).toEqual(['must have at least one bound constraint when creating/updating a role']);
  });
});

describe('a JWT login', () => {
  it('answers Vault\'s auth block; the token carries the role\'s settings and the claim metadata', async () => {
    const r = await login({ role: 'dev', jwt: await sign(rsa, claims({ sub: 'alice' })) });
    expect(r.status).toBe(200);
    expect(r.body.auth).toEqual({
      client_token: expect.stringMatching(/^hvs\./),
      accessor: expect.any(String),
      policies: ['default', 'dev'],
      token_policies: ['default', 'dev'],
      metadata: { role: 'dev', email: 'alice@example.com' },
      lease_duration: 3600,
      renewable: true,
      entity_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      token_type: 'service',
      orphan: true,
      mfa_requirement: null,
      num_uses: 0,
    });
    const self = (await lookupSelf(r.body.auth.client_token)).body.data;
    expect(self).toMatchObject({ display_name: 'jwt-alice', path: 'auth/jwt/login', meta: { role: 'dev', email: 'alice@example.com' }, entity_id: r.body.auth.entity_id });
  });

  it('the entity alias is named by the user claim on this mount, with the metadata; the same user finds the same entity', async () => {
    const a = (await login({ jwt: await sign(ec, claims({ sub: 'bob', email: 'bob@example.com' })) })).body.auth;
    const b = (await login({ jwt: await sign(rsa, claims({ sub: 'bob', email: 'bob@example.com' })) })).body.auth;
    expect(b.entity_id).toBe(a.entity_id);
    const entity = (await ok('GET', `identity/entity/id/${a.entity_id}`)).body.data;
    expect(entity.aliases).toEqual([expect.objectContaining({ name: 'bob', mount_accessor: accessor, metadata: { role: 'dev', email: 'bob@example.com' } })]);
  });

  it('groups_claim links the entity into external groups through group aliases', async () => {
    const group = (await ok('POST', 'identity/group', { name: 'jwt-admins', type: 'external', policies: ['admin-policy'] })).body.data;
    await ok('POST', 'identity/group-alias', { name: 'admins', mount_accessor: accessor, canonical_id: group.id });
    await ok('POST', 'auth/jwt/role/grp', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'coffer', groups_claim: '/realm/groups', token_policies: 'dev' });
    const r = (await login({ role: 'grp', jwt: await sign(rsa, claims({ sub: 'carol', realm: { groups: ['admins', 'other'] } })) })).body.auth;
    expect(r.identity_policies).toEqual(['admin-policy']);
    expect(r.policies).toEqual(['admin-policy', 'default', 'dev']);
    // Leaving the group in the IdP removes the membership at the next login.
    expect((await login({ role: 'grp', jwt: await sign(rsa, claims({ sub: 'carol', realm: { groups: [] } })) })).body.auth.identity_policies).toBeUndefined();
  });

  it('refusals are 400s with Vault\'s messages and issue nothing', async () => {
    const cases: [string, string][] = [
      [await sign(rsa, claims({ exp: Math.floor(Date.now() / 1000) - 600 })), 'error validating token: invalid expiration time (exp) claim: token is expired'],
      [await sign(rsa, claims({ iss: 'https://evil' })), 'error validating token: invalid issuer (iss) claim'],
      [await sign(rsa, claims({ aud: 'someone-else' })), 'error validating token: invalid audience (aud) claim: audience claim does not match any expected audience'],
      [unsignedToken(claims()), 'error validating token: error verifying token signature: no known key successfully validated the token signature'],
      [await sign(rsa, claims({ sub: 42 })), 'claim "sub" could not be converted to string'],
    ];
    for (const [jwt, message] of cases) {
      const r = await login({ jwt });
      expect({ status: r.status, errors: r.body.errors, auth: r.body.auth }).toEqual({ status: 400, errors: [message], auth: undefined });
    }
    const noRole = await login({ role: 'nope', jwt: 'x' });
    expect(noRole.body.errors).toEqual(['role "nope" could not be found']);
  });

  it('token_bound_cidrs: refused from elsewhere (403); the token is bound to them', async () => {
    await ok('POST', 'auth/jwt/role/office', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'coffer', token_bound_cidrs: '10.0.0.0/8' });
    const jwt = await sign(rsa, claims({ sub: 'dave' }));
    const refused = await login({ role: 'office', jwt }, { 'CF-Connecting-IP': '192.0.2.1' });
    expect(refused.status).toBe(403);
    expect(refused.body.errors).toEqual([PERMISSION_DENIED]);
    const t = (await login({ role: 'office', jwt }, { 'CF-Connecting-IP': '10.1.2.3' })).body.auth.client_token;
    expect((await api('GET', 'auth/token/lookup-self', { token: t, headers: { 'CF-Connecting-IP': '10.9.9.9' } })).status).toBe(200);
    expect((await api('GET', 'auth/token/lookup-self', { token: t, headers: { 'CF-Connecting-IP': '192.0.2.1' } })).status).toBe(403);
  });
});

describe('JWKS from a remote server', () => {
  it('logs in with keys fetched from jwks_url', async () => {
    await ok('POST', 'sys/auth/jwks', { type: 'jwt' });
    const key = await makeKey('EdDSA');
    await putJwks('integration', { keys: [key.jwk] });
    await ok('POST', 'auth/jwks/config', { jwks_url: jwksURL('integration') });
    await ok('POST', 'auth/jwks/role/r', { role_type: 'jwt', user_claim: 'email', bound_subject: 'user-1' });
    const r = await login({ role: 'r', jwt: await sign(key, claims({ aud: undefined })) }, {}, 'jwks');
    expect(r.status).toBe(200);
    expect((await lookupSelf(r.body.auth.client_token)).body.data.display_name).toBe('jwks-alice@example.com');
  });
});

describe('renewal re-reads the role', () => {
  const renewSelf = (token: string) => api('POST', 'auth/token/renew-self', { token, body: {} });

  it('uses the role\'s current TTL and fails once the role is deleted', async () => {
    await ok('POST', 'auth/jwt/role/renew', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'coffer', token_ttl: '5m' });
    const t = (await login({ role: 'renew', jwt: await sign(rsa, claims({ sub: 'erin' })) })).body.auth.client_token;
    await ok('POST', 'auth/jwt/role/renew', { token_ttl: '20m' });
    expect((await renewSelf(t)).body.auth.lease_duration).toBe(1200);
    await ok('DELETE', 'auth/jwt/role/renew');
    const r = await renewSelf(t);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['role renew does not exist during renewal']);
  });
});
