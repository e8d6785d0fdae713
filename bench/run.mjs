// `npm run bench`: load against running servers, reported as ratios to the platform's ceiling
// measured in the same run: a read scenario to one DO call + one SQLite read, a write to one DO
// call + one SQLite write. Coffer runs under the launcher (log level warn); the baselines run
// with the same Miniflare settings. A scenario with a ratio target is judged against its baseline
// measured right before and after it (the machine drifts within a run), and the verdict says when
// the target lies between the ratios by the one before and by the one after (the drift alone could
// decide it); the run-wide baselines, measured at its start and end, give the other columns.
// Writes bench/results/latest.json.
//
// Each scenario also reports its time inside the serving object per request ("obj ms"): the
// object's vault.route.* samples (wall time from the request's arrival in the object to its
// reply), twice: over passes of requests sent one at a time for 3 s ("serial"), and over the
// scenario's own load ("loaded"). Locally workerd's clock advances during computation (measured:
// a 200 ms loop read 198 ms), so each is the object's CPU per request plus whatever else held its
// thread meanwhile: an upper bound of its CPU, and 1000 / obj ms a lower bound of what one object
// serves per second in production, where each object is one thread. They err in different ways:
// - serial adds the thread's waking up. Between serial requests the thread idles, and on this
//   machine (a KVM guest) code that runs right after an idle wait runs several times slower than
//   on a busy thread (`npm run bench:owner`: the owner's pipeline for a handed-off PKI issue took
//   5-7 µs per call back to back, 23-53 µs as the first call after a 0 ms timer or a request);
// - loaded adds other requests' turns taken while a request awaited I/O (a storage write, a call
//   to another object). A request answered without such a wait is measured alone.
// The lower of the two is the closer bound for an object at its ceiling, whose thread never idles.
//
// Scenarios whose handler Coffer hands off to the Worker (src/pipeline/offload.ts; `offloaded`)
// are measured a second time on a launcher with OFFLOAD_HANDLERS=0, where the handler runs in the
// object: the two obj ms give the owning object's share of a hot request before and after, and
// the scale model below (a hot key's ceiling as isolates are added) is printed from them (the
// lower figure of each; both figures alone beside it). Their serial figures are the median of
// SCALE_MODEL_PASSES passes (objectTime says why).
//
// BENCH_DURATION (seconds, default 10) and BENCH_CONNECTIONS (default 50) override the load;
// BENCH_ONLY=<text>[|<text>…] runs only the scenarios whose name contains one of them (baselines always run).
// BENCH_SERVER_LOG=<file> appends every server's output there, marked where each measurement starts.

import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { ROOT } from '../scripts/miniflare-server.mjs';
import { startProcess, stopProcess } from './processes.mjs';
import { SCENARIOS, stopScenarioServers } from './scenarios.mjs';

const DURATION = Number(process.env.BENCH_DURATION ?? 10);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
/** The serial pass: requests one at a time for this long. */
const SERIAL_SECONDS = 3;
/** Each side of the matching baseline measured around a scenario that has a target. */
const ADJACENT_SECONDS = Math.max(2, DURATION / 2);

function load(opts, duration = DURATION) {
  return new Promise((resolve, reject) => {
    autocannon({ connections: CONNECTIONS, duration, ...opts }, (err, result) => (err ? reject(err) : resolve(result)));
  });
}

/**
 * A scenario's throughput under load. With `server` (Coffer's URL and token), also its time inside
 * the serving object per request during that load (`loaded`, see objectTime).
 */
async function measure(name, opts, server) {
  // The servers' output (BENCH_SERVER_LOG, see processes.mjs) is marked where each measurement starts.
  if (process.env.BENCH_SERVER_LOG) appendFileSync(process.env.BENCH_SERVER_LOG, `[${new Date().toISOString()}] === ${name}\n`);
  await load(opts, 2); // warm-up: isolates, DO instances, keyring caches
  const samplesBefore = server ? await routeSamples(server.url, server.token) : null;
  const r = await load(opts);
  const samplesAfter = samplesBefore ? await routeSamples(server.url, server.token) : null;
  const loaded = samplesBefore ? busiestRoute(samplesBefore, samplesAfter, r.requests.total) : null;
  if (samplesBefore && !loaded) console.warn(`  ${name}: no loaded obj ms: ${routeShares(samplesBefore, samplesAfter, r.requests.total)}`);
  const bad = r.non2xx + r.errors + r.timeouts;
  // Connections cut at the end of the run show up as errors; statuses other than 2xx never should.
  if (bad > 0) {
    const statuses = Object.entries(r.statusCodeStats ?? {}).map(([code, s]) => `${code}×${s.count}`).join(' ');
    console.warn(`  ${name}: ${r.non2xx} non-2xx, ${r.errors} errors, ${r.timeouts} timeouts of ${r.requests.total} requests (statuses: ${statuses})`);
  }
  return { scenario: name, rps: Math.round(r.requests.average), p50: r.latency.p50, p99: r.latency.p99, failed: bad, ...(loaded ? { loaded: { route: loaded.route, ms: +(loaded.sum / loaded.n).toFixed(3) } } : {}) };
}

/**
 * Count and sum (ms) of the vault.route.<operation>.<mount> samples per mount, cluster-wide
 * (sys/metrics merges every object; a write resolves to create or update, both count).
 */
async function routeSamples(url, token) {
  const res = await fetch(`${url}/v1/sys/metrics?format=json`, { headers: { 'X-Vault-Token': token } });
  if (!res.ok) throw new Error(`sys/metrics: ${res.status}`);
  const out = new Map();
  for (const s of (await res.json()).Samples) {
    const m = /^vault\.route\.[a-z-]+\.(.*)$/.exec(s.Name);
    if (!m) continue;
    const total = out.get(m[1]) ?? { count: 0, sum: 0 };
    out.set(m[1], { count: total.count + s.Count, sum: total.sum + s.Sum });
  }
  return out;
}

/**
 * Milliseconds inside the serving object per request, requests sent one at a time (see the top),
 * over `rounds` passes of SERIAL_SECONDS: with more than one, the median pass's figure. workerd's
 * clocks tick in whole milliseconds, so a pass's figure is an estimate from its ticks, and here
 * the Worker and the objects share one isolate: a pass can catch an isolate-wide pause (the
 * collection of the Worker's garbage) and read it as the object's time. The scale model's
 * scenarios are measured this way; `mean` keeps the figure over all passes.
 */
async function objectTime(url, token, opts, rounds = 1) {
  const passes = [];
  let pooled = null;
  for (let i = 0; i < rounds; i++) {
    const pass = await objectPass(url, token, opts);
    if (!pass) return null;
    passes.push(pass);
    if (pooled && pooled.route !== pass.route) return null;
    pooled = { route: pass.route, n: (pooled?.n ?? 0) + pass.n, sum: (pooled?.sum ?? 0) + pass.sum };
  }
  const sorted = passes.map((p) => p.sum / p.n).sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  const median = sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  return { route: pooled.route, ms: +median.toFixed(3), ...(rounds > 1 ? { mean: +(pooled.sum / pooled.n).toFixed(3), passes: rounds } : {}) };
}

async function objectPass(url, token, opts) {
  const before = await routeSamples(url, token);
  // Times are whole milliseconds (workerd's clocks): sub-millisecond figures need many requests.
  const pass = await new Promise((resolve, reject) => autocannon({ ...opts, connections: 1, duration: SERIAL_SECONDS }, (err, r) => (err ? reject(err) : resolve(r))));
  return busiestRoute(before, await routeSamples(url, token), pass.requests.total);
}

/** Between two routeSamples, the route that served (nearly) all `sent` requests; null for requests no object's pipeline serves. */
function busiestRoute(before, after, sent) {
  let best = null;
  for (const [name, s] of after) {
    const b = before.get(name) ?? { count: 0, sum: 0 };
    const n = s.count - b.count;
    if (n > 0 && (!best || n > best.n)) best = { route: name, n, sum: s.sum - b.sum };
  }
  return best && best.n >= sent * 0.9 ? best : null;
}

/**
 * Why busiestRoute found none: each route's requests between the two readings, against those sent,
 * and the routes one reading has and the other lacks (an object's counts start again at zero when
 * it restarts, and sys/metrics leaves out an object that does not answer).
 */
function routeShares(before, after, sent) {
  const moved = [...after].map(([name, s]) => [name, s.count - (before.get(name)?.count ?? 0)]).filter(([, n]) => n !== 0);
  const gone = [...before.keys()].filter((name) => !after.has(name));
  const fresh = [...after.keys()].filter((name) => !before.has(name));
  const listed = (label, names) => (names.length > 0 ? `; ${label}: ${names.join(', ')}` : '');
  return `${sent} sent; ${moved.map(([name, n]) => `${name} ${n}`).join(', ') || 'no route moved'} (${before.size} routes before, ${after.size} after${listed('gone', gone)}${listed('new', fresh)})`;
}

/**
 * The serial figure with the one taken under load (same route), and the lower of the two (`ms_low`):
 * each is an upper bound of the object's time per request on a thread that does not idle.
 */
function withLoaded(object, loaded) {
  if (!object) return null;
  const loadedMs = loaded && loaded.route === object.route ? loaded.ms : null;
  return { ...object, loaded_ms: loadedMs, ms_low: loadedMs === null ? object.ms : Math.min(object.ms, loadedMs) };
}

/** Passes of the obj ms measure for the scenarios of the scale model (and their in-object twins). */
const SCALE_MODEL_PASSES = 5;

/** Isolate counts the scale model is printed for. */
const ISOLATES = [1, 4, 16, 64];

/**
 * For each offloaded scenario measured both ways: the owning object's time per request with the
 * handler in the object and handed off, how much higher the owner's ceiling (1000 / obj ms) is,
 * and a hot key's req/s with n isolates running handlers, min(owner's ceiling, n × this run's
 * req/s). This run's req/s is the whole request (Worker, object, crypto) on one workerd thread,
 * so it understates one isolate; the owner's ceiling assumes the object is its only load.
 */
function scaleModel(results) {
  const rows = [];
  for (const twin of results.filter((r) => r.twinOf)) {
    const offloaded = results.find((r) => r.scenario === twin.twinOf);
    if (!offloaded?.object || !twin.object) continue;
    const ceiling = 1000 / offloaded.object.ms_low;
    rows.push({
      scenario: offloaded.scenario,
      in_object_ms: twin.object.ms_low,
      offloaded_ms: offloaded.object.ms_low,
      owner_factor: +(twin.object.ms_low / offloaded.object.ms_low).toFixed(1),
      // Each way measured on its own: the serial passes (their median) and the loaded run.
      serial: { in_object_ms: twin.object.ms, offloaded_ms: offloaded.object.ms, owner_factor: +(twin.object.ms / offloaded.object.ms).toFixed(1) },
      loaded: twin.object.loaded_ms && offloaded.object.loaded_ms ? { in_object_ms: twin.object.loaded_ms, offloaded_ms: offloaded.object.loaded_ms, owner_factor: +(twin.object.loaded_ms / offloaded.object.loaded_ms).toFixed(1) } : null,
      // Over all serial passes rather than the median pass's (objectTime).
      owner_factor_of_means: twin.object.mean && offloaded.object.mean ? +(twin.object.mean / offloaded.object.mean).toFixed(1) : null,
      in_object_ceiling: Math.round(1000 / twin.object.ms_low),
      offloaded_ceiling: Math.round(ceiling),
      rps_by_isolates: ISOLATES.map((n) => Math.round(Math.min(ceiling, n * offloaded.rps))),
    });
  }
  return rows;
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
  // The servers' own temporary files (Miniflare's) go under it too, and leave with it.
  process.env.TMPDIR = work;
  const servers = [];
  try {
    console.log(`Starting Coffer (launcher, log level warn) and the baselines; ${CONNECTIONS} connections, ${DURATION} s per scenario.`);
    // With a local HSM bridge on SoftHSM2, for the managed-key scenario.
    const coffer = await startProcess('scripts/start.mjs', { PORT: '0', COFFER_DATA_DIR: path.join(work, 'coffer'), COFFER_LOG_LEVEL: 'warn', COFFER_HSM_BRIDGE: 'softhsm2' }, /Coffer is listening on (\S+)/);
    servers.push(coffer.proc);
    const baseline = await startProcess('bench/serve-baseline.mjs', { BASELINE_DATA_DIR: path.join(work, 'baseline') }, /Baseline is listening on (\S+)/);
    servers.push(baseline.proc);
    const token = JSON.parse(readFileSync(path.join(work, 'coffer/init.json'), 'utf8')).root_token;
    const only = process.env.BENCH_ONLY?.split('|').filter(Boolean) ?? [];
    const selected = SCENARIOS.filter((sc) => only.length === 0 || only.some((o) => sc.name.includes(o)));
    // The same server with every handler in its object, for the offloaded scenarios' comparison.
    let inObject = null;
    if (selected.some((sc) => sc.offloaded)) {
      const started = await startProcess('scripts/start.mjs', { PORT: '0', COFFER_DATA_DIR: path.join(work, 'in-object'), COFFER_LOG_LEVEL: 'warn', OFFLOAD_HANDLERS: '0' }, /Coffer is listening on (\S+)/);
      servers.push(started.proc);
      inObject = { url: started.url, token: JSON.parse(readFileSync(path.join(work, 'in-object/init.json'), 'utf8')).root_token };
    }

    // Baselines run before and after Coffer's scenarios and are averaged: this machine drifts by
    // several percent within a run, and a ratio is only as good as its denominator.
    const measureBaselines = async () => ({
      trivial: await measure('baseline: trivial Worker route', { url: `${baseline.url}/` }),
      oneDO: await measure('baseline: one DO call + one SQLite write', { url: `${baseline.url}/do` }),
      oneDORead: await measure('baseline: one DO call + one SQLite read', { url: `${baseline.url}/do-read` }),
    });
    const before = await measureBaselines();
    // A scenario with a ratio target is judged against its matching baseline measured right
    // before and right after it: the machine drifts within a run (a run's baselines have moved by
    // up to 24% between its start and its end), so the run-wide means misjudge the scenarios
    // measured while it ran faster or slower.
    const baselineRoute = { read: `${baseline.url}/do-read`, write: `${baseline.url}/do` };
    const adjacent = async (kind) => (await load({ url: baselineRoute[kind] }, ADJACENT_SECONDS)).requests.average;
    const results = [];
    const requests = new Map();
    for (const s of selected) {
      // `paired: false`: this scenario's setup changes what its reference measures (an audit
      // device enabled, a DR secondary attached, a wave of tokens made), so the reference cannot
      // be measured again beside it in alternating rounds. It is measured again right before the
      // setup instead: judged against its own result from earlier in the run, the ratio carried
      // the machine's drift between the two places (a DR write at 0.71× of a KV v2 write measured
      // 17 minutes before it, in a run where the same server wrote 0.85× of the write baseline).
      const rereference = s.relativeTo?.paired === false && requests.has(s.relativeTo.scenario) ? await measure(`${s.relativeTo.scenario} [again, before "${s.name}"]`, requests.get(s.relativeTo.scenario)) : null;
      const context = s.setup ? await s.setup(coffer.url, token, { dataDir: path.join(work, 'coffer') }) : undefined;
      requests.set(s.name, s.request(coffer.url, token, context));
      const judged = s.target != null && baselineRoute[s.kind];
      const first = judged ? await adjacent(s.kind) : 0;
      const result = { ...(await measure(s.name, requests.get(s.name), { url: coffer.url, token })), kind: s.kind, target: s.target ?? null, minRps: s.minRps ?? null, relativeTo: s.relativeTo ?? null };
      if (judged) {
        result.adjacentRuns = [Math.round(first), Math.round(await adjacent(s.kind))];
        result.adjacentBaseline = Math.round((result.adjacentRuns[0] + result.adjacentRuns[1]) / 2);
      }
      result.object = withLoaded(await objectTime(coffer.url, token, requests.get(s.name), s.offloaded && inObject ? SCALE_MODEL_PASSES : 1), result.loaded);
      // Judged against another scenario (a large mount against an empty one): the two are measured
      // in alternating rounds right here, so the machine's drift between their places in the run
      // (and the aftermath of a bulk setup) does not decide the ratio; the median round counts.
      if (rereference) {
        result.reference_rps = rereference.rps;
        result.ratio_vs_scenario = +(result.rps / rereference.rps).toFixed(3);
      } else if (s.relativeTo && requests.has(s.relativeTo.scenario)) result.ratio_vs_scenario = await pairedRatio(requests.get(s.name), requests.get(s.relativeTo.scenario));
      results.push(result);
      if (s.teardown) await s.teardown(coffer.url, token, context);
      if (s.offloaded && inObject) {
        const context = s.setup ? await s.setup(inObject.url, inObject.token, { dataDir: path.join(work, 'in-object') }) : undefined;
        const request = s.request(inObject.url, inObject.token, context);
        const twin = { ...(await measure(`${s.name} [in object]`, request, inObject)), kind: s.kind, target: null, minRps: null, relativeTo: null, twinOf: s.name };
        twin.object = withLoaded(await objectTime(inObject.url, inObject.token, request, SCALE_MODEL_PASSES), twin.loaded);
        results.push(twin);
      }
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
    const base = { trivial: mean(before.trivial, after.trivial), oneDO: mean(before.oneDO, after.oneDO), oneDORead: mean(before.oneDORead, after.oneDORead) };
    const baselineOf = { read: base.oneDORead, write: base.oneDO };

    const rows = [base.trivial, base.oneDORead, base.oneDO, ...results].map((r) => ({
      ...r,
      ratio_vs_trivial_baseline: +(r.rps / base.trivial.rps).toFixed(3),
      ratio_vs_do_baseline: +(r.rps / base.oneDO.rps).toFixed(3),
      ratio_vs_do_read_baseline: +(r.rps / base.oneDORead.rps).toFixed(3),
      ...(r.kind ? { ratio_vs_run_baseline: +(r.rps / baselineOf[r.kind].rps).toFixed(3) } : {}),
      ...(r.kind ? { ratio_vs_baseline: +(r.rps / (r.adjacentBaseline ?? baselineOf[r.kind].rps)).toFixed(3) } : {}),
    }));
    const pad = (s, n) => String(s).padEnd(n);
    // The ratio by the baseline before and by the one after the scenario, when the target lies
    // between them: the machine's drift across the scenario alone could decide that verdict.
    const driftBand = (r) => {
      if (!r.adjacentRuns) return '';
      const [lo, hi] = [r.rps / Math.max(...r.adjacentRuns), r.rps / Math.min(...r.adjacentRuns)];
      return lo < r.target && r.target <= hi ? ` (${lo.toFixed(2)}–${hi.toFixed(2)} by the baseline before / after: within its drift)` : '';
    };
    console.log(`\nBaselines (before, after): trivial ${base.trivial.runs_rps.join(', ')} req/s; one-DO read ${base.oneDORead.runs_rps.join(', ')} req/s; one-DO write ${base.oneDO.runs_rps.join(', ')} req/s`);
    console.log('÷base: to the matching baseline measured around the scenario when it has a target (÷run: to the run-wide mean), else to the run-wide mean.');
    console.log('obj ms: time inside the serving object per request, from the serial passes / under the load (see objectTime).');
    console.log(`\n${pad('scenario', 44)}${pad('kind', 6)}${pad('req/s', 9)}${pad('p50 ms', 8)}${pad('p99 ms', 8)}${pad('÷trivial', 10)}${pad('÷base', 7)}${pad('÷run', 7)}${pad('obj ms', 17)}target`);
    for (const r of rows) {
      const verdicts = [];
      if (r.relativeTo) {
        const goal = r.relativeTo.min === undefined ? '' : ` (≥ ${r.relativeTo.min}× ${r.ratio_vs_scenario >= r.relativeTo.min ? 'met' : 'MISSED'})`;
        const again = r.reference_rps ? ` (${r.reference_rps} req/s right before)` : '';
        verdicts.push(`${r.ratio_vs_scenario ?? '?'}× of "${r.relativeTo.scenario}"${again}${goal}`);
      }
      if (r.target != null) verdicts.push(`≥ ${r.target}× ${r.ratio_vs_baseline >= r.target ? 'met' : 'MISSED'}${driftBand(r)}`);
      if (r.minRps != null) verdicts.push(`≥ ${r.minRps} req/s ${r.rps >= r.minRps ? 'met' : 'MISSED'}`);
      console.log(`${pad(r.scenario, 44)}${pad(r.kind ?? '', 6)}${pad(r.rps, 9)}${pad(r.p50, 8)}${pad(r.p99, 8)}${pad(r.ratio_vs_trivial_baseline, 10)}${pad(r.ratio_vs_baseline ?? '', 7)}${pad(r.adjacentBaseline ? r.ratio_vs_run_baseline : '', 7)}${pad(r.object ? `${r.object.ms} / ${r.object.loaded_ms ?? '-'}` : '', 17)}${verdicts.join('; ')}`);
    }
    const model = scaleModel(results);
    if (model.length > 0) {
      console.log(`\nScale model of a hot key (req/s): min(owner's ceiling, isolates × one isolate's req/s); owner's ceiling = 1000 / obj ms, one isolate's req/s = this run's req/s (the whole request on one thread).`);
      console.log(`obj ms: the lower of the serial and the loaded figure of each (both bound the object's time per request from above); × serial / loaded: each figure alone.`);
      console.log(`${pad('scenario', 40)}${pad('obj ms in object → offloaded', 30)}${pad('owner ceiling ×', 17)}${ISOLATES.map((n) => pad(`${n} isol.`, 10)).join('')}${pad('× serial', 10)}${pad('× loaded', 10)}× of means`);
      for (const m of model) {
        console.log(`${pad(m.scenario, 40)}${pad(`${m.in_object_ms} → ${m.offloaded_ms}`, 30)}${pad(m.owner_factor, 17)}${m.rps_by_isolates.map((r) => pad(r, 10)).join('')}${pad(m.serial.owner_factor, 10)}${pad(m.loaded?.owner_factor ?? '-', 10)}${m.owner_factor_of_means ?? ''}`);
      }
    }
    mkdirSync(path.join(ROOT, 'bench/results'), { recursive: true });
    const out = {
      date: new Date().toISOString(),
      node: process.version,
      cpus: os.cpus().length,
      connections: CONNECTIONS,
      duration_s: DURATION,
      results: rows.map(({ scenario, kind, rps, p50, p99, failed, ratio_vs_do_baseline, ratio_vs_do_read_baseline, ratio_vs_trivial_baseline, ratio_vs_baseline, ratio_vs_run_baseline, adjacentBaseline, adjacentRuns, object, target, minRps, runs_rps, relativeTo, ratio_vs_scenario, reference_rps }) => ({
        scenario, kind: kind ?? null, rps, p50, p99, failed, ratio_vs_baseline: ratio_vs_baseline ?? null, ratio_vs_run_baseline: ratio_vs_run_baseline ?? null, adjacent_baseline_rps: adjacentBaseline ?? null, adjacent_baseline_runs_rps: adjacentRuns ?? null, ratio_vs_do_baseline, ratio_vs_do_read_baseline, ratio_vs_trivial_baseline,
        object_ms: object?.ms ?? null, object_loaded_ms: object?.loaded_ms ?? null, object_route: object?.route ?? null, target: target ?? null, min_rps: minRps ?? null, ...(runs_rps ? { runs_rps } : {}),
        ...(relativeTo ? { relative_to: relativeTo.scenario, ratio_vs_scenario: ratio_vs_scenario ?? null, relative_target: relativeTo.min ?? null, ...(reference_rps ? { reference_rps } : {}) } : {}),
      })),
      scale_model: { isolates: ISOLATES, rows: model },
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
