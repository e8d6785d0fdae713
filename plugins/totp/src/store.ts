// Storage layout: key/<name> holds a key's definition; used/<name> the codes already submitted for
// it, each with the time (ms) until which it stays refused. Keeping them in storage (Vault keeps
// them in memory) means a restart does not reopen a replay window.

import { getJSON, putJSON, type Storage } from '../../../src/framework/storage';
import type { Algorithm } from './otp';

export const KEY_PREFIX = 'key/';
export const USED_PREFIX = 'used/';

export interface KeyEntry {
  /** The secret, base32 without padding. */
  key: string;
  issuer: string;
  account_name: string;
  /** Seconds. */
  period: number;
  algorithm: Algorithm;
  digits: number;
  skew: number;
}

export const readKey = (storage: Storage, name: string): Promise<KeyEntry | null> => getJSON<KeyEntry>(storage, KEY_PREFIX + name);

/** Stores a key; a key written anew starts with no used codes. */
export async function writeKey(storage: Storage, name: string, entry: KeyEntry): Promise<void> {
  await putJSON(storage, KEY_PREFIX + name, entry);
  await storage.delete(USED_PREFIX + name);
}

export async function deleteKey(storage: Storage, name: string): Promise<void> {
  await storage.delete(KEY_PREFIX + name);
  await storage.delete(USED_PREFIX + name);
}

interface UsedCodes {
  /** Code → ms since the epoch until which it is refused. */
  codes: Record<string, number>;
}

async function readCodes(storage: Storage, storageKey: string): Promise<Map<string, number>> {
  return new Map(Object.entries((await getJSON<UsedCodes>(storage, storageKey))?.codes ?? {}));
}

/** The codes still refused at `now`. */
const live = (codes: Map<string, number>, now: number): Map<string, number> => new Map([...codes].filter(([, until]) => until > now));

async function saveCodes(storage: Storage, storageKey: string, codes: Map<string, number>): Promise<void> {
  if (codes.size === 0) await storage.delete(storageKey);
  else await putJSON(storage, storageKey, { codes: Object.fromEntries(codes) } satisfies UsedCodes);
}

/** Whether `code` was submitted for key `name` and is still refused at `now`. */
export async function codeUsed(storage: Storage, name: string, code: string, now: number): Promise<boolean> {
  return live(await readCodes(storage, USED_PREFIX + name), now).has(code);
}

/** Records `code` as used until `until`, dropping the key's expired codes on the way. */
export async function recordUsedCode(storage: Storage, name: string, code: string, now: number, until: number): Promise<void> {
  const codes = live(await readCodes(storage, USED_PREFIX + name), now);
  codes.set(code, until);
  await saveCodes(storage, USED_PREFIX + name, codes);
}

const SWEEP_PAGE = 100;

/**
 * Drops every expired used code (the records of keys nobody validates against any more would
 * otherwise stay). Returns when the next one expires, or null when none is left.
 */
export async function sweepUsedCodes(storage: Storage, now: number): Promise<number | null> {
  let next: number | null = null;
  let after = '';
  for (;;) {
    const page = await storage.scan(USED_PREFIX, after, SWEEP_PAGE);
    for (const storageKey of page) {
      const all = await readCodes(storage, storageKey);
      const kept = live(all, now);
      if (kept.size !== all.size) await saveCodes(storage, storageKey, kept);
      for (const until of kept.values()) if (next === null || until < next) next = until;
    }
    if (page.length < SWEEP_PAGE) return next;
    after = page[page.length - 1];
  }
}
