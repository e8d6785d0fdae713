// The transit secrets engine: encryption as a service (reference §6). Keys live in one record
// each (policy.ts, store.ts); every change of a mount's keys runs inside its Mount DO, so a
// rotation and an encrypt never interleave mid-write.

import { transitOffloadCost } from './offload-cost';
import type { Backend } from '../../framework/backend';
import { DEFAULT_BATCH_CPU_BUDGET_MS } from './batch-cost';
import { backupPaths } from './paths/backup';
import { certificatePaths } from './paths/certificates';
import { encryptPaths } from './paths/encrypt';
import { exportPaths } from './paths/export';
import { hmacPaths } from './paths/hmac';
import { importPaths } from './paths/import';
import { keyPaths } from './paths/keys';
import { keysConfigPaths } from './paths/config';
import { rotateDue } from './rotation';
import { signPaths } from './paths/sign';
import type { ManagedKeyAccess } from '../../managed-keys/access';
import { toolPaths } from '../../framework/tool-paths';

/** What the server's configuration sets for transit mounts. */
export interface TransitSettings {
  /** Estimated CPU one batch request may take (TRANSIT_BATCH_CPU_BUDGET_MS). */
  batchBudgetMs?: number;
  /** Managed keys (sys/managed-keys), for keys of type managed_key. */
  managedKeys?: ManagedKeyAccess;
}

export function transitBackend(_options: Record<string, string> | null = null, settings: TransitSettings = {}): Backend {
  const budgetMs = settings.batchBudgetMs ?? DEFAULT_BATCH_CPU_BUDGET_MS;
  return {
    type: 'transit',
    paths: [
      ...keyPaths(settings.managedKeys),
      ...encryptPaths(budgetMs, settings.managedKeys),
      ...hmacPaths(budgetMs),
      ...signPaths(budgetMs, settings.managedKeys),
      ...keysConfigPaths(),
      ...toolPaths(),
      ...exportPaths(),
      ...importPaths(),
      ...backupPaths(),
      ...certificatePaths(),
    ],
    // The wrapping key is made on its first read; a backup records backup_info on the key.
    writingReadPaths: ['wrapping_key', 'backup/*'],
    // Writes that only compute: they run beside the mount's other requests, not in turn with them,
    // so a long batch does not hold up the rest (encrypt is not here: it may create its key).
    storageFreeWritePaths: ['decrypt/*', 'rewrap/*', 'datakey/*', 'sign/*', 'verify/*', 'hmac/*', 'hash', 'hash/*', 'random', 'random/*'],
    // The crypto of a hot key runs in the Worker, on the key as the mount's object confirms it
    // (an encrypt that creates its key is finished in the object).
    offloadPaths: ['encrypt/*', 'decrypt/*', 'rewrap/*', 'datakey/*', 'sign/*', 'verify/*', 'hmac/*'],
    offloadCost: transitOffloadCost,
    periodic: rotateDue,
  };
}
