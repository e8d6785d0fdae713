// Views of the entities behind the tokens an object sees (their identity policies, whether they
// are disabled, their template values), fetched from the identity mount's object. An identity
// change makes the SystemObject tell every object to clear this cache (with the compiled ACLs);
// entries are also re-fetched after a minute, bounding what a missed message could leave behind.

import { sealedError } from '../../framework/errors';
import type { IdentityView } from './types';

export type { IdentityView } from './types';

/** Views by entity id (null: no such entity); null altogether while the cluster is sealed. */
export type IdentityViewFetch = (ids: string[]) => Promise<Record<string, IdentityView | null> | null>;

const MAX_AGE_MS = 60_000;
const LIMIT = 1_000;

export class IdentityCache {
  private readonly views = new Map<string, { view: IdentityView | null; at: number }>();
  private readonly inflight = new Map<string, Promise<IdentityView | null>>();
  /** Bumped by clear(): a fetch that started before a clear may carry stale data and is not kept. */
  private generation = 0;

  constructor(private readonly fetch: IdentityViewFetch) {}

  /** The entity's view, or null when the entity does not exist. */
  async viewOf(entityId: string, now = Date.now()): Promise<IdentityView | null> {
    const hit = this.views.get(entityId);
    if (hit && now - hit.at < MAX_AGE_MS) return hit.view;
    let pending = this.inflight.get(entityId);
    if (!pending) {
      const generation = this.generation;
      pending = this.fetch([entityId])
        .then((views) => {
          if (!views) throw sealedError();
          const view = views[entityId] ?? null;
          if (generation === this.generation) {
            if (this.views.size >= LIMIT) this.views.delete(this.views.keys().next().value!);
            this.views.set(entityId, { view, at: now });
          }
          return view;
        })
        .finally(() => {
          if (this.inflight.get(entityId) === pending) this.inflight.delete(entityId);
        });
      this.inflight.set(entityId, pending);
    }
    return pending;
  }

  clear(): void {
    this.generation++;
    this.views.clear();
    this.inflight.clear();
  }
}
