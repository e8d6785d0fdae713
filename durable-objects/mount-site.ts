// The parts a MountObject builds once and shares with every entry it hosts (MountSite): token
// validation under leases from the token's shard, the ACL and identity caches, the audit broker,
// login issuance and response wrapping.

import { AclCache } from '../src/core/acl/cache';
import { IdentityCache } from '../src/core/identity/cache';
import { LoginIdentityCache } from '../src/core/identity/login-cache';
import type { MetricsRegistry } from '../src/core/metrics/registry';
import type { MountEntry } from '../src/core/mounts/table';
import type { Mutex } from '../src/core/mutex';
import { shardFor } from '../src/core/tokens/entry';
import { TokenValidator } from '../src/core/tokens/validator';
import { CachedMountDirectory } from '../src/engines/identity/mount-directory';
import { wrapHook } from '../src/pipeline/wrapping';
import { ManagedKeyEntryCache, managedKeyAccess } from '../src/managed-keys/access';
import type { IdentityEndpoint } from '../src/rpc/contracts';
import { tokenShardCount, transitBatchBudgetMs, type Env } from '../src/rpc/env';
import { systemStub, tokenShardStub, wrapStore } from '../src/rpc/stubs';
import { remoteAuditBroker } from './audit';
import type { MountSite } from './hosted-mount';
import { IdentityClient } from './identity-client';
import { managedKeyDeps } from './managed-key-deps';
import type { ObjectStorage } from './object-storage';

/** What the site needs of its object. */
export interface MountObjectPorts {
  entry(): Promise<MountEntry | null>;
  /** The object itself, as the identity endpoint when it hosts the identity mount. */
  self: IdentityEndpoint;
  wakeAt(at: number): Promise<void>;
  announceIdentityChange(): Promise<void>;
}

export interface MountParts {
  site: MountSite;
  validator: TokenValidator;
  loginIdentities: LoginIdentityCache;
  /** Managed key entries fetched from the SystemObject (they hold PINs and cloud secrets). */
  managedKeyEntries: ManagedKeyEntryCache;
}

export function mountSite(env: Env, storage: ObjectStorage, writes: Mutex, metrics: MetricsRegistry, object: MountObjectPorts): MountParts {
  const holder = async () => (await object.entry())?.uuid ?? '';
  const shardOf = (tokenOrAccessor: string) => tokenShardStub(env, shardFor(tokenOrAccessor, tokenShardCount(env)));
  const validator = new TokenValidator({
    keys: storage.keyring,
    leaseToken: async (token) => shardOf(token).lease(token, await holder()),
    leaseAccessor: async (accessor) => shardOf(accessor).leaseAccessor(accessor, await holder()),
  });
  const identity = new IdentityClient(env, { self: async () => ((await object.entry())?.type === 'identity' ? object.self : null) });
  const entityViews = new IdentityCache(identity.views);
  const loginIdentities = new LoginIdentityCache((input) => identity.login(input));
  const wrap = wrapHook(wrapStore(env));
  const managedKeyEntries = new ManagedKeyEntryCache((ref) => systemStub(env).managedKeyEntry(ref));
  const site: MountSite = {
    storage,
    writes,
    acls: new AclCache((names) => systemStub(env).policyTexts(names), { identity: entityViews, governing: () => systemStub(env).governingPolicies() }),
    caller: (token, wire) => validator.validate(token, wire.clientIP),
    audit: remoteAuditBroker(env, metrics),
    backendHost: {
      // Auth mounts by accessor, for the identity engine's aliases.
      authMounts: new CachedMountDirectory(() => systemStub(env).authMounts()),
      googleAdminApi: env.GOOGLE_ADMIN_API_URL,
      microsoftGraph: env.MICROSOFT_GRAPH_URL,
      transitBatchBudgetMs: transitBatchBudgetMs(env),
      awsEnv: {
        AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID,
        AWS_SECRET_ACCESS_KEY: env.AWS_SECRET_ACCESS_KEY,
        AWS_SESSION_TOKEN: env.AWS_SESSION_TOKEN,
        AWS_REGION: env.AWS_REGION,
        AWS_DEFAULT_REGION: env.AWS_DEFAULT_REGION,
      },
      managedKeys: managedKeyAccess(managedKeyEntries.lookup, managedKeyDeps(env)),
    },
    login: { identity: (input) => loginIdentities.resolve(input), issue: (token, partial) => shardOf(token).issueLogin(token, partial), metrics },
    wrap: async (response, wire, mount) => {
      // The wrapped copy is stored elsewhere: only once what it reports is written here.
      await storage.grouped.durable();
      return wrap(response, wire, mount);
    },
    tokenData: new Set(),
    liveWriteAhead: new Set(),
    shardOf,
    entityView: async (entityId) => {
      const context = (await entityViews.viewOf(entityId))?.context;
      return context?.entity ? { ...context.entity, groups: context.groups } : null;
    },
    wakeAt: (at) => object.wakeAt(at),
    announceIdentityChange: () => object.announceIdentityChange(),
  };
  return { site, validator, loginIdentities, managedKeyEntries };
}
