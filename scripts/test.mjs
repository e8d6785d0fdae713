// `npm test`: setup (the Debian packages the tests drive), type-check, the import rules, unit +
// integration tests in workerd, end-to-end tests against real processes, then the real-client
// suite (hvac, node-vault). Stops at the first
// failing stage. Every stage runs with a private temporary folder, removed at the end whatever
// happened, so no test seal key or token outlives the run.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const bin = (name) => path.join(root, 'node_modules/.bin', name);
const extra = process.argv.slice(2);

const tmp = mkdtempSync(path.join(os.tmpdir(), 'coffer-test-'));
const cleanup = () => rmSync(tmp, { recursive: true, force: true });
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(signal, () => {
    cleanup();
    process.exit(130);
  });
}

const stages = [
  ['setup: Debian packages (openssl, python3-hvac, ...)', process.execPath, [path.join(root, 'scripts/system-packages.mjs')]],
  ['type-check', bin('tsc'), ['--noEmit', '-p', '.']],
  ['type-check hsm-bridge (JavaScript with JSDoc types)', bin('tsc'), ['-p', 'hsm-bridge/tsconfig.json']],
  ['imports: no circles, layers flow down (dependency-cruiser)', bin('depcruise'), ['src', 'durable-objects', '--output-type', 'err']],
  ['unit + integration (workerd)', bin('vitest'), ['run', ...extra]],
  ['end-to-end (launcher, wrangler dev, node-vault)', bin('vitest'), ['run', '-c', 'vitest.e2e.config.ts', ...extra]],
  ['real clients (hvac, node-vault)', bin('vitest'), ['run', '-c', 'vitest.clients.config.ts', ...extra]],
];

let status = 0;
for (const [name, cmd, args] of stages) {
  console.log(`\n=== ${name} ===`);
  const started = Date.now();
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, WRANGLER_SEND_METRICS: 'false', TMPDIR: tmp } });
  console.log(`=== ${name}: ${r.status === 0 ? 'passed' : 'FAILED'} in ${((Date.now() - started) / 1000).toFixed(1)}s ===`);
  if (r.status !== 0) {
    status = r.status ?? 1;
    break;
  }
}
cleanup();
process.exit(status);
