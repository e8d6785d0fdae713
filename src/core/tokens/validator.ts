// How an object that serves requests decides who the caller is: batch tokens are opened with the
// keyring (their parent, if any, must still be valid); service tokens are validated under leases
// from their shard. Bound CIDRs are checked against the client address on every request.

import type { AuthContext } from '../../framework/backend';
import type { KeyringSource } from '../barrier/barrier';
import { decodeBatchToken } from './batch';
import { allowedByCIDRs } from './cidr';
import type { LeaseReply } from './leases';
import { TokenLeaseCache } from './leases';
import { authContextFor, BATCH_TOKEN_PREFIX } from './entry';

export interface ValidatorPorts {
  keys: KeyringSource;
  /** Asks the token's shard for a lease (consuming a use for use-limited tokens). */
  leaseToken(token: string): Promise<LeaseReply>;
  /** Asks an accessor's shard whether that token is still valid (a batch token's parent). */
  leaseAccessor(accessor: string): Promise<LeaseReply>;
}

export type Validation = { status: 'ok'; auth: AuthContext } | { status: 'invalid' } | { status: 'cidr' };

export class TokenValidator {
  readonly leases = new TokenLeaseCache();

  constructor(private readonly ports: ValidatorPorts) {}

  /** Synchronous while the token's lease is held (every request but the first of a minute). */
  validate(token: string, clientIP: string, now = Date.now()): Validation | Promise<Validation> {
    if (!token.startsWith(BATCH_TOKEN_PREFIX)) {
      const held = this.leases.held(token, now);
      if (held) return checked(held.auth, held.expireTime, clientIP);
    }
    return this.#validate(token, clientIP, now);
  }

  async #validate(token: string, clientIP: string, now: number): Promise<Validation> {
    let auth: AuthContext;
    let expires: number | null;
    if (token.startsWith(BATCH_TOKEN_PREFIX)) {
      const entry = await decodeBatchToken(token, this.ports.keys);
      if (!entry || (entry.expireTime !== null && entry.expireTime <= now)) return { status: 'invalid' };
      if (entry.parent) {
        const parent = await this.leases.resolve(`accessor:${entry.parent}`, () => this.ports.leaseAccessor(entry.parent), now);
        if (!parent) return { status: 'invalid' };
      }
      auth = authContextFor(entry);
      expires = entry.expireTime;
    } else {
      const grant = await this.leases.resolve(token, () => this.ports.leaseToken(token), now);
      if (!grant) return { status: 'invalid' };
      auth = grant.auth;
      expires = grant.expireTime;
    }
    return checked(auth, expires, clientIP);
  }
}

/** The caller, unless its token is bound to CIDRs the client is outside of. */
function checked(auth: AuthContext, expires: number | null, clientIP: string): Validation {
  // A root token that never expires is exempt from its CIDR binding (the way back in).
  const exempt = auth.root && expires === null;
  if (!exempt && !allowedByCIDRs(auth.boundCidrs, clientIP)) return { status: 'cidr' };
  return { status: 'ok', auth };
}
