// A cluster's DR replication state and its transitions (spec "DR replication cluster" table).
// Pure functions over plain JSON: the SystemObject persists the state as is, calls a transition,
// and stores what it returns; a transition the current mode does not allow throws a 400 before
// anything changes. Inputs are never mutated. Time, ids and secrets come from `ctx`, so tests and
// the caller decide them.

import { sha256 } from '@noble/hashes/sha2.js';
import { badRequest } from '../../framework/errors';
import { fromHex, toHex, utf8 } from '../../crypto/encoding';
import { constantTimeEqual } from '../../crypto/timing';

/** The secondary's sync stage, as Vault names it in the status `state` field. */
export type SyncState = 'idle' | 'connecting' | 'bootstrapping' | 'merkle-diff' | 'merkle-sync' | 'stream-wals';

/** What a primary keeps about one secondary it issued an activation token to. */
export interface SecondaryRecord {
  id: string;
  /** Hex sha256 of the credential: the primary never stores the credential itself. */
  credentialHash: string;
  /** Unix ms. */
  issuedAt: number;
  /** When the activation token expires (unix ms); null once the secondary has activated. */
  activateBy: number | null;
  activated: boolean;
  /** The last authenticated pull (unix ms), null before the first. */
  lastHeartbeat: number | null;
  /** The secondary's API address as last reported ('' before the first pull). */
  apiAddress: string;
}

/** How a secondary reaches its primary. */
export interface PrimaryLink {
  apiAddr: string;
  /** The primary's primary_cluster_addr (Coffer has no cluster port: often '' or the API address). */
  clusterAddr: string;
  secondaryId: string;
  credential: string;
}

export type DrDisabled = { mode: 'disabled' };
export type DrPrimary = {
  mode: 'primary';
  clusterId: string;
  primaryClusterAddr: string;
  secondaries: Record<string, SecondaryRecord>;
};
export type DrSecondary = {
  mode: 'secondary';
  clusterId: string;
  secondaryId: string;
  /** null: demoted, or the primary was cleared with update-primary. */
  primary: PrimaryLink | null;
  sync: SyncState;
  /** When the current link began (unix ms). */
  lastStart: number;
  /** The last successful pull from the primary (unix ms), null before the first on this link. */
  lastContact: number | null;
};
export type DrState = DrDisabled | DrPrimary | DrSecondary;

/** What an activation token carries, wrapped or encrypted (JSON, snake_case as it travels). */
export interface ActivationPayload {
  /** Where the secondary pulls from (http or https URL). */
  primary_api_addr: string;
  /** The primary's cluster address as configured (may be empty). */
  primary_cluster_addr: string;
  cluster_id: string;
  secondary_id: string;
  /** The secondary's secret for its pulls; the primary keeps only its SHA-256. */
  credential: string;
  /** When the token stops being accepted (unix ms). */
  expires: number;
  /** The primary's TOKEN_SHARDS: tokens live on the shard their hash names, so both must agree. */
  token_shards: number;
}

export interface DrContext {
  now: number;
  /** A fresh cluster id (a UUID in practice). */
  newId(): string;
  /** A fresh random secret (the secondary's credential). */
  random(): string;
}

export const DR_DISABLED: DrDisabled = { mode: 'disabled' };

const NOT_PRIMARY = 'Not a DR primary.';
const NOT_SECONDARY = 'Not a DR secondary.';
const EXPIRED = 'activation token has expired';

export function primaryOnly(state: DrState): DrPrimary {
  if (state.mode !== 'primary') throw badRequest(NOT_PRIMARY);
  return state;
}

export function secondaryOnly(state: DrState): DrSecondary {
  if (state.mode !== 'secondary') throw badRequest(NOT_SECONDARY);
  return state;
}

/** A DR secondary only replicates: every other request answers "path disabled in replication DR secondary mode". */
export const servesRequests = (state: DrState): boolean => state.mode !== 'secondary';

export const credentialHash = (credential: string): string => toHex(sha256(utf8(credential)));

export function enablePrimary(state: DrState, input: { primaryClusterAddr?: string }, ctx: Pick<DrContext, 'newId'>): DrPrimary {
  if (state.mode === 'secondary') throw badRequest('this cluster is a DR secondary; promote it instead of enabling primary mode');
  if (state.mode === 'primary') throw badRequest('DR replication is already enabled as a primary');
  // A new cluster id: secondaries of an earlier incarnation must be re-enabled (and wiped).
  return { mode: 'primary', clusterId: ctx.newId(), primaryClusterAddr: input.primaryClusterAddr ?? '', secondaries: {} };
}

/** Keeps the cluster id and the data, so the cluster can rejoin the same set without a wipe. */
export function demotePrimary(state: DrState, ctx: Pick<DrContext, 'now'>): DrSecondary {
  const p = primaryOnly(state);
  // No secondary id until a primary issues this cluster a token (update-primary or enable).
  return { mode: 'secondary', clusterId: p.clusterId, secondaryId: '', primary: null, sync: 'idle', lastStart: ctx.now, lastContact: null };
}

export function disablePrimary(state: DrState): DrDisabled {
  primaryOnly(state);
  return DR_DISABLED;
}

export function issueSecondaryToken(
  state: DrState,
  input: { id: string; ttlSeconds: number; apiAddr: string; tokenShards: number },
  ctx: Pick<DrContext, 'now' | 'random'>,
): { state: DrPrimary; credential: string; payload: ActivationPayload } {
  const p = primaryOnly(state);
  const id = input.id;
  if (!id) throw badRequest('missing secondary id');
  if (Object.hasOwn(p.secondaries, id)) throw badRequest(`a secondary with id "${id}" already exists; revoke it first`);
  if (!(Number.isFinite(input.ttlSeconds) && input.ttlSeconds > 0)) throw badRequest('ttl must be greater than zero');
  const credential = ctx.random();
  const expires = ctx.now + input.ttlSeconds * 1000;
  const record: SecondaryRecord = {
    id,
    credentialHash: credentialHash(credential),
    issuedAt: ctx.now,
    activateBy: expires,
    activated: false,
    lastHeartbeat: null,
    apiAddress: '',
  };
  const payload: ActivationPayload = {
    primary_api_addr: input.apiAddr,
    primary_cluster_addr: p.primaryClusterAddr,
    cluster_id: p.clusterId,
    secondary_id: id,
    credential,
    expires,
    token_shards: input.tokenShards,
  };
  return { state: { ...p, secondaries: { ...p.secondaries, [id]: record } }, credential, payload };
}

/** The secondary is cut off at its next pull and needs a new activation token to come back. */
export function revokeSecondary(state: DrState, input: { id: string }): DrPrimary {
  const p = primaryOnly(state);
  if (!input.id) throw badRequest('missing secondary id');
  if (!Object.hasOwn(p.secondaries, input.id)) throw badRequest(`unknown secondary id "${input.id}"`);
  const { [input.id]: _gone, ...rest } = p.secondaries;
  return { ...p, secondaries: rest };
}

export type SecondaryAuth =
  | { ok: true; state: DrPrimary; record: SecondaryRecord }
  | { ok: false; reason: string };

/**
 * Checks a secondary's pull credential (the caller answers a failure with 403). The first
 * success activates the record: from then on the token's expiry no longer matters, so `state`
 * must be stored when it differs from the input.
 */
export function authenticateSecondary(state: DrState, input: { id: string; credential: string; now: number }): SecondaryAuth {
  if (state.mode !== 'primary') return { ok: false, reason: NOT_PRIMARY };
  const record = Object.hasOwn(state.secondaries, input.id) ? state.secondaries[input.id] : undefined;
  if (!record) return { ok: false, reason: 'unknown secondary' };
  const stored = fromHex(record.credentialHash);
  if (!stored || !constantTimeEqual(sha256(utf8(input.credential)), stored)) return { ok: false, reason: 'invalid credential' };
  if (record.activated) return { ok: true, state, record };
  if (record.activateBy !== null && input.now > record.activateBy) return { ok: false, reason: EXPIRED };
  const activated: SecondaryRecord = { ...record, activated: true, activateBy: null };
  return { ok: true, state: { ...state, secondaries: { ...state.secondaries, [record.id]: activated } }, record: activated };
}

/** Records an authenticated pull (the status's connection_status and last_heartbeat). */
export function heartbeat(state: DrState, input: { id: string; now: number; apiAddress: string }): DrPrimary {
  const p = primaryOnly(state);
  const record = Object.hasOwn(p.secondaries, input.id) ? p.secondaries[input.id] : undefined;
  if (!record) throw badRequest(`unknown secondary id "${input.id}"`);
  return { ...p, secondaries: { ...p.secondaries, [input.id]: { ...record, lastHeartbeat: input.now, apiAddress: input.apiAddress } } };
}

const linkOf = (payload: ActivationPayload): PrimaryLink => ({
  apiAddr: payload.primary_api_addr,
  clusterAddr: payload.primary_cluster_addr,
  secondaryId: payload.secondary_id,
  credential: payload.credential,
});

/** Refuses secondary/enable in a state that cannot take it (checked before the token is spent too). */
export function canEnableSecondary(state: DrState): void {
  if (state.mode === 'primary') throw badRequest('this cluster is a DR primary; demote or disable it first');
  if (state.mode === 'secondary' && state.primary !== null) {
    throw badRequest('this cluster is already a DR secondary with a primary; use update-primary, or disable it first');
  }
}

/** The caller wipes the cluster's data when this succeeds (secondary/enable always clears it). */
export function enableSecondary(state: DrState, payload: ActivationPayload, ctx: Pick<DrContext, 'now'>): DrSecondary {
  canEnableSecondary(state);
  if (payload.expires < ctx.now) throw badRequest(EXPIRED);
  return {
    mode: 'secondary',
    clusterId: payload.cluster_id,
    secondaryId: payload.secondary_id,
    primary: linkOf(payload),
    sync: 'bootstrapping',
    lastStart: ctx.now,
    lastContact: null,
  };
}

/** `synced`: the secondary has completed an initial sync at least once (the caller knows). */
export function promoteSecondary(state: DrState, input: { force?: boolean; primaryClusterAddr?: string; synced: boolean }): DrPrimary {
  const s = secondaryOnly(state);
  if (!input.force && !input.synced) throw badRequest('secondary has not finished its initial sync; use force to promote anyway');
  // Same cluster id (the data is the set's), but no secondaries: the others need new tokens.
  return { mode: 'primary', clusterId: s.clusterId, primaryClusterAddr: input.primaryClusterAddr ?? '', secondaries: {} };
}

/** A blank token (null) forgets the primary; a token of the same cluster relinks without a wipe. */
export function updatePrimary(state: DrState, payload: ActivationPayload | null, ctx: Pick<DrContext, 'now'>): DrSecondary {
  const s = secondaryOnly(state);
  if (payload === null) return { ...s, primary: null, sync: 'idle', lastContact: null };
  if (payload.cluster_id !== s.clusterId) {
    throw badRequest('activation token is for a different cluster; use secondary/enable (which clears all data) instead');
  }
  if (payload.expires < ctx.now) throw badRequest(EXPIRED);
  return { ...s, secondaryId: payload.secondary_id, primary: linkOf(payload), sync: 'connecting', lastStart: ctx.now, lastContact: null };
}

export function disableSecondary(state: DrState): DrDisabled {
  secondaryOnly(state);
  return DR_DISABLED;
}

/** The puller reports its stage; `contactedAt` when a page came back from the primary. */
export function recordSync(state: DrState, input: { sync: SyncState; contactedAt?: number }): DrSecondary {
  const s = secondaryOnly(state);
  return { ...s, sync: input.sync, lastContact: input.contactedAt ?? s.lastContact };
}
