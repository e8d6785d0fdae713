// Backend = a list of path definitions with field schemas and one handler per operation.
// Engines, auth methods and the system backend are all Backends; they never see HTTP.

import type { RsaPairSource } from '../crypto/rsa-keygen';
import type { FieldData, FieldSchemas } from './fields';
import type { IdentityContext } from './identity-templates';
import type { Storage } from './storage';
import type { Maybe } from './steps';

/** Logical operations. A POST/PUT arrives as 'write' and is resolved to create or update. */
export type Operation = 'read' | 'list' | 'create' | 'update' | 'delete' | 'patch';
/** `help` (?help=1 on any method) describes the path instead of executing anything. */
export type WireOperation = Exclude<Operation, 'create' | 'update'> | 'write' | 'help';

/** Who is calling, as resolved from the client token (null for unauthenticated requests). */
export interface AuthContext {
  /** Token accessor ("" for batch tokens). */
  accessor: string;
  policies: string[];
  /** True when the token carries the root policy. */
  root: boolean;
  displayName: string;
  entityId: string;
  tokenType: 'service' | 'batch';
  /** CIDR blocks the token may be used from (empty: anywhere). */
  boundCidrs: string[];
  /** For audit entries: the token's metadata, creation TTL (seconds) and issue time (RFC 3339). */
  metadata?: Record<string, string> | null;
  ttl?: number;
  issueTime?: string;
  /** Policies the token's entity and its groups add (filled in once the request is authorised). */
  identityPolicies?: string[];
  /** The path the token was created on, e.g. "auth/userpass/login/alice" (Sentinel's token.path). */
  tokenPath?: string;
  /** Uses the token has left (0: unlimited). */
  numUses?: number;
  /** Renewal period in seconds (0: not periodic). */
  period?: number;
  /** Hard lifetime cap in seconds (0: none). */
  explicitMaxTtl?: number;
  /** Token role the token was created from ("" for none). */
  role?: string;
}

/**
 * A token's entity as engines see it, with its groups: what identity templates in their settings
 * may name (PKI role templates, AWS session tags).
 */
export type EntityView = NonNullable<IdentityContext['entity']> & { groups: IdentityContext['groups'] };

/** Effective TTL settings of the mount that serves the request (seconds). */
export interface MountConfigView {
  defaultLeaseTTL: number;
  maxLeaseTTL: number;
}

export interface LogicalRequest {
  id: string;
  operation: Operation;
  /** Path relative to the mount, e.g. "foo/bar" for secret/foo/bar. */
  path: string;
  /** Mount path with trailing slash, e.g. "secret/". */
  mountPoint: string;
  mountType: string;
  mountAccessor: string;
  mountConfig: MountConfigView;
  /** The mount's options map (e.g. {version: "1"}). */
  mountOptions: Record<string, string>;
  /**
   * The managed keys the mount lists in allowed_managed_keys (tune): with a key's any_mount, what
   * lets the mount use it (src/managed-keys/resolve.ts). Absent where the host serves no such mount.
   */
  mountAllowedManagedKeys?: readonly string[];
  data: Record<string, unknown>;
  storage: Storage;
  auth: AuthContext | null;
  clientIP: string;
  headers: Record<string, string>;
  /** Raw client token: only present where a backend needs it (token self-operations). */
  clientToken?: string;
  /** The body as bytes, for the content types that are not parameters (application/ocsp-request). */
  rawBody?: Uint8Array;
  /**
   * The calling token's entity (null: it has none), fetched on demand from the identity store
   * (PKI role templates). Absent where the host has no identity store.
   */
  entity?: () => Promise<EntityView | null>;
  /** The caller holds root or sudo on this path (handler-level sudo checks, e.g. token creation). */
  sudo?: boolean;
  /** Requested response-wrapping TTL in seconds (0 = not wrapped). */
  wrapTTL: number;
  /** The Cloudflare location (IATA code) the request entered by; absent locally. */
  colo?: string;
  /**
   * Where the handler gets RSA key pairs: those the host prepared (PathDef.rsaKeysNeeded) first,
   * then new ones made here. Absent: the engine makes them itself.
   */
  rsaPairs?: RsaPairSource;
  /**
   * Asks the host to run the backend's `periodic` work at `at` (ms since the epoch) or soon
   * after, whether or not this request succeeds. Absent where the host runs no timed work.
   */
  wakeAt?: (at: number) => void;
  /**
   * Vault's PutWAL, for work done outside storage before the request commits (an IAM user made
   * before its lease is recorded): stores `entry` at `wal/<id>` in the engine's storage durably
   * now, outside the request's transaction, and has the backend's `periodic` work run soon. The
   * handler deletes the entry in its own transaction once the work is recorded; an entry the
   * request leaves behind (it failed, or the object was reset) is the periodic work's to roll
   * back. Entries of requests still running are named to `periodic` (PeriodicContext.liveWriteAhead),
   * which leaves them be. Absent where the host has no durable side channel.
   */
  putWAL?: (id: string, entry: Uint8Array) => Promise<void>;
}

/** Where LogicalRequest.putWAL stores its entries, in the engine's storage. */
export const WAL_PREFIX = 'wal/';

/** What timed work knows of its mount (absent where the host serves no such mount). */
export interface PeriodicContext {
  /** The mount's allowed_managed_keys, as LogicalRequest.mountAllowedManagedKeys. */
  mountAllowedManagedKeys: readonly string[];
  /**
   * Ids of the write-ahead entries (LogicalRequest.putWAL) whose requests are still running on this
   * host: theirs to remove, not to roll back. Requests do not outlive their object, so after a
   * restart none is.
   */
  liveWriteAhead?: ReadonlySet<string>;
}

export interface LeaseInfo {
  ttl: number;
  renewable: boolean;
}

/** A secret that must be revoked when its lease ends (dynamic credentials). */
export interface IssuedSecret {
  /** Names the backend's secret type whose revoke/renew handlers apply. */
  type: string;
  /** Requested TTL in seconds (0: the mount's default), capped by the mount's max. */
  ttl: number;
  renewable: boolean;
  /** What the revoke handler needs later (never returned to the client). */
  internal: Record<string, unknown>;
}

/** A lease as a secret type's handlers see it. */
export interface LeaseView {
  id: string;
  path: string;
  internal: Record<string, unknown>;
  issueTime: number;
  expireTime: number;
}

export interface SecretType {
  /** Ends the secret (e.g. deletes the credential). Throwing keeps the lease and retries later. */
  revoke(lease: LeaseView, storage: Storage): Promise<void>;
  /** Extends the secret; may shorten the TTL it is given. Absent: renewal just extends the lease. */
  renew?(lease: LeaseView, ttl: number, storage: Storage): Promise<number | void>;
}

/**
 * What an auth method's login handler returns (Vault's logical.Auth): the host finds or creates the
 * entity behind the alias, issues the token, and answers with the `auth` block.
 */
export interface LoginAuth {
  /** The user's name on this mount (JWT: the user_claim value): the entity alias's name. */
  aliasName: string;
  /** Alias metadata (replaces the alias's; JWT: the claim_mappings values). */
  aliasMetadata: Record<string, string>;
  /** Group alias names on this mount (JWT: groups_claim); absent leaves external groups alone. */
  groupAliasNames?: string[];
  /** The token's policies before `default` is added. */
  policies: string[];
  noDefaultPolicy: boolean;
  /** The token's metadata. */
  metadata: Record<string, string>;
  /** Shown as "<mount>-<displayName>" (Vault prefixes the mount path). */
  displayName: string;
  /** Seconds; 0 = the mount's default (ttl) or maximum (maxTtl). */
  ttl: number;
  maxTtl: number;
  explicitMaxTtl: number;
  period: number;
  numUses: number;
  /** The token may be used only from these CIDR blocks. */
  boundCidrs: string[];
  /** '', 'default', 'service' or 'batch' (the role's token_type). */
  tokenType: string;
  /** The role the login used (kept with the token for renewal). */
  role: string;
}

export interface LogicalResponse {
  data?: Record<string, unknown> | null;
  warnings?: string[];
  /** Non-leased secrets with a TTL hint (KV v1 reads) surface it as lease_duration. */
  lease?: LeaseInfo;
  /** A leased secret: the mount records a lease and answers with its id. */
  secret?: IssuedSecret;
  /** An auth method's successful login: the host turns it into a token and the `auth` block. */
  login?: LoginAuth;
  /** Set by the mount when it recorded a lease for `secret`. */
  leaseId?: string;
  auth?: Record<string, unknown> | null;
  /**
   * A raw response: sent with this status and, if body is set, this JSON body verbatim
   * (no envelope). Used by sys/init, seal-status, health and friends.
   */
  raw?: {
    status: number;
    body?: unknown;
    /**
     * Sends `body` (a string or bytes) as-is with this content type instead of as JSON (OIDC's HTML
     * pages, PKI certificates and CRLs). An empty body is answered 204.
     */
    contentType?: string;
    /**
     * Extra response headers (PKI: Last-Modified). The Worker lets one out only when the mount's
     * allowed_response_headers lists it.
     */
    headers?: Record<string, string>;
  };
  /** Status override for an enveloped response (e.g. 404 with data). */
  status?: number;
  /** Set when the response was wrapped: the client gets only this (Vault's wrap_info). */
  wrapInfo?: WrapInfo;
  /** The handler's own wrapping TTL (seconds): the response is wrapped even without X-Vault-Wrap-TTL. */
  wrapTTL?: number;
  /** With wrapTTL: the wrapping token is handed out as a JWT naming this address (DR activation). */
  wrapJwtAddr?: string;
  /**
   * Set by a host instead of running the handler: the Worker runs it under this grant and settles
   * it with the host (src/pipeline/offload.ts). Nothing else is set.
   */
  grant?: Grant;
  /**
   * Set by a host that accepted the outcome the Worker computed first (Precomputed) when nothing
   * was to be recorded: the Worker answers what it computed. Nothing else is set.
   */
  answered?: true;
}

/** What the Worker needs to run a handed-off handler (src/pipeline/offload.ts). */
export interface Grant {
  id: string;
  /** The state the handler must read: the host object's run and its state epoch. */
  incarnation: string;
  epoch: number;
  /** The operation the write resolved to, and whether the caller holds sudo on the path. */
  operation: Operation;
  sudo: boolean;
  auth: AuthContext | null;
  /** An audit device recorded the request: the settlement must carry the response for its entry. */
  audited: boolean;
  /** Sent when the Worker's stamp was not this one: what it builds the backend and requests from. */
  mount?: GrantedMount;
}

/**
 * What a handed-off handler ended with, as the Worker reports it: the response (for the audit
 * devices), that it answered (nothing to record: the response stays in the Worker), or its error.
 */
export type GrantOutcome = { response: LogicalResponse } | { answered: true } | { status: number; errors: string[]; extra?: Record<string, unknown> };

/**
 * A handler the Worker ran before it sent the request (src/pipeline/offload.ts, "answer first"):
 * on values it holds under `stamp`, as the caller's earlier grant resolved it. The object answers
 * with `outcome` only if, once it has authorised the request, its state is still that stamp and it
 * resolved the same operation, sudo and caller; otherwise it runs the handler itself.
 */
export interface Precomputed {
  stamp: string;
  operation: Operation;
  sudo: boolean;
  /** The caller the outcome was computed for, as `callerFingerprint` (src/pipeline/offload.ts) writes it. */
  caller: string;
  outcome: GrantOutcome;
}

export interface GrantedMount {
  type: string;
  options: Record<string, string>;
  mountPoint: string;
  mountAccessor: string;
  mountConfig: MountConfigView;
  mountAllowedManagedKeys: readonly string[];
}

/** Vault's wrap_info: the single-use token that unwraps a response, and what it was made from. */
export interface WrapInfo {
  token: string;
  accessor: string;
  /** Seconds. */
  ttl: number;
  /** RFC 3339 with nanoseconds. */
  creation_time: string;
  creation_path: string;
  /** Accessor of the token inside the wrapped response, when it carried one. */
  wrapped_accessor?: string;
}

/** A path's operation. It may answer at once (no promise) when it has nothing to wait for. */
export type Handler = (req: LogicalRequest, fields: FieldData) => Maybe<LogicalResponse | null>;

export interface PathDef {
  /** Regular expression over the mount-relative path (anchored); named groups become fields. */
  pattern: string;
  fields?: FieldSchemas;
  /**
   * One handler per operation. A create handler that is the same function as the update handler
   * must not branch on req.operation: the pipeline may then skip the existence check.
   */
  operations: Partial<Record<Operation, Handler>>;
  /** Decides create vs update for writes: true when the target already exists. */
  existenceCheck?: (req: LogicalRequest, fields: FieldData) => Promise<boolean>;
  /**
   * A caller refused `create` (the target is missing) but holding `update` runs the update handler
   * instead, which answers for the missing target itself (transit encrypt: "encryption key not
   * found" rather than a 403).
   */
  updateWhenCreateDenied?: boolean;
  /** The body is the payload itself (KV v1): no unknown-field warnings. */
  arbitraryData?: boolean;
  /**
   * The sizes of the RSA key pairs the request will make (read-only: storage may be read, not
   * written). A host that can prepares them outside the mount's object before the request runs
   * there, so a slow key does not stall the mount's other requests; the handler gets them from
   * LogicalRequest.rsaPairs in this order.
   */
  rsaKeysNeeded?: (req: LogicalRequest, fields: FieldData) => Promise<number[]>;
  /**
   * Storage keys an operation's handler reads, as templates over the path's string fields
   * ("key/{name}"). A host that runs the handler away from the storage (a plugin's isolate) reads
   * them before the call and sends them along, which saves the call a round trip back per key.
   * Only a hint: a key the handler reads that is not listed is read as usual.
   */
  prefetch?: Partial<Record<Operation, string[]>>;
  summary?: string;
}

export interface Backend {
  /** Mount type, e.g. "kv", "system". */
  type: string;
  paths: PathDef[];
  /** Mount-relative paths (Vault globs: trailing '*') that need no token. */
  unauthenticatedPaths?: string[];
  /** Mount-relative paths (Vault globs) that need sudo in addition to the operation's capability. */
  sudoPaths?: string[];
  /**
   * Mount-relative paths (Vault globs) whose reads may write or issue leases (transit: the wrapping
   * key made on first read, backup recording backup_info; dynamic credentials). The host
   * serialises them with the writes; any other read that writes fails.
   */
  writingReadPaths?: string[];
  /**
   * Mount-relative paths (Vault globs) whose writes never change the mount's storage (JWT login:
   * the token and entity live elsewhere). The host runs them without waiting for other writes.
   */
  storageFreeWritePaths?: string[];
  /**
   * Mount-relative write paths (Vault globs) whose handler may run in the Worker instead of the
   * mount's object, on the values its storage reads are confirmed to hold (src/pipeline/offload.ts):
   * the crypto of a hot key then scales with the Worker's isolates. A handler that would write,
   * list, issue a lease or reach the object's services there is finished in the object instead.
   */
  offloadPaths?: string[];
  /**
   * Storage folders handlers of offloadPaths never read (PKI's issued certificates): writes there
   * leave granted state current. Offloaded handlers that read there are finished in the object.
   */
  offloadVolatile?: string[];
  /**
   * Estimated CPU (µs) of an offloadPaths request's handler, from storage values the Worker holds
   * (`cached` answers undefined for one it does not hold); null when it cannot tell. The Worker
   * hands off only requests estimated at OFFLOAD_MIN_COST_US or more: below that, the second call
   * to the object costs more than the handler. Absent: every such request is handed off.
   */
  offloadCost?(relPath: string, data: Record<string, unknown>, cached: (key: string) => Uint8Array | null | undefined): number | null;
  /**
   * Decides, per request, that a write (or writing read) writes nothing but the lease the host
   * records for it and its own write-ahead entries (AWS credentials), so it may run beside the
   * mount's write order instead of waiting for it. Any other write of its own is refused.
   */
  leaseOnly?(relPath: string, storage: Storage): Promise<boolean>;
  /** Secret types this backend issues leases for, by name. */
  secretTypes?: Record<string, SecretType>;
  /**
   * For backends that keep data per token (cubbyhole): erases a token's data when the token is
   * revoked or expires. Its presence makes the host register as the token's dependant on writes.
   */
  forgetToken?(accessor: string, storage: Storage): Promise<void>;
  /**
   * Timed work the backend does on its own (KV v2: versions reaching their deletion_time, the
   * v1→v2 upgrade). The host calls it from its alarm (when first provisioned, at the times its
   * requests asked for with `LogicalRequest.wakeAt`, and at the time it last returned), alone and
   * in a transaction of its own. It returns when it wants to run next (ms since the epoch; null:
   * nothing scheduled). It must be idempotent: a failed run is simply run again later.
   */
  periodic?(storage: Storage, now: number, mount?: PeriodicContext): Promise<number | null>;
  /**
   * For auth methods: the current limits for renewing a token one of its logins issued (Vault
   * re-reads the role), given the token's policies. Throws (a 4xx CofferError) when the token may
   * no longer be renewed, e.g. its role was deleted or grants other policies now. Absent: such tokens renew within the token's own limits.
   */
  renewLogin?(storage: Storage, role: string, tokenPolicies: readonly string[]): Promise<RenewLimits>;
}

/** What an auth method allows a renewal of one of its tokens (seconds; 0 = no limit of its own). */
export interface RenewLimits {
  ttl: number;
  maxTtl: number;
  period: number;
}

/**
 * Vault's special-path globs: exact, or prefix when ending in '*'; a '+' segment stands for any one
 * segment (PKI: `issuer/+/pem`).
 */
export function matchesSpecialPath(patterns: readonly string[] | undefined, path: string): boolean {
  if (!patterns || patterns.length === 0) return false;
  let matcher = specialMatchers.get(patterns);
  if (!matcher) specialMatchers.set(patterns, (matcher = compileSpecialPaths(patterns)));
  // A request asks up to four lists about its path, twice for some: the answers of recent paths
  // are kept, as matchPath keeps its matches.
  const known = matcher.recent.get(path);
  if (known !== undefined) return known;
  const answer = matcher.exact.has(path) || matcher.prefixes.some((p) => path.startsWith(p)) || (matcher.globs !== null && matcher.globs.test(path));
  if (path.length <= RECENT_PATH_LENGTH) {
    if (matcher.recent.size >= RECENT_MATCHES) matcher.recent.clear();
    matcher.recent.set(path, answer);
  }
  return answer;
}

/** A backend's special paths, compiled once: they are asked about on every request (PKI has ~40). */
interface SpecialPaths {
  exact: Set<string>;
  prefixes: string[];
  /** The '+' patterns as one expression (null: none). */
  globs: RegExp | null;
  /** Answers for paths asked recently (RECENT_MATCHES at most, then it starts again). */
  recent: Map<string, boolean>;
}

const specialMatchers = new WeakMap<readonly string[], SpecialPaths>();

function compileSpecialPaths(patterns: readonly string[]): SpecialPaths {
  const exact = new Set<string>();
  const prefixes: string[] = [];
  const globs: string[] = [];
  for (const p of patterns) {
    if (p.includes('+')) globs.push(segmentGlob(p));
    else if (p.endsWith('*')) prefixes.push(p.slice(0, -1));
    else exact.add(p);
  }
  return { exact, prefixes, globs: globs.length > 0 ? new RegExp(`^(?:${globs.join('|')})`) : null, recent: new Map() };
}

/** A '+' pattern as an expression: '+' is one segment, a trailing '*' any rest. */
function segmentGlob(pattern: string): string {
  const prefix = pattern.endsWith('*');
  const body = (prefix ? pattern.slice(0, -1) : pattern)
    .split('/')
    .map((seg) => (seg === '+' ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return prefix ? body : `${body}$`;
}

interface CompiledPath {
  def: PathDef;
  re: RegExp;
}

/**
 * A backend's patterns by their literal first segment ("issue" for `issue/(?<role>...)`), each
 * bucket with the patterns whose first segment is not a plain literal, in declaration order: a
 * path is tried only against the patterns that can match its first segment (PKI has ~80).
 */
interface CompiledPaths {
  byFirst: Map<string, CompiledPath[]>;
  other: CompiledPath[];
  /**
   * The last paths matched, with their answers: a hot path is matched on every request, twice
   * when handed off (Worker and object), and a match costs far more there than the lookup
   * (profiled: ~5 µs per match among a request's other work, 0.4 µs in a tight loop).
   */
  recent: Map<string, PathMatch | null>;
}

type PathMatch = { def: PathDef; params: Record<string, string> };

/** Paths remembered per backend (past it the memory starts again: a hot path returns at once), and the longest. */
const RECENT_MATCHES = 512;
const RECENT_PATH_LENGTH = 256;

const compiled = new WeakMap<Backend, CompiledPaths>();

/**
 * The first segment every path matching `pattern` has, when the pattern fixes it: a literal that
 * ends the pattern or is followed by '/' or by a group starting with '/' (`ca(?<pem>/pem)?`).
 * '' when the first segment may vary: a pattern starting with a group or class, a literal followed
 * by anything else (`certs?`), or an alternative at the top level (`a/x|b/y`).
 */
export function literalFirstSegment(pattern: string): string {
  const literal = /^[\w-]+/.exec(pattern)?.[0];
  if (!literal || hasTopLevelAlternative(pattern)) return '';
  const rest = pattern.slice(literal.length);
  if (rest === '' || rest.startsWith('/')) return literal;
  if (!/^\((?:\?:|\?<\w+>)?\//.test(rest)) return '';
  // Skipped, the group must leave the literal a whole segment: `ca(/pem)?_x` would not.
  const after = rest.slice(groupEnd(rest) + 1).replace(/^\?/, '');
  return after === '' || after.startsWith('/') ? literal : '';
}

/** The index of the first character outside groups and classes (a group's closing ')' included) that `onTop` picks, or -1. */
function scan(pattern: string, onTop: (c: string) => boolean): number {
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '\\') i++;
    else if (inClass) inClass = c !== ']';
    else if (c === '[') inClass = true;
    else if (c === '(') depth++;
    else if (c === ')') {
      if (--depth === 0 && onTop(c)) return i;
    } else if (depth === 0 && onTop(c)) return i;
  }
  return -1;
}

/** The index of the ')' closing the group `pattern` starts with. */
const groupEnd = (pattern: string): number => scan(pattern, (c) => c === ')');

const hasTopLevelAlternative = (pattern: string): boolean => scan(pattern, (c) => c === '|') >= 0;

function compilePaths(backend: Backend): CompiledPaths {
  const all = backend.paths.map((def) => ({ def, re: new RegExp(`^(?:${def.pattern})$`), first: literalFirstSegment(def.pattern) }));
  const other = all.filter((p) => p.first === '');
  const byFirst = new Map<string, CompiledPath[]>();
  for (const first of new Set(all.map((p) => p.first).filter((f) => f !== ''))) byFirst.set(first, all.filter((p) => p.first === first || p.first === ''));
  return { byFirst, other, recent: new Map() };
}

/** Finds the first path definition matching `path`, with its named captures (the caller's own copy). */
export function matchPath(backend: Backend, path: string): PathMatch | null {
  let paths = compiled.get(backend);
  if (!paths) compiled.set(backend, (paths = compilePaths(backend)));
  let match = paths.recent.get(path);
  if (match === undefined) {
    match = scanPaths(paths, path);
    if (path.length <= RECENT_PATH_LENGTH) {
      if (paths.recent.size >= RECENT_MATCHES) paths.recent.clear();
      paths.recent.set(path, match);
    }
  }
  return match && { def: match.def, params: { ...match.params } };
}

function scanPaths(paths: CompiledPaths, path: string): PathMatch | null {
  const slash = path.indexOf('/');
  const list = paths.byFirst.get(slash < 0 ? path : path.slice(0, slash)) ?? paths.other;
  for (const { def, re } of list) {
    const m = re.exec(path);
    if (m) {
      const params: Record<string, string> = {};
      for (const [k, v] of Object.entries(m.groups ?? {})) if (v !== undefined) params[k] = v;
      return { def, params };
    }
  }
  return null;
}

/** Vault's GenericNameRegex: a name of word characters, '-' and '.', not starting/ending in them. */
export const nameRegex = (name: string): string => `(?<${name}>\\w(?:[\\w.-]*\\w)?)`;
/** The rest of the path (may contain '/'). */
export const restRegex = (name: string): string => `(?<${name}>.+)`;
