// The hash chain each device's entries form (beyond Vault): every entry names its device, its
// sequence number and the SHA-256 of the previous entry's exact JSON text, so an edited, missing
// or reordered line shows. scripts/audit-verify.mjs checks a log against these rules (its logic
// is in verify-chain.mjs, next to this file).

import { toHex } from '../../crypto/encoding';
import { sha256 } from '../../crypto/hmac';
import { stringifyJson } from '../../framework/json-numbers';
import type { AuditEntry } from './entry';

/** What the first entry after enabling a device points back to. */
export const GENESIS = `sha256:${'0'.repeat(64)}`;

/** The newest entry of a chain: what the next entry links to. */
export interface ChainHead {
  /** Sequence number of the newest entry; 0 before the first. */
  seq: number;
  /** "sha256:<hex>" of the newest entry's JSON text; GENESIS before the first. */
  hash: string;
}

export const genesisHead = (): ChainHead => ({ seq: 0, hash: GENESIS });

export async function entryHash(text: string): Promise<string> {
  return `sha256:${toHex(await sha256(text))}`;
}

/**
 * JSON text that survives any log pipeline byte for byte: everything outside ASCII is escaped
 * (inside strings, the only place it can appear), so re-encoding cannot change the hash.
 */
export function asciiJson(value: unknown): string {
  return stringifyJson(value).replace(/[\u007f-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export interface ChainedEntry {
  /** The exact JSON text to emit (the hash covers exactly this, without any prefix). */
  text: string;
  /** The chain head once this entry is written. */
  head: ChainHead;
}

/** Appends `entry` to a device's chain: adds the `chain` field and computes the new head. */
export async function chainEntry(entry: AuditEntry, device: string, head: ChainHead): Promise<ChainedEntry> {
  const seq = head.seq + 1;
  const text = asciiJson({ ...entry, chain: { device, seq, prev: head.hash } });
  return { text, head: { seq, hash: await entryHash(text) } };
}
