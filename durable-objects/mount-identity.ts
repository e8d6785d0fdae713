// What the MountObject hosting the identity mount answers other objects: entity views for their
// ACL caches and the entity behind a login's alias; and the notice it gives the SystemObject
// after a change existing tokens must see.

import type { IdentityLoginInput, IdentityView } from '../src/core/identity/types';
import type { Mutex } from '../src/core/mutex';
import { clearNotice, identityLogin, identityViews, pendingNotice } from '../src/engines/identity';
import { CofferError } from '../src/framework/errors';
import { prefixedTransaction, PrefixedStorage, type Storage } from '../src/framework/storage';
import type { BarrierStorage } from '../src/core/barrier/barrier';
import { errorReply } from '../src/pipeline/result';
import type { IdentityLoginReply } from '../src/rpc/contracts';
import { LOGICAL_PREFIX, type HostedMount } from './hosted-mount';

/** The identity mount's host; throws when this object hosts another mount (or is sealed: 503). */
type IdentityHost = () => Promise<HostedMount>;

/** Entity views by id; null while sealed. */
export async function identityViewsOn(host: IdentityHost, ids: string[]): Promise<Record<string, IdentityView | null> | null> {
  try {
    return await identityViews((await host()).engineStorage, ids);
  } catch (e) {
    if (e instanceof CofferError && e.status === 503) return null;
    throw e;
  }
}

/**
 * The entity behind a login's alias (created when new), in one transaction. Most logins change
 * nothing (a known alias with the same metadata and groups): those are answered from a look that
 * writes nothing, without waiting for the writes. Any other one, or a failed look, runs again,
 * serialised and committed, and is announced.
 */
export async function identityLoginOn(host: IdentityHost, writes: Mutex, announce: () => Promise<void>, input: IdentityLoginInput): Promise<IdentityLoginReply> {
  try {
    const look = (await host()).barrier.transaction();
    const result = await identityLogin(prefixedTransaction(look, LOGICAL_PREFIX), input);
    if (!look.dirty) return { ok: true, result };
  } catch {
    // Answered by the serialised run.
  }
  return writes.run(async () => {
    try {
      const tx = (await host()).barrier.transaction();
      const result = await identityLogin(prefixedTransaction(tx, LOGICAL_PREFIX), input);
      await tx.commit();
      await announce();
      return { ok: true, result };
    } catch (e) {
      return errorReply(e, 'identity mount unavailable');
    }
  });
}

/** Tells the SystemObject about a committed identity change; on failure, retries from the alarm. */
export async function announceIdentityChange(barrier: BarrierStorage, tell: () => Promise<void>, wakeAt: (at: number) => Promise<void>): Promise<void> {
  const storage: Storage = new PrefixedStorage(barrier, LOGICAL_PREFIX);
  try {
    const nonce = await pendingNotice(storage);
    if (!nonce) return;
    await tell();
    await clearNotice(storage, nonce);
  } catch (e) {
    console.error('could not announce an identity change; will retry', e);
    await wakeAt(Date.now() + 1000);
  }
}
