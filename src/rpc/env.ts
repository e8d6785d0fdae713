// Bindings and variables the Worker and its Durable Objects receive. The namespaces are typed by
// the objects' RPC contracts (contracts.ts), not their classes: addressing an object imports
// nothing of it.
import type { CloudSealVars, Pkcs11SealVars } from '../managed-keys/seal-config';
import type { AuditContract, MountContract, SystemContract, TokenStoreContract } from './contracts';

/** A namespace whose stubs offer exactly the contract `C`. */
type Namespace<C> = DurableObjectNamespace<C & Rpc.DurableObjectBranded>;

/** The managed-key seals' variables (SEAL_PKCS11_*, SEAL_MANAGED_KEY) are documented where they are read. */
export interface Env extends Pkcs11SealVars, CloudSealVars {
  SYSTEM: Namespace<SystemContract>;
  TOKENS: Namespace<TokenStoreContract>;
  MOUNTS: Namespace<MountContract>;
  /** One object per audit device, by the device's uuid. */
  AUDIT: Namespace<AuditContract>;
  /** 32-byte seal key, hex or base64 (a Worker secret): the static seal's key. */
  SEAL_KEY?: string;
  /**
   * Which seal protects the root key: "static" (the default: SEAL_KEY), "pkcs11" (an RSA key in
   * an HSM reached through HSM_BRIDGE), or "awskms", "azurekeyvault", "gcpckms" (an RSA key in
   * that cloud's KMS, described by SEAL_MANAGED_KEY); src/managed-keys/seal.ts. Migrating between
   * types is not supported: a cluster keeps the seal type it was initialised with.
   */
  SEAL_TYPE?: string;
  /** Root token id used by sys/init instead of a random one (the local launcher's dev option). */
  DEV_ROOT_TOKEN?: string;
  TOKEN_SHARDS?: string;
  /** DR: entries an object's log keeps for a lagging secondary before trimming past it (default 200,000). */
  DR_LOG_MAX_ENTRIES?: string;
  /** The Google Admin SDK's base URL for the JWT gsuite provider, when not the public one (tests: an emulator). */
  GOOGLE_ADMIN_API_URL?: string;
  /** Microsoft Graph's base URL for the JWT azure provider's fetch_groups, when not the public one (tests: an emulator). */
  MICROSOFT_GRAPH_URL?: string;
  /**
   * The on-premises HSM bridge (hsm-bridge/) of pkcs11 managed keys: an mTLS certificate binding
   * in production, a Miniflare network service with the client key pair locally; and the URL
   * requests through it are addressed to.
   */
  HSM_BRIDGE?: Fetcher;
  /** The plugin directory in production: an R2 bucket holding the bundles catalog commands name. */
  PLUGINS?: R2Bucket;
  /** The plugin directory locally: a service the launcher answers from COFFER_PLUGIN_DIR (wins over PLUGINS). */
  PLUGIN_DIR?: Fetcher;
  /** The Worker Loader: runs each plugin in an isolate of its own. */
  LOADER?: WorkerLoader;
  HSM_BRIDGE_URL?: string;
  /** The HSM bridge's bearer secret (a secret), for a bridge that checks one (Workers VPC). */
  HSM_BRIDGE_TOKEN?: string;
  /** Cloud KMS endpoints other than the public ones (emulators in tests): see src/managed-keys/types.ts CloudEndpoints. */
  AZURE_AUTHORITY_HOST?: string;
  AZURE_KEYVAULT_URL?: string;
  GOOGLE_CLOUDKMS_URL?: string;
  /** The aws engine's fallbacks when config/root leaves them out (as the AWS SDK reads them). */
  AWS_ACCESS_KEY_ID?: string;
  AWS_SECRET_ACCESS_KEY?: string;
  AWS_SESSION_TOKEN?: string;
  AWS_REGION?: string;
  AWS_DEFAULT_REGION?: string;
  /** How long an object may reuse a token validation before asking the shard again (ms). */
  TOKEN_LEASE_MS?: string;
  MAX_REQUEST_SIZE?: string;
  /** How long a request body may take to arrive (ms, default 30000: Vault's http_read_timeout). */
  REQUEST_READ_TIMEOUT_MS?: string;
  MAX_ENTRY_SIZE?: string;
  /** Estimated CPU one transit batch request may take (ms, default 10000). */
  TRANSIT_BATCH_CPU_BUDGET_MS?: string;
  /** "0" keeps every handler in its mount's object (no handing off to the Worker: src/pipeline/offload.ts). */
  OFFLOAD_HANDLERS?: string;
  /** Handed off only when the backend estimates the handler at this many µs or more (default 250). */
  OFFLOAD_MIN_COST_US?: string;
  MAX_JSON_DEPTH?: string;
  MAX_JSON_OBJECT_ENTRIES?: string;
  MAX_JSON_ARRAY_ELEMENTS?: string;
  MAX_JSON_STRING_LENGTH?: string;
  /** "1" makes test-only engines (coffer-test-leases) mountable. Never set in production. */
  COFFER_TEST_ENGINES?: string;
  /** This deployment's address as DR secondaries reach it (put into activation tokens). */
  COFFER_API_ADDR?: string;
}

export function intVar(value: string | undefined, fallback: number, min = 1): number {
  const n = value === undefined || value === '' ? NaN : Number(value);
  return Number.isInteger(n) && n >= min ? n : fallback;
}

/** TRANSIT_BATCH_CPU_BUDGET_MS when set to a positive integer; otherwise the engine's default. */
export const transitBatchBudgetMs = (env: Env): number | undefined => intVar(env.TRANSIT_BATCH_CPU_BUDGET_MS, 0) || undefined;

export const tokenShardCount = (env: Env): number => intVar(env.TOKEN_SHARDS, 4);

export const maxEntrySize = (env: Env): number => Math.min(intVar(env.MAX_ENTRY_SIZE, 1024 * 1024), 2_000_000);
