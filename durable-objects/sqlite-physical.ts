// The physical layer over a Durable Object's SQLite database. Keys are stored with their parent
// folder, and folders are reference-counted, so listing a folder costs the size of that folder,
// not of the whole mount. A scan is a range of the primary-key index: a page costs its size.
//
// A batch is written by one INSERT into the view coffer_apply, whose triggers write each row and
// its folder counts: one statement is atomic in SQLite (a failure undoes all of it), so a batch
// needs no savepoint, which costs more in a Durable Object than the rows themselves.

import { assertFolderPrefix, compareKeys, type StorageOp } from '../src/framework/storage';
import type { Physical } from '../src/core/barrier/physical';
import { LruMap } from '../src/core/lru-map';
import { RecentValues } from './recent-values';
import { SqlReplicationLog } from './replication-log';
import type { AppliedPosition, LogEntry } from '../src/core/replication/log';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS coffer_kv (key TEXT PRIMARY KEY, parent TEXT NOT NULL, value BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS coffer_kv_parent ON coffer_kv (parent);
CREATE TABLE IF NOT EXISTS coffer_dirs (path TEXT PRIMARY KEY, parent TEXT NOT NULL, count INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS coffer_dirs_parent ON coffer_dirs (parent);
CREATE VIEW IF NOT EXISTS coffer_apply (key, parent, value, dirs) AS SELECT NULL, NULL, NULL, NULL;
-- dirs: the JSON array of [folder, its parent] for every folder the key is in.
CREATE TRIGGER IF NOT EXISTS coffer_apply_put_v1 INSTEAD OF INSERT ON coffer_apply WHEN NEW.value IS NOT NULL BEGIN
  INSERT INTO coffer_dirs (path, parent, count)
    SELECT d.value ->> 0, d.value ->> 1, 1 FROM json_each(NEW.dirs) AS d
    WHERE NOT EXISTS (SELECT 1 FROM coffer_kv WHERE key = NEW.key)
    ON CONFLICT(path) DO UPDATE SET count = count + 1;
  INSERT INTO coffer_kv (key, parent, value) VALUES (NEW.key, NEW.parent, NEW.value)
    ON CONFLICT(key) DO UPDATE SET value = excluded.value;
END;
CREATE TRIGGER IF NOT EXISTS coffer_apply_delete_v1 INSTEAD OF INSERT ON coffer_apply WHEN NEW.value IS NULL BEGIN
  UPDATE coffer_dirs SET count = count - 1
    WHERE path IN (SELECT d.value ->> 0 FROM json_each(NEW.dirs) AS d)
    AND EXISTS (SELECT 1 FROM coffer_kv WHERE key = NEW.key);
  DELETE FROM coffer_kv WHERE key = NEW.key;
  DELETE FROM coffer_dirs WHERE count <= 0 AND path IN (SELECT d.value ->> 0 FROM json_each(NEW.dirs) AS d);
END;
`;

/**
 * The latest time a Durable Object alarm can be set to ("This API doesn't support dates after
 * 2189"): a later wake-up is set to this and asks again when it comes.
 */
export const LATEST_ALARM = Date.UTC(2189, 0, 1);

/** Folder listings kept in memory: at most this many, of at most this many names in all. */
const LISTINGS = 1024;
const LISTED_NAMES = 64 * 1024;
/** A bigger folder is listed from SQLite each time (its own handling dwarfs the query). */
const LISTING_MAX_NAMES = 4096;

/** Ops per statement: 4 bound values each, and a Durable Object allows 100 per statement. */
const OPS_PER_STATEMENT = 25;

/** "a/b/c" → ["a/", "a/b/"]: the folders a key lives in, outermost first. */
function folders(key: string): string[] {
  const out: string[] = [];
  for (let i = key.indexOf('/'); i >= 0; i = key.indexOf('/', i + 1)) out.push(key.slice(0, i + 1));
  return out;
}

function parentOf(path: string): string {
  const trimmed = path.endsWith('/') ? path.slice(0, -1) : path;
  const i = trimmed.lastIndexOf('/');
  return i < 0 ? '' : trimmed.slice(0, i + 1);
}

export class SqlPhysical implements Physical {
  private readonly sql: SqlStorage;

  /** The replication log (recording only while this object's cluster is a DR primary). */
  readonly log: SqlReplicationLog;

  constructor(private readonly storage: DurableObjectStorage) {
    this.sql = storage.sql;
    this.sql.exec(SCHEMA);
    this.log = new SqlReplicationLog(this.sql);
  }

  /** Recently read and written values, so a hot key costs no query (see recent-values.ts). */
  private readonly recent = new RecentValues();

  /**
   * Recent folder listings, on the same ground as `recent`: every write goes through writeRows,
   * which forgets the listing of each folder a written key is in (a new or deleted key may add or
   * remove it, or a subfolder, there), before it writes.
   */
  private readonly listings = new LruMap<string[]>((names) => names.length, LISTED_NAMES, LISTINGS);

  /** (Re)creates the tables; needed again after storage.deleteAll() dropped them. */
  createSchema(): void {
    this.recent.clear();
    this.listings.clear();
    this.sql.exec(SCHEMA);
    this.log.createSchema();
  }

  /** The stored value; the same array may be handed to later callers, so it must not be modified. */
  get(key: string): Uint8Array | null {
    const known = this.recent.get(key);
    if (known !== undefined) return known;
    // Read to the end: a cursor left open keeps its statement from being reused.
    const rows = this.sql.exec<{ value: ArrayBuffer }>('SELECT value FROM coffer_kv WHERE key = ?', key).toArray();
    const value = rows.length === 0 ? null : new Uint8Array(rows[0].value);
    this.recent.set(key, value);
    return value;
  }

  /** The folder's names, sorted; a new array each time (callers may sort or splice it). */
  list(prefix: string): string[] {
    assertFolderPrefix(prefix);
    const known = this.listings.get(prefix);
    if (known) return known.slice();
    const names = this.listFromSql(prefix);
    if (names.length <= LISTING_MAX_NAMES) this.listings.set(prefix, names.slice());
    return names;
  }

  private listFromSql(prefix: string): string[] {
    const names: string[] = [];
    for (const r of this.sql.exec<{ k: string }>('SELECT key AS k FROM coffer_kv WHERE parent = ?', prefix)) names.push(r.k.slice(prefix.length));
    for (const r of this.sql.exec<{ k: string }>('SELECT path AS k FROM coffer_dirs WHERE parent = ?', prefix)) names.push(r.k.slice(prefix.length));
    return names.sort();
  }

  scan(prefix: string, after: string, limit: number): string[] {
    assertFolderPrefix(prefix);
    if (limit <= 0) return [];
    // SQLite compares TEXT bytewise (UTF-8), which is compareKeys' order. Every key below "p/"
    // is below "p0" ('0' follows '/'). One lower bound only, so the index range starts there
    // (given two, SQLite may start at the other and filter row by row).
    const fromAfter = compareKeys(after, prefix) >= 0;
    const lower = fromAfter ? 'key > ?' : 'key >= ?';
    const bound = fromAfter ? after : prefix;
    const cursor =
      prefix === ''
        ? this.sql.exec<{ k: string }>(`SELECT key AS k FROM coffer_kv WHERE ${lower} ORDER BY key LIMIT ?`, bound, limit)
        : this.sql.exec<{ k: string }>(`SELECT key AS k FROM coffer_kv WHERE ${lower} AND key < ? ORDER BY key LIMIT ?`, bound, `${prefix.slice(0, -1)}0`, limit);
    return cursor.toArray().map((r) => r.k);
  }

  /** A folder's key count is kept with the folder (coffer_dirs), so this is one row. */
  count(prefix: string): number {
    assertFolderPrefix(prefix);
    const rows = this.sql.exec<{ count: number }>('SELECT count FROM coffer_dirs WHERE path = ?', prefix).toArray();
    return rows.length === 0 ? 0 : rows[0].count;
  }

  apply(ops: StorageOp[]): void {
    try {
      this.write(ops);
    } catch (e) {
      // Nothing was written, but what this batch touched is not worth reasoning about: re-read it.
      for (const op of ops) this.recent.forget(op.key);
      throw e;
    }
    for (const op of ops) this.recent.set(op.key, op.value);
  }

  /**
   * A DR secondary applies its primary's entries for `source` (this object's counterpart there):
   * values as stored there, and the position reached, in one transaction; a repeat is harmless.
   */
  applyReplicated(source: string, entries: LogEntry[]): AppliedPosition {
    const position = this.log.applyRemote(
      source,
      entries,
      (fresh) => this.writeRows(fresh.map((e) => ({ key: e.key, value: e.value })), false),
      (run) => this.storage.transactionSync(run),
    );
    for (const e of entries) this.recent.forget(e.key);
    return position;
  }

  /**
   * A DR secondary's enable: erases every replicated row, the log and the positions (this
   * object's local settings and its alarm stay).
   */
  wipeReplicated(): void {
    this.storage.transactionSync(() => {
      this.sql.exec('DELETE FROM coffer_kv');
      this.sql.exec('DELETE FROM coffer_dirs');
      this.log.reset();
    });
    this.recent.clear();
    this.listings.clear();
  }

  private write(ops: StorageOp[]): void {
    if (ops.length === 0) return;
    // Replicating: the triggers log each row in the statement that writes it; the batch number
    // is bumped first, outside any savepoint (one costs more than the rows, see the top): a bump
    // whose rows then fail only leaves a batch number unused.
    if (this.log.recording) this.log.beginBatch();
    // The lone-overwrite fast path trusts rowsWritten, which does not hold once the batch bump
    // and the log triggers write too (measured: a new key was taken for an overwrite).
    this.writeRows(ops, !this.log.recording);
  }

  /**
   * `fastPath`: a lone overwrite may be a plain UPDATE (no folder to count). Not while recording
   * or applying replicated entries: there workerd's rowsWritten for an UPDATE that matched no row
   * was not 0, so a new key was taken for an overwrite and never written.
   */
  private writeRows(ops: StorageOp[], fastPath: boolean): void {
    if (ops.length === 0) return;
    // An overwrite of a key that exists changes no folder.
    if (fastPath && ops.length === 1 && ops[0].value !== null && this.overwrite(ops[0].key, ops[0].value)) return;
    this.forgetListings(ops);
    if (ops.length <= OPS_PER_STATEMENT) return this.applyStatement(ops);
    this.storage.transactionSync(() => {
      for (let i = 0; i < ops.length; i += OPS_PER_STATEMENT) this.applyStatement(ops.slice(i, i + OPS_PER_STATEMENT));
    });
  }

  /** One INSERT into coffer_apply: its rows are applied in order, all or none. */
  private applyStatement(ops: StorageOp[]): void {
    const binds: unknown[] = [];
    for (const op of ops) binds.push(op.key, parentOf(op.key), op.value, JSON.stringify(folders(op.key).map((dir) => [dir, parentOf(dir)])));
    this.sql.exec(`INSERT INTO coffer_apply (key, parent, value, dirs) VALUES ${ops.map(() => '(?, ?, ?, ?)').join(', ')}`, ...binds);
  }

  private forgetListings(ops: StorageOp[]): void {
    if (this.listings.size === 0) return;
    this.listings.delete('');
    for (const op of ops) for (const dir of folders(op.key)) this.listings.delete(dir);
  }

  private overwrite(key: string, value: Uint8Array): boolean {
    return this.sql.exec('UPDATE coffer_kv SET value = ? WHERE key = ?', value, key).rowsWritten > 0;
  }
}
