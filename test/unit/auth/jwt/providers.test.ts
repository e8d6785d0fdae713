// provider_config: which providers a config may name (and the refusals), SecureAuth's and IBM
// ISAM's string group claims, and Azure's groups past the token's limit, read from Microsoft Graph
// (test/emulators/msgraph.ts) with the OIDC exchange's access token.
import { beforeAll, describe, expect, it } from 'vitest';
import { graphURL } from '../../../../src/auth/jwt/providers';
import { getJSON, putJSON } from '../../../../src/framework/storage';
import { graphCalls, memberObjectsURL, setTenant } from '../../../helpers/msgraph';
import { stubIssuer, script } from '../../../helpers/oidc-stub';
import { claims, engine, expectError, makeKey, sign, type Engine, type TestKey } from './harness';
import { expectAnswered, flow, idClaims, LOGIN_FAILED } from './oidc-flow';

const ISS = 'https://issuer.example';
let key: TestKey;

beforeAll(async () => {
  key = await makeKey('ES256');
});

async function jwtMount(providerConfig: Record<string, unknown>, role: Record<string, unknown> = {}): Promise<Engine> {
  const e = engine();
  await e.call('write', 'config', { jwt_validation_pubkeys: [key.pem], bound_issuer: ISS, provider_config: providerConfig });
  await e.call('write', 'role/dev', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'coffer', groups_claim: 'groups', token_policies: 'dev', ...role });
  return e;
}

const login = async (e: Engine, extra: Record<string, unknown>) => e.call('write', 'login', { role: 'dev', jwt: await sign(key, claims(extra)) });

/** Distributed claims saying the groups are at `endpoint` (what Azure sends past 200 groups). */
const distributed = (endpoint: string) => ({ _claim_names: { groups: 'src1' }, _claim_sources: { src1: { endpoint } } });

describe('provider_config on config write', () => {
  it('takes the providers it supports and reads them back', async () => {
    for (const provider_config of [{ provider: 'azure' }, { provider: 'secureauth' }, { provider: 'ibmisam' }, { provider: 'azure', fetch_groups: false }, {}]) {
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
      [{ provider: 'gsuite', gsuite_admin_impersonate: 'admin@example.com' }, 'invalid provider_config: provider "gsuite" is not supported by this server'],
      [{ provider: 'okta', fetch_groups: true }, 'invalid provider_config: provider "okta" is not supported by this server'],
      [{ provider: 'azure', fetch_groups: true }, 'invalid provider_config: error initializing "azure" provider_config: fetch_groups is not supported by this server'],
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
  await putJSON(e.storage, 'config', { ...stored, providerConfig: { provider: 'gsuite' }, version: 'older' });
  await expectError(login(e, { groups: ['eng'] }), 400, 'failed to load custom provider config: provider "gsuite" is not supported by this server');
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

  it('asks Microsoft Graph in place of the retired Azure AD Graph', () => {
    expect(graphURL('https://graph.windows.net/tenant-1/users/u-1/getMemberObjects')).toBe('https://graph.microsoft.com/v1.0/tenant-1/users/u-1/getMemberObjects');
    expect(graphURL('https://graph.microsoftazure.us/t/users/u/getMemberObjects')).toBe('https://graph.microsoft.us/v1.0/t/users/u/getMemberObjects');
    expect(graphURL('https://graph.microsoft.com/v1.0/me/getMemberObjects')).toBe('https://graph.microsoft.com/v1.0/me/getMemberObjects');
  });
});
