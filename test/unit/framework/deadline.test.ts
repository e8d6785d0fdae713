// withDeadline / textWithin: deadlines for outbound calls whose timers end with the call. In
// workerd, which caps the timers alive at once (10,000): AbortSignal.timeout()'s timers outlive
// their calls, and a busy object calling out on every request ran into that cap.
import { describe, expect, it } from 'vitest';
import { textWithin, withDeadline } from '../../../src/framework/deadline';

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
