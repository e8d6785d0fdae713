// The plugin SDK: turns a Backend written with Coffer's framework into the entrypoint a plugin's
// isolate exports (src/core/plugins/contract.ts). A plugin's module ends with
//   export default definePlugin((env) => myBackend(env));
// and is bundled by plugins/sdk/build.mjs. The hosting MountObject matches paths, authorises and
// validates fields with the description this gives; here the request is run on the Backend.

import { WorkerEntrypoint } from 'cloudflare:workers';
import type { AuthContext, Backend, LeaseView, LogicalRequest, LogicalResponse, RenewLimits } from '../../src/framework/backend';
import { asCofferError, CofferError } from '../../src/framework/errors';
import { FieldData } from '../../src/framework/fields';
import {
  PLUGIN_CONTRACT_VERSION,
  type PluginDescription,
  type PluginEntrypoint,
  type PluginLog,
  type PluginRequest,
  type PluginReply,
  type PluginResponse,
  type PluginResult,
  type PluginStorage,
} from '../../src/core/plugins/contract';
import { withPrefetched } from './prefetched';

export type { Backend } from '../../src/framework/backend';

/** The isolate's env: the catalog entry's `env` (K=V) as strings. */
export type PluginEnv = Record<string, string>;

/** The log of the call in progress (all calls log to the same hosting mount). */
let currentLog: PluginLog | null = null;

/** Writes a line to the hosting mount's log (a plugin's console output goes nowhere the operator sees). */
export function log(level: 'debug' | 'info' | 'warn' | 'error', message: string): void {
  currentLog?.log(level, message);
}

function authOf(req: PluginRequest): AuthContext | null {
  const a = req.auth;
  if (!a) return null;
  // Neither the token nor its accessor reaches a plugin.
  return { accessor: '', policies: a.policies, root: a.policies.includes('root'), displayName: a.displayName, entityId: a.entityId, tokenType: a.tokenType, boundCidrs: [] };
}

async function settle<T>(host: PluginLog, run: () => Promise<T>): Promise<PluginResult<T>> {
  currentLog = host;
  try {
    return { ok: true, value: await run() };
  } catch (e) {
    const err = asCofferError(e);
    if (err instanceof CofferError) return { ok: false, status: err.status, errors: err.errors };
    return { ok: false, crash: err instanceof Error ? err.message : String(err) };
  }
}

/** Only the data parts of a response cross back to the host. */
function responseOf(r: LogicalResponse | null): PluginResponse | null {
  if (!r) return null;
  const out: PluginResponse = {};
  if (r.data !== undefined) out.data = r.data;
  if (r.warnings) out.warnings = r.warnings;
  if (r.lease) out.lease = r.lease;
  if (r.secret) out.secret = r.secret;
  if (r.status !== undefined) out.status = r.status;
  if (r.login) out.login = r.login;
  if (r.raw) out.raw = { status: r.raw.status, body: r.raw.body, contentType: r.raw.contentType };
  return out;
}

export function definePlugin(make: Backend | ((env: PluginEnv) => Backend)): new (ctx: ExecutionContext, env: PluginEnv) => WorkerEntrypoint<PluginEnv> & PluginEntrypoint {
  return class Plugin extends WorkerEntrypoint<PluginEnv> implements PluginEntrypoint {
    #backend: Backend | undefined;

    get #b(): Backend {
      return (this.#backend ??= typeof make === 'function' ? make(this.env ?? {}) : make);
    }

    #request(index: number, r: PluginRequest, cap: PluginStorage): { req: LogicalRequest; fields: FieldData; backend: Backend; index: number } {
      const backend = this.#b;
      const def = backend.paths[index];
      if (!def) throw new Error(`no path ${index}`);
      // The capability is the Storage: every key goes through the host, inside the mount's barrier
      // (but for the keys the host read ahead and sent along: PathDef.prefetch).
      const { prefetched, ...rest } = r;
      const req: LogicalRequest = { ...rest, storage: withPrefetched(cap, prefetched), auth: authOf(r), headers: {} };
      // The host validated the same fields already; this parses them for the handler.
      const fields = new FieldData(def.fields ?? {}, r.data);
      fields.validate();
      return { req, fields, backend, index };
    }

    async describe(): Promise<PluginDescription> {
      const b = this.#b;
      return {
        contract: PLUGIN_CONTRACT_VERSION,
        type: b.type,
        paths: b.paths.map((p) => ({
          pattern: p.pattern,
          fields: p.fields,
          operations: Object.keys(p.operations) as PluginDescription['paths'][number]['operations'],
          existenceCheck: Boolean(p.existenceCheck),
          createIsUpdate: !p.operations.create || p.operations.create === p.operations.update,
          updateWhenCreateDenied: p.updateWhenCreateDenied,
          arbitraryData: p.arbitraryData,
          prefetch: p.prefetch,
          summary: p.summary,
        })),
        unauthenticatedPaths: b.unauthenticatedPaths,
        sudoPaths: b.sudoPaths,
        writingReadPaths: b.writingReadPaths,
        storageFreeWritePaths: b.storageFreeWritePaths,
        secretTypes: Object.fromEntries(Object.entries(b.secretTypes ?? {}).map(([k, t]) => [k, { renew: Boolean(t.renew) }])),
        periodic: Boolean(b.periodic),
        renewLogin: Boolean(b.renewLogin),
      };
    }

    handle(index: number, r: PluginRequest, cap: PluginStorage): Promise<PluginResult<PluginReply>> {
      return settle(cap, async () => {
        const { req, fields, backend } = this.#request(index, r, cap);
        // The host schedules the periodic work the handler asks for.
        let wakeAt: number | null = null;
        req.wakeAt = (at) => void (wakeAt = wakeAt === null ? at : Math.min(wakeAt, at));
        const def = backend.paths[index]!;
        const handler = def.operations[req.operation] ?? (req.operation === 'create' ? def.operations.update : undefined);
        if (!handler) throw new CofferError(405, ['unsupported operation']);
        const response = responseOf(await handler(req, fields));
        return { response, wakeAt };
      });
    }

    exists(index: number, r: PluginRequest, cap: PluginStorage): Promise<PluginResult<boolean>> {
      return settle(cap, async () => {
        const { req, fields, backend } = this.#request(index, r, cap);
        const check = backend.paths[index]!.existenceCheck;
        return check ? await check(req, fields) : false;
      });
    }

    periodic(cap: PluginStorage, now: number): Promise<PluginResult<number | null>> {
      return settle(cap, async () => (this.#b.periodic ? await this.#b.periodic(cap, now) : null));
    }

    revoke(type: string, lease: LeaseView, cap: PluginStorage): Promise<PluginResult<null>> {
      return settle(cap, async () => {
        const t = this.#b.secretTypes?.[type];
        if (!t) throw new Error(`unknown secret type ${type}`);
        await t.revoke(lease, cap);
        return null;
      });
    }

    renew(type: string, lease: LeaseView, ttl: number, cap: PluginStorage): Promise<PluginResult<number | null>> {
      return settle(cap, async () => {
        const t = this.#b.secretTypes?.[type];
        if (!t?.renew) throw new Error(`secret type ${type} does not renew`);
        return (await t.renew(lease, ttl, cap)) ?? null;
      });
    }

    renewLogin(role: string, tokenPolicies: string[], cap: PluginStorage): Promise<PluginResult<RenewLimits>> {
      return settle(cap, async () => {
        if (!this.#b.renewLogin) throw new Error('this plugin does not renew logins');
        return await this.#b.renewLogin(cap, role, tokenPolicies);
      });
    }
  };
}
