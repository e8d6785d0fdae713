// Every path no other definition takes: Vault's 404 envelope with a warning that points at the
// right API (or the CLI command), so KV v1 habits on a v2 mount get a useful answer.

import type { Handler, Operation, PathDef } from '../../../../framework/backend';
import { rawEnvelope } from '../raw';

const ROOTS = new Set(['data', 'metadata', 'delete', 'undelete', 'destroy']);

const CLI_VERB: Record<Operation, string> = { create: 'put', update: 'put', patch: 'patch', read: 'get', list: 'list', delete: 'delete' };

export const ROOT_WARNING = 'Non-listing operations on the root of a K/V v2 mount are not supported.';

export const invalidPathWarning = (op: Operation): string =>
  `Invalid path for a versioned K/V secrets engine. See the API docs for the appropriate API endpoints to use. If using the Vault CLI, use 'vault kv ${CLI_VERB[op]}' for this operation.`;

export function invalidPath(): PathDef {
  const handler: Handler = async (req) => rawEnvelope(req, 404, null, [ROOTS.has(req.path) ? ROOT_WARNING : invalidPathWarning(req.operation)]);
  return {
    pattern: '.*',
    summary: 'Not a KV v2 path: see config, data/, metadata/, delete/, undelete/, destroy/ and subkeys/.',
    operations: { read: handler, update: handler, patch: handler, delete: handler, list: handler },
  };
}
