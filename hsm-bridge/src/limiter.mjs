// @ts-check
// max_parallel: at most N operations in flight for one (library, token, max_parallel) — in
// practice one Coffer managed key — with the others queued in arrival order.

/**
 * @typedef {{ library: string, slot: string, max_parallel: number, in_flight: number,
 *   peak_in_flight: number, waiting: number, peak_waiting: number, completed: number }} LimiterStats
 */

export class Limiter {
  /** @type {Array<() => void>} */
  #queue = [];

  /**
   * @param {string} library
   * @param {string} slot
   * @param {number} max
   */
  constructor(library, slot, max) {
    /** @type {LimiterStats} */
    this.stats = { library, slot, max_parallel: max, in_flight: 0, peak_in_flight: 0, waiting: 0, peak_waiting: 0, completed: 0 };
  }

  /**
   * @template T
   * @param {() => Promise<T>} fn
   * @returns {Promise<T>}
   */
  async run(fn) {
    const s = this.stats;
    if (s.in_flight >= s.max_parallel) {
      s.waiting++;
      s.peak_waiting = Math.max(s.peak_waiting, s.waiting);
      // A released slot is handed straight to the next waiter (in_flight is not decremented then),
      // so a newcomer cannot overtake the queue.
      await new Promise((/** @type {(v?: unknown) => void} */ resolve) => this.#queue.push(resolve));
      s.waiting--;
    } else {
      s.in_flight++;
    }
    s.peak_in_flight = Math.max(s.peak_in_flight, s.in_flight);
    try {
      return await fn();
    } finally {
      s.completed++;
      const next = this.#queue.shift();
      if (next) next();
      else s.in_flight--;
    }
  }
}

export class Limiters {
  /** @type {Map<string, Limiter>} */
  #all = new Map();

  /**
   * @param {string} library
   * @param {string} slot
   * @param {number} max
   */
  get(library, slot, max) {
    const key = `${library}\u0000${slot}\u0000${max}`;
    let l = this.#all.get(key);
    if (!l) {
      l = new Limiter(library, slot, max);
      this.#all.set(key, l);
    }
    return l;
  }

  stats() {
    return [...this.#all.values()].map((l) => ({ ...l.stats }));
  }
}
