// @ts-check
// A small readers-writer lock: operations on a token share it, a login (which changes the login
// state of every session of the token) takes it alone. Waiting writers go first, so a stream of
// operations cannot starve a login.

export class RwLock {
  #readers = 0;
  #writer = false;
  /** @type {Array<{ exclusive: boolean, grant: () => void }>} */
  #queue = [];

  /** @returns {Promise<void>} */
  shared() {
    if (!this.#writer && this.#queue.length === 0) {
      this.#readers++;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#queue.push({ exclusive: false, grant: () => { this.#readers++; resolve(); } }));
  }

  /** @returns {Promise<void>} */
  exclusive() {
    if (!this.#writer && this.#readers === 0 && this.#queue.length === 0) {
      this.#writer = true;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#queue.push({ exclusive: true, grant: () => { this.#writer = true; resolve(); } }));
  }

  releaseShared() {
    this.#readers--;
    this.#drain();
  }

  releaseExclusive() {
    this.#writer = false;
    this.#drain();
  }

  #drain() {
    while (this.#queue.length > 0 && !this.#writer) {
      const head = /** @type {{ exclusive: boolean, grant: () => void }} */ (this.#queue[0]);
      if (head.exclusive) {
        if (this.#readers > 0) return;
        this.#queue.shift();
        head.grant();
        return;
      }
      this.#queue.shift();
      head.grant();
    }
  }
}
