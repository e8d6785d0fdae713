// Batching a hosting object's audit entries: one call per device at a time.
import { describe, expect, it } from 'vitest';
import type { AuditDeviceRef } from '../../../../src/core/audit/broker';
import type { AuditInput } from '../../../../src/core/audit/entry';
import { BatchingSender, type EntryOutcome } from '../../../../src/core/audit/sender';

const A: AuditDeviceRef = { uuid: 'a', path: 'a/' };
const B: AuditDeviceRef = { uuid: 'b', path: 'b/' };
const entry = (path: string): AuditInput => ({
  type: 'request',
  auth: null,
  request: { id: path, operation: 'read', mountPoint: 'kv/', mountType: 'kv', mountAccessor: 'kv_1', clientToken: '', clientTokenAccessor: '', path, data: null, remoteAddress: '', wrapTTL: 0 },
  nonHMACRequestKeys: [],
  nonHMACResponseKeys: [],
});

/** A device side that records each call and answers when told to. */
function devices(answer: (path: string) => EntryOutcome = () => ({ status: 'recorded' })) {
  const calls: { device: string; paths: string[]; release: () => void; fail: (e: Error) => void }[] = [];
  const sender = new BatchingSender(
    (device, inputs) =>
      new Promise<EntryOutcome[]>((resolve, reject) => {
        const paths = inputs.map((i) => i.request.path);
        calls.push({ device: device.uuid, paths, release: () => resolve(paths.map(answer)), fail: reject });
      }),
    3,
  );
  return { sender, calls };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

describe('BatchingSender', () => {
  it('sends the first entry at once and those that come meanwhile in one call, in order', async () => {
    const { sender, calls } = devices();
    const first = sender.send(A, entry('p0'));
    const rest = [sender.send(A, entry('p1')), sender.send(A, entry('p2'))];
    expect(calls.map((c) => c.paths)).toEqual([['p0']]);
    calls[0].release();
    expect(await first).toBe('recorded');
    await tick();
    expect(calls.map((c) => c.paths)).toEqual([['p0'], ['p1', 'p2']]);
    calls[1].release();
    expect(await Promise.all(rest)).toEqual(['recorded', 'recorded']);
  });

  it('keeps a lane per device: one device\'s slow call does not hold another\'s entries', async () => {
    const { sender, calls } = devices();
    void sender.send(A, entry('a0'));
    const b = sender.send(B, entry('b0'));
    expect(calls.map((c) => [c.device, c.paths])).toEqual([
      ['a', ['a0']],
      ['b', ['b0']],
    ]);
    calls[1].release();
    expect(await b).toBe('recorded');
  });

  it('gives each entry its own outcome: gone, or a failure with the device\'s reason', async () => {
    const { sender, calls } = devices((path) => (path === 'gone' ? { status: 'gone' } : path === 'bad' ? { status: 'failed', error: 'disk full' } : { status: 'recorded' }));
    void sender.send(A, entry('p0'));
    const results = Promise.allSettled([sender.send(A, entry('ok')), sender.send(A, entry('gone')), sender.send(A, entry('bad'))]);
    calls[0].release();
    await tick();
    calls[1].release();
    const settled = await results;
    expect(settled.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(['recorded', 'gone', 'disk full']);
  });

  it('fails only the entries of a call that failed; later entries still go', async () => {
    const { sender, calls } = devices();
    const lost = sender.send(A, entry('p0'));
    calls[0].fail(new Error('object reset'));
    await expect(lost).rejects.toThrow('object reset');
    const next = sender.send(A, entry('p1'));
    expect(calls).toHaveLength(2);
    calls[1].release();
    expect(await next).toBe('recorded');
  });

  it('splits what waits into calls of at most its batch size', async () => {
    const { sender, calls } = devices();
    const all = [sender.send(A, entry('p0')), ...['p1', 'p2', 'p3', 'p4', 'p5'].map((p) => sender.send(A, entry(p)))];
    for (let i = 0; i < 3; i++) {
      calls[i].release();
      await tick();
    }
    expect(calls.map((c) => c.paths)).toEqual([['p0'], ['p1', 'p2', 'p3'], ['p4', 'p5']]);
    expect(await Promise.all(all)).toEqual(Array(6).fill('recorded'));
  });

  it('refuses entries a device left unanswered', async () => {
    const sender = new BatchingSender(async () => []);
    await expect(sender.send(A, entry('p0'))).rejects.toThrow('the audit device answered fewer entries than it was sent');
  });
});
