// The Worker's request path (DESIGN.md): parse → canonical path → token (one call to its shard,
// which also reports seal state and the mount-table version) → longest-prefix route from the
// cached table → the owning Durable Object → Vault envelope.

import { mountStub, systemStub, tokenShardStub } from '../../durable-objects/stubs';
import { relativePath, type WireRequest } from '../core/logical';
import { findRoute, type RouteEntry, type RouteSnapshot } from '../core/mounts';
import { shardFor } from '../core/tokens';
import type { Epoch, WireResult } from '../core/wire';
import { intVar, tokenShardCount, type Env } from '../env';
import { matchesSpecialPath, type AuthContext } from '../framework/backend';
import { CofferError, multierror, noHandler, permissionDenied, sealedError } from '../framework/errors';
import { backendType } from '../registry';
import { SYS_UNAUTHENTICATED_PATHS } from '../sys/special-paths';
import { errorResponse, logicalToHttp, type EnvelopeContext } from './envelope';
import { DEFAULT_JSON_LIMITS } from './json';
import { parseRequest, type ParsedRequest, type RequestLimits } from './request';

const TOKEN_MOUNT = 'auth/token/';

/** Routes cached per isolate, replaced whenever a token shard reports a newer table version. */
let cachedRoutes: RouteSnapshot | null = null;

async function routes(env: Env, version: number, force = false): Promise<RouteSnapshot> {
  if (!force && cachedRoutes && cachedRoutes.version === version) return cachedRoutes;
  const snapshot = await systemStub(env).routeSnapshot();
  if (!snapshot) throw sealedError();
  cachedRoutes = snapshot;
  return snapshot;
}

function limits(env: Env): RequestLimits {
  return {
    maxRequestSize: intVar(env.MAX_REQUEST_SIZE, 32 * 1024 * 1024),
    json: {
      maxDepth: intVar(env.MAX_JSON_DEPTH, DEFAULT_JSON_LIMITS.maxDepth),
      maxObjectEntries: intVar(env.MAX_JSON_OBJECT_ENTRIES, DEFAULT_JSON_LIMITS.maxObjectEntries),
      maxArrayElements: intVar(env.MAX_JSON_ARRAY_ELEMENTS, DEFAULT_JSON_LIMITS.maxArrayElements),
      maxStringLength: intVar(env.MAX_JSON_STRING_LENGTH, DEFAULT_JSON_LIMITS.maxStringLength),
    },
  };
}

const invalidToken = (): CofferError => new CofferError(403, [multierror(['permission denied', 'invalid token'])]);

const shardOf = (env: Env, token: string) => tokenShardStub(env, shardFor(token, tokenShardCount(env)));

/** Resolves the caller's token; with no token, still learns the epoch (seal state first). */
async function resolve(env: Env, token: string): Promise<{ epoch: Epoch; auth: AuthContext | null }> {
  if (!token) return { epoch: await tokenShardStub(env, 0).epoch(), auth: null };
  return shardOf(env, token).resolve(token);
}

function resultToHttp(result: WireResult, ctx: EnvelopeContext): Response {
  if (result.kind === 'ok') return logicalToHttp(result.response, ctx);
  if (result.kind === 'error') return errorResponse(result.status, result.errors, result.extra);
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
  return { id, operation: p.operation, path: p.path, data: p.data, auth, clientIP: p.clientIP, headers };
}

async function handleSys(env: Env, p: ParsedRequest, ctx: EnvelopeContext): Promise<Response> {
  ctx.mountType = 'system';
  const unauthenticated = matchesSpecialPath(SYS_UNAUTHENTICATED_PATHS, relativePath(p.path, 'sys/'));
  let auth: AuthContext | null = null;
  // Seal endpoints answer while sealed and need no token (one is used when sent); anything else
  // needs an unsealed cluster and a valid token.
  if (!unauthenticated || p.token) {
    const resolved = await resolve(env, p.token);
    auth = resolved.auth;
    if (!unauthenticated) {
      if (resolved.epoch.sealed) throw sealedError();
      if (!p.token) throw permissionDenied();
      if (!auth) throw invalidToken();
    }
  }
  return resultToHttp(await systemStub(env).handle(wireRequest(ctx.requestId, p, auth)), ctx);
}

async function handleTokenMount(env: Env, p: ParsedRequest, ctx: EnvelopeContext): Promise<Response> {
  ctx.mountType = 'token';
  const shard = p.token ? shardOf(env, p.token) : tokenShardStub(env, 0);
  const { result } = await shard.handle(p.token, TOKEN_MOUNT, wireRequest(ctx.requestId, p, null));
  return resultToHttp(result, ctx);
}

async function handleMount(env: Env, p: ParsedRequest, ctx: EnvelopeContext): Promise<Response> {
  const { epoch, auth } = await resolve(env, p.token);
  if (epoch.sealed) throw sealedError();
  if (p.token && !auth) throw invalidToken();
  for (let attempt = 0; attempt < 2; attempt++) {
    const route = findRoute((await routes(env, epoch.version, attempt > 0)).routes, p.path);
    if (!route) throw auth ? noHandler(p.path) : permissionDenied();
    const type = backendType(route.type);
    if (!auth && !matchesSpecialPath(type?.unauthenticatedPaths, relativePath(p.path, route.prefix))) throw permissionDenied();
    ctx.mountType = route.type;
    const result = await mountStub(env, route.uuid).handle(route.prefix, wireRequest(ctx.requestId, p, auth, passthroughHeaders(route, p.headers)));
    if (result.kind !== 'gone') return resultToHttp(result, ctx);
    // The mount moved or was disabled since our routes were cached: re-read them once.
  }
  throw noHandler(p.path);
}

export async function handleV1(request: Request, env: Env): Promise<Response> {
  const ctx: EnvelopeContext = { requestId: crypto.randomUUID(), path: '', mountType: '', head: false };
  try {
    const url = new URL(request.url);
    if (!url.pathname.startsWith('/v1/')) return errorResponse(404, []);
    const p = await parseRequest(request, url, limits(env));
    ctx.path = p.path;
    ctx.head = p.head;
    if (p.head && p.path !== 'sys/health') throw new CofferError(405, []);
    if (p.path === 'sys' || p.path.startsWith('sys/')) return await handleSys(env, p, ctx);
    if (p.path.startsWith(TOKEN_MOUNT) || p.path === 'auth/token') return await handleTokenMount(env, p, ctx);
    return await handleMount(env, p, ctx);
  } catch (e) {
    if (e instanceof CofferError) return errorResponse(e.status, e.errors, e.extra);
    console.error('unhandled error', e);
    return errorResponse(500, [e instanceof Error ? e.message : String(e)]);
  }
}
