// Sentinel's standard imports, as SObjects the evaluator hands to `import "<name>"`: strings,
// time, sockaddr and units. (decimal is not built yet: its documented API includes exp, ln,
// log10, sqrt and power at 100-digit precision, which is a project of its own.)

import type { SObject } from '../values';
import { sockaddrImport } from './sockaddr';
import { stringsImport } from './strings';
import { timeImport } from './time';
import { unitsImport } from './units';

export { goFloatString } from './strings';
export { parseIPBlock, blockContains, type IPBlock } from './sockaddr';
export { Timespace, parseRFC3339 } from './time';
export { NativeObject } from './native';

/**
 * The standard imports by name. `now` is the clock time.now reads, in milliseconds since the
 * epoch; give it the run's fixed start instant so that every read in one run agrees.
 */
export function standardImports(now: () => number): Record<string, SObject> {
  // No prototype: a lookup of `import "constructor"` must find nothing.
  const byName: Record<string, SObject> = Object.create(null);
  byName.strings = stringsImport();
  byName.time = timeImport(now);
  byName.sockaddr = sockaddrImport();
  byName.units = unitsImport();
  return byName;
}
