// Response-wrapping tokens in JWT form, as Vault hands out DR activation tokens (the form of its
// X-Vault-Wrap-Format: jwt, a header Coffer does not take): an ES512 JWT whose `jti` is the
// wrapping token itself and whose `addr` says where to unwrap it. The signing key is the cluster's (kept behind the barrier, so a promoted DR
// secondary goes on signing with it); unwrap accepts the JWT only with a valid signature.

import { decodeJwt, exportJWK, generateKeyPair, importJWK, jwtVerify, SignJWT, type JWK } from 'jose';
import type { WrapInfo } from '../../framework/backend';
import { getJSON, putJSON, type Storage } from '../../framework/storage';

const KEY_PATH = 'core/wrapping/jwt-key';
const ALG = 'ES512';

/** Whether a token has a JWT's shape (a wrapping token never has). */
export const isJwt = (token: string): boolean => /^eyJ[\w-]*\.[\w-]+\.[\w-]+$/.test(token);

/** The unverified `addr` claim of a JWT wrapping token: where its issuer serves ('' when absent). */
export function wrappingJwtAddress(token: string): string {
  try {
    const { addr } = decodeJwt(token);
    return typeof addr === 'string' ? addr : '';
  } catch {
    return '';
  }
}

/** The cluster's wrapping JWT key pair, created on first use. */
export class WrappingJwtKeys {
  #pair: Promise<{ privateKey: CryptoKey; publicKey: CryptoKey }> | null = null;

  constructor(private readonly storage: Storage) {}

  #keys(): Promise<{ privateKey: CryptoKey; publicKey: CryptoKey }> {
    // One load (or creation) at a time: two first uses must not make two keys.
    this.#pair ??= this.#load().catch((e: unknown) => {
      this.#pair = null;
      throw e;
    });
    return this.#pair;
  }

  async #load(): Promise<{ privateKey: CryptoKey; publicKey: CryptoKey }> {
    let jwk = await getJSON<JWK>(this.storage, KEY_PATH);
    if (!jwk) {
      const made = await generateKeyPair(ALG, { extractable: true });
      jwk = await exportJWK(made.privateKey);
      await putJSON(this.storage, KEY_PATH, jwk);
    }
    const { d: _d, ...publicJwk } = jwk;
    return { privateKey: (await importJWK(jwk, ALG)) as CryptoKey, publicKey: (await importJWK(publicJwk, ALG)) as CryptoKey };
  }

  /** The JWT form of a wrapping token: expires with it, and names `addr` as the place to unwrap. */
  async sign(info: WrapInfo, addr: string): Promise<string> {
    const { privateKey } = await this.#keys();
    const iat = Math.floor(Date.parse(info.creation_time) / 1000);
    return new SignJWT({ addr, accessor: info.accessor, type: 'wrapping' })
      .setProtectedHeader({ alg: ALG, typ: 'JWT' })
      .setJti(info.token)
      .setIssuedAt(iat)
      .setExpirationTime(iat + info.ttl)
      .sign(privateKey);
  }

  /** The wrapping token a JWT carries, or null when its signature is not this cluster's or it expired. */
  async open(token: string): Promise<string | null> {
    const { publicKey } = await this.#keys();
    try {
      const { payload } = await jwtVerify(token, publicKey, { algorithms: [ALG] });
      return payload.type === 'wrapping' && typeof payload.jti === 'string' ? payload.jti : null;
    } catch {
      return null;
    }
  }

  /** Forgets the key in memory (sealing; a promotion replaced the storage under it). */
  forget(): void {
    this.#pair = null;
  }
}
