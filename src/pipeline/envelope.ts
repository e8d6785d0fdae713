// Vault's success envelope as JSON: what the Worker sends for a logical response, and what
// response wrapping stores so an unwrap hands back exactly that.

import type { LogicalResponse, WrapInfo } from '../framework/backend';

/** Where a response was served: the envelope names the request and the mount type. */
export interface EnvelopeIds {
  requestId: string;
  path: string;
  mountType: string;
}

/** sys/ paths whose `data` Vault also copies to the top level (old clients read it there). */
const TOP_LEVEL_COPY =
  /^sys\/(?:audit(?:\/.*)?|audit-hash\/.*|auth(?:\/.*)?|config\/cors|config\/auditing\/request-headers(?:\/.*)?|capabilities(?:-accessor|-self)?|ha-status|key-status|mounts(?:\/.*)?|policy(?:\/.*)?|rekey\/backup|rekey\/recovery-key-backup|remount|rotate|wrapping\/wrap)$/;

/**
 * The JSON body a logical response is sent as, or null for an empty (204) answer. Response
 * wrapping stores exactly this, so an unwrap hands back what the client would have got.
 */
export function envelopeBody(resp: LogicalResponse, ctx: EnvelopeIds): Record<string, unknown> | null {
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

