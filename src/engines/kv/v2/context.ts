// What the KV v2 path definitions share: the upgrade gate every operation passes first.

import type { Handler } from '../../../framework/backend';
import type { FieldSchema } from '../../../framework/fields';

export interface Kv2Context {
  /** Wraps a handler so it answers Vault's 400 while a v1→v2 upgrade is under way. */
  guard(handler: Handler): Handler;
}

export const PATH_FIELD: FieldSchema = { type: 'string', description: 'Location of the secret.' };
