// Remote keys: a JWKS URL, JWKS pairs and OIDC discovery, served by the JWKS server. Documents
// are fetched at config write, cached per config version, refetched when no cached key verifies
// a token (a new kid, a rotated key), and dropped when the config is written again.
import { describe, expect, it } from 'vitest';
import { discoveryURL, hits, jwksURL, putDiscovery, putJwks, removeDoc } from '../../../helpers/jwks-server';
import { claims, engine, expectError, makeKey, sign, type Engine } from './harness';

async function withJwks(config: Record<string, unknown>, role: Record<string, unknown> = {}): Promise<Engine> {
  const e = engine();
  await e.call('write', 'config', config);
  await e.call('write', 'role/r', { role_type: 'jwt', user_claim: 'sub', bound_audiences: 'coffer', ...role });
  return e;
}

const login = (e: Engine, jwt: string) => e.call('write', 'login', { role: 'r', jwt });
const SIG = 'error validating token: error verifying token signature: ';

describe('jwks_url', () => {
  it('verifies with the fetched set and keeps it: logins do not refetch', async () => {
    const [a, b] = await Promise.all([makeKey('RS256'), makeKey('EdDSA')]);
    await putJwks('cache', { keys: [a.jwk, b.jwk] });
    const e = await withJwks({ jwks_url: jwksURL('cache') });
    expect(await hits('jwks', 'cache')).toBe(1); // the write's check
    for (let i = 0; i < 3; i++) {
      expect((await login(e, await sign(a, claims()))).login?.aliasName).toBe('user-1');
      expect((await login(e, await sign(b, claims()))).login?.aliasName).toBe('user-1');
    }
    expect(await hits('jwks', 'cache')).toBe(1);
  });

  it('refetches once when a token names an unknown kid, and picks up the new key', async () => {
    const [old, rotated] = await Promise.all([makeKey('ES256'), makeKey('ES256')]);
    await putJwks('rotate', { keys: [old.jwk] });
    const e = await withJwks({ jwks_url: jwksURL('rotate') });
    expect((await login(e, await sign(old, claims()))).login).toBeDefined();
    expect(await hits('jwks', 'rotate')).toBe(1);

    await putJwks('rotate', { keys: [old.jwk, rotated.jwk] });
    expect((await login(e, await sign(rotated, claims()))).login).toBeDefined();
    expect(await hits('jwks', 'rotate')).toBe(2);
    expect((await login(e, await sign(rotated, claims()))).login).toBeDefined();
    expect(await hits('jwks', 'rotate')).toBe(2);

    // A kid nobody publishes: one refetch per attempt, then the signature error.
    const stranger = await makeKey('ES256');
    await expectError(login(e, await sign(stranger, claims())), 400, `${SIG}failed to verify id token signature`);
    expect(await hits('jwks', 'rotate')).toBe(3);
  });

  it('refetches when the cached key under a kid no longer verifies (key replaced under the same kid)', async () => {
    const first = await makeKey('RS256', 'same-kid');
    const second = await makeKey('RS256', 'same-kid');
    await putJwks('replace', { keys: [first.jwk] });
    const e = await withJwks({ jwks_url: jwksURL('replace') });
    await putJwks('replace', { keys: [second.jwk] });
    expect((await login(e, await sign(second, claims()))).login).toBeDefined();
    expect(await hits('jwks', 'replace')).toBe(2);
    await expectError(login(e, await sign(first, claims())), 400, `${SIG}failed to verify id token signature`);
  });

  it('writing the config drops the cache', async () => {
    const [a, b] = await Promise.all([makeKey('RS256', 'k1'), makeKey('RS256', 'k1')]);
    await putJwks('rewrite', { keys: [a.jwk] });
    const e = await withJwks({ jwks_url: jwksURL('rewrite') });
    expect((await login(e, await sign(a, claims()))).login).toBeDefined();
    await putJwks('rewrite', { keys: [b.jwk] });
    await e.call('write', 'config', { jwks_url: jwksURL('rewrite') });
    expect(await hits('jwks', 'rewrite')).toBe(2);
    // The new version's set is the one the write fetched: no further fetch.
    expect((await login(e, await sign(b, claims()))).login).toBeDefined();
    expect(await hits('jwks', 'rewrite')).toBe(2);
  });

  it('a JWKS that disappears: the refetch error is reported', async () => {
    const a = await makeKey('RS256');
    await putJwks('vanish', { keys: [a.jwk] });
    const e = await withJwks({ jwks_url: jwksURL('vanish') });
    await removeDoc('jwks', 'vanish');
    const stranger = await makeKey('RS256');
    await expect(login(e, await sign(stranger, claims()))).rejects.toMatchObject({
      status: 400,
      errors: [expect.stringMatching(/^error validating token: error verifying token signature: fetching keys oidc: get keys failed: 404/)],
    });
    // Keys already cached keep working.
    expect((await login(e, await sign(a, claims()))).login).toBeDefined();
  });

  it('refuses alg none and HMAC tokens (HS256 keyed with the JWK) without fetching', async () => {
    const a = await makeKey('RS256');
    await putJwks('hmac', { keys: [a.jwk] });
    const e = await withJwks({ jwks_url: jwksURL('hmac') });
    const { SignJWT } = await import('jose');
    const hs = await new SignJWT(claims()).setProtectedHeader({ alg: 'HS256', kid: a.kid }).sign(new TextEncoder().encode(JSON.stringify(a.jwk)));
    await expectError(login(e, hs), 400, `${SIG}failed to verify id token signature`);
    expect(await hits('jwks', 'hmac')).toBe(1);
  });
});

describe('jwks_pairs', () => {
  it('verifies against any of several JWKS URLs', async () => {
    const [a, b] = await Promise.all([makeKey('ES256'), makeKey('PS256')]);
    await putJwks('pairs-a', { keys: [a.jwk] });
    await putJwks('pairs-b', { keys: [b.jwk] });
    const e = await withJwks({ jwks_pairs: [{ jwks_url: jwksURL('pairs-a') }, { jwks_url: jwksURL('pairs-b') }] });
    expect((await login(e, await sign(a, claims()))).login).toBeDefined();
    expect((await login(e, await sign(b, claims()))).login).toBeDefined();
    expect([await hits('jwks', 'pairs-a'), await hits('jwks', 'pairs-b')]).toEqual([1, 1]);
  });
});

describe('oidc_discovery_url', () => {
  it('uses the discovery document jwks_uri; the document and keys are fetched once', async () => {
    const a = await makeKey('RS256');
    await putJwks('disc-login-keys', { keys: [a.jwk] });
    await putDiscovery('disc-login', { jwks_uri: jwksURL('disc-login-keys') });
    const e = await withJwks({ oidc_discovery_url: discoveryURL('disc-login'), bound_issuer: discoveryURL('disc-login') });
    const token = await sign(a, claims({ iss: discoveryURL('disc-login') }));
    expect((await login(e, token)).login?.aliasName).toBe('user-1');
    expect((await login(e, token)).login?.aliasName).toBe('user-1');
    expect(await hits('discovery', 'disc-login')).toBe(1);
    expect(await hits('jwks', 'disc-login-keys')).toBe(1);
    await expectError(login(e, await sign(a, claims({ iss: 'https://other' }))), 400, 'error validating token: invalid issuer (iss) claim');
  });

  it('a discovery config with a client (OIDC flow) still serves JWT logins of jwt roles', async () => {
    const a = await makeKey('ES256');
    await putJwks('disc-flow-keys', { keys: [a.jwk] });
    await putDiscovery('disc-flow', { jwks_uri: jwksURL('disc-flow-keys') });
    const e = await withJwks({ oidc_discovery_url: discoveryURL('disc-flow'), oidc_client_id: 'coffer', oidc_client_secret: 'x' });
    expect((await login(e, await sign(a, claims()))).login).toBeDefined();
  });
});
