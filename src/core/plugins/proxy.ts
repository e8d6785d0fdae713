// A plugin's Backend as the hosting MountObject runs it: the paths its description gives (so the
// pipeline matches, authorises and validates fields exactly as for a built-in engine), with every
// handler, existence check, timed run and lease call forwarded to the plugin's isolate. Each call
// gets a storage capability for its own transaction, revoked when the call ends, and a deadline.

import type { Backend, LeaseView, LogicalRequest, LogicalResponse, PathDef, SecretType } from '../../framework/backend';
import { CofferError } from '../../framework/errors';
import type { SharedDeadlines } from '../../framework/deadline';
import type { FieldData } from '../../framework/fields';
import type { Storage } from '../../framework/storage';
import { PLUGIN_CONTRACT_VERSION, type PluginDescription, type PluginEntrypoint, type PluginRequest, type PluginResult, type PluginStorage } from './contract';
import { FUEL_EXHAUSTED } from './instrument';
import { compilePrefetch, prefetchProblem, readAhead, type PrefetchKeys } from './prefetch';

/** A capability handed to one call, and how the host takes it back. */
export interface Capability<T> {
  value: T;
  revoke(): void;
}

export interface ProxyPorts {
  /** The catalog name and version the mount runs (for messages). */
  label: string;
  /** A capability over `storage` and the mount's log (an RpcTarget). */
  storage(storage: Storage): Capability<PluginStorage>;
  /** The deadlines of the mount's calls (the load's describe() included): how long one may take before the host gives up on it. */
  deadlines: SharedDeadlines;
}

/** Refuses a description the host cannot run (another contract, paths that are not regexes, bad prefetch templates). */
export function checkDescription(label: string, d: PluginDescription): void {
  if (d?.contract !== PLUGIN_CONTRACT_VERSION) throw new CofferError(500, [`${label} was built for plugin contract ${String(d?.contract)}; this server speaks ${PLUGIN_CONTRACT_VERSION} (rebuild it with this version's plugins/sdk)`]);
  for (const p of d.paths) {
    try {
      new RegExp(p.pattern);
    } catch {
      throw new CofferError(500, [`${label} declares an invalid path pattern ${JSON.stringify(p.pattern)}`]);
    }
    const problem = p.prefetch ? prefetchProblem(p.prefetch, p.operations, p.fields) : null;
    if (problem) throw new CofferError(500, [`${label}: path ${JSON.stringify(p.pattern)} ${problem}`]);
  }
}

export function pluginBackend(name: string, description: PluginDescription, plugin: PluginEntrypoint, ports: ProxyPorts): Backend {
  checkDescription(ports.label, description);

  /** Runs one call with a fresh storage capability and a deadline; unwraps its result. */
  async function call<T>(storage: Storage, what: string, run: (cap: PluginStorage) => Promise<PluginResult<T>>): Promise<T> {
    const cap = ports.storage(storage);
    let result: PluginResult<T>;
    try {
      result = await ports.deadlines.race(run(cap.value), () => new CofferError(500, [`${ports.label} did not finish ${what} within ${ports.deadlines.ms / 1000}s`]));
    } catch (e) {
      if (e instanceof CofferError) throw e;
      throw crashed(what, e instanceof Error ? e.message : String(e));
    } finally {
      // A call that outlives its answer (an abandoned loop of awaits) can no longer touch storage.
      cap.revoke();
    }
    if (result.ok) return result.value;
    if ('crash' in result) throw crashed(what, result.crash);
    throw new CofferError(result.status, result.errors);
  }

  function crashed(what: string, message: string): CofferError {
    if (message.startsWith(FUEL_EXHAUSTED)) return new CofferError(500, [`${ports.label} was stopped during ${what}: it exceeded its step budget (a runaway loop?)`]);
    return new CofferError(500, [`${ports.label} failed during ${what}: ${message}`]);
  }

  const view = (req: LogicalRequest): PluginRequest => ({
    id: req.id,
    operation: req.operation,
    path: req.path,
    mountPoint: req.mountPoint,
    mountType: req.mountType,
    mountAccessor: req.mountAccessor,
    mountConfig: req.mountConfig,
    mountOptions: req.mountOptions,
    data: req.data,
    auth: req.auth ? { displayName: req.auth.displayName, entityId: req.auth.entityId, policies: [...req.auth.policies], tokenType: req.auth.tokenType } : null,
    clientIP: req.clientIP,
    wrapTTL: req.wrapTTL,
  });

  const paths: PathDef[] = description.paths.map((spec, index) => {
    // One function per operation, so the pipeline's create/update decision sees the plugin's own
    // (a shared function would tell it create and update are the same handler).
    const handler = (prefetch: PrefetchKeys | null) => async (req: LogicalRequest, fields: FieldData): Promise<LogicalResponse | null> => {
      const request = view(req);
      if (prefetch) request.prefetched = await readAhead(req.storage, prefetch(fields));
      const reply = await call(req.storage, `${req.operation} ${req.path}`, (cap) => plugin.handle(index, request, cap));
      if (typeof reply.wakeAt === 'number') req.wakeAt?.(reply.wakeAt);
      return reply.response;
    };
    const templates = spec.prefetch ?? {};
    const operations: PathDef['operations'] = Object.fromEntries(spec.operations.map((op) => [op, handler(templates[op] ? compilePrefetch(templates[op]) : null)]));
    if (spec.createIsUpdate && operations.create && operations.update) operations.create = operations.update;
    return {
      pattern: spec.pattern,
      fields: spec.fields,
      summary: spec.summary,
      arbitraryData: spec.arbitraryData,
      updateWhenCreateDenied: spec.updateWhenCreateDenied,
      operations,
      existenceCheck: spec.existenceCheck ? (req) => call(req.storage, `existence check of ${req.path}`, (cap) => plugin.exists(index, view(req), cap)) : undefined,
    };
  });

  const secretTypes: Record<string, SecretType> = {};
  for (const [type, { renew }] of Object.entries(description.secretTypes ?? {})) {
    secretTypes[type] = {
      revoke: async (lease: LeaseView, storage: Storage) => {
        await call(storage, `revocation of ${lease.id}`, (cap) => plugin.revoke(type, lease, cap));
      },
      renew: renew ? async (lease, ttl, storage) => (await call(storage, `renewal of ${lease.id}`, (cap) => plugin.renew(type, lease, ttl, cap))) ?? undefined : undefined,
    };
  }

  return {
    type: name,
    paths,
    unauthenticatedPaths: description.unauthenticatedPaths,
    sudoPaths: description.sudoPaths,
    writingReadPaths: description.writingReadPaths,
    storageFreeWritePaths: description.storageFreeWritePaths,
    secretTypes,
    periodic: description.periodic ? (storage, now) => call(storage, 'periodic work', (cap) => plugin.periodic(cap, now)) : undefined,
    renewLogin: description.renewLogin ? (storage, role, policies) => call(storage, 'login renewal', (cap) => plugin.renewLogin(role, [...policies], cap)) : undefined,
  };
}
