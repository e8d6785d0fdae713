// JSON merge patch (RFC 7386): objects merge key by key, null removes a key, anything else
// replaces. Keys are defined, never assigned, so a "__proto__" key is data like any other.

import { isExactNumber } from '../../../framework/json-numbers';

/** A JSON object (a number kept exact is a scalar, though held in an object). */
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v) && !isExactNumber(v);

function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return patch;
  const out: Record<string, unknown> = {};
  if (isObject(target)) for (const [k, v] of Object.entries(target)) setOwn(out, k, v);
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else setOwn(out, k, mergePatch(Object.prototype.hasOwnProperty.call(out, k) ? out[k] : undefined, v));
  }
  return out;
}
