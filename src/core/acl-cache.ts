// Compiled ACLs for the policy sets of the tokens an object sees. Policy texts come from the
// SystemObject; a policy change makes it tell every object to clear this cache (and entries are
// re-fetched after a minute anyway, bounding what a missed message could leave behind).

import type { AuthContext } from '../framework/backend';
import { sealedError } from '../framework/errors';
import { ACL } from './acl/acl';
import { parsePolicy, type Policy } from './acl/policy';

const MAX_AGE_MS = 60_000;
const LIMIT = 1_000;

/** Policy texts by name (null: no such policy); null altogether while the cluster is sealed. */
export type PolicyFetch = (names: string[]) => Promise<Record<string, string | null> | null>;

export class AclCache {
  private readonly acls = new Map<string, { acl: ACL; at: number }>();

  constructor(private readonly fetch: PolicyFetch) {}

  /** The ACL of a caller: its token's policies (a policy that does not exist grants nothing). */
  async aclFor(auth: AuthContext, now = Date.now()): Promise<ACL> {
    const key = auth.policies.join('\n');
    const hit = this.acls.get(key);
    if (hit && now - hit.at < MAX_AGE_MS) return hit.acl;
    const texts = await this.fetch(auth.policies);
    if (!texts) throw sealedError();
    const policies: Policy[] = [];
    for (const name of auth.policies) {
      const text = texts[name];
      if (name === 'root') policies.push({ name: 'root', rules: [], templated: false });
      else if (text) policies.push(parsePolicy(name, text));
    }
    const acl = ACL.compile(policies);
    if (this.acls.size >= LIMIT) this.acls.delete(this.acls.keys().next().value!);
    this.acls.set(key, { acl, at: now });
    return acl;
  }

  clear(): void {
    this.acls.clear();
  }
}
