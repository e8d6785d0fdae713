// What the pipeline knows of a request, from which the data imports are built (index.ts).

import type { AuthContext } from '../../../framework/backend';
import type { SentinelIdentity } from '../../identity/types';

export interface RequestFacts {
  /** Full logical path without leading slash, e.g. "secret/data/foo". */
  path: string;
  /** Vault's operation name: read, create, update, patch, delete, list, help. */
  operation: string;
  /** The request's data (JSON values). */
  data: Record<string, unknown>;
  remoteAddr: string;
  policyOverride: boolean;
  unauthenticated: boolean;
  /** Requested response-wrapping TTL in seconds (0: none). */
  wrapTTL: number;
}

export interface DataFacts {
  request: RequestFacts;
  /** The caller's token (null for unauthenticated requests). */
  auth: AuthContext | null;
  /** The caller's entity and groups (null: no entity). */
  identity: SentinelIdentity | null;
}
