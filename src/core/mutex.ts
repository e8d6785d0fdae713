// A FIFO async mutex. Durable Objects interleave requests at every awaited RPC or fetch, so
// read-modify-write sequences that await in between must hold this.
export class Mutex {
  private tail: Promise<void> = Promise.resolve();

  async run<T>(fn: () => Promise<T>): Promise<T> {
    const previous = this.tail;
    let release!: () => void;
    this.tail = new Promise<void>((resolve) => (release = resolve));
    try {
      await previous;
      // Awaited here (not returned) so a rejection is handled at once, never "adopted" later.
      return await fn();
    } finally {
      release();
    }
  }
}
