// Vault answers some KV v2 misses with a 404 whose body is a whole response envelope (it uses
// logical.RespondWithStatusCode): the metadata of a deleted version, or a warning about the path.

import type { LogicalRequest, LogicalResponse } from '../../../framework/backend';

export function rawEnvelope(req: LogicalRequest, status: number, data: Record<string, unknown> | null, warnings: string[] | null = null): LogicalResponse {
  return {
    raw: {
      status,
      body: { request_id: req.id, lease_id: '', renewable: false, lease_duration: 0, data, wrap_info: null, warnings, auth: null, mount_type: '' },
    },
  };
}

/** A 404 with no body at all (Vault's RespondWithStatusCode without a response). */
export const emptyNotFound = (): LogicalResponse => ({ raw: { status: 404 } });
