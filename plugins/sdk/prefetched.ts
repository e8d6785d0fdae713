// The plugin's side of PathDef.prefetch (src/core/plugins/prefetch.ts): the call's storage answers
// the keys the host read ahead from the values that came with the request, until the call writes
// them; every other read, and every write, goes to the host as before.

import type { PluginRequest, PluginStorage } from '../../src/core/plugins/contract';

export function withPrefetched(cap: PluginStorage, prefetched: PluginRequest['prefetched']): PluginStorage {
  if (!prefetched || prefetched.length === 0) return cap;
  const known = new Map(prefetched);
  return {
    get(key) {
      const value = known.get(key);
      if (value === undefined) return cap.get(key);
      // A copy, as every read from the host is: a handler that changes the bytes changes no later read.
      return Promise.resolve(value && value.slice());
    },
    put(key, value) {
      known.delete(key);
      return cap.put(key, value);
    },
    delete(key) {
      known.delete(key);
      return cap.delete(key);
    },
    list: (prefix) => cap.list(prefix),
    scan: (prefix, after, limit) => cap.scan(prefix, after, limit),
    log: (level, message) => cap.log(level, message),
  };
}
