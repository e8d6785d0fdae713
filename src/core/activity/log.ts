// Client activity, counted as Vault counts clients: a token with an entity is that entity; a
// token without one is a non-entity client named by a digest of its namespace and sorted policies
// (so tokens with the same policies count once). Each token-store shard records, once per client
// and month, the clients whose tokens it sees created or used (leases to mount objects, sys/ and
// auth/token/ requests); sys/internal/counters/activity merges the shards' months. Batch tokens
// are recorded when they are created (their use never reaches a shard).

import { toBase64 } from '../../crypto/encoding';
import { getJSON, putJSON, type Storage } from '../../framework/storage';
import type { TokenEntry } from '../tokens/entry';

const PREFIX = 'activity/';
const RETENTION_KEY = 'activity-retention';
/** Vault's minimum (and default) retention. */
export const DEFAULT_RETENTION_MONTHS = 48;
const SEEN_LIMIT = 50_000;

export type ClientKind = 'entity' | 'non-entity';

/** One client seen in a month: how it counts, and the path its token was created at (its mount). */
export interface ActivityRecord {
  clientId: string;
  kind: ClientKind;
  path: string;
}

/** "2026-11" for a time in November 2026 (UTC). */
export const monthOf = (ms: number): string => new Date(ms).toISOString().slice(0, 7);

/** The month of `ms`, remembered with the span it covers: note() runs on every token use. */
let monthCache = { from: 0, to: 0, month: '' };
function cachedMonth(ms: number): string {
  if (ms < monthCache.from || ms >= monthCache.to) {
    const d = new Date(ms);
    monthCache = { from: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), to: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1), month: monthOf(ms) };
  }
  return monthCache.month;
}

async function clientOf(entry: TokenEntry): Promise<{ clientId: string; kind: ClientKind }> {
  if (entry.entityId) return { clientId: entry.entityId, kind: 'entity' };
  // Coffer has one namespace, Vault's root namespace "root".
  const text = `root/${[...entry.policies].sort().join(',')}`;
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text)));
  return { clientId: toBase64(digest).replace(/\//g, '_'), kind: 'non-entity' };
}

export class ActivityLog {
  /** Token accessors whose client is recorded for the month: a busy token costs a map lookup. */
  private readonly seen = new Map<string, string>();
  private prunedFor = '';

  constructor(private readonly storage: Storage) {}

  /** Records the client behind a token for the month of `now` (once); undefined: recorded already. */
  note(entry: TokenEntry, now = Date.now()): Promise<void> | undefined {
    const month = cachedMonth(now);
    if (entry.accessor && this.seen.get(entry.accessor) === month) return undefined;
    return this.#record(entry, month);
  }

  async #record(entry: TokenEntry, month: string): Promise<void> {
    const { clientId, kind } = await clientOf(entry);
    const key = `${PREFIX}${month}/${clientId}`;
    if (this.prunedFor !== month) await this.prune(month);
    if (!(await this.storage.get(key))) await putJSON(this.storage, key, { kind, path: entry.path });
    if (this.seen.size >= SEEN_LIMIT) this.seen.clear();
    if (entry.accessor) this.seen.set(entry.accessor, month);
  }

  /** The clients of each given month ("YYYY-MM") this shard recorded. */
  async months(months: string[]): Promise<Record<string, ActivityRecord[]>> {
    const out: Record<string, ActivityRecord[]> = {};
    for (const month of months) {
      const records: ActivityRecord[] = [];
      for (const clientId of await this.storage.list(`${PREFIX}${month}/`)) {
        const r = await getJSON<{ kind: ClientKind; path: string }>(this.storage, `${PREFIX}${month}/${clientId}`);
        if (r) records.push({ clientId, kind: r.kind, path: r.path });
      }
      out[month] = records;
    }
    return out;
  }

  async setRetention(months: number): Promise<void> {
    await putJSON(this.storage, RETENTION_KEY, { months });
    this.prunedFor = '';
  }

  /** Forgets the months older than the retention (done once per month, at its first client). */
  private async prune(current: string): Promise<void> {
    const retention = (await getJSON<{ months: number }>(this.storage, RETENTION_KEY))?.months ?? DEFAULT_RETENTION_MONTHS;
    const [y, m] = current.split('-').map(Number);
    const oldest = monthOf(Date.UTC(y, m - 1 - (retention - 1), 1));
    for (const folder of await this.storage.list(PREFIX)) {
      const month = folder.replace(/\/$/, '');
      if (month >= oldest) continue;
      for (const clientId of await this.storage.list(`${PREFIX}${folder}`)) await this.storage.delete(`${PREFIX}${folder}${clientId}`);
    }
    this.prunedFor = current;
  }
}
