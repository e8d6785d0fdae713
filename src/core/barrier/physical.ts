// The physical layer under the barrier: synchronous, byte-valued, with atomic batches.
// Durable Objects implement it over SQLite (durable-objects/sqlite-physical.ts); tests use memory.

import { childrenOf, scanKeys, type StorageOp } from '../../framework/storage';

// Values are handed over, not copied: neither side modifies an array once it has crossed.
export interface Physical {
  get(key: string): Uint8Array | null;
  /** Direct children of a folder prefix, sorted; folders end with '/'. */
  list(prefix: string): string[];
  /** Keys below a folder prefix (any depth) after `after`, in key order, at most `limit` (Storage.scan). */
  scan(prefix: string, after: string, limit: number): string[];
  /** Applies every op or none. */
  apply(ops: StorageOp[]): void;
}

export class MemoryPhysical implements Physical {
  readonly data = new Map<string, Uint8Array>();

  get(key: string) {
    return this.data.get(key) ?? null;
  }
  list(prefix: string) {
    return childrenOf(this.data.keys(), prefix);
  }
  scan(prefix: string, after: string, limit: number) {
    return scanKeys(this.data.keys(), prefix, after, limit);
  }
  apply(ops: StorageOp[]) {
    for (const op of ops) {
      if (op.value === null) this.data.delete(op.key);
      else this.data.set(op.key, op.value.slice());
    }
  }
}
