// The replication log as the rest of the system sees it. Every object's physical layer records,
// while replication is on, each committed change (key and barrier-encrypted value, null for a
// delete) in the same SQLite transaction as the change itself, numbered by a per-object sequence
// and grouped by batch (one group-commit flush). A secondary applies whole batches in order and
// records how far it got in the same transaction, so applying again is harmless.

export interface LogEntry {
  seq: number;
  /** The flush the change belonged to: a secondary applies a batch whole or not at all. */
  batch: number;
  key: string;
  /** The stored (encrypted) bytes; null for a delete. */
  value: Uint8Array | null;
}

/** A page of the log: entries after a sequence number, ending at a batch boundary. */
export interface LogPage {
  entries: LogEntry[];
  /** The newest sequence number recorded (the primary's last_wal for this object). */
  last: number;
  /** The oldest sequence number still kept (0: none trimmed); a secondary behind it needs a Merkle sync. */
  first: number;
}

/** What a replicating physical layer offers (durable-objects/replication-log.ts over SQLite). */
export interface ReplicationLog {
  /** Starts recording (idempotent); from now on no write commits without its entry. */
  start(): void;
  /** Stops recording and drops the log. */
  stop(): void;
  readonly recording: boolean;
  /** Entries after `after`, at most about `limit` (a batch is never split). */
  since(after: number, limit: number): LogPage;
  /** Forgets entries up to `upTo` (every known secondary has applied them). */
  trim(upTo: number): void;
}

/** A secondary's progress per source object, kept with the data it applied. */
export interface AppliedPosition {
  seq: number;
}
