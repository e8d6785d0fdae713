// One audit device: its options, its salt and the head of its chain, over a Storage (the
// device's own object, behind the barrier). It is the single writer of its chain: entries are
// formatted, HMACed, chained and delivered in order, and the head moves only past entries that
// were delivered, so a failed delivery leaves no hole in the chain. Entries that arrive while a
// group is being recorded wait and then go together as the next group: one write-ahead and one
// sync for the whole group, where each entry used to pay both and a commit of the head. Each
// group is written ahead (made durable before it goes out), together with the head it starts
// from: a crash after some of it went out but before the head moved would otherwise give the
// next entries the same sequence numbers, a fork. The head a group makes is stored with the next
// group, or by persistHead() once entries stop. The restarted device delivers the last group
// written ahead again first if it reaches past the stored head, in order: a repeated run of exact
// copies, which the checker accepts (verify-chain.mjs, REDELIVERY_WINDOW).

import { randomBytes } from '../../crypto/random';
import { formatRFC3339Nano } from '../../framework/duration';
import { getJSON, putJSON, type Storage } from '../../framework/storage';
import { Mutex } from '../mutex';
import { chainEntry, genesisHead, type ChainHead } from './chain';
import { formatEntry, type AuditInput, type PendingEntry } from './entry';
import { rememberingHasher, saltedHasher, type Hasher } from './hash';
import type { DeviceOptions } from './options';
import { withDeadline } from '../../framework/deadline';
import { REDELIVERY_WINDOW } from './verify-chain.mjs';

const CONFIG_KEY = 'device/config';
const SALT_KEY = 'device/salt';
const HEAD_KEY = 'device/head';
/**
 * The last group written ahead, each entry with the head it makes. It stays when the group is out
 * (overwriting it is cheaper than deleting it): it is cut off only while it reaches past the head.
 */
const PENDING_KEY = 'device/pending';
const SALT_BYTES = 32;
/** Most entries in one group: a repeated run after a crash must stay within the checker's window. */
export const MAX_GROUP_ENTRIES = REDELIVERY_WINDOW;
/** Bodies in one group's write-ahead record, by default (it is one storage value, with a size cap). */
export const DEFAULT_GROUP_BYTES = 256 * 1024;
/** An http device that does not answer within this time has failed. */
export const HTTP_DELIVERY_TIMEOUT_MS = 10_000;

interface DeviceConfig {
  uuid: string;
  options: DeviceOptions;
}

interface Loaded extends DeviceConfig {
  /** Sequence number of the head in storage (the head in memory may be ahead of it). */
  storedSeq: number;
  hash: Hasher;
  /** `hash` for the callers' tokens and accessors, remembering recent ones. */
  callerHash: Hasher;
  head: ChainHead;
  /** Storage was checked for a group a crash cut off since this was read. */
  cutOffChecked?: boolean;
}

/** Where entries go. */
export interface DeviceOutputs {
  /** One line of the Worker log (console.log in the Durable Object). */
  logLine(line: string): void;
  /** Delivers a body to an http device; throws when it was not accepted. */
  post(url: string, body: string, contentType: string): Promise<void>;
  /** Resolves once every write so far is durable (the object's storage sync). */
  durable(): Promise<void>;
}

/** One entry as it goes out, and the chain head once it has. */
interface Delivery {
  body: string;
  contentType: string;
  head: ChainHead;
}

/**
 * The http device's delivery: a POST that must answer 2xx within the timeout. A POST that fails
 * without an answer is sent once more: a group's entries go out back to back, and a kept-alive
 * connection the receiver has just closed (an HTTP/1.0 server closes each one) fails before the
 * request reaches it (workerd: "Network connection lost"). Should the first one have arrived after
 * all, the receiver holds the same entry twice in a row, a repeat the chain checker accepts.
 */
export async function postEntry(url: string, body: string, contentType: string, fetcher: typeof fetch = fetch): Promise<void> {
  let res: Response;
  try {
    res = await withDeadline(HTTP_DELIVERY_TIMEOUT_MS, async (signal) => {
      const send = () => fetcher(url, { method: 'POST', headers: { 'Content-Type': contentType }, body, signal });
      try {
        return await send();
      } catch (e) {
        if (signal.aborted) throw e;
        return await send();
      }
    });
  } catch (e) {
    throw new Error(`POST ${url} failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  await res.body?.cancel();
  if (res.status < 200 || res.status > 299) throw new Error(`POST ${url} answered ${res.status}`);
}

export class AuditDevice {
  private loaded: Loaded | null | undefined;
  private readonly writes = new Mutex();
  /** Entries not yet taken into a group, in arrival order. */
  private readonly queue: PendingEntry[] = [];
  private draining = false;

  constructor(
    private readonly storage: Storage,
    private readonly outputs: DeviceOutputs,
    private readonly now: () => string = () => formatRFC3339Nano(Date.now()),
    /** Most body bytes one group writes ahead (a single larger entry still goes, alone). */
    private readonly groupBytes = DEFAULT_GROUP_BYTES,
  ) {}

  private async load(): Promise<Loaded | null> {
    if (this.loaded === undefined) {
      const config = await getJSON<DeviceConfig>(this.storage, CONFIG_KEY);
      const salt = await this.storage.get(SALT_KEY);
      const hash = salt && saltedHasher(salt);
      const head = (await getJSON<ChainHead>(this.storage, HEAD_KEY)) ?? genesisHead();
      this.loaded = config && hash ? { ...config, hash, callerHash: rememberingHasher(hash), head, storedSeq: head.seq } : null;
    }
    return this.loaded;
  }

  /** Sets the device up with a new salt and an empty chain (enable). */
  async provision(uuid: string, options: DeviceOptions): Promise<void> {
    await this.writes.run(async () => {
      await putJSON(this.storage, CONFIG_KEY, { uuid, options } satisfies DeviceConfig);
      await this.storage.put(SALT_KEY, randomBytes(SALT_BYTES));
      await putJSON(this.storage, HEAD_KEY, genesisHead());
      // The last group of the chain before, if any, must never be taken for a cut-off one.
      await this.storage.delete(PENDING_KEY);
      this.loaded = undefined;
    });
  }

  /**
   * Forgets the salt and chain head held in memory (seal, keyring change): they are re-read
   * through the barrier. The head is stored first, while the keys are still there (if it cannot
   * be, the next load sends the last group again: repeats, not a fork).
   */
  async forget(): Promise<void> {
    await this.writes.run(async () => {
      await this.storeHead().catch(() => undefined);
      this.loaded = undefined;
    });
  }

  /**
   * Stores the head in memory if it is ahead of storage. Under load the head is stored with each
   * group written ahead; this is for when entries stop (the object's owner calls it on a timer).
   */
  async persistHead(): Promise<void> {
    await this.writes.run(() => this.storeHead());
  }

  private async storeHead(): Promise<void> {
    const device = this.loaded;
    if (!device || device.storedSeq === device.head.seq) return;
    const head = device.head;
    await putJSON(this.storage, HEAD_KEY, head);
    device.storedSeq = head.seq;
  }

  /** Disable: `erase` wipes the device's storage once no entry is being written. */
  async destroy(erase: () => Promise<void>): Promise<void> {
    await this.writes.run(async () => {
      await erase();
      this.loaded = undefined;
    });
  }

  /**
   * Records one entry: "recorded" once it went out, "gone" when the device is not (or no longer)
   * provisioned; throws when it could not be recorded. Entries are recorded in the order they came.
   */
  log(input: AuditInput): Promise<'recorded' | 'gone'> {
    return new Promise((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      if (!this.draining) void this.drain();
    });
  }

  /** Records groups until nothing waits; one drain runs at a time. */
  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        const group = this.queue.splice(0, MAX_GROUP_ENTRIES);
        try {
          await this.writes.run(() => this.record(group));
        } catch (e) {
          // Whatever the group had not settled fails with it (settling twice is harmless).
          for (const w of group) w.reject(e);
        }
      }
    } finally {
      this.draining = false;
    }
  }

  /** Formats, chains, writes ahead and delivers one group; entries beyond its size go back to the queue. */
  private async record(group: PendingEntry[]): Promise<void> {
    try {
      await this.recordGroup(group);
    } catch (e) {
      // Memory may now be ahead of storage (a head not stored, a group written ahead but not
      // sent): the next group starts from what storage holds.
      this.loaded = undefined;
      throw e;
    }
  }

  private async recordGroup(group: PendingEntry[]): Promise<void> {
    const device = await this.load();
    if (!device) {
      for (const w of group) w.resolve('gone');
      return;
    }
    await this.finishCutOff(device);
    const { options } = device;
    // A prefix precedes the entry wherever it goes, as in Vault; the body is then no longer JSON.
    const contentType = options.prefix ? 'text/plain; charset=utf-8' : 'application/json';
    const deliveries: Delivery[] = [];
    const chained: PendingEntry[] = [];
    let head = device.head;
    let bytes = 0;
    for (let i = 0; i < group.length; i++) {
      const w = group[i];
      let delivery: Delivery;
      try {
        const entry = await formatEntry(w.input, options, device.hash, this.now(), device.callerHash);
        const next = await chainEntry(entry, device.uuid, head);
        delivery = { body: options.prefix + next.text, contentType, head: next.head };
      } catch (e) {
        w.reject(e); // this entry only: it took no place in the chain
        continue;
      }
      if (deliveries.length > 0 && bytes + delivery.body.length > this.groupBytes) {
        // Full: this entry and the rest start the next group, still in order.
        this.queue.unshift(...group.slice(i));
        group.length = i;
        break;
      }
      bytes += delivery.body.length;
      deliveries.push(delivery);
      chained.push(w);
      head = delivery.head;
    }
    if (deliveries.length === 0) return;
    // The group, and with it the head it starts from (the group before it is out, and is no longer
    // written ahead once this one is); both are durable before anything of it goes out.
    await putJSON(this.storage, PENDING_KEY, deliveries);
    await this.storeHead();
    await this.outputs.durable();
    const { sent, error } = await this.sendGroup(device, deliveries);
    if (error !== undefined) {
      // The entries that went out stay in the chain; the one that failed and those after it
      // (which link to it) are refused, and the next group takes their sequence numbers.
      // What stays written ahead is exactly what went out, so a crash now repeats only that.
      if (sent > 0) {
        await putJSON(this.storage, PENDING_KEY, deliveries.slice(0, sent));
        device.head = deliveries[sent - 1].head;
        await this.storeHead();
      } else await this.storage.delete(PENDING_KEY);
      for (const w of chained.slice(0, sent)) w.resolve('recorded');
      for (const w of chained.slice(sent)) w.reject(error);
      return;
    }
    // Not stored now: the group written ahead says how far the chain went (a crash before the
    // head is stored sends the group again), and the reply does not wait for another commit.
    device.head = head;
    for (const w of chained) w.resolve('recorded');
  }

  /** Sends a group in order: how many entries went out, and the failure that stopped the rest. */
  private async sendGroup(device: Loaded, group: Delivery[]): Promise<{ sent: number; error?: unknown }> {
    const { options } = device;
    if (options.type === 'http' && options.batch) {
      // One POST, one entry per line: all of the group went out, or none of it did.
      const body = group.map((d) => d.body + '\n').join('');
      try {
        await this.outputs.post(options.url, body, options.prefix ? 'text/plain; charset=utf-8' : 'application/x-ndjson');
        return { sent: group.length };
      } catch (error) {
        return { sent: 0, error };
      }
    }
    let sent = 0;
    try {
      for (const d of group) {
        if (options.type === 'http') await this.outputs.post(options.url, d.body, d.contentType);
        else if (options.filePath !== 'discard') this.outputs.logLine(d.body);
        sent++;
      }
      return { sent };
    } catch (error) {
      return { sent, error };
    }
  }

  /**
   * A group a crash cut off (any part of it may have gone out) is sent again, whole and in order,
   * before anything new, so the chain goes on from it; until it has gone out, the device fails
   * closed. Storage is read once per load: later groups are cut off only by a failure, which
   * makes the device load again. (A single delivery is what versions before groups wrote ahead.)
   */
  private async finishCutOff(device: Loaded): Promise<void> {
    if (device.cutOffChecked) return;
    const pending = await getJSON<Delivery[] | Delivery>(this.storage, PENDING_KEY);
    const group = pending === null ? [] : Array.isArray(pending) ? pending : [pending];
    const last = group[group.length - 1];
    if (last && last.head.seq > device.head.seq) {
      const { error } = await this.sendGroup(device, group);
      if (error !== undefined) throw error;
      device.head = last.head;
      await this.storeHead();
    }
    device.cutOffChecked = true;
  }

  /** sys/audit-hash: the device's HMAC of a value. */
  async hash(input: string): Promise<string> {
    const device = await this.load();
    if (!device) throw new Error('audit device is not provisioned');
    return device.hash(input);
  }

  async head(): Promise<ChainHead | null> {
    return (await this.load())?.head ?? null;
  }
}
