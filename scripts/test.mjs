// `npm test`: type-check, then unit + integration tests in workerd, then end-to-end tests
// against real processes. Stops at the first failing stage.
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const bin = (name) => path.join(root, 'node_modules/.bin', name);
const extra = process.argv.slice(2);

/** Debian packages the tests drive (openssl verifies CSRs and certificates); installed when missing. */
function ensureSystemPackages() {
  const missing = ['openssl'].filter((cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status !== 0);
  if (missing.length === 0) return;
  console.log(`Installing Debian packages: ${missing.join(' ')}`);
  const sudo = process.getuid?.() === 0 ? [] : ['sudo'];
  for (const args of [['apt-get', 'update'], ['apt-get', 'install', '-y', ...missing]]) {
    const [cmd, ...rest] = [...sudo, ...args];
    const r = spawnSync(cmd, rest, { stdio: 'inherit' });
    if (r.status !== 0) process.exit(r.status ?? 1);
  }
}

ensureSystemPackages();

const stages = [
  ['type-check', bin('tsc'), ['--noEmit', '-p', '.']],
  ['unit + integration (workerd)', bin('vitest'), ['run', ...extra]],
  ['end-to-end (launcher, wrangler dev, node-vault)', bin('vitest'), ['run', '-c', 'vitest.e2e.config.ts', ...extra]],
];

for (const [name, cmd, args] of stages) {
  console.log(`\n=== ${name} ===`);
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, WRANGLER_SEND_METRICS: 'false' } });
  console.log(`=== ${name}: ${r.status === 0 ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)}s ===`);
  if (r.status !== 0) process.exit(r.status ?? 1);
}
