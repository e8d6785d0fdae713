// Keys made with jose and JWTs signed with them, for the JWT auth method's tests (unit and
// integration), plus fixed certificate test data.
import { exportJWK, exportSPKI, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

export type Alg = 'RS256' | 'ES256' | 'EdDSA' | 'PS256' | 'ES384' | 'RS512';

export interface TestKey {
  alg: Alg;
  kid: string;
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  /** SPKI PEM of the public key. */
  pem: string;
  /** Public JWK with kid (and alg). */
  jwk: JWK;
}

let kids = 0;

export async function makeKey(alg: Alg, kid = `kid-${++kids}`): Promise<TestKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const jwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { alg, kid, privateKey, publicKey, pem: await exportSPKI(publicKey), jwk };
}

export const now = (): number => Math.floor(Date.now() / 1000);

/** Standard claims for a valid login, overridable (undefined removes a claim). */
export function claims(overrides: Record<string, unknown> = {}): JWTPayload {
  const base: Record<string, unknown> = { sub: 'user-1', iss: 'https://issuer.example', aud: 'coffer', iat: now() - 10, exp: now() + 300, email: 'alice@example.com', ...overrides };
  for (const k of Object.keys(base)) if (base[k] === undefined) delete base[k];
  return base as JWTPayload;
}

export async function sign(key: TestKey, payload: JWTPayload, header: { kid?: string | null } = {}): Promise<string> {
  const kid = header.kid === null ? undefined : (header.kid ?? key.kid);
  return new SignJWT(payload).setProtectedHeader({ alg: key.alg, ...(kid ? { kid } : {}) }).sign(key.privateKey);
}

const b64url = (s: string): string => btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');

/** An unsecured JWT (alg none), built by hand: test data. */
export const unsignedToken = (payload: JWTPayload): string => `${b64url(JSON.stringify({ alg: 'none', typ: 'JWT' }))}.${b64url(JSON.stringify(payload))}.`;

// A self-signed P-256 certificate and its key (test data, made with openssl): certificates are
// accepted as jwt_validation_pubkeys, and as CA PEMs.
export const CERT_PEM = `-----BEGIN CERTIFICATE-----
MIIBkjCCATegAwIBAgIUfdoKvnOUAvjhhOtaocvjSFNVXA4wCgYIKoZIzj0EAwIw
HTEbMBkGA1UEAwwSQ29mZmVyIEpXVCB0ZXN0IENBMCAXDTI2MTEyMjA4MzUwMloY
DzIxMjYxMDI5MDgzNTAyWjAdMRswGQYDVQQDDBJDb2ZmZXIgSldUIHRlc3QgQ0Ew
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAR+3llm3fg38xMgoOVsusz2/x1Apr2R
qyTmbIvuuQOU8w70WF7pR/RO6wMpuK9Pkf+UPqQJE5n1MWCGh3umy7uoo1MwUTAd
BgNVHQ4EFgQU+JGPXTdlDMHMiyZ+1eWNJ7fA4VwwHwYDVR0jBBgwFoAU+JGPXTdl
DMHMiyZ+1eWNJ7fA4VwwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNJADBG
AiEAjQMqqmT9ig76BYYZ97DUM5Sw72vuivahF+FJ660RMmsCIQDVzau+xuUiLIcW
KkAcLGx2doBPaPwHsedWMs6qLJnFCw==
-----END CERTIFICATE-----
`;
export const CERT_KEY_PEM = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgUlT3D8SOmicgObiv
puIFJOpjeprgwwySYJLYsk666vWhRANCAAR+3llm3fg38xMgoOVsusz2/x1Apr2R
qyTmbIvuuQOU8w70WF7pR/RO6wMpuK9Pkf+UPqQJE5n1MWCGh3umy7uo
-----END PRIVATE KEY-----
`;
