// The barrier keyring as seen by a Durable Object other than the SystemObject: fetched over RPC
// on first use, kept in memory only, dropped when the cluster seals or rotates. It is also
// re-fetched after a minute, so an object that missed a seal announcement stops serving soon
// after anyway.

import type { KeyringSource } from '../src/core/barrier/barrier';
import { Keyring, type KeyringWire } from '../src/core/barrier/keyring';
import { sealedError } from '../src/framework/errors';

export type KeyringFetch = () => Promise<KeyringWire | null>;

const MAX_AGE_MS = 60_000;

export class RemoteKeyring implements KeyringSource {
  #ring: Keyring | null = null;
  #fetchedAt = 0;
  #inflight: Promise<Keyring> | null = null;
  readonly #fetchKeyring: KeyringFetch;

  constructor(fetchKeyring: KeyringFetch) {
    this.#fetchKeyring = fetchKeyring;
  }

  /** The keyring when it may be used without asking again (a synchronous look); null otherwise. */
  current(): Keyring | null {
    return this.#ring && Date.now() - this.#fetchedAt < MAX_AGE_MS ? this.#ring : null;
  }

  get(): Promise<Keyring> {
    const ring = this.current();
    if (ring) return Promise.resolve(ring);
    if (!this.#inflight) {
      this.#inflight = this.#fetchKeyring()
        .then((wire) => {
          if (!wire) {
            this.#ring = null;
            throw sealedError();
          }
          this.#ring = Keyring.fromWire(wire);
          this.#fetchedAt = Date.now();
          return this.#ring;
        })
        .finally(() => {
          this.#inflight = null;
        });
    }
    return this.#inflight;
  }

  refresh(): Promise<Keyring> {
    this.#ring = null;
    return this.get();
  }

  drop(): void {
    this.#ring = null;
  }
}
