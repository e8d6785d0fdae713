// sys/tools/random and sys/tools/hash: the same tools transit serves under its mount, defined
// once in the framework.

import type { PathDef } from '../../framework/backend';
import { toolPaths } from '../../framework/tool-paths';

export const sysToolPaths = (): PathDef[] => toolPaths('tools/');
