// Handing a hot path's handler to the Worker, so that one mount's crypto is not capped by its
// object. A request for one of a backend's offloadPaths still goes to the mount's object, which
// runs the pipeline up to the handler (the caller under its token lease, the ACL, governing
// policies, the audit request entry) and answers with a grant instead of running the handler. The
// Worker runs the same handler on the values its storage reads are confirmed to hold, then settles
// the grant with the object, which checks that nothing the handler may have read changed in
// between, records the response entry, and only then lets the answer out.
//
// "Changed" is the object's state epoch: it moves the moment a write under the engine's storage
// becomes visible (a rotation, min_decryption_version, a deletion, a role change) and when the
// object forgets its keys (seal). A grant whose epoch is no longer current is refused at
// settlement (and a read under it is refused), and its request is finished in the object: no
// answer computed from state older than a change is given once that change is visible, so none
// after the change has returned. Keeping the object the only writer keeps every other invariant.

import { generateRsaPair } from '../crypto/rsa-keygen';
import type { RequestTimer } from '../core/metrics/requests';
import { matchPath, type AuthContext, type Backend, type Grant, type GrantedMount, type GrantOutcome, type LogicalRequest, type LogicalResponse, type Precomputed } from '../framework/backend';
import { CofferError } from '../framework/errors';
import { FieldData } from '../framework/fields';
import type { StorageOp, Transaction } from '../framework/storage';
import type { AuditTrail } from './audit-trail';
import { logicalRequest, relativePath, requestData, runHandler, type MountContext, type WireRequest } from './dispatch';
import { errorResult, type WireResult } from './result';

/** The handler needs what only the object has (a write, a list, a lease, its services): finish it there. */
export class NeedsObject extends Error {
  constructor(what: string) {
    super(`offloaded handler needs the mount's object: ${what}`);
  }
}

/** The grant's state is no longer current: finish the request in the object. */
export class GrantStale extends Error {
  constructor() {
    super('the granted state changed');
  }
}

/** How long an unsettled grant is kept for its settlement or resumption (a Worker that vanished). */
const GRANT_KEEP_MS = 60_000;
/** Unsettled grants kept at most (the oldest go first). */
const GRANT_KEEP_MAX = 10_000;

interface PendingGrant {
  epoch: number;
  /** The request's audit trail: its request entry is recorded; the response entry is still due. */
  trail: AuditTrail | null;
  timer: RequestTimer;
  at: number;
}

/** An object's grants: its state epoch and the grants not settled yet. */
export class GrantLedger {
  /** This run of the object: a restarted object's epochs start again, under a new incarnation. */
  readonly incarnation = crypto.randomUUID();
  #epoch = 0;
  readonly #pending = new Map<string, PendingGrant>();

  /**
   * `watched`: the physical prefix of the engine's storage; `volatile()`: folders below it whose
   * writes leave grants current (Backend.offloadVolatile, with the prefix).
   */
  constructor(
    private readonly watched: string,
    private readonly volatile: () => readonly string[],
  ) {}

  /** What the Worker's cached state must match, as it sends it in WireRequest.grantStamp. */
  get stamp(): string {
    return `${this.incarnation}:${this.#epoch}`;
  }

  /** Called as writes become visible (staged or applied): a write a handler may read moves the epoch. */
  observe(ops: readonly StorageOp[]): void {
    for (const { key } of ops) {
      if (!key.startsWith(this.watched)) continue;
      if (this.volatile().some((prefix) => key.startsWith(prefix))) continue;
      this.#epoch++;
      return;
    }
  }

  /** Everything granted so far is stale (the entry changed, the keys were dropped). */
  bump(): void {
    this.#epoch++;
  }

  /** The object forgot its keys (seal): grants end, and what they would resume is refused. */
  forget(): void {
    this.#epoch++;
    this.#pending.clear();
  }

  issue(trail: AuditTrail | null, timer: RequestTimer, req: LogicalRequest, mount: GrantedMount | undefined): Grant {
    const now = Date.now();
    for (const [id, p] of this.#pending) {
      if (this.#pending.size < GRANT_KEEP_MAX && now - p.at < GRANT_KEEP_MS) break;
      this.#pending.delete(id);
    }
    const id = crypto.randomUUID();
    this.#pending.set(id, { epoch: this.#epoch, trail, timer, at: now });
    const audited = trail?.recording === true;
    const grant: Grant = { id, incarnation: this.incarnation, epoch: this.#epoch, operation: req.operation, sudo: req.sudo === true, auth: req.auth, audited };
    if (mount) grant.mount = mount;
    return grant;
  }

  /** An unsettled grant, whether or not its state is still current. */
  pending(id: string): PendingGrant | undefined {
    const p = this.#pending.get(id);
    return p && Date.now() - p.at < GRANT_KEEP_MS ? p : undefined;
  }

  /** The grant exists and nothing it may read changed since it was issued. */
  current(id: string): PendingGrant | undefined {
    const p = this.pending(id);
    return p && p.epoch === this.#epoch ? p : undefined;
  }

  done(id: string): void {
    this.#pending.delete(id);
  }
}

/**
 * Settles a grant in the object: refused ("stale") when its state changed, else the response (or
 * error) is audited and answered as if the handler had run here.
 */
export async function settleGrant(ledger: GrantLedger, id: string, outcome: GrantOutcome, durable: () => Promise<void> | undefined): Promise<WireResult> {
  const pending = ledger.current(id);
  // A response the audit devices must see cannot be settled without it: the object answers instead.
  if (!pending || ('answered' in outcome && pending.trail?.recording)) return { kind: 'stale' };
  pending.timer.resume();
  ledger.done(id);
  let result: WireResult;
  try {
    if ('answered' in outcome) result = { kind: 'settled' };
    else if ('response' in outcome) {
      await pending.trail?.response(outcome.response);
      result = { kind: 'ok', response: outcome.response };
    } else {
      const e = new CofferError(outcome.status, outcome.errors, outcome.extra);
      result = errorResult(pending.trail ? await pending.trail.failed(e) : e);
    }
  } catch (e) {
    result = errorResult(pending.trail ? await pending.trail.failed(e) : e);
  }
  // What the handler read may have been staged by other requests: it must be durable first.
  await durable();
  pending.timer.done();
  return result;
}

const fingerprints = new WeakMap<AuthContext, { identityPolicies: string[] | undefined; fp: string }>();

/**
 * A caller by value, to compare the one an outcome was computed for with the one the object
 * resolved. Kept per object: the object's caller is its token lease's, and the Worker's the
 * grant's, so each is serialised once, not on every request. The one field set after the lease
 * (`identityPolicies`, by authorizerFor on each request) is checked by identity.
 */
export function callerFingerprint(auth: AuthContext | null): string {
  if (!auth) return 'null';
  let known = fingerprints.get(auth);
  if (known === undefined || known.identityPolicies !== auth.identityPolicies) {
    fingerprints.set(auth, (known = { identityPolicies: auth.identityPolicies, fp: JSON.stringify(auth) }));
  }
  return known.fp;
}

/**
 * "Answer first": whether the object may answer with an outcome the Worker computed before it sent
 * the request (one call instead of a grant and a settlement). Called once the request is
 * authorised and its request entry recorded: the state must still be the stamp the Worker's values
 * were read under (so no change became visible since), the request resolved as the Worker ran it
 * (operation, sudo, caller), and a recording audit device must get the response. Returns what
 * answers the request, or null: the handler then runs in the object.
 */
export function acceptPrecomputed(ledger: GrantLedger, pre: Precomputed, req: LogicalRequest, recording: boolean): (() => LogicalResponse) | null {
  if (pre.stamp !== ledger.stamp || pre.operation !== req.operation || pre.sudo !== (req.sudo === true) || pre.caller !== callerFingerprint(req.auth ?? null)) return null;
  const { outcome } = pre;
  if ('answered' in outcome) return recording ? null : () => ({ answered: true });
  if ('response' in outcome) return () => outcome.response;
  return () => {
    throw new CofferError(outcome.status, outcome.errors, outcome.extra);
  };
}

/** The outcome of a handler that threw (NeedsObject and GrantStale are not outcomes: the caller resumes). */
export function failedOutcome(e: unknown): GrantOutcome {
  const r = errorResult(e);
  if (r.kind !== 'error') return { status: 500, errors: ['internal error: unexpected result of an offloaded handler'] };
  return r.extra ? { status: r.status, errors: r.errors, extra: r.extra } : { status: r.status, errors: r.errors };
}

/** The mount context a granted mount gives its handlers. */
export const grantedContext = (m: GrantedMount): MountContext => ({
  mountPoint: m.mountPoint,
  mountType: m.type,
  mountAccessor: m.mountAccessor,
  mountConfig: m.mountConfig,
  mountOptions: m.options,
  mountAllowedManagedKeys: m.mountAllowedManagedKeys,
});

const needsObject = (what: string) => (): never => {
  throw new NeedsObject(what);
};

/**
 * Runs a handed-off handler in the Worker: the path definition, fields and request as the object
 * would have built them, the operation and sudo it resolved. Throws NeedsObject (or GrantStale,
 * from the storage) when the request must be finished in the object.
 */
export async function runGranted(backend: Backend, wire: WireRequest, mount: MountContext, grant: Grant, storage: Transaction): Promise<LogicalResponse> {
  const relPath = relativePath(wire.path, mount.mountPoint);
  const match = matchPath(backend, relPath);
  if (!match) throw new NeedsObject('path');
  const { def, params } = match;
  const data = requestData(wire, params);
  const req = logicalRequest({ ...wire, auth: grant.auth }, relPath, mount, data, storage, {
    wakeAt: needsObject('timed work'),
    entity: needsObject('the identity store'),
    putWAL: needsObject('a write-ahead entry'),
  });
  req.operation = grant.operation;
  req.sudo = grant.sudo;
  req.rsaPairs = generateRsaPair;
  const handler = def.operations[req.operation] ?? (req.operation === 'create' ? def.operations.update : undefined);
  if (!handler) throw new NeedsObject('operation');
  // The object validated the same fields already; this converts them again here.
  const fields = new FieldData(def.fields ?? {}, data);
  fields.validate();
  return await runHandler(def, handler, req, fields, params, storage, async (response) => {
    // Leases, logins and wrapping are recorded by the object.
    if (response.secret || response.login || response.wrapTTL || response.grant) throw new NeedsObject('the response');
  });
}

/** Reads a handed-off handler asks the object for: keys to get, folders to list. */
export interface GrantReads {
  get: string[];
  list: string[];
}

/** What the object read under the grant's state. */
export interface GrantValues {
  get: Record<string, Uint8Array | null>;
  list: Record<string, string[]>;
}

/** What one state of a mount has read so far (immutable under its stamp, so shared by its requests). */
export interface GrantedReads {
  values: Map<string, Uint8Array | null>;
  lists: Map<string, string[]>;
}

/** A read the grant cannot answer: a volatile key, or a folder whose children volatile writes may change. */
export function volatileRead(volatile: readonly string[], reads: GrantReads): boolean {
  return reads.get.some((key) => volatile.some((prefix) => key.startsWith(prefix))) || reads.list.some((folder) => volatile.some((prefix) => prefix.startsWith(folder) || folder.startsWith(prefix)));
}

/**
 * The storage a handed-off handler reads: values and folder lists confirmed under the grant's
 * stamp (shared by the isolate's requests under that stamp), fetched from the object on a miss.
 * Writes, scans and the backend's volatile folders need the object.
 */
export class GrantedStorage implements Transaction {
  constructor(
    private readonly cache: GrantedReads,
    private readonly volatile: readonly string[],
    private readonly fetch: (reads: GrantReads) => Promise<GrantValues | null>,
  ) {}

  async #read(reads: GrantReads): Promise<GrantValues> {
    if (volatileRead(this.volatile, reads)) throw new NeedsObject(`a read of ${[...reads.get, ...reads.list].join(', ')}`);
    const fetched = await this.fetch(reads);
    if (!fetched) throw new GrantStale();
    return fetched;
  }

  async get(key: string): Promise<Uint8Array | null> {
    let value = this.cache.values.get(key);
    if (value === undefined) {
      value = (await this.#read({ get: [key], list: [] })).get[key] ?? null;
      this.cache.values.set(key, value);
    }
    // Handlers own what storage gives them.
    return value === null ? null : value.slice();
  }

  async list(prefix: string): Promise<string[]> {
    let children = this.cache.lists.get(prefix);
    if (children === undefined) {
      children = (await this.#read({ get: [], list: [prefix] })).list[prefix] ?? [];
      this.cache.lists.set(prefix, children);
    }
    return [...children];
  }
  async put(key: string): Promise<void> {
    throw new NeedsObject(`a write of ${key}`);
  }
  async delete(key: string): Promise<void> {
    throw new NeedsObject(`a delete of ${key}`);
  }
  async scan(prefix: string): Promise<string[]> {
    throw new NeedsObject(`a scan of ${prefix}`);
  }
  async commit(): Promise<void> {}
}
