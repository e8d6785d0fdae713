// What the KV v2 path definitions share: the upgrade gate every operation passes first, and the
// engine settings as write handlers see them.

import type { Handler } from '../../../framework/backend';
import type { FieldSchema } from '../../../framework/fields';
import type { ConfigCache } from './config-cache';

export interface Kv2Context {
  /** Wraps a handler so it answers Vault's 400 while a v1→v2 upgrade is under way. */
  guard(handler: Handler): Handler;
  config: ConfigCache;
}

export const PATH_FIELD: FieldSchema = { type: 'string', description: 'Location of the secret.' };
