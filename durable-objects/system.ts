// SystemObject: the cluster singleton. Seal state and keyring, mount tables, and the sys/ backend.
// When the cluster seals or its keyring rotates it tells every other object to drop its keys,
// retrying from its alarm until each one has heard.

import { DurableObject } from 'cloudflare:workers';
import { dispatch, relativePath, rootOnlyAuthorizer, type WireRequest } from '../src/core/logical';
import { MountService } from '../src/core/mount-service';
import { effectiveTTLs, type RouteEntry } from '../src/core/mounts';
import type { KeyringWire } from '../src/core/keyring';
import { sealFromSecret, type Seal } from '../src/core/seal';
import { SystemCore } from '../src/core/system-core';
import type { TokenMountConfig } from '../src/auth/token/ops';
import { shardFor } from '../src/core/tokens';
import { errorResult, type WireResult } from '../src/core/wire';
import { fromUtf8, utf8 } from '../src/crypto/encoding';
import { tokenShardCount, type Env } from '../src/env';
import { matchesSpecialPath, type Backend } from '../src/framework/backend';
import { sealedError } from '../src/framework/errors';
import { backendType } from '../src/registry';
import { systemBackend } from '../src/sys';
import { SYS_SEALED_PATHS } from '../src/sys/special-paths';
import { Mutex } from '../src/core/mutex';
import { SqlPhysical } from './sqlite-physical';
import { mountStub, tokenShardStub } from './stubs';

/**
 * Objects still to be told to drop their keys: raw (not behind the barrier), because the list must
 * be readable after the seal. It holds only object names, nothing secret.
 */
const PENDING_DROPS_KEY = 'core/pending-key-drops';
const RETRY_MS = 1000;

/** An object to notify: a token shard by number, or a mount by uuid. */
type Target = { shard: number } | { mount: string };

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
        keyringRotated: async () => this.dropKeys(await this.everyObject()),
      },
      { devRootToken: env.DEV_ROOT_TOKEN, sealConfigError },
    );
    this.mounts = new MountService(this.core.barrier, {
      provision: (entry) => mountStub(env, entry.uuid).provision(entry),
      destroy: (entry) => mountStub(env, entry.uuid).destroy(),
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

  /** The auth/token/ mount's effective settings, for token-store shards creating tokens. */
  async tokenMountConfig(): Promise<TokenMountConfig> {
    const entry = await this.mounts.get('auth', 'token');
    const ttls = effectiveTTLs(entry?.config ?? { default_lease_ttl: 0, max_lease_ttl: 0, force_no_cache: false });
    return { ...ttls, tokenType: entry?.config.token_type || 'default-service' };
  }

  /** The routes the Worker caches; null while sealed. */
  async routes(): Promise<RouteEntry[] | null> {
    if (await this.core.isSealed()) return null;
    return this.mounts.routes();
  }

  // ---- telling the other objects to drop their keys ----
  private pendingDrops(): Target[] {
    const raw = this.physical.get(PENDING_DROPS_KEY);
    return raw ? (JSON.parse(fromUtf8(raw)) as Target[]) : [];
  }

  /** Notifies every target; the ones that fail stay pending and are retried from the alarm. */
  private async dropKeys(targets: Target[]): Promise<void> {
    const all = [...this.pendingDrops(), ...targets];
    this.physical.apply([{ key: PENDING_DROPS_KEY, value: utf8(JSON.stringify(all)) }]);
    const results = await Promise.allSettled(
      all.map((t) => ('shard' in t ? tokenShardStub(this.env, t.shard) : mountStub(this.env, t.mount)).dropKeys()),
    );
    const failed = all.filter((_, i) => results[i].status === 'rejected');
    this.physical.apply([{ key: PENDING_DROPS_KEY, value: failed.length ? utf8(JSON.stringify(failed)) : null }]);
    if (failed.length > 0) {
      console.error(`${failed.length} object(s) could not be told to drop their keys; retrying`);
      await this.ctx.storage.setAlarm(Date.now() + RETRY_MS);
    }
  }

  override async alarm(): Promise<void> {
    await this.dropKeys([]);
  }

  private async everyObject(): Promise<Target[]> {
    const shards = Array.from({ length: tokenShardCount(this.env) }, (_, shard) => ({ shard }));
    return [...shards, ...(await this.mounts.objectEntries()).map((e) => ({ mount: e.uuid }))];
  }

  /** sys/seal: seal, then make every object forget its keys, token leases and cached entries. */
  private async sealCluster(): Promise<void> {
    const targets = await this.everyObject();
    await this.core.sealNow();
    this.mounts.forget();
    await this.dropKeys(targets);
  }
}
