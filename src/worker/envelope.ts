// Logical responses → HTTP: Vault's success envelope, 204 for empty results, raw bodies for the
// seal endpoints, and the error envelope. Every response carries Vault's two fixed headers.

import type { LogicalResponse, WrapInfo } from '../framework/backend';
import { encodeJson } from './json';

const BASE_HEADERS: [string, string][] = [
  ['Content-Type', 'application/json'],
  ['Cache-Control', 'no-store'],
];

/** sys/ paths whose `data` Vault also copies to the top level (old clients read it there). */
const TOP_LEVEL_COPY =
  /^sys\/(?:audit(?:\/.*)?|audit-hash\/.*|auth(?:\/.*)?|config\/cors|config\/auditing\/request-headers(?:\/.*)?|capabilities(?:-accessor|-self)?|ha-status|key-status|mounts(?:\/.*)?|policy(?:\/.*)?|rekey\/backup|rekey\/recovery-key-backup|remount|rotate|wrapping\/wrap)$/;

const HEADERS = new Headers(BASE_HEADERS);

export function jsonResponse(status: number, body: unknown, head = false): Response {
  if (status === 204 || body === undefined) return new Response(null, { status, headers: HEADERS });
  return new Response(head ? null : encodeJson(body), { status, headers: HEADERS });
}

export function errorResponse(status: number, errors: string[], extra?: Record<string, unknown>): Response {
  return jsonResponse(status, { errors, ...extra });
}

export interface EnvelopeContext {
  requestId: string;
  path: string;
  mountType: string;
  head: boolean;
  /** The serving mount's allowed_response_headers (lowercased); absent: none. */
  allowedResponseHeaders?: string[];
}

/**
 * The JSON body a logical response is sent as, or null for an empty (204) answer. Response
 * wrapping stores exactly this, so an unwrap hands back what the client would have got.
 */
export function envelopeBody(resp: LogicalResponse, ctx: Omit<EnvelopeContext, 'head'>): Record<string, unknown> | null {
  if (resp.wrapInfo) return wrappedBody(resp.wrapInfo);
  const warnings = resp.warnings && resp.warnings.length > 0 ? resp.warnings : null;
  const empty = !resp.data && !resp.auth && !warnings && !resp.lease && !resp.leaseId;
  if (empty && !resp.status) return null;
  const body: Record<string, unknown> = {
    request_id: ctx.requestId,
    lease_id: resp.leaseId ?? '',
    renewable: resp.lease?.renewable ?? false,
    lease_duration: resp.lease?.ttl ?? 0,
    data: resp.data ?? null,
    wrap_info: null,
    warnings,
    auth: resp.auth ?? null,
    mount_type: ctx.mountType,
  };
  if (resp.data && TOP_LEVEL_COPY.test(ctx.path.replace(/\/$/, ''))) {
    for (const [k, v] of Object.entries(resp.data)) if (!(k in body)) body[k] = v;
  }
  return body;
}

/** What a client gets instead of a wrapped response: only the wrap_info (Vault's request_id is ""). */
function wrappedBody(wrapInfo: WrapInfo): Record<string, unknown> {
  return {
    request_id: '',
    lease_id: '',
    renewable: false,
    lease_duration: 0,
    data: null,
    wrap_info: wrapInfo,
    warnings: null,
    auth: null,
  };
}

export function logicalToHttp(resp: LogicalResponse, ctx: EnvelopeContext): Response {
  if (resp.raw && !resp.wrapInfo) {
    const { status, body, contentType } = resp.raw;
    if (contentType && (typeof body === 'string' || body instanceof Uint8Array || body === undefined)) {
      const headers = new Headers({ 'Content-Type': contentType, 'Cache-Control': 'no-store' });
      for (const [name, value] of Object.entries(resp.raw.headers ?? {})) {
        if (ctx.allowedResponseHeaders?.includes(name.toLowerCase())) headers.set(name, value);
      }
      // Nothing to send (no CA yet, a 304): no body, and 204 in place of a 200.
      const empty = body === undefined || body.length === 0;
      const code = empty && status === 200 ? 204 : status;
      return new Response(ctx.head || empty ? null : body, { status: code, headers });
    }
    return jsonResponse(status, body, ctx.head);
  }
  const body = envelopeBody(resp, ctx);
  if (body === null) return jsonResponse(204, undefined);
  return jsonResponse(resp.wrapInfo ? 200 : (resp.status ?? 200), body, ctx.head);
}
