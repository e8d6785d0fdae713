// What a batch item costs in CPU, estimated by key type and operation, so that a batch can be run
// in slices (other requests of the mount get in between) and refused when it would take longer
// than the server allows one request (TRANSIT_BATCH_CPU_BUDGET_MS). workerd's clocks stand still
// while code runs, so the cost cannot be measured as it goes: it is estimated up front.

import type { KeyType } from './key-types';

/** The part of an item's work that depends on the key: its private half, its public half, or a secret key. */
export type KeyOperation = 'private' | 'public' | 'secret';

// Microseconds per item, measured through the launcher on the development machine (2 cores): a
// batch of 300 items (6,000 for the secret keys), HTTP and JSON included, divided by its size.
const ASYMMETRIC_US: Record<string, { private: number; public: number }> = {
  'rsa-2048': { private: 1_000, public: 140 },
  'rsa-3072': { private: 2_500, public: 170 },
  'rsa-4096': { private: 6_400, public: 270 },
  'ecdsa-p256': { private: 190, public: 300 },
  'ecdsa-p384': { private: 900, public: 930 },
  'ecdsa-p521': { private: 1_950, public: 1_950 },
  ed25519: { private: 80, public: 150 },
};
/** AES, ChaCha20 and HMAC items: decoding and encoding the item cost more than the cipher. */
const SECRET_US = 35;

export function itemCostUs(type: KeyType, op: KeyOperation): number {
  const asymmetric = ASYMMETRIC_US[type];
  if (!asymmetric || op === 'secret') return SECRET_US;
  return asymmetric[op];
}

/** Estimated CPU a batch may take, unless the server is configured otherwise. */
export const DEFAULT_BATCH_CPU_BUDGET_MS = 10_000;

/** How much estimated work a slice runs before the batch lets other requests in. */
export const SLICE_US = 2_000;
