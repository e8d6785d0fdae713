// One mount entry as its MountObject hosts it: the backend, its mount context and lease manager,
// and the ports the request pipeline (src/pipeline/serve.ts) runs a request on the mount with.

import type { AclCache } from '../src/core/acl/cache';
import type { BarrierStorage } from '../src/core/barrier/barrier';
import type { AuditBroker } from '../src/core/audit/broker';
import { LeaseManager } from '../src/core/leases/mount-leases';
import { effectiveTTLs, routePrefix, type MountEntry } from '../src/core/mounts/table';
import type { Mutex } from '../src/core/mutex';
import { matchesSpecialPath, WAL_PREFIX, type AuthContext, type Backend, type EntityView, type GrantedMount, type LogicalResponse, type WireOperation } from '../src/framework/backend';
import type { Maybe } from '../src/framework/steps';
import { invalidToken } from '../src/framework/errors';
import { prefixedTransaction, PrefixedStorage, type Storage, type StorageTransaction } from '../src/framework/storage';
import { AuditTrail } from '../src/pipeline/audit-trail';
import type { CallerPort } from '../src/pipeline/caller';
import { relativePath, type DispatchHooks, type MountContext, type WireRequest } from '../src/pipeline/dispatch';
import { issueLogin, type LoginPorts } from '../src/pipeline/login';
import type { Host, Scope } from '../src/pipeline/serve';
import type { TokenStoreContract } from '../src/rpc/contracts';
import type { MountHost as BackendHost } from '../src/registry';
import { backendType } from '../src/registry';
import type { ObjectStorage } from './object-storage';

/** Engine data lives under this prefix, apart from the object's own bookkeeping. */
export const LOGICAL_PREFIX = 'logical/';
/**
 * When the periodic work looks at an entry a request may have left behind. It leaves the entries
 * of requests still running (MountSite.liveWriteAhead), so this only sets how soon a crash or a
 * failed undo is cleaned up.
 */
const WAL_ROLLBACK_DELAY_MS = 5_000;
/** Where write-ahead entries are, as the request's transaction names them. */
const WAL_KEYS = `${LOGICAL_PREFIX}${WAL_PREFIX}`;
/** Markers of tokens that keep data here (cubbyhole): core/token-data/<accessor>. */
export const TOKEN_DATA = 'core/token-data/';

/** What every entry hosted by one MountObject shares: that object's parts. */
export interface MountSite {
  storage: ObjectStorage;
  /** The mount's write order: every request that may write, the alarm, provisioning. */
  writes: Mutex;
  acls: AclCache;
  caller: CallerPort;
  audit: AuditBroker;
  backendHost: BackendHost;
  login: LoginPorts;
  /** Stores a response to wrap on the wrapping token's shard. */
  wrap: NonNullable<DispatchHooks['wrap']>;
  /** Accessors known to be registered as keeping data here. */
  tokenData: Set<string>;
  /**
   * Write-ahead entries (by id) of requests running now, beside the write order or in it: the
   * periodic work leaves them to their requests. Per object, not per hosted entry: a request
   * outlives the entry it started under when the object forgets its keys and hosts it anew.
   */
  liveWriteAhead: Set<string>;
  shardOf(tokenOrAccessor: string): Pick<TokenStoreContract, 'registerLeaseHolder' | 'wrappingAuth' | 'unwrap'>;
  entityView(entityId: string): Promise<EntityView | null>;
  wakeAt(at: number): Promise<void>;
  /** Tells the SystemObject about a committed identity change. */
  announceIdentityChange(): Promise<void>;
}

const readsOnly = (op: WireOperation) => op === 'read' || op === 'list' || op === 'help';

export class HostedMount implements Host {
  readonly backend: Backend;
  readonly mount: MountContext;
  readonly leases: LeaseManager;
  readonly logins: boolean;
  readonly acls: AclCache;
  readonly caller: CallerPort;
  readonly #site: MountSite;
  /** The object's storage outside requests (timers, leases, identity lookups), and the engine's view of it. */
  readonly barrier: BarrierStorage;
  readonly engineStorage: Storage;
  /** The engine's storage as served requests read it (staged writes included): what grants read. */
  readonly requestStorage: Storage;
  /** Physical prefixes whose writes leave grants current (Backend.offloadVolatile). */
  readonly volatile: readonly string[];
  readonly #builtin: boolean;

  /** `plugin`: the Backend of a catalog plugin's isolate (plugin-runtime.ts), for such a mount. */
  constructor(
    readonly entry: MountEntry,
    site: MountSite,
    plugin?: Backend,
  ) {
    const type = plugin ? null : backendType(entry.type);
    if (!plugin && !type?.create) throw new Error(`mount type ${entry.type} cannot run in a MountObject`);
    const backend = (this.backend = plugin ?? type!.create!(entry.options, site.backendHost));
    const mountPoint = routePrefix(entry);
    this.mount = {
      mountPoint,
      mountType: entry.type,
      mountAccessor: entry.accessor,
      mountConfig: effectiveTTLs(entry.config),
      mountOptions: entry.options ?? {},
      mountAllowedManagedKeys: entry.config.allowed_managed_keys ?? [],
    };
    this.barrier = site.storage.barrier;
    this.engineStorage = new PrefixedStorage(this.barrier, LOGICAL_PREFIX);
    this.requestStorage = new PrefixedStorage(site.storage.requestBarrier, LOGICAL_PREFIX);
    this.volatile = (backend.offloadVolatile ?? []).map((prefix) => LOGICAL_PREFIX + prefix);
    this.#builtin = !plugin;
    this.leases = new LeaseManager(site.storage.barrier, mountPoint, {
      secretType: (name) => backend.secretTypes?.[name],
      engineStorage: () => this.engineStorage,
      registerToken: (accessor) => site.shardOf(accessor).registerLeaseHolder(accessor, entry.uuid),
      wakeAt: (at) => site.wakeAt(at),
    });
    this.logins = entry.table === 'auth';
    this.acls = site.acls;
    this.caller = site.caller;
    this.#site = site;
  }

  trail(wire: WireRequest, token: string): AuditTrail {
    return new AuditTrail(this.#site.audit, {
      wire,
      mount: this.mount,
      token,
      nonHMACRequestKeys: this.entry.config.audit_non_hmac_request_keys,
      nonHMACResponseKeys: this.entry.config.audit_non_hmac_response_keys,
      // A device must not record a response whose writes could still be lost.
      beforeResponse: () => this.#site.storage.grouped.durable(),
    });
  }

  preempt(wire: WireRequest, token: string, trail: AuditTrail): Promise<LogicalResponse | null> | null {
    const legacyUnwrap = wire.operation === 'read' && wire.wrapTTL === 0 && relativePath(wire.path, this.mount.mountPoint) === 'response';
    return this.entry.type === 'cubbyhole' && legacyUnwrap && token ? this.#legacyUnwrap(wire, token, trail) : null;
  }

  /**
   * Vault's pre-sys/wrapping unwrap: reading cubbyhole/response with the wrapping token itself
   * (older clients still do). Audited like any request, before the token's single use is spent.
   * Null when the token is not a live wrapping token: the read then goes on as a normal one.
   */
  async #legacyUnwrap(wire: WireRequest, token: string, trail: AuditTrail): Promise<LogicalResponse | null> {
    const shard = this.#site.shardOf(token);
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

  /** A token's first write to a backend that keeps data per token registers it (see below). */
  admitted(wire: WireRequest): Promise<void> | undefined {
    const accessor = wire.auth?.accessor;
    if (!this.backend.forgetToken || !accessor || wire.operation !== 'write' || this.#site.tokenData.has(accessor)) return undefined;
    return this.#registerTokenData(accessor);
  }

  /** Registers this object with the token's shard, so the token's revocation reaches it (and erases the data). */
  async #registerTokenData(accessor: string): Promise<void> {
    const { storage, tokenData } = this.#site;
    if (!(await storage.barrier.get(TOKEN_DATA + accessor))) {
      await this.#site.shardOf(accessor).registerLeaseHolder(accessor, this.entry.uuid);
      await storage.barrier.put(TOKEN_DATA + accessor, new Uint8Array(0));
    }
    if (tokenData.size >= 10_000) tokenData.clear();
    tokenData.add(accessor);
  }

  /**
   * Whether the Worker may run this request's handler (src/pipeline/offload.ts): a write on one of
   * the backend's offloadPaths, not wrapped (the wrapping token is stored here). A plugin's
   * handlers run in the plugin's own isolate.
   */
  offloads(wire: WireRequest, relPath: string): boolean {
    return this.#builtin && wire.operation === 'write' && wire.wrapTTL === 0 && matchesSpecialPath(this.backend.offloadPaths, relPath);
  }

  grantedMount(): GrantedMount {
    const { mount } = this;
    return {
      type: this.entry.type,
      options: mount.mountOptions,
      mountPoint: mount.mountPoint,
      mountAccessor: mount.mountAccessor,
      mountConfig: mount.mountConfig,
      mountAllowedManagedKeys: mount.mountAllowedManagedKeys ?? [],
    };
  }

  open(wire: WireRequest, relPath: string, handsOff: boolean): Scope {
    const { backend, mount } = this;
    const site = this.#site;
    const auth = wire.auth;
    // Requests that declare they never write run beside the mount's writes instead of in turn:
    // reads (unless listed in writingReadPaths), the backend's storage-free writes, and requests
    // whose handler goes to the Worker (a grant is current until a write becomes visible).
    const readOnly =
      handsOff ||
      (readsOnly(wire.operation) && !matchesSpecialPath(backend.writingReadPaths, relPath)) ||
      (wire.operation === 'write' && matchesSpecialPath(backend.storageFreeWritePaths, relPath));
    let tx: StorageTransaction | undefined;
    // A write the backend found writes only its lease (Backend.leaseOnly): run beside the others.
    let leaseOnly = false;
    // The earliest time the request asked the backend's periodic work to run at.
    let wake: number | null = null;
    // Its write-ahead entries (ids), live until it ends; made by the first (most requests make none).
    let writeAhead: Set<string> | undefined;
    return {
      transaction: () => prefixedTransaction((tx = site.storage.requestBarrier.transaction()), LOGICAL_PREFIX),
      hooks: {
        beforeCommit: (response) => {
          // A write outside the mount's order could be lost to a concurrent one: refuse it loudly.
          if (readOnly && (tx!.dirty || response.secret)) {
            throw new Error(`${backend.type} ${wire.operation} of ${relPath} wrote to storage; its path belongs in writingReadPaths`);
          }
          // A lease-only request may delete its own write-ahead entries, and write nothing else.
          if (leaseOnly) {
            for (const [key, value] of tx!.changes) {
              if (value !== null || !key.startsWith(WAL_KEYS) || !writeAhead?.has(key.slice(WAL_KEYS.length))) {
                throw new Error(`${backend.type} ${wire.operation} of ${relPath} ran as lease-only but wrote to storage`);
              }
            }
          }
          // Nothing to record (every read): nothing to wait for.
          if (!response.login && !response.secret) return undefined;
          return this.#recordIssued(response, tx!, wire, auth);
        },
        wrap: site.wrap,
        wakeAt: backend.periodic ? (at) => void (wake = wake === null ? at : Math.min(wake, at)) : undefined,
        entity: auth?.entityId ? () => site.entityView(auth.entityId) : undefined,
        // Live while the request runs: the periodic work leaves it to the request (MountSite.liveWriteAhead).
        putWAL: readOnly
          ? undefined
          : async (id, entry) => {
              site.liveWriteAhead.add(id);
              (writeAhead ??= new Set()).add(id);
              await this.#putWAL(id, entry);
            },
        // Slow keys are made by the Worker, not here where they would stall the mount.
        preparesRsaPairs: true,
      },
      // Read-only requests run in place, beside the mount's writes.
      order: readOnly
        ? undefined
        : (run) => {
            const inOrder = () => site.writes.runNow(this.entry.type === 'identity' ? () => this.#thenAnnounce(run) : run);
            if (!backend.leaseOnly) return inOrder();
            // Asked only of backends that issue lease-only requests: reads and other mounts pay nothing.
            // Awaited inside (not chained), so a rejection is handled at once, never adopted later.
            const decided = async (ask: NonNullable<Backend['leaseOnly']>) => ((leaseOnly = await ask(relPath, this.engineStorage)) ? await run() : await inOrder());
            return decided(backend.leaseOnly.bind(backend));
          },
      // Its entries go back to the periodic work once it ended; what it removed is staged, and
      // the periodic work writes what is staged before it reads.
      after: () => {
        if (writeAhead) for (const id of writeAhead) site.liveWriteAhead.delete(id);
        return wake === null ? undefined : site.wakeAt(wake);
      },
    };
  }

  /** What a response issued, recorded in its request's transaction: the login's token, the secret's lease. */
  async #recordIssued(response: LogicalResponse, tx: StorageTransaction, wire: WireRequest, auth: AuthContext | null): Promise<void> {
    const { mount } = this;
    const site = this.#site;
    if (response.login) await issueLogin(response, { context: mount, tokenType: this.entry.config.token_type }, wire.path, site.login);
    if (!response.secret) return;
    // The lease is written in the same transaction as whatever the handler wrote.
    const lease = await this.leases.create(tx, wire.path, response.secret, auth?.accessor ?? '', mount.mountConfig);
    response.leaseId = lease.id;
    response.lease = { ttl: Math.round((lease.expireTime - lease.issueTime) / 1000), renewable: lease.renewable };
    delete response.secret;
    await site.wakeAt(lease.expireTime);
  }

  /**
   * A write-ahead entry, durable before the request goes on (the immediate barrier writes
   * through; the output gate holds the request's outbound calls until it is stored), and the
   * periodic work scheduled to roll it back should the request never remove it.
   */
  async #putWAL(id: string, entry: Uint8Array): Promise<void> {
    await this.engineStorage.put(`${WAL_PREFIX}${id}`, entry);
    await this.#site.wakeAt(Date.now() + WAL_ROLLBACK_DELAY_MS);
  }

  /** Runs a write on the identity mount, then passes on what it changed for existing tokens. */
  async #thenAnnounce<T>(write: () => Maybe<T>): Promise<T> {
    const result = await write();
    await this.#site.announceIdentityChange();
    return result;
  }

  /**
   * The backend's own timed work (Backend.periodic), in a transaction of its own. Callers hold
   * the write mutex. A throw leaves nothing half-done; from the alarm it makes the alarm retry.
   */
  async periodic(): Promise<number | null> {
    if (!this.backend.periodic) return null;
    const tx = this.barrier.transaction();
    const next = await this.backend.periodic(prefixedTransaction(tx, LOGICAL_PREFIX), Date.now(), { mountAllowedManagedKeys: this.mount.mountAllowedManagedKeys ?? [], liveWriteAhead: this.#site.liveWriteAhead });
    await tx.commit();
    return next;
  }
}
