// Logical responses → HTTP: Vault's success envelope, 204 for empty results, raw bodies for the
// seal endpoints, and the error envelope. Every response carries Vault's two fixed headers.

import type { LogicalResponse } from '../framework/backend';
import { envelopeBody, type EnvelopeIds } from '../pipeline/envelope';
import { encodeJson } from '../framework/json-numbers';

const BASE_HEADERS: [string, string][] = [
  ['Content-Type', 'application/json'],
  ['Cache-Control', 'no-store'],
];

const HEADERS = new Headers(BASE_HEADERS);

export function jsonResponse(status: number, body: unknown, head = false): Response {
  if (status === 204 || body === undefined) return new Response(null, { status, headers: HEADERS });
  return new Response(head ? null : encodeJson(body), { status, headers: HEADERS });
}

export function errorResponse(status: number, errors: string[], extra?: Record<string, unknown>): Response {
  return jsonResponse(status, { errors, ...extra });
}

export interface EnvelopeContext extends EnvelopeIds {
  head: boolean;
  /** The serving mount's allowed_response_headers (lowercased); absent: none. */
  allowedResponseHeaders?: string[];
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
