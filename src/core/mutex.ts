// A FIFO async mutex. Durable Objects interleave requests at every awaited RPC or fetch, so
// read-modify-write sequences that await in between must hold this.
export class Mutex {
  private tail: Promise<void> = Promise.resolve();

  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
