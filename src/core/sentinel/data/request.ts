// The `request` import: what is being asked, by whom from where. `data` is converted only when a
// policy reads it (bodies can be large, and most policies look at the path alone).

import { fromJSON, type SObject } from '../values';
import type { RequestFacts } from './facts';
import { attrTable, LazyObject, nanos, seconds, smap } from './misc';

/** Coffer has no replication yet; both the current (`dr.mode`) and the older (`mode.dr`) shape. */
const replication = () =>
  smap({
    dr: smap({ mode: 'disabled' }),
    performance: smap({ mode: 'disabled' }),
    mode: smap({ dr: 'disabled', replication: 'disabled' }),
  });

const REQUEST = attrTable<RequestFacts>({
  path: (r) => r.path,
  operation: (r) => r.operation,
  data: (r) => fromJSON(r.data ?? {}),
  connection: (r) => smap({ remote_addr: r.remoteAddr }),
  policy_override: (r) => r.policyOverride,
  unauthenticated: (r) => r.unauthenticated,
  wrapping: (r) => smap({ ttl: nanos(r.wrapTTL || 0), ttl_seconds: seconds(r.wrapTTL || 0) }),
  replication,
});

export function requestImport(facts: RequestFacts): SObject {
  return new LazyObject('request', REQUEST, facts);
}
