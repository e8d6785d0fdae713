// POST login with jwt_validation_pubkeys: the order of Vault's checks, every rejection with its
// message, the algorithms, the time claims and their leeways, and what a successful login returns.
import { beforeAll, describe, expect, it } from 'vitest';
import { importPKCS8, SignJWT } from 'jose';
import { CERT_KEY_PEM, CERT_PEM, claims, engine, expectError, makeKey, now, sign, unsignedToken, type Engine, type TestKey } from './harness';

const ISS = 'https://issuer.example';
let rsa: TestKey;
let ec: TestKey;
let ed: TestKey;
let pss: TestKey;
let other: TestKey;

beforeAll(async () => {
  [rsa, ec, ed, pss, other] = await Promise.all([makeKey('RS256'), makeKey('ES256'), makeKey('EdDSA'), makeKey('PS256'), makeKey('RS256')]);
});

async function configured(config: Record<string, unknown> = {}, role: Record<string, unknown> = {}): Promise<Engine> {
  const e = engine();
  await e.call('write', 'config', { jwt_validation_pubkeys: [rsa.pem, ec.pem, ed.pem, pss.pem, CERT_PEM], bound_issuer: ISS, ...config });
  await e.call('write', 'role/dev', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'coffer', token_policies: 'dev,ops', token_ttl: '1h', token_max_ttl: '2h', ...role });
  return e;
}

const login = (e: Engine, jwt: string, extra: Record<string, unknown> = {}, clientIP?: string) => e.call('write', 'login', { role: 'dev', jwt, ...extra }, { clientIP });
const PREFIX = 'error validating token: ';

describe('successful logins', () => {
  it('accepts RS256, ES256, EdDSA and PS256 tokens, and a key given as a certificate', async () => {
    const e = await configured();
    for (const key of [rsa, ec, ed, pss]) {
      const res = await login(e, await sign(key, claims()));
      expect(res.login?.aliasName).toBe('user-1');
    }
    const certKey = await importPKCS8(CERT_KEY_PEM, 'ES256');
    const certToken = await new SignJWT(claims()).setProtectedHeader({ alg: 'ES256' }).sign(certKey);
    expect((await login(e, certToken)).login?.aliasName).toBe('user-1');
  });

  it('returns the login: alias, metadata with the role, policies and token settings from the role', async () => {
    const e = await configured({}, {
      claim_mappings: { email: 'email' },
      token_bound_cidrs: '10.0.0.0/8',
      token_explicit_max_ttl: '3h',
      token_num_uses: 4,
      token_no_default_policy: true,
      token_type: 'service',
    });
    const res = await login(e, await sign(rsa, claims()));
    expect(res.data ?? null).toBeNull();
    expect(res.login).toEqual({
      aliasName: 'user-1',
      aliasMetadata: { email: 'alice@example.com', role: 'dev' },
      groupAliasNames: [],
      metadata: { email: 'alice@example.com', role: 'dev' },
      displayName: 'user-1',
      role: 'dev',
      policies: ['dev', 'ops'],
      noDefaultPolicy: true,
      ttl: 3600,
      maxTtl: 7200,
      explicitMaxTtl: 10800,
      period: 0,
      numUses: 4,
      boundCidrs: ['10.0.0.0/8'],
      tokenType: 'service',
    });
  });

  it('uses default_role when the login names none; role names are case-insensitive', async () => {
    const e = await configured({ default_role: 'DEV' });
    const token = await sign(rsa, claims());
    expect((await e.call('write', 'login', { jwt: token })).login?.role).toBe('dev');
    expect((await e.call('write', 'login', { role: 'Dev', jwt: token })).login?.role).toBe('dev');
  });
});

describe('the same token again', () => {
  it('checks the role and claims anew each time (only the signature check is remembered), and writes nothing of the mount', async () => {
    const e = await configured();
    const jwt = await sign(rsa, claims());
    const before = new Map(e.storage.data);
    expect((await login(e, jwt)).login?.aliasName).toBe('user-1');
    expect((await login(e, jwt)).login?.aliasName).toBe('user-1');
    // The login path runs without the mount's write serialisation: it must not write.
    expect(new Map(e.storage.data)).toEqual(before);
    await e.call('write', 'role/dev', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'someone-else' });
    await expectError(login(e, jwt), 400, `${PREFIX}invalid audience (aud) claim: audience claim does not match any expected audience`);
    // A new config (other keys) forgets what was verified.
    await e.call('write', 'config', { jwt_validation_pubkeys: [other.pem], bound_issuer: ISS });
    await e.call('write', 'role/dev', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'coffer' });
    await expectError(login(e, jwt), 400, `${PREFIX}error verifying token signature: no known key successfully validated the token signature`);
  });
});

describe('rejections before the token is looked at', () => {
  it('an unconfigured mount, a missing or unknown role, an oidc role, a missing token', async () => {
    const unconfigured = engine();
    await expectError(unconfigured.call('write', 'login', { role: 'dev', jwt: 'x' }), 400, 'could not load configuration');
    const e = await configured();
    await e.call('write', 'role/web', { user_claim: 'sub', allowed_redirect_uris: 'https://app/cb' });
    await expectError(e.call('write', 'login', { jwt: 'x' }), 400, 'missing role');
    await expectError(e.call('write', 'login', { role: 'nope', jwt: 'x' }), 400, 'role "nope" could not be found');
    await expectError(e.call('write', 'login', { role: 'web', jwt: 'x' }), 400, 'role with oidc role_type is not allowed');
    await expectError(e.call('write', 'login', { role: 'dev' }), 400, 'missing token');
    await expectError(e.call('write', 'login', { role: 'dev', jwt: '' }), 400, 'missing token');
  });

  it('token_bound_cidrs: a caller outside them gets 403, even with a valid token', async () => {
    const e = await configured({}, { token_bound_cidrs: '192.168.0.0/16,10.1.2.3' });
    const token = await sign(rsa, claims());
    await expectError(login(e, token, {}, '10.0.0.5'), 403, '1 error occurred:\n\t* permission denied\n\n');
    await expectError(login(e, token, {}, ''), 403);
    // Checked before the token: a bad token from outside is still a 403.
    await expectError(login(e, 'garbage', {}, '10.0.0.5'), 403);
    expect((await login(e, token, {}, '192.168.7.7')).login?.aliasName).toBe('user-1');
    expect((await login(e, token, {}, '10.1.2.3')).login?.aliasName).toBe('user-1');
  });
});

describe('signature and algorithm', () => {
  it('refuses alg none, HMAC signed with the public key, a foreign key, and garbage', async () => {
    const e = await configured();
    const none = unsignedToken(claims());
    await expectError(login(e, none), 400, `${PREFIX}error verifying token signature: no known key successfully validated the token signature`);
    // The classic confusion attack: HS256 keyed with the RSA public key's PEM.
    const hmac = await new SignJWT(claims()).setProtectedHeader({ alg: 'HS256' }).sign(new TextEncoder().encode(rsa.pem));
    await expectError(login(e, hmac), 400, `${PREFIX}error verifying token signature: no known key successfully validated the token signature`);
    await expectError(login(e, await sign(other, claims())), 400, `${PREFIX}error verifying token signature: no known key successfully validated the token signature`);
    // A valid signature over tampered claims.
    const [h, , s] = (await sign(rsa, claims())).split('.');
    const forged = `${h}.${btoa(JSON.stringify(claims({ sub: 'root' }))).replace(/=+$/, '').replace(/\+/g, '-').replace(/\//g, '_')}.${s}`;
    await expectError(login(e, forged), 400, `${PREFIX}error verifying token signature: no known key successfully validated the token signature`);
    const err = login(e, 'not.a.jwt!');
    await expectError(err, 400);
    await expect(login(e, 'garbage')).rejects.toMatchObject({ errors: [expect.stringMatching(/^error validating token: error verifying token signature: malformed jwt: /)] });
  });

  it('enforces jwt_supported_algs after the signature', async () => {
    const e = await configured({ jwt_supported_algs: 'ES256,EdDSA' });
    await expectError(login(e, await sign(rsa, claims())), 400, `${PREFIX}invalid algorithm (alg) header parameter: token signed with unexpected algorithm`);
    expect((await login(e, await sign(ec, claims()))).login).toBeDefined();
    expect((await login(e, await sign(ed, claims()))).login).toBeDefined();
  });
});

describe('registered claims', () => {
  it('iss must equal bound_issuer; sub must equal bound_subject', async () => {
    const e = await configured({}, { bound_subject: 'user-1' });
    await expectError(login(e, await sign(rsa, claims({ iss: 'https://evil' }))), 400, `${PREFIX}invalid issuer (iss) claim`);
    await expectError(login(e, await sign(rsa, claims({ iss: undefined }))), 400, `${PREFIX}invalid issuer (iss) claim`);
    await expectError(login(e, await sign(rsa, claims({ sub: 'user-2' }))), 400, `${PREFIX}invalid subject (sub) claim`);
    // Without bound_issuer any issuer is fine.
    const open = await configured({ bound_issuer: '' });
    expect((await login(open, await sign(rsa, claims({ iss: 'https://anyone' })))).login).toBeDefined();
  });

  it('aud must contain one of bound_audiences (string or list)', async () => {
    const e = await configured({}, { bound_audiences: 'coffer,vault' });
    const msg = `${PREFIX}invalid audience (aud) claim: audience claim does not match any expected audience`;
    await expectError(login(e, await sign(rsa, claims({ aud: 'other' }))), 400, msg);
    await expectError(login(e, await sign(rsa, claims({ aud: ['x', 'y'] }))), 400, msg);
    await expectError(login(e, await sign(rsa, claims({ aud: undefined }))), 400, msg);
    expect((await login(e, await sign(rsa, claims({ aud: ['x', 'vault'] })))).login).toBeDefined();
    expect((await login(e, await sign(rsa, claims({ aud: 'coffer' })))).login).toBeDefined();
  });

  it('CVE-2024-5798: a token with an audience cannot log in to a role bound to none', async () => {
    const e = await configured({}, { bound_audiences: '', bound_subject: 'user-1' });
    const msg = 'audience claim found in JWT but no audiences bound to the role';
    await expectError(login(e, await sign(rsa, claims({ aud: 'coffer' }))), 400, msg);
    await expectError(login(e, await sign(rsa, claims({ aud: ['a'] }))), 400, msg);
    expect((await login(e, await sign(rsa, claims({ aud: undefined })))).login).toBeDefined();
    expect((await login(e, await sign(rsa, claims({ aud: [] })))).login).toBeDefined();
  });
});

describe('time claims and leeways', () => {
  const t = now;
  it('needs one of iat, nbf, exp', async () => {
    const e = await configured();
    await expectError(login(e, await sign(rsa, claims({ iat: undefined, exp: undefined }))), 400, `${PREFIX}no issued at (iat), not before (nbf), or expiration time (exp) claims in token`);
    await expectError(login(e, await sign(rsa, claims({ exp: 'tomorrow' }))), 400, `${PREFIX}failed to unmarshal claims: "exp" is not a number`);
  });

  it('expired, not yet valid, issued in the future (default clock skew 60s)', async () => {
    const e = await configured();
    await expectError(login(e, await sign(rsa, claims({ iat: t() - 600, exp: t() - 61 }))), 400, `${PREFIX}invalid expiration time (exp) claim: token is expired`);
    expect((await login(e, await sign(rsa, claims({ iat: t() - 600, exp: t() - 50 })))).login).toBeDefined();
    await expectError(login(e, await sign(rsa, claims({ nbf: t() + 70 }))), 400, `${PREFIX}invalid not before (nbf) claim: token not yet valid`);
    expect((await login(e, await sign(rsa, claims({ nbf: t() + 50 })))).login).toBeDefined();
    await expectError(login(e, await sign(rsa, claims({ iat: t() + 70, nbf: t() - 10 }))), 400, `${PREFIX}invalid issued at (iat) claim: token issued in the future`);
    // Without nbf, a future iat stands in for it.
    await expectError(login(e, await sign(rsa, claims({ iat: t() + 70 }))), 400, `${PREFIX}invalid not before (nbf) claim: token not yet valid`);
  });

  it('clock_skew_leeway: custom value, -1 disables', async () => {
    const custom = await configured({}, { clock_skew_leeway: 300 });
    expect((await login(custom, await sign(rsa, claims({ iat: t() - 900, exp: t() - 200 })))).login).toBeDefined();
    const strict = await configured({}, { clock_skew_leeway: -1 });
    await expectError(login(strict, await sign(rsa, claims({ iat: t() - 900, exp: t() - 2 }))), 400, `${PREFIX}invalid expiration time (exp) claim: token is expired`);
    await expectError(login(strict, await sign(rsa, claims({ nbf: t() + 5 }))), 400, `${PREFIX}invalid not before (nbf) claim: token not yet valid`);
  });

  it('a missing exp is the latest of iat and nbf plus expiration_leeway (150s by default)', async () => {
    const e = await configured();
    // iat + 150 + 60 (skew) = 210s.
    expect((await login(e, await sign(rsa, claims({ exp: undefined, iat: t() - 200 })))).login).toBeDefined();
    await expectError(login(e, await sign(rsa, claims({ exp: undefined, iat: t() - 220 }))), 400, `${PREFIX}invalid expiration time (exp) claim: token is expired`);
    // The later of iat and nbf counts.
    expect((await login(e, await sign(rsa, claims({ exp: undefined, iat: t() - 1000, nbf: t() - 200 })))).login).toBeDefined();
    const longer = await configured({}, { expiration_leeway: 1000 });
    expect((await login(longer, await sign(rsa, claims({ exp: undefined, iat: t() - 1000 })))).login).toBeDefined();
    const none = await configured({}, { expiration_leeway: -1, clock_skew_leeway: -1 });
    await expectError(login(none, await sign(rsa, claims({ exp: undefined, iat: t() - 2 }))), 400, `${PREFIX}invalid expiration time (exp) claim: token is expired`);
  });

  it('a missing nbf (and iat) is exp minus not_before_leeway (150s by default)', async () => {
    const e = await configured();
    // nbf = exp - 150; valid once now + 60 >= nbf, i.e. exp <= now + 210.
    expect((await login(e, await sign(rsa, claims({ iat: undefined, exp: t() + 200 })))).login).toBeDefined();
    await expectError(login(e, await sign(rsa, claims({ iat: undefined, exp: t() + 230 }))), 400, `${PREFIX}invalid not before (nbf) claim: token not yet valid`);
    const wide = await configured({}, { not_before_leeway: 3600 });
    expect((await login(wide, await sign(rsa, claims({ iat: undefined, exp: t() + 3000 })))).login).toBeDefined();
    const disabled = await configured({}, { not_before_leeway: -1, clock_skew_leeway: -1 });
    await expectError(login(disabled, await sign(rsa, claims({ iat: undefined, exp: t() + 5 }))), 400, `${PREFIX}invalid not before (nbf) claim: token not yet valid`);
  });
});
