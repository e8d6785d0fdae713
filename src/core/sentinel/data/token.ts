// The `token` import: the calling token. Unauthenticated requests (logins, for one) have no
// token, and then every attribute is undefined, so `token.policies else []` and
// `token.creation_time is defined` are how a policy tells.

import { parseRFC3339 } from '../imports/time';
import { UNDEFINED, fromJSON, type SObject, type Value } from '../values';
import type { AuthContext } from '../../../framework/backend';
import { attrTable, LazyObject, nanos, rootNamespace, seconds, type Attr } from './misc';

/** An attribute of a present token; absent token: undefined. */
const of = (f: (a: AuthContext) => Value | undefined): Attr<AuthContext | null> => (a) => (a ? (f(a) ?? UNDEFINED) : UNDEFINED);

function unixSeconds(issueTime: string | undefined): Value {
  if (issueTime === undefined) return UNDEFINED;
  const t = parseRFC3339(issueTime);
  return typeof t === 'string' ? UNDEFINED : t.get('unix');
}

const TOKEN = attrTable<AuthContext | null>({
  creation_time: of((a) => a.issueTime),
  creation_time_unix: of((a) => unixSeconds(a.issueTime)),
  creation_ttl: of((a) => nanos(a.ttl)),
  creation_ttl_seconds: of((a) => seconds(a.ttl)),
  display_name: of((a) => a.displayName),
  entity_id: of((a) => a.entityId),
  explicit_max_ttl: of((a) => nanos(a.explicitMaxTtl)),
  explicit_max_ttl_seconds: of((a) => seconds(a.explicitMaxTtl)),
  metadata: of((a) => fromJSON(a.metadata ?? {})),
  num_uses: of((a) => seconds(a.numUses)),
  path: of((a) => a.tokenPath),
  period: of((a) => nanos(a.period)),
  period_seconds: of((a) => seconds(a.period)),
  // A copy: append() changes lists in place, and this one is the token's own.
  policies: of((a) => [...a.policies]),
  role: of((a) => a.role),
  type: of((a) => a.tokenType),
  namespace: of(rootNamespace),
});

export function tokenImport(auth: AuthContext | null): SObject {
  return new LazyObject('token', TOKEN, auth);
}
