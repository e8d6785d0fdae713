// The logical request pipeline shared by every Durable Object that hosts a backend:
// route → existence check → authorisation → field validation → handler → atomic commit.

import {
  matchPath,
  matchesSpecialPath,
  type AuthContext,
  type Backend,
  type EntityView,
  type Handler,
  type LogicalRequest,
  type LogicalResponse,
  type MountConfigView,
  type Operation,
  type WireOperation,
  type PathDef,
  type Precomputed,
  type WrapInfo,
} from '../framework/backend';
import { generateRsaPair, type RsaPair, type RsaPairSource } from '../crypto/rsa-keygen';
import { permissionDenied, RsaKeysNeeded, unsupportedOperation, unsupportedPath } from '../framework/errors';
import { FieldData } from '../framework/fields';
import { drive, settled, type Maybe, type Steps } from '../framework/steps';
import { pathHelp } from '../framework/help';
import type { Transaction } from '../framework/storage';
import type { SentinelRecord } from '../core/sentinel/governing';

/** A logical request as it crosses from the Worker into a Durable Object (structured-clonable). */
export interface WireRequest {
  id: string;
  operation: WireOperation;
  /** Full logical path, e.g. "secret/foo". */
  path: string;
  data: Record<string, unknown>;
  auth: AuthContext | null;
  clientIP: string;
  headers: Record<string, string>;
  clientToken?: string;
  /** The body as bytes when its content type carries no parameters (application/ocsp-request). */
  rawBody?: Uint8Array;
  /** Requested response-wrapping TTL (seconds; 0 = none): policies may demand bounds on it. */
  wrapTTL: number;
  /** The Cloudflare location the request entered by (sys/host-info); absent locally. */
  colo?: string;
  /** RSA key pairs the Worker made for this request, as its path asked (PathDef.rsaKeysNeeded). */
  preparedRsaPairs?: PreparedRsaPair[];
  /**
   * The caller's raw token, for sys/ requests: the SystemObject's audit entries carry its HMAC.
   * Never given to handlers (other objects receive the token beside the request).
   */
  auditToken?: string;
  /** X-Vault-Policy-Override: soft-mandatory governing policies that fail are let through (audited). */
  policyOverride?: boolean;
  /** The governing policies evaluated for this request, set by the pipeline for its audit entries. */
  sentinel?: SentinelRecord[];
  /**
   * The Worker can run this request's handler under a grant (src/pipeline/offload.ts): the stamp of
   * the mount state it holds ("" for none). Absent: the handler runs in the object.
   */
  grantStamp?: string;
  /** The grant this request was handed off under, now finished in the object (its audit trail goes on). */
  resumes?: string;
  /** The handler's outcome, computed in the Worker before it sent the request (offload.ts, "answer first"). */
  precomputed?: Precomputed;
}

export interface PreparedRsaPair extends RsaPair {
  bits: number;
}

export interface MountContext {
  mountPoint: string;
  mountType: string;
  mountAccessor: string;
  mountConfig: MountConfigView;
  mountOptions: Record<string, string>;
  /** The mount's allowed_managed_keys (becomes LogicalRequest.mountAllowedManagedKeys). */
  mountAllowedManagedKeys?: readonly string[];
}

export interface AuthorizationRequest {
  auth: AuthContext | null;
  capability: Operation;
  /** Full logical path (mount point + relative path). */
  path: string;
  sudo: boolean;
  data: Record<string, unknown>;
}

export interface Authorizer {
  /** Throws a 403 CofferError when the request may not proceed; says whether the caller has sudo. */
  authorize(req: AuthorizationRequest): { sudo: boolean };
  /**
   * True when the caller holds both create and update on the path. Then a write whose create and
   * update handlers are the same behaves identically either way, and the existence check is skipped.
   */
  grantsCreateAndUpdate(req: Omit<AuthorizationRequest, 'capability'>): boolean;
  /**
   * Runs the RGPs and EGPs that apply once the ACL allowed the request (on unauthenticated paths,
   * without one); throws the 403 of a denial. Absent: no governing policy exists.
   */
  govern?(req: GovernRequest): void;
}

export interface GovernRequest {
  wire: WireRequest;
  /** The operation the request resolved to (a write: create or update). */
  operation: Operation;
  unauthenticated: boolean;
}

/** For requests without a token: every protected path is refused (unauthenticated ones never get here). */
export const anonymousAuthorizer: Authorizer = {
  authorize: () => {
    throw permissionDenied();
  },
  grantsCreateAndUpdate: () => false,
};

/** Authorises the request's operation; see PathDef.updateWhenCreateDenied for the fallback. */
function authorizeOperation(
  authorizer: Authorizer,
  authz: Omit<AuthorizationRequest, 'capability'>,
  req: LogicalRequest,
  updateWhenCreateDenied: boolean,
): boolean {
  try {
    return authorizer.authorize({ ...authz, capability: req.operation }).sudo;
  } catch (e) {
    if (!(updateWhenCreateDenied && req.operation === 'create')) throw e;
    const sudo = authorizer.authorize({ ...authz, capability: 'update' }).sudo;
    req.operation = 'update';
    return sudo;
  }
}

export function relativePath(fullPath: string, mountPoint: string): string {
  if (fullPath.startsWith(mountPoint)) return fullPath.slice(mountPoint.length);
  // "secret" addresses the root of mount "secret/".
  return fullPath === mountPoint.slice(0, -1) ? '' : fullPath;
}

export function isUnauthenticatedPath(backend: Backend, relPath: string): boolean {
  return matchesSpecialPath(backend.unauthenticatedPaths, relPath);
}

/** What a hosting object adds around the pipeline. */
export interface DispatchHooks {
  /** Runs after the handler, inside the request's transaction (e.g. to record a lease); undefined: nothing to wait for. */
  beforeCommit?: (response: LogicalResponse, req: LogicalRequest) => Promise<void> | undefined;
  /**
   * Wraps a committed response for a request that asked for it (X-Vault-Wrap-TTL): stores it
   * behind a new single-use token and returns what the client gets instead.
   */
  wrap?: (response: LogicalResponse, wire: WireRequest, mount: MountContext) => Promise<WrapInfo>;
  /**
   * Audit devices: `request` runs once the request is authorised, before the handler (it throws
   * to refuse the request when no device recorded it); `response` gets the final, possibly
   * wrapped, response (and throws when no device recorded it).
   */
  audit?: {
    request: (req: LogicalRequest) => Maybe<void>;
    response: (response: LogicalResponse) => Maybe<void>;
  };
  /** Becomes LogicalRequest.wakeAt: the backend asks for its periodic work to run then. */
  wakeAt?: (at: number) => void;
  /** Becomes LogicalRequest.entity. */
  entity?: () => Promise<EntityView | null>;
  /** Becomes LogicalRequest.putWAL. */
  putWAL?: (id: string, entry: Uint8Array) => Promise<void>;
  /** Told the operation the request resolved to (a write: create or update), for metrics. */
  resolved?: (operation: Operation) => void;
  /**
   * Set when the host hands this request's handler to the Worker (src/pipeline/offload.ts): called
   * once the request is authorised and its request entry recorded, instead of the handler.
   */
  handOff?: (req: LogicalRequest) => LogicalResponse;
  /**
   * Set for a request whose outcome the Worker computed first (WireRequest.precomputed): called
   * once the request is authorised and its request entry recorded. Null: the handler runs here;
   * else what answers it (its response, `answered`, or it throws the outcome's error).
   */
  answer?: (req: LogicalRequest) => (() => LogicalResponse) | null;
  /**
   * The host can have RSA key pairs made outside its object: a request whose path declares
   * pairs it was not given stops with RsaKeysNeeded (before it is audited or runs) and comes
   * back with them. Without this, the pairs are made in place.
   */
  preparesRsaPairs?: boolean;
}

/** The pairs the Worker prepared first (by size), then new ones made here. */
function rsaPairSource(prepared: PreparedRsaPair[]): RsaPairSource {
  const left = [...prepared];
  return async (bits) => {
    const i = left.findIndex((p) => p.bits === bits);
    return i >= 0 ? left.splice(i, 1)[0] : generateRsaPair(bits);
  };
}

/** The sizes in `needed` that `prepared` does not cover (each prepared pair serves once). */
function missingPairs(needed: number[], prepared: PreparedRsaPair[]): number[] {
  const have = prepared.map((p) => p.bits);
  return needed.filter((bits) => {
    const i = have.indexOf(bits);
    if (i < 0) return true;
    have.splice(i, 1);
    return false;
  });
}

/** Vault wraps responses that carry something; empty (204) answers and raw errors are not wrapped. */
export function wrappable(response: LogicalResponse): boolean {
  if (response.wrapInfo) return false;
  if (response.raw) return response.raw.status === 200 && typeof response.raw.body === 'object' && response.raw.body !== null;
  return Boolean(response.data || response.auth || response.leaseId || (response.warnings && response.warnings.length > 0));
}

/** The request's data: its body or query, with the values captured from the path. */
export const requestData = (wire: WireRequest, params: Record<string, string>): Record<string, unknown> =>
  Object.keys(params).length > 0 ? { ...wire.data, ...params } : wire.data;

/** The request a handler sees (operation: the wire's, until resolved). */
export function logicalRequest(
  wire: WireRequest,
  relPath: string,
  mount: MountContext,
  data: Record<string, unknown>,
  storage: Transaction,
  hooks: Pick<DispatchHooks, 'wakeAt' | 'entity' | 'putWAL'>,
): LogicalRequest {
  return {
    id: wire.id,
    operation: wire.operation === 'write' ? 'update' : (wire.operation as Operation),
    path: relPath,
    // Named one by one: a spread among other properties is a slow copy on every request.
    mountPoint: mount.mountPoint,
    mountType: mount.mountType,
    mountAccessor: mount.mountAccessor,
    mountConfig: mount.mountConfig,
    mountOptions: mount.mountOptions,
    mountAllowedManagedKeys: mount.mountAllowedManagedKeys,
    data,
    storage,
    auth: wire.auth,
    clientIP: wire.clientIP,
    headers: wire.headers,
    clientToken: wire.clientToken,
    rawBody: wire.rawBody,
    wrapTTL: wire.wrapTTL,
    colo: wire.colo,
    wakeAt: hooks.wakeAt,
    entity: hooks.entity,
    putWAL: hooks.putWAL,
  };
}

/** The handler, then what its host adds before the commit, the commit, and the unknown-field warning. */
export async function runHandler(...args: Parameters<typeof handlerSteps>): Promise<LogicalResponse> {
  return await drive(handlerSteps(...args));
}

/** runHandler as steps: at once when the handler, the hook and the commit have nothing to wait for (a read served from memory). */
function* handlerSteps(
  def: PathDef,
  handler: Handler,
  req: LogicalRequest,
  fields: FieldData,
  params: Record<string, string>,
  storage: Transaction,
  beforeCommit: DispatchHooks['beforeCommit'],
): Steps<LogicalResponse> {
  const response = (yield* settled(handler(req, fields))) ?? {};
  const hooked = beforeCommit?.(response, req);
  if (hooked) yield* settled(hooked);
  const committed = storage.commit();
  if (committed) yield* settled(committed);
  const unknown = def.arbitraryData ? [] : fields.unknownFields().filter((k) => !(k in params));
  if (unknown.length > 0 && !response.raw) {
    response.warnings = [...(response.warnings ?? []), `Endpoint ignored these unrecognized parameters: [${unknown.join(' ')}]`];
  }
  return response;
}

/** Runs one request's handler under its authorisation (dispatchSteps), as a promise. */
export async function dispatch(...args: Parameters<typeof dispatchSteps>): Promise<LogicalResponse> {
  return await drive(dispatchSteps(...args));
}

/** dispatch as steps (src/framework/steps.ts): at once when nothing on the way is waited for. */
export function* dispatchSteps(
  backend: Backend,
  wire: WireRequest,
  mount: MountContext,
  storage: Transaction,
  authorizer: Authorizer,
  hooks: DispatchHooks = {},
): Steps<LogicalResponse> {
  const relPath = relativePath(wire.path, mount.mountPoint);
  const match = matchPath(backend, relPath);
  if (!match) throw unsupportedPath();
  const { def, params } = match;
  const unauthenticated = isUnauthenticatedPath(backend, relPath);
  // Help is open to any valid token (Vault: the help operation is always permitted by ACL).
  if (wire.operation === 'help') {
    if (!unauthenticated && !wire.auth) throw permissionDenied();
    return { raw: { status: 200, body: pathHelp(wire.path, backend.type, def) } };
  }

  const data = requestData(wire, params);
  const req = logicalRequest(wire, relPath, mount, data, storage, hooks);
  const fields = new FieldData(def.fields ?? {}, data);
  // A request the Worker ran first had its fields validated there, by the same definition: they
  // are validated here only if its outcome is not taken (none of it is needed to authorise).
  const validateLater = hooks.answer !== undefined && !def.existenceCheck;
  // Field errors are reported after authorisation, so callers without access learn nothing.
  let fieldError: unknown = null;
  try {
    if (!validateLater) fields.validate();
  } catch (e) {
    fieldError = e;
  }

  // Parameter constraints see the request's own data, never values captured from the path.
  const authz = { auth: wire.auth, path: wire.path, sudo: matchesSpecialPath(backend.sudoPaths, relPath), data: wire.data };
  if (wire.operation === 'write' && def.existenceCheck && fieldError === null) {
    const oneHandler = !def.operations.create || def.operations.create === def.operations.update;
    if (!(oneHandler && !unauthenticated && authorizer.grantsCreateAndUpdate(authz))) {
      req.operation = (yield* settled(def.existenceCheck(req, fields))) ? 'update' : 'create';
    }
  }

  hooks.resolved?.(req.operation);
  if (!unauthenticated) {
    req.sudo = authorizeOperation(authorizer, authz, req, def.updateWhenCreateDenied === true);
    // A create the policy refused may go on as an update (PathDef.updateWhenCreateDenied).
    hooks.resolved?.(req.operation);
  }
  authorizer.govern?.({ wire, operation: req.operation, unauthenticated });
  if (fieldError !== null) throw fieldError;

  const handler = def.operations[req.operation] ?? (req.operation === 'create' ? def.operations.update : undefined);
  if (!handler) throw unsupportedOperation();

  // A handler handed off to the Worker gets its key pairs there; one the Worker ran first has no
  // pairs sent back for: should it run here after all (a rare race), they are made in place.
  if (def.rsaKeysNeeded && !hooks.handOff) {
    const prepared = wire.preparedRsaPairs ?? [];
    if (hooks.preparesRsaPairs && !hooks.answer) {
      const missing = missingPairs(yield* settled(def.rsaKeysNeeded(req, fields)), prepared);
      if (missing.length > 0) throw new RsaKeysNeeded(missing);
    }
    req.rsaPairs = rsaPairSource(prepared);
  }

  if (hooks.audit) yield* settled(hooks.audit.request(req));
  if (hooks.handOff) return hooks.handOff(req);
  const given = hooks.answer?.(req);
  if (given) {
    const answer = given();
    if (hooks.audit && !answer.answered) yield* settled(hooks.audit.response(answer));
    return answer;
  }
  if (validateLater) fields.validate();
  const response = yield* handlerSteps(def, handler, req, fields, params, storage, hooks.beforeCommit);
  // A handler may require wrapping of its own (DR activation tokens); the client's TTL wins when given.
  const wrapTTL = wire.wrapTTL > 0 ? wire.wrapTTL : (response.wrapTTL ?? 0);
  if (wrapTTL > 0 && hooks.wrap && wrappable(response)) response.wrapInfo = yield* settled(hooks.wrap(response, wrapTTL === wire.wrapTTL ? wire : { ...wire, wrapTTL }, mount));
  if (hooks.audit) yield* settled(hooks.audit.response(response));
  return response;
}
