// The one request pipeline every hosting object calls: locate what serves the request → audit
// trail → caller → authorizer → dispatch (existence check, ACL, handler, commit, wrap, audit) →
// error mapping. The objects differ only in their ports: where the mount lives, how a token is
// validated, the storage a request writes to and the order writes run in.

import type { Backend, GrantedMount, LogicalResponse } from '../framework/backend';
import { drive, settled, type Maybe, type Steps } from '../framework/steps';
import type { Transaction } from '../framework/storage';
import type { AclCache } from '../core/acl/cache';
import type { MetricsRegistry } from '../core/metrics/registry';
import { RequestTimer } from '../core/metrics/requests';
import type { AuditTrail } from './audit-trail';
import { authorizerFor } from './authorizer';
import { callerFrom, type CallerPort } from './caller';
import { dispatchSteps, isUnauthenticatedPath, relativePath, type DispatchHooks, type MountContext, type WireRequest } from './dispatch';
import { acceptPrecomputed, type GrantLedger } from './offload';
import { errorResult, type WireResult } from './result';

/** One request's hold on its host: opened once the caller is known and authorised. */
export interface Scope {
  /** The request's transaction; opened inside `order`, so in the host's write order. */
  transaction(): Transaction;
  /** What the host adds to dispatch (the pipeline adds the audit and metrics hooks). */
  hooks: DispatchHooks;
  /** Runs the dispatch in the host's write order (a writes mutex); absent: the dispatch runs in place (reads). */
  order?(run: () => Maybe<LogicalResponse>): Maybe<LogicalResponse>;
  /** Work due after the dispatch however it ended (undefined: none, nothing awaited). */
  after?(): Promise<void> | undefined;
}

/** What serves a request: the backend at its mount, and the host's ways of running it. */
export interface Host {
  backend: Backend;
  mount: MountContext;
  acls: AclCache;
  caller: CallerPort;
  /** Unauthenticated paths of this mount are logins (an auth method), for the request metrics. */
  logins?: boolean;
  /** The request's audit trail; null for the paths Vault never audits. */
  trail(wire: WireRequest, token: string): AuditTrail | null;
  /** Answers the request before its caller is resolved (cubbyhole's legacy unwrap); null: go on. */
  preempt?(wire: WireRequest, token: string, trail: AuditTrail | null): Promise<LogicalResponse | null> | null;
  /** Runs once the caller is known, before authorisation (undefined: nothing to await). */
  admitted?(wire: WireRequest): Promise<void> | undefined;
  /** `handsOff`: the handler will be handed to the Worker (nothing is written in the request here). */
  open(wire: WireRequest, relPath: string, handsOff: boolean): Scope;
  /** Whether this request's handler may be handed to the Worker (Backend.offloadPaths). */
  offloads?(wire: WireRequest, relPath: string): boolean;
  /** The mount as a grant describes it (asked when the Worker's state is not current). */
  grantedMount?(): GrantedMount;
}

/** What the Worker routed a request by. */
export interface Route {
  /** The mount's route prefix, e.g. "secret/". */
  prefix: string;
  /** The mount entry's revision (mount objects: a tuned mount answers `gone`). */
  revision?: number;
}

export interface ServePorts {
  metrics: MetricsRegistry;
  /**
   * The host of the mount the Worker routed by, or a result instead (`gone`: the mount moved or
   * went). Throws to refuse the request (sealed). Synchronous answers are not awaited.
   */
  locate(route: Route, wire: WireRequest): Host | WireResult | Promise<Host | WireResult>;
  /** Runs the whole request in the host's order (the SystemObject serialises its state changes). */
  admit?(wire: WireRequest, run: () => Maybe<WireResult>): Maybe<WireResult>;
  /** Awaited before every reply: what the request wrote, or read from others, is durable (undefined: nothing to wait for). */
  settle?(): Promise<void> | undefined;
  /** The host's grants, when it hands handlers to the Worker (src/pipeline/offload.ts). */
  grants?: GrantLedger;
}

/**
 * Serves one request; `token` is the raw client token ("" for none). The answer comes at once when
 * nothing on the way has to be waited for (src/framework/steps.ts): a handed-off request answered
 * from memory, typically.
 */
export function serve(ports: ServePorts, route: Route, wire: WireRequest, token: string): Maybe<WireResult> {
  return drive(serveSteps(ports, route, wire, token));
}

function* serveSteps(ports: ServePorts, route: Route, wire: WireRequest, token: string): Steps<WireResult> {
  const timer = new RequestTimer(ports.metrics, route.prefix, wire.operation);
  // Whether an outcome the Worker computed first was taken (undefined: none was asked about).
  const first: { taken?: boolean } = {};
  // Inside the host's order when it admits requests itself (the SystemObject); else these steps go on in place.
  const result = ports.admit
    ? yield* settled(ports.admit(wire, () => drive(run(ports, route, wire, token, timer, first))))
    : yield* run(ports, route, wire, token, timer, first);
  if (first.taken === false && (result.kind === 'ok' || result.kind === 'error')) result.recomputed = true;
  const durable = ports.settle?.();
  if (durable) yield* settled(durable);
  // A request sent back (gone, prepare) comes again and is measured then; a granted one when settled.
  if (result.kind === 'ok' || result.kind === 'error' || result.kind === 'settled') {
    timer.done();
    if (wire.resumes) ports.grants?.done(wire.resumes);
  } else if (result.kind === 'grant') timer.suspend();
  return result;
}

function* run(ports: ServePorts, route: Route, wire: WireRequest, token: string, timer: RequestTimer, first: { taken?: boolean }): Steps<WireResult> {
  let trail: AuditTrail | null = null;
  try {
    const host = yield* settled(ports.locate(route, wire));
    if ('kind' in host) return host;
    // A request resumed from a grant goes on with the audit trail its grant began.
    const resumed = wire.resumes ? ports.grants?.pending(wire.resumes) : undefined;
    trail = resumed ? resumed.trail : host.trail(wire, token);
    const early = host.preempt?.(wire, token, trail);
    if (early) {
      const response = yield* settled(early);
      if (response) return { kind: 'ok', response };
    }
    const relPath = relativePath(wire.path, host.mount.mountPoint);
    const unauthenticated = isUnauthenticatedPath(host.backend, relPath);
    timer.login = unauthenticated && host.logins === true;
    const validation = token ? yield* settled(host.caller(token, wire)) : null;
    wire.auth = callerFrom(validation, unauthenticated);
    const admitted = host.admitted?.(wire);
    if (admitted) yield* settled(admitted);
    const authorizer = yield* settled(authorizerFor(host.acls, wire.auth, wire.wrapTTL));
    const ledger = ports.grants;
    const handsOff = ledger !== undefined && wire.grantStamp !== undefined && !wire.resumes && host.offloads?.(wire, relPath) === true;
    const scope = host.open(wire, relPath, handsOff);
    // The trail is dispatch's audit hook itself (its request and response methods).
    const hooks: DispatchHooks = { ...scope.hooks, audit: trail ?? undefined, resolved: timer.resolved };
    if (ledger && handsOff) {
      const granted = trail;
      hooks.handOff = (req) => ({ grant: ledger.issue(granted, timer, req, wire.grantStamp === ledger.stamp ? undefined : host.grantedMount?.()) });
    }
    const precomputed = wire.precomputed;
    if (ledger && precomputed && !handsOff && !wire.resumes && host.offloads?.(wire, relPath) === true) {
      const audited = trail;
      hooks.answer = (req) => {
        const given = acceptPrecomputed(ledger, precomputed, req, audited?.recording === true);
        first.taken = given !== null;
        ports.metrics.incr(given ? 'coffer.offload.answered' : 'coffer.offload.recomputed', { mount: route.prefix });
        return given;
      };
    }
    try {
      const dispatching = () => dispatchSteps(host.backend, wire, host.mount, scope.transaction(), authorizer, hooks);
      const response = scope.order ? yield* settled(scope.order(() => drive(dispatching()))) : yield* dispatching();
      if (response.grant) return { kind: 'grant', grant: response.grant };
      return response.answered ? { kind: 'settled' } : { kind: 'ok', response };
    } finally {
      const after = scope.after?.();
      if (after) yield* settled(after);
    }
  } catch (e) {
    return errorResult(trail ? yield* settled(trail.failed(e)) : e);
  }
}
