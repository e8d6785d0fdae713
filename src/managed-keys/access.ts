// How an engine reaches the managed keys its mount may use. The hosting object supplies the
// lookup (the entries live in the SystemObject) and the backend deps (the HSM bridge binding,
// fetch); an engine asks by managed_key_name or managed_key_id together with its mount's
// allowed_managed_keys, and gets the entry with a ManagedKey to call.

import { createBackend } from './backends';
import { resolveManagedKey, type ManagedKeyRef } from './resolve';
import type { BackendDeps, ManagedKey, ManagedKeyEntry } from './types';

/** A key an engine may use: its configuration (for the guards; never stored or returned) and the key. */
export interface ResolvedManagedKey {
  entry: ManagedKeyEntry;
  key: ManagedKey;
}

/** What engines are given (MountHost.managedKeys). */
export interface ManagedKeyAccess {
  /**
   * The key `ref` names, if a mount with `allowed` (its allowed_managed_keys) may use it. Throws
   * ManagedKeyError 400 when there is no such key, the mount may not use it, or its backend is
   * not available here.
   */
  resolve(ref: ManagedKeyRef, allowed: readonly string[]): Promise<ResolvedManagedKey>;
}

/** Where the entries come from: by name or uuid; null when there is none (or the server is sealed). */
export type ManagedKeyLookup = (ref: ManagedKeyRef) => Promise<ManagedKeyEntry | null>;

export function managedKeyAccess(lookup: ManagedKeyLookup, deps: BackendDeps): ManagedKeyAccess {
  return {
    async resolve(ref, allowed) {
      const found = await lookup(ref);
      const entry = resolveManagedKey(found ? [found] : [], allowed, ref);
      return { entry, key: createBackend(entry, deps) };
    },
  };
}

/** At most this many entries are kept per object. */
const CACHE_LIMIT = 256;

/**
 * Entries as a mount object last fetched them, so that a hot key does not cost a call to the
 * SystemObject per request. The SystemObject tells every mount object when a managed key changes
 * (and on seal) before that change commits; clear() then drops everything, and a lookup already
 * in flight when it happened keeps its answer to itself. Fetches after it wait for the change to
 * commit (the SystemObject answers them in its write order).
 */
export class ManagedKeyEntryCache {
  readonly #entries = new Map<string, ManagedKeyEntry>();
  #generation = 0;

  constructor(private readonly fetch: ManagedKeyLookup) {}

  readonly lookup: ManagedKeyLookup = async (ref) => {
    const key = ref.id !== undefined ? `id:${ref.id}` : `name:${ref.name}`;
    const hit = this.#entries.get(key);
    if (hit) return hit;
    const generation = this.#generation;
    const found = await this.fetch(ref);
    if (found && generation === this.#generation) {
      if (this.#entries.size >= CACHE_LIMIT) this.#entries.clear();
      this.#entries.set(key, found);
    }
    return found;
  };

  clear(): void {
    this.#generation++;
    this.#entries.clear();
  }
}
