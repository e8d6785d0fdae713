// What the token backend's handlers need from the token store around them. The shard that serves
// the request implements it, reaching other shards (a token's shard is a function of the token).
import type { TokenRole } from '../../core/tokens/roles';
import type { TokenEntry } from '../../core/tokens/entry';
import type { LogicalRequest } from '../../framework/backend';
import type { Maybe } from '../../framework/steps';

export interface TokenMountConfig {
  defaultLeaseTTL: number;
  maxLeaseTTL: number;
  /** default-service, default-batch, service or batch (the auth/token tune has none: default-service). */
  tokenType: string;
  /** The auth/token/ mount's accessor (entity aliases of token roles live on it). */
  accessor?: string;
  /** The auth/token/ mount's audit_non_hmac_* keys (tune). */
  auditNonHMACRequestKeys?: string[];
  auditNonHMACResponseKeys?: string[];
}

export interface Caller {
  token: string;
  entry: TokenEntry;
  /** Its shard's count of token removals when the caller was found stored (TokenStore.removalCount). */
  foundAt?: number;
}

export interface TokenOps {
  /** The token that made the request (validated already), with its entry; at once where it is known. */
  caller(req: LogicalRequest): Maybe<Caller | null>;
  mountConfig(): Promise<TokenMountConfig>;
  /**
   * Stores a new token (service: on its shard, linked under its parent; batch: encoded) and
   * returns it. `caller`: the request's caller, the parent unless the entry is an orphan.
   */
  issue(entry: Omit<TokenEntry, 'accessor'>, id: string, caller: Caller): Promise<{ token: string; entry: TokenEntry }>;
  /** Entry of any token (service or batch), or null when unknown or expired. */
  lookup(token: string): Promise<TokenEntry | null>;
  lookupAccessor(accessor: string): Promise<TokenEntry | null>;
  revokeToken(token: string): Promise<void>;
  revokeAccessor(accessor: string): Promise<void>;
  revokeOrphan(token: string): Promise<void>;
  /** `entry`: the token's entry when the caller has it already (saves looking it up). */
  renewAccessor(accessor: string, increment: number, entry?: TokenEntry): Promise<{ entry: TokenEntry; ttl: number; warnings: string[] }>;
  role(name: string): Promise<TokenRole | null>;
  putRole(role: TokenRole): Promise<void>;
  deleteRole(name: string): Promise<void>;
  roles(): Promise<string[]>;
  accessors(): Promise<string[]>;
  tidy(): Promise<void>;
  /** The identity policies (entity and groups) of an entity; [] when it has none or does not exist. */
  identityPolicies(entityId: string): Promise<string[]>;
  /** The entity behind an alias of this mount (created with the alias if new), for entity_alias. */
  entityForAlias(aliasName: string): Promise<{ entityId: string; disabled: boolean }>;
}
