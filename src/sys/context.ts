// What the system backend's handlers operate on (implemented by the SystemObject).
import type { MountService } from '../core/mount-service';
import type { SystemCore } from '../core/system-core';

export interface SystemServices {
  core: SystemCore;
  mounts: MountService;
  /** Seals the whole cluster: the seal state, then every object's cached keys. */
  sealCluster(): Promise<void>;
}
