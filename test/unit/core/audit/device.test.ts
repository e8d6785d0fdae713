// One audit device over storage: salt, chain head, delivery, and what a restart keeps.
import { describe, expect, it } from 'vitest';
import { AuditDevice, postEntry, type DeviceOutputs } from '../../../../src/core/audit/device';
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
  /** POSTs accepted before the next ones fail (Infinity: all). */
  acceptPosts = Infinity;
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
    if (this.failPosts || this.posts.length >= this.acceptPosts) throw new Error('POST refused');
    this.posts.push({ url, body, contentType });
  }
}

async function httpDevice(options: Record<string, string> = {}) {
  const storage = new MemoryStorage();
  const out = new Outputs(storage);
  const device = new AuditDevice(storage, out);
  await device.provision(UUID, parseDeviceOptions('http', { url: 'https://logs.example.com/in', ...options }).options);
  return { storage, out, device };
}

async function fileDevice(options: Record<string, string> = { file_path: 'stdout' }) {
  const storage = new MemoryStorage();
  const out = new Outputs(storage);
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
    const { storage, out, device } = await fileDevice();
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

  it('provisioned again, starts a new chain without sending the old chain\'s last group', async () => {
    const { storage, out, device } = await fileDevice();
    await Promise.all(Array.from({ length: 3 }, (_, i) => device.log(input(`secret/${i}`))));
    await device.provision(UUID, parseDeviceOptions('file', { file_path: 'stdout' }).options);
    out.lines.length = 0;
    await new AuditDevice(storage, out).log(input('secret/new'));
    expect(out.lines).toHaveLength(1);
    expect(JSON.parse(out.lines[0]).chain).toMatchObject({ seq: 1 });
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

  it('records entries that arrive while a group is out as the next group: one write-ahead and one sync for it', async () => {
    const { storage, out, device } = await fileDevice();
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => device.log(input(`secret/${i}`))));
    expect(results).toEqual(Array(30).fill('recorded'));
    // The first entry goes alone; the 29 that came while it was out go together.
    expect(out.durableStates).toHaveLength(2);
    expect(out.lines.map((l) => JSON.parse(l).request.path)).toEqual(Array.from({ length: 30 }, (_, i) => `secret/${i}`));
    const report = await verifyLog(out.lines.join('\n'), { head: (await device.head())?.hash });
    expect(report.ok).toBe(true);
    expect(report.devices[0]).toMatchObject({ lastSeq: 30, count: 30, redelivered: 0 });
    // The head the last group made is not stored yet: a crash now would send that group again.
    const beforePersist = new MemoryStorage();
    for (const [k, v] of storage.data) beforePersist.data.set(k, v);
    const crashLines = [...out.lines];
    await new AuditDevice(beforePersist, { ...out, logLine: (l) => void crashLines.push(l), post: async () => {}, durable: async () => {} }).log(input('secret/next'));
    expect(crashLines).toHaveLength(30 + 29 + 1);
    expect((await verifyLog(crashLines.join('\n'))).devices[0]).toMatchObject({ lastSeq: 31, count: 31, redelivered: 29 });
    // Once it is stored (the object does so when entries pause), a restart sends nothing again.
    await device.persistHead();
    await new AuditDevice(storage, out).log(input('secret/next'));
    expect(out.lines).toHaveLength(31);
    expect((await verifyLog(out.lines.join('\n'))).devices[0]).toMatchObject({ lastSeq: 31, redelivered: 0 });
  });

  it('stores the head it holds in memory when it forgets its keys (seal), so nothing is sent again after', async () => {
    const { storage, out, device } = await fileDevice();
    await Promise.all(Array.from({ length: 5 }, (_, i) => device.log(input(`secret/${i}`))));
    await device.forget();
    await new AuditDevice(storage, out).log(input('secret/after-unseal'));
    const report = await verifyLog(out.lines.join('\n'));
    expect(report.devices[0]).toMatchObject({ lastSeq: 6, count: 6, redelivered: 0 });
  });

  it('a crash while a group went out: the restart sends the whole group again, in order, and the chain verifies', async () => {
    const { storage, out, device } = await fileDevice();
    await Promise.all(Array.from({ length: 10 }, (_, i) => device.log(input(`secret/${i}`))));
    expect(out.durableStates).toHaveLength(2);
    // Storage as it was when the second group (entries 2..10) was written ahead; the crash came
    // after all of it, or after only three of its entries, had gone out.
    for (const arrived of [9, 3]) {
      const atCrash = new MemoryStorage();
      for (const [k, v] of out.durableStates[1]) atCrash.data.set(k, v);
      const log = out.lines.slice(0, 1 + arrived);
      const restarted = new AuditDevice(atCrash, {
        logLine: (line) => void log.push(line),
        post: async () => {},
        durable: async () => {},
      });
      await restarted.log(input('secret/after'));
      expect(log).toHaveLength(1 + arrived + 9 + 1);
      expect(log.slice(1 + arrived, 1 + arrived + 9)).toEqual(out.lines.slice(1));
      const report = await verifyLog(log.join('\n'), { head: (await restarted.head())?.hash });
      expect(report.ok).toBe(true);
      expect(report.devices[0]).toMatchObject({ lastSeq: 11, count: 11, redelivered: arrived });
      expect(JSON.parse(log[log.length - 1]).request.path).toBe('secret/after');
    }
  });

  it('an http group whose POST fails part-way: the entries that went out are recorded, the rest refused, and no hole is left', async () => {
    const { storage, out, device } = await httpDevice();
    await device.log(input('secret/0'));
    out.acceptPosts = 4; // the second group (five entries) has three go out
    const first = device.log(input('secret/1'));
    const group = Array.from({ length: 5 }, (_, i) => device.log(input(`secret/g${i}`)));
    expect(await first).toBe('recorded');
    const settled = await Promise.allSettled(group);
    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'rejected', 'rejected', 'rejected']);
    expect(await device.head()).toMatchObject({ seq: 4 });
    out.acceptPosts = Infinity;
    // A restart now repeats nothing: what stays written ahead is what went out.
    expect(await new AuditDevice(storage, out).log(input('secret/later'))).toBe('recorded');
    expect(out.posts).toHaveLength(5);
    const report = await verifyLog(out.posts.map((p) => p.body).join('\n'));
    expect(report.ok).toBe(true);
    expect(report.devices[0]).toMatchObject({ lastSeq: 5, count: 5 });
  });

  it('a group that could not be made durable fails, and the next group first sends it again from storage', async () => {
    const storage = new MemoryStorage();
    let failSync = false;
    const lines: string[] = [];
    const device = new AuditDevice(storage, {
      logLine: (line) => void lines.push(line),
      post: async () => {},
      durable: async () => {
        if (failSync) throw new Error('sync failed');
      },
    });
    await device.provision(UUID, parseDeviceOptions('file', { file_path: 'stdout' }).options);
    await device.log(input('secret/0'));
    failSync = true;
    await expect(device.log(input('secret/1'))).rejects.toThrow('sync failed');
    failSync = false;
    expect(await device.log(input('secret/2'))).toBe('recorded');
    // Written ahead before the sync failed, it may be durable after all: it goes out, then the new one.
    expect(lines.map((l) => JSON.parse(l).request.path)).toEqual(['secret/0', 'secret/1', 'secret/2']);
    expect(await device.head()).toMatchObject({ seq: 3 });
    expect((await verifyLog(lines.join('\n'))).ok).toBe(true);
  });

  it('with batch, POSTs each group once, one entry per line; a refused POST refuses the whole group, and a restart sends it again as one POST', async () => {
    const { storage, out, device } = await httpDevice({ batch: 'true' });
    await Promise.all(Array.from({ length: 12 }, (_, i) => device.log(input(`secret/${i}`))));
    // The first entry alone, then the eleven that came meanwhile.
    expect(out.posts.map((p) => p.body.split('\n').length - 1)).toEqual([1, 11]);
    expect(out.posts.every((p) => p.contentType === 'application/x-ndjson' && p.body.endsWith('\n'))).toBe(true);
    const lines = out.posts.map((p) => p.body).join('').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l).request.path)).toEqual(Array.from({ length: 12 }, (_, i) => `secret/${i}`));
    expect((await verifyLog(lines.join('\n'))).ok).toBe(true);

    out.failPosts = true;
    const refused = await Promise.allSettled([device.log(input('secret/x0')), device.log(input('secret/x1')), device.log(input('secret/x2'))]);
    expect(refused.map((r) => r.status === 'rejected' && (r.reason as Error).message)).toEqual(Array(3).fill('POST refused'));
    expect(await device.head()).toMatchObject({ seq: 12 });

    // A crash after the next group went out, before its head was stored: sent again as one POST.
    out.failPosts = false;
    await Promise.all([device.log(input('secret/y0')), device.log(input('secret/y1'))]);
    const posts = out.posts.length;
    const atCrash = new MemoryStorage();
    for (const [k, v] of out.durableStates[out.durableStates.length - 1]) atCrash.data.set(k, v);
    await new AuditDevice(atCrash, out).log(input('secret/z'));
    expect(out.posts.length).toBe(posts + 2);
    expect(out.posts[posts].body).toBe(out.posts[posts - 1].body);
    const all = out.posts.map((p) => p.body).join('').trimEnd();
    const report = await verifyLog(all);
    expect(report.ok).toBe(true);
    expect(report.devices[0]).toMatchObject({ lastSeq: 15, redelivered: 1 });
  });

  it('keeps a group within its byte budget (a larger group goes as several), still in order', async () => {
    const storage = new MemoryStorage();
    const out = new Outputs(storage);
    const probe = await fileDevice();
    await probe.device.log(input('secret/00'));
    const size = probe.out.lines[0].length;
    // Room for three entries per group.
    const device = new AuditDevice(storage, out, undefined, Math.floor(size * 3.5));
    await device.provision(UUID, parseDeviceOptions('file', { file_path: 'stdout' }).options);
    await Promise.all(Array.from({ length: 10 }, (_, i) => device.log(input(`secret/${String(i).padStart(2, '0')}`))));
    // 1 alone, then 9 in groups of three.
    expect(out.durableStates).toHaveLength(4);
    expect(out.lines.map((l) => JSON.parse(l).request.path)).toEqual(Array.from({ length: 10 }, (_, i) => `secret/${String(i).padStart(2, '0')}`));
    expect((await verifyLog(out.lines.join('\n'))).ok).toBe(true);
  });

  it('an entry that cannot be formatted fails alone; the rest of its group is recorded', async () => {
    const out = new Outputs();
    let calls = 0;
    // The third entry's formatting fails (here: taking its time).
    const now = () => {
      if (++calls === 3) throw new Error('no clock');
      return '2026-11-27T00:00:00.000000000Z';
    };
    const device = new AuditDevice(new MemoryStorage(), out, now);
    await device.provision(UUID, parseDeviceOptions('file', { file_path: 'stdout' }).options);
    const first = device.log(input('secret/0'));
    const rest = [device.log(input('secret/1')), device.log(input('secret/bad')), device.log(input('secret/2'))];
    expect(await first).toBe('recorded');
    const settled = await Promise.allSettled(rest);
    expect(settled.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(out.lines.map((l) => JSON.parse(l).request.path)).toEqual(['secret/0', 'secret/1', 'secret/2']);
    expect((await verifyLog(out.lines.join('\n'))).ok).toBe(true);
  });

  it('writes nothing for file_path=discard', async () => {
    const { out, device } = await fileDevice({ file_path: 'discard' });
    expect(await device.log(input('secret/x'))).toBe('recorded');
    expect(out.lines).toEqual([]);
  });

  it('POSTs to an http device, and does not move its head when the POST fails', async () => {
    const { storage, out, device } = await httpDevice();
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

describe('an http device\'s POST', () => {
  const fetcher = (failures: number, status = 204) => {
    const calls: string[] = [];
    const f = (async (_url: string, init: RequestInit) => {
      calls.push(String(init.body));
      if (calls.length <= failures) throw new TypeError('Network connection lost.');
      return new Response(null, { status });
    }) as unknown as typeof fetch;
    return { f, calls };
  };

  it('is sent once more when it failed without an answer (a connection the receiver had closed)', async () => {
    const { f, calls } = fetcher(1);
    await postEntry('http://logs.example/in', '{"a":1}', 'application/json', f);
    expect(calls).toEqual(['{"a":1}', '{"a":1}']);
  });

  it('fails when the second attempt fails too, and is not sent again on a refusal', async () => {
    const twice = fetcher(2);
    await expect(postEntry('http://logs.example/in', 'x', 'application/json', twice.f)).rejects.toThrow('POST http://logs.example/in failed: Network connection lost.');
    expect(twice.calls).toHaveLength(2);
    const refused = fetcher(0, 500);
    await expect(postEntry('http://logs.example/in', 'x', 'application/json', refused.f)).rejects.toThrow('POST http://logs.example/in answered 500');
    expect(refused.calls).toHaveLength(1);
  });
});
