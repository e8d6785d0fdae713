// Builds the Worker with wrangler and serves it through the Miniflare API directly (no wrangler
// dev proxy: 2-3x faster here, and the only local way to give the Worker mTLS bindings).
// Used by `npm start` (scripts/start.mjs) and by the benchmark's baselines.

import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Log, LogLevel, Miniflare } from 'miniflare';
import { unstable_readConfig } from 'wrangler';

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

/** Bundles `configPath`'s Worker into `outDir` exactly as `wrangler deploy` would. */
export function build(configPath, outDir) {
  execFileSync(
    process.execPath,
    [path.join(ROOT, 'node_modules/wrangler/bin/wrangler.js'), 'deploy', '--dry-run', '--config', configPath, '--outdir', outDir],
    { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], env: { ...process.env, WRANGLER_SEND_METRICS: 'false', WRANGLER_LOG: 'error' } },
  );
  const script = path.join(outDir, 'index.js');
  if (!existsSync(script)) throw new Error(`wrangler produced no ${script}`);
  return script;
}

const LEVELS = { debug: LogLevel.DEBUG, info: LogLevel.INFO, warn: LogLevel.WARN, error: LogLevel.ERROR, none: LogLevel.NONE };

/**
 * Starts a Worker described by a wrangler config. Durable Objects use SQLite, persisted under
 * `persistDir` (or kept in memory when it is false). `serviceBindings` go to Miniflare as they are
 * (e.g. the HSM bridge's `network` service with mutual TLS, scripts/hsm-local.mjs). Returns the
 * Miniflare instance and its URL.
 */
export async function serve({ configPath, scriptPath, port, persistDir, bindings = {}, serviceBindings = {}, logLevel = 'info', inspectorPort }) {
  const config = unstable_readConfig({ config: configPath });
  const sqliteClasses = new Set(config.migrations.flatMap((m) => m.new_sqlite_classes ?? []));
  const durableObjects = Object.fromEntries(
    config.durable_objects.bindings.map((b) => [b.name, { className: b.class_name, useSQLite: sqliteClasses.has(b.class_name) }]),
  );
  const mf = new Miniflare({
    log: new Log(LEVELS[logLevel] ?? LogLevel.INFO),
    host: '127.0.0.1',
    port,
    modules: true,
    scriptPath,
    compatibilityDate: config.compatibility_date,
    compatibilityFlags: config.compatibility_flags,
    durableObjects,
    durableObjectsPersist: persistDir === false ? false : persistDir,
    // The Worker Loader (plugins run in isolates it makes).
    workerLoaders: Object.fromEntries((config.worker_loaders ?? []).map((b) => [b.binding, {}])),
    bindings: { ...config.vars, ...bindings },
    ...(Object.keys(serviceBindings).length ? { serviceBindings } : {}),
    // A local placeholder for request.cf: Miniflare would otherwise fetch one from the internet
    // at every start and print a stack trace when offline.
    cf: false,
    ...(inspectorPort ? { inspectorPort } : {}),
  });
  const url = await mf.ready;
  return { mf, url: url.toString().replace(/\/$/, '') };
}
