// What the system backend's handlers operate on (implemented by the SystemObject).
import type { ActivityRecord } from '../core/activity/log';
import type { AuditTable } from '../core/audit/table';
import type { MetricsSnapshot } from '../core/metrics/registry';
import type { MountService } from '../core/mounts/service';
import type { BuiltinPlugin } from '../core/plugins/catalog';
import type { PluginDirectory } from '../core/plugins/directory';
import type { PolicyStore } from '../core/acl/policy-store';
import type { GoverningStore } from '../core/sentinel/governing';
import type { ActivationPayload, DrPrimary, DrState } from '../core/replication/state';
import type { ObjectName, PullReply, ReplicaMerkle } from '../core/replication/stream';
import type { SealState } from '../core/barrier/seal-state';
import type { WrappedResponse } from '../core/tokens/store';
import type { AuthContext, LogicalResponse, WrapInfo } from '../framework/backend';
import type { BackendDeps } from '../managed-keys/types';

export interface SystemServices {
  core: SealState;
  mounts: MountService;
  /** Seals the whole cluster: the seal state, then every object's cached keys. */
  sealCluster(): Promise<void>;
  /** Runs a lease operation at the mount that issued the lease (throws its error). */
  leaseCall(op: LeaseOp): Promise<LogicalResponse>;
  policies: PolicyStore;
  /** RGPs and EGPs (Sentinel). */
  governing: GoverningStore;
  /** Tells every object that policies changed (their compiled ACLs are stale). */
  policiesChanged(): Promise<void>;
  /** Tells every mount object that a managed key was written or deleted (their cached entries are stale). */
  managedKeysChanged(): Promise<void>;
  /** The policies and entity of a token (by token or accessor), or null when it is not valid. */
  tokenPolicies(ref: { token: string } | { accessor: string }): Promise<CapabilitySubject | null>;
  /** Capabilities of a token's policies, and its entity's, on each path (sys/capabilities). */
  capabilities(subject: CapabilitySubject, paths: string[]): Promise<Record<string, string[]>>;
  /** Whether the caller holds sudo on a path (for endpoints open to key holders too). */
  sudoOn(auth: AuthContext | null, path: string): Promise<boolean>;
  /** Whether the caller may use something under a mount (sys/internal/ui/mounts). */
  canSee(auth: AuthContext | null, prefix: string): Promise<boolean>;
  wrapping: WrappingServices;
  /** The audit device table (sys/audit, sys/audit-hash). */
  audit: AuditTable;
  /** Every object's metrics merged, with the cluster's gauges (sys/metrics). */
  metrics(): Promise<MetricsSnapshot>;
  /** Service tokens stored across the token-store shards. */
  serviceTokens(): Promise<number>;
  /** The clients each shard recorded in the given months ("YYYY-MM"), all shards together. */
  activity(months: string[]): Promise<Record<string, ActivityRecord[]>>;
  /** Tells every shard how many months of client activity to keep. */
  setActivityRetention(months: number): Promise<void>;
  /** What managed-key backends reach their HSM bridge or cloud API with (sys/managed-keys test/sign). */
  managedKeyDeps: BackendDeps;
  /** When the SystemObject instance answering started (unix ms). */
  startedAt: number;
  plugins: PluginServices;
  replication: DrServices;
}

/** DR replication at the SystemObject (durable-objects/system-replication.ts). */
export interface DrServices {
  state(): Promise<DrState>;
  /** Stores the cluster's next DR state (in its local, never replicated, storage). */
  save(next: DrState): Promise<DrState>;
  /** Starts or stops recording in every object of the cluster. */
  recording(on: boolean): Promise<void>;
  /** A secondary's call: refused with a 403 unless the id and credential match; records the heartbeat. */
  authenticate(id: string, credential: string, apiAddress: string): Promise<DrPrimary>;
  pull(secondaryId: string, positions: Record<ObjectName, number>, limit: number): Promise<PullReply>;
  merkle(object: ObjectName, buckets?: number[]): Promise<ReplicaMerkle>;
  values(object: ObjectName, keys: string[]): Promise<Record<string, string | null>>;
  /** A counter of every change recorded, for last_wal. */
  lastWal(): Promise<number>;
  /** The SystemObject's Merkle root (merkle_root). */
  merkleRoot(): Promise<string>;
  /** The activation payload a token carries (decrypted here, or unwrapped at the primary). */
  activation(token: string, primaryApiAddr: string): Promise<ActivationPayload>;
  /** secondary/enable: the new state, every replicated row erased, following begins. */
  becomeSecondary(payload: ActivationPayload): Promise<void>;
  /** Sum of the primary's positions this secondary reached (last_remote_wal). */
  lastRemoteWal(): Promise<number>;
  /** Mints a DR operation token when a generation attempt completes (its hash is kept). */
  issueOperationToken(): Promise<string>;
  /** Refuses with a 400 unless the token is the cluster's DR operation token. */
  checkOperationToken(token: string): void;
  revokeOperationToken(token: string): void;
  /** secondary/promote (the state machine's checks first; `force` skips the sync check). */
  promote(input: { force: boolean; primaryClusterAddr: string }): Promise<void>;
  /** secondary/disable. */
  leaveSecondary(): Promise<void>;
  /** secondary/reindex: the next follow round compares every object by Merkle tree. */
  reindex(): Promise<void>;
  /** When the last reindex finished (unix seconds; 0: never). */
  lastReindexEpoch(): number;
  /** secondary/update-primary's new state (following begins at once when it names a primary). */
  relink(next: DrState): Promise<void>;
  /** primary/demote: every object stops serving and running timed work. */
  followAll(): Promise<void>;
  /** Keeps a secondary's private key for encrypted activation tokens. */
  keepSecondaryKey(jwk: JsonWebKey): Promise<void>;
  /** This deployment's API address for activation tokens (COFFER_API_ADDR; '' when unset). */
  apiAddr: string;
  /** This deployment's TOKEN_SHARDS (a secondary must have the primary's). */
  tokenShards: number;
}

/** What sys/plugins/* needs beyond the catalog in the SystemObject's storage. */
export interface PluginServices {
  /** The plugin directory catalog commands name; null when the deployment has none. */
  directory: PluginDirectory | null;
  /** Coffer's own mountable engines and auth methods, as the catalog lists them. */
  builtins: readonly BuiltinPlugin[];
  /** Whether a name is taken by a built-in type or alias (catalog plugins may not use it). */
  isBuiltinName(name: string): boolean;
}

/** Response-wrapping tokens at their token-store shards. */
export interface WrappingServices {
  /** Spends a wrapping token; what it held, or null when it is not a live wrapping token. */
  unwrap(token: string): Promise<WrappedResponse | null>;
  /** What a live wrapping token holds, without spending it. */
  peek(token: string): Promise<WrappedResponse | null>;
  /** Creates a new wrapping token for a record. */
  store(record: WrappedResponse): Promise<WrapInfo>;
  revoke(token: string): Promise<void>;
  /** Now, as RFC 3339 with nanoseconds. */
  now(): string;
}

/** Whose capabilities to compute: a token's own policies and its entity ("" for none). */
export interface CapabilitySubject {
  policies: string[];
  entityId: string;
}

/** A lease call sys/leases/* forwards to the object of the mount that issued the lease. */
export type LeaseOp =
  | { op: 'lookup'; id: string }
  | { op: 'renew'; id: string; increment: number }
  | { op: 'revoke'; id: string; force: boolean }
  | { op: 'revoke-prefix'; prefix: string; force: boolean }
  | { op: 'list'; prefix: string }
  | { op: 'irrevocable' }
  | { op: 'tidy' };
