// The SystemObject's side of DR replication: the cluster's DR state (kept in LocalState, sealed
// by the deployment's seal, since a secondary's replicated storage is the primary's), recording
// switched on and off in every object, and the pages, Merkle buckets and values a secondary pulls.

import { fromUtf8, utf8 } from '../src/crypto/encoding';
import { badRequest, CofferError } from '../src/framework/errors';
import type { Seal } from '../src/core/barrier/seal';
import { decryptActivation, isEncryptedActivation, parsePayload } from '../src/core/replication/activation';
import { followOnce, type FollowerPorts } from '../src/core/replication/follower';
import {
  DR_DISABLED, authenticateSecondary, credentialHash, disableSecondary, enableSecondary, heartbeat, promoteSecondary, recordSync, type ActivationPayload, type DrPrimary,
  type DrState, type PrimaryLink,
} from '../src/core/replication/state';
import { OPERATION_TOKEN_LENGTH } from '../src/core/barrier/seal-state';
import { wrappingJwtAddress } from '../src/core/tokens/wrapping-jwt';
import { randomBase62 } from '../src/crypto/random';
import { constantTimeEqual } from '../src/crypto/timing';
import { DEFAULT_TRIM, trimPoint, type ObjectName, type PullReply, type WirePage } from '../src/core/replication/stream';
import type { ReplicaContract, ReplicaMerkle } from '../src/rpc/contracts';
import type { DrServices } from '../src/sys/context';
import { intVar, tokenShardCount, type Env } from '../src/rpc/env';
import { allTokenShards, auditStub, mountStub } from '../src/rpc/stubs';
import { replicaValue, type ReplicaOps } from './replica-ops';
import type { LocalState } from './replication-log';

const STATE_KEY = 'dr-state';
const POSITIONS_KEY = 'dr-positions';
const SECONDARY_KEY = 'dr-secondary-key';
/** A secondary's view of the primary: the objects it has, and the positions summed. */
const FOLLOW_KEY = 'dr-follow';
const OPERATION_TOKEN_KEY = 'dr-operation-token';
/** Entries asked for per object in one round. */
const ROUND_LIMIT = 1000;

interface Following {
  objects: ObjectName[];
  lastRemoteWal: number;
  /** An initial sync of every object has completed (promote's safety check). */
  synced: boolean;
  /** secondary/reindex asked for a Merkle comparison of every object (the next round does it). */
  reindex?: boolean;
  /** When the last reindex finished (unix seconds), for last_reindex_epoch. */
  reindexedAt?: number;
}
const SEAL_CONTEXT = 'dr-local-state';

/** What each secondary last reported: its positions per object, and when. */
type Positions = Record<string, { at: number; positions: Record<ObjectName, number> }>;

export interface ReplicationPorts {
  /** The SystemObject's own replica operations (the ones its replica* RPCs use). */
  own: ReplicaOps;
  local: LocalState;
  seal: Seal | null;
  env: Env;
  /** The cluster's mount objects and audit devices now (uuids). */
  mounts(): Promise<string[]>;
  audits(): Promise<string[]>;
  /** Asks for the object's alarm at `at` (or earlier, if one is already due sooner). */
  wakeAt(at: number): Promise<void>;
  /** Drops what the SystemObject holds in memory of its storage (after promotion replaced it). */
  refresh(): Promise<void>;
}

export class SystemReplication implements DrServices {
  readonly #own: ReplicaOps;
  #cached: DrState | null = null;

  constructor(private readonly ports: ReplicationPorts) {
    this.#own = ports.own;
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
    if (kind === 'shard') {
      const shard = allTokenShards(this.ports.env)[Number(id)];
      // Tokens live on the shard their hash picks: both clusters must have as many.
      if (!shard) throw new Error(`the primary has token shard ${id}, this cluster fewer: set TOKEN_SHARDS to the primary's`);
      return shard as unknown as ReplicaContract;
    }
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
        const upTo = trimPoint(reports, page.last, now, { ...DEFAULT_TRIM, maxEntries: intVar(this.ports.env.DR_LOG_MAX_ENTRIES, DEFAULT_TRIM.maxEntries) });
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

  get tokenShards(): number {
    return tokenShardCount(this.ports.env);
  }

  // ---- the secondary's side ----

  #following(): Following {
    const raw = this.ports.local.get(FOLLOW_KEY);
    return raw ? (JSON.parse(fromUtf8(raw)) as Following) : { objects: [], lastRemoteWal: 0, synced: false };
  }

  #setFollowing(f: Following): void {
    this.ports.local.put(FOLLOW_KEY, utf8(JSON.stringify(f)));
  }

  async lastRemoteWal(): Promise<number> {
    return this.#following().lastRemoteWal;
  }

  synced(): boolean {
    return this.#following().synced;
  }

  /**
   * What an activation token says: an encrypted one opens with the key generate-public-key made;
   * a response-wrapped one is unwrapped at the primary, at the address its JWT names unless
   * `primaryApiAddr` says otherwise (an opaque wrapping token needs `primaryApiAddr`).
   */
  async activation(token: string, primaryApiAddr: string): Promise<ActivationPayload> {
    const payload = await this.#openActivation(token, primaryApiAddr);
    // Tokens live on the shard their hash names: with another count, the primary's would be lost.
    if (payload.token_shards !== this.tokenShards) {
      throw badRequest(`the primary has ${payload.token_shards} token shards and this cluster ${this.tokenShards}: set TOKEN_SHARDS to ${payload.token_shards} here, then use a new activation token`);
    }
    return payload;
  }

  async #openActivation(token: string, primaryApiAddr: string): Promise<ActivationPayload> {
    if (isEncryptedActivation(token)) {
      const blob = this.ports.local.get(SECONDARY_KEY);
      if (!blob) throw badRequest('no secondary key: call secondary/generate-public-key first and give the primary its public key');
      const jwk = JSON.parse(fromUtf8(await this.#seal().decrypt(blob, SEAL_CONTEXT))) as JsonWebKey;
      const payload = await decryptActivation(token, jwk);
      return primaryApiAddr ? { ...payload, primary_api_addr: primaryApiAddr } : payload;
    }
    primaryApiAddr ||= wrappingJwtAddress(token);
    if (!primaryApiAddr) throw badRequest('primary_api_addr is required: the activation token does not say where the primary is');
    let res: Response;
    try {
      res = await fetch(`${primaryApiAddr.replace(/\/+$/, '')}/v1/sys/wrapping/unwrap`, { method: 'POST', headers: { 'X-Vault-Token': token } });
    } catch (e) {
      throw badRequest(`the primary at ${primaryApiAddr} could not be reached: ${e instanceof Error ? e.message : String(e)}`);
    }
    const body = (await res.json().catch(() => null)) as { data?: unknown; errors?: string[] } | null;
    if (!res.ok || !body) throw badRequest(`the activation token could not be unwrapped at ${primaryApiAddr}: ${body?.errors?.join('; ') ?? `HTTP ${res.status}`}`);
    return { ...parsePayload(body.data), primary_api_addr: primaryApiAddr };
  }

  /** secondary/enable: the new state, and every replicated row of every object erased. */
  async becomeSecondary(payload: ActivationPayload, now = Date.now()): Promise<void> {
    const next = enableSecondary(await this.state(), payload, { now });
    const objects = await this.objects();
    await this.recording(false);
    await Promise.all(
      objects.map(async (name) => {
        const stub = this.#replica(name);
        if (!stub) return this.#own.wipe();
        replicaValue(await stub.replicaWipe());
        // Its caches (tokens, keys, entries) described the erased state.
        await stub.replicaRestart(false).catch(() => undefined);
      }),
    );
    await this.ports.refresh();
    this.#setFollowing({ objects: [], lastRemoteWal: 0, synced: false });
    await this.save(next);
    await this.ports.wakeAt(Date.now());
  }

  /**
   * One round of following the primary (the alarm calls this while a secondary has a primary).
   * Returns whether more is waiting (then the next round should come at once), 'failed' when the
   * primary could not be followed, or null when this cluster follows nobody.
   */
  async followRound(now = Date.now()): Promise<boolean | null | 'failed'> {
    const state = await this.state();
    if (state.mode !== 'secondary' || !state.primary) return null;
    const following = this.#following();
    try {
      // A reindex asks about no object by position: each is compared by Merkle tree instead.
      const round = await followOnce(this.#followerPorts(state.primary), following.reindex ? [] : following.objects, ROUND_LIMIT);
      // Promoted, disabled or relinked meanwhile: this round's bookkeeping is no longer wanted.
      if ((await this.state()) !== state) return null;
      // Caught up: every page reached what its object had recorded when the primary answered.
      const caughtUp = !round.more && round.repaired === 0;
      this.#setFollowing({
        objects: round.objects,
        lastRemoteWal: round.lastRemoteWal,
        synced: following.synced || caughtUp,
        reindexedAt: following.reindex ? Math.floor(now / 1000) : following.reindexedAt,
      });
      await this.save(recordSync(state, { sync: caughtUp ? 'stream-wals' : round.repaired > 0 ? 'merkle-sync' : 'stream-wals', contactedAt: now }));
      // Under steady writes every round applies something; rounds follow each other at once only
      // while the primary has more than a round takes (fewer, fuller pulls cost both sides less).
      return round.more;
    } catch (e) {
      console.warn(`DR: following ${state.primary.apiAddr} failed: ${e instanceof Error ? e.message : String(e)}`);
      if ((await this.state()) !== state) return null;
      await this.save(recordSync(state, { sync: 'connecting' }));
      return 'failed';
    }
  }

  #followerPorts(link: PrimaryLink): FollowerPorts {
    const call = async <T>(path: string, body: Record<string, unknown>): Promise<T> => {
      const res = await fetch(`${link.apiAddr.replace(/\/+$/, '')}/v1/sys/replication/dr/internal/${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ secondary_id: link.secondaryId, credential: link.credential, api_address: this.apiAddr, ...body }),
      });
      const reply = (await res.json().catch(() => null)) as { data?: T; errors?: string[] } | null;
      if (!res.ok || !reply?.data) throw new Error(`${path}: HTTP ${res.status} ${reply?.errors?.join('; ') ?? ''}`);
      return reply.data;
    };
    const local = (name: ObjectName) => this.#replica(name);
    return {
      pull: (positions, limit) => call<PullReply>('pull', { positions, limit }),
      remoteMerkle: (object, buckets) => call<ReplicaMerkle>('merkle', { object, ...(buckets ? { buckets } : {}) }),
      remoteValues: async (object, keys) => (await call<{ values: Record<string, string | null> }>('values', { object, keys })).values,
      position: async (name) => {
        const stub = local(name);
        return stub ? replicaValue(await stub.replicaPosition(name)) : this.#own.position(name);
      },
      apply: async (name, page) => {
        const stub = local(name);
        return stub ? replicaValue(await stub.replicaApply(name, page)) : this.#own.apply(name, page);
      },
      merkle: (name, buckets) => this.merkle(name, buckets),
      repair: async (name, values, resumeAfter) => {
        const stub = local(name);
        if (stub) replicaValue(await stub.replicaRepair(name, values, resumeAfter));
        else this.#own.repair(name, values, resumeAfter);
      },
      wipe: async (name) => {
        const stub = local(name);
        if (stub) replicaValue(await stub.replicaWipe());
        else this.#own.wipe();
      },
    };
  }

  /** secondary/reindex: the next round compares every object with the primary's by Merkle tree. */
  async reindex(): Promise<void> {
    this.#setFollowing({ ...this.#following(), reindex: true });
    await this.ports.wakeAt(Date.now());
  }

  lastReindexEpoch(): number {
    return this.#following().reindexedAt ?? 0;
  }

  /** secondary/update-primary: follow another primary of the same cluster (no wipe), or none. */
  async relink(next: DrState): Promise<void> {
    await this.save(next);
    if (next.mode === 'secondary' && next.primary) await this.ports.wakeAt(Date.now());
  }

  /** A demoted primary: its objects serve nothing and run no timed work, as a secondary's. */
  async followAll(): Promise<void> {
    await Promise.all(
      (await this.objects()).map(async (name) => {
        const stub = this.#replica(name);
        if (stub) replicaValue(await stub.replicaControl('follow'));
        else this.#own.control('follow');
      }),
    );
  }

  // ---- DR operation tokens and promotion ----

  /** Mints a DR operation token (the generation attempt completed); only its hash is kept. */
  async issueOperationToken(): Promise<string> {
    const token = `hvd.${randomBase62(OPERATION_TOKEN_LENGTH - 4)}`;
    this.ports.local.put(OPERATION_TOKEN_KEY, utf8(credentialHash(token)));
    return token;
  }

  /** Refuses (400) unless `token` is the cluster's DR operation token. */
  checkOperationToken(token: string): void {
    const stored = this.ports.local.get(OPERATION_TOKEN_KEY);
    if (!token) throw badRequest('missing dr_operation_token');
    if (!stored || !constantTimeEqual(utf8(credentialHash(token)), stored)) throw badRequest('invalid DR operation token');
  }

  revokeOperationToken(token: string): void {
    this.checkOperationToken(token);
    this.ports.local.put(OPERATION_TOKEN_KEY, null);
  }

  /**
   * secondary/promote: every object leads again (its timed work re-armed, its memory of the old
   * state dropped by a restart), records its changes, and the cluster serves as the primary.
   */
  async promote(input: { force: boolean; primaryClusterAddr: string }): Promise<void> {
    const next = promoteSecondary(await this.state(), { force: input.force, primaryClusterAddr: input.primaryClusterAddr, synced: this.synced() });
    await this.#release(next);
    await this.recording(true);
  }

  /** secondary/disable: the cluster stops following and serves its (replicated) data on its own. */
  async leaveSecondary(): Promise<void> {
    await this.#release(disableSecondary(await this.state()));
  }

  /** Every object leads again (timed work re-armed, caches of the old state dropped by a restart). */
  async #release(next: DrState): Promise<void> {
    // The mount and audit tables are read from the replicated storage, not from memory.
    await this.ports.refresh();
    const objects = await this.objects();
    await Promise.all(
      objects.map(async (name) => {
        const stub = this.#replica(name);
        if (!stub) return this.#own.lead();
        // The object restarts to drop its caches: the call fails by design.
        await stub.replicaRestart(true).catch(() => undefined);
      }),
    );
    await this.ports.refresh();
    await this.save(next);
    this.#setFollowing({ objects: [], lastRemoteWal: 0, synced: false });
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
