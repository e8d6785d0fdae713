// node-vault's jwtLogin against a JWT mount, and the OIDC flow through its generic methods (it has
// no OIDC helpers), with the real OpenID provider and a browser stand-in.
import { describe, expect, inject, it } from 'vitest';
import { Browser } from '../../e2e/oidc-browser';
import { CLIENT_BASIC } from '../../e2e/oidc-provider';
import { coffer, failure, unique, vault } from './client';

const root = vault();
const helper = inject('clientHelper');

async function helperJson(path: string, body?: unknown): Promise<Record<string, string>> {
  const res = await fetch(`${helper}${path}`, body ? { method: 'POST', body: JSON.stringify(body) } : {});
  return (await res.json()) as Record<string, string>;
}

describe('JWT', () => {
  it('jwtLogin: the token carries the role\'s policies and the mapped claims, and node-vault keeps it', async () => {
    const mount_point = unique('jwt');
    await root.enableAuth({ mount_point, type: 'jwt' });
    const { public_key } = await helperJson('/jwt/public-key');
    await root.write(`auth/${mount_point}/config`, { jwt_validation_pubkeys: [public_key], bound_issuer: 'https://ci.example' });
    await root.write(`auth/${mount_point}/role/deploy`, {
      role_type: 'jwt',
      user_claim: 'sub',
      bound_audiences: ['coffer'],
      bound_claims: { environment: 'prod' },
      claim_mappings: { environment: 'env' },
      token_policies: ['deployer'],
      token_ttl: '15m',
    });
    const role = (await root.read(`auth/${mount_point}/role/deploy`)).data;
    expect(role).toMatchObject({ expiration_leeway: 150, not_before_leeway: 150, clock_skew_leeway: 60, bound_claims_type: 'string' });

    const user = vault('');
    const { jwt } = await helperJson('/jwt', { claims: { iss: 'https://ci.example', aud: 'coffer', sub: 'pipeline-1', environment: 'prod' } });
    const login = await user.jwtLogin({ mount_point, role: 'deploy', jwt });
    expect(login.auth).toMatchObject({ policies: ['default', 'deployer'], metadata: { env: 'prod', role: 'deploy' }, lease_duration: 900 });
    expect(user.token).toBe(login.auth.client_token);
    expect((await user.tokenLookupSelf()).data.meta).toEqual({ env: 'prod', role: 'deploy' });

    const { jwt: wrong } = await helperJson('/jwt', { claims: { iss: 'https://ci.example', aud: 'coffer', sub: 'x', environment: 'dev' } });
    expect((await failure(vault('').jwtLogin({ mount_point, role: 'deploy', jwt: wrong }))).status).toBe(400);
  });
});

describe('OIDC', () => {
  it('auth_url, the provider\'s sign-in, and the callback give a token', async () => {
    const mount = 'node-vault-oidc'; // the provider knows this mount's callback
    const redirect_uri = `${coffer.url}/v1/auth/${mount}/oidc/callback`;
    await root.enableAuth({ mount_point: mount, type: 'oidc' });
    await root.write(`auth/${mount}/config`, { oidc_discovery_url: inject('oidcIssuer'), oidc_client_id: CLIENT_BASIC.id, oidc_client_secret: CLIENT_BASIC.secret, default_role: 'web' });
    await root.write(`auth/${mount}/role/web`, { user_claim: 'email', allowed_redirect_uris: [redirect_uri], oidc_scopes: ['email'], token_policies: ['dev'] });

    const user = vault('');
    const authUrl = (await user.write(`auth/${mount}/oidc/auth_url`, { redirect_uri })).data.auth_url as string;
    const landed = await new Browser().signIn(authUrl, 'bob', 'bob-pw', redirect_uri);
    if (landed.kind !== 'redirect') throw new Error(`the provider answered ${JSON.stringify(landed)}`);
    const login = await user.read(`auth/${mount}/oidc/callback${landed.url.search}`);
    expect(login.auth.policies).toEqual(['default', 'dev']);
    expect((await vault(login.auth.client_token).tokenLookupSelf()).data.meta).toEqual({ role: 'web' });
  });
});
