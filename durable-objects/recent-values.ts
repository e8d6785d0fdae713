// Values the physical layer read or wrote lately, absent ones included. A Durable Object is the
// only writer of its storage and every write goes through SqlPhysical.apply, so a remembered value
// is the stored one: a hit costs no SQL at all. Raw SQL that bypasses apply (deleteAll) must
// forget everything. Bounded by entry count and bytes, least recently used first out.

import { LruMap } from '../src/core/lru-map';

const MAX_ENTRIES = 4096;
const MAX_BYTES = 2 * 1024 * 1024;
/** Larger values are read from SQLite each time: their own handling dwarfs the query. */
const MAX_VALUE_BYTES = 64 * 1024;

export class RecentValues {
  private readonly entries = new LruMap<Uint8Array | null>((v) => v?.length ?? 0, MAX_BYTES, MAX_ENTRIES);

  /** The remembered value (null: known absent), or undefined when not remembered. Callers must not modify it. */
  get(key: string): Uint8Array | null | undefined {
    return this.entries.get(key);
  }

  set(key: string, value: Uint8Array | null): void {
    if (value !== null && value.length > MAX_VALUE_BYTES) this.entries.delete(key);
    else this.entries.set(key, value);
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
