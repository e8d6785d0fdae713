// Scripted failures of a tenant's calls: a fault answers a call of its operation (after letting
// `after` of them through) with the given error, or drops the connection, `times` times, then
// disappears. Token requests count once their tenant is known, Key Vault calls once authenticated.
import type { FaultSpec } from './types';

interface Pending {
  spec: FaultSpec;
  skip: number;
  left: number;
}

export class Faults {
  private list: Pending[] = [];

  /** Replaces what is pending. */
  set(specs: FaultSpec[]): void {
    this.list = specs.map((spec) => {
      const skip = spec.after ?? 0;
      const left = spec.times ?? 1;
      if (typeof spec.op !== 'string' || !Number.isInteger(skip) || skip < 0 || !Number.isInteger(left) || left < 1) throw new Error(`bad fault: ${JSON.stringify(spec)}`);
      if (!spec.drop && (!Number.isInteger(spec.status) || spec.status! < 400 || spec.status! > 599)) throw new Error(`bad fault (status 400-599 or drop): ${JSON.stringify(spec)}`);
      return { spec, skip, left };
    });
  }

  clear(): void {
    this.list = [];
  }

  pending(): FaultSpec[] {
    return this.list.map((p) => ({ ...p.spec, after: p.skip, times: p.left }));
  }

  /** Counts this call against every fault of its operation; answers the first one whose turn it is. */
  take(op: string): FaultSpec | undefined {
    let hit: FaultSpec | undefined;
    for (const p of this.list) {
      if (p.spec.op !== op && p.spec.op !== '*') continue;
      if (p.skip > 0) p.skip--;
      else if (!hit) {
        hit = p.spec;
        p.left--;
      }
    }
    this.list = this.list.filter((p) => p.left > 0);
    return hit;
  }
}
