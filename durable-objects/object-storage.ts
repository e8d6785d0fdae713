// The storage chain of a hosting object other than the SystemObject, built the same way in each:
// keyring (from the SystemObject) → SqlPhysical → GroupedWrites → two barriers over it.

import { BarrierStorage } from '../src/core/barrier/barrier';
import { GroupedWrites } from '../src/core/barrier/grouped-writes';
import type { Physical } from '../src/core/barrier/physical';
import type { StorageOp } from '../src/framework/storage';
import { maxEntrySize, type Env } from '../src/rpc/env';
import { systemStub } from '../src/rpc/stubs';
import { RemoteKeyring } from './keyring-client';
import { SqlPhysical } from './sqlite-physical';

export class ObjectStorage {
  readonly keyring: RemoteKeyring;
  readonly physical: SqlPhysical;
  /** Writes of requests served together are committed together (src/core/barrier/grouped-writes.ts). */
  readonly grouped: GroupedWrites;
  /** Storage for everything but served requests: it sees and orders after every staged write. */
  readonly barrier: BarrierStorage;
  /** Storage for served requests (and new login tokens), whose replies wait for grouped.durable(). */
  readonly requestBarrier: BarrierStorage;
  readonly #observers: Array<(ops: readonly StorageOp[]) => void> = [];

  constructor(ctx: DurableObjectState, env: Env) {
    this.keyring = new RemoteKeyring(() => systemStub(env).keyring());
    this.physical = new SqlPhysical(ctx.storage);
    // A flush that fails leaves memory ahead of storage: reset the object rather than serve it,
    // and say so (the requests it cuts off name only the reset).
    this.grouped = new GroupedWrites(this.physical, (e) => {
      const reason = `storage write failed: ${e instanceof Error ? e.message : String(e)}`;
      console.error(`${ctx.id.toString()}: ${reason}; resetting the object`);
      ctx.abort(reason);
    });
    this.barrier = new BarrierStorage(this.#observed(this.grouped.immediate), this.keyring, maxEntrySize(env));
    this.requestBarrier = new BarrierStorage(this.#observed(this.grouped.grouped), this.keyring, maxEntrySize(env));
  }

  /** Calls `f` with every write through the barriers, in the same turn it becomes visible to reads. */
  observeWrites(f: (ops: readonly StorageOp[]) => void): void {
    this.#observers.push(f);
  }

  /** `physical` with its writes reported; reads go straight to it (GroupedWrites' views are plain objects of arrows). */
  #observed(physical: Physical): Physical {
    return {
      ...physical,
      apply: (ops) => {
        physical.apply(ops);
        for (const f of this.#observers) f(ops);
      },
    };
  }

  /** The cluster sealed or its keyring rotated: forget the keys and what was opened with them. */
  forgetKeys(): void {
    this.keyring.drop();
    this.barrier.forgetOpened();
    this.requestBarrier.forgetOpened();
  }
}
