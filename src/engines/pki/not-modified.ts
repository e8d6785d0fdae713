// Conditional reads of the CA and CRL endpoints (reference §1.2): If-Modified-Since reaches a
// handler only when the mount's passthrough_request_headers lets it through, and the
// Last-Modified set here leaves only when allowed_response_headers lists it (the Worker filters).

import type { LogicalRequest, LogicalResponse } from '../../framework/backend';

export const httpDate = (ms: number): string => new Date(ms).toUTCString();

/**
 * A 304 when the client's If-Modified-Since is no older than `changedAt` (ms; compared at the
 * header's one-second resolution), else null.
 */
export function notModifiedSince(req: LogicalRequest, changedAt: number, contentType: string): LogicalResponse | null {
  const since = req.headers['if-modified-since'];
  if (!since) return null;
  const sinceMs = Date.parse(since);
  if (Number.isNaN(sinceMs) || Math.floor(changedAt / 1000) * 1000 > sinceMs) return null;
  return { raw: { status: 304, body: '', contentType, headers: { 'Last-Modified': httpDate(changedAt) } } };
}
