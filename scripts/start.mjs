// `npm start`: Coffer on http://127.0.0.1:8200 (PORT overrides) with embedded local storage under
// .coffer/data (COFFER_DATA_DIR overrides). The first start creates a seal key, initialises
// through the public API and mounts kv at secret/; later starts reuse the data.
//
// Environment: PORT, COFFER_DATA_DIR, COFFER_DEV_ROOT_TOKEN (root token id on first init),
// COFFER_LOG_LEVEL (debug|info|warn|error), COFFER_SKIP_BUILD=1 (reuse dist/, for tests),
// COFFER_INSPECTOR_PORT (open workerd's inspector, e.g. for `npm run bench:profile`),
// COFFER_API_ADDR (this cluster's address as DR secondaries reach it, put into activation tokens;
// by default the launcher's own http://127.0.0.1:<port>),
// GOOGLE_ADMIN_API_URL, MICROSOFT_GRAPH_URL, REQUEST_READ_TIMEOUT_MS, TRANSIT_BATCH_CPU_BUDGET_MS,
// AZURE_AUTHORITY_HOST, AZURE_KEYVAULT_URL, GOOGLE_CLOUDKMS_URL
// (passed on to the Worker), COFFER_PLUGIN_DIR (the plugin directory catalog commands name; by
// default <COFFER_DATA_DIR>/plugins, created owner-only).
// HSM keys (scripts/hsm-local.mjs): COFFER_HSM_BRIDGE=softhsm2 starts the HSM bridge on a SoftHSM2
// token kept under <COFFER_DATA_DIR>/hsm/; or COFFER_HSM_BRIDGE_URL with COFFER_HSM_BRIDGE_CLIENT_CERT,
// COFFER_HSM_BRIDGE_CLIENT_KEY and COFFER_HSM_BRIDGE_CA (PEM files) use a bridge run elsewhere.
// The seal: COFFER_SEAL=static (the default: a random key in <COFFER_DATA_DIR>/seal.key),
// COFFER_SEAL=pkcs11 (with a bridge: the root key is wrapped by an RSA key on the HSM token, made
// at the first init; no seal key on disk), or COFFER_SEAL=awskms | azurekeyvault | gcpckms (an RSA
// key in that cloud's KMS, described by COFFER_SEAL_MANAGED_KEY: the path of a JSON file, or the
// JSON itself, with the fields of a managed key of that type; passed on as SEAL_TYPE and
// SEAL_MANAGED_KEY, given at every start and never copied to disk). A data directory keeps the
// seal type it began with (<COFFER_DATA_DIR>/seal-type).

import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { initialise, isInitialised } from './first-start.mjs';
import { externalBridge, hsmBridgeMode, SEAL_KEY_LABEL, sealBindings, startLocalBridge } from './hsm-local.mjs';
import { build, ROOT, serve } from './miniflare-server.mjs';
import { pluginDirectory, pluginDirService } from './plugin-dir.mjs';

const port = Number(process.env.PORT ?? 8200);
const dataDir = path.resolve(process.env.COFFER_DATA_DIR ?? path.join(ROOT, '.coffer/data'));
const devRootToken = process.env.COFFER_DEV_ROOT_TOKEN ?? '';
const logLevel = process.env.COFFER_LOG_LEVEL ?? 'info';
const quiet = logLevel === 'warn' || logLevel === 'error' || logLevel === 'none';
const say = (line = '') => {
  if (!quiet) console.log(line);
};

function sealKey() {
  const file = path.join(dataDir, 'seal.key');
  if (!existsSync(file)) writeFileSync(file, randomBytes(32).toString('hex') + '\n', { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

const CLOUD_SEALS = ['awskms', 'azurekeyvault', 'gcpckms'];
const SEAL_TYPES = ['static', 'pkcs11', ...CLOUD_SEALS];

/**
 * The Worker's variables of a cloud KMS seal: COFFER_SEAL_MANAGED_KEY is the JSON object of the
 * managed key's fields, or the path of a file holding it. Only its form is checked here (the
 * Worker validates the fields, and says what is wrong in sys/seal-status); its text, which holds
 * credentials, is never printed.
 */
function cloudSealBindings(type, env = process.env, why = '') {
  const given = (env.COFFER_SEAL_MANAGED_KEY ?? '').trim();
  const what = `the fields of a ${type} managed key, as sys/managed-keys/${type}/<name> takes them, with "allow_generate_key": true to have the first start create the key`;
  if (!given) throw new Error(`COFFER_SEAL=${type}${why} needs COFFER_SEAL_MANAGED_KEY: the path of a JSON file (or the JSON itself) with ${what}.`);
  let text = given;
  let where = 'COFFER_SEAL_MANAGED_KEY';
  if (!given.startsWith('{')) {
    const file = path.resolve(given);
    // Echoed only when it looks like a path: a mangled JSON object may hold credentials.
    const shown = /^[^"'{}\n]{1,300}$/.test(given) ? `=${given}` : '';
    if (!existsSync(file)) throw new Error(`COFFER_SEAL_MANAGED_KEY${shown}: no such file (give the path of a JSON file, or the JSON object itself).`);
    text = readFileSync(file, 'utf8');
    where = `COFFER_SEAL_MANAGED_KEY (${file})`;
  }
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new Error(`${where} is not valid JSON: give one JSON object with ${what}.`);
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error(`${where} is not a JSON object: give one with ${what}.`);
  return { SEAL_TYPE: type, SEAL_MANAGED_KEY: JSON.stringify(parsed) };
}

/**
 * The seal type: COFFER_SEAL, else the one the data directory began with (seal-type; a seal.key
 * of an older launcher means static), else static. Throws on an unknown type, and on a type other
 * than the data directory's (migrating between seal types is not supported), and on pkcs11
 * without a bridge. Records it.
 */
function sealType(hsmMode) {
  const file = path.join(dataDir, 'seal-type');
  const recorded = existsSync(file) ? readFileSync(file, 'utf8').trim() : existsSync(path.join(dataDir, 'seal.key')) ? 'static' : '';
  const asked = (process.env.COFFER_SEAL ?? '').trim();
  if (asked && !SEAL_TYPES.includes(asked)) {
    throw new Error(
      `COFFER_SEAL=${asked}: the seal types are "static" (the default: a seal key in the data directory) and "pkcs11" (an RSA key on the HSM bridge's token), and the cloud KMS seals "awskms", "azurekeyvault" and "gcpckms" (with COFFER_SEAL_MANAGED_KEY).`,
    );
  }
  const type = asked || recorded || 'static';
  if (recorded && type !== recorded) {
    throw new Error(`COFFER_SEAL=${type}: ${dataDir} began with the ${recorded} seal, and migrating between seal types is not supported (use another COFFER_DATA_DIR, or COFFER_SEAL=${recorded}).`);
  }
  // Refused before anything is recorded or started: no bridge, or an external one without SEAL_PKCS11_*.
  if (type === 'pkcs11' && hsmMode !== 'softhsm2') sealBindings(hsmMode === 'external' ? {} : null);
  if (CLOUD_SEALS.includes(type)) cloudSealBindings(type, process.env, asked ? '' : ` (${dataDir} began with that seal)`);
  if (!recorded) writeFileSync(file, `${type}\n`, { mode: 0o600 });
  return type;
}

async function firstStart(url) {
  const initFile = await initialise(url, dataDir);
  say(`Initialised a new cluster; the root token and the recovery key are in ${initFile}`);
  say('Mounted a kv version 2 secrets engine at secret/.');
}

/** Worker variables taken from the launcher's environment when set: where the JWT method's providers find
 * Google's and Microsoft's APIs (emulators), the request read timeout and the transit batch budget. */
function apiOverrides() {
  return Object.fromEntries(['GOOGLE_ADMIN_API_URL', 'MICROSOFT_GRAPH_URL', 'REQUEST_READ_TIMEOUT_MS', 'TRANSIT_BATCH_CPU_BUDGET_MS', 'OFFLOAD_HANDLERS', 'OFFLOAD_MIN_COST_US', 'DR_LOG_MAX_ENTRIES', 'AZURE_AUTHORITY_HOST', 'AZURE_KEYVAULT_URL', 'GOOGLE_CLOUDKMS_URL'].filter((k) => process.env[k]).map((k) => [k, process.env[k]]));
}

/** A port nothing listens on now, as the kernel picks one for port 0. */
function freePort() {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port: free } = probe.address();
      probe.close(() => resolve(free));
    });
  });
}

/**
 * Serves the Worker with the COFFER_API_ADDR binding: the variable when set, else the launcher's
 * own URL. A Worker's bindings are fixed before it listens, so with PORT=0 the port is picked here
 * first; another process may take it before workerd binds it, and then another is picked.
 */
async function serveWithAddress(options) {
  const given = process.env.COFFER_API_ADDR;
  for (let attempt = 1; ; attempt++) {
    const listenPort = port === 0 && !given ? await freePort() : port;
    try {
      return await serve({ ...options, port: listenPort, bindings: { ...options.bindings, COFFER_API_ADDR: given || `http://127.0.0.1:${listenPort}` } });
    } catch (e) {
      if (listenPort === port || attempt === 3 || !/Address already in use/.test(e instanceof Error ? e.message : String(e))) throw e;
    }
  }
}

/** Everything under the data directory is its owner's alone: folders 0700, files 0600. */
function ownerOnly(dir) {
  chmodSync(dir, 0o700);
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) ownerOnly(full);
    else if (entry.isFile()) chmodSync(full, 0o600);
  }
}

async function main() {
  // The data directory holds the seal key and every object's database: what this process and
  // workerd (its child) create there is readable by the owner only, and what an earlier version
  // left more open is closed now.
  process.umask(0o077);
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  ownerOnly(dataDir);
  // The HSM bridge first: the Worker's HSM_BRIDGE binding needs its URL and certificates.
  const hsmMode = hsmBridgeMode();
  const seal = sealType(hsmMode);
  const hsm = hsmMode === 'softhsm2' ? await startLocalBridge({ dataDir, logLevel }) : hsmMode === 'external' ? externalBridge() : null;
  const sealVars = seal === 'pkcs11' ? sealBindings(hsm) : CLOUD_SEALS.includes(seal) ? cloudSealBindings(seal) : { SEAL_KEY: sealKey() };
  const scriptPath = process.env.COFFER_SKIP_BUILD === '1' ? path.join(ROOT, 'dist/index.js') : build(path.join(ROOT, 'wrangler.toml'), path.join(ROOT, 'dist'));
  const { mf, url } = await serveWithAddress({
    configPath: path.join(ROOT, 'wrangler.toml'),
    scriptPath,
    persistDir: path.join(dataDir, 'do'),
    logLevel,
    inspectorPort: process.env.COFFER_INSPECTOR_PORT ? Number(process.env.COFFER_INSPECTOR_PORT) : undefined,
    bindings: { ...sealVars, ...(devRootToken ? { DEV_ROOT_TOKEN: devRootToken } : {}), ...apiOverrides(), ...(hsm?.bindings ?? {}) },
    serviceBindings: { ...(hsm?.serviceBindings ?? {}), PLUGIN_DIR: pluginDirService(pluginDirectory(dataDir)) },
  });

  let stopping = false;
  const stop = async (signal) => {
    if (stopping) return;
    stopping = true;
    say(`\n${signal}: stopping`);
    await mf.dispose();
    await hsm?.stop?.();
    process.exit(0);
  };
  // Miniflare's own exit hook exits at once with 130/143; replace it with an orderly dispose.
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.removeAllListeners(signal);
    process.on(signal, () => stop(signal));
  }

  const initFile = path.join(dataDir, 'init.json');
  if (!(await isInitialised(url))) await firstStart(url);
  else if (devRootToken && existsSync(initFile) && JSON.parse(readFileSync(initFile, 'utf8')).root_token !== devRootToken) {
    console.warn('COFFER_DEV_ROOT_TOKEN only applies when the data directory is first initialised; it was ignored.');
  }

  const health = await fetch(`${url}/v1/sys/health`);
  // Always printed (tests and tools wait for this line), whatever the log level.
  console.log(`Coffer is listening on ${url} (data in ${dataDir})`);
  if (health.status === 503) {
    // A seal that cannot open the root key (a wrong PIN, an unreachable bridge) says why.
    const status = await (await fetch(`${url}/v1/sys/seal-status`)).json();
    for (const warning of status.warnings ?? []) console.warn(`The cluster is sealed: ${warning}`);
    say(`The cluster is sealed. Unseal it with the recovery key in ${initFile}:`);
    say(`    curl -X PUT ${url}/v1/sys/unseal -d "{\\"key\\": \\"$(node -p 'require(\\"${initFile}\\").recovery_keys[0]')\\"}"`);
  }
  say('');
  say('Use it with the vault CLI or any Vault client:');
  say(`    export VAULT_ADDR='${url}'`);
  say(devRootToken ? `    export VAULT_TOKEN='${devRootToken}'` : `    export VAULT_TOKEN="$(node -p 'require("${initFile}").root_token')"`);
  if (seal === 'pkcs11') {
    say('');
    say(
      hsm?.pinFile && sealVars.SEAL_PKCS11_KEY_LABEL === SEAL_KEY_LABEL
        ? `Seal: pkcs11. The root key is wrapped by the RSA key "${SEAL_KEY_LABEL}" on the SoftHSM2 token "${sealVars.SEAL_PKCS11_TOKEN_LABEL ?? ''}" (no seal key on disk).`
        : `Seal: pkcs11. The root key is wrapped by an RSA key on the HSM bridge's token (no seal key on disk).`,
    );
  }
  if (CLOUD_SEALS.includes(seal)) {
    say('');
    say(`Seal: ${seal}. The root key is wrapped by the cloud KMS key COFFER_SEAL_MANAGED_KEY describes (no seal key on disk); give it at every start.`);
  }
  if (hsm) {
    say('');
    if (hsm.stop) {
      say(`HSM keys: an HSM bridge on SoftHSM2 listens on ${hsm.url} (token and certificates in ${hsm.dir}).`);
      say(`    library "${hsm.library}", token label "${hsm.tokenLabel}", user PIN in ${hsm.pinFile}`);
      say(`    vault write sys/managed-keys/pkcs11/my-key library=${hsm.library} token_label=${hsm.tokenLabel} pin=@${hsm.pinFile} key_label=my-key mechanism=0x1041 curve=P256 allow_generate_key=true`);
    } else {
      say(`HSM keys: pkcs11 managed keys use the HSM bridge at ${hsm.url}.`);
      say(`    vault write sys/managed-keys/pkcs11/my-key library=<kms_library name> token_label=<token> pin=<PIN> key_label=my-key mechanism=0x1041 curve=P256 allow_generate_key=true`);
    }
    say('    vault write -f sys/managed-keys/pkcs11/my-key/test/sign');
  }
  say('');
  say('Press Ctrl-C to stop.');
}

main().catch((e) => {
  console.error(e instanceof Error ? e.message : e);
  process.exit(1);
});
