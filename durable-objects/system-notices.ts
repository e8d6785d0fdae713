// How the SystemObject tells the cluster's other objects about a change (drop keys, drop compiled
// policies, re-read audit devices), retrying from its alarm until each one has heard.

import { fromUtf8, utf8 } from '../src/crypto/encoding';
import { LOCAL_KEY_PREFIX } from '../src/framework/storage';
import type { Env } from '../src/rpc/env';
import { auditStub, mountStub, tokenShardStub } from '../src/rpc/stubs';
import type { SqlPhysical } from './sqlite-physical';

/**
 * Objects still to be notified: raw (not behind the barrier), because the list must be readable
 * after the seal. It holds only object names, nothing secret.
 */
const PENDING_DROPS_KEY = `${LOCAL_KEY_PREFIX}pending-key-drops`;
const RETRY_MS = 1000;

/** Objects told about changes: token shards, mounts, and (for dropKeys only) audit devices. */
export type Target = { shard: number } | { mount: string } | { audit: string };
/** What to tell it: drop cached keys (seal, rotation), drop compiled policies, re-read audit devices, drop managed key entries (mounts only). */
export type Message = 'dropKeys' | 'policiesChanged' | 'auditChanged' | 'managedKeysChanged';
type Pending = Target & { message: Message };

export class Notices {
  readonly #physical: SqlPhysical;
  readonly #env: Env;
  readonly #retryAt: (at: number) => Promise<void>;

  constructor(physical: SqlPhysical, env: Env, retryAt: (at: number) => Promise<void>) {
    this.#physical = physical;
    this.#env = env;
    this.#retryAt = retryAt;
  }

  #pending(): Pending[] {
    const raw = this.#physical.get(PENDING_DROPS_KEY);
    return raw ? (JSON.parse(fromUtf8(raw)) as Pending[]) : [];
  }

  /** Notifies every target (and those still pending); the ones that fail are retried from the alarm. */
  async send(targets: Target[], message: Message | null): Promise<void> {
    const all = [...this.#pending(), ...(message ? targets.map((t) => ({ ...t, message })) : [])];
    this.#physical.apply([{ key: PENDING_DROPS_KEY, value: utf8(JSON.stringify(all)) }]);
    const results = await Promise.allSettled(
      all.map((t) => {
        if ('audit' in t) return auditStub(this.#env, t.audit).dropKeys();
        if ('mount' in t && t.message === 'managedKeysChanged') return mountStub(this.#env, t.mount).managedKeysChanged();
        const stub = 'shard' in t ? tokenShardStub(this.#env, t.shard) : mountStub(this.#env, t.mount);
        if (t.message === 'auditChanged') return stub.auditChanged();
        return t.message === 'policiesChanged' ? stub.policiesChanged() : stub.dropKeys();
      }),
    );
    const failed = all.filter((_, i) => results[i].status === 'rejected');
    this.#physical.apply([{ key: PENDING_DROPS_KEY, value: failed.length ? utf8(JSON.stringify(failed)) : null }]);
    if (failed.length > 0) {
      console.error(`${failed.length} object(s) could not be notified; retrying`);
      await this.#retryAt(Date.now() + RETRY_MS);
    }
  }

  /** From the alarm: tries the pending ones again. */
  retry(): Promise<void> {
    return this.send([], null);
  }
}
