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
