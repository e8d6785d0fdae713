// The data imports Vault injects into RGPs and EGPs (request, token, identity, mfa, namespace,
// controlgroup), built from what the pipeline knows of a request. Everything is lazy: building
// the record costs a few small objects, and a field is converted only when a policy reads it.

import type { SObject } from '../values';
import { identityImport } from './identity';
import { controlGroupImport, mfaImport, namespaceImport } from './misc';
import { requestImport } from './request';
import { tokenImport } from './token';
import type { DataFacts } from './facts';

export type { DataFacts, RequestFacts } from './facts';

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
