// The Worker's request path: parse → canonical path → longest-prefix route from the routes cached
// in this isolate → the owning Durable Object, which validates the token under a lease from the
// token's shard → Vault envelope. sys/ requests resolve the token at its shard and go to the
// SystemObject; auth/token/ requests go straight to the token's shard.
//
// Cached routes go stale in three ways, all handled: a request reaches an object whose mount was
// disabled, moved or tuned since (it answers "gone": re-read and retry); a path matches no cached
// route (re-read, at most every ROUTE_REFRESH_MS, then answer); and this isolate itself changed
// the tables (a sys/ write drops the cache).

import { mountStub, systemStub, tokenShardStub } from '../rpc/stubs';
import { generateRsaPair } from '../crypto/rsa-keygen';
import { relativePath, type PreparedRsaPair, type WireRequest } from '../pipeline/dispatch';
import { findRoute, type RouteEntry } from '../core/mounts/table';
import { shardFor } from '../core/tokens/entry';
import type { WireResult } from '../pipeline/result';
import { intVar, tokenShardCount, type Env } from '../rpc/env';
import { matchesSpecialPath, type AuthContext, type LogicalResponse } from '../framework/backend';
import { badRequest, CofferError, invalidToken, noHandler, permissionDenied, sealedError, drSecondaryError } from '../framework/errors';
import { SYS_UNAUTHENTICATED_PATHS } from '../sys/special-paths';
import { INVALID_WRAPPING_TOKEN } from '../sys/paths/wrapping';
import { isJwt } from '../core/tokens/wrapping-jwt';
import { errorResponse, logicalToHttp, type EnvelopeContext } from './envelope';
import { DEFAULT_JSON_LIMITS } from './json';
import { answeredFirst, answerFirst, forgetGrantedState, grantStamp, resumedAt, runGrant } from './grants';
import { parseRequest, type ParsedRequest, type RequestLimits } from './request';
import { refuseEmptySegments } from './canonical';

const TOKEN_MOUNT = 'auth/token/';
/** A path with no cached route triggers at most one re-read of the routes per this interval. */
const ROUTE_REFRESH_MS = 100;

let cachedRoutes: RouteEntry[] | null = null;
let routesReadAt = 0;
/**
 * The routes, re-read from the SystemObject when `refresh`. Each request reads for itself: a
 * promise one request started must not be awaited by another (workerd binds I/O to the request
 * that made it; under load the fuzz suite saw such waits hang and fail with "Cannot perform I/O
 * on behalf of a different request"). The routes read is cheap: the object keeps them in memory.
 */
function routes(env: Env, refresh = false): RouteEntry[] | Promise<RouteEntry[]> {
  // Cached: no promise, so the request goes on without an event-loop turn.
  if (!refresh && cachedRoutes) return cachedRoutes;
  return readRoutes(env);
}

async function readRoutes(env: Env): Promise<RouteEntry[]> {
  const fresh = await systemStub(env).routes();
  if (!fresh) throw sealedError();
  // A DR secondary serves nothing outside sys/ (nothing is cached: each request asks again).
  if (fresh === 'dr-secondary') {
    cachedRoutes = null;
    throw drSecondaryError();
  }
  cachedRoutes = fresh;
  routesReadAt = Date.now();
  return fresh;
}

/** The request limits of this isolate's env (its vars do not change while it lives). */
let limitsFor: { env: Env; limits: RequestLimits } | null = null;

function limits(env: Env): RequestLimits {
  if (limitsFor?.env === env) return limitsFor.limits;
  const read: RequestLimits = {
    maxRequestSize: intVar(env.MAX_REQUEST_SIZE, 32 * 1024 * 1024),
    // Vault's listener default http_read_timeout.
    readTimeoutMs: intVar(env.REQUEST_READ_TIMEOUT_MS, 30_000),
    json: {
      maxDepth: intVar(env.MAX_JSON_DEPTH, DEFAULT_JSON_LIMITS.maxDepth),
      maxObjectEntries: intVar(env.MAX_JSON_OBJECT_ENTRIES, DEFAULT_JSON_LIMITS.maxObjectEntries),
      maxArrayElements: intVar(env.MAX_JSON_ARRAY_ELEMENTS, DEFAULT_JSON_LIMITS.maxArrayElements),
      maxStringLength: intVar(env.MAX_JSON_STRING_LENGTH, DEFAULT_JSON_LIMITS.maxStringLength),
    },
  };
  limitsFor = { env, limits: read };
  return read;
}

const shardOf = (env: Env, token: string) => tokenShardStub(env, shardFor(token, tokenShardCount(env)));

function resultToHttp(result: WireResult, ctx: EnvelopeContext): Response {
  if (result.kind === 'ok') return logicalToHttp(result.response, ctx);
  if (result.kind === 'error') {
    // Sealed: nothing read under the keys may stay in this isolate.
    if (result.status === 503) forgetGrantedState();
    return errorResponse(result.status, result.errors, result.extra);
  }
  throw new Error('mount disappeared while routing');
}

function passthroughHeaders(route: RouteEntry, headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of route.passthroughRequestHeaders) {
    const v = headers.get(name);
    if (v !== null) out[name.toLowerCase()] = v;
  }
  return out;
}

function wireRequest(id: string, p: ParsedRequest, auth: AuthContext | null, headers: Record<string, string> = {}): WireRequest {
  const wire: WireRequest = { id, operation: p.operation, path: p.path, data: p.data, auth, clientIP: p.clientIP, headers, wrapTTL: p.wrapTTL };
  if (p.rawBody) wire.rawBody = p.rawBody;
  if (p.colo) wire.colo = p.colo;
  if (p.policyOverride) wire.policyOverride = true;
  return wire;
}

/** sys/ paths that spend a wrapping token themselves: resolving it must not use it up first. */
const SPENDS_WRAPPING_TOKEN = new Set(['wrapping/unwrap', 'wrapping/lookup']);
/** sys/ paths that take a wrapping token, which may come in JWT form. */
const TAKES_WRAPPING_TOKEN = new Set([...SPENDS_WRAPPING_TOKEN, 'wrapping/rewrap']);

/**
 * A JWT-form wrapping token (DR activation tokens) stands for the wrapping token it carries,
 * once the SystemObject confirms its signature; one it did not sign stays as it is (and is then
 * refused as an unknown token).
 */
async function openWrappingJwts(env: Env, p: ParsedRequest): Promise<void> {
  if (p.token && isJwt(p.token)) p.token = (await systemStub(env).openWrappingJwt(p.token)) ?? p.token;
  const body = p.data.token;
  if (typeof body === 'string' && isJwt(body)) p.data = { ...p.data, token: (await systemStub(env).openWrappingJwt(body)) ?? body };
}

async function handleSys(env: Env, p: ParsedRequest, ctx: EnvelopeContext): Promise<Response> {
  ctx.mountType = 'system';
  const rel = relativePath(p.path, 'sys/');
  if (TAKES_WRAPPING_TOKEN.has(rel) && p.operation === 'write') await openWrappingJwts(env, p);
  // Unwrap and lookup act on the request's own token when the body names none.
  const ownWrappingToken = SPENDS_WRAPPING_TOKEN.has(rel) && p.operation === 'write' && !p.data.token;
  let auth: AuthContext | null = null;
  if (p.token) {
    const shard = shardOf(env, p.token);
    const resolved = ownWrappingToken ? await shard.resolveForUnwrap(p.token) : await shard.resolve(p.token);
    auth = resolved.auth;
    // An unknown token is refused, except on the seal endpoints (usable without one) and while
    // sealed (the SystemObject answers 503 first).
    if (!auth && !resolved.sealed && !matchesSpecialPath(SYS_UNAUTHENTICATED_PATHS, rel)) {
      // A spent or expired wrapping token presented to unwrap itself: say so, as a body token would.
      const refusal = ownWrappingToken ? badRequest(INVALID_WRAPPING_TOKEN) : invalidToken();
      // Refused here, yet recorded by the SystemObject's audit devices like any refusal.
      const refused = { ...wireRequest(ctx.requestId, p, null), auditToken: p.token };
      return resultToHttp(await systemStub(env).auditRefusal(refused, refusal.status, refusal.errors), ctx);
    }
  }
  const wire = wireRequest(ctx.requestId, p, auth);
  if (ownWrappingToken) wire.clientToken = p.token;
  if (p.token) wire.auditToken = p.token;
  const result = await systemStub(env).handle(wire);
  // This isolate changed the system: its cached routes may be out of date.
  if (p.operation !== 'read' && p.operation !== 'list' && p.operation !== 'help') cachedRoutes = null;
  return resultToHttp(result, ctx);
}

async function handleTokenMount(env: Env, p: ParsedRequest, ctx: EnvelopeContext): Promise<Response> {
  ctx.mountType = 'token';
  // The route table is what knows a DR secondary (whose shards hold the primary's tokens).
  const table = routes(env);
  if (table instanceof Promise) await table;
  const shard = p.token ? shardOf(env, p.token) : tokenShardStub(env, 0);
  return resultToHttp(await shard.handle(p.token, TOKEN_MOUNT, wireRequest(ctx.requestId, p, null)), ctx);
}

/**
 * No route for the path: re-read the routes (rate-limited) before answering 404/403. The refusal
 * is recorded by the SystemObject's audit devices, like any other (probing for paths shows up).
 */
async function missingRoute(env: Env, p: ParsedRequest, ctx: EnvelopeContext): Promise<RouteEntry | Response> {
  if (Date.now() - routesReadAt >= ROUTE_REFRESH_MS) {
    const route = findRoute(await routes(env, true), p.path);
    if (route) return route;
  }
  // No mount, so no opaque tail: an empty segment is refused as a malformed path.
  refuseEmptySegments(p.emptySegmentAt);
  // Vault checks the token before routing: an invalid one is refused as such, a valid one learns
  // there is no such path.
  let auth: AuthContext | null = null;
  let refusal: CofferError;
  if (!p.token) refusal = permissionDenied();
  else {
    const resolved = await shardOf(env, p.token).resolve(p.token);
    if (resolved.sealed) throw sealedError();
    auth = resolved.auth;
    refusal = auth ? noHandler(p.path) : invalidToken();
  }
  const refused = { ...wireRequest(ctx.requestId, p, auth), ...(p.token ? { auditToken: p.token } : {}) };
  return resultToHttp(await systemStub(env).auditRefusal(refused, refusal.status, refusal.errors), ctx);
}

/** How many times a request may come back for key pairs (each round makes what it asked for). */
const MAX_PREPARE_ROUNDS = 3;

/**
 * Where an opaque tail starts in a request to `route`: a PKI OCSP GET's base64 request, where
 * standard base64's "//" is data (RFC 6960 A.1). Infinity when the path has none.
 */
function opaqueTailAt(route: RouteEntry, p: ParsedRequest): number {
  if (route.type !== 'pki' || p.operation !== 'read') return Infinity;
  for (const endpoint of ['ocsp/', 'unified-ocsp/']) {
    if (p.path.startsWith(endpoint, route.prefix.length)) return route.prefix.length + endpoint.length;
  }
  return Infinity;
}

/** Serves a request on a mount its own object hosts (the legacy cubbyhole/response unwrap included). */
async function handleMount(env: Env, p: ParsedRequest, ctx: EnvelopeContext): Promise<Response> {
  let refreshed = false;
  const prepared: PreparedRsaPair[] = [];
  // A grant whose handler must be finished in the object (src/pipeline/offload.ts).
  let resumes: string | undefined;
  // What this isolate computed first, answered if the object takes the outcome (grants.ts, answerFirst).
  let computed: LogicalResponse | undefined;
  for (let round = 0; round <= MAX_PREPARE_ROUNDS; ) {
    const table = routes(env, refreshed);
    const route = findRoute(table instanceof Promise ? await table : table, p.path) ?? (await missingRoute(env, p, ctx));
    if (route instanceof Response) return route;
    if (p.emptySegmentAt >= 0) refuseEmptySegments(p.emptySegmentAt, opaqueTailAt(route, p));
    ctx.mountType = route.type;
    ctx.allowedResponseHeaders = route.allowedResponseHeaders;
    const wire = wireRequest(ctx.requestId, p, null, passthroughHeaders(route, p.headers));
    if (prepared.length > 0) wire.preparedRsaPairs = prepared;
    if (resumes) wire.resumes = resumes;
    else {
      const stamp = grantStamp(env, route.uuid, p.path, p.data);
      const first = stamp ? await answerFirst(route.uuid, stamp, wire, p.token) : null;
      computed = first?.response;
      if (first) wire.precomputed = first.precomputed;
      else if (stamp !== undefined) wire.grantStamp = stamp;
    }
    const stub = mountStub(env, route.uuid);
    let result: WireResult = await stub.handle(route.prefix, route.revision, wire, p.token);
    if (wire.precomputed) {
      answeredFirst(route.uuid, wire, p.token, result);
      if (result.kind === 'settled' && computed) return resultToHttp({ kind: 'ok', response: computed }, ctx);
    }
    if (result.kind === 'grant') {
      const grant = result.grant;
      result = (await runGrant(env, stub, route.uuid, wire, grant, p.token)) ?? (await stub.handle(route.prefix, route.revision, { ...wire, grantStamp: undefined, resumes: (resumes = grant.id) }, p.token));
    }
    if (resumes && (result.kind === 'ok' || result.kind === 'error')) resumedAt(route.uuid, result.stamp);
    if (result.kind === 'prepare') {
      // RSA pairs are made here, in the stateless Worker, so the mount's object (which serialises
      // the mount) is not held while they are made; it runs the request once they are given.
      prepared.push(...(await Promise.all(result.rsaBits.map(async (bits) => ({ bits, ...(await generateRsaPair(bits)) })))));
      round++;
      continue;
    }
    if (result.kind !== 'gone') return resultToHttp(result, ctx);
    // The mount was disabled, moved or tuned since the routes were read: re-read them once.
    if (refreshed) throw noHandler(p.path);
    refreshed = true;
  }
  throw new CofferError(500, ['internal error: the request kept asking for more key pairs']);
}

export async function handleV1(request: Request, env: Env): Promise<Response> {
  const ctx: EnvelopeContext = { requestId: crypto.randomUUID(), path: '', mountType: '', head: false };
  try {
    const url = new URL(request.url);
    if (!url.pathname.startsWith('/v1/')) return errorResponse(404, []);
    const parsed = parseRequest(request, url, limits(env));
    const p = parsed instanceof Promise ? await parsed : parsed;
    // Reading request.cf costs every request it is read on (measured: ~15% of a KV read's CPU):
    // only sys/host-info uses it.
    if (p.path === 'sys/host-info' && typeof request.cf?.colo === 'string') p.colo = request.cf.colo;
    ctx.path = p.path;
    ctx.head = p.head;
    if (p.head && p.path !== 'sys/health') throw new CofferError(405, []);
    // Only a mount's opaque tail may hold an empty segment: handleMount judges it after routing.
    if (p.path === 'sys' || p.path.startsWith('sys/')) {
      refuseEmptySegments(p.emptySegmentAt);
      return await handleSys(env, p, ctx);
    }
    if (p.path.startsWith(TOKEN_MOUNT) || p.path === 'auth/token') {
      refuseEmptySegments(p.emptySegmentAt);
      return await handleTokenMount(env, p, ctx);
    }
    return await handleMount(env, p, ctx);
  } catch (e) {
    if (e instanceof CofferError && e.status === 503) forgetGrantedState();
    if (e instanceof CofferError) return errorResponse(e.status, e.errors, e.extra);
    console.error('unhandled error', e);
    return errorResponse(500, [e instanceof Error ? e.message : String(e)]);
  }
}
