// The RPC contract of each Durable Object class: exactly the methods other code (the Worker, the
// other objects) calls on its stubs. Each class implements its contract; everything else in it is
// #private. Env types its namespaces by these, so addressing an object never imports its class.
//
// RPC loses error classes: calls that can be refused answer replies that carry the error as data.

import type { MountEntry, RouteEntry } from '../core/mounts/table';
import type { LeaseReply } from '../core/tokens/leases';
import type { PeerShard } from '../core/tokens/shard';
import type { TokenEntry } from '../core/tokens/entry';
import type { TokenRole } from '../core/tokens/roles';
import type { WrappedResponse } from '../core/tokens/store';
import type { ActivityRecord } from '../core/activity/log';
import type { MetricsSnapshot } from '../core/metrics/registry';
import type { KeyringWire } from '../core/barrier/keyring';
import type { AuditDeviceRef } from '../core/audit/broker';
import type { ChainHead } from '../core/audit/chain';
import type { AuditInput } from '../core/audit/entry';
import type { EntryOutcome } from '../core/audit/sender';
import type { DeviceOptions } from '../core/audit/options';
import type { GoverningSet } from '../core/sentinel/governing';
import type { ReplicaMerkle, WirePage } from '../core/replication/stream';

export type { ReplicaMerkle } from '../core/replication/stream';
import type { AuthMountInfo, IdentityLoginInput, IdentityLoginResult, IdentityView } from '../core/identity/types';
import type { AuthContext, GrantOutcome, RenewLimits } from '../framework/backend';
import type { GrantReads, GrantValues } from '../pipeline/offload';
import type { TokenMountConfig } from '../auth/token/ops';
import type { ManagedKeyRef } from '../managed-keys/resolve';
import type { ManagedKeyEntry } from '../managed-keys/types';
import type { WireRequest } from '../pipeline/dispatch';
import type { Maybe } from '../framework/steps';
import type { WireResult } from '../pipeline/result';

type Refused = { ok: false; status: number; errors: string[] };

/** An auth mount's limits for renewing a token its login issued. */
export type RenewReply = { ok: true; limits: RenewLimits; mountMaxTTL: number } | Refused;
/** The entity behind a login's alias. */
export type IdentityLoginReply = { ok: true; result: IdentityLoginResult } | Refused;
/** A token renewed on its shard. */
export type RenewedReply = { ok: true; entry: TokenEntry; ttl: number; warnings: string[] } | Refused;
/** What a token resolves to at its shard (sys/ requests, whose caller the Worker resolves). */
export interface Resolution {
  sealed: boolean;
  auth: AuthContext | null;
}
/** One entry's fate at its device. */
export type AuditLogReply = EntryOutcome;
export type AuditHashReply = { ok: true; hash: string } | { ok: false; error: string };

/** A replica* call's answer: refusals of bad input travel as data, like the other replies here. */
export type ReplicaReply<T> = { ok: true; value: T } | Refused;

/**
 * DR replication, the same in every object class (durable-objects/replica-ops.ts). `source` names
 * the primary's object a secondary object mirrors (src/core/replication/stream.ts ObjectName).
 */
export interface ReplicaContract {
  replicaControl(command: 'start' | 'stop' | 'follow'): Promise<ReplicaReply<null>>;
  replicaPull(after: number, limit: number): Promise<ReplicaReply<WirePage>>;
  replicaTrim(upTo: number): Promise<ReplicaReply<null>>;
  replicaMerkle(buckets?: number[]): Promise<ReplicaReply<ReplicaMerkle>>;
  replicaValues(keys: string[]): Promise<ReplicaReply<Record<string, string | null>>>;
  /** null: never synced with `source`. */
  replicaPosition(source: string): Promise<ReplicaReply<number | null>>;
  /** A secondary's enable: every replicated row goes (local settings stay). */
  replicaWipe(): Promise<ReplicaReply<null>>;
  replicaApply(source: string, page: WirePage): Promise<ReplicaReply<number>>;
  /** Restarts the object (dropping its caches); with `lead`, promotion: it leads again. Fails by design. */
  replicaRestart(lead: boolean): Promise<void>;
  /** With `resumeAfter` null, the position is left as it is (a repair's writes before its last). */
  replicaRepair(source: string, values: Record<string, string | null>, resumeAfter: number | null): Promise<ReplicaReply<null>>;
}

/** What every hosting object is told when the cluster changes. */
export interface Notified {
  /** The cluster sealed or its keyring rotated: forget keys and what was opened with them. */
  dropKeys(): Promise<void>;
  /** A policy (or an identity) changed: compiled ACLs are stale. */
  policiesChanged(): Promise<void>;
  /** An audit device was enabled or disabled. */
  auditChanged(): Promise<void>;
  /** A token was revoked: forget any lease on it. */
  forgetToken(accessor: string): Promise<void>;
  metricsSnapshot(): Promise<MetricsSnapshot>;
}

/** What the identity mount's object answers (other objects' ACL caches and logins). */
export interface IdentityEndpoint {
  identityViews(ids: string[]): Promise<Record<string, IdentityView | null> | null>;
  identityLogin(input: IdentityLoginInput): Promise<IdentityLoginReply>;
}

export interface MountContract extends Notified, IdentityEndpoint, ReplicaContract {
  /** A request answered without a wait returns its result itself (src/framework/steps.ts). */
  handle(prefix: string, revision: number, wire: WireRequest, token: string): Maybe<WireResult>;
  /** A handed-off handler's storage reads (src/pipeline/offload.ts); null: finish the request here. */
  grantRead(id: string, reads: GrantReads): Promise<GrantValues | null>;
  /** A handed-off handler's outcome, audited and answered; `stale`: finish the request here. */
  settleGrant(id: string, outcome: GrantOutcome): Promise<WireResult>;
  provision(entry: MountEntry): Promise<void>;
  revokeAllLeases(): Promise<string | null>;
  destroy(): Promise<void>;
  leaseLookup(id: string): Promise<WireResult>;
  leaseRenew(id: string, increment: number): Promise<WireResult>;
  leaseRevoke(id: string, force: boolean): Promise<WireResult>;
  leaseRevokePrefix(prefix: string, force: boolean): Promise<WireResult>;
  leaseList(prefix: string): Promise<WireResult>;
  leaseIrrevocable(): Promise<WireResult>;
  leaseTidy(): Promise<void>;
  revokeTokenLeases(accessor: string): Promise<void>;
  /** A managed key was written or deleted: cached entries are stale. */
  managedKeysChanged(): Promise<void>;
  renewLogin(prefix: string, role: string, tokenPolicies: string[]): Promise<RenewReply>;
}

export interface TokenStoreContract extends Notified, PeerShard, ReplicaContract {
  handle(token: string, prefix: string, wire: WireRequest): Maybe<WireResult>;
  createRoot(token: string): Promise<void>;
  issueLogin(token: string, partial: Omit<TokenEntry, 'accessor'>): Promise<{ token: string; entry: TokenEntry }>;
  resolve(token: string): Promise<Resolution>;
  resolveForUnwrap(token: string): Promise<Resolution>;
  lease(token: string, holder: string): Promise<LeaseReply>;
  leaseAccessor(accessor: string, holder: string): Promise<LeaseReply>;
  revokeToken(token: string): Promise<void>;
  revokeOrphan(token: string): Promise<void>;
  lookupToken(token: string): Promise<TokenEntry | null>;
  lookupAccessor(accessor: string): Promise<TokenEntry | null>;
  renewAccessor(accessor: string, increment: number, mountMaxTTL: number, limits?: RenewLimits): Promise<RenewedReply>;
  accessors(): Promise<string[]>;
  tidy(): Promise<void>;
  wrap(token: string, record: WrappedResponse): Promise<{ accessor: string }>;
  unwrap(token: string): Promise<WrappedResponse | null>;
  peekWrapped(token: string): Promise<WrappedResponse | null>;
  wrappingAuth(token: string): Promise<AuthContext | null>;
  registerLeaseHolder(accessor: string, mountUuid: string): Promise<void>;
  getRole(name: string): Promise<TokenRole | null>;
  putRole(role: TokenRole): Promise<void>;
  deleteRole(name: string): Promise<void>;
  listRoles(): Promise<string[]>;
  serviceTokens(): Promise<number>;
  activityMonths(months: string[]): Promise<Record<string, ActivityRecord[]>>;
  setActivityRetention(months: number): Promise<void>;
}

export interface SystemContract extends ReplicaContract {
  handle(wire: WireRequest): Promise<WireResult>;
  auditRefusal(wire: WireRequest, status: number, errors: string[]): Promise<WireResult>;
  /** The wrapping token inside a JWT-form one this cluster signed; null when not valid or sealed. */
  openWrappingJwt(token: string): Promise<string | null>;
  /** null while sealed; 'dr-secondary' when the cluster serves no requests (a DR secondary). */
  routes(): Promise<RouteEntry[] | null | 'dr-secondary'>;
  keyring(): Promise<KeyringWire | null>;
  policyTexts(names: string[]): Promise<Record<string, string | null> | null>;
  governingPolicies(): Promise<GoverningSet | null>;
  auditDevices(): Promise<AuditDeviceRef[] | null>;
  identityChanged(): Promise<void>;
  identityMountUuid(): Promise<string | null>;
  authMounts(): Promise<AuthMountInfo[] | null>;
  /** A managed key's entry by name or uuid (null: none, or sealed), for engines in mount objects. */
  managedKeyEntry(ref: ManagedKeyRef): Promise<ManagedKeyEntry | null>;
  tokenMountConfig(): Promise<TokenMountConfig>;
}

export interface AuditContract extends ReplicaContract {
  dropKeys(): Promise<void>;
  provision(uuid: string, options: DeviceOptions): Promise<void>;
  /** Records entries in order; one reply per entry, in the same order. */
  logMany(inputs: AuditInput[]): Promise<AuditLogReply[]>;
  hash(input: string): Promise<AuditHashReply>;
  head(): Promise<ChainHead | null>;
  destroy(): Promise<void>;
}
