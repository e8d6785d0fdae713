// The transit secrets engine: encryption as a service (reference §6). Keys live in one record
// each (policy.ts, store.ts); every change of a mount's keys runs inside its Mount DO, so a
// rotation and an encrypt never interleave mid-write.

import type { Backend } from '../../framework/backend';
import { backupPaths } from './backup';
import { certificatePaths } from './certificates';
import { encryptPaths } from './encrypt';
import { exportPaths } from './export';
import { hmacPaths } from './hmac';
import { importPaths } from './import';
import { keyPaths } from './keys';
import { keysConfigPaths } from './keys-config';
import { rotateDue } from './rotation';
import { signPaths } from './sign';
import { toolPaths } from '../../framework/tools';

export function transitBackend(): Backend {
  return {
    type: 'transit',
    paths: [
      ...keyPaths(),
      ...encryptPaths(),
      ...hmacPaths(),
      ...signPaths(),
      ...keysConfigPaths(),
      ...toolPaths(),
      ...exportPaths(),
      ...importPaths(),
      ...backupPaths(),
      ...certificatePaths(),
    ],
    // The wrapping key is made on its first read; a backup records backup_info on the key.
    writingReadPaths: ['wrapping_key', 'backup/*'],
    periodic: rotateDue,
  };
}
