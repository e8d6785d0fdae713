// The replication log of one object's SQLite database (src/core/replication/log.ts). While
// recording, triggers on coffer_kv copy every change into coffer_repl_log inside the statement
// that made it, so a change cannot commit without its entry; SqlPhysical opens each flush with
// beginBatch() in the same transaction, which numbers the batch the triggers stamp on entries.
// Not recording, the triggers do not exist and a write costs nothing more.
//
// The secondary side lives here too: applyRemote writes a primary's entries and the position
// reached in one transaction, and the Merkle index is built from the stored rows.

import type { AppliedPosition, LogEntry, LogPage, ReplicationLog } from '../src/core/replication/log';
import { bucketOf, entryHash, MerkleIndex } from '../src/core/replication/merkle';
import { bytesToHex } from '@noble/hashes/utils.js';
import { LOCAL_KEY_PREFIX } from '../src/framework/storage';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS coffer_repl_log (seq INTEGER PRIMARY KEY AUTOINCREMENT, batch INTEGER NOT NULL, key TEXT NOT NULL, value BLOB);
CREATE TABLE IF NOT EXISTS coffer_repl_meta (id INTEGER PRIMARY KEY CHECK (id = 1), batch INTEGER NOT NULL, trimmed INTEGER NOT NULL);
INSERT OR IGNORE INTO coffer_repl_meta (id, batch, trimmed) VALUES (1, 0, 0);
CREATE TABLE IF NOT EXISTS coffer_repl_applied (source TEXT PRIMARY KEY, seq INTEGER NOT NULL);
-- This cluster's own replication settings: never recorded, never replicated, never in a Merkle tree.
CREATE TABLE IF NOT EXISTS coffer_local (key TEXT PRIMARY KEY, value BLOB NOT NULL);
`;

// Rows under LOCAL_KEY_PREFIX are the object's own (an attempt in progress, notices still to
// send): never recorded, compared or repaired, so that following a primary cannot undo them.
const LOCAL = `'${LOCAL_KEY_PREFIX}*'`;

const TRIGGERS = `
CREATE TRIGGER IF NOT EXISTS coffer_repl_insert AFTER INSERT ON coffer_kv WHEN NEW.key NOT GLOB ${LOCAL} BEGIN
  INSERT INTO coffer_repl_log (batch, key, value) VALUES ((SELECT batch FROM coffer_repl_meta WHERE id = 1), NEW.key, NEW.value);
END;
CREATE TRIGGER IF NOT EXISTS coffer_repl_update AFTER UPDATE OF value ON coffer_kv WHEN NEW.key NOT GLOB ${LOCAL} BEGIN
  INSERT INTO coffer_repl_log (batch, key, value) VALUES ((SELECT batch FROM coffer_repl_meta WHERE id = 1), NEW.key, NEW.value);
END;
CREATE TRIGGER IF NOT EXISTS coffer_repl_delete AFTER DELETE ON coffer_kv WHEN OLD.key NOT GLOB ${LOCAL} BEGIN
  INSERT INTO coffer_repl_log (batch, key, value) VALUES ((SELECT batch FROM coffer_repl_meta WHERE id = 1), OLD.key, NULL);
END;
`;

const DROP_TRIGGERS = `
DROP TRIGGER IF EXISTS coffer_repl_insert;
DROP TRIGGER IF EXISTS coffer_repl_update;
DROP TRIGGER IF EXISTS coffer_repl_delete;
`;

type Row = { seq: number; batch: number; key: string; value: ArrayBuffer | null };

export class SqlReplicationLog implements ReplicationLog {
  #recording: boolean;
  #follower: boolean | undefined;

  constructor(private readonly sql: SqlStorage) {
    this.createSchema();
    this.#recording = this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM sqlite_master WHERE type = 'trigger' AND name = 'coffer_repl_insert'").one().n > 0;
  }

  /** (Re)creates the tables (storage.deleteAll() drops them). */
  createSchema(): void {
    this.sql.exec(SCHEMA);
    this.#recording = false;
    this.#follower = undefined;
  }

  get recording(): boolean {
    return this.#recording;
  }

  start(): void {
    // Dropped first: a trigger made by an older definition is replaced.
    this.sql.exec(DROP_TRIGGERS + TRIGGERS);
    this.#recording = true;
  }

  stop(): void {
    this.sql.exec(DROP_TRIGGERS);
    this.sql.exec('DELETE FROM coffer_repl_log');
    this.#recording = false;
  }

  /**
   * A DR secondary's object follows its primary's: it runs no timed work of its own (lease expiry,
   * rotations, tidy) until promoted, or it would change what it mirrors.
   */
  get follower(): boolean {
    // Read once, then kept: every request of the object asks.
    this.#follower ??= this.sql.exec<{ n: number }>("SELECT count(*) AS n FROM coffer_local WHERE key = 'dr-follower'").one().n > 0;
    return this.#follower;
  }

  setFollower(on: boolean): void {
    if (on) this.sql.exec("INSERT OR IGNORE INTO coffer_local (key, value) VALUES ('dr-follower', x'01')");
    else this.sql.exec("DELETE FROM coffer_local WHERE key = 'dr-follower'");
    this.#follower = on;
  }

  /** Forgets the log and every applied position (the tables stay). */
  reset(): void {
    this.sql.exec(DROP_TRIGGERS);
    this.sql.exec('DELETE FROM coffer_repl_log');
    this.sql.exec('DELETE FROM coffer_repl_applied');
    this.#recording = false;
  }

  /** Numbers the batch about to be written; call inside the batch's transaction. */
  beginBatch(): void {
    this.sql.exec('UPDATE coffer_repl_meta SET batch = batch + 1 WHERE id = 1');
  }

  since(after: number, limit: number): LogPage {
    const rows = this.sql.exec<Row>('SELECT seq, batch, key, value FROM coffer_repl_log WHERE seq > ? ORDER BY seq LIMIT ?', after, limit).toArray();
    // Never end a page inside a batch: take the rest of the last one.
    if (rows.length === limit) {
      const tail = rows[rows.length - 1];
      rows.push(...this.sql.exec<Row>('SELECT seq, batch, key, value FROM coffer_repl_log WHERE seq > ? AND batch = ? ORDER BY seq', tail.seq, tail.batch).toArray());
    }
    return { entries: rows.map(toEntry), last: this.lastSeq(), first: this.trimmedUpTo() };
  }

  /** The newest sequence number ever given (0: none). */
  lastSeq(): number {
    const row = this.sql.exec<{ seq: number | null }>("SELECT seq FROM sqlite_sequence WHERE name = 'coffer_repl_log'").toArray()[0];
    return row?.seq ?? 0;
  }

  trimmedUpTo(): number {
    return this.sql.exec<{ trimmed: number }>('SELECT trimmed FROM coffer_repl_meta WHERE id = 1').one().trimmed;
  }

  trim(upTo: number): void {
    const bound = Math.min(upTo, this.lastSeq());
    if (bound <= this.trimmedUpTo()) return;
    this.sql.exec('DELETE FROM coffer_repl_log WHERE seq <= ?', bound);
    this.sql.exec('UPDATE coffer_repl_meta SET trimmed = ? WHERE id = 1', bound);
  }

  /** Whether this (secondary) object was ever synced with `source` (a repair or a page). */
  synced(source: string): boolean {
    return this.sql.exec<{ n: number }>('SELECT count(*) AS n FROM coffer_repl_applied WHERE source = ?', source).one().n > 0;
  }

  /** How far this (secondary) object applied the primary object `source`. */
  applied(source: string): AppliedPosition {
    const row = this.sql.exec<{ seq: number }>('SELECT seq FROM coffer_repl_applied WHERE source = ?', source).toArray()[0];
    return { seq: row?.seq ?? 0 };
  }

  /**
   * Records the position reached; `write` (run first, in the same transaction) applies the
   * entries to coffer_kv. Entries at or below the recorded position are left out: applying a
   * page twice changes nothing.
   */
  applyRemote(source: string, entries: LogEntry[], write: (entries: LogEntry[]) => void, transaction: (run: () => void) => void): AppliedPosition {
    const from = this.applied(source).seq;
    const fresh = entries.filter((e) => e.seq > from);
    if (fresh.length === 0) return { seq: from };
    const seq = fresh[fresh.length - 1].seq;
    transaction(() => {
      write(fresh);
      this.setApplied(source, seq);
    });
    return { seq };
  }

  setApplied(source: string, seq: number): void {
    this.sql.exec('INSERT INTO coffer_repl_applied (source, seq) VALUES (?, ?) ON CONFLICT(source) DO UPDATE SET seq = excluded.seq', source, seq);
  }

  /** The Merkle index of every stored entry (a full scan: for diffs and reindexing, not per write). */
  merkle(): MerkleIndex {
    const index = new MerkleIndex();
    for (const r of this.sql.exec<{ key: string; value: ArrayBuffer }>(`SELECT key, value FROM coffer_kv WHERE key NOT GLOB ${LOCAL}`)) index.change(r.key, null, new Uint8Array(r.value));
    return index;
  }

  /** Entry hashes (hex) of the keys in the given buckets, for a bucket-level comparison. */
  bucketEntries(buckets: readonly number[]): Map<string, string> {
    const wanted = new Set(buckets);
    const out = new Map<string, string>();
    for (const r of this.sql.exec<{ key: string; value: ArrayBuffer }>(`SELECT key, value FROM coffer_kv WHERE key NOT GLOB ${LOCAL}`)) {
      if (wanted.has(bucketOf(r.key))) out.set(r.key, bytesToHex(entryHash(r.key, new Uint8Array(r.value))));
    }
    return out;
  }
}

/**
 * What a cluster keeps for itself outside its replicated storage (its DR state, its secondary
 * key): a secondary's replicated storage is the primary's, and must not overwrite these.
 */
export class LocalState {
  constructor(private readonly sql: SqlStorage) {}

  get(key: string): Uint8Array | null {
    const row = this.sql.exec<{ value: ArrayBuffer }>('SELECT value FROM coffer_local WHERE key = ?', key).toArray()[0];
    return row ? new Uint8Array(row.value) : null;
  }

  put(key: string, value: Uint8Array | null): void {
    if (value === null) this.sql.exec('DELETE FROM coffer_local WHERE key = ?', key);
    else this.sql.exec('INSERT INTO coffer_local (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value', key, value);
  }
}

function toEntry(r: Row): LogEntry {
  return { seq: r.seq, batch: r.batch, key: r.key, value: r.value === null ? null : new Uint8Array(r.value) };
}
