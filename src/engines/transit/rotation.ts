// Automatic rotation: the Mount DO's alarm runs this; keys whose latest version is older than
// their auto_rotate_period get a new version. Idempotent: a key rotated once is not due again.

import type { Storage } from '../../framework/storage';
import { rotated } from './paths/keys';
import { listPolicies, loadPolicy, savePolicy } from './store';

/** Rotates every due key; returns when the next one is due (ms), or null. */
export async function rotateDue(storage: Storage, now: number): Promise<number | null> {
  let next: number | null = null;
  for (const name of await listPolicies(storage)) {
    if (name.endsWith('/')) continue;
    let p = await loadPolicy(storage, name);
    // managed_key keys refuse auto_rotate_period: their rotation needs the mount's managed keys.
    if (!p || p.autoRotatePeriod <= 0 || (p.imported && !p.allowRotation) || p.type === 'managed_key') continue;
    const period = p.autoRotatePeriod * 1000;
    const latest = p.versions.get(p.latestVersion);
    if (latest && latest.created + period <= now) {
      p = await rotated(p, now);
      await savePolicy(storage, p);
    }
    const due = (p.versions.get(p.latestVersion)?.created ?? now) + period;
    next = next === null ? due : Math.min(next, due);
  }
  return next;
}
