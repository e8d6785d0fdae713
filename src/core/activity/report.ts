// Vault's client-count report (sys/internal/counters/activity) from the months the shards recorded:
// distinct clients over the period, per month (with the clients new that month), per mount, in
// Vault's shapes. Coffer has one namespace: Vault's root namespace.

import type { ActivityRecord } from './log';

export interface Counts {
  acme_clients: number;
  clients: number;
  distinct_entities: number;
  entity_clients: number;
  non_entity_clients: number;
  non_entity_tokens: number;
  secret_syncs: number;
}

/** Where clients of a mount that no longer exists are attributed, as in Vault. */
export const DELETED_MOUNT = 'deleted mount';

export function counts(records: Iterable<ActivityRecord>): Counts {
  let entities = 0;
  let others = 0;
  for (const r of records) {
    if (r.kind === 'entity') entities++;
    else others++;
  }
  return { acme_clients: 0, clients: entities + others, distinct_entities: entities, entity_clients: entities, non_entity_clients: others, non_entity_tokens: others, secret_syncs: 0 };
}

/** One record per client (a client seen on several shards, or in several months, counts once). */
function distinct(records: Iterable<ActivityRecord>): Map<string, ActivityRecord> {
  const out = new Map<string, ActivityRecord>();
  for (const r of records) if (!out.has(r.clientId)) out.set(r.clientId, r);
  return out;
}

function namespaces(records: Map<string, ActivityRecord>, mountOf: (path: string) => string) {
  const byMount = new Map<string, ActivityRecord[]>();
  for (const r of records.values()) {
    const mount = mountOf(r.path);
    byMount.set(mount, [...(byMount.get(mount) ?? []), r]);
  }
  const mounts = [...byMount].sort(([a], [b]) => a.localeCompare(b)).map(([mount_path, rs]) => ({ mount_path, counts: counts(rs) }));
  return [{ namespace_id: 'root', namespace_path: '', counts: counts(records.values()), mounts }];
}

/** "YYYY-MM" months from `start` to `end` (inclusive, UTC). */
export function monthsBetween(start: number, end: number): string[] {
  const out: string[] = [];
  const d = new Date(Date.UTC(new Date(start).getUTCFullYear(), new Date(start).getUTCMonth(), 1));
  while (d.getTime() <= end) {
    out.push(d.toISOString().slice(0, 7));
    d.setUTCMonth(d.getUTCMonth() + 1);
  }
  return out;
}

export function activityReport(byMonth: Record<string, ActivityRecord[]>, months: string[], mountOf: (path: string) => string) {
  const seen = new Set<string>();
  const monthEntries = months.map((month) => {
    const clients = distinct(byMonth[month] ?? []);
    const timestamp = `${month}-01T00:00:00Z`;
    if (clients.size === 0) return { timestamp, counts: null, namespaces: null, new_clients: null };
    const fresh = new Map([...clients].filter(([id]) => !seen.has(id)));
    for (const id of clients.keys()) seen.add(id);
    return {
      timestamp,
      counts: counts(clients.values()),
      namespaces: namespaces(clients, mountOf),
      new_clients: { counts: counts(fresh.values()), namespaces: namespaces(fresh, mountOf) },
    };
  });
  const all = distinct(months.flatMap((m) => byMonth[m] ?? []));
  return {
    by_namespace: all.size > 0 ? namespaces(all, mountOf) : [],
    months: monthEntries,
    total: counts(all.values()),
  };
}
