// The system backend (mounted at sys/).
import type { Backend } from '../framework/backend';
import { auditPaths } from './paths/audit';
import type { SystemServices } from './context';
import { counterPaths } from './paths/internal-counters';
import { leasePaths } from './paths/leases';
import { managedKeyPaths } from './paths/managed-keys';
import { metricsPaths } from './paths/metrics';
import { mountPaths } from './paths/mounts';
import { capabilityPaths } from './paths/capabilities';
import { pluginPaths } from './paths/plugins';
import { policyPaths } from './paths/policies';
import { replicationPaths } from './paths/replication';
import { sealPaths } from './paths/seal';
import { SYS_SUDO_PATHS, SYS_UNAUTHENTICATED_PATHS } from './special-paths';
import { uiMountPaths } from './paths/internal-ui-mounts';
import { sysToolPaths } from './paths/tools';
import { wrappingPaths } from './paths/wrapping';

export function systemBackend(services: SystemServices): Backend {
  return {
    type: 'system',
    paths: [
      ...sealPaths(services),
      ...mountPaths(services),
      ...pluginPaths(services),
      ...policyPaths(services),
      ...replicationPaths(services),
      ...managedKeyPaths(services),
      ...capabilityPaths(services),
      ...leasePaths(services),
      ...uiMountPaths(services),
      ...wrappingPaths(services),
      ...auditPaths(services),
      ...metricsPaths(services),
      ...counterPaths(services),
      ...sysToolPaths(),
    ],
    unauthenticatedPaths: SYS_UNAUTHENTICATED_PATHS,
    sudoPaths: SYS_SUDO_PATHS,
  };
}
