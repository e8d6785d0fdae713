// The Merkle index a DR secondary compares with its primary when the log no longer reaches back
// (or an operator asks for a reindex). Entries (key and barrier-encrypted value) fall into 256
// buckets by the first byte of sha256(key); a bucket's hash is the XOR of its entries' hashes, so
// a write updates it without rereading the bucket; the root hashes the 256 buckets in order.
// Comparing roots, then buckets, then the entry hashes of differing buckets finds what to copy.

import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

export const BUCKETS = 256;
const HASH_BYTES = 32;
const encoder = new TextEncoder();

export function bucketOf(key: string): number {
  return sha256(encoder.encode(key))[0];
}

/** sha256 over the key's length, the key and the value: no two (key, value) pairs collide by framing. */
export function entryHash(key: string, value: Uint8Array): Uint8Array {
  const k = encoder.encode(key);
  const framed = new Uint8Array(4 + k.length + value.length);
  new DataView(framed.buffer).setUint32(0, k.length);
  framed.set(k, 4);
  framed.set(value, 4 + k.length);
  return sha256(framed);
}

function xorInto(target: Uint8Array, h: Uint8Array): void {
  for (let i = 0; i < HASH_BYTES; i++) target[i] ^= h[i];
}

export class MerkleIndex {
  /** 256 bucket hashes of 32 bytes; an empty bucket is all zeros. */
  readonly buckets: Uint8Array[] = Array.from({ length: BUCKETS }, () => new Uint8Array(HASH_BYTES));

  static build(entries: Iterable<readonly [string, Uint8Array]>): MerkleIndex {
    const index = new MerkleIndex();
    for (const [key, value] of entries) index.change(key, null, value);
    return index;
  }

  /** A key changed from `before` to `after` (null: absent). */
  change(key: string, before: Uint8Array | null, after: Uint8Array | null): void {
    const bucket = this.buckets[bucketOf(key)];
    if (before) xorInto(bucket, entryHash(key, before));
    if (after) xorInto(bucket, entryHash(key, after));
  }

  /** 40 hex digits, as Vault's merkle_root. */
  root(): string {
    const all = new Uint8Array(BUCKETS * HASH_BYTES);
    this.buckets.forEach((b, i) => all.set(b, i * HASH_BYTES));
    return bytesToHex(sha256(all)).slice(0, 40);
  }

  bucketHexes(): string[] {
    return this.buckets.map((b) => bytesToHex(b));
  }
}

/** Buckets whose hashes differ between two indexes (as bucketHexes()). */
export function differingBuckets(a: readonly string[], b: readonly string[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < BUCKETS; i++) if (a[i] !== b[i]) out.push(i);
  return out;
}

/**
 * What a secondary must do to make a bucket equal to the primary's, from the entry hashes on
 * each side (key → hex): keys to copy from the primary, keys to delete locally.
 */
export function bucketRepair(primary: ReadonlyMap<string, string>, secondary: ReadonlyMap<string, string>): { copy: string[]; remove: string[] } {
  const copy = [...primary].filter(([k, h]) => secondary.get(k) !== h).map(([k]) => k);
  const remove = [...secondary.keys()].filter((k) => !primary.has(k));
  return { copy: copy.sort(), remove: remove.sort() };
}
