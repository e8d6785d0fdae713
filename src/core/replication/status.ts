// The `data` of GET sys/replication/dr/status and sys/replication/status in Vault's shapes
// (reference §7.1). Vault prints epochs and millisecond values as strings and WAL positions as
// numbers; clients parse them that way, so the types below keep that split.

import { formatRFC3339Nano } from '../../framework/duration';
import type { DrState } from './state';

/** A peer counts as connected when it was heard from this recently (Vault's heartbeats are seconds apart). */
export const CONNECTED_WINDOW_MS = 30_000;
/** Go's zero time.Time as a Unix epoch: what Vault prints for a corruption check that never ran. */
const NEVER_EPOCH = '-62135596800';

/** Live numbers the caller reads from the replication log and Merkle index. */
export interface DrStatusFacts {
  now: number;
  /** Primary: the newest log sequence recorded. */
  lastWal: number;
  /** Secondary: the newest primary sequence applied. */
  lastRemoteWal: number;
  /** 40 hex characters. */
  merkleRoot: string;
  /** Secondary: defaults to the linked primary's cluster address. */
  knownPrimaryClusterAddrs?: string[];
  /** When the last reindex finished (unix seconds; 0: never). */
  lastReindexEpoch?: number;
}

export type ConnectionStatus = 'connected' | 'disconnected';

export interface DrSecondaryInfo {
  node_id: string;
  api_address: string;
  cluster_address: string;
  connection_status: ConnectionStatus;
  /** RFC 3339, '' before the first heartbeat. */
  last_heartbeat: string;
  last_heartbeat_duration_ms: string;
  clock_skew_ms: string;
  replication_primary_canary_age_ms: string;
}

export interface DrPrimaryInfo {
  api_address: string;
  cluster_address: string;
  connection_status: ConnectionStatus;
  last_heartbeat: string;
}

export interface DrStatusDisabled {
  mode: 'disabled';
}

export interface DrStatusPrimary {
  mode: 'primary';
  cluster_id: string;
  known_secondaries: string[];
  last_wal: number;
  last_dr_wal: number;
  last_reindex_epoch: string;
  merkle_root: string;
  corrupted_merkle_tree: boolean;
  last_corruption_check_epoch: string;
  primary_cluster_addr: string;
  ssct_generation_counter: number;
  state: 'running';
  secondaries: DrSecondaryInfo[];
}

export interface DrStatusSecondary {
  mode: 'secondary';
  cluster_id: string;
  secondary_id: string;
  known_primary_cluster_addrs: string[];
  primary_cluster_addr: string;
  last_remote_wal: number;
  last_reindex_epoch: string;
  last_start: string;
  connection_state: 'ready' | 'idle';
  merkle_root: string;
  corrupted_merkle_tree: boolean;
  last_corruption_check_epoch: string;
  state: string;
  primaries: DrPrimaryInfo[];
}

export type DrStatus = DrStatusDisabled | DrStatusPrimary | DrStatusSecondary;

export interface ReplicationStatus {
  dr: DrStatus;
  /** Coffer has no performance replication. */
  performance: { mode: 'disabled' };
}

const connection = (last: number | null, now: number): ConnectionStatus =>
  last !== null && now - last <= CONNECTED_WINDOW_MS ? 'connected' : 'disconnected';
const heartbeatText = (last: number | null): string => (last === null ? '' : formatRFC3339Nano(last));

export function drStatus(state: DrState, facts: DrStatusFacts): DrStatus {
  const { now } = facts;
  if (state.mode === 'disabled') return { mode: 'disabled' };
  if (state.mode === 'primary') {
    const records = Object.values(state.secondaries).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return {
      mode: 'primary',
      cluster_id: state.clusterId,
      known_secondaries: records.map((r) => r.id),
      last_wal: facts.lastWal,
      // Coffer keeps one log for DR: the DR WAL is the WAL.
      last_dr_wal: facts.lastWal,
      last_reindex_epoch: '0',
      merkle_root: facts.merkleRoot,
      corrupted_merkle_tree: false,
      last_corruption_check_epoch: NEVER_EPOCH,
      primary_cluster_addr: state.primaryClusterAddr,
      ssct_generation_counter: 0,
      state: 'running',
      secondaries: records.map((r) => ({
        node_id: r.id,
        api_address: r.apiAddress,
        // Secondaries pull over the HTTPS API: there is no separate cluster port.
        cluster_address: r.apiAddress,
        connection_status: connection(r.lastHeartbeat, now),
        last_heartbeat: heartbeatText(r.lastHeartbeat),
        // Pulls are plain HTTPS requests: no heartbeat round trip or clock skew is measured.
        last_heartbeat_duration_ms: '0',
        clock_skew_ms: '0',
        // How stale the secondary's view may be: time since its last pull.
        replication_primary_canary_age_ms: r.lastHeartbeat === null ? '0' : String(Math.max(0, now - r.lastHeartbeat)),
      })),
    };
  }
  const link = state.primary;
  return {
    mode: 'secondary',
    cluster_id: state.clusterId,
    secondary_id: state.secondaryId,
    known_primary_cluster_addrs: facts.knownPrimaryClusterAddrs ?? (link && link.clusterAddr ? [link.clusterAddr] : []),
    primary_cluster_addr: link?.clusterAddr ?? '',
    last_remote_wal: facts.lastRemoteWal,
    last_reindex_epoch: String(facts.lastReindexEpoch ?? 0),
    last_start: formatRFC3339Nano(state.lastStart),
    connection_state: link ? 'ready' : 'idle',
    merkle_root: facts.merkleRoot,
    corrupted_merkle_tree: false,
    last_corruption_check_epoch: NEVER_EPOCH,
    state: state.sync,
    primaries: link
      ? [
          {
            api_address: link.apiAddr,
            cluster_address: link.clusterAddr,
            connection_status: connection(state.lastContact, now),
            last_heartbeat: heartbeatText(state.lastContact),
          },
        ]
      : [],
  };
}

export const replicationStatus = (dr: DrStatus): ReplicationStatus => ({ dr, performance: { mode: 'disabled' } });
