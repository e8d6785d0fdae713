#!/usr/bin/env node
// @ts-check
// Coffer's HSM bridge: `node src/main.mjs --config /etc/coffer-hsm-bridge/config.json`
// (or HSM_BRIDGE_CONFIG=…). See README.md.

import { ConfigError, loadConfig } from './config.mjs';
import { createHandler } from './http.mjs';
import { Limiters } from './limiter.mjs';
import { log, setLogLevel } from './log.mjs';
import { Libraries } from './pkcs11/libraries.mjs';
import { createRoutes, VERSION } from './routes.mjs';
import { createTlsServer } from './tls-server.mjs';

function configPath() {
  const args = process.argv.slice(2);
  const i = args.findIndex((a) => a === '--config' || a === '-c');
  if (i !== -1 && args[i + 1]) return args[i + 1];
  const eq = args.find((a) => a.startsWith('--config='));
  if (eq) return eq.slice('--config='.length);
  return process.env.HSM_BRIDGE_CONFIG;
}

async function main() {
  const file = configPath();
  if (!file) {
    process.stderr.write('usage: coffer-hsm-bridge --config <config.json>   (or set HSM_BRIDGE_CONFIG)\n');
    process.exit(2);
  }
  let config;
  try {
    config = loadConfig(file);
    setLogLevel(config.logLevel);
  } catch (e) {
    if (!(e instanceof ConfigError) && !(e instanceof Error)) throw e;
    process.stderr.write(`hsm-bridge: ${e.message}\n`);
    process.exit(2);
  }

  const libraries = new Libraries(config.libraries);
  // Load every library now, so a wrong path shows at start; a library that fails stays
  // unavailable (its requests answer 503) and the others still serve.
  for (const name of config.libraries.keys()) {
    try {
      libraries.get(name);
    } catch {
      // logged by Libraries
    }
  }
  const limiters = new Limiters();
  const routes = createRoutes({ libraries, limiters });
  const handler = createHandler({
    routes,
    maxRequestBytes: config.maxRequestBytes,
    allowedClientNames: config.tls.allowedClientNames,
    clientCertificates: config.tls.clientCa !== null,
    bearerToken: config.auth.bearerToken,
  });
  const server = createTlsServer(config.tls, handler);

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.listen.port, config.listen.address, () => resolve(undefined));
  });
  const addr = /** @type {import('node:net').AddressInfo} */ (server.address());
  const host = addr.family === 'IPv6' ? `[${addr.address}]` : addr.address;
  log.info('hsm-bridge listening', { url: `https://${host}:${addr.port}`, version: VERSION, libraries: [...config.libraries.values()].map((l) => l.name) });

  let stopping = false;
  const stop = (/** @type {string} */ signal) => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { signal });
    server.close(() => {
      libraries.closeAll();
      log.info('stopped');
      process.exit(0);
    });
    // Requests in flight finish; idle keep-alive connections close now.
    server.closeIdleConnections();
    setTimeout(() => process.exit(0), 10_000).unref();
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

main().catch((e) => {
  log.error('hsm-bridge failed', { error: e instanceof Error ? e.message : String(e) });
  process.exit(1);
});
