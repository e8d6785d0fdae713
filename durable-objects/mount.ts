// MountObject: one per mount. Hosts the mount's backend over barrier storage in its own SQLite
// database and serialises the mount's writes (KV cas, rotations, serial numbers need no locks).
// It validates the caller's token itself, under a lease from the token's shard, so a request
// costs the Worker one call.

import { DurableObject } from 'cloudflare:workers';
import { BarrierStorage } from '../src/core/barrier';
import { dispatch, isUnauthenticatedPath, relativePath, rootOnlyAuthorizer, type MountContext, type WireRequest } from '../src/core/logical';
import { effectiveTTLs, routePrefix, type MountEntry } from '../src/core/mounts';
import { TokenValidator } from '../src/core/token-validator';
import { shardFor } from '../src/core/tokens';
import { Mutex } from '../src/core/mutex';
import { errorResult, type WireResult } from '../src/core/wire';
import type { Env } from '../src/env';
import { maxEntrySize, tokenShardCount } from '../src/env';
import type { AuthContext, Backend } from '../src/framework/backend';
import { invalidToken, permissionDenied } from '../src/framework/errors';
import { getJSON, prefixedTransaction, putJSON } from '../src/framework/storage';
import { backendType } from '../src/registry';
import { RemoteKeyring } from './keyring-client';
import { SqlPhysical } from './sqlite-physical';
import { systemStub, tokenShardStub } from './stubs';

const ENTRY_KEY = 'core/mount-entry';
/** Engine data lives under this prefix, apart from the object's own bookkeeping. */
const LOGICAL_PREFIX = 'logical/';

export class MountObject extends DurableObject<Env> {
  private readonly keyring: RemoteKeyring;
  private readonly physical: SqlPhysical;
  private readonly barrier: BarrierStorage;
  private readonly writes = new Mutex();
  private readonly validator: TokenValidator;
  private entry: MountEntry | null | undefined;
  private backend: { entry: MountEntry; backend: Backend; context: MountContext } | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.keyring = new RemoteKeyring(() => systemStub(env).keyring());
    this.physical = new SqlPhysical(ctx.storage);
    this.barrier = new BarrierStorage(this.physical, this.keyring, maxEntrySize(env));
    const holder = async () => (await this.loadEntry())?.uuid ?? '';
    const shardOf = (s: string) => tokenShardStub(env, shardFor(s, tokenShardCount(env)));
    this.validator = new TokenValidator({
      keys: this.keyring,
      leaseToken: async (token) => shardOf(token).lease(token, await holder()),
      leaseAccessor: async (accessor) => shardOf(accessor).leaseAccessor(accessor, await holder()),
    });
  }

  private async loadEntry(): Promise<MountEntry | null> {
    if (this.entry === undefined) this.entry = await getJSON<MountEntry>(this.barrier, ENTRY_KEY);
    return this.entry;
  }

  /** Called by the SystemObject when the mount is enabled, tuned or moved. */
  async provision(entry: MountEntry): Promise<void> {
    await this.writes.run(async () => {
      await putJSON(this.barrier, ENTRY_KEY, entry);
      this.entry = entry;
    });
  }

  /** Called when the mount is disabled: erase every row and the alarm (deleteAll keeps alarms). */
  async destroy(): Promise<void> {
    await this.writes.run(async () => {
      await this.ctx.storage.deleteAlarm();
      await this.ctx.storage.deleteAll();
      this.physical.createSchema();
      this.entry = null;
      this.backend = null;
    });
  }

  /** Called when the cluster seals or the keyring rotates: forget keys, entry and token leases. */
  async dropKeys(): Promise<void> {
    this.keyring.drop();
    this.entry = undefined;
    this.validator.leases.clear();
  }

  /** Called by a token's shard when the token was revoked. */
  async forgetToken(accessor: string): Promise<void> {
    this.validator.leases.forgetAccessor(accessor);
  }

  /** The backend and mount context for the current entry; rebuilt when provisioning replaces it. */
  private backendFor(entry: MountEntry): { backend: Backend; context: MountContext } {
    if (this.backend?.entry !== entry) {
      const type = backendType(entry.type);
      if (!type?.create) throw new Error(`mount type ${entry.type} cannot run in a MountObject`);
      this.backend = {
        entry,
        backend: type.create(entry.options),
        context: {
          mountPoint: routePrefix(entry),
          mountType: entry.type,
          mountAccessor: entry.accessor,
          mountConfig: effectiveTTLs(entry.config),
          mountOptions: entry.options ?? {},
        },
      };
    }
    return this.backend;
  }

  /**
   * Serves one request. `prefix` and `revision` are what the Worker routed by: if the mount has
   * since been disabled, moved or tuned, the answer is "gone" and the Worker re-reads its routes.
   */
  async handle(prefix: string, revision: number, wire: WireRequest, token: string): Promise<WireResult> {
    try {
      const entry = await this.loadEntry();
      if (!entry) return { kind: 'gone' };
      const { backend, context } = this.backendFor(entry);
      if (context.mountPoint !== prefix || (entry.revision ?? 0) !== revision) return { kind: 'gone' };
      let auth: AuthContext | null = null;
      if (token) {
        const v = await this.validator.validate(token, wire.clientIP);
        if (v.status === 'ok') auth = v.auth;
        else if (!isUnauthenticatedPath(backend, relativePath(wire.path, prefix))) {
          throw v.status === 'cidr' ? permissionDenied() : invalidToken();
        }
      }
      wire.auth = auth;
      const run = () => dispatch(backend, wire, context, prefixedTransaction(this.barrier.transaction(), LOGICAL_PREFIX), rootOnlyAuthorizer);
      const readOnly = wire.operation === 'read' || wire.operation === 'list' || wire.operation === 'help';
      const response = readOnly ? await run() : await this.writes.run(run);
      return { kind: 'ok', response };
    } catch (e) {
      return errorResult(e);
    }
  }
}
