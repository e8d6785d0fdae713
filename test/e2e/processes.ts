// Real server processes for end-to-end tests: the launcher (`npm start`) and `wrangler dev`.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

export const ROOT = path.resolve(__dirname, '../..');

export interface Server {
  url: string;
  proc: ChildProcess;
  output: () => string;
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const made: string[] = [];

/**
 * Removes every directory tempDir made. Test data directories hold seal keys and root tokens: the
 * suites call this after each file (cleanup.ts), and the process does on exit, whatever happened.
 */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
process.once('exit', removeTempDirs);

/** A new directory under the system's temporary folder (see removeTempDirs). */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** The temporary folder of a server process: inside its data directory, so it goes with it. */
function serverTmp(dataDir: string): string {
  const dir = path.join(dataDir, 'tmp');
  mkdirSync(dir, { recursive: true });
  return dir;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

function track(proc: ChildProcess, ready: RegExp, timeoutMs: number): Promise<{ match: RegExpMatchArray; output: () => string }> {
  let out = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server not ready after ${timeoutMs} ms:\n${out}`)), timeoutMs);
    const onData = (chunk: Buffer) => {
      out += chunk.toString();
      const m = out.match(ready);
      if (m) {
        clearTimeout(timer);
        resolve({ match: m, output: () => out });
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', onData);
    proc.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before it was ready:\n${out}`));
    });
  });
}

function stopper(proc: ChildProcess) {
  return (signal: NodeJS.Signals = 'SIGTERM') =>
    new Promise<number | null>((resolve) => {
      if (proc.exitCode !== null) return resolve(proc.exitCode);
      proc.once('exit', (code) => resolve(code));
      proc.kill(signal);
    });
}

/** Starts `node scripts/start.mjs` (what `npm start` runs) on a free port. */
export async function startLauncher(dataDir: string, env: Record<string, string> = {}): Promise<Server> {
  const proc = spawn(process.execPath, ['scripts/start.mjs'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', COFFER_DATA_DIR: dataDir, COFFER_SKIP_BUILD: '1', COFFER_LOG_LEVEL: 'warn', TMPDIR: serverTmp(dataDir), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { match, output } = await track(proc, /Coffer is listening on (http:\/\/127\.0\.0\.1:\d+)/, 60_000);
  return { url: match[1], proc, output, stop: stopper(proc) };
}

/** Starts `wrangler dev` with a persisted state directory and the given vars. */
export async function startWranglerDev(stateDir: string, vars: Record<string, string>): Promise<Server> {
  const port = await freePort();
  const args = [path.join(ROOT, 'node_modules/wrangler/bin/wrangler.js'), 'dev', '--port', String(port), '--ip', '127.0.0.1', '--persist-to', stateDir, '--inspector-port', String(await freePort())];
  for (const [k, v] of Object.entries(vars)) args.push('--var', `${k}:${v}`);
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    env: { ...process.env, WRANGLER_SEND_METRICS: 'false', CI: '1', TMPDIR: serverTmp(stateDir) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { output } = await track(proc, /Ready on http/, 90_000);
  return { url: `http://127.0.0.1:${port}`, proc, output, stop: stopper(proc) };
}

export function readInit(dataDir: string): { root_token: string; recovery_keys: string[]; recovery_keys_base64: string[] } {
  return JSON.parse(readFileSync(path.join(dataDir, 'init.json'), 'utf8'));
}
