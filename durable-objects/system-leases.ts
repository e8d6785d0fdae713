// sys/leases/*: leases live with the mount objects that issued them; the SystemObject finds the
// one a lease id (or prefix) belongs to and asks it, or asks every one (irrevocable, tidy).

import { findRoute, type RouteEntry } from '../src/core/mounts/table';
import type { LogicalResponse } from '../src/framework/backend';
import { badRequest, CofferError } from '../src/framework/errors';
import type { WireResult } from '../src/pipeline/result';
import type { Env } from '../src/rpc/env';
import { mountStub } from '../src/rpc/stubs';
import { backendType } from '../src/registry';
import type { LeaseOp } from '../src/sys/context';

const unwrap = (r: WireResult): LogicalResponse => {
  if (r.kind === 'ok') return r.response;
  if (r.kind === 'error') throw new CofferError(r.status, r.errors, r.extra);
  throw badRequest('invalid lease');
};

export async function leaseCall(env: Env, routes: RouteEntry[], op: LeaseOp): Promise<LogicalResponse> {
  const objects = routes.filter((r) => backendType(r.type)?.ownObject);
  if (op.op === 'irrevocable') {
    const all = await Promise.all(objects.map(async (r) => unwrap(await mountStub(env, r.uuid).leaseIrrevocable()).data?.leases as unknown[]));
    const leases = all.flat();
    return { data: { leases, lease_count: leases.length } };
  }
  if (op.op === 'tidy') {
    await Promise.all(objects.map((r) => mountStub(env, r.uuid).leaseTidy()));
    return {};
  }
  const target = op.op === 'revoke-prefix' || op.op === 'list' ? op.prefix : op.id;
  const route = findRoute(objects, target);
  if (!route) {
    if (op.op === 'revoke-prefix') return {};
    if (op.op === 'list') return { data: { keys: [] } };
    throw badRequest('invalid lease');
  }
  const stub = mountStub(env, route.uuid);
  switch (op.op) {
    case 'lookup':
      return unwrap(await stub.leaseLookup(op.id));
    case 'renew':
      return unwrap(await stub.leaseRenew(op.id, op.increment));
    case 'revoke':
      return unwrap(await stub.leaseRevoke(op.id, op.force));
    case 'revoke-prefix':
      return unwrap(await stub.leaseRevokePrefix(op.prefix, op.force));
    case 'list':
      return unwrap(await stub.leaseList(op.prefix));
  }
}
