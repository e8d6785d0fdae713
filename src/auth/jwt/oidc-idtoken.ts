// Verification of the ID token an OIDC login ends with (OpenID Connect Core §3.1.3.7, as
// hashicorp/cap checks it): signature and algorithm (through validate.ts, against the discovery
// JWKS), issuer = the discovery issuer, nonce = the one auth_url sent, exp/nbf/iat with a minute
// of leeway, the audience and authorized party rules, auth_time when max_age was asked for, and
// the at_hash/c_hash bindings when the token carries them.

import { decodeProtectedHeader } from 'jose';
import { toBase64Url, utf8 } from '../../crypto/encoding';
import type { Claims } from './claims';
import type { JwtConfig } from './config';
import type { PendingRequest } from './oidc-state';
import { audienceOf, supportedAlgorithms, TokenValidationError, validateToken } from './validate';

/** cap's leeway on iat, nbf and auth_time. */
const LEEWAY_SECONDS = 60;

/** The hash behind at_hash/c_hash: the one of the token's signature algorithm. */
function hashFor(alg: string): 'SHA-256' | 'SHA-384' | 'SHA-512' | null {
  if (/^(RS|PS|ES)256$/.test(alg)) return 'SHA-256';
  if (/^(RS|PS|ES)384$/.test(alg)) return 'SHA-384';
  if (/^(RS|PS|ES)512$/.test(alg) || alg === 'EdDSA') return 'SHA-512';
  return null;
}

/** base64url of the left half of hash(value) (OIDC Core §3.1.3.6 / §3.3.2.11). */
async function halfHash(hash: 'SHA-256' | 'SHA-384' | 'SHA-512', value: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest(hash, utf8(value)));
  return toBase64Url(digest.subarray(0, digest.length / 2));
}

async function checkHashClaim(claims: Claims, claim: 'at_hash' | 'c_hash', alg: string, value: string | undefined): Promise<void> {
  const expected = claims[claim];
  if (expected === undefined || value === undefined || value === '') return;
  const hash = hashFor(alg);
  if (!hash || typeof expected !== 'string' || (await halfHash(hash, value)) !== expected) {
    throw new TokenValidationError(claim === 'at_hash' ? 'access_token failed verification: invalid at_hash' : 'code hash failed verification: invalid c_hash');
  }
}

export interface IdTokenContext {
  config: JwtConfig;
  pending: PendingRequest;
  /** The discovery document's issuer. */
  issuer: string;
  /** From the token response (code flow), to check at_hash / c_hash. */
  accessToken?: string;
  code?: string;
}

/** The token's claims once every check passed. Throws TokenValidationError. */
export async function verifyIdToken(idToken: string, ctx: IdTokenContext): Promise<Claims> {
  const { config, pending } = ctx;
  const clientId = config.oidcClientId;
  const claims = await validateToken(config, idToken, {
    issuer: ctx.issuer,
    subject: '',
    audiences: pending.audiences,
    algorithms: supportedAlgorithms(config, 'oidc'),
    // No defaults from the role: an ID token must carry exp, and a minute of skew is allowed.
    expirationLeeway: -1,
    notBeforeLeeway: -1,
    clockSkewLeeway: LEEWAY_SECONDS,
    nonce: pending.nonce,
  });
  if (claims.exp === undefined) throw new TokenValidationError('invalid expiration time (exp) claim: missing');

  // The token is for this client: one of several audiences, or named by azp.
  const aud = audienceOf(claims);
  const azp = claims.azp;
  if (azp !== undefined && azp !== clientId) throw new TokenValidationError(`invalid authorized party (azp) claim: ${JSON.stringify(azp)} is not the client id`);
  if (aud.length > 1 && (!aud.includes(clientId) || azp !== clientId)) {
    throw new TokenValidationError('invalid audience (aud) claim: multiple audiences and the client id is not the authorized party');
  }
  if (aud.length === 1 && aud[0] !== clientId && azp !== clientId) {
    throw new TokenValidationError('invalid audience (aud) claim: the audience is not the client id');
  }
  if (aud.length === 0) throw new TokenValidationError('invalid audience (aud) claim: missing');

  if (pending.maxAge > 0) {
    const authTime = claims.auth_time;
    if (typeof authTime !== 'number') throw new TokenValidationError('missing auth_time claim when max age was requested');
    const authAfter = pending.createdAt / 1000 - pending.maxAge;
    if (authTime + LEEWAY_SECONDS <= authAfter) throw new TokenValidationError(`auth_time is beyond max age (${pending.maxAge})`);
  }

  // The signature already verified, so the header parses.
  const alg = String(decodeProtectedHeader(idToken).alg);
  await checkHashClaim(claims, 'at_hash', alg, ctx.accessToken);
  await checkHashClaim(claims, 'c_hash', alg, ctx.code);
  return claims;
}
