// prestart/pretest/prebench: install the locked npm dependencies when node_modules is missing or
// older than package-lock.json, so `npm start` and `npm test` work on a fresh clone by themselves.
// Uses only Node built-ins: it runs before anything is installed.

import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const marker = path.join(root, 'node_modules/.package-lock.json');
const lock = path.join(root, 'package-lock.json');

function npm(args, capture) {
  const npmCli = process.env.npm_execpath;
  const [cmd, argv] = npmCli ? [process.execPath, [npmCli, ...args]] : ['npm', args];
  return spawnSync(cmd, argv, { cwd: root, stdio: capture ? ['ignore', 'pipe', 'pipe'] : 'inherit', encoding: 'utf8' });
}

if (!existsSync(marker) || statSync(marker).mtimeMs < statSync(lock).mtimeMs) {
  console.log('Installing dependencies (npm ci)...');
  const ci = npm(['ci', '--no-audit', '--no-fund'], true);
  if (ci.status !== 0) {
    const output = `${ci.stdout}${ci.stderr}`;
    // npm 11 leaves platform builds of nested optional packages out of the lockfile when the
    // registry lacks them, then `npm ci` rejects its own lockfile (npm/cli#9846). `npm install
    // --no-save` installs the same locked versions without rewriting package-lock.json.
    if (!/Missing: \S+ from lock file/.test(output)) {
      process.stdout.write(output);
      process.exit(ci.status ?? 1);
    }
    console.log('npm ci refused the lockfile over missing optional platform builds; installing the locked versions with npm install --no-save.');
    const install = npm(['install', '--no-save', '--no-audit', '--no-fund'], false);
    if (install.status !== 0) process.exit(install.status ?? 1);
  }
}
