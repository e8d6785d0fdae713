// sys/leases/* as the mount that issued the leases answers it (the SystemObject routes each call
// here by the lease id). Callers hold the mount's write mutex; refusals are thrown.

import { leaseView } from '../src/core/leases/mount-leases';
import type { LogicalResponse } from '../src/framework/backend';
import { badRequest } from '../src/framework/errors';
import type { HostedMount } from './hosted-mount';

export type LeaseCall = (h: HostedMount) => Promise<LogicalResponse>;

export const leaseLookup =
  (id: string): LeaseCall =>
  async (h) => ({ data: leaseView(await h.leases.lookup(id)) });

export const leaseRenew =
  (id: string, increment: number, wakeAt: (at: number) => Promise<void>): LeaseCall =>
  async (h) => {
    const lease = await h.leases.renew(id, increment, h.mount.mountConfig.maxLeaseTTL);
    await wakeAt(lease.expireTime);
    return { leaseId: lease.id, lease: { ttl: Math.round((lease.expireTime - Date.now()) / 1000), renewable: lease.renewable } };
  };

export const leaseRevoke =
  (id: string, force: boolean): LeaseCall =>
  async (h) => {
    await h.leases.revoke(id, force);
    return {};
  };

export const leaseRevokePrefix =
  (prefix: string, force: boolean): LeaseCall =>
  async (h) => {
    const { failed } = await h.leases.revokePrefix(prefix, force);
    if (failed.length > 0) throw badRequest(`failed to revoke ${failed.length} lease(s) (will retry): ${failed.slice(0, 5).join(', ')}`);
    return {};
  };

export const leaseList =
  (prefix: string): LeaseCall =>
  async (h) => ({ data: { keys: await h.leases.list(prefix) } });

export const leaseIrrevocable: LeaseCall = async (h) => ({
  data: { leases: (await h.leases.irrevocable()).map((l) => ({ lease_id: l.id, error: l.revoking?.lastError ?? '' })) },
});
