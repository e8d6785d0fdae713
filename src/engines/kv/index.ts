// The kv secrets engine: options.version picks version 1 (unversioned, passthrough.ts) or 2
// (versioned, v2/). Tuning a mount from 1 to 2 upgrades its data in place (v2/upgrade.ts).

import type { Backend } from '../../framework/backend';
import { badRequest } from '../../framework/errors';
import { passthroughPaths } from '../../framework/passthrough-paths';
import { kvV2Backend } from './v2';

export function kvBackend(options: Record<string, string> | null): Backend {
  if (options?.version === '2') return kvV2Backend();
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
  const out = { ...options };
  if (out.version === '') delete out.version;
  return Object.keys(out).length > 0 ? out : null;
}
