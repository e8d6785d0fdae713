// `npm run bench`: load against running servers, reported as ratios to the platform's ceiling
// measured in the same run. Coffer runs under the launcher (log level warn); the baselines run
// with the same Miniflare settings. Writes bench/results/latest.json.
//
// BENCH_DURATION (seconds, default 10) and BENCH_CONNECTIONS (default 50) override the load;
// BENCH_ONLY=<text>[|<text>…] runs only the scenarios whose name contains one of them (baselines always run).

import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { ROOT } from '../scripts/miniflare-server.mjs';
import { startProcess, stopProcess } from './processes.mjs';
import { SCENARIOS, stopScenarioServers } from './scenarios.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);

function load(opts, duration = DURATION) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, duration, ...opts }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

async function measure(name, opts) {
  await load(opts, 2); // warm-up: isolates, DO instances, keyring caches
  const r = await load(opts);
  const bad = r.non2xx + r.errors + r.timeouts;
  // Connections cut at the end of the run show up as errors; statuses other than 2xx never should.
  if (bad > 0) {
    const statuses = Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => `${code}×${s.count}`).join(' ');
    console.warn(`  ${name}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts of ${r.requests.total} requests (statuses: ${statuses})`);
  }
  return { scenario: name, rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, failed: bad };
}

const PAIRED_ROUNDS = 3;

/** The median over alternating rounds of throughput(scenario) ÷ throughput(reference). */
async function pairedRatio(scenario, reference) {
  const ratios = [];
  for (let round = 0; round < PAIRED_ROUNDS; round++) {
    const order = round % 2 === 0 ? [reference, scenario] : [scenario, reference];
    const rps = new Map();
    for (const opts of order) rps.set(opts, (await load(opts, Math.max(2, DURATION / 2))).requests.average);
    ratios.push(rps.get(scenario) / rps.get(reference));
  }
  return +ratios.sort((a, b) => a - b)[Math.floor(ratios.length / 2)].toFixed(3);
}

async function main() {
  const work = mkdtempSync(path.join(os.tmpdir(), 'coffer-bench-'));
  const servers = [];
  try {
    console.log(`Starting Coffer (launcher, log level warn) and the baselines; ${CONNECTIONS} connections, ${DURATION} s per scenario.`);
    // With a local HSM bridge on SoftHSM2, for the managed-key scenario.
    const coffer = await startProcess('scripts/start.mjs', { PORT: '0', COFFER_DATA_DIR: path.join(work, 'coffer'), COFFER_LOG_LEVEL: 'warn', COFFER_HSM_BRIDGE: 'softhsm2' }, /Coffer is listening on (\S+)/);
    servers.push(coffer.proc);
    const baseline = await startProcess('bench/serve-baseline.mjs', { BASELINE_DATA_DIR: path.join(work, 'baseline') }, /Baseline is listening on (\S+)/);
    servers.push(baseline.proc);
    const token = JSON.parse(readFileSync(path.join(work, 'coffer/init.json'), 'utf8')).root_token;

    // Baselines run before and after Coffer's scenarios and are averaged: this machine drifts by
    // several percent within a run, and a ratio is only as good as its denominator.
    const measureBaselines = async () => ({
      trivial: await measure('baseline: trivial Worker route', { url: `${baseline.url}/` }),
      oneDO: await measure('baseline: one DO call + one SQLite write', { url: `${baseline.url}/do` }),
    });
    const before = await measureBaselines();
    const results = [];
    const requests = new Map();
    const only = process.env.BENCH_ONLY?.split("|").filter(Boolean) ?? [];
    for (const s of SCENARIOS.filter((sc) => only.length === 0 || only.some((o) => sc.name.includes(o)))) {
      const context = s.setup ? await s.setup(coffer.url, token, { dataDir: path.join(work, 'coffer') }) : undefined;
      requests.set(s.name, s.request(coffer.url, token, context));
      const result = { ...(await measure(s.name, requests.get(s.name))), target: s.target ?? null, relativeTo: s.relativeTo ?? null };
      // Judged against another scenario (a large mount against an empty one): the two are measured
      // in alternating rounds right here, so the machine's drift between their places in the run
      // (and the aftermath of a bulk setup) does not decide the ratio; the median round counts.
      // `paired: false`: the reference cannot be measured again under this scenario's conditions
      // (a DR secondary attached changes every write): its own earlier result is the reference.
      const reference = s.relativeTo && results.find((r) => r.scenario === s.relativeTo.scenario);
      if (s.relativeTo?.paired === false && reference) result.ratio_vs_scenario = +(result.rps / reference.rps).toFixed(3);
      else if (s.relativeTo && requests.has(s.relativeTo.scenario)) result.ratio_vs_scenario = await pairedRatio(requests.get(s.name), requests.get(s.relativeTo.scenario));
      results.push(result);
    }
    const after = await measureBaselines();
    const mean = (a, b) => ({
      scenario: a.scenario,
      rps: Math.round((a.rps + b.rps) / 2),
      p50: Math.max(a.p50, b.p50),
      p99: Math.max(a.p99, b.p99),
      failed: a.failed + b.failed,
      runs_rps: [a.rps, b.rps],
    });
    const base = { trivial: mean(before.trivial, after.trivial), oneDO: mean(before.oneDO, after.oneDO) };

    const rows = [base.trivial, base.oneDO, ...results].map((r) => ({
      ...r,
      ratio_vs_trivial_baseline: +(r.rps / base.trivial.rps).toFixed(3),
      ratio_vs_do_baseline: +(r.rps / base.oneDO.rps).toFixed(3),
    }));
    const pad = (s, n) => String(s).padEnd(n);
    console.log(`\nBaselines (before, after): trivial ${base.trivial.runs_rps.join(', ')} req/s; one-DO ${base.oneDO.runs_rps.join(', ')} req/s`);
    console.log(`\n${pad('scenario', 44)}${pad('req/s', 9)}${pad('p50 ms', 8)}${pad('p99 ms', 8)}${pad('÷trivial', 10)}${pad('÷1-DO', 8)}target`);
    for (const r of rows) {
      const verdict = r.relativeTo
        ? `${r.ratio_vs_scenario ?? '?'}× of "${r.relativeTo.scenario}" (≥ ${r.relativeTo.min}× ${r.ratio_vs_scenario >= r.relativeTo.min ? 'met' : 'MISSED'})`
        : r.target == null ? '' : `≥ ${r.target}× ${r.ratio_vs_do_baseline >= r.target ? 'met' : 'MISSED'}`;
      console.log(`${pad(r.scenario, 44)}${pad(r.rps, 9)}${pad(r.p50, 8)}${pad(r.p99, 8)}${pad(r.ratio_vs_trivial_baseline, 10)}${pad(r.ratio_vs_do_baseline, 8)}${verdict}`);
    }
    mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
    const out = {
      date: new Date().toISOString(),
      node: process.version,
      cpus: os.cpus().length,
      connections: CONNECTIONS,
      duration_s: DURATION,
      results: rows.map(({ scenario, rps, p50, p99, failed, ratio_vs_do_baseline, ratio_vs_trivial_baseline, target, runs_rps, relativeTo, ratio_vs_scenario }) => ({
        scenario, rps, p50, p99, failed, ratio_vs_do_baseline, ratio_vs_trivial_baseline, target: target ?? null, ...(runs_rps ? { runs_rps } : {}),
        ...(relativeTo ? { relative_to: relativeTo.scenario, ratio_vs_scenario: ratio_vs_scenario ?? null, relative_target: relativeTo.min } : {}),
      })),
    };
    writeFileSync(path.join(ROOT, 'bench/results/latest.json'), JSON.stringify(out, null, 2) + '\n');
    console.log('\nWrote bench/results/latest.json');
  } finally {
    // Scenario servers first: the DR lag sampler reads the bench server until it stops.
    await stopScenarioServers();
    await Promise.all(servers.map(stopProcess));
    rmSync(work, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
