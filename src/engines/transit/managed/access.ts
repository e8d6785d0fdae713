// The managed keys one transit request uses. A managed_key key stores only each version's managed
// key UUID: every use resolves it again, so that removing the key from the mount's
// allowed_managed_keys, deleting it or taking a usage away applies at once.

import type { LogicalRequest } from '../../../framework/backend';
import { badRequest, CofferError } from '../../../framework/errors';
import type { ManagedKeyAccess, ResolvedManagedKey } from '../../../managed-keys/access';
import { assertUsage } from '../../../managed-keys/guard';
import type { ManagedKeyRef } from '../../../managed-keys/resolve';
import type { KeyUsage } from '../../../managed-keys/types';
import type { KeyVersion, ManagedVersion } from '../policy';

export const NOT_AVAILABLE = 'managed keys are not available on this server';

export interface ManagedUse {
  /** Whether this server gives transit managed keys at all. */
  available: boolean;
  /** The key `ref` names, if this mount may use it (400 otherwise, or without managed keys here). */
  byRef(ref: ManagedKeyRef): Promise<ResolvedManagedKey>;
  /** A version's managed key, refused unless its usages include `usage`. */
  forVersion(v: ManagedVersion, usage: KeyUsage): Promise<ResolvedManagedKey>;
  /** A version's managed key for display; null when it cannot be resolved (deleted, not allowed). */
  lookup(id: string): Promise<ResolvedManagedKey | null>;
}

/** The managed keys `req` may use (its mount's allowed_managed_keys, and keys with any_mount). */
export function managedUse(access: ManagedKeyAccess | undefined, req: LogicalRequest): ManagedUse {
  const allowed = req.mountAllowedManagedKeys ?? [];
  // Per request: a batch resolves each managed key once (values only: a failure is not kept).
  const byId = new Map<string, ResolvedManagedKey>();
  const byRef = async (ref: ManagedKeyRef): Promise<ResolvedManagedKey> => {
    if (!access) throw badRequest(NOT_AVAILABLE);
    if (ref.id !== undefined) {
      const hit = byId.get(ref.id);
      if (hit) return hit;
    }
    const found = await access.resolve(ref, allowed);
    byId.set(found.entry.uuid, found);
    return found;
  };
  return {
    available: access !== undefined,
    byRef,
    async forVersion(v, usage) {
      const found = await byRef({ id: v.id });
      assertUsage(found.entry, usage);
      return found;
    },
    async lookup(id) {
      try {
        return await byRef({ id });
      } catch (e) {
        if (e instanceof CofferError && e.status < 500) return null;
        throw e;
      }
    },
  };
}

/** The managed half of a version of a managed_key key. */
export function managedOf(v: KeyVersion): ManagedVersion {
  if (!v.managed) throw badRequest('key version has no managed key');
  return v.managed;
}
