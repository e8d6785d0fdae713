// The OIDC authorization-code flow end to end: Coffer on the real launcher, a real OpenID
// provider (oidc-provider, test/e2e/oidc-provider.ts) and a browser stand-in that signs the user
// in at the provider over HTTP. Query mode, form_post mode (code and id_token response types),
// both client authentication methods, and the refusals a user or an attacker can provoke.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Browser, type IdPResult } from './oidc-browser';
import { callbackPath, CLIENT_BASIC, CLIENT_POST, USERS } from './oidc-provider';
import { startLauncher, tempDir, type Server } from './processes';

const ROOT_TOKEN = 'hvs.e2eRootTokenForOidcTests00';
const issuer = inject('oidcIssuer');
const LOGIN_FAILED = 'Vault login failed.';

let server: Server;

interface Reply {
  status: number;
  contentType: string;
  text: string;
  // Parsed JSON body (null when empty or not JSON).
  body: any;
}

async function request(method: string, path: string, opts: { token?: string; json?: unknown; form?: Record<string, string> } = {}): Promise<Reply> {
  const headers: Record<string, string> = {};
  if (opts.token) headers['X-Vault-Token'] = opts.token;
  let body: string | undefined;
  if (opts.json !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.json);
  } else if (opts.form) {
    headers['Content-Type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(opts.form).toString();
  }
  const res = await fetch(path.startsWith('http') ? path : `${server.url}/v1/${path}`, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    // HTML pages.
  }
  return { status: res.status, contentType: res.headers.get('content-type') ?? '', text, body: parsed };
}

/** Root requests that must succeed (setup). */
async function root(method: string, path: string, json?: unknown): Promise<Reply> {
  const r = await request(method, path, { token: ROOT_TOKEN, json });
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r;
}

const redirectFor = (mount: string) => `${server.url}${callbackPath(mount)}`;

/** Enables an OIDC mount with a client of the IdP and one role `web` (overridable). */
async function oidcMount(mount: string, config: Record<string, unknown> = {}, role: Record<string, unknown> = {}): Promise<void> {
  // Vault's two names for the method: the flows mount it as "oidc", the bad-config case as "jwt".
  await root('POST', `sys/auth/${mount}`, { type: 'oidc' });
  await root('POST', `auth/${mount}/config`, { oidc_discovery_url: issuer, oidc_client_id: CLIENT_BASIC.id, oidc_client_secret: CLIENT_BASIC.secret, ...config });
  await root('POST', `auth/${mount}/role/web`, {
    user_claim: 'email',
    groups_claim: 'groups',
    claim_mappings: { name: 'full_name' },
    oidc_scopes: ['email', 'profile', 'groups'],
    allowed_redirect_uris: [redirectFor(mount)],
    token_policies: ['dev'],
    token_ttl: '1h',
    ...role,
  });
}

async function authUrl(mount: string, body: Record<string, unknown> = {}): Promise<string> {
  const r = await request('POST', `auth/${mount}/oidc/auth_url`, { json: { role: 'web', redirect_uri: redirectFor(mount), ...body } });
  expect(r.status).toBe(200);
  return r.body.data.auth_url;
}

/** Starts a login on `mount` and signs `user` in at the IdP. */
async function signIn(mount: string, user = 'alice', body: Record<string, unknown> = {}, tamper?: (u: URL) => void): Promise<IdPResult> {
  const url = new URL(await authUrl(mount, body));
  tamper?.(url);
  return new Browser().signIn(url.toString(), user, USERS[user].password, redirectFor(mount));
}

function redirected(r: IdPResult): URL {
  if (r.kind !== 'redirect') throw new Error(`expected a redirect to Coffer, got ${JSON.stringify(r)}`);
  return r.url;
}

function posted(r: IdPResult): { action: string; fields: Record<string, string> } {
  if (r.kind !== 'form_post') throw new Error(`expected a form post to Coffer, got ${JSON.stringify(r)}`);
  return r;
}

beforeAll(async () => {
  server = await startLauncher(tempDir('coffer-e2e-oidc-'), { COFFER_DEV_ROOT_TOKEN: ROOT_TOKEN });
  await root('PUT', 'sys/policies/acl/dev', { policy: 'path "secret/data/dev/*" { capabilities = ["read"] }' });
  await root('PUT', 'sys/policies/acl/admin-policy', { policy: 'path "sys/mounts" { capabilities = ["read"] }' });
  await oidcMount('oidc');
});

afterAll(async () => {
  await server?.stop();
});

describe('query mode (the provider redirects back with code and state)', () => {
  it('logs alice in: the token carries the role policies, the entity alias is the email on this mount', async () => {
    // Alice's "admins" group maps to an external group on this mount.
    const accessor = (await root('GET', 'sys/auth')).body.data['oidc/'].accessor;
    const group = (await root('POST', 'identity/group', { name: 'oidc-admins', type: 'external', policies: ['admin-policy'] })).body.data;
    await root('POST', 'identity/group-alias', { name: 'admins', mount_accessor: accessor, canonical_id: group.id });

    const back = redirected(await signIn('oidc'));
    expect(back.searchParams.get('code')).toBeTruthy();
    expect(back.searchParams.get('state')).toMatch(/^st_[A-Za-z0-9]{20}$/);
    // The browser follows the provider's redirect to Coffer's callback.
    const r = await request('GET', back.toString());
    expect(r.status).toBe(200);
    const auth = r.body.auth;
    expect(auth).toMatchObject({
      client_token: expect.stringMatching(/^hvs\./),
      token_policies: ['default', 'dev'],
      identity_policies: ['admin-policy'],
      policies: ['admin-policy', 'default', 'dev'],
      metadata: { role: 'web', full_name: 'Alice Example' },
      lease_duration: 3600,
      renewable: true,
      token_type: 'service',
    });

    const self = (await request('GET', 'auth/token/lookup-self', { token: auth.client_token })).body.data;
    expect(self).toMatchObject({ policies: ['default', 'dev'], display_name: 'oidc-alice@example.com', path: 'auth/oidc/oidc/callback', entity_id: auth.entity_id });
    const entity = (await root('GET', `identity/entity/id/${auth.entity_id}`)).body.data;
    expect(entity.aliases).toEqual([expect.objectContaining({ name: 'alice@example.com', mount_accessor: accessor })]);
    // The token works for what its policies allow.
    expect((await request('GET', 'sys/mounts', { token: auth.client_token })).status).toBe(200);

    // A second login finds the same entity.
    const again = await request('GET', redirected(await signIn('oidc')).toString());
    expect(again.body.auth.entity_id).toBe(auth.entity_id);
  });

  it('spends the state: the same callback URL replayed is refused', async () => {
    const back = redirected(await signIn('oidc'));
    expect((await request('GET', back.toString())).status).toBe(200);
    const replay = await request('GET', back.toString());
    expect(replay.status).toBe(400);
    expect(replay.body.errors).toEqual([`${LOGIN_FAILED} Expired or missing OAuth state.`]);
  });

  it('refuses a missing or made-up state', async () => {
    for (const query of ['code=abc', 'state=st_AAAAAAAAAAAAAAAAAAAA&code=abc']) {
      const r = await request('GET', `auth/oidc/oidc/callback?${query}`);
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual([`${LOGIN_FAILED} Expired or missing OAuth state.`]);
    }
  });

  it('binds the client_nonce given to auth_url', async () => {
    const back = redirected(await signIn('oidc', 'alice', { client_nonce: 'cli-123' }));
    const wrong = await request('GET', `${back.toString()}&client_nonce=cli-999`);
    expect(wrong.status).toBe(400);
    expect(wrong.body.errors).toEqual(['invalid client_nonce']);
    // The state went with the failed attempt.
    expect((await request('GET', `${back.toString()}&client_nonce=cli-123`)).body.errors).toEqual([`${LOGIN_FAILED} Expired or missing OAuth state.`]);

    const fresh = redirected(await signIn('oidc', 'alice', { client_nonce: 'cli-123' }));
    expect((await request('GET', fresh.toString())).body.errors).toEqual(['invalid client_nonce']);
    const good = redirected(await signIn('oidc', 'alice', { client_nonce: 'cli-123' }));
    expect((await request('GET', `${good.toString()}&client_nonce=cli-123`)).status).toBe(200);
  });

  it('refuses an ID token whose nonce is not the one auth_url sent', async () => {
    const back = redirected(await signIn('oidc', 'alice', {}, (u) => u.searchParams.set('nonce', 'n_tamperedNonce000000')));
    const r = await request('GET', back.toString());
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^Vault login failed\. Error exchanging oidc code: ".*invalid nonce.*"\.$/);
  });

  it('refuses a code exchanged without the PKCE verifier it was issued for', async () => {
    // Another login's code under this state: the provider refuses the verifier.
    const a = redirected(await signIn('oidc'));
    const b = redirected(await signIn('oidc'));
    const mixed = `${redirectFor('oidc')}?state=${a.searchParams.get('state')}&code=${b.searchParams.get('code')}`;
    const r = await request('GET', mixed);
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toMatch(/^Vault login failed\. Error exchanging oidc code: ".*invalid_grant.*"\.$/);
  });

  it('applies bound_claims to the claims (userinfo included)', async () => {
    await root('POST', 'auth/oidc/role/admins-only', {
      user_claim: 'email',
      oidc_scopes: ['email', 'groups'],
      bound_claims: { groups: ['admins'] },
      allowed_redirect_uris: [redirectFor('oidc')],
      token_policies: ['dev'],
    });
    const bob = await request('GET', redirected(await signIn('oidc', 'bob', { role: 'admins-only' })).toString());
    expect(bob.status).toBe(400);
    expect(bob.body.errors).toEqual([`${LOGIN_FAILED} error validating claims: claim "groups" does not match any associated bound claim values`]);
    const alice = await request('GET', redirected(await signIn('oidc', 'alice', { role: 'admins-only' })).toString());
    expect(alice.status).toBe(200);
    expect(alice.body.auth.metadata).toEqual({ role: 'admins-only' });
  });

  it('answers 200 with an empty auth_url for a redirect_uri the role does not allow', async () => {
    for (const redirect_uri of ['https://evil.example/v1/auth/oidc/oidc/callback', `${redirectFor('oidc')}/extra`]) {
      const r = await request('POST', 'auth/oidc/oidc/auth_url', { json: { role: 'web', redirect_uri } });
      expect(r.status).toBe(200);
      expect(r.body.data).toEqual({ auth_url: '' });
    }
    // The launcher listens on a loopback address: another port is the same redirect (RFC 8252).
    const otherPort = redirectFor('oidc').replace(/:(\d+)\//, ':1/');
    expect((await request('POST', 'auth/oidc/oidc/auth_url', { json: { role: 'web', redirect_uri: otherPort } })).body.data.auth_url).toContain(issuer);
  });

  it('answers the reference errors for a missing role or redirect_uri', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ redirect_uri: redirectFor('oidc') }, 'missing role'],
      [{ role: 'web' }, 'missing redirect_uri'],
      [{ role: 'ghost', redirect_uri: redirectFor('oidc') }, 'role "ghost" could not be found'],
    ];
    for (const [json, message] of cases) {
      const r = await request('POST', 'auth/oidc/oidc/auth_url', { json });
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual([message]);
    }
  });

  it('is 405 for a POST callback when the mount is not in form_post mode', async () => {
    expect((await request('POST', 'auth/oidc/oidc/callback', { form: { state: 'st_x', code: 'c' } })).status).toBe(405);
  });
});

describe('a mount without the OIDC flow', () => {
  it('refuses auth_url with 400 when the config has no client', async () => {
    await root('POST', 'sys/auth/oidc-bad', { type: 'jwt' });
    await root('POST', 'auth/oidc-bad/config', { oidc_discovery_url: issuer });
    const r = await request('POST', 'auth/oidc-bad/oidc/auth_url', { json: { role: 'web', redirect_uri: redirectFor('oidc-bad') } });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['OIDC login is not configured for this mount']);
  });
});

describe('client_secret_post', () => {
  it('logs in with a client the provider authenticates by form parameters', async () => {
    await oidcMount('oidc-post', { oidc_client_id: CLIENT_POST.id, oidc_client_secret: CLIENT_POST.secret });
    const r = await request('GET', redirected(await signIn('oidc-post')).toString());
    expect(r.status).toBe(200);
    expect(r.body.auth.metadata).toEqual({ role: 'web', full_name: 'Alice Example' });
  });
});

describe('form_post mode', () => {
  beforeAll(async () => {
    await oidcMount('oidc-fp', { oidc_response_mode: 'form_post' });
    await oidcMount('oidc-idt', { oidc_response_mode: 'form_post', oidc_response_types: ['id_token'] });
  });

  it('code: the provider posts to the callback, which answers the hand-over page; GET with code=no_code logs in', async () => {
    const { action, fields } = posted(await signIn('oidc-fp'));
    expect(action).toBe(redirectFor('oidc-fp'));
    expect(fields.code).toBeTruthy();
    const page = await request('POST', action, { form: fields });
    expect(page.status).toBe(200);
    expect(page.contentType).toMatch(/^text\/html/);
    expect(page.text).toContain('Completing the sign-in process...');
    expect(page.text).toContain(`path: "oidc-fp", code: 'no_code', state: ${JSON.stringify(fields.state)}`);

    const r = await request('GET', `auth/oidc-fp/oidc/callback?state=${fields.state}&code=no_code`);
    expect(r.status).toBe(200);
    expect(r.body.auth.token_policies).toEqual(['default', 'dev']);
    // Single use here too.
    expect((await request('GET', `auth/oidc-fp/oidc/callback?state=${fields.state}&code=no_code`)).status).toBe(400);
  });

  it('id_token: the token itself is posted, verified at the GET callback (no code, no userinfo)', async () => {
    const url = new URL(await authUrl('oidc-idt'));
    expect(url.searchParams.get('response_type')).toBe('id_token');
    const { action, fields } = posted(await new Browser().signIn(url.toString(), 'alice', USERS.alice.password, redirectFor('oidc-idt')));
    expect(fields.id_token).toBeTruthy();
    expect(fields.code).toBeUndefined();
    expect((await request('POST', action, { form: fields })).status).toBe(200);
    const r = await request('GET', `auth/oidc-idt/oidc/callback?state=${fields.state}&code=no_code`);
    expect(r.status).toBe(200);
    expect(r.body.auth.metadata).toEqual({ role: 'web', full_name: 'Alice Example' });
  });

  it('answers an HTML error page for a post with an unknown state', async () => {
    const r = await request('POST', 'auth/oidc-fp/oidc/callback', { form: { state: 'st_AAAAAAAAAAAAAAAAAAAA', code: 'c' } });
    expect(r.status).toBe(400);
    expect(r.contentType).toMatch(/^text\/html/);
    expect(r.text).toContain('Expired or missing OAuth state.');
  });
});
