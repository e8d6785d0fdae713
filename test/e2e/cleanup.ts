// A setup file of the e2e and client suites. Each test file gets a temporary folder of its own
// (files run in parallel, and some check that they leave nothing behind in theirs); after the
// file, its temporary directories (data directories with seal keys and root tokens) and that
// folder are removed, whether its tests passed or not.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll } from 'vitest';
import { removeTempDirs } from './processes';

const outer = os.tmpdir();
const own = mkdtempSync(path.join(outer, 'coffer-file-'));
// os.tmpdir() reads TMPDIR on every call, and the servers a test starts inherit it.
process.env.TMPDIR = own;

afterAll(() => {
  removeTempDirs();
  process.env.TMPDIR = outer;
  rmSync(own, { recursive: true, force: true });
});
