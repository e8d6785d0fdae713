// The SystemObject's side of DR replication: the cluster's DR state (kept in LocalState, sealed
// by the deployment's seal, since a secondary's replicated storage is the primary's), recording
// switched on and off in every object, and the pages, Merkle buckets and values a secondary pulls.

import { fromUtf8, utf8 } from '../src/crypto/encoding';
import { CofferError } from '../src/framework/errors';
import type { Seal } from '../src/core/barrier/seal';
import { DR_DISABLED, authenticateSecondary, heartbeat, type DrPrimary, type DrState } from '../src/core/replication/state';
import { trimPoint, type ObjectName, type PullReply, type WirePage } from '../src/core/replication/stream';
import type { ReplicaContract, ReplicaMerkle } from '../src/rpc/contracts';
import type { DrServices } from '../src/sys/context';
import type { Env } from '../src/rpc/env';
import { allTokenShards, auditStub, mountStub } from '../src/rpc/stubs';
import { ReplicaOps, replicaValue } from './replica-ops';
import type { LocalState } from './replication-log';
import type { SqlPhysical } from './sqlite-physical';

const STATE_KEY = 'dr-state';
const POSITIONS_KEY = 'dr-positions';
const SECONDARY_KEY = 'dr-secondary-key';
const SEAL_CONTEXT = 'dr-local-state';

/** What each secondary last reported: its positions per object, and when. */
type Positions = Record<string, { at: number; positions: Record<ObjectName, number> }>;

export interface ReplicationPorts {
  physical: SqlPhysical;
  local: LocalState;
  seal: Seal | null;
  env: Env;
  /** The cluster's mount objects and audit devices now (uuids). */
  mounts(): Promise<string[]>;
  audits(): Promise<string[]>;
}

export class SystemReplication implements DrServices {
  readonly #own: ReplicaOps;
  #cached: DrState | null = null;

  constructor(private readonly ports: ReplicationPorts) {
    this.#own = new ReplicaOps(ports.physical);
  }

  async state(): Promise<DrState> {
    if (this.#cached) return this.#cached;
    const blob = this.ports.local.get(STATE_KEY);
    if (!blob) return (this.#cached = DR_DISABLED);
    const seal = this.#seal();
    this.#cached = JSON.parse(fromUtf8(await seal.decrypt(blob, SEAL_CONTEXT))) as DrState;
    return this.#cached;
  }

  async save(next: DrState): Promise<DrState> {
    const blob = next.mode === 'disabled' ? null : await this.#seal().encrypt(utf8(JSON.stringify(next)), SEAL_CONTEXT);
    this.ports.local.put(STATE_KEY, blob);
    this.#cached = next;
    return next;
  }

  #seal(): Seal {
    if (!this.ports.seal) throw new Error('DR replication needs the cluster seal (SEAL_KEY or SEAL_TYPE) to protect its local state');
    return this.ports.seal;
  }

  /** Every object of the cluster by its replication name. */
  async objects(): Promise<ObjectName[]> {
    const shards = allTokenShards(this.ports.env).map((_, i) => `shard/${i}`);
    return ['system', ...shards, ...(await this.ports.mounts()).map((u) => `mount/${u}`), ...(await this.ports.audits()).map((u) => `audit/${u}`)];
  }

  #replica(name: ObjectName): ReplicaContract | null {
    if (name === 'system') return null;
    const [kind, id] = name.split('/');
    if (kind === 'shard') return allTokenShards(this.ports.env)[Number(id)] as unknown as ReplicaContract;
    if (kind === 'mount') return mountStub(this.ports.env, id) as unknown as ReplicaContract;
    return auditStub(this.ports.env, id) as unknown as ReplicaContract;
  }

  /** Starts or stops recording in every object (a new mount or device is started when provisioned). */
  async recording(on: boolean): Promise<void> {
    const command = on ? 'start' : 'stop';
    await Promise.all(
      (await this.objects()).map(async (name) => {
        const stub = this.#replica(name);
        if (stub) replicaValue(await stub.replicaControl(command));
        else this.#own.control(command);
      }),
    );
  }

  /** Starts recording in one new object when this cluster is a primary. */
  async provisioned(name: ObjectName): Promise<void> {
    if ((await this.state()).mode !== 'primary') return;
    const stub = this.#replica(name);
    if (stub) replicaValue(await stub.replicaControl('start'));
  }

  /** The primary authenticates a secondary's call by its id and credential (a 403 otherwise). */
  async authenticate(id: string, credential: string, apiAddress: string, now = Date.now()): Promise<DrPrimary> {
    const auth = authenticateSecondary(await this.state(), { id, credential, now });
    if (!auth.ok) throw new CofferError(403, [`replication: ${auth.reason}`]);
    // Calls that do not say (Merkle and value reads) keep the address the last pull gave.
    const address = apiAddress || auth.record.apiAddress;
    return (await this.save(heartbeat(auth.state, { id, now, apiAddress: address }))) as DrPrimary;
  }

  /** Pages after each position the secondary reported; trims what every secondary has applied. */
  async pull(secondaryId: string, positions: Record<ObjectName, number>, limit: number, now = Date.now()): Promise<PullReply> {
    const state = (await this.state()) as DrPrimary;
    const objects = await this.objects();
    const pages: Record<ObjectName, WirePage> = {};
    await Promise.all(
      objects.map(async (name) => {
        const stub = this.#replica(name);
        const after = positions[name] ?? 0;
        pages[name] = stub ? replicaValue(await stub.replicaPull(after, limit)) : this.#own.pull(after, limit);
      }),
    );
    await this.#trim(secondaryId, positions, pages, state, now);
    return { cluster_id: state.clusterId, objects, pages, now };
  }

  async #trim(secondaryId: string, positions: Record<ObjectName, number>, pages: Record<ObjectName, WirePage>, state: DrPrimary, now: number): Promise<void> {
    const raw = this.ports.local.get(POSITIONS_KEY);
    const all: Positions = raw ? (JSON.parse(fromUtf8(raw)) as Positions) : {};
    all[secondaryId] = { at: now, positions };
    for (const id of Object.keys(all)) if (!state.secondaries[id]) delete all[id];
    this.ports.local.put(POSITIONS_KEY, utf8(JSON.stringify(all)));
    await Promise.all(
      Object.entries(pages).map(async ([name, page]) => {
        const reports = Object.values(all).map((r) => ({ position: r.positions[name] ?? 0, at: r.at }));
        const upTo = trimPoint(reports, page.last, now);
        if (upTo <= page.first) return;
        const stub = this.#replica(name);
        if (stub) replicaValue(await stub.replicaTrim(upTo));
        else this.#own.trim(upTo);
      }),
    );
  }

  async merkle(name: ObjectName, buckets?: number[]): Promise<ReplicaMerkle> {
    const stub = this.#replica(name);
    return stub ? replicaValue(await stub.replicaMerkle(buckets)) : this.#own.merkle(buckets);
  }

  async values(name: ObjectName, keys: string[]): Promise<Record<string, string | null>> {
    const stub = this.#replica(name);
    return stub ? replicaValue(await stub.replicaValues(keys)) : this.#own.values(keys);
  }

  async merkleRoot(): Promise<string> {
    const m = this.#own.merkle();
    return 'root' in m ? m.root : '';
  }

  async keepSecondaryKey(jwk: JsonWebKey): Promise<void> {
    this.ports.local.put(SECONDARY_KEY, await this.#seal().encrypt(utf8(JSON.stringify(jwk)), SEAL_CONTEXT));
  }

  get apiAddr(): string {
    return (this.ports.env.COFFER_API_ADDR ?? '').trim();
  }

  /** The newest sequence per object summed (a cluster-wide counter that only grows), for last_wal. */
  async lastWal(): Promise<number> {
    let total = 0;
    for (const name of await this.objects()) {
      const stub = this.#replica(name);
      total += (stub ? replicaValue(await stub.replicaPull(Number.MAX_SAFE_INTEGER, 1)) : this.#own.pull(Number.MAX_SAFE_INTEGER, 1)).last;
    }
    return total;
  }
}
