// The `identity` import: the caller's entity and its groups (direct and inherited), as the
// identity store's SentinelIdentity gives them. Each half is converted only when a policy reads it.

import { fromJSON, SMap, UNDEFINED, type SObject, type Value } from '../values';
import type { SentinelIdentity } from '../../identity/types';
import { attrTable, LazyObject, smap } from './misc';

/** by_id and by_name share each group's map; names and ids keep the groups' order. */
function groups(identity: SentinelIdentity | null): SMap {
  const byId = new SMap();
  const byName = new SMap();
  const names: Value[] = [];
  const ids: Value[] = [];
  for (const g of identity?.groups ?? []) {
    const m = fromJSON(g);
    byId.set(g.id, m);
    byName.set(g.name, m);
    ids.push(g.id);
    names.push(g.name);
  }
  return smap({ by_id: byId, by_name: byName, names, ids });
}

const IDENTITY = attrTable<SentinelIdentity | null>({
  entity: (i) => (i ? fromJSON(i.entity) : UNDEFINED),
  groups,
});

export function identityImport(identity: SentinelIdentity | null): SObject {
  return new LazyObject('identity', IDENTITY, identity);
}
