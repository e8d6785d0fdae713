// The pull protocol between a DR secondary and its primary, as data and pure decisions. The
// secondary's SystemObject alarm asks the primary for the pages after its positions (one per
// object it knows, the primary answering with the objects that exist now); this module decides,
// per object, whether to apply a page, repair by Merkle comparison (the log no longer reaches back
// that far) or drop the object (it is gone on the primary), and where the primary may trim.
//
// Pull, not push: the primary keeps no connection per secondary, only the last positions each
// reported (which bound trimming), and a secondary behind NAT or restarted resumes by asking.

import { badRequest } from '../../framework/errors';
import { fromBase64, toBase64 } from '../../crypto/encoding';
import type { LogEntry, LogPage } from './log';

/**
 * A Durable Object both clusters address the same way: "system", "shard/<n>", "mount/<uuid>",
 * "audit/<uuid>". The secondary writes a primary object's entries into its own object of that name.
 */
export type ObjectName = string;

const OBJECT_NAME = /^(system|shard\/\d{1,4}|(mount|audit)\/[0-9a-f-]{36})$/;

export function validObjectName(name: string): boolean {
  return OBJECT_NAME.test(name);
}

/** A log entry as JSON: the value as base64 (null for a delete). */
export interface WireEntry {
  seq: number;
  batch: number;
  key: string;
  value: string | null;
}

export interface WirePage {
  entries: WireEntry[];
  last: number;
  first: number;
}

export interface PullReply {
  cluster_id: string;
  /** Every object of the primary now: objects not listed are gone. */
  objects: ObjectName[];
  pages: Record<ObjectName, WirePage>;
  /** The primary's clock (unix ms) when it answered, for lag and clock skew. */
  now: number;
}

export function encodePage(page: LogPage): WirePage {
  return {
    entries: page.entries.map((e) => ({ seq: e.seq, batch: e.batch, key: e.key, value: e.value === null ? null : toBase64(e.value) })),
    last: page.last,
    first: page.first,
  };
}

/** A page from the wire, checked: sequence numbers rising, values base64; anything else is a 400. */
export function decodePage(page: unknown): LogPage {
  const p = page as Partial<WirePage> | null;
  if (!p || !Array.isArray(p.entries) || !Number.isSafeInteger(p.last) || !Number.isSafeInteger(p.first)) throw badRequest('malformed replication page');
  let previous = 0;
  const entries: LogEntry[] = p.entries.map((raw) => {
    const e = raw as Partial<WireEntry>;
    if (!Number.isSafeInteger(e.seq) || !Number.isSafeInteger(e.batch) || typeof e.key !== 'string' || (e.value !== null && typeof e.value !== 'string')) {
      throw badRequest('malformed replication entry');
    }
    if ((e.seq as number) <= previous) throw badRequest('replication entries out of order');
    previous = e.seq as number;
    const value = e.value === null ? null : fromBase64(e.value as string);
    if (e.value !== null && value === null) throw badRequest('replication entry value is not base64');
    return { seq: e.seq as number, batch: e.batch as number, key: e.key as string, value };
  });
  return { entries, last: p.last as number, first: p.first as number };
}

/** A Merkle answer: the root and bucket hashes, or the entry hashes (hex) of asked buckets. */
export type ReplicaMerkle = { root: string; buckets: string[] } | { entries: Record<string, string> };

export type PullAction =
  | { object: ObjectName; kind: 'apply'; entries: LogEntry[] }
  /** The log was trimmed past this object's position (or it never had one): compare Merkle trees. */
  | { object: ObjectName; kind: 'merkle'; resumeAfter: number }
  /** Gone on the primary: erase it here. */
  | { object: ObjectName; kind: 'drop' }
  | { object: ObjectName; kind: 'idle' };

/**
 * What the secondary does with a reply. `resumeAfter` for a Merkle repair is the primary's last
 * sequence number at the time of the reply: entries after it are pulled afterwards (re-applying
 * ones the repair already copied is harmless, the log holding whole values in order). An object
 * without a position was never synced: always a Merkle repair first.
 */
export function planPull(positions: Readonly<Record<ObjectName, number>>, reply: PullReply): PullAction[] {
  const actions: PullAction[] = [];
  const listed = new Set(reply.objects);
  for (const object of reply.objects) {
    if (!validObjectName(object)) throw badRequest(`unknown replicated object "${object}"`);
    const position = positions[object];
    const page = reply.pages[object];
    if (!page) {
      actions.push({ object, kind: 'idle' });
      continue;
    }
    const decoded = decodePage(page);
    // Entries up to `first` are gone: a secondary behind that point cannot catch up by the log.
    // Nor can one that never synced this object (no position): recording began when the primary
    // was enabled, not when the object was created.
    if (position === undefined || position < decoded.first) {
      actions.push({ object, kind: 'merkle', resumeAfter: decoded.last });
      continue;
    }
    const fresh = decoded.entries.filter((e) => e.seq > position);
    actions.push(fresh.length > 0 ? { object, kind: 'apply', entries: fresh } : { object, kind: 'idle' });
  }
  for (const object of Object.keys(positions)) if (!listed.has(object)) actions.push({ object, kind: 'drop' });
  return actions;
}

export interface TrimPolicy {
  /** Keep at most this many entries whatever the secondaries say (a lagging one repairs by Merkle). */
  maxEntries: number;
  /** A secondary that has not pulled for this long no longer holds the log back (ms). */
  staleAfterMs: number;
}

export const DEFAULT_TRIM: TrimPolicy = { maxEntries: 200_000, staleAfterMs: 24 * 3600_000 };

/**
 * Where an object's log may be trimmed to: the lowest position among secondaries that pulled
 * recently (none: everything), never keeping more than maxEntries.
 */
export function trimPoint(
  reports: readonly { position: number; at: number }[],
  lastSeq: number,
  now: number,
  policy: TrimPolicy = DEFAULT_TRIM,
): number {
  const live = reports.filter((r) => now - r.at <= policy.staleAfterMs);
  const slowest = live.length === 0 ? lastSeq : Math.min(...live.map((r) => r.position));
  return Math.min(lastSeq, Math.max(slowest, lastSeq - policy.maxEntries));
}
