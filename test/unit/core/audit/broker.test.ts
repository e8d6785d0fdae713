// The broker of a hosting object: the cached device list, fan-out, and fail-closed outcomes.
import { describe, expect, it } from 'vitest';
import { AuditBroker, type AuditDeviceRef } from '../../../../src/core/audit/broker';
import type { AuditInput } from '../../../../src/core/audit/entry';

const entry: AuditInput = {
  type: 'request',
  auth: null,
  request: { id: '1', operation: 'read', mountPoint: 'sys/', mountType: 'system', mountAccessor: '', clientToken: '', clientTokenAccessor: '', path: 'sys/x', data: null, remoteAddress: '', wrapTTL: 0 },
  nonHMACRequestKeys: [],
  nonHMACResponseKeys: [],
};

/** Devices by uuid with what each does with an entry. */
function ports(behaviour: Record<string, 'ok' | 'fail' | 'gone'>) {
  const calls = { devices: 0, sends: [] as string[] };
  let list: AuditDeviceRef[] | null = Object.keys(behaviour).map((uuid) => ({ uuid, path: `${uuid}/` }));
  return {
    calls,
    setList: (l: AuditDeviceRef[] | null) => (list = l),
    ports: {
      devices: async () => {
        calls.devices++;
        return list;
      },
      send: async (d: AuditDeviceRef) => {
        calls.sends.push(d.uuid);
        const b = behaviour[d.uuid];
        if (b === 'fail') throw new Error(`${d.uuid} is down`);
        return b === 'gone' ? ('gone' as const) : ('recorded' as const);
      },
    },
  };
}

describe('the audit broker', () => {
  it('with no devices, reads the list once and then costs nothing per request', async () => {
    const p = ports({});
    const broker = new AuditBroker(p.ports);
    for (let i = 0; i < 50; i++) expect(await broker.log(entry)).toBe('none');
    expect(p.calls.devices).toBe(1);
    expect(p.calls.sends).toEqual([]);
  });

  it('re-reads the list after invalidate() and after the maximum age', async () => {
    let now = 0;
    const p = ports({});
    const broker = new AuditBroker(p.ports, 60_000, () => now);
    await broker.log(entry);
    broker.invalidate();
    await broker.log(entry);
    expect(p.calls.devices).toBe(2);
    now = 59_999;
    await broker.log(entry);
    expect(p.calls.devices).toBe(2);
    now = 60_001;
    await broker.log(entry);
    expect(p.calls.devices).toBe(3);
  });

  it('shares one read between concurrent requests', async () => {
    const p = ports({});
    const broker = new AuditBroker(p.ports);
    await Promise.all(Array.from({ length: 10 }, () => broker.log(entry)));
    expect(p.calls.devices).toBe(1);
  });

  it('does not cache while sealed (the list is null)', async () => {
    const p = ports({});
    p.setList(null);
    const broker = new AuditBroker(p.ports);
    expect(await broker.log(entry)).toBe('none');
    await broker.log(entry);
    expect(p.calls.devices).toBe(2);
  });

  it('records when at least one device recorded, fails when every device failed', async () => {
    expect(await new AuditBroker(ports({ a: 'ok', b: 'fail' }).ports).log(entry)).toBe('recorded');
    expect(await new AuditBroker(ports({ a: 'fail', b: 'fail' }).ports).log(entry)).toBe('failed');
    expect(await new AuditBroker(ports({ a: 'fail' }).ports).log(entry)).toBe('failed');
  });

  it('sends every entry to every device', async () => {
    const p = ports({ a: 'ok', b: 'ok' });
    await new AuditBroker(p.ports).log(entry);
    expect(p.calls.sends.sort()).toEqual(['a', 'b']);
  });

  it('ignores devices disabled since the list was read, and re-reads the list', async () => {
    const p = ports({ a: 'gone' });
    const broker = new AuditBroker(p.ports);
    expect(await broker.log(entry)).toBe('none');
    expect(await new AuditBroker(ports({ a: 'gone', b: 'fail' }).ports).log(entry)).toBe('failed');
    p.setList([]);
    await broker.log(entry);
    expect(p.calls.devices).toBe(2);
  });

  it('fails closed when the device list cannot be read', async () => {
    const broker = new AuditBroker({
      devices: async () => {
        throw new Error('system object unreachable');
      },
      send: async () => 'recorded',
    });
    expect(await broker.log(entry)).toBe('failed');
  });
});
