// prestart/pretest/prebench: install the locked npm dependencies when node_modules is missing or
// older than package-lock.json, so `npm start` and `npm test` work on a fresh clone by themselves.
// The same for hsm-bridge/, which has its own package.json and lockfile (and a native module,
// pkcs11js, built by node-gyp). Uses only Node built-ins: it runs before anything is installed.

import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

function npm(cwd, args, capture) {
  const npmCli = process.env.npm_execpath;
  const [cmd, argv] = npmCli ? [process.execPath, [npmCli, ...args]] : ['npm', args];
  return spawnSync(cmd, argv, { cwd, stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit', encoding: 'utf8' });
}

/** `npm ci` in dir when its node_modules is missing, older than its lockfile, or lacks `needs`. Returns the failing status, or 0. */
function ensure(dir, label, needs = []) {
  const marker = path.join(dir, 'node_modules/.package-lock.json');
  const lock = path.join(dir, 'package-lock.json');
  const stale = !existsSync(marker) || statSync(marker).mtimeMs < statSync(lock).mtimeMs;
  if (!stale && needs.every((f) => existsSync(path.join(dir, f)))) return 0;
  console.log(`Installing ${label} (npm ci)...`);
  const ci = npm(dir, ['ci', '--no-audit', '--no-fund'], true);
  if (ci.status === 0) return 0;
  const output = `${ci.stdout}${ci.stderr}`;
  // npm 11 leaves platform builds of nested optional packages out of the lockfile when the
  // registry lacks them, then `npm ci` rejects its own lockfile (npm/cli#9846). `npm install
  // --no-save` installs the same locked versions without rewriting package-lock.json.
  if (!/Missing: \S+ from lock file/.test(output)) {
    process.stdout.write(output);
    return ci.status ?? 1;
  }
  console.log('npm ci refused the lockfile over missing optional platform builds; installing the locked versions with npm install --no-save.');
  const install = npm(dir, ['install', '--no-save', '--no-audit', '--no-fund'], false);
  return install.status ?? 1;
}

const status = ensure(root, 'dependencies');
if (status !== 0) process.exit(status);

// The bridge is not part of the Worker: a failed install (no C++ toolchain for pkcs11js) is
// reported but does not stop `npm start`; its end-to-end test fails on it instead.
const bridge = path.join(root, 'hsm-bridge');
if (existsSync(path.join(bridge, 'package-lock.json')) && ensure(bridge, 'hsm-bridge dependencies', ['node_modules/pkcs11js/build/Release/pkcs11.node']) !== 0) {
  console.warn('hsm-bridge: installing its dependencies failed (see above); test/e2e/hsm-bridge.test.ts will fail.');
}
