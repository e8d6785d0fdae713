// The audit broker of one hosting object: knows the enabled devices (cached, so that with none
// enabled a request costs nothing) and sends each entry to all of them. An entry counts as
// recorded when at least one device recorded it, as in Vault; when every device failed, the
// caller refuses the request (fail-closed).

import type { AuditInput } from './entry';
import type { Maybe } from '../../framework/steps';

/** An enabled device, as hosting objects address it. */
export interface AuditDeviceRef {
  uuid: string;
  /** "file/": for error messages. */
  path: string;
}

export interface AuditBrokerPorts {
  /** The enabled devices; null while the cluster is sealed (nothing is audited then). */
  devices(): Promise<AuditDeviceRef[] | null>;
  /**
   * Has one device record an entry; throws (with the reason) when it could not. "gone": the
   * device was disabled since the list was read (it neither records nor refuses).
   */
  send(device: AuditDeviceRef, input: AuditInput): Promise<'recorded' | 'gone'>;
  /** Told when no device could record an entry (the request is refused): for metrics. */
  failed?(type: AuditInput['type']): void;
}

/** The device list is re-read at least this often, even without a change notice. */
export const AUDIT_DEVICES_MAX_AGE_MS = 60_000;

export type LogOutcome = 'none' | 'recorded' | 'failed';

export class AuditBroker {
  private cached: { devices: AuditDeviceRef[]; at: number } | null = null;
  private inflight: Promise<AuditDeviceRef[]> | null = null;
  /** Bumped by invalidate(), so a read that started before a change is not cached after it. */
  private generation = 0;

  constructor(
    private readonly ports: AuditBrokerPorts,
    private readonly maxAgeMs = AUDIT_DEVICES_MAX_AGE_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** The device table changed (enable, disable): re-read it on next use. */
  invalidate(): void {
    this.generation++;
    this.cached = null;
    this.inflight = null;
  }

  /** The enabled devices: at once while the list is cached (every request asks). */
  devices(): Maybe<AuditDeviceRef[]> {
    if (this.cached && this.now() - this.cached.at < this.maxAgeMs) return this.cached.devices;
    if (!this.inflight) {
      const read = this.read(this.generation);
      this.inflight = read;
      const settle = () => {
        if (this.inflight === read) this.inflight = null;
      };
      read.then(settle, settle);
    }
    return this.inflight;
  }

  private async read(generation: number): Promise<AuditDeviceRef[]> {
    const devices = await this.ports.devices();
    if (devices && generation === this.generation) this.cached = { devices, at: this.now() };
    return devices ?? [];
  }

  /**
   * Sends an entry to every device at once: to `devices` when given (a request's response goes
   * to the devices its request went to), else to the devices enabled now.
   */
  async log(input: AuditInput, devices?: AuditDeviceRef[]): Promise<LogOutcome> {
    if (!devices) {
      try {
        devices = await this.devices();
      } catch (e) {
        // Whether any device is enabled is unknown: fail closed.
        console.error(`audit devices could not be read: ${e instanceof Error ? e.message : String(e)}`);
        this.ports.failed?.(input.type);
        return 'failed';
      }
    }
    if (devices.length === 0) return 'none';
    const results = await Promise.allSettled(devices.map((d) => this.ports.send(d, input)));
    let recorded = false;
    let failed = false;
    results.forEach((r, i) => {
      if (r.status === 'fulfilled') {
        // A device disabled since the list was read neither records nor refuses.
        if (r.value === 'recorded') recorded = true;
        else this.invalidate();
        return;
      }
      failed = true;
      const reason = r.reason instanceof Error ? r.reason.message : String(r.reason);
      console.error(`audit device ${devices[i].path} failed to log the ${input.type} of ${input.request.path}: ${reason}`);
    });
    if (recorded) return 'recorded';
    if (failed) this.ports.failed?.(input.type);
    return failed ? 'failed' : 'none';
  }
}
