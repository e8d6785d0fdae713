// Values the physical layer read or wrote lately, absent ones included. A Durable Object is the
// only writer of its storage and every write goes through SqlPhysical.apply, so a remembered value
// is the stored one: a hit costs no SQL at all. Raw SQL that bypasses apply (deleteAll) must
// forget everything. Bounded by entry count and bytes, least recently used first out.

const MAX_ENTRIES = 4096;
const MAX_BYTES = 2 * 1024 * 1024;
/** Larger values are read from SQLite each time: their own handling dwarfs the query. */
const MAX_VALUE_BYTES = 64 * 1024;

export class RecentValues {
  private readonly entries = new Map<string, Uint8Array | null>();
  private bytes = 0;

  /** The remembered value (null: known absent), or undefined when not remembered. Callers must not modify it. */
  get(key: string): Uint8Array | null | undefined {
    const value = this.entries.get(key);
    if (value === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, value);
    return value;
  }

  set(key: string, value: Uint8Array | null): void {
    this.forget(key);
    if (value !== null && value.length > MAX_VALUE_BYTES) return;
    this.entries.set(key, value);
    this.bytes += value?.length ?? 0;
    for (const [oldest, old] of this.entries) {
      if (this.entries.size <= MAX_ENTRIES && this.bytes <= MAX_BYTES) break;
      this.entries.delete(oldest);
      this.bytes -= old?.length ?? 0;
    }
  }

  forget(key: string): void {
    const old = this.entries.get(key);
    if (old === undefined) return;
    this.entries.delete(key);
    this.bytes -= old?.length ?? 0;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}
