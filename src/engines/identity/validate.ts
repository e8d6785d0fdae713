// Input rules shared by entities, groups and aliases: metadata limits, policy lists (never root),
// generated default names.

import { badRequest } from '../../framework/errors';
import { randomHex } from '../../crypto/random';

const MAX_PAIRS = 64;
const MAX_KEY_LENGTH = 128;
const MAX_VALUE_LENGTH = 512;
const RESERVED_PREFIX = 'vault-';
const KEY_FORMAT = /^[a-zA-Z0-9=/+_-]+$/;

function metadataPairProblem(key: string, value: string): string | null {
  if (key === '') return 'key cannot be blank';
  if (!KEY_FORMAT.test(key)) return 'key contains invalid characters';
  if (key.length > MAX_KEY_LENGTH) return `key is too long (limit: ${MAX_KEY_LENGTH} characters)`;
  if (key.startsWith(RESERVED_PREFIX)) return `key prefix "${RESERVED_PREFIX}" is reserved for internal use`;
  if (value.length > MAX_VALUE_LENGTH) return `value is too long (limit: ${MAX_VALUE_LENGTH} characters)`;
  return null;
}

/** Vault's limits on entity and group metadata (keys of letters, digits and = / + _ -). */
export function validateMetadata(kind: 'entity' | 'group', metadata: Record<string, string>): void {
  const pairs = Object.entries(metadata);
  if (pairs.length > MAX_PAIRS) throw badRequest(`invalid ${kind} metadata: metadata cannot contain more than ${MAX_PAIRS} key/value pairs`);
  for (const [key, value] of pairs) {
    const problem = metadataPairProblem(key, value);
    if (problem) throw badRequest(`invalid ${kind} metadata: failed to load metadata pair (${JSON.stringify(key)}, ${JSON.stringify(value)}): ${problem}`);
  }
}

/** User-supplied alias metadata: at most 64 printable pairs of bounded size. */
export function validateCustomMetadata(metadata: Record<string, string>): void {
  const pairs = Object.entries(metadata);
  if (pairs.length > MAX_PAIRS) throw badRequest(`custom_metadata cannot contain more than ${MAX_PAIRS} key/value pairs`);
  for (const [key, value] of pairs) {
    if (key === '') throw badRequest('custom_metadata keys cannot be empty');
    if (key.length > MAX_KEY_LENGTH) throw badRequest(`custom_metadata key ${JSON.stringify(key)} is longer than ${MAX_KEY_LENGTH} characters`);
    if (value.length > MAX_VALUE_LENGTH) throw badRequest(`custom_metadata value for key ${JSON.stringify(key)} is longer than ${MAX_VALUE_LENGTH} characters`);
    if (/[\u0000-\u001f\u007f]/.test(key + value)) throw badRequest(`custom_metadata key ${JSON.stringify(key)} or its value contains a control character`);
  }
}

const isRoot = (p: string): boolean => p.trim().toLowerCase() === 'root';

/**
 * Policies for an entity or group: trimmed, empties dropped, duplicates removed. The root policy
 * can never be given through identity (in any spelling), whoever asks.
 */
export function identityPolicies(policies: string[], kind: 'entity' | 'group'): string[] {
  if (policies.some(isRoot)) throw badRequest('policies cannot contain root');
  const cleaned = policies.map((p) => p.trim()).filter((p) => p !== '');
  // Vault sorts an entity's policies and lowercases a group's (keeping their order).
  return kind === 'entity' ? [...new Set(cleaned)].sort() : [...new Set(cleaned.map((p) => p.toLowerCase()))];
}

/** Identity policies as authorisation uses them: lowercased, deduplicated, sorted, root removed defensively. */
export function effectivePolicies(lists: string[][]): string[] {
  const out = new Set<string>();
  for (const list of lists) for (const p of list) {
    const name = p.trim().toLowerCase();
    if (name !== '' && name !== 'root') out.add(name);
  }
  return [...out].sort();
}

/** Vault's generated names: "entity_" or "group_" and 8 hex digits, retried until unused. */
export async function generateName(kind: 'entity' | 'group', taken: (name: string) => Promise<boolean>): Promise<string> {
  for (;;) {
    const name = `${kind}_${randomHex(4)}`;
    if (!(await taken(name))) return name;
  }
}

/** Deduplicates a list, keeping the first occurrence of each item. */
export const unique = (items: string[]): string[] => [...new Set(items)];
