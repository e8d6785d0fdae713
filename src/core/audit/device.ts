// One audit device: its options, its salt and the head of its chain, over a Storage (the
// device's own object, behind the barrier). It is the single writer of its chain: entries are
// formatted, HMACed, chained and delivered one at a time, and the head moves only when an entry
// was delivered, so a failed delivery leaves no hole in the chain. Each delivery is written
// ahead (made durable before it goes out): a crash after the entry went out but before the head
// moved would otherwise give the next entry the same sequence number, a fork. The restarted
// device delivers the written-ahead entry again first, an exact duplicate the checker accepts.

import { randomBytes } from '../../crypto/random';
import { formatRFC3339Nano } from '../../framework/duration';
import { getJSON, putJSON, type Storage } from '../../framework/storage';
import { Mutex } from '../mutex';
import { chainEntry, genesisHead, type ChainHead } from './chain';
import { formatEntry, type AuditInput } from './entry';
import { saltedHasher, type Hasher } from './hash';
import type { DeviceOptions } from './options';
import { withDeadline } from '../../framework/deadline';

const CONFIG_KEY = 'device/config';
const SALT_KEY = 'device/salt';
const HEAD_KEY = 'device/head';
/** The delivery in progress (written ahead), with the head it makes. */
const PENDING_KEY = 'device/pending';
const SALT_BYTES = 32;
/** An http device that does not answer within this time has failed. */
export const HTTP_DELIVERY_TIMEOUT_MS = 10_000;

interface DeviceConfig {
  uuid: string;
  options: DeviceOptions;
}

interface Loaded extends DeviceConfig {
  hash: Hasher;
  head: ChainHead;
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

/** The http device's delivery: a POST that must answer 2xx within the timeout. */
export async function postEntry(url: string, body: string, contentType: string, fetcher: typeof fetch = fetch): Promise<void> {
  let res: Response;
  try {
    res = await withDeadline(HTTP_DELIVERY_TIMEOUT_MS, (signal) => fetcher(url, { method: 'POST', headers: { 'Content-Type': contentType }, body, signal }));
  } catch (e) {
    throw new Error(`POST ${url} failed: ${e instanceof Error ? e.message : String(e)}`);
  }
  await res.body?.cancel();
  if (res.status < 200 || res.status > 299) throw new Error(`POST ${url} answered ${res.status}`);
}

export class AuditDevice {
  private loaded: Loaded | null | undefined;
  private readonly writes = new Mutex();

  constructor(
    private readonly storage: Storage,
    private readonly outputs: DeviceOutputs,
    private readonly now: () => string = () => formatRFC3339Nano(Date.now()),
  ) {}

  private async load(): Promise<Loaded | null> {
    if (this.loaded === undefined) {
      const config = await getJSON<DeviceConfig>(this.storage, CONFIG_KEY);
      const salt = await this.storage.get(SALT_KEY);
      this.loaded = config && salt ? { ...config, hash: saltedHasher(salt), head: (await getJSON<ChainHead>(this.storage, HEAD_KEY)) ?? genesisHead() } : null;
    }
    return this.loaded;
  }

  /** Sets the device up with a new salt and an empty chain (enable). */
  async provision(uuid: string, options: DeviceOptions): Promise<void> {
    await this.writes.run(async () => {
      await putJSON(this.storage, CONFIG_KEY, { uuid, options } satisfies DeviceConfig);
      await this.storage.put(SALT_KEY, randomBytes(SALT_BYTES));
      await putJSON(this.storage, HEAD_KEY, genesisHead());
      this.loaded = undefined;
    });
  }

  /** Forgets the salt and chain head held in memory (seal, keyring change): they are re-read through the barrier. */
  async forget(): Promise<void> {
    await this.writes.run(async () => {
      this.loaded = undefined;
    });
  }

  /** Disable: `erase` wipes the device's storage once no entry is being written. */
  async destroy(erase: () => Promise<void>): Promise<void> {
    await this.writes.run(async () => {
      await erase();
      this.loaded = undefined;
    });
  }

  /** Records one entry. "gone" when the device is not (or no longer) provisioned; throws on failure. */
  async log(input: AuditInput): Promise<'recorded' | 'gone'> {
    return this.writes.run(async () => {
      const device = await this.load();
      if (!device) return 'gone';
      await this.finishCutOff(device);
      const { options } = device;
      const entry = await formatEntry(input, options, device.hash, this.now());
      const { text, head } = await chainEntry(entry, device.uuid, device.head);
      // A prefix precedes the entry wherever it goes, as in Vault; the body is then no longer JSON.
      const delivery: Delivery = { body: options.prefix + text, contentType: options.prefix ? 'text/plain; charset=utf-8' : 'application/json', head };
      await putJSON(this.storage, PENDING_KEY, delivery);
      await this.outputs.durable();
      try {
        await this.send(device, delivery);
      } catch (e) {
        await this.storage.delete(PENDING_KEY);
        throw e;
      }
      await this.advance(device, head);
      return 'recorded';
    });
  }

  private async send(device: Loaded, d: Delivery): Promise<void> {
    const { options } = device;
    if (options.type === 'http') await this.outputs.post(options.url, d.body, d.contentType);
    else if (options.filePath !== 'discard') this.outputs.logLine(d.body);
  }

  /** The entry is out: the next one links to it. */
  private async advance(device: Loaded, head: ChainHead): Promise<void> {
    device.head = head;
    await putJSON(this.storage, HEAD_KEY, head);
    await this.storage.delete(PENDING_KEY);
  }

  /**
   * A delivery a crash cut off (it may or may not have gone out) is sent again before anything
   * new, so the chain goes on from it; until it goes out, the device fails closed.
   */
  private async finishCutOff(device: Loaded): Promise<void> {
    const pending = await getJSON<Delivery>(this.storage, PENDING_KEY);
    if (!pending) return;
    await this.send(device, pending);
    await this.advance(device, pending.head);
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
