// The RPC contract between a hosting MountObject and a plugin's isolate (plugins/sdk/ implements
// the plugin side). Everything crossing it is structured-clonable data, or a capability the host
// hands over for one call (storage, logging). The plugin never sees tokens, the keyring or other
// mounts: a request arrives as its logical data only.

import type { LeaseView, LoginAuth, LogicalRequest, LogicalResponse, Operation, RenewLimits } from '../../framework/backend';
import type { Storage } from '../../framework/storage';
import type { FieldSchemas } from '../../framework/fields';

/** Bumped when the contract changes incompatibly; a plugin built for another one is refused. */
export const PLUGIN_CONTRACT_VERSION = 1;

/** One path of the plugin's Backend, as data (the host matches, authorises and parses fields). */
export interface PluginPathSpec {
  pattern: string;
  fields?: FieldSchemas;
  operations: Operation[];
  existenceCheck: boolean;
  /** The create handler is the update handler (the pipeline may then skip the existence check). */
  createIsUpdate?: boolean;
  updateWhenCreateDenied?: boolean;
  arbitraryData?: boolean;
  /** PathDef.prefetch: keys the host reads for the call, as templates over the path's string fields. */
  prefetch?: Partial<Record<Operation, string[]>>;
  summary?: string;
}

/** What the plugin's Backend is, as the host needs to know it before any request. */
export interface PluginDescription {
  contract: number;
  /** The Backend's type (informational; the mount's type is the catalog name). */
  type: string;
  paths: PluginPathSpec[];
  unauthenticatedPaths?: string[];
  sudoPaths?: string[];
  writingReadPaths?: string[];
  storageFreeWritePaths?: string[];
  /** Names of the secret types it issues leases for, and whether each renews by itself. */
  secretTypes: Record<string, { renew: boolean }>;
  periodic: boolean;
  renewLogin: boolean;
}

/** The caller as a plugin sees it: no token, no accessor. */
export interface PluginCaller {
  displayName: string;
  entityId: string;
  policies: string[];
  tokenType: 'service' | 'batch';
}

/** A request's logical data (LogicalRequest without storage, token, headers or host hooks). */
export type PluginRequest = Pick<LogicalRequest, 'id' | 'operation' | 'path' | 'mountPoint' | 'mountType' | 'mountAccessor' | 'mountConfig' | 'mountOptions' | 'data' | 'clientIP' | 'wrapTTL'> & {
  auth: PluginCaller | null;
  /** The path's prefetch keys for this operation and their values (null: absent), read in the call's transaction. */
  prefetched?: [key: string, value: Uint8Array | null][];
};

/**
 * What one call may use of its host: the mount's barrier storage (Storage of
 * src/framework/storage.ts) and the mount's log. One capability, so a call exports one stub.
 */
export interface PluginStorage extends Storage, PluginLog {}

/** Where a plugin's log lines go (the hosting object's log, prefixed with the plugin and mount). */
export interface PluginLog {
  log(level: 'debug' | 'info' | 'warn' | 'error', message: string): void;
}

/**
 * A plugin call's result. Errors travel as data: RPC keeps only an Error's message, and the host
 * must tell a plugin's 4xx (CofferError) from a crash.
 */
export type PluginResult<T> = { ok: true; value: T } | { ok: false; status: number; errors: string[] } | { ok: false; crash: string };

/** The entrypoint a plugin's isolate exports (the SDK's definePlugin builds it). */
export interface PluginEntrypoint {
  describe(): Promise<PluginDescription>;
  handle(path: number, request: PluginRequest, storage: PluginStorage): Promise<PluginResult<PluginReply>>;
  exists(path: number, request: PluginRequest, storage: PluginStorage): Promise<PluginResult<boolean>>;
  periodic(storage: PluginStorage, now: number): Promise<PluginResult<number | null>>;
  revoke(type: string, lease: LeaseView, storage: PluginStorage): Promise<PluginResult<null>>;
  renew(type: string, lease: LeaseView, ttl: number, storage: PluginStorage): Promise<PluginResult<number | null>>;
  renewLogin(role: string, tokenPolicies: string[], storage: PluginStorage): Promise<PluginResult<RenewLimits>>;
}

/** A handled request: the response, and when the handler asked the periodic work to run (LogicalRequest.wakeAt). */
export interface PluginReply {
  response: PluginResponse | null;
  wakeAt: number | null;
}

/** What a plugin handler may answer: LogicalResponse's data-only parts. */
export type PluginResponse = Pick<LogicalResponse, 'data' | 'warnings' | 'lease' | 'secret' | 'status'> & {
  login?: LoginAuth;
  raw?: { status: number; body?: unknown; contentType?: string };
};
