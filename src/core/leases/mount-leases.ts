// Leases on the secrets a mount issues. They live in the mount's object, next to the engine that
// can revoke them: ids are "<request path>/<24 base62>"; an expiry index drives the mount's alarm;
// a per-token index lets a token's revocation end its leases. Revocation calls the secret type's
// revoke handler; when that fails the lease stays, marked, and is retried with exponential backoff
// — a lease is never dropped silently (only revoke-force drops one without the handler).

import { timeOrderedBase62 } from '../../crypto/random';
import type { LeaseView, SecretType, IssuedSecret } from '../../framework/backend';
import { formatRFC3339Nano } from '../../framework/duration';
import { badRequest } from '../../framework/errors';
import { getJSON, putJSON, type Storage } from '../../framework/storage';

export interface LeaseRecord {
  id: string;
  /** The request path that issued the secret. */
  path: string;
  secretType: string;
  internal: Record<string, unknown>;
  /** Accessor of the token the secret was issued to ("" for none). */
  accessor: string;
  issueTime: number;
  expireTime: number;
  /** The TTL last granted (seconds); a renewal without an increment asks for it again. */
  ttl?: number;
  lastRenewal: number | null;
  renewable: boolean;
  /** Set once revocation began; the lease is then only retried, never served. */
  revoking?: { attempts: number; nextAttempt: number; lastError: string };
}

export interface LeasePorts {
  /** The mount's secret types. */
  secretType(name: string): SecretType | undefined;
  /** Storage the secret types see (the engine's own). */
  engineStorage(): Storage;
  /** Records at the token's shard that this mount holds leases of the token. */
  registerToken(accessor: string): Promise<void>;
  wakeAt(at: number): Promise<void>;
}

const RETRY_BASE_MS = 1_000;
const RETRY_MAX_MS = 10 * 60_000;
const enc = encodeURIComponent;
/** Every lease lives below this key (also counted for the vault.expire.num_leases gauge). */
export const LEASES_PREFIX = 'core/leases/';
const LEASES = LEASES_PREFIX;
// The expiry index: one flat folder of "<ms, 13 digits>-<encoded rel>" keys, paged in time order
// with scan. Earlier releases kept a folder per millisecond ("<ms>/<encoded rel>"), which cost
// every lease a folder row of its own; those entries are read alike and removed once no lease
// stands behind them.
const EXPIRY = 'core/lease-expiry/';
const BY_TOKEN = 'core/lease-tokens/';
const expiryKey = (ms: number, rel: string) => `${EXPIRY}${String(ms).padStart(13, '0')}-${enc(rel)}`;
const expiryOf = (key: string): { ms: number; rel: string } => ({ ms: Number(key.slice(EXPIRY.length, EXPIRY.length + 13)), rel: decodeURIComponent(key.slice(EXPIRY.length + 14)) });
/** Index entries the alarm reads per scan. */
const EXPIRY_PAGE = 100;

export function leaseView(l: LeaseRecord, now = Date.now()): Record<string, unknown> {
  return {
    id: l.id,
    issue_time: formatRFC3339Nano(l.issueTime),
    expire_time: formatRFC3339Nano(l.expireTime),
    last_renewal: l.lastRenewal === null ? null : formatRFC3339Nano(l.lastRenewal),
    renewable: l.renewable && !l.revoking,
    ttl: Math.max(0, Math.floor((l.expireTime - now) / 1000)),
  };
}

export class LeaseManager {
  constructor(
    private readonly storage: Storage,
    /** Mount prefix, e.g. "aws/": lease ids start with it; storage keys do not. */
    private readonly mountPoint: string,
    private readonly ports: LeasePorts,
  ) {}

  private rel(id: string): string {
    if (!id.startsWith(this.mountPoint)) throw badRequest('invalid lease');
    const rel = id.slice(this.mountPoint.length);
    if (rel === '' || rel.split('/').some((seg) => seg === '' || seg === '.' || seg === '..')) throw badRequest('invalid lease');
    return rel;
  }

  private view(l: LeaseRecord): LeaseView {
    return { id: l.id, path: l.path, internal: l.internal, issueTime: l.issueTime, expireTime: l.expireTime };
  }

  /** Records a lease for a secret just issued; `storage` is the request's transaction. */
  async create(storage: Storage, path: string, secret: IssuedSecret, accessor: string, ttls: { defaultLeaseTTL: number; maxLeaseTTL: number }, now = Date.now()): Promise<LeaseRecord> {
    if (!this.ports.secretType(secret.type)) throw new Error(`backend has no secret type ${secret.type}`);
    const ttl = Math.min(secret.ttl > 0 ? secret.ttl : ttls.defaultLeaseTTL, ttls.maxLeaseTTL);
    // Time first: a mount's new lease rows (by id, by token) are appended, not scattered.
    const id = `${path}/${timeOrderedBase62(24, now)}`;
    const rel = this.rel(id);
    const lease: LeaseRecord = {
      id,
      path,
      secretType: secret.type,
      internal: secret.internal,
      accessor,
      issueTime: now,
      expireTime: now + ttl * 1000,
      ttl,
      lastRenewal: null,
      renewable: secret.renewable,
    };
    if (accessor) {
      // Register before the lease exists: a token revoked meanwhile still finds this mount.
      const marker = `${BY_TOKEN}${accessor}/.registered`;
      if (!(await storage.get(marker))) {
        await this.ports.registerToken(accessor);
        await storage.put(marker, new Uint8Array(0));
      }
      await storage.put(`${BY_TOKEN}${accessor}/${enc(rel)}`, new Uint8Array(0));
    }
    await putJSON(storage, LEASES + rel, lease);
    await storage.put(expiryKey(lease.expireTime, rel), new Uint8Array(0));
    return lease;
  }

  async get(id: string): Promise<LeaseRecord | null> {
    return getJSON<LeaseRecord>(this.storage, LEASES + this.rel(id));
  }

  async lookup(id: string): Promise<LeaseRecord> {
    const lease = await this.get(id);
    if (!lease) throw badRequest('invalid lease');
    return lease;
  }

  async renew(id: string, increment: number, maxLeaseTTL: number, now = Date.now()): Promise<LeaseRecord> {
    const lease = await this.lookup(id);
    if (lease.revoking || lease.expireTime <= now) throw badRequest('lease expired or is being revoked');
    if (!lease.renewable) throw badRequest('lease is not renewable');
    const remaining = Math.floor((lease.issueTime + maxLeaseTTL * 1000 - now) / 1000);
    const previous = lease.ttl ?? Math.floor((lease.expireTime - lease.issueTime) / 1000);
    let ttl = Math.min(increment > 0 ? increment : previous, remaining);
    const granted = await this.ports.secretType(lease.secretType)?.renew?.(this.view(lease), ttl, this.ports.engineStorage());
    if (typeof granted === 'number') ttl = Math.min(ttl, granted);
    ttl = Math.max(0, ttl);
    const next: LeaseRecord = { ...lease, expireTime: now + ttl * 1000, ttl, lastRenewal: now };
    await this.write(lease, next);
    return next;
  }

  private async write(previous: LeaseRecord | null, next: LeaseRecord): Promise<void> {
    const rel = this.rel(next.id);
    if (previous && previous.expireTime !== next.expireTime) await this.storage.delete(expiryKey(previous.expireTime, rel));
    await putJSON(this.storage, LEASES + rel, next);
    await this.storage.put(expiryKey(next.revoking ? next.revoking.nextAttempt : next.expireTime, rel), new Uint8Array(0));
  }

  private async drop(lease: LeaseRecord): Promise<void> {
    const rel = this.rel(lease.id);
    await this.storage.delete(LEASES + rel);
    await this.storage.delete(expiryKey(lease.expireTime, rel));
    if (lease.revoking) await this.storage.delete(expiryKey(lease.revoking.nextAttempt, rel));
    if (lease.accessor) await this.storage.delete(`${BY_TOKEN}${lease.accessor}/${enc(rel)}`);
  }

  /**
   * Ends a lease: the secret type's revoke handler first, then the record. A failing handler
   * leaves the lease marked for retry (with backoff) and the error is reported.
   */
  async revoke(id: string, force = false, now = Date.now()): Promise<void> {
    const lease = await this.get(id);
    if (!lease) return;
    await this.end(lease, force, now);
  }

  private async end(lease: LeaseRecord, force: boolean, now: number): Promise<void> {
    if (!force) {
      try {
        await this.ports.secretType(lease.secretType)?.revoke(this.view(lease), this.ports.engineStorage());
      } catch (e) {
        const attempts = (lease.revoking?.attempts ?? 0) + 1;
        const delay = Math.min(RETRY_BASE_MS * 2 ** (attempts - 1), RETRY_MAX_MS);
        const lastError = e instanceof Error ? e.message : String(e);
        const marked: LeaseRecord = { ...lease, revoking: { attempts, nextAttempt: now + delay, lastError } };
        if (lease.revoking) await this.storage.delete(expiryKey(lease.revoking.nextAttempt, this.rel(lease.id)));
        await this.write(lease, marked);
        await this.ports.wakeAt(now + delay);
        throw badRequest(`failed to revoke lease ${lease.id}: ${lastError} (will retry)`);
      }
    }
    await this.drop(lease);
  }

  /** Lease ids (relative to the mount) under a prefix, recursively. */
  private async relIdsUnder(relPrefix: string): Promise<string[]> {
    const out: string[] = [];
    const walk = async (dir: string) => {
      for (const child of await this.storage.list(LEASES + dir)) {
        if (child.endsWith('/')) await walk(dir + child);
        else out.push(dir + child);
      }
    };
    await walk(relPrefix);
    return out;
  }

  /** revoke-prefix / revoke-force: every lease whose id starts with `prefix` (a folder). */
  async revokePrefix(prefix: string, force: boolean, now = Date.now()): Promise<{ failed: string[] }> {
    const relPrefix = prefix === this.mountPoint || prefix === this.mountPoint.slice(0, -1) ? '' : this.rel(prefix.endsWith('/') ? prefix.slice(0, -1) : prefix) + '/';
    const failed: string[] = [];
    for (const rel of await this.relIdsUnder(relPrefix)) {
      try {
        await this.revoke(this.mountPoint + rel, force, now);
      } catch {
        failed.push(this.mountPoint + rel);
      }
    }
    return { failed };
  }

  /** Children under a prefix, for LIST sys/leases/lookup/<prefix>. */
  async list(prefix: string): Promise<string[]> {
    const relPrefix = prefix === this.mountPoint || prefix === this.mountPoint.slice(0, -1) ? '' : this.rel(prefix.replace(/\/$/, '')) + '/';
    return this.storage.list(LEASES + relPrefix);
  }

  /** Ends every lease issued to a token (its revocation or expiry). */
  async revokeToken(accessor: string, now = Date.now()): Promise<void> {
    for (const encoded of await this.storage.list(`${BY_TOKEN}${accessor}/`)) {
      if (encoded === '.registered') continue;
      await this.revoke(this.mountPoint + decodeURIComponent(encoded), false, now).catch(() => undefined);
    }
    // Leases whose revocation failed stay (retried by the alarm); the registration goes with the last.
    if ((await this.storage.list(`${BY_TOKEN}${accessor}/`)).every((k) => k === '.registered')) {
      await this.storage.delete(`${BY_TOKEN}${accessor}/.registered`);
    }
  }

  /** Expires due leases and retries failed revocations; returns the next time anything is due. */
  async tick(now = Date.now()): Promise<number | null> {
    for (let after = ''; ; ) {
      const page = await this.storage.scan(EXPIRY, after, EXPIRY_PAGE);
      for (const key of page) {
        const { ms, rel } = expiryOf(key);
        if (ms > now) return ms;
        let lease = await getJSON<LeaseRecord>(this.storage, LEASES + rel);
        if (lease && (lease.revoking ? lease.revoking.nextAttempt <= now : lease.expireTime <= now)) {
          await this.end(lease, false, now).catch(() => undefined);
          // end() removes (or, when revocation fails, moves) entries in this release's form only.
          if (key === expiryKey(ms, rel)) continue;
          lease = await getJSON<LeaseRecord>(this.storage, LEASES + rel);
        }
        // No lease stands behind this entry: its lease is gone, or it is an earlier release's
        // entry that a renewal or an end left behind.
        if (!lease || !this.indexedAt(lease, rel).includes(key)) await this.storage.delete(key);
      }
      // Scanned on until nothing is left: a failed revocation just added its next attempt, which
      // sorts after every entry read here (all due by now).
      if (page.length === 0) return null;
      after = page[page.length - 1];
    }
  }

  /** The expiry index entries a lease keeps: its expiry, and while revocation fails its next attempt. */
  private indexedAt(lease: LeaseRecord, rel: string): string[] {
    return lease.revoking ? [expiryKey(lease.expireTime, rel), expiryKey(lease.revoking.nextAttempt, rel)] : [expiryKey(lease.expireTime, rel)];
  }

  /** After a remount: lease ids and paths start with the new mount path. */
  async rebase(oldPoint: string): Promise<void> {
    for (const rel of await this.relIdsUnder('')) {
      const lease = await getJSON<LeaseRecord>(this.storage, LEASES + rel);
      if (!lease || !lease.id.startsWith(oldPoint)) continue;
      await putJSON(this.storage, LEASES + rel, {
        ...lease,
        id: this.mountPoint + lease.id.slice(oldPoint.length),
        path: this.mountPoint + lease.path.slice(oldPoint.length),
      });
    }
  }

  /** Leases whose revocation keeps failing (sys/leases?type=irrevocable). */
  async irrevocable(): Promise<LeaseRecord[]> {
    const out: LeaseRecord[] = [];
    for (const rel of await this.relIdsUnder('')) {
      const lease = await getJSON<LeaseRecord>(this.storage, LEASES + rel);
      if (lease?.revoking) out.push(lease);
    }
    return out;
  }
}
