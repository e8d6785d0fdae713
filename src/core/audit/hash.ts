// What an audit device hides: strings are replaced by "hmac-sha256:<hex>" of the device's salt,
// as Vault does, so a log shows that a value was used without showing it, and sys/audit-hash can
// still find a known value. Numbers, booleans and null are kept; keys a mount lists as
// audit_non_hmac_*_keys keep their whole value.

import { toHex } from '../../crypto/encoding';
import { hmacSha256 } from '../../crypto/hmac';
import { isExactNumber } from '../../framework/json-numbers';
import { LruMap } from '../lru-map';

/** Hashes one string; identity when the device logs raw. */
export type Hasher = (value: string) => Promise<string>;

export const HMAC_PREFIX = 'hmac-sha256:';

/** The device's hash function over its salt (what sys/audit-hash answers). */
export function saltedHasher(salt: Uint8Array): Hasher {
  return async (value) => HMAC_PREFIX + toHex(await hmacSha256(salt, value));
}

export const rawHasher: Hasher = async (value) => value;

/**
 * `hash`, remembering the last `max` values it hashed. For the caller's token and accessor, which
 * every entry of a client's requests carries (twice per entry, two entries per request). Memory
 * only, and it goes with the device's loaded state, which a seal drops.
 */
export function rememberingHasher(hash: Hasher, max = 1024): Hasher {
  const known = new LruMap<string>(() => 1, max, max);
  return async (value) => {
    const hit = known.get(value);
    if (hit !== undefined) return hit;
    const hashed = await hash(value);
    known.set(value, hashed);
    return hashed;
  };
}

/**
 * Hashes every string in a JSON value, at any depth. A key listed in `keep` keeps its value as
 * is, wherever it appears (Vault applies the non-HMAC keys to nested maps too).
 */
export async function hashValue(value: unknown, hash: Hasher, keep: ReadonlySet<string> = new Set()): Promise<unknown> {
  if (typeof value === 'string') return hash(value);
  // A number kept exact is a number: kept, like any other.
  if (isExactNumber(value)) return value;
  if (Array.isArray(value)) return Promise.all(value.map((v) => hashValue(v, hash, keep)));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) out[k] = keep.has(k) ? v : await hashValue(v, hash, keep);
    return out;
  }
  return value;
}

/** hashValue for a data map. */
export async function hashData(data: Record<string, unknown>, hash: Hasher, keep: readonly string[]): Promise<Record<string, unknown>> {
  return (await hashValue(data, hash, new Set(keep))) as Record<string, unknown>;
}
