// The Worker's half of handing handlers off (src/pipeline/offload.ts). Per mount, this isolate
// keeps the state it last ran a grant under: the backend built for the mount, and the storage
// values read under that state's stamp (the object's incarnation and epoch), so that a hot key's
// requests read nothing from the object once its values are here. A grant under another stamp
// starts a new state; values are never carried from one stamp to the next.
//
// Plaintext values live only in this isolate's memory: a state unused for STATE_IDLE_MS is
// dropped when next looked at, and every state is dropped when any object answers "sealed".

import { intVar, transitBatchBudgetMs, type Env } from '../rpc/env';
import type { mountStub } from '../rpc/stubs';
import type { Backend, Grant, GrantedMount, GrantOutcome, LogicalResponse, Precomputed } from '../framework/backend';
import type { MountHost } from '../registry';
import { backendType } from '../registry';
import type { MountContext, WireRequest } from '../pipeline/dispatch';
import { callerFingerprint, failedOutcome, grantedContext, GrantedStorage, GrantStale, NeedsObject, runGranted, type GrantedReads } from '../pipeline/offload';
import type { WireResult } from '../pipeline/result';

/** A mount's state unused for this long is forgotten (with the plaintext values it holds). */
const STATE_IDLE_MS = 60_000;
/** Requests estimated below this (µs of handler CPU) stay in the object: the second call costs more. */
const DEFAULT_MIN_COST_US = 250;
/** How long a path whose handler needed the object goes there directly (then it is tried here again). */
const IN_OBJECT_MS = 5_000;
/** Values kept per mount state at most (a mount with many hot keys starts over past it). */
const MAX_VALUES = 4_096;

interface MountState {
  stamp: string;
  incarnation: string;
  epoch: number;
  described: GrantedMount;
  mount: MountContext;
  backend: Backend;
  volatile: readonly string[];
  reads: GrantedReads;
  /**
   * Request paths whose handler needed the object lately (a PKI role that stores, an encrypt that
   * created its key), until when they are sent there directly instead of being handed off again.
   */
  inObject: Map<string, number>;
  /**
   * How the object resolved a caller's request on a path under this state (its last settled
   * grant), by token, operation and path: the next such request is answered first
   * (`answerFirst`), and the object checks the resolution again before it takes the outcome.
   */
  callers: Map<string, Resolution>;
  usedAt: number;
}

/** How the object resolved a caller's request on a path, with the caller as the object compares it. */
type Resolution = Pick<Grant, 'operation' | 'sudo' | 'auth' | 'audited'> & { caller: string };

const callerKey = (token: string, wire: WireRequest): string => `${wire.operation} ${wire.path}\n${token}`;

const states = new Map<string, MountState>();

const needsObject = (what: string) => async (): Promise<never> => {
  throw new NeedsObject(what);
};

/** What a backend built here may reach: nothing of the object's (those handlers finish there). */
const workerHost = (env: Env): MountHost => ({
  authMounts: { byAccessor: needsObject('the auth mount directory') },
  transitBatchBudgetMs: transitBatchBudgetMs(env),
  managedKeys: { resolve: needsObject('a managed key') },
});

/**
 * The stamp of the state this isolate holds for a mount, for WireRequest.grantStamp ("" for none);
 * undefined when handlers are not handed off (OFFLOAD_HANDLERS=0).
 */
export function grantStamp(env: Env, uuid: string, path: string, data: Record<string, unknown>): string | undefined {
  if (env.OFFLOAD_HANDLERS === '0') return undefined;
  const state = states.get(uuid);
  if (!state) return '';
  if (Date.now() - state.usedAt > STATE_IDLE_MS) {
    states.delete(uuid);
    return '';
  }
  const until = state.inObject.get(path);
  if (until !== undefined) {
    if (Date.now() < until) return undefined;
    state.inObject.delete(path);
  }
  return worthHandingOff(state, path, data, intVar(env.OFFLOAD_MIN_COST_US, DEFAULT_MIN_COST_US, 0)) ? state.stamp : undefined;
}

/**
 * Whether the handler's estimated cost (Backend.offloadCost, from the values this state holds)
 * reaches `minCost` µs; an estimate it cannot make hands the request off (it then fetches them).
 */
export function worthHandingOff(state: Pick<MountState, 'backend' | 'mount' | 'reads'>, path: string, data: Record<string, unknown>, minCost: number): boolean {
  if (minCost <= 0 || !state.backend.offloadCost || !path.startsWith(state.mount.mountPoint)) return true;
  const cost = state.backend.offloadCost(path.slice(state.mount.mountPoint.length), data, (key) => state.reads.values.get(key));
  return cost === null || cost >= minCost;
}

/**
 * A request resumed in the object came back with the object's stamp: a state other than it is
 * over (its paths sent to the object included), and the next request is granted afresh.
 */
export function resumedAt(uuid: string, stamp: string | undefined): void {
  if (stamp !== undefined && states.get(uuid)?.stamp !== stamp) states.delete(uuid);
}

/** An object answered "sealed": no state read before may be kept. */
export function forgetGrantedState(): void {
  states.clear();
}

const sameMount = (a: GrantedMount, b: GrantedMount): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The state to run `grant` under; null when this isolate cannot (the request resumes in the object). */
function stateFor(env: Env, uuid: string, grant: Grant): MountState | null {
  const current = states.get(uuid);
  if (current && current.incarnation === grant.incarnation && current.epoch === grant.epoch) {
    if (current.reads.values.size + current.reads.lists.size >= MAX_VALUES) current.reads = { values: new Map(), lists: new Map() };
    if (current.inObject.size >= MAX_VALUES) current.inObject.clear();
    if (current.callers.size >= MAX_VALUES) current.callers.clear();
    return current;
  }
  // Another request of this isolate moved the state on after this one left: it has no description.
  if (!grant.mount) return null;
  const type = backendType(grant.mount.type);
  if (!type?.create) return null;
  const backend = current && sameMount(current.described, grant.mount) ? current.backend : type.create(grant.mount.options, workerHost(env));
  const state: MountState = {
    stamp: `${grant.incarnation}:${grant.epoch}`,
    incarnation: grant.incarnation,
    epoch: grant.epoch,
    described: grant.mount,
    mount: grantedContext(grant.mount),
    backend,
    volatile: backend.offloadVolatile ?? [],
    reads: { values: new Map(), lists: new Map() },
    inObject: new Map(),
    callers: new Map(),
    usedAt: Date.now(),
  };
  // An older grant (one that waited) does not replace a newer state of the same object run.
  if (!current || current.incarnation !== grant.incarnation || current.epoch < grant.epoch) states.set(uuid, state);
  return state;
}

type MountStub = ReturnType<typeof mountStub>;

/**
 * Runs a request's handler here under `grant` and settles it with the object. Null when the
 * request must be finished in the object instead (WireRequest.resumes).
 */
export async function runGrant(env: Env, stub: MountStub, uuid: string, wire: WireRequest, grant: Grant, token: string): Promise<WireResult | null> {
  const state = stateFor(env, uuid, grant);
  if (!state) return null;
  state.usedAt = Date.now();
  const storage = new GrantedStorage(state.reads, state.volatile, (reads) => stub.grantRead(grant.id, reads));
  let outcome: GrantOutcome;
  let response: LogicalResponse | undefined;
  try {
    response = await runGranted(state.backend, wire, state.mount, grant, storage);
    // Sent back only for the audit devices' response entry.
    outcome = grant.audited ? { response } : { answered: true };
  } catch (e) {
    if (e instanceof NeedsObject) state.inObject.set(wire.path, Date.now() + IN_OBJECT_MS);
    if (e instanceof NeedsObject || e instanceof GrantStale) return null;
    outcome = failedOutcome(e);
  }
  const settled = await stub.settleGrant(grant.id, outcome);
  if (settled.kind !== 'stale' && states.get(uuid) === state) {
    state.callers.set(callerKey(token, wire), { operation: grant.operation, sudo: grant.sudo, auth: grant.auth, audited: grant.audited, caller: callerFingerprint(grant.auth) });
  }
  if (settled.kind === 'settled' && response) return { kind: 'ok', response };
  return settled.kind === 'stale' || settled.kind === 'settled' ? null : settled;
}

const notHeld = async (): Promise<never> => {
  throw new NeedsObject('a value this isolate does not hold');
};

/**
 * "Answer first" (src/pipeline/offload.ts, acceptPrecomputed): a request whose caller this isolate
 * saw granted on the same path under the state it holds runs here before it is sent, on the
 * values held only, and goes to the object with its outcome: one call instead of a grant and a
 * settlement. Null when it cannot (no such caller, a value not held, a write): the request goes
 * as usual. `response`: what the Worker answers if the object takes the outcome.
 */
export async function answerFirst(uuid: string, stamp: string, wire: WireRequest, token: string): Promise<{ precomputed: Precomputed; response?: LogicalResponse } | null> {
  const state = states.get(uuid);
  // A response-wrapped request is never handed off (the object stores the wrapping token).
  if (!state || state.stamp !== stamp || wire.wrapTTL > 0) return null;
  const resolution = state.callers.get(callerKey(token, wire));
  if (!resolution) return null;
  state.usedAt = Date.now();
  const { caller, ...resolved } = resolution;
  const grant: Grant = { id: '', incarnation: state.incarnation, epoch: state.epoch, ...resolved };
  const storage = new GrantedStorage(state.reads, state.volatile, notHeld);
  const ran = { stamp, operation: resolution.operation, sudo: resolution.sudo, caller };
  try {
    const response = await runGranted(state.backend, wire, state.mount, grant, storage);
    return { precomputed: { ...ran, outcome: resolution.audited ? { response } : { answered: true } }, response };
  } catch (e) {
    if (e instanceof NeedsObject || e instanceof GrantStale) return null;
    return { precomputed: { ...ran, outcome: failedOutcome(e) } };
  }
}

/**
 * What the object made of a request answered first: a state it did not take the outcome under is
 * over; a caller it refused, or whose request it resolved otherwise (another caller context, an
 * audit device that now records), takes a grant next, which brings its resolution anew.
 */
export function answeredFirst(uuid: string, wire: WireRequest, token: string, result: WireResult): void {
  // `settled`: the outcome was taken under this state; nothing to learn.
  if (result.kind !== 'ok' && result.kind !== 'error') return;
  resumedAt(uuid, result.stamp);
  if (result.recomputed || (result.kind === 'error' && (result.status === 403 || result.status === 401))) states.get(uuid)?.callers.delete(callerKey(token, wire));
}
