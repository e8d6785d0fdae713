// SystemObject: the cluster singleton. Seal state and keyring, mount tables, and the sys/ backend.
// It announces the cluster epoch (seal state + table version) to every token-store shard.

import { DurableObject } from 'cloudflare:workers';
import { dispatch, relativePath, rootOnlyAuthorizer, type WireRequest } from '../src/core/logical';
import { MountService } from '../src/core/mount-service';
import { effectiveTTLs, type MountEntry, type RouteSnapshot } from '../src/core/mounts';
import type { KeyringWire } from '../src/core/keyring';
import { sealFromSecret, type Seal } from '../src/core/seal';
import { SystemCore } from '../src/core/system-core';
import { shardFor } from '../src/core/tokens';
import { errorResult, INITIAL_EPOCH, type Epoch, type WireResult } from '../src/core/wire';
import { fromUtf8, utf8 } from '../src/crypto/encoding';
import { tokenShardCount, type Env } from '../src/env';
import { matchesSpecialPath, type Backend } from '../src/framework/backend';
import { sealedError } from '../src/framework/errors';
import { backendType } from '../src/registry';
import { systemBackend } from '../src/sys';
import { SYS_SEALED_PATHS } from '../src/sys/special-paths';
import { Mutex } from '../src/core/mutex';
import { SqlPhysical } from './sqlite-physical';
import { allTokenShards, mountStub, tokenShardStub } from './stubs';

/** The last epoch announced; raw (not behind the barrier) because it must be readable while sealed. */
const EPOCH_KEY = 'core/epoch';
const EPOCH_RETRY_MS = 1000;

export class SystemObject extends DurableObject<Env> {
  private readonly physical: SqlPhysical;
  private readonly core: SystemCore;
  private readonly mounts: MountService;
  private readonly backend: Backend;
  private readonly writes = new Mutex();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.physical = new SqlPhysical(ctx.storage);
    let seal: Seal | null = null;
    let sealConfigError: string | undefined;
    try {
      seal = sealFromSecret(env.SEAL_KEY);
    } catch (e) {
      sealConfigError = (e as Error).message;
    }
    this.core = new SystemCore(
      this.physical,
      seal,
      {
        createRootToken: async (token) => {
          await tokenShardStub(env, shardFor(token, tokenShardCount(env))).createRoot(token);
        },
        announce: (event) => this.announce(event),
      },
      { devRootToken: env.DEV_ROOT_TOKEN, sealConfigError },
    );
    this.mounts = new MountService(this.core.barrier, {
      provision: (entry) => mountStub(env, entry.uuid).provision(entry),
      destroy: (entry) => mountStub(env, entry.uuid).destroy(),
      publish: (version) => this.publish({ version }),
      typeInfo: backendType,
    });
    this.backend = systemBackend({ core: this.core, mounts: this.mounts, sealCluster: () => this.sealCluster() });
  }

  async handle(wire: WireRequest): Promise<WireResult> {
    const rel = relativePath(wire.path, 'sys/');
    const run = async (): Promise<WireResult> => {
      try {
        if (!matchesSpecialPath(SYS_SEALED_PATHS, rel) && (await this.core.isSealed())) throw sealedError();
        const response = await dispatch(
          this.backend,
          wire,
          { mountPoint: 'sys/', mountType: 'system', mountAccessor: '', mountConfig: effectiveTTLs({ default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false }), mountOptions: {} },
          this.core.barrier.transaction(),
          rootOnlyAuthorizer,
        );
        return { kind: 'ok', response };
      } catch (e) {
        return errorResult(e);
      }
    };
    // Reads run freely; every state change is serialised (unseal progress, init, tables, ...).
    return wire.operation === 'read' || wire.operation === 'list' || wire.operation === 'help' ? run() : this.writes.run(run);
  }

  /** The barrier keyring for the cluster's other objects; null while sealed. */
  async keyring(): Promise<KeyringWire | null> {
    try {
      return (await this.core.get()).toWire();
    } catch {
      return null;
    }
  }

  /** The routes the Worker caches; null while sealed. */
  async routeSnapshot(): Promise<RouteSnapshot | null> {
    if (await this.core.isSealed()) return null;
    return this.mounts.snapshot();
  }

  // ---- epoch announcements ----
  private epoch(): Epoch {
    const raw = this.physical.get(EPOCH_KEY);
    return raw ? (JSON.parse(fromUtf8(raw)) as Epoch) : INITIAL_EPOCH;
  }

  private async publish(change: Partial<Omit<Epoch, 'seq'>>): Promise<void> {
    const current = this.epoch();
    const next: Epoch = { ...current, ...change, seq: current.seq + 1 };
    this.physical.apply([{ key: EPOCH_KEY, value: utf8(JSON.stringify(next)) }]);
    await this.pushEpoch(next);
  }

  /** Delivers the epoch to every shard; a shard that cannot be reached is retried from the alarm. */
  private async pushEpoch(epoch: Epoch): Promise<void> {
    const results = await Promise.allSettled(allTokenShards(this.env).map((shard) => shard.setEpoch(epoch)));
    const failed = results.filter((r) => r.status === 'rejected');
    if (failed.length > 0) {
      console.error(`epoch ${epoch.seq}: ${failed.length} token shard(s) unreachable; retrying`);
      await this.ctx.storage.setAlarm(Date.now() + EPOCH_RETRY_MS);
    }
  }

  override async alarm(): Promise<void> {
    // Idempotent: shards ignore an epoch they already have.
    await this.pushEpoch(this.epoch());
  }

  private async announce(event: 'sealed' | 'unsealed' | 'rotated'): Promise<void> {
    if (event === 'sealed') return await this.publish({ sealed: true });
    if (event === 'unsealed') return await this.publish({ sealed: false, version: (await this.mounts.snapshot()).version });
    await this.dropKeysEverywhere(await this.mountObjects());
  }

  private async mountObjects(): Promise<MountEntry[]> {
    const all = [...(await this.mounts.list('mounts')), ...(await this.mounts.list('auth'))];
    return all.filter((e) => backendType(e.type)?.ownObject);
  }

  private async dropKeysEverywhere(mounts: MountEntry[]): Promise<void> {
    await Promise.allSettled([
      ...allTokenShards(this.env).map((s) => s.dropKeys()),
      ...mounts.map((m) => mountStub(this.env, m.uuid).dropKeys()),
    ]);
  }

  /** sys/seal: every shard learns the cluster is sealed and every object forgets its keys. */
  private async sealCluster(): Promise<void> {
    const mounts = await this.mountObjects();
    await this.core.sealNow();
    this.mounts.forget();
    await this.dropKeysEverywhere(mounts);
  }
}
