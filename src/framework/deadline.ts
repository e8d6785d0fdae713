// A deadline for one outbound call that, unlike AbortSignal.timeout(), ends when the call does.
// workerd caps the timers alive at once (10,000, counted across the objects of one isolate
// locally), and AbortSignal.timeout()'s timer lives its whole duration however soon the call
// finished: an object calling out on every request (a managed key at the HSM bridge, an http
// audit device, AWS) under load ran into the cap, and from then on every timer in the isolate failed.

/** Runs `call` with a signal aborted after `ms` (a TimeoutError); its timer goes as soon as `call` settles. */
export async function withDeadline<T>(ms: number, call: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), ms);
  try {
    return await call(controller.signal);
  } finally {
    clearTimeout(timer);
  }
}

/** A response and its body as text, both within `ms` (a peer that answers its headers and then stalls is cut off too). */
export function textWithin(ms: number, send: (signal: AbortSignal) => Promise<Response>): Promise<{ res: Response; text: string }> {
  return withDeadline(ms, async (signal) => {
    const res = await send(signal);
    return { res, text: await res.text() };
  });
}

/**
 * Deadlines of one length for many calls, kept by one timer. A timer per call costs a busy
 * object more than some calls do (a plugin call: about 35 µs of its 270), so the timer here stays
 * armed across calls: it fires at the oldest pending call's deadline (deadlines of one length
 * expire in the order their calls began), refuses the calls whose time is up, and arms itself
 * again for the next pending call, or not at all when none is left. A stream of calls then costs
 * one timer per `ms`, and none outlives it by more than `ms` once the calls stop.
 */
export class SharedDeadlines {
  /** Pending calls in the order they began, which is their deadlines' order. */
  readonly #pending = new Set<{ at: number; late: () => void }>();
  #armed = false;

  constructor(readonly ms: number) {}

  /** `work`'s outcome, or `late()` rejected once `ms` have passed without it settling. */
  race<T>(work: Promise<T>, late: () => Error): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry = { at: Date.now() + this.ms, late: () => reject(late()) };
      this.#pending.add(entry);
      this.#arm(entry.at);
      work.then(
        (value) => {
          this.#pending.delete(entry);
          resolve(value);
        },
        (e: unknown) => {
          this.#pending.delete(entry);
          reject(e);
        },
      );
    });
  }

  #arm(at: number): void {
    if (this.#armed) return;
    try {
      setTimeout(() => this.#fire(), Math.max(0, at - Date.now()));
    } catch {
      // No timer to be had (workerd's cap on live timers): the next call tries again, and the
      // timer it gets serves the calls pending before it too.
      return;
    }
    this.#armed = true;
  }

  #fire(): void {
    this.#armed = false;
    const now = Date.now();
    for (const entry of this.#pending) {
      if (entry.at > now) return this.#arm(entry.at);
      this.#pending.delete(entry);
      entry.late();
    }
  }
}
