// Sends a hosting object's audit entries to each device in batches: one call per device at a
// time, carrying every entry that came while the previous call was out. Under load the call
// itself was about half of an entry's cost on the sending side, and the device takes a batch
// into its groups anyway.

import type { AuditDeviceRef } from './broker';
import { MAX_GROUP_ENTRIES } from './device';
import type { AuditInput, PendingEntry } from './entry';

/** One entry's fate at the device: recorded, device gone, or failed with the device's reason. */
export type EntryOutcome = { status: 'recorded' | 'gone' } | { status: 'failed'; error: string };

/** Delivers entries to one device in order; answers one outcome per entry, in the same order. */
export type SendBatch = (device: AuditDeviceRef, inputs: AuditInput[]) => Promise<EntryOutcome[]>;

/** Most entries in one call: as many as the device takes into one group. */
export const MAX_BATCH_ENTRIES = MAX_GROUP_ENTRIES;

interface Lane {
  queue: PendingEntry[];
  busy: boolean;
}

export class BatchingSender {
  readonly #lanes = new Map<string, Lane>();

  constructor(
    private readonly sendBatch: SendBatch,
    private readonly maxBatch = MAX_BATCH_ENTRIES,
  ) {}

  /** Has `device` record `input`, after every entry sent to it before; throws with the device's reason. */
  send(device: AuditDeviceRef, input: AuditInput): Promise<'recorded' | 'gone'> {
    let lane = this.#lanes.get(device.uuid);
    if (!lane) this.#lanes.set(device.uuid, (lane = { queue: [], busy: false }));
    const waiting = new Promise<'recorded' | 'gone'>((resolve, reject) => lane.queue.push({ input, resolve, reject }));
    if (!lane.busy) void this.#drain(device, lane);
    return waiting;
  }

  async #drain(device: AuditDeviceRef, lane: Lane): Promise<void> {
    lane.busy = true;
    try {
      while (lane.queue.length > 0) {
        const batch = lane.queue.splice(0, this.maxBatch);
        try {
          const outcomes = await this.sendBatch(device, batch.map((w) => w.input));
          batch.forEach((w, i) => {
            const outcome = outcomes[i];
            if (!outcome) w.reject(new Error('the audit device answered fewer entries than it was sent'));
            else if (outcome.status === 'failed') w.reject(new Error(outcome.error));
            else w.resolve(outcome.status);
          });
        } catch (e) {
          for (const w of batch) w.reject(e);
        }
      }
    } finally {
      lane.busy = false;
      // An idle lane holds nothing: forget it, so disabled devices do not accumulate.
      if (lane.queue.length === 0 && this.#lanes.get(device.uuid) === lane) this.#lanes.delete(device.uuid);
    }
  }
}
