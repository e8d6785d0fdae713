// A Map bounded by entry count and by total weight (bytes), least recently used out first.
//
// Eviction runs only when a bound is passed, and then down to 7/8 of it: V8's Map leaves a
// tombstone for each deleted entry until it rehashes, and iteration from the start walks over
// them, so looking for the oldest entry on every insert (as a plain Map LRU does) costs time in
// proportion to the evictions and refreshes since the last rehash.

export class LruMap<V> {
  readonly #entries = new Map<string, V>();
  #weight = 0;

  constructor(
    private readonly weigh: (value: V) => number,
    private readonly maxWeight: number,
    private readonly maxEntries = Number.POSITIVE_INFINITY,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  /** The value, now the most recently used; undefined when not held. */
  get(key: string): V | undefined {
    const value = this.#entries.get(key);
    if (value === undefined) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, value);
    return value;
  }

  set(key: string, value: V): void {
    this.delete(key);
    this.#entries.set(key, value);
    this.#weight += this.weigh(value);
    if (this.#weight > this.maxWeight || this.#entries.size > this.maxEntries) this.#evict();
  }

  delete(key: string): void {
    const old = this.#entries.get(key);
    if (old === undefined) return;
    this.#entries.delete(key);
    this.#weight -= this.weigh(old);
  }

  clear(): void {
    this.#entries.clear();
    this.#weight = 0;
  }

  #evict(): void {
    const weight = (this.maxWeight * 7) / 8;
    const entries = (this.maxEntries * 7) / 8;
    for (const [key, value] of this.#entries) {
      if (this.#weight <= weight && this.#entries.size <= entries) break;
      this.#entries.delete(key);
      this.#weight -= this.weigh(value);
    }
  }
}
