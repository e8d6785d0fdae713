// A real OpenID Connect provider for the OIDC e2e tests: `oidc-provider` in Node, as a vitest
// globalSetup. It has two confidential clients (one authenticating at the token endpoint with
// client_secret_basic, one with client_secret_post), PKCE required, both response types Coffer
// asks for (code; id_token with response_mode=form_post), test users with a password, email and
// groups, and minimal login and consent pages of our own (the library's dev interactions accept
// any password) for the browser stand-in (oidc-browser.ts) to fill in over HTTP.
//
// The clients are "native" with http://127.0.0.1 redirect URIs: the provider then ignores the
// port (RFC 8252), so the launcher may listen anywhere while the IdP starts first.
import http from 'node:http';
import type net from 'node:net';
import type { TestProject } from 'vitest/node';
import { exportJWK, generateKeyPair } from 'jose';
// @ts-expect-error -- oidc-provider ships no type declarations
import OidcProvider from 'oidc-provider';

export const CLIENT_BASIC = { id: 'coffer', secret: 'coffer-client-secret-basic-0123456789' };
export const CLIENT_POST = { id: 'coffer-post', secret: 'coffer-client-secret-post-0123456789' };

/** Mount paths whose callbacks the clients may redirect to (any loopback port). */
export const CALLBACK_MOUNTS = ['oidc', 'oidc-fp', 'oidc-idt', 'oidc-post', 'oidc-bad', 'hvac-oidc', 'node-vault-oidc'];
export const callbackPath = (mount: string): string => `/v1/auth/${mount}/oidc/callback`;

export interface TestUser {
  password: string;
  claims: Record<string, unknown>;
}

/** Claims come back by scope: `email` and `groups` only from userinfo in the code flow. */
export const USERS: Record<string, TestUser> = {
  alice: {
    password: 'alice-pw',
    claims: { sub: 'alice', email: 'alice@example.com', email_verified: true, name: 'Alice Example', groups: ['engineering', 'admins'] },
  },
  bob: {
    password: 'bob-pw',
    claims: { sub: 'bob', email: 'bob@example.com', email_verified: true, name: 'Bob Example', groups: ['guests'] },
  },
};

/** The slice of oidc-provider's API used here (the package has no types). */
interface InteractionDetails {
  prompt: { name: string; details: { missingOIDCScope?: string[]; missingOIDCClaims?: string[] } };
  params: { client_id: string; scope?: string };
  session?: { accountId: string };
}
interface Grant {
  addOIDCScope(scope: string): void;
  addOIDCClaims(claims: string[]): void;
  save(): Promise<string>;
}
interface ProviderInstance {
  callback(): http.RequestListener;
  interactionDetails(req: http.IncomingMessage, res: http.ServerResponse): Promise<InteractionDetails>;
  interactionFinished(req: http.IncomingMessage, res: http.ServerResponse, result: Record<string, unknown>, opts: { mergeWithLastSubmission: boolean }): Promise<void>;
  Grant: new (init: { accountId?: string; clientId: string }) => Grant;
}
type ProviderCtor = new (issuer: string, config: Record<string, unknown>) => ProviderInstance;

export interface IdP {
  issuer: string;
  close(): Promise<void>;
}

export async function startIdP(): Promise<IdP> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const signingKey = { ...(await exportJWK(privateKey)), kid: 'idp-rs256', alg: 'RS256', use: 'sig' };

  const redirectUris = CALLBACK_MOUNTS.map((m) => `http://127.0.0.1${callbackPath(m)}`);
  const client = (c: { id: string; secret: string }, method: string) => ({
    client_id: c.id,
    client_secret: c.secret,
    application_type: 'native',
    redirect_uris: redirectUris,
    response_types: ['code', 'id_token'],
    grant_types: ['authorization_code', 'implicit'],
    token_endpoint_auth_method: method,
  });

  const Provider = OidcProvider as ProviderCtor;
  const provider = new Provider(issuer, {
    clients: [client(CLIENT_BASIC, 'client_secret_basic'), client(CLIENT_POST, 'client_secret_post')],
    jwks: { keys: [signingKey] },
    cookies: { keys: ['coffer-e2e-idp-cookie-key'] },
    pkce: { required: () => true },
    ttl: { AuthorizationCode: 60, AccessToken: 3600, IdToken: 3600, Interaction: 600, Session: 3600, Grant: 3600 },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    scopes: ['openid', 'email', 'profile', 'groups', 'offline_access'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    findAccount: async (_ctx: unknown, id: string) => {
      const user = USERS[id];
      if (!user) return undefined;
      return { accountId: id, claims: async () => user.claims };
    },
  });
  const handler = provider.callback();
  server.on('request', (req, res) => {
    if (!/^\/interaction\/[\w-]+$/.test(req.url ?? '')) return handler(req, res);
    interact(provider, req, res).catch((e: unknown) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(String(e));
    });
  });

  return {
    issuer,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

async function readForm(req: http.IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString());
}

/**
 * The login and consent pages (our own, so the password is checked): GET renders the form of the
 * pending prompt, POST completes it and the provider redirects back to its authorization endpoint.
 */
async function interact(provider: ProviderInstance, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const details = await provider.interactionDetails(req, res);
  const action = escapeHtml(req.url ?? '');
  if (req.method === 'GET') {
    const form =
      details.prompt.name === 'login'
        ? `<input type="hidden" name="prompt" value="login"><input name="login"><input type="password" name="password">`
        : `<input type="hidden" name="prompt" value="consent"><p>${escapeHtml(details.params.scope ?? '')}</p>`;
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<!DOCTYPE html><form method="post" action="${action}">${form}<button>Continue</button></form>`);
    return;
  }
  const form = await readForm(req);
  if (form.get('prompt') !== details.prompt.name) {
    res.writeHead(400, { 'content-type': 'text/plain' }).end(`expected the ${details.prompt.name} prompt`);
    return;
  }
  if (details.prompt.name === 'login') {
    const login = form.get('login') ?? '';
    if (USERS[login]?.password !== form.get('password')) {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('invalid login or password');
      return;
    }
    await provider.interactionFinished(req, res, { login: { accountId: login } }, { mergeWithLastSubmission: false });
    return;
  }
  // Consent: grant what the prompt says is missing.
  const grant = new provider.Grant({ accountId: details.session?.accountId, clientId: details.params.client_id });
  const missing = details.prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  const grantId = await grant.save();
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
}

declare module 'vitest' {
  export interface ProvidedContext {
    oidcIssuer: string;
  }
}

/** vitest globalSetup: one IdP for the e2e run; tests find it with inject('oidcIssuer'). */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const idp = await startIdP();
  project.provide('oidcIssuer', idp.issuer);
  return () => idp.close();
}
