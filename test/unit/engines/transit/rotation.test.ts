// Automatic rotation as the engine sees it: the backend's periodic work over plain storage, run at
// any time (late alarms, restarts): every overdue key rotates once, nothing early, and it says
// when it wants to run next.
import { describe, expect, it } from 'vitest';
import { dispatch, type Authorizer, type MountContext } from '../../../../src/pipeline/dispatch';
import type { AuthContext, WireOperation } from '../../../../src/framework/backend';
import { MemoryStorage, StorageTransaction } from '../../../../src/framework/storage';
import { transitBackend } from '../../../../src/engines/transit';

const root: AuthContext = { accessor: 'a', policies: ['root'], root: true, displayName: 'root', entityId: '', tokenType: 'service', boundCidrs: [] };
const allowAll: Authorizer = { authorize: () => ({ sudo: true }), grantsCreateAndUpdate: () => true };
const mount: MountContext = { mountPoint: 'transit/', mountType: 'transit', mountAccessor: 'transit_1', mountConfig: { defaultLeaseTTL: 60, maxLeaseTTL: 120 }, mountOptions: {} };
const HOUR = 3_600_000;

function engine() {
  const storage = new MemoryStorage();
  const backend = transitBackend();
  const wakes: number[] = [];
  const call = async (operation: WireOperation, path: string, data: Record<string, unknown> = {}) => {
    const tx = new StorageTransaction(storage);
    const wire = { id: 'r', operation, path: `transit/${path}`, data, auth: root, clientIP: '127.0.0.1', headers: {}, wrapTTL: 0 };
    return dispatch(backend, wire, mount, tx, allowAll, { wakeAt: (at) => wakes.push(at) });
  };
  const periodic = async (now: number) => {
    const tx = new StorageTransaction(storage);
    const next = await backend.periodic!(tx, now);
    await tx.commit();
    return next;
  };
  return { call, periodic, wakes };
}

describe('rotateDue', () => {
  it('rotates each overdue key once, however late it runs, and returns the next due time', async () => {
    const { call, periodic, wakes } = engine();
    const t0 = Date.now();
    await call('write', 'keys/hourly', { auto_rotate_period: '1h' });
    await call('write', 'keys/daily', { auto_rotate_period: '24h' });
    await call('write', 'keys/never');
    expect(wakes.length).toBe(2);
    expect(Math.min(...wakes)).toBeLessThanOrEqual(Date.now() + HOUR);

    expect(await periodic(t0 + 30 * 60_000)).toBeLessThanOrEqual(Date.now() + HOUR);
    expect((await call('read', 'keys/hourly')).data?.latest_version).toBe(1);

    // Three hours late: one rotation, not three; the next is an hour after it.
    const late = t0 + 3 * HOUR;
    const next = await periodic(late);
    expect((await call('read', 'keys/hourly')).data?.latest_version).toBe(2);
    expect((await call('read', 'keys/daily')).data?.latest_version).toBe(1);
    expect((await call('read', 'keys/never')).data?.latest_version).toBe(1);
    expect(next).toBe(late + HOUR);
    // Run again at the same time (a retried alarm): nothing more happens.
    expect(await periodic(late)).toBe(late + HOUR);
    expect((await call('read', 'keys/hourly')).data?.latest_version).toBe(2);

    const dayLater = await periodic(t0 + 25 * HOUR);
    expect((await call('read', 'keys/hourly')).data?.latest_version).toBe(3);
    expect((await call('read', 'keys/daily')).data?.latest_version).toBe(2);
    expect(dayLater).toBe(t0 + 26 * HOUR);
  });

  it('has nothing to schedule without periods; turning one off stops it', async () => {
    const { call, periodic } = engine();
    await call('write', 'keys/k', { auto_rotate_period: '2h' });
    await call('write', 'keys/k/config', { auto_rotate_period: 0 });
    expect(await periodic(Date.now() + 10 * HOUR)).toBeNull();
    expect((await call('read', 'keys/k')).data?.latest_version).toBe(1);
  });
});
