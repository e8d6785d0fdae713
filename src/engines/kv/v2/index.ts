// KV version 2: versioned secrets (mount type kv with options.version "2"). Each concern has its
// file: layout (storage keys), model (the version state machine), store (records and indexes),
// views (wire shapes), one file per group of paths, timers (deletion times) and upgrade (v1→v2).

import type { Backend, Handler } from '../../../framework/backend';
import type { Storage } from '../../../framework/storage';
import { configPath } from './paths/config';
import { ConfigCache } from './config-cache';
import type { Kv2Context } from './context';
import { dataPath } from './paths/data';
import { invalidPath } from './paths/invalid';
import { metadataPath } from './paths/metadata';
import { subkeysPath } from './paths/subkeys';
import { sweepDue } from './timers';
import { UpgradeGate } from './upgrade';
import { versionPaths } from './paths/versions';

export function kvV2Backend(): Backend {
  const upgrade = new UpgradeGate();
  const ctx: Kv2Context = {
    config: new ConfigCache(),
    guard:
      (handler: Handler): Handler =>
      (req, f) => {
        // Past the upgrade (always, but for a mount tuned from v1 moments ago): straight through,
        // so a read served from memory answers at once.
        if (upgrade.passed()) return handler(req, f);
        return (async () => {
          await upgrade.check(req.storage, req.wakeAt);
          // Awaited, not returned: a rejection adopted later shows as unhandled in workerd.
          return await handler(req, f);
        })();
      },
  };
  return {
    type: 'kv',
    // The catch-all comes last, so every valid path is matched first.
    paths: [configPath(ctx), dataPath(ctx), metadataPath(ctx), ...versionPaths(ctx), subkeysPath(ctx), invalidPath()],
    periodic: async (storage: Storage, now: number) => {
      // While plain v1 keys remain, migrate a chunk per run and come back at once.
      if (!(await upgrade.step(storage, now))) return now;
      return sweepDue(storage, now);
    },
  };
}
