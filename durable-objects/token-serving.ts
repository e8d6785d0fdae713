// How a token shard serves auth/token/* through the request pipeline (src/pipeline/serve.ts): the
// mount's host, built once per mount settings; the caller, validated in the shard's own storage;
// and the token backend, built once, whose operations find each request's caller by its AuthContext.

import { tokenBackend } from '../src/auth/token';
import type { Caller, TokenMountConfig } from '../src/auth/token/ops';
import type { AclCache } from '../src/core/acl/cache';
import type { ActivityLog } from '../src/core/activity/log';
import type { AuditBroker } from '../src/core/audit/broker';
import type { IdentityCache } from '../src/core/identity/cache';
import type { MetricsRegistry } from '../src/core/metrics/registry';
import { decodeBatchToken, encodeBatchToken } from '../src/core/tokens/batch';
import { allowedByCIDRs } from '../src/core/tokens/cidr';
import { authContextFor, BATCH_TOKEN_PREFIX, shardFor, type TokenEntry } from '../src/core/tokens/entry';
import type { TokenShard } from '../src/core/tokens/shard';
import type { Validation } from '../src/core/tokens/validator';
import type { AuthContext, Backend } from '../src/framework/backend';
import { CofferError, sealedError } from '../src/framework/errors';
import { prefixedTransaction } from '../src/framework/storage';
import { drive, settled, type Steps } from '../src/framework/steps';
import { AuditTrail } from '../src/pipeline/audit-trail';
import type { CallerPort } from '../src/pipeline/caller';
import type { Host, Route, Scope, ServePorts } from '../src/pipeline/serve';
import { wrapHook, type WrapStore } from '../src/pipeline/wrapping';
import type { Env } from '../src/rpc/env';
import { systemStub } from '../src/rpc/stubs';
import type { IdentityClient } from './identity-client';
import type { ObjectStorage } from './object-storage';
import { shardTokenOps, type Peer } from './token-ops';

const MOUNT_CONFIG_TTL_MS = 30_000;

type Issued = { token: string; entry: TokenEntry };

/** The shard's parts serving needs. */
export interface TokenServingSite {
  env: Env;
  storage: ObjectStorage;
  shard: TokenShard;
  shardNo: number;
  shards: number;
  peer(n: number): Peer;
  metrics: MetricsRegistry;
  activity: ActivityLog;
  acls: AclCache;
  audit: AuditBroker;
  identity: IdentityCache;
  identityClient: IdentityClient;
  wrapStore: WrapStore;
}

export class TokenServing {
  readonly ports: ServePorts;
  readonly #site: TokenServingSite;
  /** The caller of each request being served, by the AuthContext it carries (see #validate). */
  readonly #callers = new WeakMap<AuthContext, Caller>();
  readonly #backend: Backend;
  readonly #scope: Scope;
  #mountConfig: { config: TokenMountConfig; at: number } | null = null;
  /** auth/token/'s host, for the mount settings it was built with. */
  #host: { config: TokenMountConfig; prefix: string; host: Host } | null = null;

  constructor(site: TokenServingSite) {
    this.#site = site;
    this.#backend = tokenBackend(
      shardTokenOps({
        ...site,
        durable: () => site.storage.grouped.durable(),
        mountConfig: () => this.mountConfig(),
        caller: (req) => (req.auth && this.#callers.get(req.auth)) ?? null,
        issueBatch: (partial) => this.issueBatch(partial),
        openBatch: (token) => this.openBatch(token),
      }),
    );
    // auth/token/* requests write through the shard's own storage, in no particular order.
    this.#scope = {
      transaction: () => prefixedTransaction(site.storage.barrier.transaction(), 'logical/'),
      hooks: { wrap: wrapHook(site.wrapStore) },
    };
    this.ports = { metrics: site.metrics, locate: (route) => this.#locate(route) };
  }

  /** The cluster sealed or rotated its keyring: settings are read again. */
  forget(): void {
    this.#mountConfig = null;
  }

  /** auth/token/'s host; without waiting when the keyring and the mount settings are fresh. */
  #locate({ prefix }: Route): Host | Promise<Host> {
    const config = this.#mountConfig;
    if (this.#site.storage.keyring.current() && config && Date.now() - config.at < MOUNT_CONFIG_TTL_MS) return this.#hostFor(prefix, config.config);
    return this.#locateSlowly(prefix);
  }

  async #locateSlowly(prefix: string): Promise<Host> {
    if (!(await this.unsealed())) throw sealedError();
    return this.#hostFor(prefix, await this.mountConfig());
  }

  #hostFor(prefix: string, config: TokenMountConfig): Host {
    if (this.#host?.config === config && this.#host.prefix === prefix) return this.#host.host;
    const mount = {
      mountPoint: prefix,
      mountType: 'token',
      mountAccessor: config.accessor ?? '',
      mountConfig: { defaultLeaseTTL: config.defaultLeaseTTL, maxLeaseTTL: config.maxLeaseTTL },
      mountOptions: {},
    };
    const nonHMAC = { nonHMACRequestKeys: config.auditNonHMACRequestKeys, nonHMACResponseKeys: config.auditNonHMACResponseKeys };
    const host: Host = {
      backend: this.#backend,
      mount,
      acls: this.#site.acls,
      caller: this.#caller,
      trail: (wire, token) => new AuditTrail(this.#site.audit, { wire, mount, token, ...nonHMAC }),
      open: () => this.#scope,
    };
    this.#host = { config, prefix, host };
    return host;
  }

  /** Whether the keyring can be had: a sealed (or uninitialised) cluster validates no token. */
  async unsealed(): Promise<boolean> {
    try {
      await this.#site.storage.keyring.get();
      return true;
    } catch (e) {
      if (e instanceof CofferError && e.status === 503) return false;
      throw e;
    }
  }

  async mountConfig(): Promise<TokenMountConfig> {
    if (this.#mountConfig && Date.now() - this.#mountConfig.at < MOUNT_CONFIG_TTL_MS) return this.#mountConfig.config;
    const config = await systemStub(this.#site.env).tokenMountConfig();
    this.#mountConfig = { config, at: Date.now() };
    return config;
  }

  /** A batch token's entry, if it opens and its parent (if any) is still alive. */
  async openBatch(token: string): Promise<TokenEntry | null> {
    const entry = await decodeBatchToken(token, this.#site.storage.keyring);
    if (!entry || (entry.expireTime !== null && entry.expireTime <= Date.now())) return null;
    if (entry.parent && !(await this.#site.peer(shardFor(entry.parent, this.#site.shards)).lookupAccessor(entry.parent))) return null;
    return entry;
  }

  /** A batch token: the entry sealed with the keyring, stored nowhere (its client counts now: its use never reaches a shard). */
  async issueBatch(partial: Omit<TokenEntry, 'accessor'>): Promise<Issued> {
    const entry: TokenEntry = { ...partial, accessor: '' };
    await this.#site.activity.note(entry);
    return { token: await encodeBatchToken(entry, await this.#site.storage.keyring.get()), entry };
  }

  /**
   * The caller of an auth/token/* request: a token of this shard (a use spent), or a batch token.
   * At once (no promise) for a token in memory that needs nothing recorded: most requests.
   */
  readonly #caller: CallerPort = (token, wire) => drive(this.#validate(token, wire.clientIP));

  *#validate(token: string, clientIP: string): Steps<Validation> {
    const { shard, activity } = this.#site;
    let entry: TokenEntry | null;
    // Counted before the lookup: a removal during it counts as one since.
    const foundAt = shard.tokens.removalCount;
    if (token.startsWith(BATCH_TOKEN_PREFIX)) entry = yield* settled(this.openBatch(token));
    else {
      entry = (yield* settled(shard.tokens.lookupNow(token)))?.entry ?? null;
      if (entry && entry.numUses > 0 && !(yield* settled(shard.use(token)))) entry = null;
    }
    if (!entry) return { status: 'invalid' };
    // A root token that never expires is exempt from its CIDR binding (the way back in).
    const exempt = entry.policies.includes('root') && entry.expireTime === null;
    if (!exempt && !allowedByCIDRs(entry.boundCidrs, clientIP)) return { status: 'cidr' };
    const noted = entry.accessor ? activity.note(entry) : undefined;
    if (noted) yield* settled(noted);
    const auth = authContextFor(entry);
    this.#callers.set(auth, { token, entry, foundAt });
    return { status: 'ok', auth };
  }
}
