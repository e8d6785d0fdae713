// SystemObject: the cluster singleton. Seal state and keyring, mount tables, and the sys/ backend.
// When the cluster seals or its keyring rotates it tells every other object to drop its keys,
// retrying from its alarm until each one has heard.

import { DurableObject } from 'cloudflare:workers';
import { dispatch, relativePath, type WireRequest } from '../src/pipeline/dispatch';
import { MountService } from '../src/core/mounts/service';
import { effectiveTTLs, findRoute, routePrefix, type RouteEntry } from '../src/core/mounts/table';
import type { LeaseOp } from '../src/sys/paths/leases';
import type { KeyringWire } from '../src/core/barrier/keyring';
import { sealFromSecret, type Seal } from '../src/core/barrier/seal';
import { SealState } from '../src/core/barrier/seal-state';
import { authorizerFor } from '../src/pipeline/authorizer';
import { AclCache } from '../src/core/acl/cache';
import { IdentityCache } from '../src/core/identity/cache';
import type { AuthMountInfo } from '../src/engines/identity';
import { PolicyStore } from '../src/core/acl/policy-store';
import type { TokenMountConfig } from '../src/auth/token/ops';
import { shardFor } from '../src/core/tokens/entry';
import { errorResult, type WireResult } from '../src/rpc/wire';
import { fromUtf8, utf8 } from '../src/crypto/encoding';
import { tokenShardCount, type Env } from '../src/rpc/env';
import { matchesSpecialPath, type AuthContext, type Backend, type LogicalResponse } from '../src/framework/backend';
import { badRequest, CofferError, sealedError } from '../src/framework/errors';
import { availableType, backendType } from '../src/registry';
import { systemBackend } from '../src/sys';
import type { CapabilitySubject } from '../src/sys/context';
import { SYS_SEALED_PATHS } from '../src/sys/special-paths';
import { Mutex } from '../src/core/mutex';
import { formatRFC3339Nano } from '../src/framework/duration';
import { storeWrapped } from '../src/pipeline/wrapping';
import { AuditBroker, type AuditDeviceRef } from '../src/core/audit/broker';
import { UNAUDITED_SYS_PATHS } from '../src/core/audit/paths';
import { AuditTable } from '../src/core/audit/table';
import { AuditTrail } from '../src/pipeline/audit-trail';
import { sendToDevice } from './audit';
import { IdentityClient } from './identity-client';
import { SqlPhysical } from './sqlite-physical';
import { allTokenShards, auditStub, mountStub, tokenShardStub, wrapStore } from '../src/rpc/stubs';
import { wrapHook } from '../src/pipeline/wrapping';
import { mergeSnapshots, MetricsRegistry, type Gauge, type MetricsSnapshot } from '../src/core/metrics/registry';
import { countAuditFailure, RequestTimer } from '../src/core/metrics/requests';

/**
 * Objects still to be notified (drop keys, drop policies): raw (not behind the barrier), because
 * the list must be readable after the seal. It holds only object names, nothing secret.
 */
const PENDING_DROPS_KEY = 'core/pending-key-drops';
const RETRY_MS = 1000;

/** An object to notify: a token shard by number, or a mount by uuid. */
/** Objects told about changes: token shards, mounts, and (for dropKeys only) audit devices. */
type Target = { shard: number } | { mount: string } | { audit: string };
/** What to tell it: drop cached keys (seal, rotation), drop compiled policies, re-read audit devices. */
type Message = 'dropKeys' | 'policiesChanged' | 'auditChanged';
type Pending = Target & { message: Message };

export class SystemObject extends DurableObject<Env> {
  /** This instance's start (sys/host-info) and its requests since (sys/metrics). */
  private readonly startedAt = Date.now();
  private readonly metrics = new MetricsRegistry(this.startedAt);
  private readonly physical: SqlPhysical;
  private readonly core: SealState;
  private readonly mounts: MountService;
  private readonly backend: Backend;
  private readonly writes = new Mutex();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.physical = new SqlPhysical(ctx.storage);
    let seal: Seal | null = null;
    let sealConfigError: string | undefined;
    try {
      seal = sealFromSecret(env.SEAL_KEY);
    } catch (e) {
      sealConfigError = (e as Error).message;
    }
    this.core = new SealState(
      this.physical,
      seal,
      {
        createRootToken: async (token) => {
          await tokenShardStub(env, shardFor(token, tokenShardCount(env))).createRoot(token);
        },
        keyringRotated: async () => this.dropKeys(await this.keyHolders()),
      },
      { devRootToken: env.DEV_ROOT_TOKEN, sealConfigError },
    );
    this.mounts = new MountService(this.core.barrier, {
      provision: (entry) => mountStub(env, entry.uuid).provision(entry),
      revokeLeases: (entry) => mountStub(env, entry.uuid).revokeAllLeases(),
      destroy: (entry) => mountStub(env, entry.uuid).destroy(),
      typeInfo: (type) => availableType(type, env.COFFER_TEST_ENGINES === '1'),
    });
    this.policies = new PolicyStore(this.core.barrier);
    this.audit = new AuditTable(this.core.barrier, {
      provision: (uuid, options) => auditStub(env, uuid).provision(uuid, options),
      destroy: (uuid) => auditStub(env, uuid).destroy(),
      changed: () => this.auditChanged(),
      head: (uuid) => auditStub(env, uuid).head(),
      hash: async (uuid, input) => {
        const reply = await auditStub(env, uuid).hash(input);
        if (!reply.ok) throw new Error(reply.error);
        return reply.hash;
      },
    });
    this.auditBroker = new AuditBroker({
      devices: () => this.auditDevices(),
      send: (device, input) => sendToDevice(env, device, input),
      failed: (type) => countAuditFailure(this.metrics, type),
    });
    const identity = new IdentityClient(env, { locate: () => this.identityMountUuid() });
    this.acls = new AclCache((names) => this.policies.texts(names), { identity: new IdentityCache(identity.views) });
    this.backend = systemBackend({
      core: this.core,
      mounts: this.mounts,
      sealCluster: () => this.sealCluster(),
      leaseCall: (op) => this.leaseCall(op),
      policies: this.policies,
      policiesChanged: () => this.policiesChanged(),
      tokenPolicies: (ref) => this.tokenPolicies(ref),
      capabilities: async ({ policies, entityId }, paths) => {
        const acl = await this.acls.aclFor({ policies, root: policies.includes('root'), entityId } as AuthContext);
        return Object.fromEntries(paths.map((p) => [p.replace(/^\//, ''), acl.capabilities(p.replace(/^\//, ''))]));
      },
      sudoOn: async (auth, path) => {
        if (!auth) return false;
        return (await this.acls.aclFor(auth)).check({ operation: 'update', path, data: {}, wrapTTL: 0 }).sudo;
      },
      canSee: async (auth, prefix) => (auth ? (await this.acls.aclFor(auth)).hasAccessUnder(prefix) : false),
      audit: this.audit,
      metrics: () => this.gatherMetrics(),
      serviceTokens: async () => (await Promise.all(allTokenShards(env).map((shard) => shard.serviceTokens()))).reduce((a, b) => a + b, 0),
      activity: async (months) => {
        const parts = await Promise.all(allTokenShards(env).map((shard) => shard.activityMonths(months)));
        return Object.fromEntries(months.map((m) => [m, parts.flatMap((p) => p[m] ?? [])]));
      },
      setActivityRetention: async (months) => {
        await Promise.all(allTokenShards(env).map((shard) => shard.setActivityRetention(months)));
      },
      startedAt: this.startedAt,
      wrapping: {
        unwrap: (token) => this.shardOf(token).unwrap(token),
        peek: (token) => this.shardOf(token).peekWrapped(token),
        store: (record) => storeWrapped(record, wrapStore(env)),
        revoke: async (token) => {
          await this.shardOf(token).revokeToken(token);
        },
        now: () => formatRFC3339Nano(Date.now()),
      },
    });
  }

  private readonly policies: PolicyStore;
  private readonly acls: AclCache;
  private readonly audit: AuditTable;
  private readonly auditBroker: AuditBroker;

  /**
   * sys/metrics: this object's requests, every token shard's and every mount object's, with the
   * gauges of the cluster (seal state, mount tables). An object that cannot answer is left out.
   */
  private async gatherMetrics(): Promise<MetricsSnapshot> {
    const entries = [...(await this.mounts.list('mounts')), ...(await this.mounts.list('auth'))];
    const tables = new Map<string, number>();
    for (const e of entries) {
      const key = `${e.table === 'auth' ? 'auth' : 'logical'}|${e.local}`;
      tables.set(key, (tables.get(key) ?? 0) + 1);
    }
    const gauges: Gauge[] = [{ name: 'vault.core.unsealed', labels: {}, value: (await this.core.isSealed()) ? 0 : 1 }];
    for (const [key, value] of tables) {
      const [type, local] = key.split('|');
      gauges.push({ name: 'vault.core.mount_table.num_entries', labels: { type, local }, value });
    }
    const others = await Promise.allSettled([
      ...allTokenShards(this.env).map((shard) => shard.metricsSnapshot()),
      ...(await this.mounts.objectEntries()).map((e) => mountStub(this.env, e.uuid).metricsSnapshot()),
    ]);
    return mergeSnapshots([this.metrics.snapshot(gauges), ...others.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))]);
  }

  /** The enabled audit devices, for every hosting object's broker; null while sealed. */
  async auditDevices(): Promise<AuditDeviceRef[] | null> {
    if (await this.core.isSealed()) return null;
    return this.audit.refs();
  }

  private async auditChanged(): Promise<void> {
    this.auditBroker.invalidate();
    await this.notify(await this.everyObject(), 'auditChanged');
  }

  /** Policy texts for the other objects' ACL caches; null while sealed. */
  async policyTexts(names: string[]): Promise<Record<string, string | null> | null> {
    if (await this.core.isSealed()) return null;
    return this.policies.texts(names);
  }

  private async policiesChanged(): Promise<void> {
    this.acls.clear();
    await this.notify(await this.everyObject(), 'policiesChanged');
  }

  /** Called by the identity mount's object after a change that existing tokens must see. */
  async identityChanged(): Promise<void> {
    await this.policiesChanged();
  }

  /** The identity mount's object (its uuid never changes); null while sealed. */
  async identityMountUuid(): Promise<string | null> {
    if (await this.core.isSealed()) return null;
    return (await this.mounts.list('mounts')).find((e) => e.type === 'identity')?.uuid ?? null;
  }

  /** The auth mounts, for the identity engine (aliases live on auth mounts); null while sealed. */
  async authMounts(): Promise<AuthMountInfo[] | null> {
    if (await this.core.isSealed()) return null;
    return (await this.mounts.list('auth')).map((e) => ({ accessor: e.accessor, path: routePrefix(e), type: e.type, local: e.local }));
  }

  private shardOf(token: string) {
    return tokenShardStub(this.env, shardFor(token, tokenShardCount(this.env)));
  }

  private async tokenPolicies(ref: { token: string } | { accessor: string }): Promise<CapabilitySubject | null> {
    const n = tokenShardCount(this.env);
    if ('token' in ref) {
      if (!ref.token) return null;
      const auth = (await tokenShardStub(this.env, shardFor(ref.token, n)).resolve(ref.token)).auth;
      return auth ? { policies: auth.policies, entityId: auth.entityId } : null;
    }
    if (!ref.accessor) return null;
    const entry = await tokenShardStub(this.env, shardFor(ref.accessor, n)).lookupAccessor(ref.accessor);
    return entry ? { policies: entry.policies, entityId: entry.entityId } : null;
  }

  /** The audit trail of a sys/ request; null for the paths Vault never audits. */
  private sysTrail(wire: WireRequest): AuditTrail | null {
    if (matchesSpecialPath(UNAUDITED_SYS_PATHS, relativePath(wire.path, 'sys/'))) return null;
    return new AuditTrail(this.auditBroker, { wire, mount: { mountPoint: 'sys/', mountType: 'system', mountAccessor: '' }, token: wire.auditToken ?? '' });
  }

  /** A sys/ request the Worker refused (its token is not valid): recorded like any refusal. */
  async auditRefusal(wire: WireRequest, status: number, errors: string[]): Promise<WireResult> {
    const refusal = new CofferError(status, errors);
    return errorResult((await this.sysTrail(wire)?.failed(refusal)) ?? refusal);
  }

  async handle(wire: WireRequest): Promise<WireResult> {
    const timer = new RequestTimer(this.metrics, 'sys/', wire.operation);
    try {
      return await this.serve(wire, timer);
    } finally {
      timer.done();
    }
  }

  private async serve(wire: WireRequest, timer: RequestTimer): Promise<WireResult> {
    const rel = relativePath(wire.path, 'sys/');
    const run = async (): Promise<WireResult> => {
      const trail = this.sysTrail(wire);
      try {
        if (!matchesSpecialPath(SYS_SEALED_PATHS, rel) && (await this.core.isSealed())) throw sealedError();
        const response = await dispatch(
          this.backend,
          wire,
          { mountPoint: 'sys/', mountType: 'system', mountAccessor: '', mountConfig: effectiveTTLs({ default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false }), mountOptions: {} },
          this.core.barrier.transaction(),
          await authorizerFor(this.acls, wire.auth, wire.wrapTTL),
          { wrap: wrapHook(wrapStore(this.env)), audit: trail?.hooks, resolved: timer.resolved },
        );
        return { kind: 'ok', response };
      } catch (e) {
        return errorResult(trail ? await trail.failed(e) : e);
      }
    };
    // Reads run freely; every state change is serialised (unseal progress, init, tables, ...).
    return wire.operation === 'read' || wire.operation === 'list' || wire.operation === 'help' ? run() : this.writes.run(run);
  }

  /** The barrier keyring for the cluster's other objects; null while sealed. */
  async keyring(): Promise<KeyringWire | null> {
    try {
      return (await this.core.get()).toWire();
    } catch {
      return null;
    }
  }

  /** The auth/token/ mount's effective settings, for token-store shards creating tokens. */
  async tokenMountConfig(): Promise<TokenMountConfig> {
    const entry = await this.mounts.get('auth', 'token');
    const ttls = effectiveTTLs(entry?.config ?? { default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false });
    return {
      ...ttls,
      tokenType: entry?.config.token_type || 'default-service',
      accessor: entry?.accessor ?? '',
      auditNonHMACRequestKeys: entry?.config.audit_non_hmac_request_keys ?? [],
      auditNonHMACResponseKeys: entry?.config.audit_non_hmac_response_keys ?? [],
    };
  }

  /** The routes the Worker caches; null while sealed. */
  async routes(): Promise<RouteEntry[] | null> {
    if (await this.core.isSealed()) return null;
    return this.mounts.routes();
  }

  // ---- leases live with the mounts that issued them ----
  private async leaseCall(op: LeaseOp): Promise<LogicalResponse> {
    const routes = await this.mounts.routes();
    const objects = routes.filter((r) => backendType(r.type)?.ownObject);
    const unwrap = (r: WireResult): LogicalResponse => {
      if (r.kind === 'ok') return r.response;
      if (r.kind === 'error') throw new CofferError(r.status, r.errors, r.extra);
      throw badRequest('invalid lease');
    };
    if (op.op === 'irrevocable') {
      const all = await Promise.all(objects.map(async (r) => unwrap(await mountStub(this.env, r.uuid).leaseIrrevocable()).data?.leases as unknown[]));
      const leases = all.flat();
      return { data: { leases, lease_count: leases.length } };
    }
    if (op.op === 'tidy') {
      await Promise.all(objects.map((r) => mountStub(this.env, r.uuid).leaseTidy()));
      return {};
    }
    const target = op.op === 'revoke-prefix' || op.op === 'list' ? op.prefix : op.id;
    const route = findRoute(objects, target);
    if (!route) {
      if (op.op === 'revoke-prefix') return {};
      if (op.op === 'list') return { data: { keys: [] } };
      throw badRequest('invalid lease');
    }
    const stub = mountStub(this.env, route.uuid);
    switch (op.op) {
      case 'lookup':
        return unwrap(await stub.leaseLookup(op.id));
      case 'renew':
        return unwrap(await stub.leaseRenew(op.id, op.increment));
      case 'revoke':
        return unwrap(await stub.leaseRevoke(op.id, op.force));
      case 'revoke-prefix':
        return unwrap(await stub.leaseRevokePrefix(op.prefix, op.force));
      case 'list':
        return unwrap(await stub.leaseList(op.prefix));
    }
  }

  // ---- telling the other objects to drop their keys ----
  private pendingNotices(): Pending[] {
    const raw = this.physical.get(PENDING_DROPS_KEY);
    return raw ? (JSON.parse(fromUtf8(raw)) as Pending[]) : [];
  }

  /** Notifies every target; the ones that fail stay pending and are retried from the alarm. */
  private async notify(targets: Target[], message: Message | null): Promise<void> {
    const all = [...this.pendingNotices(), ...(message ? targets.map((t) => ({ ...t, message })) : [])];
    this.physical.apply([{ key: PENDING_DROPS_KEY, value: utf8(JSON.stringify(all)) }]);
    const results = await Promise.allSettled(
      all.map((t) => {
        if ('audit' in t) return auditStub(this.env, t.audit).dropKeys();
        const stub = 'shard' in t ? tokenShardStub(this.env, t.shard) : mountStub(this.env, t.mount);
        if (t.message === 'auditChanged') return stub.auditChanged();
        return t.message === 'policiesChanged' ? stub.policiesChanged() : stub.dropKeys();
      }),
    );
    const failed = all.filter((_, i) => results[i].status === 'rejected');
    this.physical.apply([{ key: PENDING_DROPS_KEY, value: failed.length ? utf8(JSON.stringify(failed)) : null }]);
    if (failed.length > 0) {
      console.error(`${failed.length} object(s) could not be notified; retrying`);
      await this.ctx.storage.setAlarm(Date.now() + RETRY_MS);
    }
  }

  private dropKeys(targets: Target[]): Promise<void> {
    return this.notify(targets, 'dropKeys');
  }

  /** Every object holding keys: all objects, and the audit devices (a keyring and a salt each). */
  private async keyHolders(): Promise<Target[]> {
    return [...(await this.everyObject()), ...(await this.audit.refs()).map((d) => ({ audit: d.uuid }))];
  }

  override async alarm(): Promise<void> {
    await this.notify([], null);
  }

  private async everyObject(): Promise<Target[]> {
    const shards = Array.from({ length: tokenShardCount(this.env) }, (_, shard) => ({ shard }));
    return [...shards, ...(await this.mounts.objectEntries()).map((e) => ({ mount: e.uuid }))];
  }

  /** sys/seal: seal, then make every object forget its keys, token leases and cached entries. */
  private async sealCluster(): Promise<void> {
    // Read while the audit table can still be read: sealing locks it behind the barrier.
    const targets = await this.keyHolders();
    await this.core.sealNow();
    this.mounts.forget();
    await this.dropKeys(targets);
  }
}
