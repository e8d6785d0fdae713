// The HSM bridge (hsm-bridge/) as a real process against SoftHSM2, for the tests that need one:
// a temporary directory holding a SoftHSM2 token initialised for this run, a private CA with the
// bridge's server certificate and Coffer's client certificate (made by openssl), and the bridge
// started on a free port of 127.0.0.1. stop() ends the bridge and removes the directory (so
// nothing is left in the system's temporary folder: the bridge's and SoftHSM2's own temporary
// files go there too); the process does the same on exit, whatever happened.
// Runs in Node: the e2e suite imports it, and the workerd suite's globalSetup (./hsm-bridge-setup).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');
export const SOFTHSM_LIB = '/usr/lib/softhsm/libsofthsm2.so';

export interface HsmBridgeOptions {
  /** The user PIN of the token (default: a distinctive value, so that it can be looked for in output). */
  pin?: string;
  soPin?: string;
  tokenLabel?: string;
  /** The bridge's log level (default info). */
  logLevel?: 'debug' | 'info' | 'warn' | 'error';
  /** A bearer secret the bridge requires (auth.bearer_token_file). */
  bearerToken?: string;
  /** False: no client CA, so no client certificate is asked for (bearer-secret mode). Default true. */
  mutualTls?: boolean;
}

export interface PemPair {
  cert: string;
  key: string;
}

export interface HsmBridge {
  /** https://127.0.0.1:<port> */
  url: string;
  /** The temporary directory (removed by stop()). */
  dir: string;
  /** The environment the bridge runs with (SOFTHSM2_CONF, TMPDIR inside dir). */
  env: NodeJS.ProcessEnv;
  /** The CA of the link: it signed the server and client certificates. */
  caPem: string;
  clientCertPem: string;
  clientKeyPem: string;
  /** The kms_library stanza of SoftHSM2 ("softhsm"); "missing" names a stanza whose library does not load. */
  library: string;
  tokenLabel: string;
  /** The token's slot, in decimal. */
  slot: string;
  pin: string;
  soPin: string;
  /** The client certificate names the bridge accepts. */
  allowedClientNames: string[];
  proc: ChildProcess;
  /** Everything the bridge wrote (stdout and stderr). */
  output(): string;
  /** Runs openssl in dir. */
  openssl(...args: string[]): string;
  /** A new CA in dir (files <name>.pem, <name>.key); the link's own CA is "ca". */
  makeCa(name: string): PemPair;
  /** A client certificate with CN `cn`, signed by the CA named `ca` (default the link's). */
  makeClient(name: string, cn: string, ca?: string): PemPair;
  /** Ends the bridge (SIGTERM, resolving with its exit code) and removes dir. */
  stop(): Promise<number | null>;
}

let serial = 0;

export async function startHsmBridge(opts: HsmBridgeOptions = {}): Promise<HsmBridge> {
  const pin = opts.pin ?? 'pin-7f3a91c4e2';
  const soPin = opts.soPin ?? 'so-pin-2c7e19aa';
  const tokenLabel = opts.tokenLabel ?? 'coffer-test-token';
  const allowedClientNames = ['coffer'];

  const dir = mkdtempSync(path.join(os.tmpdir(), 'coffer-hsm-'));
  let proc: ChildProcess | undefined;
  const onExit = () => {
    proc?.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', onExit);

  try {
    const at = (name: string) => path.join(dir, name);
    const env = { ...process.env, SOFTHSM2_CONF: at('softhsm2.conf'), TMPDIR: at('tmp') };
    const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const read = (name: string): PemPair => ({ cert: readFileSync(at(`${name}.pem`), 'utf8'), key: readFileSync(at(`${name}.key`), 'utf8') });

    // SoftHSM2: a token directory inside the temp dir, one token for this run.
    mkdirSync(at('tokens'));
    mkdirSync(at('tmp'));
    writeFileSync(at('softhsm2.conf'), `directories.tokendir = ${at('tokens')}\nobjectstore.backend = file\nlog.level = ERROR\n`);
    const init = execFileSync('softhsm2-util', ['--init-token', '--free', '--label', tokenLabel, '--pin', pin, '--so-pin', soPin], { env, encoding: 'utf8' });
    const slot = /reassigned to slot (\d+)/.exec(init)?.[1];
    if (!slot) throw new Error(`softhsm2-util did not say which slot the token is in:\n${init}`);

    const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
    const makeCa = (name: string): PemPair => {
      openssl('req', '-x509', ...ec, '-keyout', `${name}.key`, '-out', `${name}.pem`, '-subj', `/CN=${name}`, '-days', '2', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
      return read(name);
    };
    const makeLeaf = (name: string, cn: string, ca: string, ext: string): PemPair => {
      openssl('req', '-new', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`);
      writeFileSync(at(`${name}.ext`), ext);
      openssl('x509', '-req', '-in', `${name}.csr`, '-CA', `${ca}.pem`, '-CAkey', `${ca}.key`, '-set_serial', String(++serial), '-days', '2', '-out', `${name}.pem`, '-extfile', `${name}.ext`);
      return read(name);
    };
    const makeClient = (name: string, cn: string, ca = 'ca') => makeLeaf(name, cn, ca, 'extendedKeyUsage=clientAuth\n');

    const caPem = makeCa('ca').cert;
    makeLeaf('server', 'hsm-bridge', 'ca', 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n');
    const client = makeClient('client', 'coffer');

    if (opts.bearerToken !== undefined) writeFileSync(at('bearer-token'), `${opts.bearerToken}\n`, { mode: 0o600 });
    writeFileSync(
      at('config.json'),
      JSON.stringify({
        listen: { address: '127.0.0.1', port: 0 },
        tls: {
          cert_file: 'server.pem',
          key_file: 'server.key',
          ...(opts.mutualTls === false ? {} : { client_ca_file: 'ca.pem', allowed_client_names: allowedClientNames }),
        },
        ...(opts.bearerToken === undefined ? {} : { auth: { bearer_token_file: 'bearer-token' } }),
        kms_library: [
          { name: 'softhsm', library: SOFTHSM_LIB, max_sessions: 16 },
          { name: 'missing', library: at('no-such-pkcs11.so') },
        ],
        log_level: opts.logLevel ?? 'info',
      }),
    );
    const child = spawn(process.execPath, [path.join(ROOT, 'hsm-bridge/src/main.mjs'), '--config', at('config.json')], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    proc = child;
    let output = '';
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`hsm-bridge not ready after 30 s:\n${output}`)), 30_000);
      const onData = (c: Buffer) => {
        output += c.toString();
        const m = /"msg":"hsm-bridge listening","url":"(https:\/\/[^"]+)"/.exec(output);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      };
      child.stdout!.on('data', onData);
      child.stderr!.on('data', onData);
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`hsm-bridge exited with ${code}:\n${output}`));
      });
    });

    const stop = async (): Promise<number | null> => {
      let code = child.exitCode;
      if (code === null && child.signalCode === null) {
        const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        code = await exited;
      }
      process.removeListener('exit', onExit);
      rmSync(dir, { recursive: true, force: true });
      return code;
    };

    return {
      url,
      dir,
      env,
      caPem,
      clientCertPem: client.cert,
      clientKeyPem: client.key,
      library: 'softhsm',
      tokenLabel,
      slot,
      pin,
      soPin,
      allowedClientNames,
      proc: child,
      output: () => output,
      openssl,
      makeCa,
      makeClient,
      stop,
    };
  } catch (e) {
    process.removeListener('exit', onExit);
    onExit();
    throw e;
  }
}
