// The barrier keyring as seen by a Durable Object other than the SystemObject: fetched over RPC
// on first use, kept in memory only, dropped when the cluster seals or rotates.

import type { KeyringSource } from '../src/core/barrier';
import { Keyring, type KeyringWire } from '../src/core/keyring';
import { sealedError } from '../src/framework/errors';

export type KeyringFetch = () => Promise<KeyringWire | null>;

export class RemoteKeyring implements KeyringSource {
  private ring: Keyring | null = null;
  private inflight: Promise<Keyring> | null = null;

  constructor(private readonly fetchKeyring: KeyringFetch) {}

  get(): Promise<Keyring> {
    if (this.ring) return Promise.resolve(this.ring);
    if (!this.inflight) {
      this.inflight = this.fetchKeyring()
        .then((wire) => {
          if (!wire) throw sealedError();
          this.ring = Keyring.fromWire(wire);
          return this.ring;
        })
        .finally(() => {
          this.inflight = null;
        });
    }
    return this.inflight;
  }

  refresh(): Promise<Keyring> {
    this.ring = null;
    return this.get();
  }

  drop(): void {
    this.ring = null;
  }
}
