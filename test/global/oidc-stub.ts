// A scriptable OpenID provider for the engine-level OIDC tests, started in Node before the
// workerd tests (a server inside workerd is unreachable). Each provider name is its own issuer,
// `http://127.0.0.1:<port>/<name>`, with a discovery document, a JWKS, a token endpoint and a
// userinfo endpoint. Tests script the next answers with PUT /<name>/script (JSON, see Script)
// and read back what the token endpoint received with GET /<name>/requests. The token endpoint
// signs ID tokens with the stub's RS256 key (or a key nobody published, or ES256, as scripted).
import http from 'node:http';
import type net from 'node:net';
import type { TestProject } from 'vitest/node';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey } from 'jose';

declare module 'vitest' {
  export interface ProvidedContext {
    oidcStubPort: number;
  }
}

/** What a provider does next (every field optional; defaults make a well-behaved provider). */
export interface Script {
  /** Claims of the next ID tokens; iss, aud (the client id), iat and exp are filled in unless given. */
  claims?: Record<string, unknown>;
  /** Which key signs: the published RS256 key, an unpublished one, or an ES256 key (published). */
  signer?: 'good' | 'rogue' | 'es256';
  /** A token endpoint failure instead of tokens. */
  tokenError?: { status: number; body: Record<string, unknown> };
  /** Leave id_token out of the token response. */
  omitIdToken?: boolean;
  /** The userinfo answer (default: 200 with { sub } from the ID token claims). */
  userinfo?: { status: number; body: unknown };
  /** token_endpoint_auth_methods_supported in discovery (default: basic and post). */
  authMethods?: string[];
  /** Client credentials the token endpoint accepts (default: any). */
  client?: { id: string; secret: string; method: 'client_secret_basic' | 'client_secret_post' };
  /** Serve no discovery document (404). */
  noDiscovery?: boolean;
}

export interface TokenRequest {
  authorization: string;
  form: Record<string, string>;
}

interface Provider {
  script: Script;
  requests: TokenRequest[];
  userinfoCalls: number;
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const good = await generateKeyPair('RS256');
  const rogue = await generateKeyPair('RS256');
  const es = await generateKeyPair('ES256');
  const jwks = { keys: [{ ...(await exportJWK(good.publicKey)), kid: 'good', alg: 'RS256', use: 'sig' }, { ...(await exportJWK(es.publicKey)), kid: 'es', alg: 'ES256', use: 'sig' }] };
  const providers = new Map<string, Provider>();
  const provider = (name: string) => {
    let p = providers.get(name);
    if (!p) providers.set(name, (p = { script: {}, requests: [], userinfoCalls: 0 }));
    return p;
  };
  let base = '';

  const sign = async (claims: Record<string, unknown>, signer: Script['signer']): Promise<string> => {
    const [key, alg, kid]: [CryptoKey, string, string] = signer === 'rogue' ? [rogue.privateKey, 'RS256', 'good'] : signer === 'es256' ? [es.privateKey, 'ES256', 'es'] : [good.privateKey, 'RS256', 'good'];
    return new SignJWT(claims).setProtectedHeader({ alg, kid }).sign(key);
  };

  const srv = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stub');
    const [, name = '', ...rest] = url.pathname.split('/');
    const route = `${req.method} /${rest.join('/')}`;
    const p = provider(name);
    const issuer = `${base}/${name}`;
    const json = (status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', async () => {
      try {
        switch (route) {
          case 'PUT /script':
            p.script = JSON.parse(raw) as Script;
            p.requests = [];
            p.userinfoCalls = 0;
            return json(200, {});
          case 'GET /requests':
            return json(200, { requests: p.requests, userinfoCalls: p.userinfoCalls });
          case 'GET /.well-known/openid-configuration':
            if (p.script.noDiscovery) return json(404, { error: 'not found' });
            return json(200, {
              issuer,
              authorization_endpoint: `${issuer}/authorize`,
              token_endpoint: `${issuer}/token`,
              userinfo_endpoint: `${issuer}/userinfo`,
              jwks_uri: `${issuer}/jwks`,
              response_types_supported: ['code', 'id_token'],
              subject_types_supported: ['public'],
              id_token_signing_alg_values_supported: ['RS256', 'ES256'],
              token_endpoint_auth_methods_supported: p.script.authMethods ?? ['client_secret_basic', 'client_secret_post'],
            });
          case 'GET /jwks':
            return json(200, jwks);
          case 'POST /token': {
            const form = Object.fromEntries(new URLSearchParams(raw));
            const authorization = req.headers.authorization ?? '';
            p.requests.push({ authorization, form });
            const c = p.script.client;
            if (c) {
              const basic = `Basic ${Buffer.from(`${encodeURIComponent(c.id)}:${encodeURIComponent(c.secret)}`).toString('base64')}`;
              const ok = c.method === 'client_secret_basic' ? authorization === basic : form.client_id === c.id && form.client_secret === c.secret;
              if (!ok) return json(401, { error: 'invalid_client', error_description: 'client authentication failed' });
            }
            if (p.script.tokenError) return json(p.script.tokenError.status, p.script.tokenError.body);
            const clientId = form.client_id ?? decodeURIComponent(Buffer.from(authorization.replace(/^Basic /, ''), 'base64').toString().split(':')[0]);
            const now = Math.floor(Date.now() / 1000);
            const claims = { iss: issuer, aud: clientId, iat: now, exp: now + 300, ...p.script.claims };
            const body: Record<string, unknown> = { access_token: `at-${name}`, token_type: 'Bearer', expires_in: 300 };
            if (!p.script.omitIdToken) body.id_token = await sign(claims, p.script.signer);
            return json(200, body);
          }
          case 'GET /userinfo': {
            p.userinfoCalls++;
            if (req.headers.authorization !== `Bearer at-${name}`) return json(401, { error: 'invalid_token' });
            const u = p.script.userinfo ?? { status: 200, body: { sub: p.script.claims?.sub } };
            return json(u.status, u.body);
          }
          case 'POST /sign': {
            // Signs claims for tests that need an ID token without a code exchange (id_token flow).
            const { claims, signer } = JSON.parse(raw) as { claims: Record<string, unknown>; signer?: Script['signer'] };
            return json(200, { token: await sign({ iss: issuer, ...claims }, signer) });
          }
          default:
            return json(404, { error: `no route ${route}` });
        }
      } catch (e) {
        json(500, { error: String(e) });
      }
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  project.provide('oidcStubPort', port);
  return () => new Promise<void>((resolve) => srv.close(() => resolve()));
}
