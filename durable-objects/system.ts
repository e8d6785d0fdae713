// SystemObject: the cluster singleton. Seal state and keyring, mount tables, and the sys/ backend.
// When the cluster seals or its keyring rotates it tells every other object to drop its keys
// (system-notices.ts). sys/ requests run through src/pipeline/serve.ts.

import type { TokenMountConfig } from '../src/auth/token/ops';
import { AclCache } from '../src/core/acl/cache';
import { PolicyStore } from '../src/core/acl/policy-store';
import { GoverningStore, type GoverningSet } from '../src/core/sentinel/governing';
import { AuditBroker, type AuditDeviceRef } from '../src/core/audit/broker';
import { UNAUDITED_SYS_PATHS } from '../src/core/audit/paths';
import { AuditTable } from '../src/core/audit/table';
import type { KeyringWire } from '../src/core/barrier/keyring';
import { sealFromSecret, type Seal } from '../src/core/barrier/seal';
import { SealState } from '../src/core/barrier/seal-state';
import { IdentityCache } from '../src/core/identity/cache';
import type { AuthMountInfo } from '../src/core/identity/types';
import { MetricsRegistry } from '../src/core/metrics/registry';
import { countAuditFailure } from '../src/core/metrics/requests';
import { MountService } from '../src/core/mounts/service';
import { effectiveTTLs, routePrefix, type RouteEntry } from '../src/core/mounts/table';
import { Mutex } from '../src/core/mutex';
import { shardFor } from '../src/core/tokens/entry';
import { WrappingJwtKeys } from '../src/core/tokens/wrapping-jwt';
import { matchesSpecialPath, type AuthContext, type WireOperation } from '../src/framework/backend';
import { formatRFC3339Nano } from '../src/framework/duration';
import { CofferError, drSecondaryError, sealedError } from '../src/framework/errors';
import { AuditTrail } from '../src/pipeline/audit-trail';
import { resolvedByWorker } from '../src/pipeline/caller';
import { relativePath, type MountContext, type WireRequest } from '../src/pipeline/dispatch';
import { errorResult, type WireResult } from '../src/pipeline/result';
import { serve, type Host, type Route, type Scope, type ServePorts } from '../src/pipeline/serve';
import { storeWrapped, wrapHook } from '../src/pipeline/wrapping';
import type { SystemContract } from '../src/rpc/contracts';
import { tokenShardCount, type Env } from '../src/rpc/env';
import { allTokenShards, auditStub, mountStub, tokenShardStub, wrapStore } from '../src/rpc/stubs';
import { availableType, builtinPlugins, isReservedMountType } from '../src/registry';
import { PluginCatalog, resolvePlugin } from '../src/core/plugins/catalog';
import { pluginProblem, type PluginDirectory } from '../src/core/plugins/directory';
import { systemBackend } from '../src/sys';
import type { CapabilitySubject } from '../src/sys/context';
import { DR_SECONDARY_SYS_PATHS, SYS_SEALED_PATHS } from '../src/sys/special-paths';
import { isManagedKeySealType, managedKeySealFromEnv } from '../src/managed-keys/seal';
import { ManagedKeyStore } from '../src/managed-keys/store';
import type { ManagedKeyRef } from '../src/managed-keys/resolve';
import type { ManagedKeyEntry } from '../src/managed-keys/types';
import { auditSender } from './audit';
import { managedKeyDeps } from './managed-key-deps';
import { pluginStoreOf } from './plugin-store';
import { IdentityClient } from './identity-client';
import { SqlPhysical } from './sqlite-physical';
import { replicate, ReplicatedObject } from './replica-ops';
import { LocalState } from './replication-log';
import { SystemReplication } from './system-replication';
import { servesRequests } from '../src/core/replication/state';
import { leaseCall } from './system-leases';
import { gatherMetrics } from './system-metrics';
import { Notices, type Target } from './system-notices';

const SYS: Route = { prefix: 'sys/' };
const SYS_MOUNT: MountContext = {
  mountPoint: 'sys/',
  mountType: 'system',
  mountAccessor: '',
  mountConfig: effectiveTTLs({ default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false }),
  mountOptions: {},
};
const readsOnly = (op: WireOperation) => op === 'read' || op === 'list' || op === 'help';

/** How often a caught-up DR secondary asks its primary for more (its replication lag, at rest). */
const FOLLOW_EVERY_MS = 200;
/** After a failed round (primary unreachable, credential refused). */
const FOLLOW_RETRY_MS = 2_000;

/**
 * The seal SEAL_TYPE names: "static" (default, SEAL_KEY), "pkcs11" (an HSM key through the HSM
 * bridge), or "awskms" / "azurekeyvault" / "gcpckms" (a cloud KMS key, SEAL_MANAGED_KEY). A
 * misconfiguration leaves the cluster sealed with `sealConfigError` as the reason.
 */
function sealFor(env: Env, initialized: () => boolean): { seal: Seal | null; sealConfigError?: string } {
  const type = (env.SEAL_TYPE ?? '').trim().toLowerCase() || 'static';
  if (isManagedKeySealType(type)) {
    const { seal, error } = managedKeySealFromEnv(type, env, () => managedKeyDeps(env), { initialized });
    return { seal, sealConfigError: error };
  }
  if (type !== 'static') {
    return {
      seal: null,
      sealConfigError: `SEAL_TYPE=${env.SEAL_TYPE}: the seal types are "static" (the default, with SEAL_KEY), "pkcs11" (an HSM key through HSM_BRIDGE), and "awskms", "azurekeyvault" and "gcpckms" (a cloud KMS key described by SEAL_MANAGED_KEY)`,
    };
  }
  try {
    return { seal: sealFromSecret(env.SEAL_KEY) };
  } catch (e) {
    return { seal: null, sealConfigError: (e as Error).message };
  }
}

/** The plugin directory and how messages name it (the launcher's folder wins over the R2 bucket, as in pluginStoreOf). */
function pluginDirectoryOf(env: Env): PluginDirectory | null {
  const store = pluginStoreOf(env);
  if (!store) return null;
  return { store, label: env.PLUGIN_DIR ? 'the plugin directory (COFFER_PLUGIN_DIR)' : 'the plugin directory (the R2 bucket bound as PLUGINS)' };
}

export class SystemObject extends ReplicatedObject<Env> implements SystemContract {
  /** This instance's start (sys/host-info) and its requests since (sys/metrics). */
  readonly #startedAt = Date.now();
  readonly #metrics = new MetricsRegistry(this.#startedAt);
  readonly #core: SealState;
  readonly #mounts: MountService;
  readonly #policies: PolicyStore;
  readonly #governing: GoverningStore;
  readonly #replication: SystemReplication;
  /** The cluster's key for wrapping tokens in JWT form (DR activation tokens). */
  readonly #wrapJwt: WrappingJwtKeys;
  readonly #acls: AclCache;
  /** The audit table (tests reach it by this name). */
  private readonly audit: AuditTable;
  readonly #auditBroker: AuditBroker;
  readonly #notices: Notices;
  /** Every state change is serialised (unseal progress, init, tables, ...). */
  readonly #writes = new Mutex();
  readonly #ports: ServePorts;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const physical = new SqlPhysical(ctx.storage);
    const own = replicate(this, physical);
    const { seal, sealConfigError } = sealFor(env, () => this.#core.isInitialized());
    const replication = (this.#replication = new SystemReplication({
      own,
      local: new LocalState(ctx.storage.sql),
      seal,
      env,
      mounts: async () => (await this.#mounts.objectEntries()).map((e) => e.uuid),
      audits: async () => (await this.audit.refs()).map((r) => r.uuid),
      wakeAt: (at) => this.#wakeAt(at),
      refresh: async () => {
        this.#core.forgetKeys();
        this.#mounts.forget();
        this.#wrapJwt.forget();
        this.#acls.clear();
        this.#auditBroker.invalidate();
      },
    }));
    this.#notices = new Notices(physical, env, (at) => this.#wakeAt(at));
    const core = (this.#core = new SealState(
      physical,
      seal,
      {
        createRootToken: async (token) => {
          await this.#shardOf(token).createRoot(token);
        },
        keyringRotated: async () => this.#notices.send(await this.#keyHolders(), 'dropKeys'),
      },
      { devRootToken: env.DEV_ROOT_TOKEN, sealConfigError },
    ));
    const wrapJwt = (this.#wrapJwt = new WrappingJwtKeys(core.barrier));
    const pluginDir = pluginDirectoryOf(env);
    const mounts = (this.#mounts = new MountService(core.barrier, {
      provision: async (entry) => {
        await mountStub(env, entry.uuid).provision(entry);
        await replication.provisioned(`mount/${entry.uuid}`);
      },
      revokeLeases: (entry) => mountStub(env, entry.uuid).revokeAllLeases(),
      destroy: (entry) => mountStub(env, entry.uuid).destroy(),
      typeInfo: (type) => availableType(type, env.COFFER_TEST_ENGINES === '1'),
      // Mounts resolve plugins from what the catalog has committed (catalog writes commit with their request).
      plugins: {
        resolve: (table, name, version) => resolvePlugin(new PluginCatalog(core.barrier), table, name, version),
        problem: (name, ref) => pluginProblem(pluginDir, name, ref),
      },
    }));
    const policies = (this.#policies = new PolicyStore(core.barrier));
    const governing = (this.#governing = new GoverningStore(core.barrier));
    this.audit = new AuditTable(core.barrier, {
      provision: async (uuid, options) => {
        await auditStub(env, uuid).provision(uuid, options);
        await replication.provisioned(`audit/${uuid}`);
      },
      destroy: (uuid) => auditStub(env, uuid).destroy(),
      changed: () => this.#auditChanged(),
      head: (uuid) => auditStub(env, uuid).head(),
      hash: async (uuid, input) => {
        const reply = await auditStub(env, uuid).hash(input);
        if (!reply.ok) throw new Error(reply.error);
        return reply.hash;
      },
    });
    const sender = auditSender(env);
    this.#auditBroker = new AuditBroker({
      devices: () => this.auditDevices(),
      send: (device, input) => sender.send(device, input),
      failed: (type) => countAuditFailure(this.#metrics, type),
    });
    const identity = new IdentityClient(env, { locate: () => this.identityMountUuid() });
    const acls = (this.#acls = new AclCache((names) => policies.texts(names), {
      identity: new IdentityCache(identity.views),
      governing: () => this.governingPolicies(),
    }));
    const allShards = () => allTokenShards(env);
    const backend = systemBackend({
      core,
      mounts,
      sealCluster: () => this.#sealCluster(),
      leaseCall: async (op) => await leaseCall(env, await mounts.routes(), op),
      policies,
      governing,
      policiesChanged: () => this.#policiesChanged(),
      managedKeysChanged: async () => this.#notices.send((await this.#mounts.objectEntries()).map((e) => ({ mount: e.uuid })), 'managedKeysChanged'),
      tokenPolicies: (ref) => this.#tokenPolicies(ref),
      capabilities: async ({ policies, entityId }, paths) => {
        const acl = await acls.aclFor({ policies, root: policies.includes('root'), entityId } as AuthContext);
        return Object.fromEntries(paths.map((p) => [p.replace(/^\//, ''), acl.capabilities(p.replace(/^\//, ''))]));
      },
      sudoOn: async (auth, path) => {
        if (!auth) return false;
        return (await acls.aclFor(auth)).check({ operation: 'update', path, data: {}, wrapTTL: 0 }).sudo;
      },
      canSee: async (auth, prefix) => (auth ? (await acls.aclFor(auth)).hasAccessUnder(prefix) : false),
      audit: this.audit,
      metrics: () => gatherMetrics(env, this.#metrics, mounts, () => core.isSealed()),
      serviceTokens: async () => (await Promise.all(allShards().map((shard) => shard.serviceTokens()))).reduce((a, b) => a + b, 0),
      activity: async (months) => {
        const parts = await Promise.all(allShards().map((shard) => shard.activityMonths(months)));
        return Object.fromEntries(months.map((m) => [m, parts.flatMap((p) => p[m] ?? [])]));
      },
      setActivityRetention: async (months) => {
        await Promise.all(allShards().map((shard) => shard.setActivityRetention(months)));
      },
      startedAt: this.#startedAt,
      managedKeyDeps: managedKeyDeps(this.env),
      plugins: { directory: pluginDir, builtins: builtinPlugins(), isBuiltinName: isReservedMountType },
      replication,
      wrapping: {
        unwrap: (token) => this.#shardOf(token).unwrap(token),
        peek: (token) => this.#shardOf(token).peekWrapped(token),
        store: (record) => storeWrapped(record, wrapStore(env)),
        revoke: async (token) => {
          await this.#shardOf(token).revokeToken(token);
        },
        now: () => formatRFC3339Nano(Date.now()),
      },
    });
    // sys/ requests write to the SystemObject's barrier; their order is the whole request's (admit).
    const scope: Scope = { transaction: () => core.barrier.transaction(), hooks: { wrap: wrapHook(wrapStore(env), (info, addr) => wrapJwt.sign(info, addr)) } };
    const host: Host = { backend, mount: SYS_MOUNT, acls, caller: resolvedByWorker, trail: (wire) => this.#sysTrail(wire), open: () => scope };
    this.#ports = {
      metrics: this.#metrics,
      locate: (_route, wire) => {
        if (matchesSpecialPath(SYS_SEALED_PATHS, relativePath(wire.path, 'sys/'))) return host;
        return core.isSealed().then((sealed) => {
          if (sealed) throw sealedError();
          return host;
        });
      },
      // Reads run freely; every state change is serialised.
      admit: (wire, run) => (readsOnly(wire.operation) ? run() : this.#writes.run(run)),
    };
  }

  /** A sys/ request; its caller was resolved by the Worker at the token's shard. */
  async handle(wire: WireRequest): Promise<WireResult> {
    if (!servesRequests(await this.#replication.state())) {
      // A DR secondary answers only what Vault's does: its replication endpoints and the health
      // and seal plumbing. Its token shards hold the primary's tokens, which it honours for
      // nothing: DR operation tokens and recovery key shares authorise what it does.
      if (!matchesSpecialPath(DR_SECONDARY_SYS_PATHS, relativePath(wire.path, 'sys/'))) return errorResult(drSecondaryError());
      wire = { ...wire, auth: null };
    }
    return await serve(this.#ports, SYS, wire, wire.auditToken ?? '');
  }

  /** The audit trail of a sys/ request; null for the paths Vault never audits. */
  #sysTrail(wire: WireRequest): AuditTrail | null {
    if (matchesSpecialPath(UNAUDITED_SYS_PATHS, relativePath(wire.path, 'sys/'))) return null;
    return new AuditTrail(this.#auditBroker, { wire, mount: SYS_MOUNT, token: wire.auditToken ?? '' });
  }

  /** A sys/ request the Worker refused (its token is not valid): recorded like any refusal. */
  async auditRefusal(wire: WireRequest, status: number, errors: string[]): Promise<WireResult> {
    const refusal = new CofferError(status, errors);
    return errorResult((await this.#sysTrail(wire)?.failed(refusal)) ?? refusal);
  }

  /** The wrapping token inside a JWT-form one, when this cluster signed it; null otherwise or while sealed. */
  async openWrappingJwt(token: string): Promise<string | null> {
    if (await this.#core.isSealed()) return null;
    return this.#wrapJwt.open(token);
  }

  /** The enabled audit devices, for every hosting object's broker; null while sealed. */
  async auditDevices(): Promise<AuditDeviceRef[] | null> {
    if (await this.#core.isSealed()) return null;
    return this.audit.refs();
  }

  async #auditChanged(): Promise<void> {
    this.#auditBroker.invalidate();
    await this.#notices.send(await this.#everyObject(), 'auditChanged');
  }

  /** Policy texts for the other objects' ACL caches; null while sealed. */
  async policyTexts(names: string[]): Promise<Record<string, string | null> | null> {
    if (await this.#core.isSealed()) return null;
    return this.#policies.texts(names);
  }

  /** Every RGP and EGP, for the other objects' enforcement; null while sealed. */
  async governingPolicies(): Promise<GoverningSet | null> {
    if (await this.#core.isSealed()) return null;
    return this.#governing.snapshot();
  }

  async #policiesChanged(): Promise<void> {
    this.#acls.clear();
    await this.#notices.send(await this.#everyObject(), 'policiesChanged');
  }

  /** Called by the identity mount's object after a change that existing tokens must see. */
  async identityChanged(): Promise<void> {
    await this.#policiesChanged();
  }

  /** The identity mount's object (its uuid never changes); null while sealed. */
  async identityMountUuid(): Promise<string | null> {
    if (await this.#core.isSealed()) return null;
    return (await this.#mounts.list('mounts')).find((e) => e.type === 'identity')?.uuid ?? null;
  }

  /** The auth mounts, for the identity engine (aliases live on auth mounts); null while sealed. */
  async authMounts(): Promise<AuthMountInfo[] | null> {
    if (await this.#core.isSealed()) return null;
    return (await this.#mounts.list('auth')).map((e) => ({ accessor: e.accessor, path: routePrefix(e), type: e.type, local: e.local }));
  }

  /** One managed key's entry, for the engines of other objects (src/managed-keys/access.ts); null while sealed. */
  async managedKeyEntry(ref: ManagedKeyRef): Promise<ManagedKeyEntry | null> {
    // In the write order: a mount told of a change (before it commits) fetches what it committed.
    return await this.#writes.run(async () => {
      if (await this.#core.isSealed()) return null;
      const store = new ManagedKeyStore(this.#core.barrier);
      return ref.id !== undefined ? await store.byId(ref.id) : await store.byName(ref.name);
    });
  }

  #shardOf(tokenOrAccessor: string) {
    return tokenShardStub(this.env, shardFor(tokenOrAccessor, tokenShardCount(this.env)));
  }

  async #tokenPolicies(ref: { token: string } | { accessor: string }): Promise<CapabilitySubject | null> {
    if ('token' in ref) {
      if (!ref.token) return null;
      const auth = (await this.#shardOf(ref.token).resolve(ref.token)).auth;
      return auth ? { policies: auth.policies, entityId: auth.entityId } : null;
    }
    if (!ref.accessor) return null;
    const entry = await this.#shardOf(ref.accessor).lookupAccessor(ref.accessor);
    return entry ? { policies: entry.policies, entityId: entry.entityId } : null;
  }

  /** The barrier keyring for the cluster's other objects; null while sealed. */
  async keyring(): Promise<KeyringWire | null> {
    try {
      return (await this.#core.get()).toWire();
    } catch {
      return null;
    }
  }

  /** The auth/token/ mount's effective settings, for token-store shards creating tokens. */
  async tokenMountConfig(): Promise<TokenMountConfig> {
    const entry = await this.#mounts.get('auth', 'token');
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
  /** The mount routes; null while sealed; 'dr-secondary' when this cluster serves no requests. */
  async routes(): Promise<RouteEntry[] | null | 'dr-secondary'> {
    if (!servesRequests(await this.#replication.state())) return 'dr-secondary';
    if (await this.#core.isSealed()) return null;
    return this.#mounts.routes();
  }

  // ---- telling the other objects ----

  /** Every object holding keys: all objects, and the audit devices (a keyring and a salt each). */
  async #keyHolders(): Promise<Target[]> {
    return [...(await this.#everyObject()), ...(await this.audit.refs()).map((d) => ({ audit: d.uuid }))];
  }

  override async alarm(): Promise<void> {
    await this.#notices.retry();
    await this.#follow();
  }

  /** One alarm serves the notices' retries and a DR secondary's following: the earlier time wins. */
  async #wakeAt(at: number): Promise<void> {
    const current = await this.ctx.storage.getAlarm();
    if (current === null || at < current) await this.ctx.storage.setAlarm(at);
  }

  /**
   * A DR secondary follows its primary: rounds back to back while there is more (for at most a
   * few seconds per alarm), then a round every FOLLOW_EVERY_MS; a failed round retries later.
   */
  async #follow(): Promise<void> {
    const until = Date.now() + 5_000;
    for (;;) {
      const more = await this.#replication.followRound();
      if (more === null) return;
      if (more === 'failed') {
        await this.#wakeAt(Date.now() + FOLLOW_RETRY_MS);
        return;
      }
      if (!more || Date.now() > until) {
        await this.#wakeAt(Date.now() + FOLLOW_EVERY_MS);
        return;
      }
    }
  }

  async #everyObject(): Promise<Target[]> {
    const shards = Array.from({ length: tokenShardCount(this.env) }, (_, shard) => ({ shard }));
    return [...shards, ...(await this.#mounts.objectEntries()).map((e) => ({ mount: e.uuid }))];
  }

  /** sys/seal: seal, then make every object forget its keys, token leases and cached entries. */
  async #sealCluster(): Promise<void> {
    // Read while the audit table can still be read: sealing locks it behind the barrier.
    const targets = await this.#keyHolders();
    await this.#core.sealNow();
    this.#mounts.forget();
    this.#wrapJwt.forget();
    await this.#notices.send(targets, 'dropKeys');
  }
}
