// One audit device over storage: salt, chain head, delivery, and what a restart keeps.
import { describe, expect, it } from 'vitest';
import { AuditDevice, type DeviceOutputs } from '../../../../src/core/audit/device';
import type { AuditInput } from '../../../../src/core/audit/entry';
import { parseDeviceOptions } from '../../../../src/core/audit/options';
import { verifyLog } from '../../../../src/core/audit/verify-chain.mjs';
import { MemoryStorage } from '../../../../src/framework/storage';

const UUID = '33333333-3333-4333-8333-333333333333';

const input = (path: string, type: AuditInput['type'] = 'request'): AuditInput => ({
  type,
  auth: null,
  request: { id: path, operation: 'read', mountPoint: 'secret/', mountType: 'kv', mountAccessor: 'kv_1', clientToken: 'hvs.t', clientTokenAccessor: 'a', path, data: { secret: 'shh' }, remoteAddress: '127.0.0.1', wrapTTL: 0 },
  nonHMACRequestKeys: [],
  nonHMACResponseKeys: [],
});

class Outputs implements DeviceOutputs {
  lines: string[] = [];
  posts: { url: string; body: string; contentType: string }[] = [];
  failPosts = false;
  /** What storage held each time the device waited for durability (what a crash then would keep). */
  durableStates: Map<string, Uint8Array>[] = [];
  constructor(private readonly storage?: MemoryStorage) {}
  logLine(line: string) {
    this.lines.push(line);
  }
  async durable() {
    if (this.storage) this.durableStates.push(new Map(this.storage.data));
  }
  async post(url: string, body: string, contentType: string) {
    if (this.failPosts) throw new Error('POST refused');
    this.posts.push({ url, body, contentType });
  }
}

async function fileDevice(options: Record<string, string> = { file_path: 'stdout' }) {
  const storage = new MemoryStorage();
  const out = new Outputs();
  const device = new AuditDevice(storage, out);
  await device.provision(UUID, parseDeviceOptions('file', options).options);
  return { storage, out, device };
}

describe('an audit device', () => {
  it('writes one chained line per entry, with its prefix, and hides values with its salt', async () => {
    const { out, device } = await fileDevice({ file_path: 'stdout', prefix: 'AUDIT ' });
    expect(await device.log(input('secret/a'))).toBe('recorded');
    expect(await device.log(input('secret/a', 'response'))).toBe('recorded');
    expect(out.lines).toHaveLength(2);
    expect(out.lines.every((l) => l.startsWith('AUDIT {'))).toBe(true);
    const first = JSON.parse(out.lines[0].slice('AUDIT '.length));
    expect(first.request.data.secret).toBe(await device.hash('shh'));
    expect(first.request.client_token).toBe(await device.hash('hvs.t'));
    expect(out.lines.join('\n')).not.toContain('shh');
    const report = await verifyLog(out.lines.join('\n'));
    expect(report.ok).toBe(true);
    expect(report.devices[0]).toMatchObject({ device: UUID, firstSeq: 1, lastSeq: 2, head: (await device.head())?.hash });
  });

  it('continues its chain after a restart (the head and salt are in storage)', async () => {
    const { storage, out, device } = await fileDevice();
    await device.log(input('secret/1'));
    const hashBefore = await device.hash('x');
    const restarted = new AuditDevice(storage, out);
    expect(await restarted.hash('x')).toBe(hashBefore);
    await restarted.log(input('secret/2'));
    const report = await verifyLog(out.lines.join('\n'));
    expect(report.ok).toBe(true);
    expect(report.devices[0].lastSeq).toBe(2);
  });

  it('a crash after an entry went out but before its head was stored: the restart sends it again, and the chain verifies', async () => {
    const storage = new MemoryStorage();
    const out = new Outputs(storage);
    const device = new AuditDevice(storage, out);
    await device.provision(UUID, parseDeviceOptions('file', { file_path: 'stdout' }).options);
    await device.log(input('secret/1'));
    await device.log(input('secret/2'));
    // The crash: storage as it was when entry 2 went out (written ahead, head not yet moved).
    const atCrash = new MemoryStorage();
    for (const [k, v] of out.durableStates[1]) atCrash.data.set(k, v);
    const restarted = new AuditDevice(atCrash, out);
    await restarted.log(input('secret/3'));
    expect(out.lines).toHaveLength(4);
    expect(out.lines[2]).toBe(out.lines[1]);
    const report = await verifyLog(out.lines.join('\n'));
    expect(report.ok).toBe(true);
    expect(report.devices[0]).toMatchObject({ lastSeq: 3, count: 3, redelivered: 1 });
    // Nothing pending once it went out again.
    expect(await restarted.head()).toMatchObject({ seq: 3 });
  });

  it('gets a new salt when provisioned again', async () => {
    const { device } = await fileDevice();
    const before = await device.hash('x');
    await device.provision(UUID, parseDeviceOptions('file', { file_path: 'stdout' }).options);
    expect(await device.hash('x')).not.toBe(before);
  });

  it('serialises concurrent entries into one unbroken chain', async () => {
    const { out, device } = await fileDevice();
    await Promise.all(Array.from({ length: 20 }, (_, i) => device.log(input(`secret/${i}`))));
    const report = await verifyLog(out.lines.join('\n'));
    expect(report.ok).toBe(true);
    expect(report.devices[0].count).toBe(20);
  });

  it('writes nothing for file_path=discard', async () => {
    const { out, device } = await fileDevice({ file_path: 'discard' });
    expect(await device.log(input('secret/x'))).toBe('recorded');
    expect(out.lines).toEqual([]);
  });

  it('POSTs to an http device, and does not move its head when the POST fails', async () => {
    const storage = new MemoryStorage();
    const out = new Outputs();
    const device = new AuditDevice(storage, out);
    await device.provision(UUID, parseDeviceOptions('http', { url: 'https://logs.example.com/in' }).options);
    await device.log(input('secret/1'));
    expect(out.posts[0]).toMatchObject({ url: 'https://logs.example.com/in', contentType: 'application/json' });
    const head = await device.head();
    out.failPosts = true;
    await expect(device.log(input('secret/2'))).rejects.toThrow('POST refused');
    expect(await device.head()).toEqual(head);
    out.failPosts = false;
    await device.log(input('secret/3'));
    expect((await verifyLog(out.posts.map((p) => p.body).join('\n'))).ok).toBe(true);
  });

  it('answers "gone" once destroyed, and before it was provisioned', async () => {
    const { storage, device } = await fileDevice();
    await device.destroy(async () => {
      for (const k of [...storage.data.keys()]) storage.data.delete(k);
    });
    expect(await device.log(input('secret/x'))).toBe('gone');
    expect(await device.head()).toBeNull();
    expect(await new AuditDevice(new MemoryStorage(), new Outputs()).log(input('y'))).toBe('gone');
  });
});
