// `npm run bench:native -- "<scenario>"`: samples workerd's native code under one scenario's load
// and under its matching one-DO baseline's, with Linux perf (software clock: `perf record -e
// cpu-clock`, which needs no hardware counters; workerd's binary keeps its symbols), and prints
// each one's CPU per request by kind of native code (allocation, kj's event loop and promises, V8's
// runtime, GC and handles, JSON, the RPC's serialiser, SQLite, the kernel...), then the symbols
// whose time per request differs most. `bench:profile` sees the JavaScript; this sees what the
// JavaScript makes workerd do, which is where most of a request's time goes.
//
// Needs `perf` (Debian: linux-perf) and permission to sample another process (root, or
// kernel.perf_event_paranoid ≤ 1). BENCH_DURATION: seconds sampled per side (default 8).
// BENCH_NATIVE_KIND="V8 builtins": also lists, for both sides, the top symbols of the kinds whose
// names contain that text.

import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { startProcess, stopProcess, workerdBelow } from './processes.mjs';
import { SCENARIOS, stopScenarioServers } from './scenarios.mjs';

const name = process.argv[2] ?? 'KV v1 read';
const scenario = SCENARIOS.find((s) => s.name === name);
if (!scenario) throw new Error(`no scenario "${name}"; have: ${SCENARIOS.map((s) => s.name).join(', ')}`);
try {
  execFileSync('perf', ['--version'], { stdio: 'ignore' });
} catch {
  throw new Error('perf is not installed (Debian: apt-get install linux-perf)');
}
const SECONDS = Number(process.env.BENCH_DURATION ?? 8);
const HZ = 4000;
const TOP = 25;

const load = (opts, duration) =>
  new Promise((resolve, reject) => autocannon({ connections: 50, duration, ...opts }, (e, r) => (e ? reject(e) : resolve(r))));

/** The kind of native code a symbol (in its object file) belongs to. */
function kindOf(dso, symbol) {
  if (dso.includes('kernel')) return 'kernel';
  if (dso.startsWith('lib') || dso === '[vdso]') return 'C library and other libraries';
  if (dso !== 'workerd') return 'JIT-compiled JavaScript and other';
  if (/^Builtins_/.test(symbol)) return 'V8 builtins (JavaScript running in them)';
  if (/tcmalloc|TCMalloc/.test(symbol)) return 'allocation (tcmalloc)';
  if (/^sqlite3|^pcache|^btree/i.test(symbol)) return 'SQLite';
  if (/Scaveng|MarkCompact|Marking|Sweep|Evacuat|cppgc|HeapTracer|TracedReference|GlobalHandles|::Heap::/.test(symbol)) return 'V8 GC and handles';
  if (/Json/.test(symbol)) return 'V8 JSON';
  if (/ValueSerializer|ValueDeserializer/.test(symbol)) return "the RPC's serialiser (V8)";
  if (/^v8::/.test(symbol)) return "V8's runtime, other";
  if (/^kj::|^capnp::/.test(symbol)) return "kj (event loop, promises, strings) and Cap'n Proto";
  if (/^workerd::jsg/.test(symbol)) return 'jsg (the JavaScript glue)';
  if (/^workerd::api::(Headers|Request|Response|Body|Url|URL)|getHeaderKeyFor|^ada::/.test(symbol)) return 'HTTP objects: headers, bodies, URLs';
  return 'workerd, other';
}

/** Microseconds of workerd's CPU per request, by symbol, sampled under `opts`' load. */
async function sample(label, opts, pid, data) {
  await load(opts, 2); // warm-up
  const perf = spawn('perf', ['record', '-e', 'cpu-clock', '-F', String(HZ), '-p', String(pid), '-o', data, '--', 'sleep', String(SECONDS)], { stdio: 'ignore' });
  // The load outlasts the sampling by a second; requests are counted over the sampled share of it.
  const r = await load(opts, SECONDS + 1);
  await new Promise((resolve) => perf.once('exit', resolve));
  const requests = (r.requests.total * SECONDS) / (SECONDS + 1);
  const report = execFileSync('perf', ['report', '-i', data, '--no-children', '--sort', 'dso,symbol', '--stdio', '--percent-limit', '0'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  // cpu-clock counts nanoseconds: the event count is the CPU time sampled.
  const cpuUs = Number(/^# Event count \(approx\.\): (\d+)/m.exec(report)?.[1] ?? 0) / 1000;
  const symbols = new Map();
  for (const line of report.split('\n')) {
    const m = /^\s+([0-9.]+)%\s+(.+?)\s+\[.\]\s+(.*)$/.exec(line.trimEnd());
    if (m) symbols.set(`${m[2]} ${m[3]}`, { dso: m[2], symbol: m[3], us: ((Number(m[1]) / 100) * cpuUs) / requests });
  }
  return { label, rps: r.requests.average, us: cpuUs / requests, symbols };
}

function show(side) {
  console.log(`${side.label}: ${Math.round(side.rps)} req/s, ${Math.round(side.us)} µs of workerd's CPU per request`);
  const wanted = process.env.BENCH_NATIVE_KIND;
  const kinds = new Map();
  const inKind = [];
  for (const s of side.symbols.values()) {
    const kind = kindOf(s.dso, s.symbol);
    kinds.set(kind, (kinds.get(kind) ?? 0) + s.us);
    if (wanted && kind.includes(wanted)) inKind.push(s);
  }
  for (const [kind, us] of [...kinds].sort((a, b) => b[1] - a[1])) console.log(`  ${us.toFixed(1).padStart(7)} µs  ${kind}`);
  if (!wanted) return;
  inKind.sort((a, b) => b.us - a.us);
  console.log(`  top symbols of kinds matching "${wanted}":`);
  for (const s of inKind.slice(0, TOP)) console.log(`  ${s.us.toFixed(2).padStart(7)}  ${s.symbol.slice(0, 130)}`);
}

const work = mkdtempSync(path.join(os.tmpdir(), 'coffer-native-'));
process.env.TMPDIR = work;
const procs = [];
try {
  const dataDir = path.join(work, 'coffer');
  const coffer = await startProcess('scripts/start.mjs', { PORT: '0', COFFER_DATA_DIR: dataDir, COFFER_LOG_LEVEL: 'warn', COFFER_HSM_BRIDGE: 'softhsm2' }, /Coffer is listening on (\S+)/);
  procs.push(coffer.proc);
  const token = JSON.parse(readFileSync(path.join(dataDir, 'init.json'), 'utf8')).root_token;
  const context = scenario.setup ? await scenario.setup(coffer.url, token, { dataDir }) : undefined;
  const baseline = await startProcess('bench/serve-baseline.mjs', { BASELINE_DATA_DIR: path.join(work, 'baseline') }, /Baseline is listening on (\S+)/);
  procs.push(baseline.proc);
  const kind = scenario.kind === 'read' ? 'read' : 'write';
  const base = await sample(`one-DO ${kind} baseline`, { url: `${baseline.url}${kind === 'read' ? '/do-read' : '/do'}` }, workerdBelow(baseline.proc.pid), path.join(work, 'baseline.data'));
  const mine = await sample(name, scenario.request(coffer.url, token, context), workerdBelow(coffer.proc.pid), path.join(work, 'scenario.data'));
  show(base);
  show(mine);
  const keys = new Set([...base.symbols.keys(), ...mine.symbols.keys()]);
  const diffs = [...keys].map((k) => ({ k, d: (mine.symbols.get(k)?.us ?? 0) - (base.symbols.get(k)?.us ?? 0) })).sort((a, b) => b.d - a.d);
  console.log(`symbols costing the scenario most beyond the baseline (µs per request):`);
  for (const { k, d } of diffs.slice(0, TOP)) console.log(`  ${d.toFixed(1).padStart(6)}  ${k.slice(0, 140)}`);
} finally {
  await Promise.all([...procs.map(stopProcess), stopScenarioServers()]);
  rmSync(work, { recursive: true, force: true });
}
