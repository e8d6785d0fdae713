// Validation of a JWT as hashicorp/cap's jwt.Validator does it, in its order: signature, algorithm
// allow-list, presence of a time claim, defaults for missing exp/nbf, then iss, sub, aud, nbf, exp
// and iat with the leeways. Errors carry cap's messages; JWT login prefixes them with
// "error validating token: ". The OIDC callback reuses this for ID tokens (audience = client id,
// nonce from the auth request).

import type { Claims } from './claims';
import type { JwtConfig } from './config';
import { ASYMMETRIC_ALGS, SignatureError, verifySignature } from './keysource';
import { DEFAULT_CLOCK_SKEW_LEEWAY, DEFAULT_EXPIRATION_LEEWAY, DEFAULT_NOT_BEFORE_LEEWAY, type JwtRole } from './paths/roles';

/** A refused token; the message is what follows "error validating token: ". */
export class TokenValidationError extends Error {}

export interface Expectations {
  /** Required iss ('' = any). */
  issuer: string;
  /** Required sub ('' = any). */
  subject: string;
  /** aud must contain one of these ([] = not checked). */
  audiences: string[];
  /** Allowed signing algorithms. */
  algorithms: string[];
  /** Seconds: 0 = default (150, 150, 60), negative = none. */
  expirationLeeway: number;
  notBeforeLeeway: number;
  clockSkewLeeway: number;
  /** Required nonce claim (ID tokens of the OIDC flow). */
  nonce?: string;
  /** Current time in ms (tests). */
  now?: number;
}

const leeway = (value: number, fallback: number): number => (value > 0 ? value : value === 0 ? fallback : 0);

/**
 * The algorithms a token may use: jwt_supported_algs, or when empty every asymmetric algorithm
 * for JWT logins and RS256 for OIDC ID tokens (the spec's defaults per role type).
 */
export function supportedAlgorithms(config: JwtConfig, roleType: 'jwt' | 'oidc'): string[] {
  if (config.jwtSupportedAlgs.length > 0) return config.jwtSupportedAlgs;
  return roleType === 'jwt' ? ASYMMETRIC_ALGS : ['RS256'];
}

/** What a JWT login against `role` expects of the token. */
export function loginExpectations(config: JwtConfig, role: JwtRole): Expectations {
  return {
    issuer: config.boundIssuer,
    subject: role.boundSubject,
    audiences: role.boundAudiences,
    algorithms: supportedAlgorithms(config, 'jwt'),
    expirationLeeway: role.expirationLeeway,
    notBeforeLeeway: role.notBeforeLeeway,
    clockSkewLeeway: role.clockSkewLeeway,
  };
}

function parseClaims(payload: Uint8Array): Claims {
  let claims: unknown;
  try {
    claims = JSON.parse(new TextDecoder().decode(payload));
  } catch {
    throw new TokenValidationError('failed to unmarshal claims: payload is not JSON');
  }
  if (typeof claims !== 'object' || claims === null || Array.isArray(claims)) {
    throw new TokenValidationError('failed to unmarshal claims: payload is not a JSON object');
  }
  return claims as Claims;
}

/** A NumericDate claim in seconds, or undefined when absent. */
function numericDate(claims: Claims, name: string): number | undefined {
  const v = claims[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isFinite(v)) throw new TokenValidationError(`failed to unmarshal claims: "${name}" is not a number`);
  return v;
}

/** The aud claim as a list (a single string is one audience). */
export function audienceOf(claims: Claims): string[] {
  const aud = claims.aud;
  if (aud === undefined || aud === null) return [];
  if (typeof aud === 'string') return aud === '' ? [] : [aud];
  if (Array.isArray(aud) && aud.every((a) => typeof a === 'string')) return aud as string[];
  throw new TokenValidationError('failed to unmarshal claims: "aud" is not a string or a list of strings');
}

/** Verifies the signature and every registered claim; returns all claims. Throws TokenValidationError. */
export async function validateToken(config: JwtConfig, token: string, expected: Expectations): Promise<Claims> {
  let verified: Awaited<ReturnType<typeof verifySignature>>;
  try {
    verified = await verifySignature(config, token);
  } catch (e) {
    if (e instanceof SignatureError) throw new TokenValidationError(`error verifying token signature: ${e.message}`);
    throw e;
  }
  const { alg } = verified.protectedHeader;
  const payload = verified.payload;
  if (typeof alg !== 'string' || !expected.algorithms.includes(alg)) {
    throw new TokenValidationError('invalid algorithm (alg) header parameter: token signed with unexpected algorithm');
  }

  const claims = parseClaims(payload);
  const iat = numericDate(claims, 'iat');
  const nbfClaim = numericDate(claims, 'nbf');
  const expClaim = numericDate(claims, 'exp');
  const aud = audienceOf(claims);
  if (iat === undefined && nbfClaim === undefined && expClaim === undefined) {
    throw new TokenValidationError('no issued at (iat), not before (nbf), or expiration time (exp) claims in token');
  }
  // A missing exp is the latest of iat and nbf plus the expiration leeway; a missing nbf is iat,
  // or else exp minus the not-before leeway.
  const exp = expClaim ?? Math.max(iat ?? -Infinity, nbfClaim ?? -Infinity) + leeway(expected.expirationLeeway, DEFAULT_EXPIRATION_LEEWAY);
  const nbf = nbfClaim ?? iat ?? exp - leeway(expected.notBeforeLeeway, DEFAULT_NOT_BEFORE_LEEWAY);

  if (expected.issuer !== '' && claims.iss !== expected.issuer) throw new TokenValidationError('invalid issuer (iss) claim');
  if (expected.subject !== '' && claims.sub !== expected.subject) throw new TokenValidationError('invalid subject (sub) claim');
  if (expected.audiences.length > 0 && !expected.audiences.some((a) => aud.includes(a))) {
    throw new TokenValidationError('invalid audience (aud) claim: audience claim does not match any expected audience');
  }
  const now = (expected.now ?? Date.now()) / 1000;
  const skew = leeway(expected.clockSkewLeeway, DEFAULT_CLOCK_SKEW_LEEWAY);
  if (now + skew < nbf) throw new TokenValidationError('invalid not before (nbf) claim: token not yet valid');
  if (now - skew > exp) throw new TokenValidationError('invalid expiration time (exp) claim: token is expired');
  if (iat !== undefined && now + skew < iat) throw new TokenValidationError('invalid issued at (iat) claim: token issued in the future');
  if (expected.nonce !== undefined && claims.nonce !== expected.nonce) throw new TokenValidationError('invalid nonce (nonce) claim');
  return claims;
}
