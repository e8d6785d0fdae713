// withDeadline / textWithin: deadlines for outbound calls whose timers end with the call. In
// workerd, which caps the timers alive at once (10,000): AbortSignal.timeout()'s timers outlive
// their calls, and a busy object calling out on every request ran into that cap. SharedDeadlines:
// many calls' deadlines of one length kept by one timer.
import { describe, expect, it } from 'vitest';
import { SharedDeadlines, textWithin, withDeadline } from '../../../src/framework/deadline';

const abortedBy = (signal: AbortSignal): Promise<never> =>
  new Promise((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }));

describe('withDeadline', () => {
  it('leaves no timer behind: 20,000 calls under a one-minute deadline stay within the runtime cap of live timers', async () => {
    let sum = 0;
    for (let i = 0; i < 20_000; i++) sum += await withDeadline(60_000, async () => i);
    expect(sum).toBe((20_000 * 19_999) / 2);
    // A timer can still be set afterwards (it would throw "exceeded the number of active timeouts").
    await new Promise((resolve) => setTimeout(resolve, 1));
  });

  it('aborts a call that outlives it with a TimeoutError, and passes on what the call throws', async () => {
    const late = await withDeadline(20, (signal) => abortedBy(signal)).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(DOMException);
    expect((late as DOMException).name).toBe('TimeoutError');
    await expect(
      withDeadline(1_000, async () => {
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
  });
});

describe('textWithin', () => {
  it('reads the body within the deadline: a peer that sends its headers and then stalls is cut off', async () => {
    // Headers arrived; the body does not until the call is aborted (as fetch's body then fails).
    const stalled = async (signal: AbortSignal) => ({ status: 200, ok: true, text: () => abortedBy(signal) }) as unknown as Response;
    const e = await textWithin(30, stalled).catch((err: unknown) => err);
    expect((e as DOMException).name).toBe('TimeoutError');
    const { res, text } = await textWithin(1_000, async () => new Response('{"ok":true}', { status: 201 }));
    expect(res.status).toBe(201);
    expect(text).toBe('{"ok":true}');
  });
});

describe('SharedDeadlines', () => {
  const never = () => new Promise<never>(() => undefined);
  const late = (name: string) => () => new Error(`${name} is late`);
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it('passes on what a call settles with, and 20,000 calls under a one-minute deadline set one timer', async () => {
    const deadlines = new SharedDeadlines(60_000);
    const real = globalThis.setTimeout;
    let timers = 0;
    globalThis.setTimeout = ((...args: Parameters<typeof setTimeout>) => (timers++, real(...args))) as typeof setTimeout;
    let sum = 0;
    try {
      for (let i = 0; i < 20_000; i++) sum += await deadlines.race(Promise.resolve(i), late('call'));
    } finally {
      globalThis.setTimeout = real;
    }
    expect(sum).toBe((20_000 * 19_999) / 2);
    expect(timers).toBe(1);
    await expect(deadlines.race(Promise.reject(new Error('refused')), late('call'))).rejects.toThrow('refused');
    await sleep(1);
  });

  it('refuses each call that outlives it at its own deadline, in the order the calls began', async () => {
    const deadlines = new SharedDeadlines(60);
    const start = Date.now();
    const refusedAt: Record<string, number> = {};
    const watch = (name: string) =>
      deadlines.race(never(), late(name)).catch((e: Error) => {
        refusedAt[name] = Date.now() - start;
        return e.message;
      });
    const first = watch('first');
    await sleep(40);
    const second = watch('second');
    const quick = deadlines.race(sleep(10).then(() => 'done'), late('quick'));
    expect(await first).toBe('first is late');
    // The second began 40 ms later: the timer that refused the first armed itself again for it.
    expect(refusedAt.second).toBeUndefined();
    expect(await second).toBe('second is late');
    expect(await quick).toBe('done');
    expect(refusedAt.first).toBeGreaterThanOrEqual(60);
    expect(refusedAt.second).toBeGreaterThanOrEqual(100);
    expect(refusedAt.second! - refusedAt.first!).toBeGreaterThanOrEqual(30);
  });

  it("a call made while workerd's timers run out gets its deadline from the next call's timer", async () => {
    const deadlines = new SharedDeadlines(20);
    const held: ReturnType<typeof setTimeout>[] = [];
    try {
      for (;;) held.push(setTimeout(() => undefined, 600_000));
    } catch (e) {
      expect((e as Error).name).toBe('QuotaExceededError');
    }
    const starved = deadlines.race(never(), late('starved')).catch((e: Error) => e.message);
    for (const t of held) clearTimeout(t);
    const next = deadlines.race(never(), late('next')).catch((e: Error) => e.message);
    expect(await starved).toBe('starved is late');
    expect(await next).toBe('next is late');
  });

  it('swallows what a late call rejects with afterwards (no unhandled rejection)', async () => {
    const deadlines = new SharedDeadlines(10);
    let fail: (e: Error) => void = () => undefined;
    const work = new Promise<never>((_, reject) => (fail = reject));
    await expect(deadlines.race(work, late('call'))).rejects.toThrow('call is late');
    fail(new Error('too late to matter'));
    await sleep(5);
  });
});
