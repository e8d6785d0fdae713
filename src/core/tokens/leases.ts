// Token validation under leases. An object that serves requests (a MountObject) asks the token's
// shard once, and the shard grants a lease: the caller identity plus a time until which it may be
// reused. The shard records every holder and tells each one to forget the token when it is
// revoked, so a lease never outlives a revocation; the lease time only bounds how long a holder
// that missed such a message (unreachable at the time) could go on trusting it.

import type { AuthContext } from '../../framework/backend';
import { sealedError } from '../../framework/errors';

export interface LeaseGrant {
  auth: AuthContext;
  /** Unix ms after which the token itself is expired (null: never). */
  expireTime: number | null;
  /** Unix ms until which the holder may reuse this grant without asking again. */
  until: number;
}

export type LeaseReply = { status: 'ok'; grant: LeaseGrant } | { status: 'invalid' } | { status: 'sealed' };

export const DEFAULT_LEASE_MS = 60_000;
const CACHE_LIMIT = 10_000;

export class TokenLeaseCache {
  private readonly grants = new Map<string, LeaseGrant>();
  private readonly inflight = new Map<string, { reply: Promise<LeaseReply>; askedAt: number }>();
  /**
   * When each accessor was last forgotten, as a counter value. A revocation message can overtake
   * the reply to a lease request sent before it: such a reply is not cached (the token is gone).
   */
  private readonly forgotten = new Map<string, number>();
  private generation = 0;

  /**
   * The identity behind `key` (a token, or "accessor:<a>" for a parent's validity), or null when
   * unknown or expired. `ask` obtains a fresh grant from the shard.
   */
  async resolve(token: string, ask: () => Promise<LeaseReply>, now = Date.now()): Promise<LeaseGrant | null> {
    const held = this.held(token, now);
    if (held) return held;
    let pending = this.inflight.get(token);
    if (!pending) {
      pending = { reply: ask(), askedAt: this.generation };
      this.inflight.set(token, pending);
    }
    let reply: LeaseReply;
    try {
      reply = await pending.reply;
    } finally {
      if (this.inflight.get(token) === pending) this.inflight.delete(token);
    }
    if (reply.status === 'sealed') throw sealedError();
    if (reply.status === 'invalid') return null;
    if ((this.forgotten.get(reply.grant.auth.accessor) ?? -1) >= pending.askedAt) return null;
    // A grant valid only now (a use-limited token) is not kept.
    if (reply.grant.until > now) {
      if (this.grants.size >= CACHE_LIMIT) this.grants.delete(this.grants.keys().next().value!);
      this.grants.set(token, reply.grant);
    }
    return reply.grant;
  }

  /** The grant held for `token` while it may be reused (no await: this is on every request's path). */
  held(token: string, now = Date.now()): LeaseGrant | undefined {
    const held = this.grants.get(token);
    if (!held) return undefined;
    if (held.until > now && (held.expireTime === null || held.expireTime > now)) return held;
    this.grants.delete(token);
    return undefined;
  }

  /** Called by the token's shard when the token was revoked. */
  forgetAccessor(accessor: string): void {
    for (const [token, grant] of this.grants) if (grant.auth.accessor === accessor) this.grants.delete(token);
    if (this.forgotten.size >= CACHE_LIMIT) this.forgotten.delete(this.forgotten.keys().next().value!);
    this.forgotten.set(accessor, this.generation++);
  }

  clear(): void {
    this.grants.clear();
  }
}
