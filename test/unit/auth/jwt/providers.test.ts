// provider_config: which providers a config may name (and the refusals), SecureAuth's and IBM
// ISAM's string group claims, Azure's groups past the token's limit, read from Microsoft Graph
// (test/emulators/msgraph.ts) with the OIDC exchange's access token, and Google Workspace groups
// and custom schemas read from the Admin SDK (test/emulators/google-directory.ts) with a service
// account's delegated token, and Okta's capped group claims completed from its admin API
// (test/emulators/okta.ts).
import { beforeAll, describe, expect, it } from 'vitest';
import { exportPKCS8, exportSPKI, generateKeyPair } from 'jose';
import { graphURL } from '../../../../src/auth/jwt/providers';
import { getJSON, putJSON } from '../../../../src/framework/storage';
import { googleApi, googleStats, googleTokenURI, setDirectory } from '../../../helpers/google-directory';
import { graphBase, graphCalls, memberObjectsURL, setTenant } from '../../../helpers/msgraph';
import { oktaCalls, oktaOrg, setOrg } from '../../../helpers/okta';
import { nextLink } from '../../../../src/auth/jwt/provider-okta';
import { stubIssuer, script } from '../../../helpers/oidc-stub';
import { claims, engine, expectError, makeKey, sign, type Engine, type TestKey } from './harness';
import { expectAnswered, flow, idClaims, LOGIN_FAILED } from './oidc-flow';

const ISS = 'https://issuer.example';
/** The emulators, for the engine's providers. */
const APIS = () => ({ googleAdminApi: googleApi(), microsoftGraph: graphBase() });
let key: TestKey;

beforeAll(async () => {
  key = await makeKey('ES256');
});

async function jwtMount(providerConfig: Record<string, unknown>, role: Record<string, unknown> = {}): Promise<Engine> {
  const e = engine(APIS());
  await e.call('write', 'config', { jwt_validation_pubkeys: [key.pem], bound_issuer: ISS, provider_config: providerConfig });
  await e.call('write', 'role/dev', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'coffer', groups_claim: 'groups', token_policies: 'dev', ...role });
  return e;
}

const login = async (e: Engine, extra: Record<string, unknown>) => e.call('write', 'login', { role: 'dev', jwt: await sign(key, claims(extra)) });

/** Distributed claims saying the groups are at `endpoint` (what Azure sends past 200 groups). */
const distributed = (endpoint: string) => ({ _claim_names: { groups: 'src1' }, _claim_sources: { src1: { endpoint } } });

describe('provider_config on config write', () => {
  it('takes the providers it supports and reads them back', async () => {
    for (const provider_config of [{ provider: 'azure' }, { provider: 'secureauth' }, { provider: 'ibmisam' }, { provider: 'azure', fetch_groups: true }, {}]) {
      const e = engine();
      expect(await e.call('write', 'config', { jwt_validation_pubkeys: [key.pem], provider_config })).toEqual({});
      expect((await e.call('read', 'config')).data!.provider_config).toEqual(provider_config);
    }
  });

  it('refuses a config without a provider, an unknown provider, and ones not available here, keeping the old config', async () => {
    const e = engine();
    await e.call('write', 'config', { jwt_validation_pubkeys: [key.pem], provider_config: { provider: 'secureauth' } });
    const cases: [Record<string, unknown>, string][] = [
      [{ fetch_groups: true }, "invalid provider_config: 'provider' field not found in provider_config"],
      [{ provider: 7 }, "invalid provider_config: 'provider' field not found in provider_config"],
      [{ provider: 'keycloak' }, 'invalid provider_config: provider "keycloak" not found in custom providers'],
      [{ provider: 'kubernetes' }, 'invalid provider_config: provider "kubernetes" is not supported by this server'],
      [{ provider: 'gsuite', gsuite_admin_impersonate: 'admin@example.com' }, 'invalid provider_config: error initializing "gsuite" provider_config: \'gsuite_service_account\' must be the contents of a JSON service account key file'],
      [{ provider: 'azure', fetch_groups: 'yes' }, 'invalid provider_config: error initializing "azure" provider_config: \'fetch_groups\' expected type \'bool\', got unconvertible type \'string\''],
    ];
    for (const [provider_config, message] of cases) {
      await expectError(e.call('write', 'config', { jwt_validation_pubkeys: [key.pem], provider_config }), 400, message);
    }
    expect((await e.call('read', 'config')).data!.provider_config).toEqual({ provider: 'secureauth' });
  });
});

it('fails logins with a 400 under a stored provider_config that is no longer accepted', async () => {
  const e = await jwtMount({});
  const stored = (await getJSON<Record<string, unknown>>(e.storage, 'config'))!;
  await putJSON(e.storage, 'config', { ...stored, providerConfig: { provider: 'kubernetes' }, version: 'older' });
  await expectError(login(e, { groups: ['eng'] }), 400, 'failed to load custom provider config: provider "kubernetes" is not supported by this server');
});

describe('SecureAuth and IBM ISAM group claims', () => {
  it('splits a SecureAuth groups string at commas, skipping empty names', async () => {
    const e = await jwtMount({ provider: 'secureauth' });
    expect((await login(e, { groups: 'eng,ops,,sre' })).login?.groupAliasNames).toEqual(['eng', 'ops', 'sre']);
    // A list is taken as it is.
    expect((await login(e, { groups: ['a,b', 'c'] })).login?.groupAliasNames).toEqual(['a,b', 'c']);
  });

  it('splits an IBM ISAM groups string at spaces', async () => {
    const e = await jwtMount({ provider: 'ibmisam' });
    expect((await login(e, { groups: 'eng ops' })).login?.groupAliasNames).toEqual(['eng', 'ops']);
  });

  it('without a provider, a groups string is one group', async () => {
    const e = await jwtMount({});
    expect((await login(e, { groups: 'eng,ops' })).login?.groupAliasNames).toEqual(['eng,ops']);
  });

  it('checks bound claims on "groups" against the split groups, and still needs the claim', async () => {
    const e = await jwtMount({ provider: 'secureauth' }, { bound_claims: { groups: 'ops' } });
    expect((await login(e, { groups: 'eng,ops' })).login?.groupAliasNames).toEqual(['eng', 'ops']);
    await expectError(login(e, { groups: 'eng,dev' }), 400, 'error validating claims: claim "groups" does not match any associated bound claim values');
    await expectError(login(e, {}), 400, 'failed to fetch groups: "groups" claim not found in token');
  });
});

describe('Azure', () => {
  it('uses the groups in the token when it has them', async () => {
    const e = await jwtMount({ provider: 'azure' });
    expect((await login(e, { groups: ['g-1', 'g-2'] })).login?.groupAliasNames).toEqual(['g-1', 'g-2']);
  });

  it('cannot follow distributed claims in a JWT login: there is no access token to call Graph with', async () => {
    const e = await jwtMount({ provider: 'azure' });
    await expectError(login(e, distributed(memberObjectsURL())), 400, 'failed to fetch groups: "groups" claim not found in token: token unavailable to call Microsoft Graph API');
    await expectError(login(e, {}), 400, 'failed to fetch groups: unable to get claim sources: unable to locate groups claim "groups" in _claim_names');
    await expectError(login(e, { _claim_names: { groups: 'src1' } }), 400, 'failed to fetch groups: unable to get claim sources: unable to locate /_claim_sources/src1/endpoint in claims');
  });

  it('reads the groups from Microsoft Graph with the access token of the code exchange', async () => {
    const f = await flow({ provider_config: { provider: 'azure' } });
    await setTenant(f.idp, { userinfo: `${stubIssuer(f.idp)}/userinfo`, members: { alice: ['0f3c-group', '9a1d-group'] } });
    const s = await f.start();
    const { groups: _left, ...overLimit } = idClaims(s.nonce, distributed(memberObjectsURL()));
    await script(f.idp, { claims: overLimit, userinfo: { status: 200, body: { sub: 'alice' } } });
    const res = await f.callback({ state: s.state, code: 'c' });
    expect(res.login?.groupAliasNames).toEqual(['0f3c-group', '9a1d-group']);
    expect(await graphCalls(f.idp)).toBe(1);
  });

  it('fails the login when Graph refuses, naming what Graph said', async () => {
    const f = await flow({ provider_config: { provider: 'azure' } });
    await setTenant(f.idp, { userinfo: `${stubIssuer(f.idp)}/userinfo`, members: {}, failure: { status: 403, body: { error: { code: 'Authorization_RequestDenied' } } } });
    const s = await f.start();
    const { groups: _left, ...overLimit } = idClaims(s.nonce, distributed(memberObjectsURL()));
    await script(f.idp, { claims: overLimit });
    expectAnswered(
      await f.callback({ state: s.state, code: 'c' }),
      400,
      `${LOGIN_FAILED} failed to fetch groups: "groups" claim not found in token: failed to get groups: {"error":{"code":"Authorization_RequestDenied"}}`,
    );
  });

  it('is refused by Graph with a token its issuer does not vouch for', async () => {
    const f = await flow({ provider_config: { provider: 'azure' } });
    // The tenant trusts another provider's userinfo, which does not know this token.
    await setTenant(f.idp, { userinfo: `${stubIssuer('nobody')}/userinfo`, members: { alice: ['g'] } });
    const s = await f.start();
    const { groups: _left, ...overLimit } = idClaims(s.nonce, distributed(memberObjectsURL()));
    await script(f.idp, { claims: overLimit });
    const r = await f.callback({ state: s.state, code: 'c' });
    expect(r.raw?.status).toBe(400);
    expect(JSON.stringify(r.raw?.body)).toContain('InvalidAuthenticationToken');
    expect(await graphCalls(f.idp)).toBe(0);
  });

  it('with fetch_groups, reads every group from Microsoft Graph whatever the token carries', async () => {
    const f = await flow({ provider_config: { provider: 'azure', fetch_groups: true } }, {}, {}, APIS());
    await setTenant(f.idp, { userinfo: `${stubIssuer(f.idp)}/userinfo`, members: { alice: ['g-1', 'g-2'] } });
    const s = await f.start();
    await script(f.idp, { claims: idClaims(s.nonce, { groups: ['in-token'] }) });
    expect((await f.callback({ state: s.state, code: 'c' })).login?.groupAliasNames).toEqual(['g-1', 'g-2']);
    expect(await graphCalls(f.idp)).toBe(1);
    // A JWT login has no access token to ask with.
    const e = engine(APIS());
    await e.call('write', 'config', { jwt_validation_pubkeys: [key.pem], bound_issuer: ISS, provider_config: { provider: 'azure', fetch_groups: true } });
    await e.call('write', 'role/dev', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'coffer', groups_claim: 'groups' });
    await expectError(login(e, { groups: ['g'] }), 400, 'failed to fetch groups: unable to fetch groups from Microsoft Graph API: token unavailable to call Microsoft Graph API');
  });

  it('asks Microsoft Graph in place of the retired Azure AD Graph', () => {
    expect(graphURL('https://graph.windows.net/tenant-1/users/u-1/getMemberObjects')).toBe('https://graph.microsoft.com/v1.0/tenant-1/users/u-1/getMemberObjects');
    expect(graphURL('https://graph.microsoftazure.us/t/users/u/getMemberObjects')).toBe('https://graph.microsoft.us/v1.0/t/users/u/getMemberObjects');
    expect(graphURL('https://graph.microsoft.com/v1.0/me/getMemberObjects')).toBe('https://graph.microsoft.com/v1.0/me/getMemberObjects');
  });
});

describe('Google Workspace', () => {
  let accounts = 0;
  const ADMIN = 'admin@example.com';

  /** A fresh service account (its own key, so no access token is shared between tests). */
  async function serviceAccount(): Promise<{ email: string; json: string; publicPem: string }> {
    const { privateKey, publicKey } = await generateKeyPair('RS256', { extractable: true });
    const email = `coffer-${++accounts}@project.iam.gserviceaccount.com`;
    const json = JSON.stringify({ type: 'service_account', project_id: 'project', private_key_id: `k${accounts}`, private_key: await exportPKCS8(privateKey), client_email: email, token_uri: googleTokenURI() });
    return { email, json, publicPem: await exportSPKI(publicKey) };
  }

  const gsuite = (sa: { json: string }, extra: Record<string, unknown> = {}) => ({ provider: 'gsuite', gsuite_service_account: sa.json, gsuite_admin_impersonate: ADMIN, fetch_groups: true, ...extra });
  const alice = { email: 'alice@example.com' };

  it('takes a service account key as JSON, and never reads it back', async () => {
    const sa = await serviceAccount();
    const e = await jwtMount(gsuite(sa, { groups_recurse_max_depth: 2 }));
    expect((await e.call('read', 'config')).data!.provider_config).toEqual({ provider: 'gsuite', gsuite_admin_impersonate: ADMIN, fetch_groups: true, groups_recurse_max_depth: 2 });
  });

  it('refuses what cannot work, with the reason', async () => {
    const sa = await serviceAccount();
    const e = engine(APIS());
    const init = 'invalid provider_config: error initializing "gsuite" provider_config: ';
    const cases: [Record<string, unknown>, string][] = [
      [{ gsuite_service_account: '' }, "'gsuite_service_account' must be the contents of a JSON service account key file"],
      [{ gsuite_admin_impersonate: '' }, "'gsuite_admin_impersonate' must be set to an email address of a G Suite user with 'Read' permission to access the G Suite Admin User and Group APIs"],
      [{ groups_recurse_max_depth: -1 }, "'gsuite_recurse_max_depth' must be a positive integer"],
      [{ fetch_groups: 'yes' }, "'fetch_groups' expected type 'bool', got unconvertible type 'string'"],
      [{ gsuite_service_account: '/etc/keys/sa.json' }, 'error parsing service account JSON: Unexpected token'],
      [{ gsuite_service_account: JSON.stringify({ type: 'authorized_user' }) }, 'error parsing service account JSON: \'type\' field is "authorized_user" (expected "service_account")'],
      [{ gsuite_service_account: JSON.stringify({ ...JSON.parse(sa.json), private_key: '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n' }) }, 'error parsing service account JSON: private key:'],
    ];
    for (const [extra, message] of cases) {
      let err: unknown = null;
      try {
        await e.call('write', 'config', { jwt_validation_pubkeys: [key.pem], provider_config: gsuite(sa, extra) });
      } catch (x) {
        err = x;
      }
      expect((err as { status?: number })?.status, message).toBe(400);
      expect((err as { errors: string[] }).errors[0]).toContain(init + message);
    }
    await expectError(e.call('read', 'config'), 404);
  });

  it('reads the groups of the user claim, page by page, with a delegated token it keeps', async () => {
    const sa = await serviceAccount();
    await setDirectory({ serviceAccounts: { [sa.email]: sa.publicPem }, admins: [ADMIN], memberships: { 'alice@example.com': ['eng@example.com', 'ops@example.com', 'sre@example.com'], 'eng@example.com': ['all@example.com'] } });
    const e = await jwtMount(gsuite(sa), { user_claim: 'email' });
    expect((await login(e, alice)).login?.groupAliasNames).toEqual(['eng@example.com', 'ops@example.com', 'sre@example.com']);
    expect((await login(e, alice)).login?.groupAliasNames).toHaveLength(3);
    expect(await googleStats()).toEqual({ tokenRequests: 1, groupLists: 4, userGets: 0 });
  });

  it('follows groups of groups to groups_recurse_max_depth, and stops at a cycle', async () => {
    const sa = await serviceAccount();
    await setDirectory({
      serviceAccounts: { [sa.email]: sa.publicPem },
      admins: [ADMIN],
      memberships: { 'alice@example.com': ['eng@example.com'], 'eng@example.com': ['all@example.com'], 'all@example.com': ['eng@example.com', 'company@example.com'] },
    });
    const one = await jwtMount(gsuite(sa, { groups_recurse_max_depth: 1 }), { user_claim: 'email' });
    expect((await login(one, alice)).login?.groupAliasNames).toEqual(['eng@example.com', 'all@example.com']);
    const deep = await jwtMount(gsuite(sa, { groups_recurse_max_depth: 10 }), { user_claim: 'email' });
    expect((await login(deep, alice)).login?.groupAliasNames).toEqual(['eng@example.com', 'all@example.com', 'company@example.com']);
  });

  it('maps custom schema fields into metadata with fetch_user_info', async () => {
    const sa = await serviceAccount();
    await setDirectory({
      serviceAccounts: { [sa.email]: sa.publicPem },
      admins: [ADMIN],
      memberships: {},
      customSchemas: { 'alice@example.com': { Employee: { costCenter: 'cc-42' }, Private: { salary: 1 } } },
    });
    const e = await jwtMount(gsuite(sa, { fetch_groups: false, fetch_user_info: true, user_custom_schemas: 'Employee' }), {
      user_claim: 'email',
      groups_claim: '',
      claim_mappings: { '/Employee/costCenter': 'cost_center', '/Private/salary': 'salary' },
    });
    const res = await login(e, alice);
    expect(res.login?.metadata).toEqual({ cost_center: 'cc-42', role: 'dev' });
  });

  it('uses the token\'s groups when fetch_groups is off', async () => {
    const sa = await serviceAccount();
    const e = await jwtMount(gsuite(sa, { fetch_groups: false }), { user_claim: 'email' });
    expect((await login(e, { ...alice, groups: ['from-token'] })).login?.groupAliasNames).toEqual(['from-token']);
  });

  it('fails the login when Google refuses the service account or the delegation', async () => {
    const sa = await serviceAccount();
    const other = await serviceAccount();
    // Google knows another key for this account: the assertion's signature does not verify.
    await setDirectory({ serviceAccounts: { [sa.email]: other.publicPem }, admins: [ADMIN], memberships: {} });
    const e = await jwtMount(gsuite(sa), { user_claim: 'email' });
    const bad = await login(e, alice).catch((x: { errors: string[] }) => x.errors[0]);
    expect(bad).toContain('failed to fetch groups: oauth2: cannot fetch token: 400:');
    expect(bad).toContain('invalid_grant');
    // The right key, but no delegation to act as this admin.
    await setDirectory({ serviceAccounts: { [sa.email]: sa.publicPem }, admins: ['someone-else@example.com'], memberships: {} });
    await expectError(
      login(e, alice),
      400,
      'failed to fetch groups: oauth2: cannot fetch token: 401: {"error":"unauthorized_client","error_description":"Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested."}',
    );
    // The user claim must name the user.
    await setDirectory({ serviceAccounts: { [sa.email]: sa.publicPem }, admins: [ADMIN], memberships: {} });
    const bySub = await jwtMount(gsuite(sa), { user_claim: 'email', bound_claims: {} });
    await expectError(login(bySub, { email: 7 }), 400, 'claim "email" could not be converted to string');
  });

  it('gets a new token once when the API stops taking the one it kept', async () => {
    const sa = await serviceAccount();
    const d = { serviceAccounts: { [sa.email]: sa.publicPem }, admins: [ADMIN], memberships: { 'alice@example.com': ['eng@example.com'] } };
    await setDirectory(d);
    const e = await jwtMount(gsuite(sa), { user_claim: 'email' });
    await login(e, alice);
    // The emulator forgets every token it issued.
    await setDirectory(d);
    expect((await login(e, alice)).login?.groupAliasNames).toEqual(['eng@example.com']);
    expect((await googleStats()).tokenRequests).toBe(1);
  });
});

describe('Okta', () => {
  const TOKEN = '00aBcD-okta-api-token';
  const okta = (extra: Record<string, unknown> = {}) => ({ provider: 'okta', org_url: oktaOrg(), api_token: TOKEN, fetch_groups: true, groups_cap: 3, ...extra });
  const manyGroups = ['eng', 'ops', 'sre', 'dba', 'sec'];

  it('reads back everything but the API token', async () => {
    const e = await jwtMount(okta({ groups_filter: '^(eng|ops)$' }));
    expect((await e.call('read', 'config')).data!.provider_config).toEqual({ provider: 'okta', org_url: oktaOrg(), fetch_groups: true, groups_cap: 3, groups_filter: '^(eng|ops)$' });
  });

  it('refuses what cannot work, with the reason', async () => {
    const e = engine();
    const init = 'invalid provider_config: error initializing "okta" provider_config: ';
    const cases: [Record<string, unknown>, string][] = [
      [okta({ org_url: 'http://okta.example.com' }), 'org_url must use https'],
      [okta({ org_url: 'not a url' }), 'invalid org_url: parse "not a url": invalid URL'],
      [okta({ org_url: '' }), "'org_url' must be set in provider_config or oidc_discovery_url must be configured when fetch_groups=true"],
      [okta({ api_token: '' }), "'api_token' is required in provider_config when fetch_groups=true"],
      [okta({ groups_cap: -1 }), 'groups_cap must be >= 0'],
      [okta({ groups_filter: '(' }), 'invalid groups_filter regex: '],
      [okta({ fetch_groups: 'true' }), "'fetch_groups' expected type 'bool'"],
    ];
    for (const [provider_config, message] of cases) {
      let err: unknown = null;
      try {
        await e.call('write', 'config', { jwt_validation_pubkeys: [key.pem], provider_config });
      } catch (x) {
        err = x;
      }
      expect((err as { status?: number })?.status, message).toBe(400);
      expect((err as { errors: string[] }).errors[0]).toContain(init + message);
    }
    // Without fetch_groups neither the org nor a token is needed.
    expect(await e.call('write', 'config', { jwt_validation_pubkeys: [key.pem], provider_config: { provider: 'okta', groups_filter: '^eng' } })).toEqual({});
  });

  it('keeps the token\'s groups below groups_cap, and reads them all from Okta at the cap', async () => {
    await setOrg({ apiTokens: [TOKEN], users: { '00u1': { login: 'user-1', groups: manyGroups } } });
    const e = await jwtMount(okta());
    expect((await login(e, { groups: ['eng', 'ops'] })).login?.groupAliasNames).toEqual(['eng', 'ops']);
    expect(await oktaCalls()).toBe(0);
    // Three groups in the token: perhaps cut off. Okta has five, over three pages.
    expect((await login(e, { groups: ['eng', 'ops', 'sre'] })).login?.groupAliasNames).toEqual(manyGroups);
    expect(await oktaCalls()).toBe(3);
    // No groups claim at all: asked too, by user_id_claim when set.
    await setOrg({ apiTokens: [TOKEN], users: { '00u1': { login: 'alice@example.com', groups: ['eng'] } } });
    const byEmail = await jwtMount(okta({ user_id_claim: 'email' }));
    expect((await login(byEmail, {})).login?.groupAliasNames).toEqual(['eng']);
  });

  it('filters group names with groups_filter, from the token or from Okta', async () => {
    await setOrg({ apiTokens: [TOKEN], users: { '00u1': { login: 'user-1', groups: manyGroups } } });
    const e = await jwtMount(okta({ groups_filter: '^(eng|sec)$' }));
    expect((await login(e, { groups: ['eng', 'ops'] })).login?.groupAliasNames).toEqual(['eng']);
    expect((await login(e, { groups: ['eng', 'ops', 'sre'] })).login?.groupAliasNames).toEqual(['eng', 'sec']);
    const tokenOnly = await jwtMount({ provider: 'okta', groups_filter: 'o' });
    expect((await login(tokenOnly, { groups: ['eng', 'ops', 'sso'] })).login?.groupAliasNames).toEqual(['ops', 'sso']);
    await expectError(login(tokenOnly, {}), 400, 'failed to fetch groups: "groups" claim not found in token');
  });

  it('fails the login when Okta refuses or its pages never end', async () => {
    await setOrg({ apiTokens: ['another-token'], users: { '00u1': { login: 'user-1', groups: manyGroups } } });
    const e = await jwtMount(okta());
    await expectError(
      login(e, {}),
      400,
      'failed to fetch groups: unable to fetch groups from Okta API: okta api returned 401: {"errorCode":"E0000011","errorSummary":"Invalid token provided","errorLink":"E0000011","errorId":"oae401","errorCauses":[]}',
    );
    await setOrg({ apiTokens: [TOKEN], users: { '00u1': { login: 'user-1', groups: manyGroups } }, loopLink: true });
    await expectError(login(e, {}), 400, 'failed to fetch groups: unable to fetch groups from Okta API: okta API pagination exceeded 100 pages; possible circular Link header');
    const byOid = await jwtMount(okta({ user_id_claim: 'oid' }));
    await expectError(login(byOid, {}), 400, 'failed to fetch groups: unable to locate "oid" in claims for Okta user lookup');
    await expectError(login(byOid, { oid: 7 }), 400, 'failed to fetch groups: claim "oid" is not a string; cannot use for Okta user lookup');
  });

  it('finds the next page in a Link header', () => {
    expect(nextLink('<https://o.example/a>; rel="self", <https://o.example/a?after=2>; rel="next"')).toBe('https://o.example/a?after=2');
    expect(nextLink('<https://o.example/a>; rel="self"')).toBe('');
    expect(nextLink(null)).toBe('');
  });
});
