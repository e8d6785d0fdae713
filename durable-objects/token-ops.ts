// What the token backend (auth/token/*) needs from the shard that serves the request: other
// shards by RPC (a token's shard is a function of the token), roles on shard 0, the auth mount
// of a login token for its renewal limits, and the identity mount for entity aliases.

import type { Caller, TokenMountConfig, TokenOps } from '../src/auth/token/ops';
import type { IdentityCache } from '../src/core/identity/cache';
import type { MetricsRegistry } from '../src/core/metrics/registry';
import { countTokenCreation } from '../src/core/metrics/requests';
import { findRoute } from '../src/core/mounts/table';
import { BATCH_TOKEN_PREFIX, newServiceTokenFor, shardFor, type TokenEntry } from '../src/core/tokens/entry';
import type { TokenShard } from '../src/core/tokens/shard';
import type { LogicalRequest, RenewLimits } from '../src/framework/backend';
import { badRequest, CofferError } from '../src/framework/errors';
import type { TokenStoreContract } from '../src/rpc/contracts';
import type { Env } from '../src/rpc/env';
import { mountStub, systemStub } from '../src/rpc/stubs';
import type { IdentityClient } from './identity-client';

const TOKEN_MOUNT_POINT = 'auth/token/';

type Issued = { token: string; entry: TokenEntry };

/** A shard as this one reaches it: itself directly, any other by RPC. */
export type Peer = Pick<
  TokenStoreContract,
  'lookupToken' | 'lookupAccessor' | 'revokeToken' | 'revokeAccessor' | 'revokeOrphan' | 'renewAccessor' | 'getRole' | 'putRole' | 'deleteRole' | 'listRoles' | 'accessors' | 'tidy'
>;

/** The serving shard's parts the operations use. */
export interface TokenOpsSite {
  env: Env;
  shard: TokenShard;
  /** This shard's number, of `shards`. */
  shardNo: number;
  shards: number;
  peer(n: number): Peer;
  /** Settles once the grouped writes staged so far are in SQLite. */
  durable(): Promise<void> | undefined;
  metrics: MetricsRegistry;
  identity: IdentityCache;
  identityClient: IdentityClient;
  mountConfig(): Promise<TokenMountConfig>;
  /** The validated caller of a request, by the AuthContext it carries. */
  caller(req: LogicalRequest): Caller | null;
  issueBatch(partial: Omit<TokenEntry, 'accessor'>): Promise<Issued>;
  openBatch(token: string): Promise<TokenEntry | null>;
}

export function shardTokenOps(site: TokenOpsSite): TokenOps {
  const { shard, shards } = site;
  const peerOf = (tokenOrAccessor: string) => site.peer(shardFor(tokenOrAccessor, shards));
  const allShards = () => Array.from({ length: shards }, (_, n) => site.peer(n));

  /**
   * auth/token/create of a service token (a child of the caller, which lives on this shard). A
   * drawn token is drawn for this shard and written with the link to its parent in one grouped
   * batch: the reply waits until that is durable. A chosen ID lives wherever it hashes.
   */
  const createService = async (partial: Omit<TokenEntry, 'accessor'>, id: string, caller: Caller): Promise<Issued> => {
    if (!id) {
      const token = newServiceTokenFor(site.shardNo, shards);
      const entry: TokenEntry = { ...partial, accessor: shard.tokens.accessorFor(token) };
      await shard.createHere(token, entry, caller.entry.accessor === entry.parent ? caller.foundAt : undefined);
      await site.durable();
      return { token, entry };
    }
    const entry: TokenEntry = { ...partial, accessor: shard.tokens.accessorFor(id) };
    if (await peerOf(id).lookupToken(id)) throw badRequest('cannot create a token with a duplicate ID');
    await shard.create(id, entry);
    return { token: id, entry };
  };

  /**
   * For a token an auth method's login issued: that method's current limits (its role re-read) and
   * its mount's maximum TTL. Null for tokens of auth/token/. Throws when the method refuses.
   */
  const loginRenewal = async (entry: TokenEntry): Promise<{ limits: RenewLimits; mountMaxTTL: number } | null> => {
    if (!entry.path.startsWith('auth/') || entry.path.startsWith('auth/token/')) return null;
    const routes = await systemStub(site.env).routes();
    const route = findRoute(Array.isArray(routes) ? routes : [], entry.path);
    // The method's mount is gone: its tokens were revoked with it, or are about to be.
    if (route?.table !== 'auth') throw badRequest('invalid token');
    const reply = await mountStub(site.env, route.uuid).renewLogin(route.prefix, entry.role, entry.policies);
    if (!reply.ok) throw new CofferError(reply.status, reply.errors);
    return { limits: reply.limits, mountMaxTTL: reply.mountMaxTTL };
  };

  return {
    caller: (req) => site.caller(req),
    mountConfig: () => site.mountConfig(),
    issue: async (partial, id, caller) => {
      const issued = partial.type === 'batch' ? await site.issueBatch(partial) : await createService(partial, id, caller);
      countTokenCreation(site.metrics, { authMethod: 'token', mountPoint: TOKEN_MOUNT_POINT, ttl: issued.entry.ttl, type: issued.entry.type });
      return issued;
    },
    lookup: async (token) => (token.startsWith(BATCH_TOKEN_PREFIX) ? site.openBatch(token) : peerOf(token).lookupToken(token)),
    lookupAccessor: (accessor) => peerOf(accessor).lookupAccessor(accessor),
    revokeToken: (token) => peerOf(token).revokeToken(token),
    revokeAccessor: (accessor) => peerOf(accessor).revokeAccessor(accessor),
    revokeOrphan: (token) => peerOf(token).revokeOrphan(token),
    renewAccessor: async (accessor, increment, known) => {
      const entry = known ?? (await peerOf(accessor).lookupAccessor(accessor));
      const login = entry ? await loginRenewal(entry) : null;
      const mountMaxTTL = login?.mountMaxTTL ?? (await site.mountConfig()).maxLeaseTTL;
      const reply = await peerOf(accessor).renewAccessor(accessor, increment, mountMaxTTL, login?.limits);
      if (!reply.ok) throw new CofferError(reply.status, reply.errors);
      return { entry: reply.entry, ttl: reply.ttl, warnings: reply.warnings };
    },
    role: (name) => site.peer(0).getRole(name),
    putRole: (role) => site.peer(0).putRole(role),
    deleteRole: (name) => site.peer(0).deleteRole(name),
    roles: () => site.peer(0).listRoles(),
    accessors: async () => (await Promise.all(allShards().map((s) => s.accessors()))).flat().sort(),
    tidy: async () => {
      await Promise.all(allShards().map((s) => s.tidy()));
    },
    identityPolicies: async (entityId) => (await site.identity.viewOf(entityId))?.policies ?? [],
    entityForAlias: async (aliasName) => {
      const login = await site.identityClient.login({ mountAccessor: (await site.mountConfig()).accessor ?? '', mountPath: 'auth/token/', mountType: 'token', aliasName });
      return { entityId: login.entityId, disabled: login.disabled };
    },
  };
}
