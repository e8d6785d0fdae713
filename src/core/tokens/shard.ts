// One token-store shard's logic: storing, finding, renewing, using and revoking tokens, and the
// leases that let other objects trust a token without asking each time. A token's children may
// live on any shard (a token's shard is a function of the token), so tree operations go through
// `peer(shard)`, which is this shard itself or an RPC stub. No lock is held across a peer call:
// revocation first deletes the token (so it can neither be used nor gain children), leaves a
// `revoking/` marker, then walks children and leases; the shard's alarm resumes unfinished walks.

import type { RenewLimits } from '../../framework/backend';
import { getJSON, putJSON, type Storage } from '../../framework/storage';
import { badRequest } from '../../framework/errors';
import { fromUtf8, utf8 } from '../../crypto/encoding';
import { randomHex } from '../../crypto/random';
import { Mutex } from '../mutex';
import { DEFAULT_LEASE_MS, type LeaseReply } from './leases';
import { renewTTL } from './rules';
import { TokenStore, type StoredToken, type WrappedResponse } from './store';
import { authContextFor, isWrappingEntry, shardFor, wrappingTokenEntry, type TokenEntry } from './entry';

const HOLDERS = 'holders/';
const REVOKING = 'revoking/';
/**
 * Present while some gone token's holders may not have been told (see sweepHolders). Its value
 * is drawn anew each time it is raised, so a pass clears only the raise it began after.
 */
const SWEEP_KEY = 'sweeps/holders';
/** Present once this shard has swept after the sweep stopped running on every tick. */
const SWEPT_ONCE_KEY = 'sweeps/holders-once';
/** A sweep under way (SweepPass): present between its pages. */
const SWEEP_PASS_KEY = 'sweeps/holders-pass';
/** Holder records a sweep looks at per tick: a step's work stays bounded however many tokens have holders. */
export const SWEEP_PAGE = 500;

/** Where a sweep over the holder records stands between ticks. */
interface SweepPass {
  /** The last holder record looked at ("": none yet). */
  after: string;
  /** SWEEP_KEY's value when the pass began (null: not raised). */
  flag: string | null;
  /** Some holder could not be told. */
  failed: boolean;
}

interface HolderRecord {
  until: number;
}

/** What a shard asks of other shards (the same methods it serves itself). */
export interface PeerShard {
  storeToken(token: string, entry: TokenEntry): Promise<void>;
  addChild(parentAccessor: string, childAccessor: string): Promise<boolean>;
  removeChild(parentAccessor: string, childAccessor: string): Promise<void>;
  revokeAccessor(accessor: string): Promise<void>;
  orphanAccessor(accessor: string): Promise<void>;
}

export interface ShardPorts {
  shard: number;
  shards: number;
  peer(shard: number): PeerShard;
  /** Tells a lease holder (a mount object) to forget an accessor. */
  notifyHolder(holder: string, accessor: string): Promise<void>;
  /** Revokes the secret leases a token owns (issued by engines to it). */
  revokeTokenLeases(accessor: string): Promise<void>;
  /** Schedules the shard's alarm no later than `at` (unix ms). */
  wakeAt(at: number): Promise<void>;
  leaseMs?: number;
  /** Told of each token a lease is granted for: its client is active (src/core/activity). */
  active?(entry: TokenEntry, now: number): Promise<void>;
}

export class TokenShard {
  readonly tokens: TokenStore;
  private readonly recorded = new Map<string, number>();
  /** Serialises read-modify-write of one token (uses, renewals); never held across a peer call. */
  private readonly rmw = new Mutex();
  /** Whether this shard has swept the holders of gone tokens once (SWEPT_ONCE_KEY), as last read. */
  private swept = false;

  /** `grouped`: where new random tokens are written (TokenStore). */
  constructor(
    private readonly storage: Storage,
    private readonly ports: ShardPorts,
    grouped: Storage = storage,
  ) {
    this.tokens = new TokenStore(storage, ports.shards, grouped);
  }

  reset(): void {
    this.tokens.reset();
    this.recorded.clear();
  }

  private peerFor(accessorOrToken: string): PeerShard {
    return this.ports.peer(shardFor(accessorOrToken, this.ports.shards));
  }

  // ---- leases ----

  /**
   * Validates a token for `holder`. A use-limited token is used up by one here, and its grant is
   * not reusable (until = now); anything else is granted for the lease time, holder recorded first.
   */
  async lease(token: string, holder: string, now = Date.now()): Promise<LeaseReply> {
    const removals = this.tokens.removalCount;
    const stored = await this.tokens.lookup(token, now);
    if (!stored) return { status: 'invalid' };
    const { entry } = stored;
    if (entry.numUses > 0) {
      if (!(await this.use(token, now))) return { status: 'invalid' };
      await this.ports.active?.(entry, now);
      return { status: 'ok', grant: { auth: authContextFor(entry), expireTime: entry.expireTime, until: now } };
    }
    await this.ports.active?.(entry, now);
    return this.grant(entry, holder, now, removals);
  }

  /** Validity of a parent, for holders checking a batch token's parent. */
  async leaseAccessor(accessor: string, holder: string, now = Date.now()): Promise<LeaseReply> {
    const removals = this.tokens.removalCount;
    const stored = await this.tokens.byAccessor(accessor);
    if (!stored || (stored.entry.expireTime !== null && stored.entry.expireTime <= now)) return { status: 'invalid' };
    return this.grant(stored.entry, holder, now, removals);
  }

  /** `removals`: the store's removalCount before the token was found (see the end). */
  private async grant(entry: TokenEntry, holder: string, now: number, removals: number): Promise<LeaseReply> {
    const leaseMs = this.ports.leaseMs ?? DEFAULT_LEASE_MS;
    const until = entry.expireTime === null ? now + leaseMs : Math.min(now + leaseMs, entry.expireTime);
    const key = `${HOLDERS}${entry.accessor}/${holder}`;
    // Record the holder before handing out the lease; rewrite only when the lease outgrows the record.
    if ((this.recorded.get(key) ?? 0) < until) {
      const recordUntil = until + leaseMs;
      await putJSON(this.storage, key, { until: recordUntil } satisfies HolderRecord);
      this.recorded.set(key, recordUntil);
    }
    // A revocation that removed the token since it was found may have listed its holders before
    // this record was written: take the record back and refuse, so that no holder trusts a gone
    // token and no record outlives it (sweepHolders no longer runs on every tick to find those).
    if (this.tokens.removalCount !== removals && !(await this.tokens.byAccessor(entry.accessor))) {
      await this.storage.delete(key);
      this.recorded.delete(key);
      return { status: 'invalid' };
    }
    return { status: 'ok', grant: { auth: authContextFor(entry), expireTime: entry.expireTime, until } };
  }

  /** Tells each holder of an accessor to forget it; returns false if some could not be reached. */
  private async invalidateHolders(accessor: string, now = Date.now()): Promise<boolean> {
    const prefix = `${HOLDERS}${accessor}/`;
    let ok = true;
    for (const holder of await this.storage.list(prefix)) {
      const key = prefix + holder;
      const record = await getJSON<HolderRecord>(this.storage, key);
      try {
        if (record && record.until > now) await this.ports.notifyHolder(holder, accessor);
        await this.storage.delete(key);
        this.recorded.delete(key);
      } catch (e) {
        console.error(`lease holder ${holder} unreachable while revoking ${accessor}; will retry`, e);
        ok = false;
      }
    }
    return ok;
  }

  // ---- uses ----

  /**
   * Consumes one use of a use-limited token; false when none is left. The last use revokes the
   * token (the request that spent it still proceeds).
   */
  async use(token: string, now = Date.now()): Promise<boolean> {
    const last = await this.rmw.run(async () => {
      const stored = await this.tokens.lookup(token, now);
      if (!stored || stored.entry.numUses <= 0) return null;
      const { entry } = stored;
      if (entry.numUses > 1) await this.tokens.update(stored.hash, { ...entry, numUses: entry.numUses - 1 }, entry);
      return entry.numUses === 1 ? entry : false;
    });
    if (last === null) return false;
    if (last) await this.revokeAccessor(last.accessor);
    return true;
  }

  // ---- creation ----

  /** Stores a token created on another shard (or this one). */
  async storeToken(token: string, entry: TokenEntry): Promise<void> {
    await this.tokens.put(token, entry);
    if (entry.expireTime !== null) await this.ports.wakeAt(entry.expireTime);
  }

  /** Stores an auth method's login token, drawn at random for this shard. */
  async storeLogin(token: string, entry: TokenEntry): Promise<void> {
    await this.tokens.putGrouped(token, entry);
    if (entry.expireTime !== null) await this.ports.wakeAt(entry.expireTime);
  }

  /** Records a child under a live parent; false when the parent is gone (being revoked). */
  async addChild(parentAccessor: string, childAccessor: string): Promise<boolean> {
    if (!(await this.tokens.byAccessor(parentAccessor))) return false;
    await this.tokens.addChild(parentAccessor, childAccessor);
    return true;
  }

  async removeChild(parentAccessor: string, childAccessor: string): Promise<void> {
    await this.tokens.removeChild(parentAccessor, childAccessor);
  }

  /**
   * Stores a new service token of a chosen ID wherever it belongs and links it under its parent.
   * If the parent is revoked meanwhile, the new token is revoked too, so no child outlives its parent.
   */
  async create(token: string, entry: TokenEntry): Promise<void> {
    // The parent is the caller, whose token lives on this shard.
    if (entry.parent && !(await this.addChild(entry.parent, entry.accessor))) throw badRequest('parent token was revoked');
    await this.peerFor(token).storeToken(token, entry);
    if (entry.parent && !(await this.tokens.byAccessor(entry.parent))) {
      await this.peerFor(entry.accessor).revokeAccessor(entry.accessor);
      throw badRequest('parent token was revoked');
    }
  }

  /**
   * Stores a new service token drawn for this shard (newServiceTokenFor), linked under its parent
   * (the caller, also of this shard), in one batch through the grouped storage: the host replies
   * once it is durable. Only then is the parent checked, as the grouped storage sees it: a
   * revocation that removed the parent earlier is seen, and one that removes it later flushes the
   * batch first and so finds the link; either way no child outlives its parent. `parentFoundAt`:
   * the store's removalCount when the parent was found stored (no removal since: no read).
   */
  async createHere(token: string, entry: TokenEntry, parentFoundAt?: number): Promise<void> {
    if (shardFor(token, this.ports.shards) !== this.ports.shard) throw new Error('token created on the wrong shard');
    await this.tokens.putGrouped(token, entry, entry.parent || undefined);
    if (entry.expireTime !== null) await this.ports.wakeAt(entry.expireTime);
    // No token removed since the parent was found stored: it still is (no read needed).
    const unmoved = parentFoundAt !== undefined && parentFoundAt === this.tokens.removalCount;
    if (entry.parent && !unmoved && !(await this.tokens.storedInGroup(entry.parent))) {
      await this.revokeAccessor(entry.accessor);
      throw badRequest('parent token was revoked');
    }
  }

  // ---- response wrapping ----

  /** Creates a wrapping token on this shard (the token must belong here) holding `record`. */
  async wrap(token: string, record: WrappedResponse, now = Date.now()): Promise<{ accessor: string }> {
    const entry = wrappingTokenEntry(this.tokens.accessorFor(token), record.creationTTL, record.creationPath, now);
    const { hash } = await this.tokens.put(token, entry);
    await this.tokens.putWrapped(hash, record);
    await this.ports.wakeAt(entry.expireTime!);
    return { accessor: entry.accessor };
  }

  /** A live wrapping token and what it holds, without using it up; null for anything else. */
  async peekWrapped(token: string, now = Date.now()): Promise<{ stored: StoredToken; record: WrappedResponse } | null> {
    const stored = await this.tokens.lookup(token, now);
    if (!stored || !isWrappingEntry(stored.entry)) return null;
    const record = await this.tokens.wrapped(stored.hash);
    return record ? { stored, record } : null;
  }

  /**
   * Unwraps: spends the wrapping token's single use and hands back what it held. Of concurrent
   * unwraps exactly one succeeds (uses are serialised); the others get null.
   */
  async unwrap(token: string, now = Date.now()): Promise<WrappedResponse | null> {
    const peeked = await this.peekWrapped(token, now);
    if (!peeked) return null;
    return (await this.use(token, now)) ? peeked.record : null;
  }

  // ---- revocation ----

  /** Revokes a token and every descendant, wherever they live. Idempotent and resumable. */
  async revokeAccessor(accessor: string): Promise<void> {
    const stored = await this.tokens.byAccessor(accessor);
    const markerKey = `${REVOKING}${accessor}`;
    let parent = '';
    if (stored) {
      parent = stored.entry.parent;
      await putJSON(this.storage, markerKey, { parent });
      await this.tokens.remove(stored);
    } else {
      const marker = await getJSON<{ parent: string }>(this.storage, markerKey);
      if (!marker) return;
      parent = marker.parent;
    }
    if (!(await this.revokeDependents(accessor))) {
      await this.ports.wakeAt(Date.now() + 5_000);
      return;
    }
    await this.storage.delete(markerKey);
    if (parent) await this.peerFor(parent).removeChild(parent, accessor).catch(() => undefined);
  }

  /** Ends what hangs off a removed token: holders' grants, children, leases. False: retry later. */
  private async revokeDependents(accessor: string): Promise<boolean> {
    let complete = await this.invalidateHolders(accessor);
    for (const child of await this.tokens.children(accessor)) {
      try {
        await this.peerFor(child).revokeAccessor(child);
        await this.tokens.removeChild(accessor, child);
      } catch (e) {
        console.error(`could not revoke child ${child} of ${accessor}; will retry`, e);
        complete = false;
      }
    }
    try {
      await this.ports.revokeTokenLeases(accessor);
    } catch (e) {
      console.error(`could not revoke the leases of ${accessor}; will retry`, e);
      complete = false;
    }
    return complete;
  }

  /**
   * Revokes expired tokens as revokeAccessor does, but a batch at a time: their markers and removal
   * in one write, their markers' deletion and this shard's links to them in another. With a write
   * per step and token, a wave of expiries (tokens created together) cost ≈ 30% more CPU.
   */
  private async expire(due: { hash: string; key: string }[]): Promise<void> {
    if (due.length === 0) return;
    const found: StoredToken[] = [];
    for (const { hash } of due) {
      const stored = await this.tokens.byHash(hash);
      if (stored) found.push(stored);
    }
    const markerKey = (entry: TokenEntry) => `${REVOKING}${entry.accessor}`;
    const markers = found.map(({ entry }) => ({ key: markerKey(entry), value: utf8(JSON.stringify({ parent: entry.parent })) }));
    // The index keys go too: one left behind by a token already gone would come up again.
    await this.tokens.removeAll(found, [...markers, ...due.map(({ key }) => ({ key, value: null }))]);
    const done: TokenEntry[] = [];
    for (const { entry } of found) {
      if (await this.revokeDependents(entry.accessor)) done.push(entry);
    }
    if (done.length < found.length) await this.ports.wakeAt(Date.now() + 5_000); // markers stay: resumed
    const here = (entry: TokenEntry) => entry.parent !== '' && shardFor(entry.parent, this.ports.shards) === this.ports.shard;
    await this.tokens.unlinkAll(
      done.filter(here).map((entry): [string, string] => [entry.parent, entry.accessor]),
      done.map((entry) => ({ key: markerKey(entry), value: null })),
    );
    for (const entry of done) {
      if (entry.parent && !here(entry)) await this.peerFor(entry.parent).removeChild(entry.parent, entry.accessor).catch(() => undefined);
    }
  }

  async revokeToken(token: string): Promise<boolean> {
    const stored = await this.tokens.lookup(token);
    if (!stored) return false;
    await this.revokeAccessor(stored.entry.accessor);
    return true;
  }

  /** Turns a token into an orphan (its parent is being revoked without its children). */
  async orphanAccessor(accessor: string): Promise<void> {
    const stored = await this.tokens.byAccessor(accessor);
    if (!stored) return;
    await this.tokens.update(stored.hash, { ...stored.entry, orphan: true, parent: '' }, stored.entry);
  }

  /** revoke-orphan: revokes the token alone; its children become orphans. */
  async revokeOrphan(token: string): Promise<boolean> {
    const stored = await this.tokens.lookup(token);
    if (!stored) return false;
    const { entry } = stored;
    await this.tokens.remove(stored);
    if (!(await this.invalidateHolders(entry.accessor))) {
      // No marker to resume from (that would revoke the children): the sweep tells them later.
      await this.raiseSweepFlag();
      await this.ports.wakeAt(Date.now() + 5_000);
    }
    for (const child of await this.tokens.children(entry.accessor)) {
      await this.peerFor(child).orphanAccessor(child);
      await this.tokens.removeChild(entry.accessor, child);
    }
    await this.ports.revokeTokenLeases(entry.accessor);
    if (entry.parent) await this.peerFor(entry.parent).removeChild(entry.parent, entry.accessor).catch(() => undefined);
    return true;
  }

  // ---- renewal ----

  async renewAccessor(
    accessor: string,
    increment: number,
    mountMaxTTL: number,
    limits?: RenewLimits,
    now = Date.now(),
  ): Promise<{ entry: TokenEntry; ttl: number; warnings: string[] }> {
    const renewed = await this.rmw.run(async () => {
      const stored = await this.tokens.byAccessor(accessor);
      if (!stored || (stored.entry.expireTime !== null && stored.entry.expireTime <= now)) throw badRequest('invalid token');
      const { entry } = stored;
      if (entry.type === 'batch') throw badRequest('batch tokens cannot be renewed');
      if (!entry.renewable || entry.expireTime === null) throw badRequest('lease is not renewable');
      const { ttl, warnings } = renewTTL(entry, increment, mountMaxTTL, now, limits);
      const next: TokenEntry = { ...entry, expireTime: now + ttl * 1000, lastRenewal: now };
      await this.tokens.update(stored.hash, next, entry);
      return { entry: next, ttl, warnings };
    });
    await this.ports.wakeAt(renewed.entry.expireTime!);
    return renewed;
  }

  // ---- timers ----

  /**
   * Revokes expired tokens and resumes unfinished revocations; returns when to run next.
   * `sweep`: also tell the holders of every gone token (auth/token/tidy asks for it).
   */
  async tick(now = Date.now(), sweep = false): Promise<number | null> {
    await this.expire(await this.tokens.expired(now));
    for (const accessor of await this.storage.list(REVOKING)) await this.revokeAccessor(accessor);
    const pass = await getJSON<SweepPass>(this.storage, SWEEP_PASS_KEY);
    const flag = await this.storage.get(SWEEP_KEY);
    if (!this.swept) this.swept = (await this.storage.get(SWEPT_ONCE_KEY)) !== null;
    if (pass || sweep || flag !== null || !this.swept) await this.sweepHolders(now, pass ?? { after: '', flag: flag === null ? null : fromUtf8(flag), failed: false });
    return this.tokens.nextExpiry();
  }

  private async raiseSweepFlag(): Promise<void> {
    await this.storage.put(SWEEP_KEY, utf8(randomHex(8)));
  }

  /**
   * Tells the holders of gone tokens to forget them, and drops their records. Revocations tell
   * holders themselves (or keep a marker until they have), and a grant that raced one takes its
   * record back, so this is a safety net: run once per shard (for what older versions left),
   * after revoke-orphan could not tell a holder (SWEEP_KEY), and by auth/token/tidy. It reads the
   * entry of every token that has holders, so it goes SWEEP_PAGE holder records per tick (the pass
   * is stored between them, and the alarm asked for at once): one step's work stays bounded. It
   * used to run whole on every tick: with 3,000 used tokens standing, the expiry of 1,000 others
   * (an alarm each) cost 17 s of CPU against 1.2 s without them.
   */
  private async sweepHolders(now: number, pass: SweepPass): Promise<void> {
    const page = await this.storage.scan(HOLDERS, pass.after, SWEEP_PAGE);
    let failed = pass.failed;
    let previous = '';
    for (const key of page) {
      const accessor = key.slice(HOLDERS.length, key.indexOf('/', HOLDERS.length));
      if (accessor === previous) continue; // the next holder of the same token
      previous = accessor;
      // Holders of live tokens hold current leases; holders of gone ones still need telling.
      if (!(await this.tokens.byAccessor(accessor))) failed = !(await this.invalidateHolders(accessor, now)) || failed;
    }
    if (page.length === SWEEP_PAGE) {
      await putJSON(this.storage, SWEEP_PASS_KEY, { ...pass, after: page[page.length - 1], failed } satisfies SweepPass);
      await this.ports.wakeAt(now);
      return;
    }
    if (pass.after !== '') await this.storage.delete(SWEEP_PASS_KEY);
    if (!this.swept) {
      await this.storage.put(SWEPT_ONCE_KEY, new Uint8Array(0)); // a failed notice is flagged below
      this.swept = true;
    }
    const flag = await this.storage.get(SWEEP_KEY);
    if (failed) {
      if (flag === null) await this.raiseSweepFlag();
      await this.ports.wakeAt(now + 5_000);
    } else if (flag !== null && fromUtf8(flag) === pass.flag) {
      // Raised before this pass began, and the pass told everyone: done. A flag raised since stays.
      await this.storage.delete(SWEEP_KEY);
    }
  }
}
