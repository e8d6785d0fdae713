// Scripted failures and stalls. A fault answers a call of its action (after letting `after` of them
// through) with the given error instead of performing it, `times` times, then disappears. A delay
// holds a call that long before performing it, the same way. Calls count once authenticated.
import { AwsError } from './errors';
import type { DelaySpec, FaultSpec, FaultsBody } from './types';

interface Pending<T> {
  spec: T;
  skip: number;
  left: number;
}

function arm<T extends { action: string; after?: number; times?: number }>(specs: T[] | undefined, what: string): Pending<T>[] {
  return (specs ?? []).map((spec) => {
    const skip = spec.after ?? 0;
    const left = spec.times ?? 1;
    if (typeof spec.action !== 'string' || !Number.isInteger(skip) || skip < 0 || !Number.isInteger(left) || left < 1) {
      throw new Error(`bad ${what}: ${JSON.stringify(spec)}`);
    }
    return { spec, skip, left };
  });
}

/** Counts this call against every entry of the action; answers the first one whose turn it is. */
function take<T extends { action: string }>(list: Pending<T>[], action: string): T | undefined {
  let hit: T | undefined;
  for (const p of list) {
    if (p.spec.action !== action && p.spec.action !== '*') continue;
    if (p.skip > 0) p.skip--;
    else if (!hit) {
      hit = p.spec;
      p.left--;
    }
  }
  for (let i = list.length - 1; i >= 0; i--) if (list[i].left <= 0) list.splice(i, 1);
  return hit;
}

export class Faults {
  private faults: Pending<FaultSpec>[] = [];
  private delays: Pending<DelaySpec>[] = [];

  /** Replaces what is pending. */
  set(body: FaultsBody): void {
    const faults = arm(body.faults, 'fault');
    for (const f of faults) {
      if (!Number.isInteger(f.spec.status) || f.spec.status < 400 || f.spec.status > 599 || typeof f.spec.code !== 'string') throw new Error(`bad fault: ${JSON.stringify(f.spec)}`);
    }
    const delays = arm(body.delays, 'delay');
    for (const d of delays) if (typeof d.spec.ms !== 'number' || d.spec.ms < 0) throw new Error(`bad delay: ${JSON.stringify(d.spec)}`);
    this.faults = faults;
    this.delays = delays;
  }

  clear(): void {
    this.faults = [];
    this.delays = [];
  }

  pending(): Required<FaultsBody> {
    return {
      faults: this.faults.map((p) => ({ ...p.spec, after: p.skip, times: p.left })),
      delays: this.delays.map((p) => ({ ...p.spec, after: p.skip, times: p.left })),
    };
  }

  /** How long to hold this call (0 for not at all). */
  delayFor(action: string): number {
    return take(this.delays, action)?.ms ?? 0;
  }

  /** The error to answer this call with, if one is due. */
  faultFor(action: string): AwsError | undefined {
    const f = take(this.faults, action);
    if (!f) return undefined;
    return new AwsError(f.status, f.code, f.message ?? defaultMessage(f.code));
  }
}

function defaultMessage(code: string): string {
  if (code === 'Throttling') return 'Rate exceeded';
  if (code === 'ServiceFailure') return 'The request processing has failed because of an unknown error, exception or failure.';
  return `${code} (injected by the emulator)`;
}
