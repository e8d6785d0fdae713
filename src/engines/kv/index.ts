// The kv secrets engine. Version 1 (unversioned) is served here; options.version picks the version.

import type { Backend } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import { passthroughPaths } from './passthrough';

export function kvBackend(): Backend {
  return { type: 'kv', paths: passthroughPaths({ storageFor: (req) => req.storage, leaseHints: true }) };
}

/** Validates kv mount options: version 1 or 2, never downgraded. */
export function validateKvOptions(
  options: Record<string, string>,
  previous: Record<string, string> | null,
): Record<string, string> | null {
  const version = options.version;
  if (version !== undefined && version !== '' && version !== '1' && version !== '2') {
    throw badRequest(`invalid kv version "${version}": versions 1 and 2 are supported`);
  }
  if (previous?.version === '2' && version !== '2') throw badRequest('cannot downgrade mount from version 2');
  if (version === '2') {
    throw badRequest('KV version 2 is not available in this Coffer release yet; enable kv with version 1');
  }
  const out = { ...options };
  if (out.version === '') delete out.version;
  return Object.keys(out).length > 0 ? out : null;
}
