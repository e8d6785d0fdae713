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
  repair(object: ObjectName, values: Record<string, string | null>, resumeAfter: number): Promise<void>;
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
  /** The primary's clock when it answered (unix ms). */
  primaryNow: number;
}

const buckets = (m: ReplicaMerkle): string[] => ('buckets' in m ? m.buckets : []);
const entries = (m: ReplicaMerkle): Record<string, string> => ('entries' in m ? m.entries : {});

/** Makes one object equal to the primary's by comparing bucket hashes, then entry hashes. */
export async function repairObject(ports: FollowerPorts, object: ObjectName, resumeAfter: number): Promise<void> {
  const differing = differingBuckets(buckets(await ports.remoteMerkle(object)), buckets(await ports.merkle(object)));
  const values: Record<string, string | null> = {};
  if (differing.length > 0) {
    const wanted = new Map(Object.entries(entries(await ports.remoteMerkle(object, differing))));
    const have = new Map(Object.entries(entries(await ports.merkle(object, differing))));
    const { copy, remove } = bucketRepair(wanted, have);
    if (copy.length > 0) Object.assign(values, await ports.remoteValues(object, copy));
    for (const key of remove) values[key] = null;
  }
  await ports.repair(object, values, resumeAfter);
}

export async function followOnce(ports: FollowerPorts, known: readonly ObjectName[], limit: number): Promise<RoundResult> {
  const positions: Record<ObjectName, number> = {};
  for (const object of known) {
    const position = await ports.position(object);
    if (position !== null) positions[object] = position;
  }
  const reply = await ports.pull(positions, limit);
  const result: RoundResult = { objects: reply.objects, applied: 0, repaired: 0, dropped: 0, lastRemoteWal: 0, primaryNow: reply.now };
  for (const action of planPull(positions, reply)) {
    if (action.kind === 'apply') {
      positions[action.object] = await ports.apply(action.object, reply.pages[action.object]);
      result.applied += action.entries.length;
    } else if (action.kind === 'merkle') {
      await repairObject(ports, action.object, action.resumeAfter);
      positions[action.object] = action.resumeAfter;
      result.repaired++;
    } else if (action.kind === 'drop') {
      await ports.wipe(action.object);
      delete positions[action.object];
      result.dropped++;
    }
  }
  for (const object of reply.objects) result.lastRemoteWal += positions[object] ?? 0;
  return result;
}
