// MountObject: one per mount. Hosts the mount's backend over barrier storage in its own SQLite
// database and serialises the mount's writes (KV cas, rotations, serial numbers need no locks).
// It validates the caller's token itself, under a lease from the token's shard, so a request
// costs the Worker one call; and it keeps the leases of the secrets its engine issues, driving
// their expiry and retried revocation from its alarm.

import { DurableObject } from 'cloudflare:workers';
import { authorizerFor } from '../src/pipeline/authorizer';
import { AclCache } from '../src/core/acl/cache';
import { IdentityCache } from '../src/core/identity/cache';
import { clearNotice, identityLogin, identityViews, pendingNotice, type IdentityLoginInput, type IdentityView } from '../src/engines/identity';
import { CachedMountDirectory } from '../src/engines/identity/mount-directory';
import type { AuditBroker } from '../src/core/audit/broker';
import { AuditTrail } from '../src/pipeline/audit-trail';
import { BarrierStorage } from '../src/core/barrier/barrier';
import { GroupedWrites } from '../src/core/barrier/grouped-writes';
import { LEASES_PREFIX, LeaseManager, leaseData } from '../src/core/leases/mount-leases';
import { MetricsRegistry, type MetricsSnapshot } from '../src/core/metrics/registry';
import { countTokenCreation, RequestTimer } from '../src/core/metrics/requests';
import { dispatch, isUnauthenticatedPath, relativePath, type MountContext, type WireRequest } from '../src/pipeline/dispatch';
import { effectiveTTLs, routePrefix, type MountEntry } from '../src/core/mounts/table';
import { Mutex } from '../src/core/mutex';
import { TokenValidator } from '../src/core/tokens/validator';
import { newServiceToken, shardFor } from '../src/core/tokens/entry';
import { loginTokenEntry } from '../src/pipeline/login';
import { loginAuthBlock } from '../src/auth/token/auth-block';
import { LoginIdentityCache } from '../src/core/identity/login-cache';
import { errorResult, type WireResult } from '../src/rpc/wire';
import type { Env } from '../src/rpc/env';
import { maxEntrySize, tokenShardCount, transitBatchBudgetMs } from '../src/rpc/env';
import { matchesSpecialPath, type AuthContext, type Backend, type EntityView, type LogicalResponse, type RenewLimits } from '../src/framework/backend';
import { badRequest, CofferError, invalidToken, permissionDenied } from '../src/framework/errors';
import { getJSON, prefixedTransaction, PrefixedStorage, putJSON } from '../src/framework/storage';
import { backendType } from '../src/registry';
import { remoteAuditBroker } from './audit';
import { IdentityClient, type IdentityLoginReply } from './identity-client';
import { RemoteKeyring } from './keyring-client';
import { LATEST_ALARM, SqlPhysical } from './sqlite-physical';
import { systemStub, tokenShardStub, wrapStore } from '../src/rpc/stubs';
import { wrapHook } from '../src/pipeline/wrapping';

const ENTRY_KEY = 'core/mount-entry';
/** Engine data lives under this prefix, apart from the object's own bookkeeping. */
const LOGICAL_PREFIX = 'logical/';
/** Markers of tokens that keep data here (cubbyhole): core/token-data/<accessor>. */
const TOKEN_DATA = 'core/token-data/';

interface Hosted {
  entry: MountEntry;
  backend: Backend;
  context: MountContext;
  leases: LeaseManager;
}

const earliest = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : Math.min(a, b));

const isLegacyUnwrap = (wire: WireRequest, prefix: string): boolean =>
  wire.operation === 'read' && wire.wrapTTL === 0 && relativePath(wire.path, prefix) === 'response';

/** RPC errors lose their class: a refused renewal travels as data. */
export type RenewReply = { ok: true; limits: RenewLimits; mountMaxTTL: number } | { ok: false; status: number; errors: string[] };

export class MountObject extends DurableObject<Env> {
  private readonly keyring: RemoteKeyring;
  private readonly physical: SqlPhysical;
  /** Writes of requests served together are committed together (src/core/barrier/grouped-writes.ts). */
  private readonly grouped: GroupedWrites;
  /** Storage for everything but handle(): it sees and orders after every staged write. */
  private readonly barrier: BarrierStorage;
  /** Storage for handle(), whose replies wait for grouped.durable(). */
  private readonly requestBarrier: BarrierStorage;
  private readonly writes = new Mutex();
  private readonly validator: TokenValidator;
  private readonly acls: AclCache;
  /** Entity views (shared with the ACL cache, cleared with it on identity changes). */
  private readonly entityViews: IdentityCache;
  private readonly identity: IdentityClient;
  /** Entities behind this auth mount's recent logins (cleared with the ACLs on identity changes). */
  private readonly loginIdentities: LoginIdentityCache;
  /** Auth mounts by accessor, for the identity engine's aliases. */
  private readonly authMounts = new CachedMountDirectory(() => systemStub(this.env).authMounts());
  private readonly audit: AuditBroker;
  /** This object's requests and logins since it started (sys/metrics gathers it). */
  private readonly metrics = new MetricsRegistry();
  private entry: MountEntry | null | undefined;
  private hosted: Hosted | null = null;
  /** Accessors known to be registered as keeping data here. */
  private readonly tokenData = new Set<string>();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.keyring = new RemoteKeyring(() => systemStub(env).keyring());
    this.physical = new SqlPhysical(ctx.storage);
    // A flush that fails leaves memory ahead of storage: reset the object rather than serve it.
    this.grouped = new GroupedWrites(this.physical, (e) => ctx.abort(`storage write failed: ${e instanceof Error ? e.message : String(e)}`));
    this.barrier = new BarrierStorage(this.grouped.immediate, this.keyring, maxEntrySize(env));
    this.requestBarrier = new BarrierStorage(this.grouped.grouped, this.keyring, maxEntrySize(env));
    const holder = async () => (await this.loadEntry())?.uuid ?? '';
    this.validator = new TokenValidator({
      keys: this.keyring,
      leaseToken: async (token) => this.shardOf(token).lease(token, await holder()),
      leaseAccessor: async (accessor) => this.shardOf(accessor).leaseAccessor(accessor, await holder()),
    });
    this.identity = new IdentityClient(env, { self: async () => ((await this.loadEntry())?.type === 'identity' ? this : null) });
    this.entityViews = new IdentityCache(this.identity.views);
    this.acls = new AclCache((names) => systemStub(env).policyTexts(names), { identity: this.entityViews });
    this.loginIdentities = new LoginIdentityCache((input) => this.identity.login(input));
    this.audit = remoteAuditBroker(env, this.metrics);
  }

  private shardOf(tokenOrAccessor: string) {
    return tokenShardStub(this.env, shardFor(tokenOrAccessor, tokenShardCount(this.env)));
  }

  private async loadEntry(): Promise<MountEntry | null> {
    if (this.entry === undefined) this.entry = await getJSON<MountEntry>(this.barrier, ENTRY_KEY);
    return this.entry;
  }

  /** The backend, mount context and lease manager for the current entry. */
  private host(entry: MountEntry): Hosted {
    if (this.hosted?.entry !== entry) {
      const type = backendType(entry.type);
      if (!type?.create) throw new Error(`mount type ${entry.type} cannot run in a MountObject`);
      const backend = type.create(entry.options, {
        authMounts: this.authMounts,
        googleAdminApi: this.env.GOOGLE_ADMIN_API_URL,
        microsoftGraph: this.env.MICROSOFT_GRAPH_URL,
        transitBatchBudgetMs: transitBatchBudgetMs(this.env),
      });
      const mountPoint = routePrefix(entry);
      this.hosted = {
        entry,
        backend,
        context: {
          mountPoint,
          mountType: entry.type,
          mountAccessor: entry.accessor,
          mountConfig: effectiveTTLs(entry.config),
          mountOptions: entry.options ?? {},
        },
        leases: new LeaseManager(this.barrier, mountPoint, {
          secretType: (name) => backend.secretTypes?.[name],
          engineStorage: () => new PrefixedStorage(this.barrier, LOGICAL_PREFIX),
          registerToken: (accessor) => this.shardOf(accessor).registerLeaseHolder(accessor, entry.uuid),
          wakeAt: (at) => this.wakeAt(at),
        }),
      };
    }
    return this.hosted;
  }

  private async hostedNow(): Promise<Hosted> {
    const entry = await this.loadEntry();
    if (!entry) throw badRequest('mount not found');
    return this.host(entry);
  }

  private async wakeAt(when: number): Promise<void> {
    // Durable Object alarms stop at 2189: a later wish (a century-long rotation period) wakes the
    // object then, and its timed work asks again.
    const at = Math.min(when, LATEST_ALARM);
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }

  override async alarm(): Promise<void> {
    const entry = await this.loadEntry().catch(() => null);
    if (!entry) return;
    if (entry.type === 'identity') await this.writes.run(() => this.announceIdentityChange());
    const hosted = this.host(entry);
    const next = await this.writes.run(async () => earliest(await hosted.leases.tick(), await this.runPeriodic(hosted)));
    if (next !== null) await this.wakeAt(next);
  }

  /**
   * The backend's own timed work (Backend.periodic), in a transaction of its own. Callers hold
   * the write mutex. A throw leaves nothing half-done; from the alarm it makes the alarm retry.
   */
  private async runPeriodic(hosted: Hosted): Promise<number | null> {
    if (!hosted.backend.periodic) return null;
    const tx = this.barrier.transaction();
    const next = await hosted.backend.periodic(prefixedTransaction(tx, LOGICAL_PREFIX), Date.now());
    await tx.commit();
    return next;
  }

  /** Called by the SystemObject when the mount is enabled, tuned or moved. */
  async provision(entry: MountEntry): Promise<void> {
    await this.writes.run(async () => {
      const previous = await this.loadEntry();
      await putJSON(this.barrier, ENTRY_KEY, entry);
      this.entry = entry;
      // A backend with timed work may have some to do under its new settings (kv tuned to v2: the upgrade).
      if (this.host(entry).backend.periodic) await this.wakeAt(Date.now());
      // A moved mount's leases carry the new path in their ids, as in Vault.
      if (previous && routePrefix(previous) !== routePrefix(entry)) await this.host(entry).leases.rebase(routePrefix(previous));
    });
  }

  /**
   * First step of disabling the mount: revoke every lease through the engine. Returns an error
   * message when some could not be revoked (the disable then stops, and the mount stays).
   */
  async revokeAllLeases(): Promise<string | null> {
    return this.writes.run(async () => {
      const entry = await this.loadEntry();
      if (!entry) return null;
      const { failed } = await this.host(entry).leases.revokePrefix(routePrefix(entry), false);
      return failed.length > 0 ? `failed to revoke ${failed.length} lease(s) under ${routePrefix(entry)}; the mount was not disabled` : null;
    });
  }

  /** Last step of disabling the mount: erase every row and the alarm (deleteAll keeps alarms). */
  async destroy(): Promise<void> {
    await this.writes.run(async () => {
      await this.ctx.storage.deleteAlarm();
      // Staged writes belong before the erasure, not after it.
      this.grouped.flush();
      await this.ctx.storage.deleteAll();
      this.physical.createSchema();
      this.entry = null;
      this.hosted = null;
    });
  }

  /** Called when the cluster seals or the keyring rotates: forget keys, entry and token leases. */
  async dropKeys(): Promise<void> {
    this.keyring.drop();
    this.barrier.forgetOpened();
    this.requestBarrier.forgetOpened();
    this.entry = undefined;
    this.validator.leases.clear();
    this.acls.clear();
    this.loginIdentities.clear();
  }

  /** Called by the SystemObject when a policy changed: compiled ACLs are stale. */
  async policiesChanged(): Promise<void> {
    this.acls.clear();
    this.loginIdentities.clear();
  }

  /** Called by the SystemObject when an audit device was enabled or disabled. */
  async auditChanged(): Promise<void> {
    this.audit.invalidate();
  }

  /** Called by a token's shard when the token was revoked. */
  async forgetToken(accessor: string): Promise<void> {
    this.validator.leases.forgetAccessor(accessor);
  }

  // ---- leases (called by the SystemObject for sys/leases/*, and by token shards) ----

  private leaseCall(fn: (h: Hosted) => Promise<LogicalResponse>): Promise<WireResult> {
    return this.writes.run(async () => {
      try {
        return { kind: 'ok', response: await fn(await this.hostedNow()) };
      } catch (e) {
        return errorResult(e);
      }
    });
  }

  leaseLookup(id: string): Promise<WireResult> {
    return this.leaseCall(async (h) => ({ data: leaseData(await h.leases.lookup(id)) }));
  }

  leaseRenew(id: string, increment: number): Promise<WireResult> {
    return this.leaseCall(async (h) => {
      const lease = await h.leases.renew(id, increment, h.context.mountConfig.maxLeaseTTL);
      await this.wakeAt(lease.expireTime);
      return { leaseId: lease.id, lease: { ttl: Math.round((lease.expireTime - Date.now()) / 1000), renewable: lease.renewable } };
    });
  }

  leaseRevoke(id: string, force: boolean): Promise<WireResult> {
    return this.leaseCall(async (h) => {
      await h.leases.revoke(id, force);
      return {};
    });
  }

  leaseRevokePrefix(prefix: string, force: boolean): Promise<WireResult> {
    return this.leaseCall(async (h) => {
      const { failed } = await h.leases.revokePrefix(prefix, force);
      if (failed.length > 0) throw badRequest(`failed to revoke ${failed.length} lease(s) (will retry): ${failed.slice(0, 5).join(', ')}`);
      return {};
    });
  }

  leaseList(prefix: string): Promise<WireResult> {
    return this.leaseCall(async (h) => ({ data: { keys: await h.leases.list(prefix) } }));
  }

  leaseIrrevocable(): Promise<WireResult> {
    return this.leaseCall(async (h) => ({
      data: { leases: (await h.leases.irrevocable()).map((l) => ({ lease_id: l.id, error: l.revoking?.lastError ?? '' })) },
    }));
  }

  /**
   * A token was revoked or expired: end the leases issued to it and erase what the backend keeps
   * for it (a cubbyhole). Throws so the shard retries.
   */
  async revokeTokenLeases(accessor: string): Promise<void> {
    await this.writes.run(async () => {
      const entry = await this.loadEntry();
      if (!entry) return;
      const hosted = this.host(entry);
      await hosted.leases.revokeToken(accessor);
      if (hosted.backend.forgetToken) {
        await hosted.backend.forgetToken(accessor, new PrefixedStorage(this.barrier, LOGICAL_PREFIX));
        await this.barrier.delete(TOKEN_DATA + accessor);
        this.tokenData.delete(accessor);
      }
    });
  }

  /**
   * Before a token first writes to a backend that keeps data per token, this object registers
   * with the token's shard, so the token's revocation reaches it (and erases the data).
   */
  private async registerTokenData(accessor: string, uuid: string): Promise<void> {
    if (this.tokenData.has(accessor)) return;
    if (!(await this.barrier.get(TOKEN_DATA + accessor))) {
      await this.shardOf(accessor).registerLeaseHolder(accessor, uuid);
      await this.barrier.put(TOKEN_DATA + accessor, new Uint8Array(0));
    }
    if (this.tokenData.size >= 10_000) this.tokenData.clear();
    this.tokenData.add(accessor);
  }

  /** sys/leases/tidy: expire what is due and retry failed revocations now. */
  async leaseTidy(): Promise<void> {
    await this.alarm();
  }

  // ---- the identity mount (src/core/identity) ----

  /** Entity views for other objects' ACL caches (only the identity mount's object answers); null while sealed. */
  async identityViews(ids: string[]): Promise<Record<string, IdentityView | null> | null> {
    try {
      await this.identityOnly();
      return await identityViews(new PrefixedStorage(this.barrier, LOGICAL_PREFIX), ids);
    } catch (e) {
      if (e instanceof CofferError && e.status === 503) return null;
      throw e;
    }
  }

  /** An auth method's login: the entity behind an alias (created when new), in one transaction. */
  async identityLogin(input: IdentityLoginInput): Promise<IdentityLoginReply> {
    // Most logins change nothing (a known alias with the same metadata and groups): those are
    // answered from a look that writes nothing, without waiting for the writes. Any other one,
    // or a failed look, runs again below, serialised and committed.
    try {
      await this.identityOnly();
      const look = this.barrier.transaction();
      const result = await identityLogin(prefixedTransaction(look, LOGICAL_PREFIX), input);
      if (!look.dirty) return { ok: true, result };
    } catch {
      // Answered by the serialised run.
    }
    return this.writes.run(async () => {
      try {
        await this.identityOnly();
        const tx = this.barrier.transaction();
        const result = await identityLogin(prefixedTransaction(tx, LOGICAL_PREFIX), input);
        await tx.commit();
        await this.announceIdentityChange();
        return { ok: true, result };
      } catch (e) {
        const r = errorResult(e);
        return { ok: false, status: r.kind === 'error' ? r.status : 500, errors: r.kind === 'error' ? r.errors : ['identity mount unavailable'] };
      }
    });
  }

  private async identityOnly(): Promise<void> {
    if ((await this.loadEntry())?.type !== 'identity') throw new Error('this object does not host the identity mount');
  }

  /** Runs a write; on the identity mount, then passes on what it changed for existing tokens. */
  private async thenAnnounce<T>(entry: MountEntry, write: () => Promise<T>): Promise<T> {
    const result = await write();
    if (entry.type === 'identity') await this.announceIdentityChange();
    return result;
  }

  /** Tells the SystemObject about a committed identity change (retried from the alarm until it hears). */
  private async announceIdentityChange(): Promise<void> {
    const storage = new PrefixedStorage(this.barrier, LOGICAL_PREFIX);
    try {
      const nonce = await pendingNotice(storage);
      if (!nonce) return;
      await systemStub(this.env).identityChanged();
      await clearNotice(storage, nonce);
    } catch (e) {
      console.error('could not announce an identity change; will retry', e);
      await this.wakeAt(Date.now() + 1000);
    }
  }

  // ---- auth method logins ----

  /**
   * Turns a login handler's result into a token: the entity behind the alias (created when new),
   * then the token on its shard, then Vault's `auth` block in place of `response.login`.
   */
  private async issueLogin(response: LogicalResponse, entry: MountEntry, context: MountContext, path: string): Promise<void> {
    const login = response.login!;
    delete response.login;
    const identity = await this.loginIdentities.resolve({
      mountAccessor: entry.accessor,
      mountPath: context.mountPoint,
      mountType: entry.type,
      aliasName: login.aliasName,
      aliasMetadata: login.aliasMetadata,
      groupAliasNames: login.groupAliasNames,
    });
    if (identity.disabled) throw permissionDenied();
    const partial = loginTokenEntry(login, {
      mountPoint: context.mountPoint,
      mountConfig: context.mountConfig,
      mountTokenType: entry.config.token_type || 'default-service',
      path,
      entityId: identity.entityId,
      now: Date.now(),
    });
    const token = newServiceToken();
    const issued = await this.shardOf(token).issueLogin(token, partial);
    countTokenCreation(this.metrics, { authMethod: entry.type, mountPoint: context.mountPoint, ttl: issued.entry.ttl, type: issued.entry.type });
    response.auth = loginAuthBlock(issued.token, issued.entry, identity.policies);
  }

  /**
   * Limits for renewing a token this auth mount's login issued (the method re-reads its role),
   * with the mount's maximum TTL. `prefix` is the route the token store found the mount by.
   */
  async renewLogin(prefix: string, role: string): Promise<RenewReply> {
    try {
      const entry = await this.loadEntry();
      if (!entry) throw badRequest('invalid token');
      const hosted = this.host(entry);
      if (hosted.context.mountPoint !== prefix) throw badRequest('invalid token');
      const mountMaxTTL = hosted.context.mountConfig.maxLeaseTTL;
      if (!hosted.backend.renewLogin) return { ok: true, limits: { ttl: 0, maxTtl: 0, period: 0 }, mountMaxTTL };
      const limits = await hosted.backend.renewLogin(new PrefixedStorage(this.barrier, LOGICAL_PREFIX), role);
      return { ok: true, limits, mountMaxTTL };
    } catch (e) {
      const r = errorResult(e);
      return { ok: false, status: r.kind === 'error' ? r.status : 500, errors: r.kind === 'error' ? r.errors : ['auth mount unavailable'] };
    }
  }

  // ---- requests ----

  /** A token's entity for LogicalRequest.entity (engines' identity templates). */
  private async entityView(entityId: string): Promise<EntityView | null> {
    const e = (await this.entityViews.viewOf(entityId))?.context.entity;
    return e ? { id: e.id, name: e.name, aliases: e.aliases.map((a) => ({ mountAccessor: a.mountAccessor, name: a.name })) } : null;
  }

  /**
   * Vault's pre-sys/wrapping unwrap: reading cubbyhole/response with the wrapping token itself
   * (older clients still do). Audited like any request, before the token's single use is spent.
   * Null when the token is not a live wrapping token: the read then goes on as a normal one.
   */
  private async legacyUnwrap(wire: WireRequest, token: string, trail: AuditTrail): Promise<LogicalResponse | null> {
    const shard = this.shardOf(token);
    const auth = await shard.wrappingAuth(token);
    if (!auth) return null;
    wire.auth = auth;
    await trail.request({ operation: 'read' });
    const record = await shard.unwrap(token);
    // Another request spent it in between.
    if (!record) throw invalidToken();
    const response: LogicalResponse = { data: { response: record.response } };
    await trail.response(response);
    return response;
  }

  /**
   * Serves one request. `prefix` and `revision` are what the Worker routed by: if the mount has
   * since been disabled, moved or tuned, the answer is "gone" and the Worker re-reads its routes.
   */
  async handle(prefix: string, revision: number, wire: WireRequest, token: string): Promise<WireResult> {
    const timer = new RequestTimer(this.metrics, prefix, wire.operation);
    const result = await this.serve(prefix, revision, wire, token, timer);
    // No reply before what it wrote, or read from another request, is in SQLite: the output gate
    // then holds it until that is committed, as it would an ordinary write.
    await this.grouped.durable();
    if (result.kind === 'ok' || result.kind === 'error') timer.done();
    return result;
  }

  /** What sys/metrics gathers from this object: its requests, and the leases it keeps. */
  async metricsSnapshot(): Promise<MetricsSnapshot> {
    return this.metrics.snapshot([{ name: 'vault.expire.num_leases', labels: {}, value: this.physical.count(LEASES_PREFIX) }]);
  }

  private async serve(prefix: string, revision: number, wire: WireRequest, token: string, timer: RequestTimer): Promise<WireResult> {
    let trail: AuditTrail | null = null;
    try {
      const entry = await this.loadEntry();
      if (!entry) return { kind: 'gone' };
      const hosted = this.host(entry);
      const { backend, context } = hosted;
      if (context.mountPoint !== prefix || (entry.revision ?? 0) !== revision) return { kind: 'gone' };
      trail = new AuditTrail(this.audit, {
        wire,
        mount: context,
        token,
        nonHMACRequestKeys: entry.config.audit_non_hmac_request_keys,
        nonHMACResponseKeys: entry.config.audit_non_hmac_response_keys,
        // A device must not record a response whose writes could still be lost.
        beforeResponse: () => this.grouped.durable(),
      });
      if (entry.type === 'cubbyhole' && isLegacyUnwrap(wire, prefix) && token) {
        const unwrapped = await this.legacyUnwrap(wire, token, trail);
        if (unwrapped) return { kind: 'ok', response: unwrapped };
      }
      let auth: AuthContext | null = null;
      const unauthenticated = isUnauthenticatedPath(backend, relativePath(wire.path, prefix));
      timer.login = unauthenticated && entry.table === 'auth';
      if (token) {
        const v = await this.validator.validate(token, wire.clientIP);
        if (v.status === 'ok') auth = v.auth;
        else if (!unauthenticated) {
          throw v.status === 'cidr' ? permissionDenied() : invalidToken();
        }
      }
      wire.auth = auth;
      if (backend.forgetToken && auth?.accessor && wire.operation === 'write') await this.registerTokenData(auth.accessor, entry.uuid);
      const authorizer = await authorizerFor(this.acls, auth, wire.wrapTTL);
      // The earliest time the request asked the backend's periodic work to run at.
      let wake: number | null = null;
      const wakeAt = hosted.backend.periodic ? (at: number) => void (wake = wake === null ? at : Math.min(wake, at)) : undefined;
      const relPath = relativePath(wire.path, prefix);
      // Requests that declare they never write run beside the mount's writes instead of in turn:
      // reads (unless listed in writingReadPaths) and the backend's storage-free writes.
      const readOnly =
        ((wire.operation === 'read' || wire.operation === 'list' || wire.operation === 'help') && !matchesSpecialPath(backend.writingReadPaths, relPath)) ||
        (wire.operation === 'write' && matchesSpecialPath(backend.storageFreeWritePaths, relPath));
      const run = () => {
        const tx = this.requestBarrier.transaction();
        return dispatch(backend, wire, context, prefixedTransaction(tx, LOGICAL_PREFIX), authorizer, {
          beforeCommit: async (response) => {
            // A write outside the mount's order could be lost to a concurrent one: refuse it loudly.
            if (readOnly && (tx.dirty || response.secret)) {
              throw new Error(`${backend.type} ${wire.operation} of ${relPath} wrote to storage; its path belongs in writingReadPaths`);
            }
            if (response.login) await this.issueLogin(response, entry, context, wire.path);
            if (!response.secret) return;
            // The lease is written in the same transaction as whatever the handler wrote.
            const lease = await hosted.leases.create(tx, wire.path, response.secret, auth?.accessor ?? '', context.mountConfig);
            response.leaseId = lease.id;
            response.lease = { ttl: Math.round((lease.expireTime - lease.issueTime) / 1000), renewable: lease.renewable };
            delete response.secret;
            await this.wakeAt(lease.expireTime);
          },
          wrap: async (response, w, mount) => {
            // The wrapped copy is stored elsewhere: only once what it reports is written here.
            await this.grouped.durable();
            return wrapHook(wrapStore(this.env))(response, w, mount);
          },
          audit: trail?.hooks,
          wakeAt,
          entity: auth?.entityId ? () => this.entityView(auth.entityId) : undefined,
          resolved: timer.resolved,
          // Slow keys are made by the Worker, not here where they would stall the mount.
          preparesRsaPairs: true,
        });
      };
      try {
        const response = readOnly ? await run() : await this.writes.run(() => this.thenAnnounce(entry, run));
        return { kind: 'ok', response };
      } finally {
        if (wake !== null) await this.wakeAt(wake);
      }
    } catch (e) {
      return errorResult(trail ? await trail.failed(e) : e);
    }
  }
}
