// A FIFO async mutex. Durable Objects interleave requests at every awaited RPC or fetch, so
// read-modify-write sequences that await in between must hold this.

import type { Maybe } from '../framework/steps';

export class Mutex {
  private tail: Promise<void> = Promise.resolve();
  /** Holders and waiters: none means a caller may run at once. */
  #queued = 0;

  async run<T>(fn: () => Maybe<T>): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    this.#queued++;
    try {
      await previous;
      // Awaited here (not returned) so a rejection is handled at once, never "adopted" later.
      return await fn();
    } finally {
      this.#queued--;
      release();
    }
  }

  /**
   * As run(), but when the mutex is free `fn` starts at once, and a result it has at once is
   * returned as it is: nothing else can run in between, so that is the turn it would have had.
   */
  runNow<T>(fn: () => Maybe<T>): Maybe<T> {
    if (this.#queued > 0) return this.run(fn);
    this.#queued++;
    let result: Maybe<T>;
    try {
      result = fn();
    } catch (e) {
      this.#queued--;
      throw e;
    }
    if (!(result instanceof Promise)) {
      this.#queued--;
      return result;
    }
    // Still running: later callers wait for it as for any holder.
    const held = result.finally(() => this.#queued--);
    this.tail = held.then(
      () => undefined,
      () => undefined,
    );
    return held;
  }
}
