// MountObject: one per mount. Hosts the mount's backend over barrier storage in its own SQLite
// database and serialises the mount's writes (KV cas, rotations, serial numbers need no locks).
// It validates the caller's token itself, under a lease from the token's shard, so a request
// costs the Worker one call; and it keeps the leases of the secrets its engine issues, driving
// their expiry and retried revocation from its alarm. Requests run through src/pipeline/serve.ts.

import type { IdentityLoginInput, IdentityView } from '../src/core/identity/types';
import { andThen, type Maybe } from '../src/framework/steps';
import { LEASES_PREFIX } from '../src/core/leases/mount-leases';
import { MetricsRegistry, type MetricsSnapshot } from '../src/core/metrics/registry';
import { routePrefix, type MountEntry } from '../src/core/mounts/table';
import { Mutex } from '../src/core/mutex';
import { badRequest, drSecondaryError } from '../src/framework/errors';
import { getJSON, putJSON } from '../src/framework/storage';
import type { WireRequest } from '../src/pipeline/dispatch';
import { errorReply, errorResult, type WireResult } from '../src/pipeline/result';
import type { GrantOutcome } from '../src/framework/backend';
import { GrantLedger, settleGrant, volatileRead, type GrantReads, type GrantValues } from '../src/pipeline/offload';
import { serve, type Route, type ServePorts } from '../src/pipeline/serve';
import type { IdentityLoginReply, MountContract, RenewReply } from '../src/rpc/contracts';
import type { Env } from '../src/rpc/env';
import { systemStub } from '../src/rpc/stubs';
import { HostedMount, LOGICAL_PREFIX, TOKEN_DATA, type MountSite } from './hosted-mount';
import * as leases from './mount-lease-calls';
import type { LeaseCall } from './mount-lease-calls';
import { mountSite, type MountParts } from './mount-site';
import { announceIdentityChange, identityLoginOn, identityViewsOn } from './mount-identity';
import { ObjectStorage } from './object-storage';
import { following, replicate, ReplicatedObject } from './replica-ops';
import { loadPlugin } from './plugin-runtime';
import { LATEST_ALARM } from './sqlite-physical';

const ENTRY_KEY = 'core/mount-entry';
/** How soon the alarm tries again a plugin mount whose plugin did not load. */
const PLUGIN_RETRY_MS = 60_000;

const earliest = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : Math.min(a, b));

export class MountObject extends ReplicatedObject<Env> implements MountContract {
  readonly #storage: ObjectStorage;
  /** GroupedWrites of #storage, by this name for tests that watch a flush. */
  private readonly grouped;
  /** The mount's write order (tests hold it by this name). */
  private readonly writes = new Mutex();
  readonly #parts: MountParts;
  readonly #site: MountSite;
  readonly #ports: ServePorts;
  /** This object's requests and logins since it started (sys/metrics gathers it). */
  readonly #metrics = new MetricsRegistry();
  /** Handlers handed to the Worker: the state epoch and the grants not settled yet. */
  readonly #grants = new GrantLedger(LOGICAL_PREFIX, () => this.#hosted?.volatile ?? []);
  #entry: MountEntry | null | undefined;
  #hosted: HostedMount | null = null;
  /** A plugin mount's isolate being loaded for this entry (plugin-runtime.ts). */
  #loading: { entry: MountEntry; hosted: Promise<HostedMount> } | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const storage = (this.#storage = new ObjectStorage(ctx, env));
    replicate(this, storage.physical);
    storage.observeWrites((ops) => this.#grants.observe(ops));
    this.grouped = storage.grouped;
    this.#parts = mountSite(env, storage, this.writes, this.#metrics, {
      entry: () => this.#loadEntry(),
      self: this,
      wakeAt: (at) => this.#wakeAt(at),
      announceIdentityChange: () => this.#announceIdentityChange(),
    });
    this.#site = this.#parts.site;
    this.#ports = {
      metrics: this.#metrics,
      locate: (route) => this.#locate(route),
      // No reply before what it wrote, or read from another request, is in SQLite: the output gate
      // then holds it until that is committed, as it would an ordinary write.
      settle: () => storage.grouped.durable(),
      grants: this.#grants,
    };
  }

  /**
   * Values a handed-off handler reads (src/pipeline/offload.ts), as requests here would read them;
   * null when the grant is unknown or its state is no longer current.
   */
  async grantRead(id: string, reads: GrantReads): Promise<GrantValues | null> {
    const hosted = this.#hosted;
    if (following(this) || !hosted || !this.#grants.current(id) || volatileRead(hosted.backend.offloadVolatile ?? [], reads)) return null;
    const values: GrantValues = { get: {}, list: {} };
    for (const key of reads.get) values.get[key] = await hosted.requestStorage.get(key);
    for (const folder of reads.list) values.list[folder] = await hosted.requestStorage.list(folder);
    // A write may have become visible while they were read.
    return this.#grants.current(id) ? values : null;
  }

  /** The Worker ran a granted handler: audit and answer it, or "stale" when its state changed. */
  async settleGrant(id: string, outcome: GrantOutcome): Promise<WireResult> {
    if (following(this)) return { kind: 'stale' };
    const result = await settleGrant(this.#grants, id, outcome, () => this.#storage.grouped.durable());
    this.#metrics.incr(result.kind === 'stale' ? 'coffer.offload.stale' : 'coffer.offload.settled', { mount: this.#hosted?.mount.mountPoint ?? '' });
    return result;
  }

  /**
   * Serves one request. `prefix` and `revision` are what the Worker routed by: if the mount has
   * since been disabled, moved or tuned, the answer is "gone" and the Worker re-reads its routes.
   */
  handle(prefix: string, revision: number, wire: WireRequest, token: string): Maybe<WireResult> {
    // A DR follower (a secondary's, or a demoted primary's) serves nothing, whatever routed here.
    if (following(this)) return errorResult(drSecondaryError());
    // At once when nothing on the way was waited for (a handed-off request answered from memory).
    return andThen(serve(this.#ports, { prefix, revision }, wire, token), (result) => this.#served(prefix, wire, result));
  }

  #served(prefix: string, wire: WireRequest, result: WireResult): WireResult {
    if (result.kind === 'grant') this.#metrics.incr('coffer.offload.granted', { mount: prefix });
    else if (wire.resumes && (result.kind === 'ok' || result.kind === 'error')) {
      this.#metrics.incr('coffer.offload.resumed', { mount: prefix });
      // What it wrote (an encrypt that made its key) may end the Worker's reason to send it here.
      result.stamp = this.#grants.stamp;
    } else if (wire.precomputed && (result.kind === 'ok' || result.kind === 'error' || result.kind === 'settled')) {
      // Its stamp after it: when it is not the one the Worker computed under, that state is over.
      result.stamp = this.#grants.stamp;
    }
    return result;
  }

  #locate({ prefix, revision }: Route): HostedMount | WireResult | Promise<HostedMount | WireResult> {
    const check = (entry: MountEntry | null): HostedMount | WireResult | Promise<HostedMount | WireResult> => {
      if (!entry) return { kind: 'gone' };
      if (routePrefix(entry) !== prefix || (entry.revision ?? 0) !== revision) return { kind: 'gone' };
      const hosted = this.#host(entry);
      // A plugin that cannot be loaded (its file replaced, missing) answers its 500 to every request.
      return hosted instanceof HostedMount ? hosted : hosted.catch((e: unknown) => errorResult(e));
    };
    return this.#entry === undefined ? this.#loadEntry().then(check) : check(this.#entry);
  }

  async #loadEntry(): Promise<MountEntry | null> {
    if (this.#entry === undefined) this.#entry = await getJSON<MountEntry>(this.#storage.barrier, ENTRY_KEY);
    return this.#entry;
  }

  /**
   * The backend, mount context and lease manager for the current entry; a promise while a plugin
   * mount's isolate loads (a failed load is tried again by the next caller).
   */
  #host(entry: MountEntry): HostedMount | Promise<HostedMount> {
    if (this.#hosted?.entry === entry) return this.#hosted;
    const plugin = entry.plugin;
    if (!plugin) return (this.#hosted = new HostedMount(entry, this.#site));
    if (this.#loading?.entry !== entry) {
      const loading = {
        entry,
        hosted: loadPlugin(this.env, { uuid: entry.uuid, type: entry.type, mountPoint: routePrefix(entry), revision: entry.revision ?? 0, plugin }).then(
          (backend) => {
            const hosted = new HostedMount(entry, this.#site, backend);
            if (this.#entry === entry) this.#hosted = hosted;
            return hosted;
          },
          (e: unknown) => {
            if (this.#loading === loading) this.#loading = null;
            throw e;
          },
        ),
      };
      this.#loading = loading;
    }
    return this.#loading.hosted;
  }

  async #hostedNow(): Promise<HostedMount> {
    const entry = await this.#loadEntry();
    if (!entry) throw badRequest('mount not found');
    return await this.#host(entry);
  }

  /** The hosted mount for timed work; a plugin that cannot load now is tried again in a minute. */
  async #hostOrRetry(entry: MountEntry): Promise<HostedMount | null> {
    try {
      return await this.#host(entry);
    } catch (e) {
      console.error(`mount ${routePrefix(entry)}: ${e instanceof Error ? e.message : String(e)}; its timed work waits`);
      await this.#wakeAt(Date.now() + PLUGIN_RETRY_MS);
      return null;
    }
  }

  async #wakeAt(when: number): Promise<void> {
    // Durable Object alarms stop at 2189: a later wish (a century-long rotation period) wakes the
    // object then, and its timed work asks again.
    const at = Math.min(when, LATEST_ALARM);
    const current = await this.ctx.storage.getAlarm();
    if (current === null || current > at) await this.ctx.storage.setAlarm(at);
  }

  override async alarm(): Promise<void> {
    // A DR secondary's objects mirror their primary's: its timed work happens there.
    if (following(this)) return;
    const entry = await this.#loadEntry().catch(() => null);
    if (!entry) return;
    if (entry.type === 'identity') await this.writes.run(() => this.#announceIdentityChange());
    const hosted = await this.#hostOrRetry(entry);
    if (!hosted) return;
    const next = await this.writes.run(async () => earliest(await hosted.leases.tick(), await hosted.periodic()));
    if (next !== null) await this.#wakeAt(next);
  }

  /** Called by the SystemObject when the mount is enabled, tuned or moved. */
  async provision(entry: MountEntry): Promise<void> {
    await this.writes.run(async () => {
      const previous = await this.#loadEntry();
      await putJSON(this.#storage.barrier, ENTRY_KEY, entry);
      this.#entry = entry;
      // Grants describe the mount (its path, settings): those issued before are stale.
      this.#grants.bump();
      // A plugin is loaded by its first request or the alarm: a provision never fails on its file.
      const hosted = entry.plugin ? null : (this.#host(entry) as HostedMount);
      // A backend with timed work may have some to do under its new settings (kv tuned to v2: the upgrade).
      if (!hosted || hosted.backend.periodic) await this.#wakeAt(Date.now());
      // A moved mount's leases carry the new path in their ids, as in Vault.
      if (previous && routePrefix(previous) !== routePrefix(entry)) await (hosted ?? (await this.#host(entry))).leases.rebase(routePrefix(previous));
    });
  }

  /**
   * First step of disabling the mount: revoke every lease through the engine. Returns an error
   * message when some could not be revoked (the disable then stops, and the mount stays).
   */
  async revokeAllLeases(): Promise<string | null> {
    return this.writes.run(async () => {
      const entry = await this.#loadEntry();
      if (!entry) return null;
      // A plugin that cannot load cannot revoke: without leases the mount may still go.
      const hosted = await Promise.resolve(this.#host(entry)).catch((e: unknown) => e);
      if (!(hosted instanceof HostedMount)) {
        if (this.#storage.physical.count(LEASES_PREFIX) === 0) return null;
        return `the mount's leases cannot be revoked: ${hosted instanceof Error ? hosted.message : String(hosted)}`;
      }
      const { failed } = await hosted.leases.revokePrefix(routePrefix(entry), false);
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
      this.#storage.physical.createSchema();
      this.#grants.forget();
      this.#entry = null;
      this.#hosted = null;
    });
  }

  /** Called when the cluster seals or the keyring rotates: forget keys, entry and token leases. */
  async dropKeys(): Promise<void> {
    // No grant settles after this: what it read was opened with the keys being dropped.
    this.#grants.forget();
    this.#storage.forgetKeys();
    this.#entry = undefined;
    // The backend goes too: what it keeps in memory (an AWS mount's signing keys) came from the keys.
    this.#hosted = null;
    this.#parts.validator.leases.clear();
    this.#parts.managedKeyEntries.clear();
    await this.policiesChanged();
  }

  /** Called by the SystemObject when a managed key was written or deleted. */
  async managedKeysChanged(): Promise<void> {
    this.#parts.managedKeyEntries.clear();
  }

  /** Called by the SystemObject when a policy changed: compiled ACLs are stale. */
  async policiesChanged(): Promise<void> {
    this.#site.acls.clear();
    this.#parts.loginIdentities.clear();
  }

  /** Called by the SystemObject when an audit device was enabled or disabled. */
  async auditChanged(): Promise<void> {
    this.#site.audit.invalidate();
  }

  /** Called by a token's shard when the token was revoked. */
  async forgetToken(accessor: string): Promise<void> {
    this.#parts.validator.leases.forgetAccessor(accessor);
  }

  // ---- leases (called by the SystemObject for sys/leases/*, and by token shards) ----

  #leaseCall(call: LeaseCall): Promise<WireResult> {
    return this.writes.run(async () => {
      try {
        return { kind: 'ok', response: await call(await this.#hostedNow()) };
      } catch (e) {
        return errorResult(e);
      }
    });
  }

  leaseLookup(id: string): Promise<WireResult> {
    return this.#leaseCall(leases.leaseLookup(id));
  }
  leaseRenew(id: string, increment: number): Promise<WireResult> {
    return this.#leaseCall(leases.leaseRenew(id, increment, (at) => this.#wakeAt(at)));
  }
  leaseRevoke(id: string, force: boolean): Promise<WireResult> {
    return this.#leaseCall(leases.leaseRevoke(id, force));
  }
  leaseRevokePrefix(prefix: string, force: boolean): Promise<WireResult> {
    return this.#leaseCall(leases.leaseRevokePrefix(prefix, force));
  }
  leaseList(prefix: string): Promise<WireResult> {
    return this.#leaseCall(leases.leaseList(prefix));
  }
  leaseIrrevocable(): Promise<WireResult> {
    return this.#leaseCall(leases.leaseIrrevocable);
  }

  /** sys/leases/tidy: expire what is due and retry failed revocations now. */
  async leaseTidy(): Promise<void> {
    await this.alarm();
  }

  /**
   * A token was revoked or expired: end the leases issued to it and erase what the backend keeps
   * for it (a cubbyhole). Throws so the shard retries.
   */
  async revokeTokenLeases(accessor: string): Promise<void> {
    await this.writes.run(async () => {
      const entry = await this.#loadEntry();
      if (!entry) return;
      const hosted = await this.#host(entry);
      await hosted.leases.revokeToken(accessor);
      if (hosted.backend.forgetToken) {
        await hosted.backend.forgetToken(accessor, hosted.engineStorage);
        await this.#storage.barrier.delete(TOKEN_DATA + accessor);
        this.#site.tokenData.delete(accessor);
      }
    });
  }

  // ---- the identity mount (src/core/identity), and the logins of auth mounts ----

  /** Entity views for other objects' ACL caches (only the identity mount's object answers); null while sealed. */
  identityViews(ids: string[]): Promise<Record<string, IdentityView | null> | null> {
    return identityViewsOn(() => this.#identityStorage(), ids);
  }

  /** An auth method's login: the entity behind an alias (created when new), in one transaction. */
  identityLogin(input: IdentityLoginInput): Promise<IdentityLoginReply> {
    return identityLoginOn(() => this.#identityStorage(), this.writes, () => this.#announceIdentityChange(), input);
  }

  async #identityStorage(): Promise<HostedMount> {
    const entry = await this.#loadEntry();
    if (entry?.type !== 'identity' || entry.plugin) throw new Error('this object does not host the identity mount');
    return await this.#host(entry);
  }

  /** Tells the SystemObject about a committed identity change (retried from the alarm until it hears). */
  #announceIdentityChange(): Promise<void> {
    return announceIdentityChange(this.#storage.barrier, () => systemStub(this.env).identityChanged(), (at) => this.#wakeAt(at));
  }

  /**
   * Limits for renewing a token this auth mount's login issued (the method re-reads its role),
   * with the mount's maximum TTL. `prefix` is the route the token store found the mount by.
   */
  async renewLogin(prefix: string, role: string, tokenPolicies: string[]): Promise<RenewReply> {
    try {
      const entry = await this.#loadEntry();
      if (!entry) throw badRequest('invalid token');
      const hosted = await this.#host(entry);
      if (hosted.mount.mountPoint !== prefix) throw badRequest('invalid token');
      const mountMaxTTL = hosted.mount.mountConfig.maxLeaseTTL;
      if (!hosted.backend.renewLogin) return { ok: true, limits: { ttl: 0, maxTtl: 0, period: 0 }, mountMaxTTL };
      return { ok: true, limits: await hosted.backend.renewLogin(hosted.engineStorage, role, tokenPolicies), mountMaxTTL };
    } catch (e) {
      return errorReply(e, 'auth mount unavailable');
    }
  }

  /** What sys/metrics gathers from this object: its requests, and the leases it keeps. */
  async metricsSnapshot(): Promise<MetricsSnapshot> {
    return this.#metrics.snapshot([{ name: 'vault.expire.num_leases', labels: {}, value: this.#storage.physical.count(LEASES_PREFIX) }]);
  }
}
