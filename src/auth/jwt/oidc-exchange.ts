// The OIDC client's calls to the provider after the user came back: the authorization code
// exchanged at the token endpoint (client secret + PKCE verifier) and the userinfo request.
// Errors read like the Go oauth2/cap errors Vault wraps in its messages.

import type { DiscoveryDocument } from './keysource';

/** The parts of a discovery document the code flow uses. */
export type ProviderEndpoints = Pick<DiscoveryDocument, 'issuer' | 'token_endpoint' | 'userinfo_endpoint' | 'raw'>;

export interface ClientCredentials {
  id: string;
  secret: string;
}

export interface TokenSet {
  idToken: string;
  accessToken: string;
}

/** application/x-www-form-urlencoded, as RFC 6749 §2.3.1 asks for the Basic credentials. */
const formEncode = (s: string): string => new URLSearchParams({ v: s }).toString().slice(2);

function basicAuth(c: ClientCredentials): string {
  const raw = `${formEncode(c.id)}:${formEncode(c.secret)}`;
  return `Basic ${btoa(raw)}`;
}

/** client_secret_basic first (the RFC 8414 default), then client_secret_post, as supported. */
function authMethods(p: ProviderEndpoints): ('client_secret_basic' | 'client_secret_post')[] {
  const listed = p.raw.token_endpoint_auth_methods_supported;
  const supported = Array.isArray(listed) ? listed : ['client_secret_basic'];
  const out: ('client_secret_basic' | 'client_secret_post')[] = [];
  if (supported.includes('client_secret_basic')) out.push('client_secret_basic');
  if (supported.includes('client_secret_post')) out.push('client_secret_post');
  return out.length > 0 ? out : ['client_secret_basic'];
}

/** The provider gets as long as keysource.ts gives it for discovery and keys. */
const TIMEOUT_MS = 10_000;

interface OAuthError {
  status: number;
  error: string;
  description: string;
  body: string;
}

function describeOAuthError(e: OAuthError): string {
  if (e.error) return `oauth2: ${JSON.stringify(e.error)} ${JSON.stringify(e.description)}`;
  return `oauth2: cannot fetch token: ${e.status}\nResponse: ${e.body}`;
}

async function postToken(url: string, form: Record<string, string>, headers: Record<string, string>): Promise<{ ok: true; body: Record<string, unknown> } | { ok: false; err: OAuthError }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json', ...headers },
    body: new URLSearchParams(form).toString(),
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const text = await res.text();
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) body = parsed as Record<string, unknown>;
  } catch {
    // Not JSON: reported with the raw body below.
  }
  if (res.ok) return { ok: true, body };
  const str = (v: unknown) => (typeof v === 'string' ? v : '');
  return { ok: false, err: { status: res.status, error: str(body.error), description: str(body.error_description), body: text } };
}

/**
 * Exchanges `code` for tokens. Throws an Error whose message says what failed; the caller wraps
 * it in Vault's "Error exchanging oidc code" message.
 */
export async function exchangeCode(p: ProviderEndpoints, client: ClientCredentials, code: string, redirectUri: string, codeVerifier?: string): Promise<TokenSet> {
  if (!p.token_endpoint) throw new Error('the provider has no token endpoint');
  const form: Record<string, string> = { grant_type: 'authorization_code', code, redirect_uri: redirectUri };
  if (codeVerifier) form.code_verifier = codeVerifier;
  let result: Awaited<ReturnType<typeof postToken>> | null = null;
  // Like oauth2's auto-detection: a client the provider refuses in one style is tried in the other.
  for (const method of authMethods(p)) {
    result =
      method === 'client_secret_basic'
        ? await postToken(p.token_endpoint, form, { authorization: basicAuth(client) })
        : await postToken(p.token_endpoint, { ...form, client_id: client.id, client_secret: client.secret }, {});
    if (result.ok || result.err.error !== 'invalid_client') break;
  }
  if (!result) throw new Error('no token endpoint authentication method');
  if (!result.ok) throw new Error(`unable to exchange auth code with provider: ${describeOAuthError(result.err)}`);
  const idToken = result.body.id_token;
  if (typeof idToken !== 'string' || idToken === '') throw new Error('id_token is missing from auth code exchange');
  const accessToken = typeof result.body.access_token === 'string' ? result.body.access_token : '';
  return { idToken, accessToken };
}

/**
 * The userinfo claims for `subject` (JSON answers only, as Vault's client). Throws on failure;
 * the caller only logs it (a login does not depend on userinfo).
 */
export async function fetchUserInfo(p: ProviderEndpoints, accessToken: string, subject: string): Promise<Record<string, unknown>> {
  if (!p.userinfo_endpoint) throw new Error('user info endpoint is not supported by this provider');
  const res = await fetch(p.userinfo_endpoint, {
    headers: { authorization: `Bearer ${accessToken}`, accept: 'application/json' },
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`provider UserInfo request failed: ${res.status}: ${text}`);
  let claims: unknown;
  try {
    claims = JSON.parse(text);
  } catch {
    throw new Error('failed to parse claims for UserInfo verification: not a JSON object');
  }
  if (!claims || typeof claims !== 'object' || Array.isArray(claims)) throw new Error('failed to parse claims for UserInfo verification: not a JSON object');
  const c = claims as Record<string, unknown>;
  if (c.sub !== subject) throw new Error('invalid subject (sub) claim');
  if (c.iss !== undefined && c.iss !== '' && c.iss !== p.issuer) throw new Error('invalid issuer (iss) claim');
  return c;
}
