// The system backend (mounted at sys/).
import type { Backend } from '../framework/backend';
import { toolPaths } from '../framework/tools';
import { auditPaths } from './audit';
import type { SystemServices } from './context';
import { counterPaths } from './counters';
import { leasePaths } from './leases';
import { metricsPaths } from './metrics';
import { mountPaths } from './mounts';
import { capabilityPaths, policyPaths } from './policies';
import { sealPaths } from './seal';
import { SYS_SUDO_PATHS, SYS_UNAUTHENTICATED_PATHS } from './special-paths';
import { uiMountPaths } from './ui-mounts';
import { wrappingPaths } from './wrapping';

export function systemBackend(services: SystemServices): Backend {
  return {
    type: 'system',
    paths: [
      ...sealPaths(services),
      ...mountPaths(services),
      ...policyPaths(services),
      ...capabilityPaths(services),
      ...leasePaths(services),
      ...uiMountPaths(services),
      ...wrappingPaths(services),
      ...auditPaths(services),
      ...metricsPaths(services),
      ...counterPaths(services),
      ...toolPaths('tools/'),
    ],
    unauthenticatedPaths: SYS_UNAUTHENTICATED_PATHS,
    sudoPaths: SYS_SUDO_PATHS,
  };
}
