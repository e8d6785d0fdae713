// The physical layer over a Durable Object's SQLite database. Keys are stored with their parent
// folder, and folders are reference-counted, so listing a folder costs the size of that folder,
// not of the whole mount. A scan is a range of the primary-key index: a page costs its size.

import { assertFolderPrefix, compareKeys, type StorageOp } from '../src/framework/storage';
import type { Physical } from '../src/core/physical';

const SCHEMA = `
CREATE TABLE IF NOT EXISTS coffer_kv (key TEXT PRIMARY KEY, parent TEXT NOT NULL, value BLOB NOT NULL);
CREATE INDEX IF NOT EXISTS coffer_kv_parent ON coffer_kv (parent);
CREATE TABLE IF NOT EXISTS coffer_dirs (path TEXT PRIMARY KEY, parent TEXT NOT NULL, count INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS coffer_dirs_parent ON coffer_dirs (parent);
`;

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

  constructor(private readonly storage: DurableObjectStorage) {
    this.sql = storage.sql;
    this.createSchema();
  }

  /** (Re)creates the tables; needed again after storage.deleteAll() dropped them. */
  createSchema(): void {
    this.sql.exec(SCHEMA);
  }

  get(key: string): Uint8Array | null {
    const { value, done } = this.sql.exec<{ value: ArrayBuffer }>('SELECT value FROM coffer_kv WHERE key = ?', key).next();
    return done || !value ? null : new Uint8Array(value.value);
  }

  list(prefix: string): string[] {
    assertFolderPrefix(prefix);
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

  apply(ops: StorageOp[]): void {
    if (ops.length === 0) return;
    // Fast path: overwriting one existing key is a single (atomic) statement.
    if (ops.length === 1 && ops[0].value !== null && this.overwrite(ops[0].key, ops[0].value)) return;
    this.storage.transactionSync(() => {
      for (const op of ops) {
        if (op.value === null) this.remove(op.key);
        else this.upsert(op.key, op.value);
      }
    });
  }

  private overwrite(key: string, value: Uint8Array): boolean {
    return this.sql.exec('UPDATE coffer_kv SET value = ? WHERE key = ?', value, key).rowsWritten > 0;
  }

  private upsert(key: string, value: Uint8Array): void {
    if (this.overwrite(key, value)) return;
    this.sql.exec('INSERT INTO coffer_kv (key, parent, value) VALUES (?, ?, ?)', key, parentOf(key), value);
    for (const dir of folders(key)) {
      this.sql.exec(
        'INSERT INTO coffer_dirs (path, parent, count) VALUES (?, ?, 1) ON CONFLICT(path) DO UPDATE SET count = count + 1',
        dir,
        parentOf(dir),
      );
    }
  }

  private remove(key: string): void {
    const removed = this.sql.exec('DELETE FROM coffer_kv WHERE key = ? RETURNING 1', key).toArray().length > 0;
    if (!removed) return;
    for (const dir of folders(key)) {
      this.sql.exec('UPDATE coffer_dirs SET count = count - 1 WHERE path = ?', dir);
      this.sql.exec('DELETE FROM coffer_dirs WHERE path = ? AND count <= 0', dir);
    }
  }
}
