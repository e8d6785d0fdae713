// `npm run bench:compare -- "<scenario>" [other tree]`: measures one scenario on two builds of
// Coffer (this tree and another checkout, by default ../coffer-before) in alternating rounds, each
// round next to a fresh measurement of its matching one-DO baseline (a read scenario's is the
// one-DO read, as in `npm run bench`; any other's the one-DO write), and prints both ratios per round and their
// medians. For judging a change: on this machine a whole `npm run bench` drifts by more than most
// changes are worth, while two builds measured minutes apart under the same drift can be compared.
//
// Besides throughput it reports workerd's CPU time per request (from /proc), read as
// "baseline CPU per request ÷ scenario CPU per request" (workerd runs every isolate on one thread,
// so that ratio is the throughput ratio without the time other processes took from it), and the
// KiB workerd wrote to files per request (SQLite pages: what a Durable Object write costs most).
// BENCH_ROUNDS (default 4) and BENCH_DURATION (seconds per measurement, default 4) set the load.

import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { ROOT } from '../scripts/miniflare-server.mjs';
import { startProcess, stopProcess, workerdBelow } from './processes.mjs';
import { SCENARIOS, stopScenarioServers } from './scenarios.mjs';

const name = process.argv[2];
const other = path.resolve(process.argv[3] ?? path.join(ROOT, '../coffer-before'));
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 4);
const DURATION = Number(process.env.BENCH_DURATION ?? 4);
const scenario = SCENARIOS.find((s) => s.name === name);
if (!scenario) throw new Error(`no scenario "${name}"; have: ${SCENARIOS.map((s) => s.name).join(', ')}`);
if (!existsSync(path.join(other, 'scripts/start.mjs'))) throw new Error(`${other} is not a Coffer checkout (git worktree add ../coffer-before <commit>)`);
if (process.platform !== 'linux') throw new Error('CPU per request is read from /proc: Linux only');

/** Bytes a process has written to files (SQLite's database and WAL, for workerd). */
const writtenBytes = (pid) => Number(/wchar: (\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))[1]);

/** User + system CPU of a process, in ms (/proc reports clock ticks of 10 ms). */
function cpuMs(pid) {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

const load = (opts, duration) =>
  new Promise((resolve, reject) => autocannon({ connections: 50, duration, ...opts }, (e, r) => (e ? reject(e) : resolve(r))));

async function measure(opts, pid) {
  const [cpuBefore, writtenBefore] = [cpuMs(pid), writtenBytes(pid)];
  const r = await load(opts, DURATION);
  const n = Math.max(1, r.requests.total);
  return { rps: r.requests.average, cpuUs: ((cpuMs(pid) - cpuBefore) * 1000) / n, kib: (writtenBytes(pid) - writtenBefore) / 1024 / n, failed: r.non2xx + r.errors };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const work = mkdtempSync(path.join(os.tmpdir(), 'coffer-compare-'));
// The servers' own temporary files (Miniflare's) go under it too, and leave with it.
process.env.TMPDIR = work;
const procs = [];
try {
  const builds = [];
  for (const [label, cwd] of [['this tree', ROOT], [path.basename(other), other]]) {
    const dataDir = path.join(work, String(builds.length));
    const s = await startProcess('scripts/start.mjs', { PORT: '0', COFFER_DATA_DIR: dataDir, COFFER_LOG_LEVEL: 'warn', COFFER_HSM_BRIDGE: 'softhsm2' }, /Coffer is listening on (\S+)/, cwd);
    procs.push(s.proc);
    const token = JSON.parse(readFileSync(path.join(dataDir, 'init.json'), 'utf8')).root_token;
    const context = scenario.setup ? await scenario.setup(s.url, token, { dataDir }) : undefined;
    const opts = scenario.request(s.url, token, context);
    await load(opts, 2); // warm-up
    builds.push({ label, opts, pid: workerdBelow(s.proc.pid), ratios: [], cpuRatios: [] });
  }
  const baseline = await startProcess('bench/serve-baseline.mjs', { BASELINE_DATA_DIR: path.join(work, 'baseline') }, /Baseline is listening on (\S+)/);
  procs.push(baseline.proc);
  const baseOpts = { url: `${baseline.url}${scenario.kind === 'read' ? '/do-read' : '/do'}` };
  const basePid = workerdBelow(baseline.proc.pid);
  await load(baseOpts, 2);

  console.log(`${name}: ${ROUNDS} rounds of ${DURATION} s, 50 connections, against the one-DO ${scenario.kind === 'read' ? 'read' : 'write'} baseline`);
  for (let round = 0; round < ROUNDS; round++) {
    const base = await measure(baseOpts, basePid);
    const line = [`baseline ${Math.round(base.rps)} req/s ${Math.round(base.cpuUs)} µs ${base.kib.toFixed(1)} KiB`];
    for (const b of round % 2 === 0 ? builds : [...builds].reverse()) {
      const m = await measure(b.opts, b.pid);
      b.ratios.push(m.rps / base.rps);
      b.cpuRatios.push(base.cpuUs / m.cpuUs);
      line.push(`${b.label}: ${Math.round(m.rps)} req/s ${Math.round(m.cpuUs)} µs ${m.kib.toFixed(1)} KiB → ${(m.rps / base.rps).toFixed(3)} (CPU ${(base.cpuUs / m.cpuUs).toFixed(3)})${m.failed ? `, ${m.failed} failed` : ''}`);
    }
    console.log(line.join(' | '));
  }
  for (const b of builds) console.log(`${b.label}: median ratio ${median(b.ratios).toFixed(3)}, median CPU ratio ${median(b.cpuRatios).toFixed(3)}`);
} finally {
  await Promise.all([...procs.map(stopProcess), stopScenarioServers()]);
  rmSync(work, { recursive: true, force: true });
}
