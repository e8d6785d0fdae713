// Runs modules of the hvac conformance suite (Python unittest, Debian's python3-hvac) through
// runner.py and reads back one result per test.
import { execFile, execFileSync } from 'node:child_process';
import path from 'node:path';

/** Debian's interpreter: python3-hvac is installed for it, whatever python3 comes first on PATH. */
const PYTHON = '/usr/bin/python3';
export const HVAC_DIR = __dirname;

export interface Result {
  id: string;
  status: 'passed' | 'failed';
  detail?: string;
}

export interface Target {
  url: string;
  rootToken: string;
  recoveryKey: string;
  /** Further variables (helper service, OIDC issuer). */
  extra?: Record<string, string>;
}

const environment = (t: Target): NodeJS.ProcessEnv => ({
  ...process.env,
  VAULT_ADDR: t.url,
  VAULT_TOKEN: t.rootToken,
  COFFER_RECOVERY_KEY: t.recoveryKey,
  PYTHONDONTWRITEBYTECODE: '1',
  ...t.extra,
});

const runner = (args: string[]) => [path.join(HVAC_DIR, 'runner.py'), ...args];
const parseLines = (out: string): Result[] =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Result);

/** The ids of a module's tests, in run order. */
export function listTests(module: string): string[] {
  return parseLines(execFileSync(PYTHON, runner(['list', module]), { cwd: HVAC_DIR, env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' }, encoding: 'utf8' })).map((r) => r.id);
}

/** Runs a module against `target`; a crash of the runner itself fails the whole module. */
export function runModule(module: string, target: Target): Promise<Result[]> {
  return new Promise((resolve) => {
    execFile(PYTHON, runner(['run', module]), { cwd: HVAC_DIR, env: environment(target), maxBuffer: 64 << 20, timeout: 600_000 }, (error, stdout, stderr) => {
      const results = parseLines(stdout);
      if (error && results.length === 0) results.push({ id: `${module}.*`, status: 'failed', detail: `${error.message}\n${stderr}` });
      resolve(results);
    });
  });
}

/** Throws with the Python traceback unless the test `id` passed (a failed setUpClass fails its class). */
export function expectPassed(results: Result[], id: string): void {
  const cls = id.split('.').slice(0, -1).join('.');
  const module = id.split('.')[0];
  const result =
    results.find((r) => r.id === id) ??
    results.find((r) => r.id === `setUpClass (${cls})` || r.id === `setUpModule (${module})` || r.id === `${module}.*`);
  if (!result) throw new Error(`${id} did not report a result`);
  if (result.status !== 'passed') throw new Error(`${id} failed:\n${result.detail ?? ''}`);
}
