// Google's authentication of service accounts, as the emulator checks it (node:crypto, not the
// product's jose):
//   - the OAuth 2.0 token endpoint's JWT-bearer grant: an RS256 assertion signed with one of the
//     account's keys (kid, when given, names it), iss = the account, aud = the token endpoint,
//     a scope, iat/exp at most an hour apart and current → an opaque access token;
//   - on Cloud KMS: "Authorization: Bearer" with such a token, or with a self-signed JWT (what the
//     Node SDK sends by default: iss = sub = the account, aud = https://cloudkms.googleapis.com/
//     or a scope claim), checked the same way.
import { createPublicKey, randomBytes, verify, type KeyObject } from 'node:crypto';
import { GcpError, invalidGrant, OAuthError, unauthenticated } from './errors';

export const KMS_SCOPES = ['https://www.googleapis.com/auth/cloudkms', 'https://www.googleapis.com/auth/cloud-platform'];
/** The audiences a grant may name: Google's token endpoint, or this emulator's (see server.ts). */
export const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';
const KMS_AUDIENCE = 'https://cloudkms.googleapis.com/';
const GRANT_TYPE = 'urn:ietf:params:oauth:grant-type:jwt-bearer';
const SKEW_S = 60;

export interface Account {
  email: string;
  project: string;
  /** Key id → public key. */
  keys: Map<string, KeyObject>;
  projects: Set<string>;
  /** null: every Cloud KMS permission. */
  permissions: Set<string> | null;
  tokenLifetime: number;
}

interface Issued {
  email: string;
  scopes: string[];
  expiresAt: number;
}

export interface Principal {
  account: Account;
  scopes: string[];
  how: 'token' | 'jwt';
}

interface Jwt {
  header: Record<string, unknown>;
  claims: Record<string, unknown>;
  signingInput: string;
  signature: Buffer;
}

function parseJwt(text: string): Jwt | null {
  const parts = text.split('.');
  if (parts.length !== 3 || parts.some((p) => !/^[A-Za-z0-9_-]*$/.test(p))) return null;
  try {
    const header = JSON.parse(Buffer.from(parts[0], 'base64url').toString('utf8')) as unknown;
    const claims = JSON.parse(Buffer.from(parts[1], 'base64url').toString('utf8')) as unknown;
    if (!header || typeof header !== 'object' || !claims || typeof claims !== 'object') return null;
    return { header: header as Record<string, unknown>, claims: claims as Record<string, unknown>, signingInput: `${parts[0]}.${parts[1]}`, signature: Buffer.from(parts[2], 'base64url') };
  } catch {
    return null;
  }
}

/** Whether one of the account's keys (the one `kid` names, when given) made the RS256 signature. */
function signedBy(jwt: Jwt, account: Account): boolean {
  if (jwt.header.alg !== 'RS256') return false;
  const kid = jwt.header.kid;
  const keys = typeof kid === 'string' ? [account.keys.get(kid)].filter((k): k is KeyObject => !!k) : [...account.keys.values()];
  return keys.some((k) => verify('sha256', Buffer.from(jwt.signingInput), k, jwt.signature));
}

const now = () => Math.floor(Date.now() / 1000);

/** iat and exp numbers, exp in the future, at most an hour after iat, iat not in the future. */
function timely(c: Record<string, unknown>): boolean {
  const { iat, exp } = c;
  if (typeof iat !== 'number' || typeof exp !== 'number') return false;
  return exp > now() - SKEW_S && iat <= now() + SKEW_S && exp - iat <= 3600 && exp > iat;
}

const scopesOf = (c: Record<string, unknown>): string[] => (typeof c.scope === 'string' ? c.scope.split(' ').filter(Boolean) : []);

export class Auth {
  readonly accounts = new Map<string, Account>();
  private readonly tokens = new Map<string, Issued>();

  addAccount(account: Account): void {
    this.accounts.set(account.email, account);
  }

  /** Access tokens of the account stop working (as after a key deletion or a revocation). */
  revokeTokens(email: string): number {
    let n = 0;
    for (const [t, i] of this.tokens) if (i.email === email && this.tokens.delete(t)) n++;
    return n;
  }

  /**
   * The JWT-bearer grant. `audiences`: the URLs the assertion may name (Google's token endpoint
   * and the address the request came to). Returns the token response and who asked.
   */
  grant(form: URLSearchParams, audiences: string[]): { account: Account; response: unknown } {
    const grantType = form.get('grant_type');
    if (grantType !== GRANT_TYPE) throw new OAuthError(400, 'unsupported_grant_type', `Invalid grant_type: ${grantType ?? ''}`);
    const assertion = form.get('assertion');
    if (!assertion) throw new OAuthError(400, 'invalid_request', 'Missing required parameter: assertion');
    const jwt = parseJwt(assertion);
    if (!jwt) throw invalidGrant('Invalid JWT: the assertion is not a signed JWT.');
    const iss = jwt.claims.iss;
    const account = typeof iss === 'string' ? this.accounts.get(iss) : undefined;
    if (!account) throw invalidGrant('Invalid grant: account not found');
    if (!signedBy(jwt, account)) throw invalidGrant('Invalid JWT Signature.');
    if (typeof jwt.claims.aud !== 'string' || !audiences.includes(jwt.claims.aud)) {
      throw invalidGrant(`Invalid JWT: Failed audience check. The right audience is ${GOOGLE_TOKEN_URL}`);
    }
    if (!timely(jwt.claims)) {
      throw invalidGrant('Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.');
    }
    const scopes = scopesOf(jwt.claims);
    if (scopes.length === 0) throw new OAuthError(400, 'invalid_scope', 'Invalid OAuth scope or ID token audience provided.');
    const token = `ya29.c.${randomBytes(32).toString('base64url')}`;
    this.tokens.set(token, { email: account.email, scopes, expiresAt: Date.now() + account.tokenLifetime * 1000 });
    return { account, response: { access_token: token, expires_in: account.tokenLifetime, token_type: 'Bearer' } };
  }

  /** Who the Authorization header of a Cloud KMS request names; a GcpError when nobody valid. */
  authenticate(header: string | undefined): Principal {
    const m = /^Bearer\s+(\S+)$/i.exec(header ?? '');
    if (!m) throw unauthenticated(true);
    const jwt = m[1].split('.').length === 3 ? parseJwt(m[1]) : null;
    if (jwt) return this.selfSigned(jwt);
    const issued = this.tokens.get(m[1]);
    if (!issued || issued.expiresAt <= Date.now()) throw unauthenticated(false);
    const account = this.accounts.get(issued.email);
    if (!account) throw unauthenticated(false);
    this.requireScope(issued.scopes);
    return { account, scopes: issued.scopes, how: 'token' };
  }

  private selfSigned(jwt: Jwt): Principal {
    const { iss, sub, aud } = jwt.claims;
    const account = typeof iss === 'string' ? this.accounts.get(iss) : undefined;
    if (!account || sub !== iss || !signedBy(jwt, account) || !timely(jwt.claims)) throw unauthenticated(false);
    const scopes = scopesOf(jwt.claims);
    // A self-signed JWT names either the API (aud) or scopes.
    if (aud !== undefined && aud !== KMS_AUDIENCE) throw unauthenticated(false);
    if (aud === undefined) this.requireScope(scopes);
    return { account, scopes, how: 'jwt' };
  }

  private requireScope(scopes: string[]): void {
    if (!scopes.some((s) => KMS_SCOPES.includes(s))) {
      throw new GcpError('PERMISSION_DENIED', 'Request had insufficient authentication scopes.', [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'ACCESS_TOKEN_SCOPE_INSUFFICIENT', domain: 'googleapis.com' },
      ]);
    }
  }
}

/** The public key of a PKCS#8 private key PEM. */
export const publicKeyOf = (privatePem: string): KeyObject => createPublicKey(privatePem);
