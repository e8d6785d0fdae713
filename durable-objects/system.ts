// SystemObject: the cluster singleton. Seal state and keyring, mount tables, and the sys/ backend.
// When the cluster seals or its keyring rotates it tells every other object to drop its keys,
// retrying from its alarm until each one has heard.

import { DurableObject } from 'cloudflare:workers';
import { dispatch, relativePath, type WireRequest } from '../src/core/logical';
import { MountService } from '../src/core/mount-service';
import { effectiveTTLs, findRoute, type RouteEntry } from '../src/core/mounts';
import type { LeaseOp } from '../src/sys/leases';
import type { KeyringWire } from '../src/core/keyring';
import { sealFromSecret, type Seal } from '../src/core/seal';
import { SystemCore } from '../src/core/system-core';
import { authorizerFor } from '../src/core/acl-authorizer';
import { AclCache } from '../src/core/acl-cache';
import { PolicyStore } from '../src/core/policy-store';
import type { TokenMountConfig } from '../src/auth/token/ops';
import { shardFor } from '../src/core/tokens';
import { errorResult, type WireResult } from '../src/core/wire';
import { fromUtf8, utf8 } from '../src/crypto/encoding';
import { tokenShardCount, type Env } from '../src/env';
import { matchesSpecialPath, type AuthContext, type Backend, type LogicalResponse } from '../src/framework/backend';
import { badRequest, CofferError, sealedError } from '../src/framework/errors';
import { availableType, backendType } from '../src/registry';
import { systemBackend } from '../src/sys';
import { SYS_SEALED_PATHS } from '../src/sys/special-paths';
import { Mutex } from '../src/core/mutex';
import { formatRFC3339Nano } from '../src/framework/duration';
import { storeWrapped } from '../src/http/wrapping';
import { SqlPhysical } from './sqlite-physical';
import { mountStub, tokenShardStub, wrapHook, wrapStore } from './stubs';

/**
 * Objects still to be notified (drop keys, drop policies): raw (not behind the barrier), because
 * the list must be readable after the seal. It holds only object names, nothing secret.
 */
const PENDING_DROPS_KEY = 'core/pending-key-drops';
const RETRY_MS = 1000;

/** An object to notify: a token shard by number, or a mount by uuid. */
type Target = { shard: number } | { mount: string };
/** What to tell it: drop cached keys (seal, rotation), or drop compiled policies. */
type Message = 'dropKeys' | 'policiesChanged';
type Pending = Target & { message: Message };

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
      revokeLeases: (entry) => mountStub(env, entry.uuid).revokeAllLeases(),
      destroy: (entry) => mountStub(env, entry.uuid).destroy(),
      typeInfo: (type) => availableType(type, env.COFFER_TEST_ENGINES === '1'),
    });
    this.policies = new PolicyStore(this.core.barrier);
    this.acls = new AclCache((names) => this.policies.texts(names));
    this.backend = systemBackend({
      core: this.core,
      mounts: this.mounts,
      sealCluster: () => this.sealCluster(),
      leaseCall: (op) => this.leaseCall(op),
      policies: this.policies,
      policiesChanged: () => this.policiesChanged(),
      tokenPolicies: (ref) => this.tokenPolicies(ref),
      capabilities: async (policies, paths) => {
        const acl = await this.acls.aclFor({ policies, root: policies.includes('root') } as AuthContext);
        return Object.fromEntries(paths.map((p) => [p.replace(/^\//, ''), acl.capabilities(p.replace(/^\//, ''))]));
      },
      sudoOn: async (auth, path) => {
        if (!auth) return false;
        return (await this.acls.aclFor(auth)).check({ operation: 'update', path, data: {}, wrapTTL: 0 }).sudo;
      },
      canSee: async (auth, prefix) => (auth ? (await this.acls.aclFor(auth)).hasAccessUnder(prefix) : false),
      wrapping: {
        unwrap: (token) => this.shardOf(token).unwrap(token),
        peek: (token) => this.shardOf(token).peekWrapped(token),
        store: (record) => storeWrapped(record, wrapStore(env)),
        revoke: async (token) => {
          await this.shardOf(token).revokeToken(token);
        },
        now: () => formatRFC3339Nano(Date.now()),
      },
    });
  }

  private readonly policies: PolicyStore;
  private readonly acls: AclCache;

  /** Policy texts for the other objects' ACL caches; null while sealed. */
  async policyTexts(names: string[]): Promise<Record<string, string | null> | null> {
    if (await this.core.isSealed()) return null;
    return this.policies.texts(names);
  }

  private async policiesChanged(): Promise<void> {
    this.acls.clear();
    await this.notify(await this.everyObject(), 'policiesChanged');
  }

  private shardOf(token: string) {
    return tokenShardStub(this.env, shardFor(token, tokenShardCount(this.env)));
  }

  private async tokenPolicies(ref: { token: string } | { accessor: string }): Promise<string[] | null> {
    const n = tokenShardCount(this.env);
    if ('token' in ref) {
      if (!ref.token) return null;
      return (await tokenShardStub(this.env, shardFor(ref.token, n)).resolve(ref.token)).auth?.policies ?? null;
    }
    if (!ref.accessor) return null;
    return (await tokenShardStub(this.env, shardFor(ref.accessor, n)).lookupAccessor(ref.accessor))?.policies ?? null;
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
          await authorizerFor(this.acls, wire.auth, wire.wrapTTL),
          { wrap: wrapHook(wrapStore(this.env)) },
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

  // ---- leases live with the mounts that issued them ----
  private async leaseCall(op: LeaseOp): Promise<LogicalResponse> {
    const routes = await this.mounts.routes();
    const objects = routes.filter((r) => backendType(r.type)?.ownObject);
    const unwrap = (r: WireResult): LogicalResponse => {
      if (r.kind === 'ok') return r.response;
      if (r.kind === 'error') throw new CofferError(r.status, r.errors, r.extra);
      throw badRequest('invalid lease');
    };
    if (op.op === 'irrevocable') {
      const all = await Promise.all(objects.map(async (r) => unwrap(await mountStub(this.env, r.uuid).leaseIrrevocable()).data?.leases as unknown[]));
      const leases = all.flat();
      return { data: { leases, lease_count: leases.length } };
    }
    if (op.op === 'tidy') {
      await Promise.all(objects.map((r) => mountStub(this.env, r.uuid).leaseTidy()));
      return {};
    }
    const target = op.op === 'revoke-prefix' || op.op === 'list' ? op.prefix : op.id;
    const route = findRoute(objects, target);
    if (!route) {
      if (op.op === 'revoke-prefix') return {};
      if (op.op === 'list') return { data: { keys: [] } };
      throw badRequest('invalid lease');
    }
    const stub = mountStub(this.env, route.uuid);
    switch (op.op) {
      case 'lookup':
        return unwrap(await stub.leaseLookup(op.id));
      case 'renew':
        return unwrap(await stub.leaseRenew(op.id, op.increment));
      case 'revoke':
        return unwrap(await stub.leaseRevoke(op.id, op.force));
      case 'revoke-prefix':
        return unwrap(await stub.leaseRevokePrefix(op.prefix, op.force));
      case 'list':
        return unwrap(await stub.leaseList(op.prefix));
    }
  }

  // ---- telling the other objects to drop their keys ----
  private pendingNotices(): Pending[] {
    const raw = this.physical.get(PENDING_DROPS_KEY);
    return raw ? (JSON.parse(fromUtf8(raw)) as Pending[]) : [];
  }

  /** Notifies every target; the ones that fail stay pending and are retried from the alarm. */
  private async notify(targets: Target[], message: Message | null): Promise<void> {
    const all = [...this.pendingNotices(), ...(message ? targets.map((t) => ({ ...t, message })) : [])];
    this.physical.apply([{ key: PENDING_DROPS_KEY, value: utf8(JSON.stringify(all)) }]);
    const results = await Promise.allSettled(
      all.map((t) => {
        const stub = 'shard' in t ? tokenShardStub(this.env, t.shard) : mountStub(this.env, t.mount);
        return t.message === 'policiesChanged' ? stub.policiesChanged() : stub.dropKeys();
      }),
    );
    const failed = all.filter((_, i) => results[i].status === 'rejected');
    this.physical.apply([{ key: PENDING_DROPS_KEY, value: failed.length ? utf8(JSON.stringify(failed)) : null }]);
    if (failed.length > 0) {
      console.error(`${failed.length} object(s) could not be notified; retrying`);
      await this.ctx.storage.setAlarm(Date.now() + RETRY_MS);
    }
  }

  private dropKeys(targets: Target[]): Promise<void> {
    return this.notify(targets, 'dropKeys');
  }

  override async alarm(): Promise<void> {
    await this.notify([], null);
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
