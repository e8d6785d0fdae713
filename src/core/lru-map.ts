// A Map bounded by entry count and by total weight (bytes), least recently used out first.
//
// A read moves its entry to the newest end (delete, then set) only when the entry may be in the
// older half of the map: V8's Map leaves a tombstone per deletion and rehashes the whole table
// once they fill it, so moving on every read made each read cost in proportion to the map's size
// (measured in workerd: 0.05 µs per read of one key at 10 entries, 1.1 at 300, 7 at 3,000;
// RecentValues holds up to 4,096). A read entry is thus in the newer half of the order when it is
// read, and eviction takes from the oldest end.
//
// Eviction runs only when a bound is passed, and then down to 7/8 of it, for the same reason.

interface Slot<V> {
  value: V;
  /** `#moves` when the entry was set or last moved to the newest end. */
  at: number;
}

export class LruMap<V> {
  readonly #entries = new Map<string, Slot<V>>();
  #weight = 0;
  /** Sets and moves so far: `#moves - slot.at` bounds how many entries are newer than it. */
  #moves = 0;

  constructor(
    private readonly weigh: (value: V) => number,
    private readonly maxWeight: number,
    private readonly maxEntries = Number.POSITIVE_INFINITY,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  /** The value, now among the most recently used; undefined when not held. */
  get(key: string): V | undefined {
    const slot = this.#entries.get(key);
    if (slot === undefined) return undefined;
    if (this.#moves - slot.at > this.#entries.size >> 1) {
      this.#entries.delete(key);
      this.#entries.set(key, slot);
      slot.at = ++this.#moves;
    }
    return slot.value;
  }

  set(key: string, value: V): void {
    this.delete(key);
    this.#entries.set(key, { value, at: ++this.#moves });
    this.#weight += this.weigh(value);
    if (this.#weight > this.maxWeight || this.#entries.size > this.maxEntries) this.#evict();
  }

  delete(key: string): void {
    const old = this.#entries.get(key);
    if (old === undefined) return;
    this.#entries.delete(key);
    this.#weight -= this.weigh(old.value);
  }

  clear(): void {
    this.#entries.clear();
    this.#weight = 0;
  }

  #evict(): void {
    const weight = (this.maxWeight * 7) / 8;
    const entries = (this.maxEntries * 7) / 8;
    for (const [key, slot] of this.#entries) {
      if (this.#weight <= weight && this.#entries.size <= entries) break;
      this.#entries.delete(key);
      this.#weight -= this.weigh(slot.value);
    }
  }
}
