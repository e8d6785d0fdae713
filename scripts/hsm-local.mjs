// The HSM bridge for `npm start` (scripts/start.mjs), so that pkcs11 managed keys can be tried
// locally. Two ways, both ending in the Worker's two bindings: HSM_BRIDGE (a Miniflare `network`
// service doing mutual TLS, see hsm-bridge/README.md "Local runs and tests") and HSM_BRIDGE_URL.
//
// * COFFER_HSM_BRIDGE=softhsm2: a SoftHSM2 token, a private CA with the bridge's server and
//   Coffer's client certificates, and the bridge's configuration, all kept under
//   <COFFER_DATA_DIR>/hsm/ (made 0700 on the first start, reused later; the user and SO PINs are
//   random, in hsm/pin and hsm/so-pin, 0600). The bridge (hsm-bridge/src/main.mjs) runs as a child
//   process on a free port of 127.0.0.1 until stop(), or until the launcher exits.
// * COFFER_HSM_BRIDGE_URL with COFFER_HSM_BRIDGE_CLIENT_CERT, COFFER_HSM_BRIDGE_CLIENT_KEY and
//   COFFER_HSM_BRIDGE_CA (PEM files): a bridge run elsewhere; nothing is started.
//
// Node built-ins only.

import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const BRIDGE_MAIN = path.join(ROOT, 'hsm-bridge/src/main.mjs');
const PKCS11_NATIVE = path.join(ROOT, 'hsm-bridge/node_modules/pkcs11js/build/Release/pkcs11.node');
const SOFTHSM_LIBS = ['/usr/lib/softhsm/libsofthsm2.so', '/usr/lib/x86_64-linux-gnu/softhsm/libsofthsm2.so', '/usr/lib/aarch64-linux-gnu/softhsm/libsofthsm2.so', '/usr/local/lib/softhsm/libsofthsm2.so', '/opt/homebrew/lib/softhsm/libsofthsm2.so'];

/** What a managed key's `library` field names, and the label of the token made for the launcher. */
export const LIBRARY = 'softhsm';
export const TOKEN_LABEL = 'coffer';
/** The client certificate's name, the only one the local bridge accepts. */
const CLIENT_NAME = 'coffer';
/** Certificates are remade when they expire within this many seconds. */
const RENEW_BEFORE_S = 7 * 24 * 3600;
const CERT_DAYS = 825;

// When the launcher dies without running its exit hooks (SIGKILL), the bridge's stdin (a pipe from
// the launcher) ends: the bridge then stops itself the orderly way. Loaded before the bridge's code.
const PARENT_WATCH = 'data:text/javascript,process.stdin.on("end",()=>process.kill(process.pid,"SIGTERM")).on("error",()=>{}).resume();';

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;

/** The label of the RSA key the launcher's pkcs11 seal wraps the root key with (made at the first init). */
export const SEAL_KEY_LABEL = 'coffer-seal';
/** The Worker's variables of the pkcs11 seal (src/rpc/env.ts); set in the launcher's environment, they are passed on as they are. */
const SEAL_VARS = ['SEAL_PKCS11_LIBRARY', 'SEAL_PKCS11_SLOT', 'SEAL_PKCS11_TOKEN_LABEL', 'SEAL_PKCS11_PIN', 'SEAL_PKCS11_KEY_LABEL', 'SEAL_PKCS11_KEY_ID', 'SEAL_PKCS11_KEY_BITS', 'SEAL_PKCS11_GENERATE_KEY', 'SEAL_PKCS11_RSA_OAEP_HASH'];

/**
 * The Worker's bindings of the pkcs11 seal (COFFER_SEAL=pkcs11) on the bridge `hsm`: on the local
 * SoftHSM2 bridge, the launcher's token and PIN and an RSA key labelled "coffer-seal", generated at
 * the first init (RSA-OAEP with SHA-1: SoftHSM2 2.6 has no other OAEP hash); on a bridge run
 * elsewhere, the SEAL_PKCS11_* variables of the launcher's environment. SEAL_PKCS11_* set in the
 * launcher's environment win in both cases. Throws when there is no bridge, or the variables of an
 * external one are incomplete.
 */
export function sealBindings(hsm, env = process.env) {
  if (!hsm) {
    throw new Error('COFFER_SEAL=pkcs11 needs an HSM bridge: set COFFER_HSM_BRIDGE=softhsm2 (a local SoftHSM2 token), or COFFER_HSM_BRIDGE_URL with its certificates and the SEAL_PKCS11_* variables (a bridge run elsewhere).');
  }
  const given = Object.fromEntries(SEAL_VARS.filter((k) => env[k] !== undefined && env[k] !== '').map((k) => [k, env[k]]));
  if (hsm.pinFile) {
    const local = {
      SEAL_PKCS11_LIBRARY: hsm.library,
      SEAL_PKCS11_TOKEN_LABEL: hsm.tokenLabel,
      SEAL_PKCS11_PIN: readFileSync(hsm.pinFile, 'utf8').trim(),
      SEAL_PKCS11_KEY_LABEL: SEAL_KEY_LABEL,
      SEAL_PKCS11_GENERATE_KEY: 'true',
      SEAL_PKCS11_RSA_OAEP_HASH: 'sha1',
    };
    // A slot given in the environment replaces the token label (the seal takes one of the two).
    if (given.SEAL_PKCS11_SLOT) delete local.SEAL_PKCS11_TOKEN_LABEL;
    return { SEAL_TYPE: 'pkcs11', ...local, ...given };
  }
  const missing = [
    ['SEAL_PKCS11_LIBRARY'],
    ['SEAL_PKCS11_TOKEN_LABEL', 'SEAL_PKCS11_SLOT'],
    ['SEAL_PKCS11_PIN'],
    ['SEAL_PKCS11_KEY_LABEL', 'SEAL_PKCS11_KEY_ID'],
  ].filter((names) => !names.some((k) => given[k]));
  if (missing.length) throw new Error(`COFFER_SEAL=pkcs11 with COFFER_HSM_BRIDGE_URL needs ${missing.map((names) => names.join(' or ')).join(', ')} in the environment.`);
  return { SEAL_TYPE: 'pkcs11', ...given };
}

/** Reads the launcher's environment: which bridge to use, or none. Throws on an incomplete setting. */
export function hsmBridgeMode(env = process.env) {
  const kind = env.COFFER_HSM_BRIDGE ?? '';
  const url = env.COFFER_HSM_BRIDGE_URL ?? '';
  if (kind && kind !== 'softhsm2') throw new Error(`COFFER_HSM_BRIDGE=${kind}: the only value is "softhsm2" (or use COFFER_HSM_BRIDGE_URL for a bridge run elsewhere).`);
  if (kind && url) throw new Error('Set COFFER_HSM_BRIDGE=softhsm2 (a local bridge) or COFFER_HSM_BRIDGE_URL (a bridge run elsewhere), not both.');
  if (kind) return 'softhsm2';
  const files = ['COFFER_HSM_BRIDGE_CLIENT_CERT', 'COFFER_HSM_BRIDGE_CLIENT_KEY', 'COFFER_HSM_BRIDGE_CA'];
  if (!url) {
    const stray = files.filter((k) => env[k]);
    if (stray.length) throw new Error(`${stray.join(', ')} set without COFFER_HSM_BRIDGE_URL.`);
    return null;
  }
  const missing = files.filter((k) => !env[k]);
  if (missing.length) throw new Error(`COFFER_HSM_BRIDGE_URL needs ${missing.join(', ')} too (PEM file paths).`);
  if (!/^https:\/\/[^/]+/.test(url)) throw new Error(`COFFER_HSM_BRIDGE_URL=${url}: give the bridge's https:// URL.`);
  return 'external';
}

function bindingsFor({ url, certPem, keyPem, caPem, allow }) {
  return {
    bindings: { HSM_BRIDGE_URL: url },
    serviceBindings: {
      HSM_BRIDGE: { network: { allow, tlsOptions: { keypair: { privateKey: keyPem, certificateChain: certPem }, trustedCertificates: [caPem] } } },
    },
  };
}

/** The bindings of a bridge run elsewhere (COFFER_HSM_BRIDGE_URL and its three PEM files). */
export function externalBridge(env = process.env) {
  const read = (k) => {
    const file = path.resolve(env[k]);
    if (!existsSync(file)) throw new Error(`${k}=${env[k]}: no such file.`);
    const pem = readFileSync(file, 'utf8');
    if (!pem.includes('-----BEGIN ')) throw new Error(`${k}=${env[k]}: not a PEM file.`);
    return pem;
  };
  const url = env.COFFER_HSM_BRIDGE_URL.replace(/\/+$/, '');
  // The bridge may be anywhere the operator put it: mutual TLS guards the link, not the address.
  return {
    url,
    ...bindingsFor({ url, certPem: read('COFFER_HSM_BRIDGE_CLIENT_CERT'), keyPem: read('COFFER_HSM_BRIDGE_CLIENT_KEY'), caPem: read('COFFER_HSM_BRIDGE_CA'), allow: ['private', 'local', 'public'] }),
  };
}

/** What is missing for a local SoftHSM2 bridge, with how to install it; throws when anything is. */
function checkPrerequisites() {
  const problems = [];
  const lib = SOFTHSM_LIBS.find((f) => existsSync(f));
  if (!has('softhsm2-util') || !lib) problems.push(`SoftHSM2 is not installed (softhsm2-util and libsofthsm2.so): run \`npm run setup\` (or \`sudo apt-get install softhsm2\`).`);
  if (!has('openssl')) problems.push('openssl is not installed: run `npm run setup` (or `sudo apt-get install openssl`).');
  if (!existsSync(BRIDGE_MAIN)) problems.push(`${BRIDGE_MAIN} is missing.`);
  else if (!existsSync(PKCS11_NATIVE)) {
    problems.push(
      "the HSM bridge's dependencies are not installed (pkcs11js, a native module): run `npm run setup` (it installs g++ and make, then the bridge's dependencies), or `npm ci` in hsm-bridge/ once a C++ toolchain is there.",
    );
  }
  if (problems.length) throw new Error(`COFFER_HSM_BRIDGE=softhsm2 cannot start the HSM bridge:\n  - ${problems.join('\n  - ')}`);
  return lib;
}

/** A random PIN kept in `file` (0600, no trailing newline, so that `pin=@file` reads it exactly). */
function pinIn(file) {
  if (!existsSync(file)) writeFileSync(file, randomBytes(16).toString('hex'), { mode: 0o600 });
  return readFileSync(file, 'utf8').trim();
}

/**
 * Starts the local bridge on SoftHSM2 with its state under `<dataDir>/hsm/`. Resolves once it
 * listens, with the Worker's bindings, what a user needs to make a managed key, and stop().
 */
export async function startLocalBridge({ dataDir, logLevel = 'info', onLog = (line) => process.stderr.write(`hsm-bridge: ${line}\n`) }) {
  const softhsmLib = checkPrerequisites();
  const dir = path.join(dataDir, 'hsm');
  const at = (name) => path.join(dir, name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  for (const sub of ['tokens', 'tmp']) mkdirSync(at(sub), { recursive: true, mode: 0o700 });

  // SoftHSM2 and openssl work inside dir, their temporary files too (nothing goes to /tmp).
  const env = { ...process.env, SOFTHSM2_CONF: at('softhsm2.conf'), TMPDIR: at('tmp') };
  const run = (cmd, args) => {
    try {
      return execFileSync(cmd, args, { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (e) {
      throw new Error(`${cmd} ${args[0]} failed: ${(e.stderr || e.message || '').toString().trim()}`);
    }
  };
  // Rewritten at every start: the data directory may have moved.
  writeFileSync(at('softhsm2.conf'), `directories.tokendir = ${at('tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`, { mode: 0o600 });

  const pin = pinIn(at('pin'));
  const soPin = pinIn(at('so-pin'));
  const slots = run('softhsm2-util', ['--show-slots']);
  if (!new RegExp(`^\\s*Label:\\s*${TOKEN_LABEL}\\s*$`, 'm').test(slots)) {
    if (readdirSync(at('tokens')).length > 0) throw new Error(`${at('tokens')} holds a SoftHSM2 token, but none labelled "${TOKEN_LABEL}": move the directory away to start afresh.`);
    run('softhsm2-util', ['--init-token', '--free', '--label', TOKEN_LABEL, '--pin', pin, '--so-pin', soPin]);
  }

  // The link's certificates: a CA, the bridge's server certificate (127.0.0.1, localhost) and
  // Coffer's client certificate; made again, all three, when one is missing or about to expire.
  const certs = ['ca', 'server', 'client'];
  const valid = (name) => existsSync(at(`${name}.pem`)) && existsSync(at(`${name}.key`)) && spawnSync('openssl', ['x509', '-in', at(`${name}.pem`), '-noout', '-checkend', String(RENEW_BEFORE_S)], { stdio: 'ignore' }).status === 0;
  if (!certs.every(valid)) {
    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
    run('openssl', ['req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-subj', '/CN=Coffer local HSM bridge CA', '-days', String(CERT_DAYS), '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
    const leaf = (name, cn, ext) => {
      run('openssl', ['req', '-new', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
      writeFileSync(at(`${name}.ext`), ext, { mode: 0o600 });
      run('openssl', ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-set_serial', `0x${randomBytes(16).toString('hex')}`, '-days', String(CERT_DAYS), '-out', `${name}.pem`, '-extfile', `${name}.ext`]);
    };
    leaf('server', 'hsm-bridge', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
    leaf('client', CLIENT_NAME, 'extendedKeyUsage=clientAuth\n');
  }

  // The bridge logs at info at least: its "listening" line (info) says it is ready and where.
  // What it logs afterwards is passed on at the launcher's level (none: nothing).
  const LEVELS = ['debug', 'info', 'warn', 'error', 'none'];
  const shownFrom = LEVELS.includes(logLevel) ? LEVELS.indexOf(logLevel) : 1;
  const bridgeLevel = logLevel === 'debug' ? 'debug' : 'info';
  writeFileSync(
    at('config.json'),
    JSON.stringify(
      {
        listen: { address: '127.0.0.1', port: 0 },
        tls: { cert_file: 'server.pem', key_file: 'server.key', client_ca_file: 'ca.pem', allowed_client_names: [CLIENT_NAME] },
        kms_library: [{ name: LIBRARY, library: softhsmLib, max_sessions: 16 }],
        log_level: bridgeLevel,
      },
      null,
      2,
    ) + '\n',
    { mode: 0o600 },
  );

  const child = spawn(process.execPath, ['--import', PARENT_WATCH, BRIDGE_MAIN, '--config', at('config.json')], { cwd: dir, env, stdio: ['pipe', 'pipe', 'pipe'] });
  // The launcher's exit, however it comes (process.exit, an uncaught error), ends the bridge too.
  const onExit = () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  };
  process.once('exit', onExit);

  let output = '';
  let ready = false;
  const url = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the HSM bridge did not start within 30 s:\n${output}`));
    }, 30_000);
    let partial = '';
    const onData = (chunk) => {
      if (ready) {
        partial += chunk.toString();
        const lines = partial.split('\n');
        partial = lines.pop();
        for (const line of lines) {
          if (!line.trim()) continue;
          const level = /^\{"time":"[^"]*","level":"(\w+)"/.exec(line)?.[1];
          if (!level || LEVELS.indexOf(level) >= shownFrom) onLog(line);
        }
        return;
      }
      output += chunk.toString();
      const m = /"msg":"hsm-bridge listening","url":"(https:\/\/[^"]+)"/.exec(output);
      if (m) {
        ready = true;
        clearTimeout(timer);
        resolve(m[1]);
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      if (!ready) {
        process.removeListener('exit', onExit);
        reject(new Error(`the HSM bridge exited (${signal ?? code}) before it was ready:\n${output.trim()}`));
      }
    });
  });
  child.stdin.on('error', () => {});

  const exited = new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
  /** Ends the bridge (SIGTERM; SIGKILL after 10 s) and resolves with its exit code. */
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    process.removeListener('exit', onExit);
    return child.exitCode;
  };

  const read = (name) => readFileSync(at(name), 'utf8');
  return {
    url,
    pid: child.pid,
    dir,
    library: LIBRARY,
    tokenLabel: TOKEN_LABEL,
    pinFile: at('pin'),
    ...bindingsFor({ url, certPem: read('client.pem'), keyPem: read('client.key'), caPem: read('ca.pem'), allow: ['private', 'local'] }),
    stop,
  };
}
