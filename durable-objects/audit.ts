// AuditObject: one per audit device, addressed by the device's uuid. A chain needs one writer:
// this object formats, HMACs, chains and emits the device's entries (src/core/audit/device.ts),
// and keeps the device's salt and chain head behind the barrier so a restart continues the chain.

import { BarrierStorage } from '../src/core/barrier/barrier';
import { AuditBroker } from '../src/core/audit/broker';
import type { ChainHead } from '../src/core/audit/chain';
import { AuditDevice, postEntry } from '../src/core/audit/device';
import { BatchingSender } from '../src/core/audit/sender';
import type { AuditInput } from '../src/core/audit/entry';
import type { DeviceOptions } from '../src/core/audit/options';
import type { AuditContract, AuditHashReply, AuditLogReply } from '../src/rpc/contracts';
import { maxEntrySize, type Env } from '../src/rpc/env';
import { countAuditFailure } from '../src/core/metrics/requests';
import type { MetricsRegistry } from '../src/core/metrics/registry';
import { RemoteKeyring } from './keyring-client';
import { SqlPhysical } from './sqlite-physical';
import { replicate, ReplicatedObject } from './replica-ops';
import { auditStub, systemStub } from '../src/rpc/stubs';

/** How soon after entries the head is stored when no group follows to store it. */
const HEAD_PERSIST_MS = 1_000;

export class AuditObject extends ReplicatedObject<Env> implements AuditContract {
  readonly #physical: SqlPhysical;
  readonly #keyring: RemoteKeyring;
  readonly #barrier: BarrierStorage;
  readonly #device: AuditDevice;
  #headTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#physical = new SqlPhysical(ctx.storage);
    replicate(this, this.#physical);
    this.#keyring = new RemoteKeyring(() => systemStub(env).keyring());
    this.#barrier = new BarrierStorage(this.#physical, this.#keyring, maxEntrySize(env));
    const outputs = {
      // The file device's output: Workers Logs / Logpush collect it in production.
      logLine: (line: string) => console.log(line),
      post: (url: string, body: string, contentType: string) => postEntry(url, body, contentType),
      durable: () => ctx.storage.sync(),
    };
    // A group's write-ahead record is one value under the barrier's size cap, with room for its
    // JSON escaping and the barrier's own framing.
    this.#device = new AuditDevice(this.#barrier, outputs, undefined, Math.floor(maxEntrySize(env) / 4));
  }

  /** Called when the cluster seals or the keyring rotates: forget keys and the salt held in memory. */
  async dropKeys(): Promise<void> {
    // First, while the keys are still there: the device stores the head it holds in memory.
    await this.#device.forget();
    this.#keyring.drop();
    this.#barrier.forgetOpened();
  }

  async provision(uuid: string, options: DeviceOptions): Promise<void> {
    await this.#device.provision(uuid, options);
  }

  /** Records entries in order (the device takes them into its groups); one reply per entry. */
  async logMany(inputs: AuditInput[]): Promise<AuditLogReply[]> {
    const settled = await Promise.allSettled(inputs.map((input) => this.#device.log(input)));
    this.#persistHeadSoon();
    return settled.map((r) => (r.status === 'fulfilled' ? { status: r.value } : { status: 'failed', error: r.reason instanceof Error ? r.reason.message : String(r.reason) }));
  }

  /** Once entries pause, the head the last group made is stored (under load, each group stores the one before). */
  #persistHeadSoon(): void {
    if (this.#headTimer !== undefined) return;
    this.#headTimer = setTimeout(() => {
      this.#headTimer = undefined;
      this.#device.persistHead().catch((e) => console.error(`audit device head not stored: ${e instanceof Error ? e.message : String(e)}`));
    }, HEAD_PERSIST_MS);
  }

  /** The device's HMAC of `input`; failures (sealed, not provisioned) travel as data. */
  async hash(input: string): Promise<AuditHashReply> {
    try {
      return { ok: true, hash: await this.#device.hash(input) };
    } catch (e) {
      return { ok: false, error: e instanceof Error ? e.message : String(e) };
    }
  }

  // Awaited, not returned: a rejection adopted later shows as unhandled in workerd.
  async head(): Promise<ChainHead | null> {
    return await this.#device.head();
  }

  /** The device was disabled: its salt and chain head go. */
  async destroy(): Promise<void> {
    await this.#device.destroy(async () => {
      await this.ctx.storage.deleteAll();
      this.#physical.createSchema();
    });
  }
}

/** The audit broker of a hosting object other than the SystemObject: devices and entries over RPC. */
export function remoteAuditBroker(env: Env, metrics: MetricsRegistry): AuditBroker {
  const sender = auditSender(env);
  return new AuditBroker({
    devices: () => systemStub(env).auditDevices(),
    send: (device, input) => sender.send(device, input),
    failed: (type) => countAuditFailure(metrics, type),
  });
}

/** One hosting object's way to its devices' objects: entries go in batches, one call per device at a time. */
export function auditSender(env: Env): BatchingSender {
  return new BatchingSender((device, inputs) => auditStub(env, device.uuid).logMany(inputs));
}
