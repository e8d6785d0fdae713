// The `units` import: byte multiples in base 2, as HashiCorp documents them (a kilobyte is 1024
// bytes). Only the documented five; they are ints, so `units.gigabyte * 4` stays exact.

import { NativeObject } from './native';

const KILOBYTE = 1024n;

export function unitsImport(): NativeObject {
  return new NativeObject(
    'units',
    {
      kilobyte: () => KILOBYTE,
      megabyte: () => KILOBYTE ** 2n,
      gigabyte: () => KILOBYTE ** 3n,
      terabyte: () => KILOBYTE ** 4n,
      petabyte: () => KILOBYTE ** 5n,
    },
    {},
  );
}
