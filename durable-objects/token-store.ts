// TokenStoreObject: one shard of the token store, addressed by a digest of the token. It adapts
// the shard logic (src/core/tokens/shard.ts) to the platform: its peers are other shards reached by
// RPC, lease holders are mount objects, timers are its alarm. It also serves auth/token/* for the
// callers whose tokens it holds, through src/pipeline/serve.ts.

import { AclCache } from '../src/core/acl/cache';
import type { Maybe } from '../src/framework/steps';
import { ActivityLog, type ActivityRecord } from '../src/core/activity/log';
import type { AuditBroker } from '../src/core/audit/broker';
import { IdentityCache } from '../src/core/identity/cache';
import { MetricsRegistry, type MetricsSnapshot } from '../src/core/metrics/registry';
import { authContextFor, BATCH_TOKEN_PREFIX, shardFor, type TokenEntry } from '../src/core/tokens/entry';
import type { LeaseReply } from '../src/core/tokens/leases';
import type { TokenRole } from '../src/core/tokens/roles';
import { TokenShard } from '../src/core/tokens/shard';
import { TOKENS_PREFIX, type WrappedResponse } from '../src/core/tokens/store';
import type { AuthContext, RenewLimits } from '../src/framework/backend';
import { CofferError, drSecondaryError } from '../src/framework/errors';
import { getJSON, putJSON } from '../src/framework/storage';
import type { WireRequest } from '../src/pipeline/dispatch';
import { errorResult, type WireResult } from '../src/pipeline/result';
import { serve } from '../src/pipeline/serve';
import type { WrapStore } from '../src/pipeline/wrapping';
import type { RenewedReply, Resolution, TokenStoreContract } from '../src/rpc/contracts';
import { intVar, tokenShardCount, type Env } from '../src/rpc/env';
import { mountStub, systemStub, tokenShardStub } from '../src/rpc/stubs';
import { remoteAuditBroker } from './audit';
import { IdentityClient } from './identity-client';
import { ObjectStorage } from './object-storage';
import { following, replicate, ReplicatedObject } from './replica-ops';
import { LATEST_ALARM } from './sqlite-physical';
import type { Peer } from './token-ops';
import { TokenServing } from './token-serving';

/** Lease holders are named "mount:<uuid>" or "shard:<n>". */
const mountHolder = (uuid: string) => `mount:${uuid}`;

type Issued = { token: string; entry: TokenEntry };

export class TokenStoreObject extends ReplicatedObject<Env> implements TokenStoreContract {
  readonly #storage: ObjectStorage;
  /** The shard logic (tests reach it by this name). */
  private readonly shard: TokenShard;
  readonly #shardNo: number;
  readonly #shards: number;
  readonly #acls: AclCache;
  readonly #audit: AuditBroker;
  /** This shard's requests and token creations since it started (sys/metrics gathers it). */
  readonly #metrics = new MetricsRegistry();
  /** The clients whose tokens this shard sees (sys/internal/counters/activity gathers it). */
  readonly #activity: ActivityLog;
  readonly #serving: TokenServing;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const storage = (this.#storage = new ObjectStorage(ctx, env));
    replicate(this, storage.physical);
    // Staged with the requests' writes: a first sighting must not cost a commit of its own.
    const activity = (this.#activity = new ActivityLog(storage.requestBarrier));
    const shards = (this.#shards = tokenShardCount(env));
    const shardNo = (this.#shardNo = Number((ctx.id.name ?? '').replace(/^token-shard-/, '')) || 0);
    const identityClient = new IdentityClient(env);
    const identity = new IdentityCache(identityClient.views);
    const acls = (this.#acls = new AclCache((names) => systemStub(env).policyTexts(names), { identity, governing: () => systemStub(env).governingPolicies() }));
    const audit = (this.#audit = remoteAuditBroker(env, this.#metrics));
    const peer = (n: number) => this.#peer(n);
    const shard = (this.shard = new TokenShard(
      storage.barrier,
      {
        shard: shardNo,
        shards,
        peer,
        notifyHolder: (holder, accessor) => this.#notifyHolder(holder, accessor),
        revokeTokenLeases: (accessor) => this.#revokeTokenLeases(accessor),
        wakeAt: (at) => this.#wakeAt(at),
        leaseMs: intVar(env.TOKEN_LEASE_MS, 60_000),
        active: async (entry, now) => await activity.note(entry, now),
      },
      storage.requestBarrier,
    ));
    // New wrapping tokens go to their own shard (possibly this one, without a round trip).
    const wrapStore: WrapStore = (token, record) => (shardFor(token, shards) === shardNo ? this.wrap(token, record) : tokenShardStub(env, shardFor(token, shards)).wrap(token, record));
    this.#serving = new TokenServing({ env, storage, shard, shardNo, shards, peer, metrics: this.#metrics, activity, acls, audit, identity, identityClient, wrapStore });
  }

  #peer(n: number): Peer & TokenStoreContract {
    return n === this.#shardNo ? this : tokenShardStub(this.env, n);
  }

  async #notifyHolder(holder: string, accessor: string): Promise<void> {
    const [kind, id] = [holder.slice(0, holder.indexOf(':')), holder.slice(holder.indexOf(':') + 1)];
    if (kind === 'mount') await mountStub(this.env, id).forgetToken(accessor);
    else if (kind === 'shard' && Number(id) !== this.#shardNo) await tokenShardStub(this.env, Number(id)).forgetToken(accessor);
  }

  /** The alarm as this object last set or read it (undefined: not known; it is the only setter). */
  #alarmAt: number | null | undefined;

  async #wakeAt(when: number): Promise<void> {
    const at = Math.min(when, LATEST_ALARM); // alarms stop at 2189 (see sqlite-physical.ts)
    // Every new token asks for its expiry: most are later than the alarm already set.
    if (this.#alarmAt != null && this.#alarmAt <= at) return;
    const current = this.#alarmAt === undefined ? await this.ctx.storage.getAlarm() : this.#alarmAt;
    if (current === null || current > at) {
      await this.ctx.storage.setAlarm(at);
      this.#alarmAt = at;
    } else this.#alarmAt = current;
  }

  override async alarm(): Promise<void> {
    // A DR secondary's objects mirror their primary's: its timed work happens there.
    if (following(this)) return;
    // The alarm that fired is gone; whatever tick asks for next is set below.
    this.#alarmAt = undefined;
    const next = await this.shard.tick();
    if (next !== null) await this.#wakeAt(next);
  }

  #unsealed(): Promise<boolean> {
    return this.#serving.unsealed();
  }

  // ---- for the SystemObject ----
  async dropKeys(): Promise<void> {
    this.#storage.forgetKeys();
    this.shard.reset();
    this.#serving.forget();
    this.#acls.clear();
  }

  async policiesChanged(): Promise<void> {
    this.#acls.clear();
  }

  /** An audit device was enabled or disabled. */
  async auditChanged(): Promise<void> {
    this.#audit.invalidate();
  }

  async createRoot(token: string): Promise<void> {
    await this.shard.tokens.createRoot(token);
  }

  /**
   * Issues an auth method's login token. A service token belongs to this shard: the caller picked
   * `token` so that it does (shardFor). A batch token is sealed with the keyring and stored nowhere.
   */
  async issueLogin(token: string, partial: Omit<TokenEntry, 'accessor'>): Promise<Issued> {
    if (partial.type === 'batch') return this.#serving.issueBatch(partial);
    const entry: TokenEntry = { ...partial, accessor: this.shard.tokens.accessorFor(token) };
    await this.shard.storeLogin(token, entry);
    // The caller learns the token only once its rows are in SQLite (then the output gate holds
    // this reply until they are committed, with those of the logins served beside it).
    await this.#storage.grouped.durable();
    return { token, entry };
  }

  /** This shard holds no leases on other shards' tokens; nothing to forget. */
  async forgetToken(_accessor: string): Promise<void> {}

  // ---- for the Worker (sys/ requests) and for lease holders ----
  async resolve(token: string): Promise<Resolution> {
    if (!(await this.#unsealed())) return { sealed: true, auth: null };
    if (token.startsWith(BATCH_TOKEN_PREFIX)) {
      const entry = await this.#serving.openBatch(token);
      return { sealed: false, auth: entry ? authContextFor(entry) : null };
    }
    const stored = await this.shard.tokens.lookup(token);
    if (stored && stored.entry.numUses > 0 && !(await this.shard.use(token))) return { sealed: false, auth: null };
    if (stored) await this.#activity.note(stored.entry);
    return { sealed: false, auth: stored ? authContextFor(stored.entry) : null };
  }

  /**
   * Resolves the token of a request that will itself spend it (sys/wrapping/unwrap, lookup): a
   * wrapping token is not used up here; any other token is resolved as usual.
   */
  async resolveForUnwrap(token: string): Promise<Resolution> {
    if (!(await this.#unsealed())) return { sealed: true, auth: null };
    const peeked = await this.shard.peekWrapped(token);
    return peeked ? { sealed: false, auth: authContextFor(peeked.stored.entry) } : this.resolve(token);
  }

  async lease(token: string, holder: string): Promise<LeaseReply> {
    if (!(await this.#unsealed())) return { status: 'sealed' };
    return this.shard.lease(token, mountHolder(holder));
  }

  async leaseAccessor(accessor: string, holder: string): Promise<LeaseReply> {
    if (!(await this.#unsealed())) return { status: 'sealed' };
    return this.shard.leaseAccessor(accessor, mountHolder(holder));
  }

  // ---- PeerShard: token tree operations ----
  storeToken(token: string, entry: TokenEntry): Promise<void> {
    return this.shard.storeToken(token, entry);
  }
  addChild(parentAccessor: string, childAccessor: string): Promise<boolean> {
    return this.shard.addChild(parentAccessor, childAccessor);
  }
  removeChild(parentAccessor: string, childAccessor: string): Promise<void> {
    return this.shard.removeChild(parentAccessor, childAccessor);
  }
  revokeAccessor(accessor: string): Promise<void> {
    return this.shard.revokeAccessor(accessor);
  }
  orphanAccessor(accessor: string): Promise<void> {
    return this.shard.orphanAccessor(accessor);
  }
  async revokeToken(token: string): Promise<void> {
    await this.shard.revokeToken(token);
  }
  async revokeOrphan(token: string): Promise<void> {
    await this.shard.revokeOrphan(token);
  }
  async lookupToken(token: string): Promise<TokenEntry | null> {
    return (await this.shard.tokens.lookup(token))?.entry ?? null;
  }
  async lookupAccessor(accessor: string): Promise<TokenEntry | null> {
    const stored = await this.shard.tokens.byAccessor(accessor);
    return stored && (stored.entry.expireTime === null || stored.entry.expireTime > Date.now()) ? stored.entry : null;
  }
  /** RPC errors lose their class: a refused renewal travels as data. */
  async renewAccessor(accessor: string, increment: number, mountMaxTTL: number, limits?: RenewLimits): Promise<RenewedReply> {
    try {
      return { ok: true, ...(await this.shard.renewAccessor(accessor, increment, mountMaxTTL, limits)) };
    } catch (e) {
      if (e instanceof CofferError) return { ok: false, status: e.status, errors: e.errors };
      throw e;
    }
  }
  async accessors(): Promise<string[]> {
    return this.shard.tokens.accessors();
  }
  async tidy(): Promise<void> {
    await this.shard.tick(Date.now(), true);
  }

  // ---- response wrapping ----

  /** Creates a wrapping token of this shard holding a wrapped response. */
  async wrap(token: string, record: WrappedResponse): Promise<{ accessor: string }> {
    if (shardFor(token, this.#shards) !== this.#shardNo) throw new Error('wrapping token stored on the wrong shard');
    return this.shard.wrap(token, record);
  }

  /** Spends a wrapping token and returns what it held; null when it is not a live wrapping token (or sealed). */
  async unwrap(token: string): Promise<WrappedResponse | null> {
    if (!(await this.#unsealed())) return null;
    return this.shard.unwrap(token);
  }

  /** What a live wrapping token holds, without spending it (lookup, rewrap). */
  async peekWrapped(token: string): Promise<WrappedResponse | null> {
    if (!(await this.#unsealed())) return null;
    return (await this.shard.peekWrapped(token))?.record ?? null;
  }

  /** The caller a live wrapping token stands for, without spending it; null for any other token. */
  async wrappingAuth(token: string): Promise<AuthContext | null> {
    if (!(await this.#unsealed())) return null;
    const peeked = await this.shard.peekWrapped(token);
    return peeked ? authContextFor(peeked.stored.entry) : null;
  }

  // ---- secret leases owned by tokens (held by mount objects) ----

  /** A mount recorded leases issued to this token; its revocation must reach that mount. */
  async registerLeaseHolder(accessor: string, mountUuid: string): Promise<void> {
    await this.#storage.barrier.put(`token-leases/${accessor}/${mountUuid}`, new Uint8Array(0));
  }

  async #revokeTokenLeases(accessor: string): Promise<void> {
    for (const uuid of await this.#storage.barrier.list(`token-leases/${accessor}/`)) {
      await mountStub(this.env, uuid).revokeTokenLeases(accessor);
      await this.#storage.barrier.delete(`token-leases/${accessor}/${uuid}`);
    }
  }

  // ---- token roles live on shard 0 ----
  async getRole(name: string): Promise<TokenRole | null> {
    return getJSON<TokenRole>(this.#storage.barrier, `roles/${name}`);
  }
  async putRole(role: TokenRole): Promise<void> {
    await putJSON(this.#storage.barrier, `roles/${role.name}`, role);
  }
  async deleteRole(name: string): Promise<void> {
    await this.#storage.barrier.delete(`roles/${name}`);
  }
  async listRoles(): Promise<string[]> {
    return this.#storage.barrier.list('roles/');
  }

  // ---- metrics and client activity ----

  /** What sys/metrics gathers from this shard: its requests, and how many tokens it holds. */
  async metricsSnapshot(): Promise<MetricsSnapshot> {
    return this.#metrics.snapshot([{ name: 'vault.token.count', labels: {}, value: this.#storage.physical.count(TOKENS_PREFIX) }]);
  }

  /** Service tokens stored here (wrapping tokens included, as in Vault's token counter). */
  async serviceTokens(): Promise<number> {
    return this.#storage.physical.count(TOKENS_PREFIX);
  }

  /** The clients this shard saw in each month ("YYYY-MM"), for sys/internal/counters/activity. */
  async activityMonths(months: string[]): Promise<Record<string, ActivityRecord[]>> {
    return this.#activity.months(months);
  }

  /** How many months of client activity to keep (sys/internal/counters/config). */
  async setActivityRetention(months: number): Promise<void> {
    await this.#activity.setRetention(months);
  }

  // ---- auth/token/* ----

  /** Serves auth/token/* for the caller's token (routed here by it). */
  handle(token: string, prefix: string, wire: WireRequest): Maybe<WireResult> {
    // A DR follower (a secondary's, or a demoted primary's) serves nothing.
    if (following(this)) return errorResult(drSecondaryError());
    return serve(this.#serving.ports, { prefix }, wire, token);
  }
}
