// Mount-wide settings: config/keys (disable_upsert) and cache-config (the policy cache size,
// kept for clients that set it; parsed keys are cached per stored record regardless).

import type { PathDef } from '../../../framework/backend';
import { badRequest } from '../../../framework/errors';
import { getJSON, putJSON, type Storage } from '../../../framework/storage';
import { CACHE_CONFIG, KEYS_CONFIG } from '../store';

export interface KeysConfig {
  disableUpsert: boolean;
}

export async function loadKeysConfig(storage: Storage): Promise<KeysConfig> {
  const stored = await getJSON<{ disable_upsert?: boolean }>(storage, KEYS_CONFIG);
  return { disableUpsert: stored?.disable_upsert === true };
}

export function keysConfigPaths(): PathDef[] {
  return [
    {
      pattern: 'config/keys',
      fields: { disable_upsert: { type: 'bool', description: 'Stop encrypt from creating unknown keys' } },
      summary: 'Mount-wide key settings.',
      operations: {
        read: async (req) => ({ data: { disable_upsert: (await loadKeysConfig(req.storage)).disableUpsert } }),
        update: async (req, f) => {
          const disable = f.has('disable_upsert') ? f.get<boolean>('disable_upsert') : (await loadKeysConfig(req.storage)).disableUpsert;
          await putJSON(req.storage, KEYS_CONFIG, { disable_upsert: disable });
          return { data: { disable_upsert: disable } };
        },
      },
    },
    {
      pattern: 'cache-config',
      fields: { size: { type: 'int', description: 'Cache size (0: unlimited; else at least 10)' } },
      summary: 'The key cache size.',
      operations: {
        read: async (req) => ({ data: { size: (await getJSON<{ size: number }>(req.storage, CACHE_CONFIG))?.size ?? 0 } }),
        update: async (req, f) => {
          const size = f.get<number>('size');
          if (size !== 0 && size < 10) throw badRequest('size must be 0 or a value greater or equal to 10');
          await putJSON(req.storage, CACHE_CONFIG, { size });
          return { data: { size }, warnings: ['cache configurations will be applied when this backend is restarted'] };
        },
      },
    },
  ];
}
