// Where transit keeps things, and the parsed-policy cache. Storage hands out a fresh copy of a
// record on every read, so a parsed policy is remembered with the exact bytes it came from and
// reused only when a read returns the same bytes: a rewritten or rolled-back record never matches
// a stale entry. Comparing bytes costs far less than parsing, and reusing the parsed policy keeps
// its key material's Uint8Arrays, which the crypto layer's imported-key caches are keyed by.

import { constantTimeEqual } from '../../crypto/timing';
import type { Storage } from '../../framework/storage';
import { decodePolicy, encodePolicy, type KeyPolicy } from './policy';

const POLICY_PREFIX = 'policy/';
export const WRAPPING_KEY = 'config/wrapping-key';
export const KEYS_CONFIG = 'config/keys';
export const CACHE_CONFIG = 'config/cache';

// Per isolate; mounts sharing an isolate share it (the byte comparison keeps them apart).
const CACHE_MAX = 512;
const parsed = new Map<string, { bytes: Uint8Array; policy: KeyPolicy }>();

function remember(name: string, bytes: Uint8Array, policy: KeyPolicy): void {
  parsed.delete(name);
  if (parsed.size >= CACHE_MAX) parsed.delete(parsed.keys().next().value as string);
  parsed.set(name, { bytes, policy });
}

export async function loadPolicy(storage: Storage, name: string): Promise<KeyPolicy | null> {
  const bytes = await storage.get(POLICY_PREFIX + name);
  return bytes ? parsedPolicy(name, bytes) : null;
}

/** The policy stored as `bytes` under `name`, parsed once per record. */
export function parsedPolicy(name: string, bytes: Uint8Array): KeyPolicy {
  const hit = parsed.get(name);
  if (hit && constantTimeEqual(hit.bytes, bytes)) return hit.policy;
  const policy = decodePolicy(bytes);
  remember(name, bytes, policy);
  return policy;
}

/** Where a key's policy is stored. */
export const policyKey = (name: string): string => POLICY_PREFIX + name;

export async function savePolicy(storage: Storage, p: KeyPolicy): Promise<void> {
  const bytes = encodePolicy(p);
  remember(p.name, bytes.slice(), p);
  await storage.put(POLICY_PREFIX + p.name, bytes);
}

export const deletePolicy = (storage: Storage, name: string): Promise<void> => storage.delete(POLICY_PREFIX + name);

export const listPolicies = (storage: Storage): Promise<string[]> => storage.list(POLICY_PREFIX);
