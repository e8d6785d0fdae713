// Compiled ACLs for the policy sets of the tokens an object sees. Policy texts come from the
// SystemObject; a policy change makes it tell every object to clear this cache (and entries are
// re-fetched after a minute anyway, bounding what a missed message could leave behind).
// With an IdentityCache, a token's entity adds its identity policies and template values, and a
// disabled (or deleted) entity makes the token unusable, as in Vault.

import type { AuthContext } from '../../framework/backend';
import { permissionDenied, sealedError } from '../../framework/errors';
import { ACL } from './acl';
import { parsePolicy, type Policy } from './policy';
import type { IdentityCache, IdentityView } from '../identity/cache';
import { Governor, type GoverningFetch } from '../sentinel/governing';

const MAX_AGE_MS = 60_000;
const LIMIT = 1_000;

/** Policy texts by name (null: no such policy); null altogether while the cluster is sealed. */
export type PolicyFetch = (names: string[]) => Promise<Record<string, string | null> | null>;

export interface AclCacheOptions {
  /** Makes ACLs identity-aware: entity and group policies, templates, disabled entities. */
  identity?: IdentityCache;
  /** Makes the cache enforce RGPs and EGPs too: the cluster's set, fetched and compiled here. */
  governing?: GoverningFetch;
}

export interface Compiled {
  acl: ACL;
  identityPolicies: string[];
  /** The caller's entity as the ACL saw it (null: none, or no identity store). */
  view: IdentityView | null;
}

/** A compiled ACL's key: the token's policies, and its entity when the ACL saw one. */
const aclKey = (auth: AuthContext, view: IdentityView | null): string => `${view ? auth.entityId : ''}\n${auth.policies.join('\n')}`;

export class AclCache {
  /** `view` is the entity view the ACL was compiled with (a newer view means recompiling). */
  private readonly acls = new Map<string, Compiled & { at: number }>();
  private readonly identity: IdentityCache | undefined;
  /** RGPs and EGPs (null: this object enforces none, e.g. in tests of ACLs alone). */
  readonly governor: Governor | null;
  private generation = 0;

  constructor(
    private readonly fetch: PolicyFetch,
    options: AclCacheOptions = {},
  ) {
    this.identity = options.identity;
    this.governor = options.governing ? new Governor(options.governing) : null;
  }

  /** The ACL of a caller: its token's policies (a policy that does not exist grants nothing), and its entity's. */
  async aclFor(auth: AuthContext, now = Date.now()): Promise<ACL> {
    return (await this.compiledFor(auth, now)).acl;
  }

  /**
   * What compiledFor would answer, when that needs no wait: a caller without an entity (or no
   * identity store here) whose ACL is compiled. Undefined otherwise.
   */
  compiledNow(auth: AuthContext, now = Date.now()): Compiled | undefined {
    if (auth.entityId && this.identity) return undefined;
    return this.#hit(aclKey(auth, null), null, now);
  }

  #hit(key: string, view: IdentityView | null, now: number): Compiled | undefined {
    const hit = this.acls.get(key);
    return hit && now - hit.at < MAX_AGE_MS && hit.view === view ? hit : undefined;
  }

  /** The ACL and the policies the caller's entity added to its token's (audit entries show them). */
  async compiledFor(auth: AuthContext, now = Date.now()): Promise<Compiled> {
    const generation = this.generation;
    let view: IdentityView | null = null;
    if (auth.entityId && this.identity) {
      view = await this.identity.viewOf(auth.entityId, now);
      // Vault refuses tokens whose entity is disabled or no longer exists.
      if (!view || view.disabled) throw permissionDenied();
    }
    const key = aclKey(auth, view);
    const hit = this.#hit(key, view, now);
    if (hit) return hit;
    // Identity policies never include root, whatever the identity store holds.
    const extra = (view?.policies ?? []).filter((p) => p.toLowerCase() !== 'root' && !auth.policies.includes(p));
    const names = [...auth.policies, ...extra];
    const texts = await this.fetch(names);
    if (!texts) throw sealedError();
    const policies: Policy[] = [];
    for (const name of names) {
      const text = texts[name];
      if (name === 'root' && auth.policies.includes('root')) policies.push({ name: 'root', rules: [], templated: false });
      else if (text) policies.push(parsePolicy(name, text));
    }
    const acl = ACL.compile(policies, view?.context);
    if (generation === this.generation) {
      if (this.acls.size >= LIMIT) this.acls.delete(this.acls.keys().next().value!);
      this.acls.set(key, { acl, identityPolicies: extra, at: now, view });
    }
    return { acl, identityPolicies: extra, view };
  }

  /** Drops compiled ACLs, the entity views they were built from, and the governing policies. */
  clear(): void {
    this.generation++;
    this.acls.clear();
    this.identity?.clear();
    this.governor?.clear();
  }
}
