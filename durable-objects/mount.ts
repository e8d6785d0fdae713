// MountObject: one per mount. Hosts the mount's backend over barrier storage in its own SQLite
// database and serialises the mount's writes (KV cas, rotations, serial numbers need no locks).

import { DurableObject } from 'cloudflare:workers';
import { BarrierStorage } from '../src/core/barrier';
import { dispatch, rootOnlyAuthorizer, type MountContext, type WireRequest } from '../src/core/logical';
import { effectiveTTLs, routePrefix, type MountEntry } from '../src/core/mounts';
import { Mutex } from '../src/core/mutex';
import { errorResult, type WireResult } from '../src/core/wire';
import type { Env } from '../src/env';
import { maxEntrySize } from '../src/env';
import type { Backend } from '../src/framework/backend';
import { getJSON, prefixedTransaction, putJSON } from '../src/framework/storage';
import { backendType } from '../src/registry';
import { RemoteKeyring } from './keyring-client';
import { SqlPhysical } from './sqlite-physical';
import { systemStub } from './stubs';

const ENTRY_KEY = 'core/mount-entry';
/** Engine data lives under this prefix, apart from the object's own bookkeeping. */
const LOGICAL_PREFIX = 'logical/';

export class MountObject extends DurableObject<Env> {
  private readonly keyring: RemoteKeyring;
  private readonly physical: SqlPhysical;
  private readonly barrier: BarrierStorage;
  private readonly writes = new Mutex();
  private entry: MountEntry | null | undefined;
  private backend: { entry: MountEntry; backend: Backend; context: MountContext } | null = null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.keyring = new RemoteKeyring(() => systemStub(env).keyring());
    this.physical = new SqlPhysical(ctx.storage);
    this.barrier = new BarrierStorage(this.physical, this.keyring, maxEntrySize(env));
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

  /** Called when the cluster seals or the keyring rotates. */
  async dropKeys(): Promise<void> {
    this.keyring.drop();
    this.entry = undefined;
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

  async handle(prefix: string, wire: WireRequest): Promise<WireResult> {
    try {
      const entry = await this.loadEntry();
      if (!entry) return { kind: 'gone' };
      const { backend, context } = this.backendFor(entry);
      if (context.mountPoint !== prefix) return { kind: 'gone' };
      const run = () => dispatch(backend, wire, context, prefixedTransaction(this.barrier.transaction(), LOGICAL_PREFIX), rootOnlyAuthorizer);
      const readOnly = wire.operation === 'read' || wire.operation === 'list' || wire.operation === 'help';
      const response = readOnly ? await run() : await this.writes.run(run);
      return { kind: 'ok', response };
    } catch (e) {
      return errorResult(e);
    }
  }
}
