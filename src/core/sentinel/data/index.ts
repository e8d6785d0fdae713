// The data imports Vault injects into RGPs and EGPs (request, token, identity, mfa, namespace,
// controlgroup), built from what the pipeline knows of a request. Everything is lazy: building
// the record costs a few small objects, and a field is converted only when a policy reads it.

import type { AuthContext } from '../../../framework/backend';
import type { SentinelIdentity } from '../../identity/types';
import type { SObject } from '../values';
import { identityImport } from './identity';
import { controlGroupImport, mfaImport, namespaceImport } from './misc';
import { requestImport } from './request';
import { tokenImport } from './token';

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

/**
 * The data imports Vault injects, by name: request, token, identity, mfa, namespace, controlgroup.
 * Values are memoised per call, and Sentinel lists and maps are mutable (append, index
 * assignment): call this once per policy run, so that no policy sees another's changes.
 */
export function dataImports(facts: DataFacts): Record<string, SObject> {
  // No prototype: a lookup of `import "constructor"` must find nothing.
  const byName: Record<string, SObject> = Object.create(null);
  byName.request = requestImport(facts.request);
  byName.token = tokenImport(facts.auth);
  byName.identity = identityImport(facts.identity);
  byName.mfa = mfaImport();
  byName.namespace = namespaceImport();
  byName.controlgroup = controlGroupImport();
  return byName;
}
