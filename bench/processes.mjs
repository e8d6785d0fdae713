// Starting and stopping the servers a benchmark drives (Coffer's launcher, the baselines).

import { execFileSync, spawn } from 'node:child_process';
import { appendFileSync, readFileSync } from 'node:fs';
import { ROOT } from '../scripts/miniflare-server.mjs';

/** Runs `script` (in `cwd`, default this tree) and resolves once its output matches `ready`, whose first group is the URL. */
export function startProcess(script, env, ready, cwd = ROOT) {
  const proc = spawn(process.execPath, [script], { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (chunk) => {
      out += chunk;
      const m = out.match(ready);
      if (m) resolve({ proc, url: m[1] });
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    // BENCH_SERVER_LOG=<file>: every server's output, each line tagged with the server, for
    // finding out what a failed or slow scenario met (it is otherwise dropped once the server is up).
    const file = process.env.BENCH_SERVER_LOG;
    if (file) {
      const name = `${script}${env.OFFLOAD_HANDLERS === '0' ? ' in-object' : ''}`;
      const log = (chunk) => appendFileSync(file, String(chunk).replace(/^(?=.)/gm, `[${new Date().toISOString()} ${name}] `));
      proc.stdout.on('data', log);
      proc.stderr.on('data', log);
    }
    proc.once('exit', (code) => reject(new Error(`${script} in ${cwd} exited with ${code}:\n${out}`)));
  });
}

export const stopProcess = (proc) =>
  new Promise((resolve) => {
    if (proc.exitCode !== null) return resolve();
    proc.once('exit', resolve);
    proc.kill('SIGTERM');
  });

/** The workerd process below a launcher (Miniflare starts it as a child). */
export function workerdBelow(pid) {
  let children;
  try {
    children = execFileSync('pgrep', ['-P', String(pid)], { encoding: 'utf8' }).trim().split(/\s+/).filter(Boolean);
  } catch {
    return null; // pgrep exits 1 when the process has no children
  }
  for (const child of children) {
    if (readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('workerd')) return child;
    const below = workerdBelow(child);
    if (below) return below;
  }
  return null;
}
