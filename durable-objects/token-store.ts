// TokenStoreObject: one shard of the token store, addressed by a digest of the token. It grants
// leases on its tokens to the objects that serve requests (src/core/token-leases.ts), records
// every holder, and tells them to forget a token when it is revoked.

import { DurableObject } from 'cloudflare:workers';
import { BarrierStorage } from '../src/core/barrier';
import { dispatch, rootOnlyAuthorizer, type WireRequest } from '../src/core/logical';
import { effectiveTTLs } from '../src/core/mounts';
import { DEFAULT_LEASE_MS, type LeaseReply } from '../src/core/token-leases';
import { TokenStore } from '../src/core/token-store';
import { authContextFor, type TokenEntry } from '../src/core/tokens';
import { errorResult, type WireResult } from '../src/core/wire';
import type { Env } from '../src/env';
import { intVar } from '../src/env';
import { tokenBackend } from '../src/auth/token';
import type { AuthContext } from '../src/framework/backend';
import { CofferError } from '../src/framework/errors';
import { getJSON, prefixedTransaction, putJSON } from '../src/framework/storage';
import { RemoteKeyring } from './keyring-client';
import { SqlPhysical } from './sqlite-physical';
import { mountStub, systemStub } from './stubs';

const HOLDERS = 'holders/';
const RETRY_MS = 5_000;

export interface Resolution {
  sealed: boolean;
  auth: AuthContext | null;
}

interface HolderRecord {
  until: number;
}

export class TokenStoreObject extends DurableObject<Env> {
  private readonly keyring: RemoteKeyring;
  private readonly barrier: BarrierStorage;
  private readonly tokens: TokenStore;
  private readonly auths = new WeakMap<TokenEntry, AuthContext>();
  /** Holders already recorded for an accessor, with their lease end (saves a write per renewal). */
  private readonly recorded = new Map<string, number>();
  private readonly leaseMs: number;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.keyring = new RemoteKeyring(() => systemStub(env).keyring());
    this.barrier = new BarrierStorage(new SqlPhysical(ctx.storage), this.keyring);
    this.tokens = new TokenStore(this.barrier);
    this.leaseMs = intVar(env.TOKEN_LEASE_MS, DEFAULT_LEASE_MS);
  }

  private authFor(entry: TokenEntry): AuthContext {
    let auth = this.auths.get(entry);
    if (!auth) this.auths.set(entry, (auth = authContextFor(entry)));
    return auth;
  }

  /** The live entry, or 'sealed' when the keyring cannot be had (sealed or not initialised). */
  private async lookup(token: string): Promise<TokenEntry | null | 'sealed'> {
    try {
      // Checked even when the entry is cached: a sealed cluster validates no token.
      await this.keyring.get();
      return await this.tokens.lookup(token);
    } catch (e) {
      if (e instanceof CofferError && e.status === 503) return 'sealed';
      throw e;
    }
  }

  async dropKeys(): Promise<void> {
    this.keyring.drop();
    this.tokens.reset();
    this.recorded.clear();
  }

  /** The caller identity for a token (used by the Worker for sys/ requests). */
  async resolve(token: string): Promise<Resolution> {
    const entry = await this.lookup(token);
    if (entry === 'sealed') return { sealed: true, auth: null };
    return { sealed: false, auth: entry ? this.authFor(entry) : null };
  }

  /** Grants `holder` (a mount's uuid) a lease on the token's identity, and records the holder. */
  async lease(token: string, holder: string, now = Date.now()): Promise<LeaseReply> {
    const entry = await this.lookup(token);
    if (entry === 'sealed') return { status: 'sealed' };
    if (!entry) return { status: 'invalid' };
    const until = entry.expireTime === null ? now + this.leaseMs : Math.min(now + this.leaseMs, entry.expireTime);
    const key = `${HOLDERS}${entry.accessor}/${holder}`;
    // Record the holder before handing out the lease; rewrite only when the lease outgrows the record.
    if ((this.recorded.get(key) ?? 0) < until) {
      const recordUntil = until + this.leaseMs;
      await putJSON(this.barrier, key, { until: recordUntil } satisfies HolderRecord);
      this.recorded.set(key, recordUntil);
    }
    return { status: 'ok', grant: { auth: this.authFor(entry), expireTime: entry.expireTime, until } };
  }

  /** Revokes a token: deletes it, then makes every holder of a lease on it forget it. */
  async revoke(token: string): Promise<boolean> {
    const entry = await this.tokens.revoke(token);
    if (!entry) return false;
    await this.invalidateHolders(entry.accessor);
    return true;
  }

  /** Tells each recorded holder of an accessor to forget it; unreachable ones are retried. */
  private async invalidateHolders(accessor: string, now = Date.now()): Promise<void> {
    const prefix = `${HOLDERS}${accessor}/`;
    let failed = false;
    for (const holder of await this.barrier.list(prefix)) {
      const key = prefix + holder;
      const record = await getJSON<HolderRecord>(this.barrier, key);
      try {
        if (record && record.until > now) await mountStub(this.env, holder).forgetToken(accessor);
        await this.barrier.delete(key);
        this.recorded.delete(key);
      } catch (e) {
        console.error(`could not reach lease holder ${holder} for accessor ${accessor}; retrying`, e);
        failed = true;
      }
    }
    if (failed) await this.ctx.storage.setAlarm(Date.now() + RETRY_MS);
  }

  /** Retries invalidations that could not be delivered (idempotent). */
  override async alarm(): Promise<void> {
    for (const accessorDir of await this.barrier.list(HOLDERS)) {
      const accessor = accessorDir.replace(/\/$/, '');
      // Holders of tokens that still exist are current leases, not pending invalidations.
      if (await getJSON(this.barrier, `accessors/${accessor}`)) continue;
      await this.invalidateHolders(accessor);
    }
  }

  async createRoot(token: string): Promise<void> {
    await this.tokens.createRoot(token);
  }

  /** Serves auth/token/* for the caller's own token, resolving it in the same call. */
  async handle(token: string, prefix: string, wire: WireRequest): Promise<WireResult> {
    try {
      const entry = token ? await this.lookup(token) : null;
      if (entry === 'sealed') return { kind: 'error', status: 503, errors: ['Vault is sealed'] };
      const auth = entry ? this.authFor(entry) : null;
      const response = await dispatch(
        tokenBackend(this.tokens),
        { ...wire, auth, clientToken: token },
        {
          mountPoint: prefix,
          mountType: 'token',
          mountAccessor: '',
          mountConfig: effectiveTTLs({ default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false }),
          mountOptions: {},
        },
        prefixedTransaction(this.barrier.transaction(), 'logical/'),
        rootOnlyAuthorizer,
      );
      return { kind: 'ok', response };
    } catch (e) {
      return errorResult(e);
    }
  }
}
