// TokenStoreObject: one shard of the token store, addressed by a digest of the token. Besides
// tokens it holds the cluster epoch (seal state + mount-table version) that the SystemObject
// announces, so the Worker learns both from the one call it makes per request anyway.

import { DurableObject } from 'cloudflare:workers';
import { BarrierStorage } from '../src/core/barrier';
import { dispatch, rootOnlyAuthorizer, type WireRequest } from '../src/core/logical';
import { effectiveTTLs } from '../src/core/mounts';
import { TokenStore } from '../src/core/token-store';
import { authContextFor, type TokenEntry } from '../src/core/tokens';
import { errorResult, INITIAL_EPOCH, type Epoch, type WireResult } from '../src/core/wire';
import { fromUtf8, utf8 } from '../src/crypto/encoding';
import type { Env } from '../src/env';
import { tokenBackend } from '../src/auth/token';
import type { AuthContext } from '../src/framework/backend';
import { CofferError } from '../src/framework/errors';
import { prefixedTransaction } from '../src/framework/storage';
import { RemoteKeyring } from './keyring-client';
import { SqlPhysical } from './sqlite-physical';
import { systemStub } from './stubs';

/** Kept outside the barrier: it must be readable while sealed, and holds nothing secret. */
const EPOCH_KEY = 'core/epoch';

export interface Resolution {
  epoch: Epoch;
  auth: AuthContext | null;
}

export class TokenStoreObject extends DurableObject<Env> {
  private readonly physical: SqlPhysical;
  private readonly keyring: RemoteKeyring;
  private readonly barrier: BarrierStorage;
  private readonly tokens: TokenStore;
  private epochCache: Epoch | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.physical = new SqlPhysical(ctx.storage);
    this.keyring = new RemoteKeyring(() => systemStub(env).keyring());
    this.barrier = new BarrierStorage(this.physical, this.keyring);
    this.tokens = new TokenStore(this.barrier);
  }

  private currentEpoch(): Epoch {
    if (!this.epochCache) {
      const raw = this.physical.get(EPOCH_KEY);
      this.epochCache = raw ? (JSON.parse(fromUtf8(raw)) as Epoch) : INITIAL_EPOCH;
    }
    return this.epochCache;
  }

  async epoch(): Promise<Epoch> {
    return this.currentEpoch();
  }

  /** Announced by the SystemObject; older announcements (lower seq) are ignored. */
  async setEpoch(epoch: Epoch): Promise<void> {
    const current = this.currentEpoch();
    if (epoch.seq <= current.seq) return;
    this.physical.apply([{ key: EPOCH_KEY, value: utf8(JSON.stringify(epoch)) }]);
    this.epochCache = epoch;
    if (epoch.sealed) this.dropKeys();
  }

  async dropKeys(): Promise<void> {
    this.keyring.drop();
    this.tokens.reset();
  }

  /** The token's caller identity plus the epoch; auth is null for an unknown or expired token. */
  async resolve(token: string): Promise<Resolution> {
    const epoch = this.currentEpoch();
    if (epoch.sealed) return { epoch, auth: null };
    const entry = await this.lookup(token);
    return { epoch, auth: entry ? this.authFor(entry) : null };
  }

  private readonly auths = new WeakMap<TokenEntry, AuthContext>();

  private authFor(entry: TokenEntry): AuthContext {
    let auth = this.auths.get(entry);
    if (!auth) this.auths.set(entry, (auth = authContextFor(entry)));
    return auth;
  }

  private async lookup(token: string): Promise<TokenEntry | null> {
    try {
      return await this.tokens.lookup(token);
    } catch (e) {
      // A shard that cannot reach the keyring answers as sealed rather than failing the request.
      if (e instanceof CofferError && e.status === 503) return null;
      throw e;
    }
  }

  async createRoot(token: string): Promise<void> {
    await this.tokens.createRoot(token);
  }

  /** Serves auth/token/* for the caller's own token, resolving it in the same call. */
  async handle(token: string, prefix: string, wire: WireRequest): Promise<{ epoch: Epoch; result: WireResult }> {
    const epoch = this.currentEpoch();
    if (epoch.sealed) return { epoch, result: { kind: 'error', status: 503, errors: ['Vault is sealed'] } };
    try {
      const entry = token ? await this.lookup(token) : null;
      const auth = entry ? authContextFor(entry) : null;
      const tx = this.barrier.transaction();
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
        prefixedTransaction(tx, 'logical/'),
        rootOnlyAuthorizer,
      );
      return { epoch, result: { kind: 'ok', response } };
    } catch (e) {
      return { epoch, result: errorResult(e) };
    }
  }
}
