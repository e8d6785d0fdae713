// One round of a DR secondary following its primary: ask for the pages after every position,
// then per object apply, repair by Merkle comparison, or drop (stream.ts planPull decides). The
// SystemObject's alarm runs rounds; the ports are its HTTPS calls to the primary and its RPCs to
// its own objects, so the same code is tested with fakes and runs between two deployments.

import { bucketRepair, differingBuckets } from './merkle';
import { planPull, type ObjectName, type PullReply, type ReplicaMerkle, type WirePage } from './stream';

export interface FollowerPorts {
  /** The primary's internal endpoints (the credential is added by the port). */
  pull(positions: Record<ObjectName, number>, limit: number): Promise<PullReply>;
  remoteMerkle(object: ObjectName, buckets?: number[]): Promise<ReplicaMerkle>;
  remoteValues(object: ObjectName, keys: string[]): Promise<Record<string, string | null>>;
  /** This cluster's objects of the same names (position null: never synced). */
  position(object: ObjectName): Promise<number | null>;
  apply(object: ObjectName, page: WirePage): Promise<number>;
  merkle(object: ObjectName, buckets?: number[]): Promise<ReplicaMerkle>;
  /** Writes values (null: delete); with `resumeAfter`, also records that position (the repair's last write). */
  repair(object: ObjectName, values: Record<string, string | null>, resumeAfter: number | null): Promise<void>;
  wipe(object: ObjectName): Promise<void>;
}

export interface RoundResult {
  /** The primary's objects now (the next round asks about these). */
  objects: ObjectName[];
  /** Entries applied, and objects repaired by Merkle comparison, in this round. */
  applied: number;
  repaired: number;
  dropped: number;
  /** Sum of the positions reached: the secondary's last_remote_wal. */
  lastRemoteWal: number;
  /** A page stopped short of what its object had recorded (a round's limit): ask again at once. */
  more: boolean;
}

const buckets = (m: ReplicaMerkle): string[] => ('buckets' in m ? m.buckets : []);
const entries = (m: ReplicaMerkle): Record<string, string> => ('entries' in m ? m.entries : {});

/** Buckets whose entry hashes one call asks for, and keys per values call and per repair write. */
const BUCKETS_PER_CALL = 64;
const KEYS_PER_CALL = 500;

/**
 * Makes one object equal to the primary's by comparing bucket hashes, then entry hashes. Work is
 * cut into calls of bounded size (a mount may hold hundreds of thousands of keys); the position is
 * recorded with the last write only, so a repair cut short is done again, never taken as done.
 */
export async function repairObject(ports: FollowerPorts, object: ObjectName, resumeAfter: number): Promise<void> {
  const differing = differingBuckets(buckets(await ports.remoteMerkle(object)), buckets(await ports.merkle(object)));
  const writes: [string, string | null][] = [];
  for (let i = 0; i < differing.length; i += BUCKETS_PER_CALL) {
    const group = differing.slice(i, i + BUCKETS_PER_CALL);
    const wanted = new Map(Object.entries(entries(await ports.remoteMerkle(object, group))));
    const have = new Map(Object.entries(entries(await ports.merkle(object, group))));
    const { copy, remove } = bucketRepair(wanted, have);
    for (let k = 0; k < copy.length; k += KEYS_PER_CALL) writes.push(...Object.entries(await ports.remoteValues(object, copy.slice(k, k + KEYS_PER_CALL))));
    for (const key of remove) writes.push([key, null]);
  }
  for (let i = 0; i < writes.length; i += KEYS_PER_CALL) {
    const last = i + KEYS_PER_CALL >= writes.length;
    await ports.repair(object, Object.fromEntries(writes.slice(i, i + KEYS_PER_CALL)), last ? resumeAfter : null);
  }
  if (writes.length === 0) await ports.repair(object, {}, resumeAfter);
}

export async function followOnce(ports: FollowerPorts, known: readonly ObjectName[], limit: number): Promise<RoundResult> {
  const positions: Record<ObjectName, number> = {};
  for (const object of known) {
    const position = await ports.position(object);
    if (position !== null) positions[object] = position;
  }
  const reply = await ports.pull(positions, limit);
  const result: RoundResult = { objects: reply.objects, applied: 0, repaired: 0, dropped: 0, lastRemoteWal: 0, more: false };
  for (const action of planPull(positions, reply)) {
    if (action.kind === 'apply') {
      positions[action.object] = await ports.apply(action.object, reply.pages[action.object]);
      result.applied += action.entries.length;
      if (reply.pages[action.object].last > positions[action.object]) result.more = true;
    } else if (action.kind === 'merkle') {
      await repairObject(ports, action.object, action.resumeAfter);
      positions[action.object] = action.resumeAfter;
      result.repaired++;
      // The log goes on from where the comparison began.
      result.more = true;
    } else if (action.kind === 'drop') {
      await ports.wipe(action.object);
      delete positions[action.object];
      result.dropped++;
    }
  }
  for (const object of reply.objects) result.lastRemoteWal += positions[object] ?? 0;
  return result;
}
