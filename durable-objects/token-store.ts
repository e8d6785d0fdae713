// TokenStoreObject: one shard of the token store, addressed by a digest of the token. It adapts
// the shard logic (src/core/tokens/shard.ts) to the platform: its peers are other shards reached by
// RPC, lease holders are mount objects, timers are its alarm. It also serves auth/token/* for the
// callers whose tokens it holds.

import { DurableObject } from 'cloudflare:workers';
import { tokenBackend } from '../src/auth/token';
import type { Caller, TokenMountConfig, TokenOps } from '../src/auth/token/ops';
import { authorizerFor } from '../src/pipeline/authorizer';
import { AclCache } from '../src/core/acl/cache';
import { IdentityCache } from '../src/core/identity/cache';
import type { AuditBroker } from '../src/core/audit/broker';
import { AuditTrail } from '../src/pipeline/audit-trail';
import { BarrierStorage } from '../src/core/barrier/barrier';
import { GroupedWrites } from '../src/core/barrier/grouped-writes';
import { decodeBatchToken, encodeBatchToken } from '../src/core/tokens/batch';
import { allowedByCIDRs } from '../src/core/tokens/cidr';
import { dispatch, type WireRequest } from '../src/pipeline/dispatch';
import type { LeaseReply } from '../src/core/tokens/leases';
import type { TokenRole } from '../src/core/tokens/roles';
import { TokenShard, type PeerShard } from '../src/core/tokens/shard';
import { TOKENS_PREFIX, type WrappedResponse } from '../src/core/tokens/store';
import { ActivityLog, type ActivityRecord } from '../src/core/activity/log';
import { MetricsRegistry, type MetricsSnapshot } from '../src/core/metrics/registry';
import { countTokenCreation, RequestTimer } from '../src/core/metrics/requests';
import { authContextFor, BATCH_TOKEN_PREFIX, newServiceToken, shardFor, type TokenEntry } from '../src/core/tokens/entry';
import { errorResult, type WireResult } from '../src/rpc/wire';
import type { Env } from '../src/rpc/env';
import { intVar, tokenShardCount } from '../src/rpc/env';
import type { AuthContext, RenewLimits } from '../src/framework/backend';
import { badRequest, CofferError, invalidToken, permissionDenied } from '../src/framework/errors';
import { getJSON, prefixedTransaction, putJSON } from '../src/framework/storage';
import { remoteAuditBroker } from './audit';
import { IdentityClient } from './identity-client';
import { RemoteKeyring } from './keyring-client';
import { LATEST_ALARM, SqlPhysical } from './sqlite-physical';
import { mountStub, systemStub, tokenShardStub } from '../src/rpc/stubs';
import { wrapHook } from '../src/pipeline/wrapping';
import { findRoute } from '../src/core/mounts/table';
import type { WrapStore } from '../src/pipeline/wrapping';

/** Lease holders are named "mount:<uuid>" or "shard:<n>". */
const mountHolder = (uuid: string) => `mount:${uuid}`;
const TOKEN_MOUNT_POINT = 'auth/token/';
const MOUNT_CONFIG_TTL_MS = 30_000;

export interface Resolution {
  sealed: boolean;
  auth: AuthContext | null;
}

type RenewedReply = { ok: true; entry: TokenEntry; ttl: number; warnings: string[] } | { ok: false; status: number; errors: string[] };

export class TokenStoreObject extends DurableObject<Env> implements PeerShard {
  private readonly keyring: RemoteKeyring;
  /** Login tokens of logins served together are committed together (src/core/barrier/grouped-writes.ts). */
  private readonly grouped: GroupedWrites;
  /** Storage for everything but new login tokens: it sees and orders after every staged write. */
  private readonly barrier: BarrierStorage;
  /** Storage for new login tokens; issueLogin replies once grouped.durable() settles. */
  private readonly loginBarrier: BarrierStorage;
  private readonly shard: TokenShard;
  private readonly shardNo: number;
  private readonly shards: number;
  private mountConfigCache: { config: TokenMountConfig; at: number } | null = null;
  private readonly acls: AclCache;
  private readonly identityClient: IdentityClient;
  private readonly identity: IdentityCache;
  private readonly audit: AuditBroker;
  private readonly physical: SqlPhysical;
  /** This shard's requests and token creations since it started (sys/metrics gathers it). */
  private readonly metrics = new MetricsRegistry();
  /** The clients whose tokens this shard sees (sys/internal/counters/activity gathers it). */
  private readonly activity: ActivityLog;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.keyring = new RemoteKeyring(() => systemStub(env).keyring());
    // A flush that fails leaves memory ahead of storage: reset the object rather than serve it.
    this.physical = new SqlPhysical(ctx.storage);
    this.grouped = new GroupedWrites(this.physical, (e) => ctx.abort(`storage write failed: ${e instanceof Error ? e.message : String(e)}`));
    this.barrier = new BarrierStorage(this.grouped.immediate, this.keyring);
    this.loginBarrier = new BarrierStorage(this.grouped.grouped, this.keyring);
    // Staged with the requests' writes: a first sighting must not cost a commit of its own.
    this.activity = new ActivityLog(this.loginBarrier);
    this.shards = tokenShardCount(env);
    this.shardNo = Number((ctx.id.name ?? '').replace(/^token-shard-/, '')) || 0;
    this.identityClient = new IdentityClient(env);
    this.identity = new IdentityCache(this.identityClient.views);
    this.acls = new AclCache((names) => systemStub(env).policyTexts(names), { identity: this.identity });
    this.audit = remoteAuditBroker(env, this.metrics);
    this.shard = new TokenShard(this.barrier, {
      shard: this.shardNo,
      shards: this.shards,
      peer: (n) => this.peer(n),
      notifyHolder: (holder, accessor) => this.notifyHolder(holder, accessor),
      revokeTokenLeases: (accessor) => this.revokeTokenLeases(accessor),
      wakeAt: (at) => this.wakeAt(at),
      leaseMs: intVar(env.TOKEN_LEASE_MS, 60_000),
      active: (entry, now) => this.activity.note(entry, now),
    }, this.loginBarrier);
  }

  /** New wrapping tokens go to their own shard (possibly this one, without a round trip). */
  private readonly wrapStore: WrapStore = (token, record) =>
    shardFor(token, this.shards) === this.shardNo ? this.wrap(token, record) : tokenShardStub(this.env, shardFor(token, this.shards)).wrap(token, record);

  private peer(n: number): TokenStoreObject | DurableObjectStub<TokenStoreObject> {
    return n === this.shardNo ? this : tokenShardStub(this.env, n);
  }

  private async notifyHolder(holder: string, accessor: string): Promise<void> {
    const [kind, id] = [holder.slice(0, holder.indexOf(':')), holder.slice(holder.indexOf(':') + 1)];
    if (kind === 'mount') await mountStub(this.env, id).forgetToken(accessor);
    else if (kind === 'shard' && Number(id) !== this.shardNo) await tokenShardStub(this.env, Number(id)).forgetToken(accessor);
  }

  /** The alarm as this object last set or read it (undefined: not known; it is the only setter). */
  private alarmAt: number | null | undefined;

  private async wakeAt(when: number): Promise<void> {
    const at = Math.min(when, LATEST_ALARM); // alarms stop at 2189 (see sqlite-physical.ts)
    // Every new token asks for its expiry: most are later than the alarm already set.
    if (this.alarmAt != null && this.alarmAt <= at) return;
    const current = this.alarmAt === undefined ? await this.ctx.storage.getAlarm() : this.alarmAt;
    if (current === null || current > at) {
      await this.ctx.storage.setAlarm(at);
      this.alarmAt = at;
    } else this.alarmAt = current;
  }

  override async alarm(): Promise<void> {
    // The alarm that fired is gone; whatever tick asks for next is set below.
    this.alarmAt = undefined;
    const next = await this.shard.tick();
    if (next !== null) await this.wakeAt(next);
  }

  /** Whether the keyring can be had: a sealed (or uninitialised) cluster validates no token. */
  private async unsealed(): Promise<boolean> {
    try {
      await this.keyring.get();
      return true;
    } catch (e) {
      if (e instanceof CofferError && e.status === 503) return false;
      throw e;
    }
  }

  // ---- for the SystemObject ----
  async dropKeys(): Promise<void> {
    this.keyring.drop();
    this.barrier.forgetOpened();
    this.loginBarrier.forgetOpened();
    this.shard.reset();
    this.mountConfigCache = null;
    this.acls.clear();
  }

  async policiesChanged(): Promise<void> {
    this.acls.clear();
  }

  /** An audit device was enabled or disabled. */
  async auditChanged(): Promise<void> {
    this.audit.invalidate();
  }

  async createRoot(token: string): Promise<void> {
    await this.shard.tokens.createRoot(token);
  }

  /**
   * Issues an auth method's login token. A service token belongs to this shard: the caller picked
   * `token` so that it does (shardFor). A batch token is sealed with the keyring and stored nowhere.
   */
  async issueLogin(token: string, partial: Omit<TokenEntry, 'accessor'>): Promise<{ token: string; entry: TokenEntry }> {
    if (partial.type === 'batch') return this.issueBatch(partial);
    const entry: TokenEntry = { ...partial, accessor: this.shard.tokens.accessorFor(token) };
    await this.shard.storeLogin(token, entry);
    // The caller learns the token only once its rows are in SQLite (then the output gate holds
    // this reply until they are committed, with those of the logins served beside it).
    await this.grouped.durable();
    return { token, entry };
  }

  /** A batch token: the entry sealed with the keyring, stored nowhere (its client counts now: its use never reaches a shard). */
  private async issueBatch(partial: Omit<TokenEntry, 'accessor'>): Promise<{ token: string; entry: TokenEntry }> {
    const entry: TokenEntry = { ...partial, accessor: '' };
    await this.activity.note(entry);
    return { token: await encodeBatchToken(entry, await this.keyring.get()), entry };
  }

  /** This shard holds no leases on other shards' tokens; nothing to forget. */
  async forgetToken(_accessor: string): Promise<void> {}

  // ---- for the Worker (sys/ requests) and for lease holders ----
  async resolve(token: string): Promise<Resolution> {
    if (!(await this.unsealed())) return { sealed: true, auth: null };
    if (token.startsWith(BATCH_TOKEN_PREFIX)) {
      const entry = await this.openBatch(token);
      return { sealed: false, auth: entry ? authContextFor(entry) : null };
    }
    const stored = await this.shard.tokens.lookup(token);
    if (stored && stored.entry.numUses > 0 && !(await this.shard.use(token))) return { sealed: false, auth: null };
    if (stored) await this.activity.note(stored.entry);
    return { sealed: false, auth: stored ? authContextFor(stored.entry) : null };
  }

  async lease(token: string, holder: string): Promise<LeaseReply> {
    if (!(await this.unsealed())) return { status: 'sealed' };
    return this.shard.lease(token, mountHolder(holder));
  }

  async leaseAccessor(accessor: string, holder: string): Promise<LeaseReply> {
    if (!(await this.unsealed())) return { status: 'sealed' };
    return this.shard.leaseAccessor(accessor, mountHolder(holder));
  }

  // ---- PeerShard: token tree operations ----
  storeToken(token: string, entry: TokenEntry, random = false): Promise<void> {
    return this.shard.storeToken(token, entry, random);
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
  /** RPC errors lose their class: a refused renewal travels as data (see renewed()). */
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
    await this.shard.tick();
  }

  // ---- response wrapping ----

  /** Creates a wrapping token of this shard holding a wrapped response. */
  async wrap(token: string, record: WrappedResponse): Promise<{ accessor: string }> {
    if (shardFor(token, this.shards) !== this.shardNo) throw new Error('wrapping token stored on the wrong shard');
    return this.shard.wrap(token, record);
  }

  /** Spends a wrapping token and returns what it held; null when it is not a live wrapping token (or sealed). */
  async unwrap(token: string): Promise<WrappedResponse | null> {
    if (!(await this.unsealed())) return null;
    return this.shard.unwrap(token);
  }

  /** What a live wrapping token holds, without spending it (lookup, rewrap). */
  async peekWrapped(token: string): Promise<WrappedResponse | null> {
    if (!(await this.unsealed())) return null;
    return (await this.shard.peekWrapped(token))?.record ?? null;
  }

  /** The caller a live wrapping token stands for, without spending it; null for any other token. */
  async wrappingAuth(token: string): Promise<AuthContext | null> {
    if (!(await this.unsealed())) return null;
    const peeked = await this.shard.peekWrapped(token);
    return peeked ? authContextFor(peeked.stored.entry) : null;
  }

  /**
   * Resolves the token of a request that will itself spend it (sys/wrapping/unwrap, lookup): a
   * wrapping token is not used up here; any other token is resolved as usual.
   */
  async resolveForUnwrap(token: string): Promise<Resolution> {
    if (!(await this.unsealed())) return { sealed: true, auth: null };
    const peeked = await this.shard.peekWrapped(token);
    return peeked ? { sealed: false, auth: authContextFor(peeked.stored.entry) } : this.resolve(token);
  }

  // ---- secret leases owned by tokens (held by mount objects) ----

  /** A mount recorded leases issued to this token; its revocation must reach that mount. */
  async registerLeaseHolder(accessor: string, mountUuid: string): Promise<void> {
    await this.barrier.put(`token-leases/${accessor}/${mountUuid}`, new Uint8Array(0));
  }

  private async revokeTokenLeases(accessor: string): Promise<void> {
    for (const uuid of await this.barrier.list(`token-leases/${accessor}/`)) {
      await mountStub(this.env, uuid).revokeTokenLeases(accessor);
      await this.barrier.delete(`token-leases/${accessor}/${uuid}`);
    }
  }

  // ---- token roles live on shard 0 ----
  async getRole(name: string): Promise<TokenRole | null> {
    return getJSON<TokenRole>(this.barrier, `roles/${name}`);
  }
  async putRole(role: TokenRole): Promise<void> {
    await putJSON(this.barrier, `roles/${role.name}`, role);
  }
  async deleteRole(name: string): Promise<void> {
    await this.barrier.delete(`roles/${name}`);
  }
  async listRoles(): Promise<string[]> {
    return this.barrier.list('roles/');
  }

  // ---- auth/token/* ----

  /** A batch token's entry, if it opens and its parent (if any) is still alive. */
  private async openBatch(token: string): Promise<TokenEntry | null> {
    const entry = await decodeBatchToken(token, this.keyring);
    if (!entry || (entry.expireTime !== null && entry.expireTime <= Date.now())) return null;
    if (entry.parent && !(await this.peer(shardFor(entry.parent, this.shards)).lookupAccessor(entry.parent))) return null;
    return entry;
  }

  /**
   * For a token an auth method's login issued: that method's current limits (its role re-read) and
   * its mount's maximum TTL. Null for tokens of auth/token/. Throws when the method refuses.
   */
  private async loginRenewal(entry: TokenEntry): Promise<{ limits: RenewLimits; mountMaxTTL: number } | null> {
    if (!entry.path.startsWith('auth/') || entry.path.startsWith('auth/token/')) return null;
    const route = findRoute((await systemStub(this.env).routes()) ?? [], entry.path);
    // The method's mount is gone: its tokens were revoked with it, or are about to be.
    if (route?.table !== 'auth') throw badRequest('invalid token');
    const reply = await mountStub(this.env, route.uuid).renewLogin(route.prefix, entry.role);
    if (!reply.ok) throw new CofferError(reply.status, reply.errors);
    return { limits: reply.limits, mountMaxTTL: reply.mountMaxTTL };
  }

  private async mountConfig(): Promise<TokenMountConfig> {
    if (this.mountConfigCache && Date.now() - this.mountConfigCache.at < MOUNT_CONFIG_TTL_MS) return this.mountConfigCache.config;
    const config = await systemStub(this.env).tokenMountConfig();
    this.mountConfigCache = { config, at: Date.now() };
    return config;
  }

  /** auth/token/create of a service token (a child of the caller, which lives on this shard). */
  private async createService(partial: Omit<TokenEntry, 'accessor'>, id: string): Promise<{ token: string; entry: TokenEntry }> {
    const token = id || newServiceToken();
    const entry: TokenEntry = { ...partial, accessor: this.shard.tokens.accessorFor(token) };
    if (id && (await this.peer(shardFor(token, this.shards)).lookupToken(token))) throw badRequest('cannot create a token with a duplicate ID');
    await this.shard.create(token, entry, !id);
    return { token, entry };
  }

  private ops(caller: Caller | null): TokenOps {
    const peerOf = (tokenOrAccessor: string) => this.peer(shardFor(tokenOrAccessor, this.shards));
    const allShards = () => Array.from({ length: this.shards }, (_, n) => this.peer(n));
    return {
      caller: async () => caller,
      mountConfig: () => this.mountConfig(),
      issue: async (partial, id) => {
        const issued = partial.type === 'batch' ? await this.issueBatch(partial) : await this.createService(partial, id);
        countTokenCreation(this.metrics, { authMethod: 'token', mountPoint: TOKEN_MOUNT_POINT, ttl: issued.entry.ttl, type: issued.entry.type });
        return issued;
      },
      lookup: async (token) => (token.startsWith(BATCH_TOKEN_PREFIX) ? this.openBatch(token) : peerOf(token).lookupToken(token)),
      lookupAccessor: (accessor) => peerOf(accessor).lookupAccessor(accessor),
      revokeToken: (token) => peerOf(token).revokeToken(token),
      revokeAccessor: (accessor) => peerOf(accessor).revokeAccessor(accessor),
      revokeOrphan: (token) => peerOf(token).revokeOrphan(token),
      renewAccessor: async (accessor, increment, known) => {
        const entry = known ?? (await peerOf(accessor).lookupAccessor(accessor));
        const login = entry ? await this.loginRenewal(entry) : null;
        const mountMaxTTL = login?.mountMaxTTL ?? (await this.mountConfig()).maxLeaseTTL;
        const reply = await peerOf(accessor).renewAccessor(accessor, increment, mountMaxTTL, login?.limits);
        if (!reply.ok) throw new CofferError(reply.status, reply.errors);
        return { entry: reply.entry, ttl: reply.ttl, warnings: reply.warnings };
      },
      role: (name) => this.peer(0).getRole(name),
      putRole: (role) => this.peer(0).putRole(role),
      deleteRole: (name) => this.peer(0).deleteRole(name),
      roles: () => this.peer(0).listRoles(),
      accessors: async () => (await Promise.all(allShards().map((s) => s.accessors()))).flat().sort(),
      tidy: async () => {
        await Promise.all(allShards().map((s) => s.tidy()));
      },
      identityPolicies: async (entityId) => (await this.identity.viewOf(entityId))?.policies ?? [],
      entityForAlias: async (aliasName) => {
        const login = await this.identityClient.login({ mountAccessor: (await this.mountConfig()).accessor ?? '', mountPath: 'auth/token/', mountType: 'token', aliasName });
        return { entityId: login.entityId, disabled: login.disabled };
      },
    };
  }

  /** Validates the caller of an auth/token/* request (a token of this shard, or a batch token). */
  private async callerOf(token: string, clientIP: string): Promise<Caller | null> {
    let entry: TokenEntry | null;
    if (token.startsWith(BATCH_TOKEN_PREFIX)) entry = await this.openBatch(token);
    else {
      entry = (await this.shard.tokens.lookup(token))?.entry ?? null;
      if (entry && entry.numUses > 0 && !(await this.shard.use(token))) entry = null;
    }
    if (!entry) throw invalidToken();
    const exempt = entry.policies.includes('root') && entry.expireTime === null;
    if (!exempt && !allowedByCIDRs(entry.boundCidrs, clientIP)) throw permissionDenied();
    if (entry.accessor) await this.activity.note(entry);
    return { token, entry };
  }

  /** What sys/metrics gathers from this shard: its requests, and how many tokens it holds. */
  async metricsSnapshot(): Promise<MetricsSnapshot> {
    return this.metrics.snapshot([{ name: 'vault.token.count', labels: {}, value: this.serviceTokens() }]);
  }

  /** Service tokens stored here (wrapping tokens included, as in Vault's token counter). */
  serviceTokens(): number {
    return this.physical.count(TOKENS_PREFIX);
  }

  /** The clients this shard saw in each month ("YYYY-MM"), for sys/internal/counters/activity. */
  async activityMonths(months: string[]): Promise<Record<string, ActivityRecord[]>> {
    return this.activity.months(months);
  }

  /** How many months of client activity to keep (sys/internal/counters/config). */
  async setActivityRetention(months: number): Promise<void> {
    await this.activity.setRetention(months);
  }

  /** Serves auth/token/* for the caller's token (routed here by it). */
  async handle(token: string, prefix: string, wire: WireRequest): Promise<WireResult> {
    const timer = new RequestTimer(this.metrics, prefix, wire.operation);
    try {
      return await this.serve(token, prefix, wire, timer);
    } finally {
      timer.done();
    }
  }

  private async serve(token: string, prefix: string, wire: WireRequest, timer: RequestTimer): Promise<WireResult> {
    let trail: AuditTrail | null = null;
    try {
      if (!(await this.unsealed())) return { kind: 'error', status: 503, errors: ['Vault is sealed'] };
      const config = await this.mountConfig();
      const request: WireRequest = { ...wire, auth: null };
      const mount = { mountPoint: prefix, mountType: 'token', mountAccessor: config.accessor ?? '' };
      trail = new AuditTrail(this.audit, { wire: request, mount, token, nonHMACRequestKeys: config.auditNonHMACRequestKeys, nonHMACResponseKeys: config.auditNonHMACResponseKeys });
      const caller = token ? await this.callerOf(token, wire.clientIP) : null;
      const auth = caller ? authContextFor(caller.entry) : null;
      request.auth = auth;
      const response = await dispatch(
        tokenBackend(this.ops(caller)),
        request,
        {
          ...mount,
          mountConfig: { defaultLeaseTTL: config.defaultLeaseTTL, maxLeaseTTL: config.maxLeaseTTL },
          mountOptions: {},
        },
        prefixedTransaction(this.barrier.transaction(), 'logical/'),
        await authorizerFor(this.acls, auth, wire.wrapTTL),
        { wrap: wrapHook(this.wrapStore), audit: trail.hooks, resolved: timer.resolved },
      );
      return { kind: 'ok', response };
    } catch (e) {
      return errorResult(trail ? await trail.failed(e) : e);
    }
  }
}
