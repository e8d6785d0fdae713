// `npm run bench:profile -- <scenario name>`: runs one bench scenario against the launcher while
// workerd's CPU profiler records, then prints the functions with the most self time. For finding
// where a hot path spends its time (workerd's clocks do not advance inside a request).

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import autocannon from 'autocannon';
import WebSocket from 'ws';
import { ROOT } from '../scripts/miniflare-server.mjs';
import { SCENARIOS, stopScenarioServers } from './scenarios.mjs';

const name = process.argv[2] ?? 'KV v1 read';
const scenario = SCENARIOS.find((s) => s.name === name);
if (!scenario) throw new Error(`no scenario "${name}"; have: ${SCENARIOS.map((s) => s.name).join(', ')}`);
const inspectorPort = 9300 + Math.floor(Math.random() * 500);
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'coffer-profile-'));
// The servers' own temporary files (Miniflare's) go there too: one folder to remove afterwards.
process.env.TMPDIR = dataDir;

const proc = spawn(process.execPath, ['scripts/start.mjs'], {
  cwd: ROOT,
  env: { ...process.env, PORT: '0', COFFER_DATA_DIR: dataDir, COFFER_LOG_LEVEL: 'warn', COFFER_HSM_BRIDGE: 'softhsm2', COFFER_INSPECTOR_PORT: String(inspectorPort) },
  stdio: ['ignore', 'pipe', 'inherit'],
});
const url = await new Promise((resolve) => {
  let out = '';
  proc.stdout.on('data', (d) => {
    out += d;
    const m = out.match(/listening on (\S+)/);
    if (m) resolve(m[1]);
  });
});
const token = JSON.parse(readFileSync(path.join(dataDir, 'init.json'), 'utf8')).root_token;
const context = scenario.setup ? await scenario.setup(url, token, { dataDir }) : undefined;

const targets = await (await fetch(`http://127.0.0.1:${inspectorPort}/json`)).json();
const target = targets.find((t) => /coffer/i.test(t.title ?? '') || /coffer/i.test(t.url ?? '')) ?? targets[0];
const ws = new WebSocket(target.webSocketDebuggerUrl);
await new Promise((r) => ws.once('open', r));
let id = 0;
const pending = new Map();
ws.on('message', (m) => {
  const msg = JSON.parse(m);
  if (msg.id && pending.has(msg.id)) pending.get(msg.id)(msg.result);
});
const send = (method, params = {}) => new Promise((resolve) => {
  pending.set(++id, resolve);
  ws.send(JSON.stringify({ id, method, params }));
});

const load = (duration) => new Promise((res, rej) => autocannon({ connections: 50, duration, ...scenario.request(url, token, context) }, (e, r) => (e ? rej(e) : res(r))));
await load(2);
await send('Profiler.enable');
await send('Profiler.setSamplingInterval', { interval: 100 });
await send('Profiler.start');
const r = await load(Number(process.env.BENCH_DURATION ?? 5));
const { profile } = await send('Profiler.stop');
writeFileSync(path.join(dataDir, 'profile.cpuprofile'), JSON.stringify(profile));

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const counts = new Map();
for (const s of profile.samples) counts.set(s, (counts.get(s) ?? 0) + 1);
let total = 0;
for (const [nodeId, n] of counts) {
  const node = byId.get(nodeId);
  const f = node.callFrame;
  const key = `${f.functionName || '(anonymous)'} ${f.url.split('/').slice(-2).join('/')}:${f.lineNumber + 1}`;
  self.set(key, (self.get(key) ?? 0) + n);
  total += n;
}
console.log(`${scenario.name}: ${Math.round(r.requests.average)} req/s during profiling; top self time:`);
for (const [k, n] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 35)) console.log(`${((100 * n) / total).toFixed(1).padStart(5)}%  ${k}`);
console.log(`profile: ${path.join(dataDir, 'profile.cpuprofile')}`);
ws.close();
proc.kill('SIGTERM');
await stopScenarioServers();
