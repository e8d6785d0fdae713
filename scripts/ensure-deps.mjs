// prestart/pretest/prebench: install the locked npm dependencies when node_modules is missing or
// older than package-lock.json, so `npm start` and `npm test` work on a fresh clone by themselves.
// Uses only Node built-ins: it runs before anything is installed.

import { execFileSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const marker = path.join(root, 'node_modules/.package-lock.json');
const lock = path.join(root, 'package-lock.json');

if (!existsSync(marker) || statSync(marker).mtimeMs < statSync(lock).mtimeMs) {
  console.log('Installing dependencies (npm ci)...');
  const npm = process.env.npm_execpath;
  const [cmd, args] = npm ? [process.execPath, [npm, 'ci', '--no-audit', '--no-fund']] : ['npm', ['ci', '--no-audit', '--no-fund']];
  execFileSync(cmd, args, { cwd: root, stdio: 'inherit' });
}
