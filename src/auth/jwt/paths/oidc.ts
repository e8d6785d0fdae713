// The OIDC authorization-code flow (reference §2.4): POST oidc/auth_url starts a login and
// answers the provider URL to send the user to; GET oidc/callback finishes it (code exchanged at
// the token endpoint with the client secret and the PKCE verifier, or the ID token a form_post
// delivered), then the role's checks and the login as for a JWT. POST oidc/callback receives a
// form_post from the provider and hands the state back to the UI window through an HTML page.

import { allowedByCIDRs } from '../../../core/tokens/cidr';
import type { LogicalRequest, LogicalResponse, PathDef } from '../../../framework/backend';
import { badRequest, CofferError, permissionDenied } from '../../../framework/errors';
import type { FieldData, FieldSchemas } from '../../../framework/fields';
import type { Claims } from '../claims';
import { authType, hasResponseType, loadConfig, type JwtConfig } from '../config';
import { discoveryDocument } from '../keysource';
import { loginFromClaims } from './login';
import type { ProviderApis } from '../providers';
import { exchangeCode, fetchUserInfo, type TokenSet } from '../oidc-exchange';
import { errorPage, formPostPage, htmlResponse } from '../oidc-html';
import { verifyIdToken } from '../oidc-idtoken';
import { bareState, formPostRedirect, mountFromRedirect, redirectAllowed, splitNamespace, stateWithNamespace } from '../oidc-redirect';
import {
  codeChallenge,
  findPending,
  newCodeVerifier,
  newNonce,
  newState,
  OIDC_REQUEST_TTL_MS,
  savePending,
  sweepExpired,
  takePending,
  type PendingRequest,
} from '../oidc-state';
import { loadRole, type JwtRole } from './roles';
import { TokenValidationError } from '../validate';

// Prefixes the Vault UI looks for in error messages.
const LOGIN_FAILED = 'Vault login failed.';
const TOKEN_VERIFICATION = 'Token verification failed.';
/** The code a UI sends after a form_post: use the code or token stored with the state. */
const NO_CODE = 'no_code';

const authUrlFields: FieldSchemas = {
  role: { type: 'lowercase-string', description: 'The role to issue an OIDC authorization URL against.' },
  redirect_uri: { type: 'string', description: 'The OAuth redirect_uri to use in the authorization URL.' },
  client_nonce: { type: 'string', description: 'Optional client-provided nonce that must match during callback, if present.' },
};

const callbackFields: FieldSchemas = {
  state: { type: 'string', description: 'The state parameter returned by the provider.' },
  code: { type: 'string', description: "The authorization code, or 'no_code' after a form_post." },
  id_token: { type: 'string', description: 'The ID token (form_post with the id_token response type).' },
  client_nonce: { type: 'string', description: 'The client_nonce given to auth_url, if any.' },
  error_description: { type: 'string', description: 'An error the provider reported instead of a code.' },
};

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e));

// ---- auth_url ----

async function authUrl(req: LogicalRequest, f: FieldData): Promise<LogicalResponse> {
  // Unauthenticated callers learn little: most refusals are an empty auth_url.
  const refused: LogicalResponse = { data: { auth_url: '' } };
  const config = await loadConfig(req.storage);
  if (!config) throw badRequest('could not load configuration');
  if (authType(config) !== 'oidc-flow') throw badRequest('OIDC login is not configured for this mount');
  const roleName = f.get<string>('role') || config.defaultRole;
  if (roleName === '') throw badRequest('missing role');
  let redirectUri = f.get<string>('redirect_uri');
  if (redirectUri === '') throw badRequest('missing redirect_uri');
  const role = await loadRole(req.storage, roleName);
  if (!role) throw badRequest(`role ${JSON.stringify(roleName)} could not be found`);

  let namespace = '';
  if (config.namespaceInState) ({ redirectUri, namespace } = splitNamespace(redirectUri));
  if (!redirectAllowed(redirectUri, role.allowedRedirectUris)) {
    console.warn(`${req.mountPoint}: unauthorized redirect_uri ${JSON.stringify(redirectUri)}`);
    return refused;
  }
  if (config.oidcResponseMode === 'form_post') redirectUri = formPostRedirect(redirectUri);

  let authorizationEndpoint: string | undefined;
  try {
    authorizationEndpoint = (await discoveryDocument(config)).authorization_endpoint;
  } catch (e) {
    console.warn(`${req.mountPoint}: error getting provider for login operation: ${message(e)}`);
    return refused;
  }
  if (!authorizationEndpoint) return refused;

  await sweepExpired(req.storage);
  const pending = startRequest(config, role, roleName, redirectUri, f.get<string>('client_nonce'));
  await savePending(req.storage, pending, true);
  return { data: { auth_url: await buildAuthUrl(authorizationEndpoint, config, role, pending, namespace) } };
}

function startRequest(config: JwtConfig, role: JwtRole, roleName: string, redirectUri: string, clientNonce: string): PendingRequest {
  const now = Date.now();
  // With the id_token response type the provider returns the token itself (no code, no PKCE).
  const implicit = hasResponseType(config, 'id_token');
  return {
    state: newState(),
    nonce: newNonce(),
    ...(implicit ? {} : { codeVerifier: newCodeVerifier() }),
    role: roleName,
    redirectUri,
    clientNonce,
    maxAge: role.maxAge,
    audiences: [...role.boundAudiences],
    createdAt: now,
    expiresAt: now + OIDC_REQUEST_TTL_MS,
  };
}

async function buildAuthUrl(endpoint: string, config: JwtConfig, role: JwtRole, p: PendingRequest, namespace: string): Promise<string> {
  const scopes = ['openid', ...role.oidcScopes.filter((s) => s !== 'openid')];
  const params: Record<string, string> = {
    client_id: config.oidcClientId,
    redirect_uri: p.redirectUri,
    response_type: p.codeVerifier ? 'code' : 'id_token',
    scope: scopes.join(' '),
    state: stateWithNamespace(p.state, namespace),
    nonce: p.nonce,
  };
  if (p.codeVerifier) {
    params.code_challenge = await codeChallenge(p.codeVerifier);
    params.code_challenge_method = 'S256';
  }
  if (config.oidcResponseMode === 'form_post' || !p.codeVerifier) params.response_mode = 'form_post';
  if (p.maxAge > 0) params.max_age = String(p.maxAge);
  const url = new URL(endpoint);
  // Sorted, as Go's url.Values encodes them.
  for (const key of Object.keys(params).sort()) url.searchParams.set(key, params[key]);
  return url.toString();
}

// ---- callback (GET) ----

/** A refusal that must not roll back the request's writes (the consumed state). */
function answered(e: CofferError): LogicalResponse {
  return { raw: { status: e.status, body: { errors: e.errors } } };
}

async function callback(req: LogicalRequest, f: FieldData, apis: ProviderApis): Promise<LogicalResponse> {
  const config = await loadConfig(req.storage);
  if (!config) throw badRequest(`${LOGIN_FAILED} Could not load configuration`);
  // The state is spent whatever happens next (and an expired one is deleted when found): refusals
  // are answered, not thrown, so the deletion is kept.
  const pending = await takePending(req.storage, bareState(f.get<string>('state')));
  if (!pending) return answered(badRequest(`${LOGIN_FAILED} Expired or missing OAuth state.`));
  try {
    return await finishLogin(req, f, config, pending, apis);
  } catch (e) {
    if (e instanceof CofferError) return answered(e);
    throw e;
  }
}

async function finishLogin(req: LogicalRequest, f: FieldData, config: JwtConfig, pending: PendingRequest, apis: ProviderApis): Promise<LogicalResponse> {
  const role = await loadRole(req.storage, pending.role);
  if (!role) throw badRequest(`${LOGIN_FAILED} Role could not be found`);
  const providerError = f.get<string>('error_description');
  if (providerError !== '') throw badRequest(`${LOGIN_FAILED} ${providerError}`);
  if (pending.clientNonce !== '' && f.get<string>('client_nonce') !== pending.clientNonce) throw badRequest('invalid client_nonce');
  if (role.token.boundCidrs.length > 0 && !allowedByCIDRs(role.token.boundCidrs, req.clientIP)) throw permissionDenied();

  let provider;
  try {
    provider = await discoveryDocument(config);
  } catch (e) {
    throw new CofferError(500, [`error getting provider for login operation: ${message(e)}`]);
  }
  let code = f.get<string>('code');
  if (code === NO_CODE) code = pending.code ?? '';

  let claims: Claims;
  let idToken: string;
  let tokens: TokenSet | null = null;
  if (code === '') {
    if (!pending.idToken) throw badRequest(`${LOGIN_FAILED} No code or id_token received.`);
    idToken = pending.idToken;
    try {
      claims = await verifyIdToken(idToken, { config, pending, issuer: provider.issuer });
    } catch (e) {
      if (e instanceof TokenValidationError) throw badRequest(`${TOKEN_VERIFICATION} ${e.message}`);
      throw e;
    }
  } else {
    try {
      tokens = await exchangeCode(provider, { id: config.oidcClientId, secret: config.oidcClientSecret }, code, pending.redirectUri, pending.codeVerifier);
      idToken = tokens.idToken;
      claims = await verifyIdToken(idToken, { config, pending, issuer: provider.issuer, accessToken: tokens.accessToken, code });
    } catch (e) {
      if (e instanceof CofferError) throw e;
      const detail = e instanceof TokenValidationError ? `id_token failed verification: ${e.message}` : message(e);
      throw badRequest(`${LOGIN_FAILED} Error exchanging oidc code: ${JSON.stringify(detail)}.`);
    }
  }
  if (role.verboseOidcLogging) {
    // The signature is left out: the logged token cannot be replayed.
    const [header, payload] = idToken.split('.');
    console.debug(`${req.mountPoint}: OIDC provider response id_token=${header}.${payload}.xxxxxxxxxxx`);
  }
  // The nonce did its job; it is no claim about the user.
  delete claims.nonce;
  const subject = typeof claims.sub === 'string' ? claims.sub : '';
  if (role.boundSubject !== '' && role.boundSubject !== subject) throw badRequest(`${LOGIN_FAILED} sub claim does not match bound subject`);

  if (tokens?.accessToken) {
    try {
      Object.assign(claims, await fetchUserInfo(provider, tokens.accessToken, subject));
    } catch (e) {
      // Userinfo only adds claims: a failure does not fail the login.
      console.warn(`${req.mountPoint}: error reading /userinfo endpoint: ${message(e)}`);
    }
  }
  if (role.verboseOidcLogging) console.debug(`${req.mountPoint}: OIDC provider response claims=${JSON.stringify(claims)}`);

  try {
    return { login: await loginFromClaims(config, role, claims, pending.role, { ...apis, accessToken: tokens?.accessToken || null }) };
  } catch (e) {
    if (e instanceof CofferError && e.status === 400) throw badRequest(`${LOGIN_FAILED} ${e.errors.join('; ')}`);
    throw e;
  }
}

// ---- callback (POST, form_post) ----

async function formPostCallback(req: LogicalRequest, f: FieldData): Promise<LogicalResponse> {
  const config = await loadConfig(req.storage);
  if (!config) throw badRequest(`${LOGIN_FAILED} Could not load configuration.`);
  if (config.oidcResponseMode !== 'form_post') return { raw: { status: 405 } };
  const state = bareState(f.get<string>('state'));
  const pending = await findPending(req.storage, state);
  if (!pending) return htmlResponse(400, errorPage(LOGIN_FAILED, 'Expired or missing OAuth state.'));
  // Kept with the state for the GET callback (code=no_code) the UI makes next.
  pending.code = f.get<string>('code');
  pending.idToken = f.get<string>('id_token');
  await savePending(req.storage, pending, false);
  const mount = mountFromRedirect(pending.redirectUri);
  if (mount === '') return htmlResponse(400, errorPage(LOGIN_FAILED, 'Invalid redirect path.'));
  return htmlResponse(200, formPostPage(mount, state));
}

/** `apis`: where providers find the APIs they read groups from. */
export function oidcPaths(apis: ProviderApis): PathDef[] {
  return [
    {
      pattern: 'oidc/auth_url',
      fields: authUrlFields,
      summary: 'Request an authorization URL to start an OIDC login flow.',
      operations: { update: authUrl },
    },
    {
      pattern: 'oidc/callback',
      fields: callbackFields,
      summary: 'Callback endpoint to complete an OIDC login (GET), or to receive a form_post (POST).',
      operations: { read: (req, f) => callback(req, f, apis), update: formPostCallback },
    },
  ];
}
