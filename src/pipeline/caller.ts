// How a request's token becomes its caller (the AuthContext the ACL, the audit trail and the
// handlers see). Every hosting object resolves it here; they differ only in how a token is
// validated, which is their CallerPort.

import type { AuthContext } from '../framework/backend';
import { invalidToken, permissionDenied } from '../framework/errors';
import type { Validation } from '../core/tokens/validator';
import type { WireRequest } from './dispatch';

/**
 * Validates a request's token. A token shard looks it up in its own storage; a mount object holds
 * a lease from the token's shard; the SystemObject takes what the Worker resolved at the shard
 * (the Worker already refused unknown tokens there). Null: the request has no caller. It may
 * answer synchronously, and is then not awaited.
 */
export type CallerPort = (token: string, wire: WireRequest) => Validation | null | Promise<Validation | null>;

/** The caller a validation stands for; a refused token is an error unless the path needs none. */
export function callerFrom(validation: Validation | null, unauthenticated: boolean): AuthContext | null {
  if (!validation) return null;
  if (validation.status === 'ok') return validation.auth;
  if (unauthenticated) return null;
  throw validation.status === 'cidr' ? permissionDenied() : invalidToken();
}

/** The SystemObject's port: the Worker resolved the token at its shard and sent the result. */
export const resolvedByWorker: CallerPort = (_token, wire) => (wire.auth ? { status: 'ok', auth: wire.auth } : null);
