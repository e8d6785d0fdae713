// The object side of DR replication, the same in every Durable Object class: on a primary, start
// or stop recording and hand out log pages, Merkle buckets and values; on a secondary, apply pages
// and repairs and say how far it got. Each class exposes these as its replica* RPC methods
// (src/rpc/contracts.ts ReplicaContract) over its own SqlPhysical.

import { DurableObject } from 'cloudflare:workers';
import { fromBase64, toBase64 } from '../src/crypto/encoding';
import { badRequest, CofferError } from '../src/framework/errors';
import { BUCKETS } from '../src/core/replication/merkle';
import { decodePage, encodePage, type WirePage } from '../src/core/replication/stream';
import type { ReplicaContract, ReplicaMerkle, ReplicaReply } from '../src/rpc/contracts';
import type { SqlPhysical } from './sqlite-physical';

/** Most entries one pull hands out per object (a batch is never split, so a page may be longer). */
const MAX_PAGE = 2_000;

export class ReplicaOps {
  constructor(private readonly physical: SqlPhysical) {}

  /** start/stop recording; follow: serve nothing and run no timed work (a demoted primary). */
  control(command: 'start' | 'stop' | 'follow'): void {
    if (command === 'start') this.physical.log.start();
    else if (command === 'stop') this.physical.log.stop();
    else this.physical.log.setFollower(true);
  }

  pull(after: number, limit: number): WirePage {
    return encodePage(this.physical.log.since(Math.max(0, after), Math.min(Math.max(1, limit), MAX_PAGE)));
  }

  trim(upTo: number): void {
    this.physical.log.trim(upTo);
  }

  /** The root and the 256 bucket hashes, or with `buckets` the entry hashes of those buckets. */
  merkle(buckets?: number[]): ReplicaMerkle {
    if (buckets) {
      if (buckets.some((b) => !Number.isInteger(b) || b < 0 || b >= BUCKETS)) throw badRequest('bucket numbers are 0 to 255');
      return { entries: Object.fromEntries(this.physical.log.bucketEntries(buckets)) };
    }
    const index = this.physical.log.merkle();
    return { root: index.root(), buckets: index.bucketHexes() };
  }

  /** Stored values (base64; null: absent) for a repair. */
  values(keys: string[]): Record<string, string | null> {
    const out: Record<string, string | null> = {};
    for (const key of keys) {
      const v = this.physical.get(key);
      out[key] = v === null ? null : toBase64(v);
    }
    return out;
  }

  /** How far this object applied `source`; null when it was never synced with it. */
  position(source: string): number | null {
    return this.physical.log.synced(source) ? this.physical.log.applied(source).seq : null;
  }

  /** A secondary's enable: every replicated row goes, and the object becomes a follower. */
  wipe(): void {
    this.physical.wipeReplicated();
    this.physical.log.setFollower(true);
  }

  /** Promotion: the object runs its own timed work again (the caller then restarts it). */
  lead(): void {
    this.physical.log.setFollower(false);
  }

  isFollower(): boolean {
    return this.physical.log.follower;
  }

  apply(source: string, page: WirePage): number {
    return this.physical.applyReplicated(source, decodePage(page).entries).seq;
  }

  /** Writes what a Merkle comparison found different (null: delete); with `resumeAfter`, the position too. */
  repair(source: string, values: Record<string, string | null>, resumeAfter: number | null): void {
    const ops = Object.entries(values).map(([key, b64]) => {
      const value = b64 === null ? null : fromBase64(b64);
      if (b64 !== null && value === null) throw badRequest(`repair value of "${key}" is not base64`);
      return { key, value };
    });
    this.physical.apply(ops);
    if (resumeAfter !== null) this.physical.log.setApplied(source, resumeAfter);
  }
}

/** Each object's operations, by object: kept off the classes so that no helper becomes an RPC method. */
const REPLICAS = new WeakMap<object, ReplicaOps>();

/** Called by each object's constructor with the physical layer it writes through (one instance). */
export function replicate(object: object, physical: SqlPhysical): ReplicaOps {
  const ops = new ReplicaOps(physical);
  REPLICAS.set(object, ops);
  return ops;
}

function ops(object: object): ReplicaOps {
  const found = REPLICAS.get(object);
  if (!found) throw new Error('replicate() was not called by this object');
  return found;
}

/** Runs `f`; a Coffer error (bad input) comes back as data, anything else is thrown. */
async function reply<T>(f: () => T): Promise<ReplicaReply<T>> {
  try {
    return { ok: true, value: f() };
  } catch (e) {
    if (e instanceof CofferError) return { ok: false, status: e.status, errors: e.errors };
    throw e;
  }
}

/** The base of every Durable Object class: the replica* RPC methods of ReplicaContract. */
export abstract class ReplicatedObject<E> extends DurableObject<E> implements ReplicaContract {
  replicaControl(command: 'start' | 'stop' | 'follow'): Promise<ReplicaReply<null>> {
    return reply(() => (ops(this).control(command), null));
  }
  replicaPull(after: number, limit: number): Promise<ReplicaReply<WirePage>> {
    return reply(() => ops(this).pull(after, limit));
  }
  replicaTrim(upTo: number): Promise<ReplicaReply<null>> {
    return reply(() => (ops(this).trim(upTo), null));
  }
  replicaMerkle(buckets?: number[]): Promise<ReplicaReply<ReplicaMerkle>> {
    return reply(() => ops(this).merkle(buckets));
  }
  replicaValues(keys: string[]): Promise<ReplicaReply<Record<string, string | null>>> {
    return reply(() => ops(this).values(keys));
  }
  replicaPosition(source: string): Promise<ReplicaReply<number | null>> {
    return reply(() => ops(this).position(source));
  }
  replicaWipe(): Promise<ReplicaReply<null>> {
    return reply(() => (ops(this).wipe(), null));
  }
  replicaApply(source: string, page: WirePage): Promise<ReplicaReply<number>> {
    return reply(() => ops(this).apply(source, page));
  }
  /**
   * Restarts the object so it drops every cache of the state its storage no longer holds (after a
   * secondary's wipe, and at promotion). With `lead` (promotion) it stops being a follower and its
   * alarm is set to now, which re-arms its timed work from storage. The call itself ends with
   * the restart: callers expect it to fail.
   */
  async replicaRestart(lead: boolean): Promise<void> {
    if (lead) {
      ops(this).lead();
      await this.ctx.storage.setAlarm(Date.now());
    }
    // Measured: without waiting for the writes to be durable, the restart discarded them.
    await this.ctx.storage.sync();
    this.ctx.abort(lead ? 'DR promotion: restarting with the replicated state' : 'DR secondary: restarting after the wipe');
  }
  replicaRepair(source: string, values: Record<string, string | null>, resumeAfter: number | null): Promise<ReplicaReply<null>> {
    return reply(() => (ops(this).repair(source, values, resumeAfter), null));
  }
}

/** Whether the object is a DR follower (it serves no requests and its alarm does nothing). */
export function following(object: object): boolean {
  return ops(object).isFollower();
}

/** A replica* answer's value, or its refusal as the CofferError it was (for callers of the contract). */
export function replicaValue<T>(r: ReplicaReply<T>): T {
  if (!r.ok) throw new CofferError(r.status, r.errors);
  return r.value;
}
