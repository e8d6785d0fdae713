// Decrypted values of recently used keys, each remembered with the exact sealed bytes it came
// from: a read whose stored bytes are identical skips the AES-GCM open (the same bytes under the
// same key always open to the same plaintext). Anything else — another writer, a rewrap, a
// restore — changes the bytes and misses. Bounded by total plaintext size, least recently used
// first out.

import { LruMap } from '../lru-map';

const MAX_BYTES = 4 * 1024 * 1024;
/** Larger values are not worth holding: their decrypt is a small part of handling them. */
const MAX_VALUE_BYTES = 64 * 1024;

interface Entry {
  sealed: Uint8Array;
  plain: Uint8Array;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  // The physical layer hands back the very array it remembered (durable-objects/recent-values.ts).
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

export class OpenedCache {
  private readonly entries = new LruMap<Entry>((e) => e.plain.length + e.sealed.length, MAX_BYTES);

  /** The plaintext for `sealed` at `key` (a copy the caller may keep), or null. */
  lookup(key: string, sealed: Uint8Array): Uint8Array | null {
    const entry = this.entries.get(key);
    if (!entry) return null;
    if (!sameBytes(entry.sealed, sealed)) {
      this.entries.delete(key);
      return null;
    }
    return entry.plain.slice();
  }

  remember(key: string, sealed: Uint8Array, plain: Uint8Array): void {
    if (plain.length > MAX_VALUE_BYTES) this.entries.delete(key);
    else this.entries.set(key, { sealed, plain: plain.slice() });
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
