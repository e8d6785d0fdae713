// The OIDC flow at engine level (reference §2.4), against the scriptable provider of
// test/global/oidc-stub.ts: auth_url (its refusals, the redirect allow-list, the URL it builds,
// PKCE, state and nonce formats), the GET callback (single-use expiring state, client_nonce, the
// code exchange and ID token checks, userinfo, the role's checks) and the form_post POST callback.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import type { LogicalResponse } from '../../../../src/framework/backend';
import { getJSON, putJSON } from '../../../../src/framework/storage';
import { toBase64Url, utf8 } from '../../../../src/crypto/encoding';
import { bareState, mountFromRedirect, redirectAllowed, splitNamespace } from '../../../../src/auth/jwt/oidc-redirect';
import { script, seen, signedIdToken, stubIssuer } from '../../../helpers/oidc-stub';
import { jwksURL, putJwks } from '../../../helpers/jwks-server';
import { engine, expectError } from './harness';
import { API_REDIRECT, CLI_REDIRECT, CLIENT, expectAnswered, flow, idClaims, LOGIN_FAILED, newProviderName, now, REDIRECT, ROLE, type Flow } from './oidc-flow';

/** Moves a pending request's expiry (and its index entry) into the past. */
async function expire(f: Flow, state: string): Promise<void> {
  const p = (await f.pending(state))!;
  const index = (at: number) => `oidc/expiry/${String(at).padStart(15, '0')}/${state}`;
  const past = Date.now() - 1;
  await f.e.storage.delete(index(p.expiresAt));
  await putJSON(f.e.storage, `oidc/state/${state}`, { ...p, expiresAt: past });
  await f.e.storage.put(index(past), new Uint8Array(0));
}

describe('redirect_uri matching', () => {
  it('is an exact, case-insensitive match for ordinary hosts', () => {
    expect(redirectAllowed(REDIRECT, [REDIRECT])).toBe(true);
    expect(redirectAllowed(REDIRECT.toUpperCase(), [REDIRECT])).toBe(true);
    expect(redirectAllowed(REDIRECT, [REDIRECT.toUpperCase()])).toBe(true);
    expect(redirectAllowed(`${REDIRECT}/`, [REDIRECT])).toBe(false);
    expect(redirectAllowed(REDIRECT.replace(':8200', ':8201'), [REDIRECT])).toBe(false);
    expect(redirectAllowed(REDIRECT.replace(':8200', ''), [REDIRECT])).toBe(false);
    expect(redirectAllowed('not a url', ['not a url'])).toBe(false);
    expect(redirectAllowed(REDIRECT, [])).toBe(false);
  });

  it('ignores the port of loopback hosts (RFC 8252), and only there', () => {
    expect(redirectAllowed('http://localhost:1234/oidc/callback', [CLI_REDIRECT])).toBe(true);
    expect(redirectAllowed('http://localhost/oidc/callback', [CLI_REDIRECT])).toBe(true);
    expect(redirectAllowed('http://LOCALHOST:9/OIDC/callback', [CLI_REDIRECT])).toBe(true);
    expect(redirectAllowed('http://127.0.0.1:5555/cb', ['http://127.0.0.1:8250/cb'])).toBe(true);
    expect(redirectAllowed('http://127.0.0.2:5555/cb', ['http://127.0.0.2/cb'])).toBe(true);
    expect(redirectAllowed('http://[::1]:5555/cb', ['http://[::1]:8250/cb'])).toBe(true);
    // Still the same host, scheme and path.
    expect(redirectAllowed('http://127.0.0.1:5555/cb', ['http://localhost:8250/cb'])).toBe(false);
    expect(redirectAllowed('https://localhost:5555/oidc/callback', [CLI_REDIRECT])).toBe(false);
    expect(redirectAllowed('http://localhost:5555/other', [CLI_REDIRECT])).toBe(false);
    expect(redirectAllowed('http://10.0.0.1:5555/cb', ['http://10.0.0.1:8250/cb'])).toBe(false);
  });

  it('takes a namespace query parameter out of the URI, and finds the mount in a callback URI', () => {
    expect(splitNamespace(`${REDIRECT}?namespace=team1`)).toEqual({ redirectUri: REDIRECT, namespace: 'team1' });
    expect(splitNamespace(REDIRECT)).toEqual({ redirectUri: REDIRECT, namespace: '' });
    expect(bareState('st_abc,ns=team1')).toBe('st_abc');
    expect(mountFromRedirect(API_REDIRECT)).toBe('oidc');
    expect(mountFromRedirect('https://v.example/v1/auth/team/oidc/oidc/callback')).toBe('team/oidc');
    expect(mountFromRedirect('https://v.example/callback')).toBe('');
  });
});

describe('oidc/auth_url', () => {
  it('needs an OIDC-flow config, a role and a redirect_uri', async () => {
    const e = engine();
    await expectError(e.call('write', 'oidc/auth_url', { role: 'web', redirect_uri: REDIRECT }), 400, 'could not load configuration');
    // Discovery without a client is for JWT logins only.
    const idp = newProviderName();
    await script(idp, {});
    await e.call('write', 'config', { oidc_discovery_url: stubIssuer(idp) });
    await expectError(e.call('write', 'oidc/auth_url', { role: 'web', redirect_uri: REDIRECT }), 400, 'OIDC login is not configured for this mount');
    await putJwks('oidc-unit', { keys: [{ ...(await exportJWK((await generateKeyPair('RS256')).publicKey)), kid: 'k' }] });
    await e.call('write', 'config', { jwks_url: jwksURL('oidc-unit') });
    await expectError(e.call('write', 'oidc/auth_url', { role: 'web', redirect_uri: REDIRECT }), 400, 'OIDC login is not configured for this mount');

    const f = await flow();
    await expectError(f.e.call('write', 'oidc/auth_url', { redirect_uri: REDIRECT }), 400, 'missing role');
    await expectError(f.e.call('write', 'oidc/auth_url', { role: 'web' }), 400, 'missing redirect_uri');
    await expectError(f.e.call('write', 'oidc/auth_url', { role: 'nope', redirect_uri: REDIRECT }), 400, 'role "nope" could not be found');
    // Role names are case-insensitive; default_role stands in for a missing role.
    expect((await f.e.call('write', 'oidc/auth_url', { role: 'WEB', redirect_uri: REDIRECT })).data!.auth_url).not.toBe('');
    await f.e.call('write', 'config', { oidc_discovery_url: stubIssuer(f.idp), ...CLIENT, default_role: 'web' });
    expect((await f.e.call('write', 'oidc/auth_url', { redirect_uri: REDIRECT })).data!.auth_url).not.toBe('');
  });

  it('answers 200 with an empty auth_url for a redirect_uri the role does not allow, and keeps nothing', async () => {
    const f = await flow();
    for (const redirect_uri of ['https://evil.example/v1/auth/oidc/oidc/callback', `${REDIRECT}x`, 'http://localhost:8250/other']) {
      const r = await f.e.call('write', 'oidc/auth_url', { role: 'web', redirect_uri });
      expect(r).toEqual({ data: { auth_url: '' } });
    }
    expect(await f.e.storage.list('oidc/')).toEqual([]);
    // A loopback redirect on another port is allowed.
    const r = await f.e.call('write', 'oidc/auth_url', { role: 'web', redirect_uri: 'http://localhost:43210/oidc/callback' });
    expect(new URL(r.data!.auth_url as string).searchParams.get('redirect_uri')).toBe('http://localhost:43210/oidc/callback');
  });

  it('answers an empty auth_url when the provider cannot be reached', async () => {
    const f = await flow();
    // A config whose discovery worked at write time, then the document disappears: a new config
    // version has nothing cached, so auth_url must fetch it again.
    await script(f.idp, { noDiscovery: true });
    await putJSON(f.e.storage, 'config', { ...(await getJSON<Record<string, unknown>>(f.e.storage, 'config')), version: 'fresh' });
    expect(await f.e.call('write', 'oidc/auth_url', { role: 'web', redirect_uri: REDIRECT })).toEqual({ data: { auth_url: '' } });
  });

  it('builds the authorization request: client, redirect, code with PKCE S256, scopes, state, nonce', async () => {
    const f = await flow();
    const { url, state, nonce } = await f.start();
    expect(`${url.origin}${url.pathname}`).toBe(`${stubIssuer(f.idp)}/authorize`);
    const q = url.searchParams;
    expect(q.get('client_id')).toBe('coffer');
    expect(q.get('redirect_uri')).toBe(REDIRECT);
    expect(q.get('response_type')).toBe('code');
    expect(q.get('scope')).toBe('openid email groups');
    expect(q.get('response_mode')).toBeNull();
    expect(q.get('max_age')).toBeNull();
    expect(state).toMatch(/^st_[A-Za-z0-9]{20}$/);
    expect(nonce).toMatch(/^n_[A-Za-z0-9]{20}$/);
    expect(q.get('code_challenge_method')).toBe('S256');
    const p = (await f.pending(state))!;
    expect(p.codeVerifier).toMatch(/^[A-Za-z0-9]{43}$/);
    const challenge = toBase64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', utf8(p.codeVerifier!))));
    expect(q.get('code_challenge')).toBe(challenge);
    expect(challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(p).toMatchObject({ state, nonce, role: 'web', redirectUri: REDIRECT, clientNonce: '' });
    expect(p.expiresAt - p.createdAt).toBe(10 * 60 * 1000);

    // Each request is new; openid is sent once even when the role lists it; max_age when set.
    await f.e.call('write', 'role/web', { oidc_scopes: 'openid,profile', max_age: '5m' });
    const second = await f.start();
    expect(second.state).not.toBe(state);
    expect(second.nonce).not.toBe(nonce);
    expect(second.url.searchParams.get('scope')).toBe('openid profile');
    expect(second.url.searchParams.get('max_age')).toBe('300');
  });

  it('carries a namespace from the redirect_uri in the state (namespace_in_state)', async () => {
    const f = await flow();
    const r = await f.e.call('write', 'oidc/auth_url', { role: 'web', redirect_uri: `${REDIRECT}?namespace=team1` });
    const url = new URL(r.data!.auth_url as string);
    expect(url.searchParams.get('redirect_uri')).toBe(REDIRECT);
    expect(url.searchParams.get('state')).toMatch(/^st_[A-Za-z0-9]{20},ns=team1$/);
    expect(r.data!.auth_url).toContain('%2Cns%3Dteam1');
    // Without namespace_in_state the parameter is part of the URI, which must then be allowed as is.
    await f.e.call('write', 'config', { oidc_discovery_url: stubIssuer(f.idp), ...CLIENT, namespace_in_state: false });
    expect((await f.e.call('write', 'oidc/auth_url', { role: 'web', redirect_uri: `${REDIRECT}?namespace=team1` })).data!.auth_url).toBe('');
  });

  it('asks for form_post, and rewrites a UI redirect to the API, in form_post mode', async () => {
    const f = await flow({ oidc_response_mode: 'form_post' });
    const { url } = await f.start();
    expect(url.searchParams.get('response_mode')).toBe('form_post');
    expect(url.searchParams.get('response_type')).toBe('code');
    expect(url.searchParams.get('redirect_uri')).toBe(API_REDIRECT);

    // The id_token response type: the token comes in the form post, without code or PKCE.
    const g = await flow({ oidc_response_mode: 'form_post', oidc_response_types: 'id_token' });
    const idt = await g.start();
    expect(idt.url.searchParams.get('response_type')).toBe('id_token');
    expect(idt.url.searchParams.get('response_mode')).toBe('form_post');
    expect(idt.url.searchParams.get('code_challenge')).toBeNull();
    expect((await g.pending(idt.state))!.codeVerifier).toBeUndefined();
  });

  it('sweeps requests that expired', async () => {
    const f = await flow();
    const { state } = await f.start();
    await expire(f, state);
    const fresh = await f.start();
    expect(await f.pending(state)).toBeNull();
    expect(await f.e.storage.list('oidc/state/')).toEqual([fresh.state]);
    expect((await f.e.storage.scan('oidc/expiry/', '', 10)).length).toBe(1);
  });
});

describe('oidc/callback (GET)', () => {
  beforeEach(() => {
    vi.spyOn(console, 'warn').mockImplementation(() => {});
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('exchanges the code with the client secret and the PKCE verifier, merges userinfo, and logs in', async () => {
    const f = await flow();
    const { state, nonce } = await f.start();
    // The ID token names the user; email and groups come only from userinfo.
    await script(f.idp, { claims: { sub: 'alice', nonce }, userinfo: { status: 200, body: { sub: 'alice', email: 'alice@example.com', groups: ['eng', 'ops'], name: 'Alice' } } });
    const r = await f.callback({ state, code: 'the-code' });
    expect(r.login).toMatchObject({
      aliasName: 'alice@example.com',
      aliasMetadata: { role: 'web', full_name: 'Alice' },
      metadata: { role: 'web', full_name: 'Alice' },
      groupAliasNames: ['eng', 'ops'],
      policies: ['dev'],
      ttl: 3600,
      displayName: 'alice@example.com',
      role: 'web',
    });
    const { requests, userinfoCalls } = await seen(f.idp);
    expect(userinfoCalls).toBe(1);
    expect(requests).toHaveLength(1);
    expect(requests[0].authorization).toBe(`Basic ${btoa('coffer:coffer-secret')}`);
    expect(requests[0].form).toEqual({ grant_type: 'authorization_code', code: 'the-code', redirect_uri: REDIRECT, code_verifier: expect.stringMatching(/^[A-Za-z0-9]{43}$/) });
    // The state is spent.
    expect(await f.pending(state)).toBeNull();
    expectAnswered(await f.callback({ state, code: 'the-code' }), 400, `${LOGIN_FAILED} Expired or missing OAuth state.`);
  });

  it('refuses a missing, unknown or expired state, and a callback before any config', async () => {
    await expectError(engine().call('read', 'oidc/callback', { state: 'st_x', code: 'c' }), 400, `${LOGIN_FAILED} Could not load configuration`);
    const f = await flow();
    expectAnswered(await f.callback({ code: 'c' }), 400, `${LOGIN_FAILED} Expired or missing OAuth state.`);
    expectAnswered(await f.callback({ state: 'st_AAAAAAAAAAAAAAAAAAAA', code: 'c' }), 400, `${LOGIN_FAILED} Expired or missing OAuth state.`);
    expectAnswered(await f.callback({ state: '../config', code: 'c' }), 400, `${LOGIN_FAILED} Expired or missing OAuth state.`);
    const { state } = await f.start();
    await expire(f, state);
    expectAnswered(await f.callback({ state, code: 'c' }), 400, `${LOGIN_FAILED} Expired or missing OAuth state.`);
    expect((await seen(f.idp)).requests).toHaveLength(0);
    // Found expired, it was deleted (with its index entry).
    expect(await f.e.storage.list('oidc/state/')).toEqual([]);
    expect(await f.e.storage.scan('oidc/expiry/', '', 10)).toEqual([]);
  });

  it('accepts the state with a namespace suffix', async () => {
    const f = await flow();
    const r = await f.e.call('write', 'oidc/auth_url', { role: 'web', redirect_uri: `${REDIRECT}?namespace=team1` });
    const url = new URL(r.data!.auth_url as string);
    await script(f.idp, { claims: idClaims(url.searchParams.get('nonce')!) });
    expect((await f.callback({ state: url.searchParams.get('state'), code: 'c' })).login?.aliasName).toBe('alice@example.com');
  });

  it('binds the client_nonce given to auth_url, and spends the state on a mismatch', async () => {
    const f = await flow();
    const { state, nonce } = await f.start({ client_nonce: 'cli-nonce-1' });
    await script(f.idp, { claims: idClaims(nonce) });
    expectAnswered(await f.callback({ state, code: 'c' }), 400, 'invalid client_nonce');
    expectAnswered(await f.callback({ state, code: 'c', client_nonce: 'cli-nonce-1' }), 400, `${LOGIN_FAILED} Expired or missing OAuth state.`);
    const second = await f.start({ client_nonce: 'cli-nonce-1' });
    expectAnswered(await f.callback({ state: second.state, code: 'c', client_nonce: 'other' }), 400, 'invalid client_nonce');
    const third = await f.start({ client_nonce: 'cli-nonce-1' });
    await script(f.idp, { claims: idClaims(third.nonce) });
    expect((await f.callback({ state: third.state, code: 'c', client_nonce: 'cli-nonce-1' })).login).toBeDefined();
    // Without a client_nonce at auth_url, none is needed (an extra one is ignored).
    const fourth = await f.start();
    await script(f.idp, { claims: idClaims(fourth.nonce) });
    expect((await f.callback({ state: fourth.state, code: 'c', client_nonce: 'whatever' })).login).toBeDefined();
  });

  it('refuses when the role is gone, the provider reported an error, or the client address is not bound', async () => {
    const f = await flow();
    const a = await f.start();
    await f.e.call('delete', 'role/web');
    expectAnswered(await f.callback({ state: a.state, code: 'c' }), 400, `${LOGIN_FAILED} Role could not be found`);

    await f.e.call('write', 'role/web', { ...ROLE, token_bound_cidrs: '10.0.0.0/8' });
    const b = await f.start();
    expectAnswered(await f.callback({ state: b.state, error: 'access_denied', error_description: 'End-User aborted interaction' }), 400, `${LOGIN_FAILED} End-User aborted interaction`);
    const c = await f.start();
    const denied = await f.callback({ state: c.state, code: 'c' }, { clientIP: '192.168.1.1' });
    expect(denied.raw?.status).toBe(403);
    expect(await f.pending(c.state)).toBeNull();
    const d = await f.start();
    await script(f.idp, { claims: idClaims(d.nonce) });
    expect((await f.callback({ state: d.state, code: 'c' }, { clientIP: '10.1.2.3' })).login?.boundCidrs).toEqual(['10.0.0.0/8']);
  });

  it('reports a failed code exchange', async () => {
    const f = await flow();
    const a = await f.start();
    await script(f.idp, { tokenError: { status: 400, body: { error: 'invalid_grant', error_description: 'grant request is invalid' } } });
    expectAnswered(
      await f.callback({ state: a.state, code: 'bad' }),
      400,
      `${LOGIN_FAILED} Error exchanging oidc code: ${JSON.stringify('unable to exchange auth code with provider: oauth2: "invalid_grant" "grant request is invalid"')}.`,
    );
    const b = await f.start();
    await script(f.idp, { claims: idClaims(b.nonce), omitIdToken: true });
    expectAnswered(await f.callback({ state: b.state, code: 'c' }), 400, `${LOGIN_FAILED} Error exchanging oidc code: "id_token is missing from auth code exchange".`);
  });

  it('authenticates with client_secret_post when the provider supports only that, or refuses basic', async () => {
    const f = await flow({}, {}, { authMethods: ['client_secret_post'] });
    const a = await f.start();
    await script(f.idp, { authMethods: ['client_secret_post'], claims: idClaims(a.nonce) });
    expect((await f.callback({ state: a.state, code: 'c' })).login).toBeDefined();
    const [req] = (await seen(f.idp)).requests;
    expect(req.authorization).toBe('');
    expect(req.form).toMatchObject({ client_id: 'coffer', client_secret: 'coffer-secret', code: 'c' });

    // Both advertised, but this client is registered for post: basic is refused, post works.
    const g = await flow();
    const b = await g.start();
    await script(g.idp, { claims: idClaims(b.nonce), client: { id: 'coffer', secret: 'coffer-secret', method: 'client_secret_post' } });
    expect((await g.callback({ state: b.state, code: 'c' })).login).toBeDefined();
    expect((await seen(g.idp)).requests.map((r) => (r.authorization ? 'basic' : 'post'))).toEqual(['basic', 'post']);
  });

  describe('the ID token', () => {
    const exchangeError = (detail: string) => `${LOGIN_FAILED} Error exchanging oidc code: ${JSON.stringify(`id_token failed verification: ${detail}`)}.`;

    it('must carry the nonce of the request', async () => {
      const f = await flow();
      const a = await f.start();
      await script(f.idp, { claims: idClaims('n_someOtherNonce00000') });
      expectAnswered(await f.callback({ state: a.state, code: 'c' }), 400, exchangeError('invalid nonce (nonce) claim'));
      const b = await f.start();
      await script(f.idp, { claims: idClaims(b.nonce, { nonce: undefined }) });
      expectAnswered(await f.callback({ state: b.state, code: 'c' }), 400, exchangeError('invalid nonce (nonce) claim'));
    });

    it('must be signed by a key of the provider with an allowed algorithm', async () => {
      const f = await flow();
      const a = await f.start();
      await script(f.idp, { claims: idClaims(a.nonce), signer: 'rogue' });
      expectAnswered(await f.callback({ state: a.state, code: 'c' }), 400, exchangeError('error verifying token signature: failed to verify id token signature'));
      // ES256 is published, but OIDC roles accept RS256 unless jwt_supported_algs says otherwise.
      const b = await f.start();
      await script(f.idp, { claims: idClaims(b.nonce), signer: 'es256' });
      expectAnswered(await f.callback({ state: b.state, code: 'c' }), 400, exchangeError('invalid algorithm (alg) header parameter: token signed with unexpected algorithm'));
      await f.e.call('write', 'config', { oidc_discovery_url: stubIssuer(f.idp), ...CLIENT, jwt_supported_algs: 'RS256,ES256' });
      const c = await f.start();
      await script(f.idp, { claims: idClaims(c.nonce), signer: 'es256' });
      expect((await f.callback({ state: c.state, code: 'c' })).login).toBeDefined();
    });

    it('must come from the issuer, for this client, and be current', async () => {
      const f = await flow();
      const cases: [Record<string, unknown>, string][] = [
        [{ iss: 'https://other.example' }, 'invalid issuer (iss) claim'],
        [{ aud: 'someone-else' }, 'invalid audience (aud) claim: the audience is not the client id'],
        [{ aud: ['coffer', 'other'] }, 'invalid audience (aud) claim: multiple audiences and the client id is not the authorized party'],
        [{ azp: 'other' }, 'invalid authorized party (azp) claim: "other" is not the client id'],
        [{ exp: now() - 120, iat: now() - 600 }, 'invalid expiration time (exp) claim: token is expired'],
        [{ iat: now() + 600, exp: now() + 900 }, 'invalid not before (nbf) claim: token not yet valid'],
      ];
      for (const [extra, detail] of cases) {
        const s = await f.start();
        await script(f.idp, { claims: idClaims(s.nonce, extra) });
        expectAnswered(await f.callback({ state: s.state, code: 'c' }), 400, exchangeError(detail));
      }
      // Several audiences are fine when the client is one of them and the authorized party.
      const ok = await f.start();
      await script(f.idp, { claims: idClaims(ok.nonce, { aud: ['coffer', 'other'], azp: 'coffer' }) });
      expect((await f.callback({ state: ok.state, code: 'c' })).login).toBeDefined();
    });

    it('must name one of the role bound_audiences when it has some', async () => {
      const f = await flow({}, { bound_audiences: 'api-1' });
      const a = await f.start();
      await script(f.idp, { claims: idClaims(a.nonce) });
      expectAnswered(await f.callback({ state: a.state, code: 'c' }), 400, exchangeError('invalid audience (aud) claim: audience claim does not match any expected audience'));
      const b = await f.start();
      await script(f.idp, { claims: idClaims(b.nonce, { aud: ['coffer', 'api-1'], azp: 'coffer' }) });
      expect((await f.callback({ state: b.state, code: 'c' })).login).toBeDefined();
    });

    it('must carry a recent auth_time when the role sets max_age', async () => {
      const f = await flow({}, { max_age: 300 });
      const a = await f.start();
      await script(f.idp, { claims: idClaims(a.nonce) });
      expectAnswered(await f.callback({ state: a.state, code: 'c' }), 400, exchangeError('missing auth_time claim when max age was requested'));
      const b = await f.start();
      await script(f.idp, { claims: idClaims(b.nonce, { auth_time: now() - 3600 }) });
      expectAnswered(await f.callback({ state: b.state, code: 'c' }), 400, exchangeError('auth_time is beyond max age (300)'));
      const c = await f.start();
      await script(f.idp, { claims: idClaims(c.nonce, { auth_time: now() - 100 }) });
      expect((await f.callback({ state: c.state, code: 'c' })).login).toBeDefined();
    });

    it('must match the access token and code when it carries at_hash or c_hash', async () => {
      const half = async (s: string) => toBase64Url(new Uint8Array(await crypto.subtle.digest('SHA-256', utf8(s))).subarray(0, 16));
      const f = await flow();
      const a = await f.start();
      await script(f.idp, { claims: idClaims(a.nonce, { at_hash: await half('another-token') }) });
      expectAnswered(await f.callback({ state: a.state, code: 'c' }), 400, exchangeError('access_token failed verification: invalid at_hash'));
      const b = await f.start();
      await script(f.idp, { claims: idClaims(b.nonce, { c_hash: await half('another-code') }) });
      expectAnswered(await f.callback({ state: b.state, code: 'c' }), 400, exchangeError('code hash failed verification: invalid c_hash'));
      const c = await f.start();
      await script(f.idp, { claims: idClaims(c.nonce, { at_hash: await half(`at-${f.idp}`), c_hash: await half('the-code') }) });
      expect((await f.callback({ state: c.state, code: 'the-code' })).login).toBeDefined();
    });
  });

  it('keeps going without userinfo, whose failures are only logged', async () => {
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const f = await flow();
    const a = await f.start();
    await script(f.idp, { claims: idClaims(a.nonce, { groups: ['from-id-token'] }), userinfo: { status: 500, body: { error: 'boom' } } });
    expect((await f.callback({ state: a.state, code: 'c' })).login?.groupAliasNames).toEqual(['from-id-token']);
    expect(warn.mock.calls.some(([m]) => String(m).includes('error reading /userinfo endpoint'))).toBe(true);
    // A userinfo answer about another subject is not merged.
    const b = await f.start();
    await script(f.idp, { claims: idClaims(b.nonce), userinfo: { status: 200, body: { sub: 'mallory', email: 'mallory@example.com' } } });
    expect((await f.callback({ state: b.state, code: 'c' })).login?.aliasName).toBe('alice@example.com');
  });

  it("applies the role's checks to the claims: bound subject, user claim, bound claims", async () => {
    const f = await flow({}, { bound_subject: 'bob' });
    const a = await f.start();
    await script(f.idp, { claims: idClaims(a.nonce) });
    expectAnswered(await f.callback({ state: a.state, code: 'c' }), 400, `${LOGIN_FAILED} sub claim does not match bound subject`);

    await f.e.call('write', 'role/web', { ...ROLE, bound_subject: '', user_claim: 'preferred_username' });
    const b = await f.start();
    await script(f.idp, { claims: idClaims(b.nonce) });
    expectAnswered(await f.callback({ state: b.state, code: 'c' }), 400, `${LOGIN_FAILED} claim "preferred_username" not found in token`);

    await f.e.call('write', 'role/web', { ...ROLE, bound_claims: { groups: ['admins'] } });
    const c = await f.start();
    await script(f.idp, { claims: idClaims(c.nonce) });
    expectAnswered(await f.callback({ state: c.state, code: 'c' }), 400, `${LOGIN_FAILED} error validating claims: claim "groups" does not match any associated bound claim values`);
    const d = await f.start();
    await script(f.idp, { claims: idClaims(d.nonce, { groups: ['eng', 'admins'] }) });
    const ok = await f.callback({ state: d.state, code: 'c' });
    expect(ok.login?.groupAliasNames).toEqual(['eng', 'admins']);
    // The nonce is not a claim the login keeps (e.g. as metadata).
    await f.e.call('delete', 'role/web');
    await f.e.call('write', 'role/web', { ...ROLE, claim_mappings: { nonce: 'nonce', name: 'full_name' } });
    const e = await f.start();
    await script(f.idp, { claims: idClaims(e.nonce) });
    const r = await f.callback({ state: e.state, code: 'c' });
    expect(r.raw?.body).toBeUndefined();
    expect(r.login?.metadata).toEqual({ role: 'web', full_name: 'Alice' });
  });

  it('logs the ID token without its signature, and the claims, with verbose_oidc_logging', async () => {
    const debug = vi.spyOn(console, 'debug').mockImplementation(() => {});
    const f = await flow({}, { verbose_oidc_logging: true });
    const a = await f.start();
    await script(f.idp, { claims: idClaims(a.nonce) });
    await f.callback({ state: a.state, code: 'c' });
    const lines = debug.mock.calls.map(([m]) => String(m));
    expect(lines.some((l) => /id_token=[\w-]+\.[\w-]+\.xxxxxxxxxxx$/.test(l))).toBe(true);
    expect(lines.some((l) => l.includes('"email":"alice@example.com"'))).toBe(true);
  });
});

describe('oidc/callback (POST, form_post)', () => {
  const html = (r: LogicalResponse) => ({ http_status_code: r.raw?.status, http_content_type: r.raw?.contentType ?? '', http_raw_body: String(r.raw?.body) });

  it('is 405 unless the mount is in form_post mode', async () => {
    const f = await flow();
    const { state } = await f.start();
    expect(await f.post({ state, code: 'c' })).toEqual({ raw: { status: 405 } });
    await expectError(engine().call('write', 'oidc/callback', { state, code: 'c' }), 400, `${LOGIN_FAILED} Could not load configuration.`);
  });

  it('stores the code with the state and answers the page that hands the state to the UI; GET with no_code finishes', async () => {
    const f = await flow({ oidc_response_mode: 'form_post' });
    const { state, nonce } = await f.start();
    const page = html(await f.post({ state, code: 'posted-code' }));
    expect(page.http_status_code).toBe(200);
    expect(page.http_content_type).toMatch(/^text\/html/);
    expect(page.http_raw_body).toContain('Completing the sign-in process...');
    expect(page.http_raw_body).toContain(`window.opener.postMessage({source: 'oidc-callback', path: "oidc", code: 'no_code', state: ${JSON.stringify(state)}}, window.origin)`);
    expect((await f.pending(state))!.code).toBe('posted-code');

    await script(f.idp, { claims: idClaims(nonce) });
    expect((await f.callback({ state, code: 'no_code' })).login?.aliasName).toBe('alice@example.com');
    expect((await seen(f.idp)).requests[0].form).toMatchObject({ code: 'posted-code', redirect_uri: API_REDIRECT });
  });

  it('answers an HTML error page for an unknown state or a redirect without a mount', async () => {
    const f = await flow({ oidc_response_mode: 'form_post' }, { allowed_redirect_uris: [REDIRECT, 'https://app.example/callback'] });
    const bad = html(await f.post({ state: 'st_AAAAAAAAAAAAAAAAAAAA', code: 'c' }));
    expect(bad.http_status_code).toBe(400);
    expect(bad.http_raw_body).toContain('Expired or missing OAuth state.');
    const { state } = await f.start({ redirect_uri: 'https://app.example/callback' });
    const noMount = html(await f.post({ state, code: 'c' }));
    expect(noMount.http_status_code).toBe(400);
    expect(noMount.http_raw_body).toContain('Invalid redirect path.');
  });

  it('passes an ID token (the id_token response type) to the GET callback, which verifies it', async () => {
    const f = await flow({ oidc_response_mode: 'form_post', oidc_response_types: 'id_token' });
    const a = await f.start();
    const token = await signedIdToken(f.idp, { aud: 'coffer', iat: now(), exp: now() + 300, ...idClaims(a.nonce) });
    expect(html(await f.post({ state: a.state, id_token: token })).http_status_code).toBe(200);
    const r = await f.callback({ state: a.state, code: 'no_code' });
    expect(r.login?.aliasName).toBe('alice@example.com');
    // No code was exchanged and no userinfo asked (there is no access token).
    expect(await seen(f.idp)).toEqual({ requests: [], userinfoCalls: 0 });

    const b = await f.start();
    const wrongNonce = await signedIdToken(f.idp, { aud: 'coffer', iat: now(), exp: now() + 300, ...idClaims('n_notTheNonce0000000') });
    await f.post({ state: b.state, id_token: wrongNonce });
    expectAnswered(await f.callback({ state: b.state, code: 'no_code' }), 400, 'Token verification failed. invalid nonce (nonce) claim');

    const c = await f.start();
    const rogue = await new SignJWT({ aud: 'coffer', iss: stubIssuer(f.idp), iat: now(), exp: now() + 300, ...idClaims(c.nonce) })
      .setProtectedHeader({ alg: 'RS256', kid: 'good' })
      .sign((await generateKeyPair('RS256')).privateKey);
    await f.post({ state: c.state, id_token: rogue });
    expectAnswered(await f.callback({ state: c.state, code: 'no_code' }), 400, 'Token verification failed. error verifying token signature: failed to verify id token signature');

    const d = await f.start();
    await f.post({ state: d.state });
    expectAnswered(await f.callback({ state: d.state, code: 'no_code' }), 400, `${LOGIN_FAILED} No code or id_token received.`);
  });
});
