// Coffer's benchmark scenarios. `kind` names the baseline a scenario is judged against: a read
// against one DO call + one SQLite read, a write against one DO call + one SQLite write.
// `target` is the goal as a ratio to that baseline; `minRps` an absolute goal on this machine;
// `relativeTo` a ratio to another scenario of the same run (a goal when it has `min`): measured in
// alternating rounds with it, or, with `paired: false` (the setup changes what the other measures),
// against the other measured again right before the setup.
// `setup(url, rootToken, server)` may return a context that `request(url, rootToken, context)`
// receives, and `teardown(url, rootToken, context)` undoes what later scenarios must not meet;
// `server.dataDir` is the launcher's data directory (its SoftHSM2 token's PIN is there:
// the bench runs the launcher with COFFER_HSM_BRIDGE=softhsm2).
// Later areas append their scenarios here. Scenarios that need a server of their own start it in
// their setup; `stopScenarioServers()` stops them (run.mjs, profile.mjs and compare.mjs call it).

import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { buildPlugin } from '../plugins/sdk/build.mjs';
import { startAwsEmulatorProcess } from './aws-emulator.mjs';
import { startProcess, stopProcess } from './processes.mjs';

const json = (token) => ({ 'X-Vault-Token': token, 'Content-Type': 'application/json' });

async function call(url, token, method, path, body) {
  const res = await fetch(`${url}/v1/${path}`, { method, headers: json(token), body: body && JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? null : res.json();
}

/** Mounts a kv engine unless the path is taken already (scenarios share mounts). */
const ensureKV = (url, token, mount, version) => ensureMount(url, token, mount, 'kv', { version });

/** Mounts an engine unless the path is taken already. */
async function ensureMount(url, token, mount, type, options) {
  const res = await fetch(`${url}/v1/sys/mounts/${mount}`, { method: 'POST', headers: json(token), body: JSON.stringify({ type, options }) });
  if (!res.ok && !(await res.text()).includes('path is already in use')) throw new Error(`mount ${mount}: ${res.status}`);
}

const KIB_B64 = Buffer.alloc(1024, 'coffer-').toString('base64');
const SMALL_B64 = Buffer.from('a short message to protect').toString('base64');

const SECRET = { user: 'app', password: 'correct-horse-battery-staple' };
/**
 * The TTL of the tokens the token-create and JWT-login scenarios make by the ten thousand. It
 * outlives a run: with 10m, their expiry (a shard's alarm revoking 15,000 tokens) landed in
 * whichever scenario ran ten minutes later, the AWS and DR rows. What a wave of expiries costs is
 * measured by a scenario of its own ("… while 15,000 tokens expire").
 */
const RUN_OUTLIVING_TTL = '2h';
const EXPIRY_WAVE = 15_000;

/**
 * Creates `count` tokens (children of the root token, 50 at a time) that all expire within one
 * second, `lead` ms after this returns; gives up creating after 20 s.
 */
async function expiryWave(url, token, count, lead) {
  const CREATE_MS = 20_000;
  const start = Date.now();
  const expireAt = start + CREATE_MS + lead;
  let made = 0;
  const creator = async () => {
    while (made < count && Date.now() - start < CREATE_MS) {
      made++;
      const ttl = Math.ceil((expireAt - Date.now()) / 1000);
      await call(url, token, 'POST', 'auth/token/create', { policies: ['default'], ttl: `${ttl}s` });
    }
  };
  await Promise.all(Array.from({ length: 50 }, creator));
  await new Promise((resolve) => setTimeout(resolve, Math.max(0, start + CREATE_MS - Date.now())));
  return made;
}

/** Resolves once the shard holds no more accessors than `limit` (the wave is gone), or after a minute. */
async function waitForAccessors(url, token, limit) {
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; ) {
    const { data } = await call(url, token, 'GET', 'auth/token/accessors?list=true');
    if (data.keys.length <= limit) return;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}
const BIG_KEYS = 100_000;

/** Fills a KV v2 mount with `count` keys in 100 folders (50 writers at once), then one known key. */
async function fillKV2(url, token, mount, count) {
  let next = 0;
  const writer = async () => {
    for (let i = next++; i < count; i = next++) await call(url, token, 'POST', `${mount}/data/fill/${i % 100}/key-${i}`, { data: { n: String(i) } });
  };
  await Promise.all(Array.from({ length: 50 }, writer));
}

/** A non-root token whose policy grants reads under kv1/bench/ (and nothing else of note). */
async function narrowToken(url, token) {
  await call(url, token, 'PUT', 'sys/policies/acl/bench-reader', {
    policy: 'path "kv1/bench/*" { capabilities = ["read", "list"] }\npath "kv1/bench/private" { capabilities = ["deny"] }',
  });
  return (await call(url, token, 'POST', 'auth/token/create', { policies: ['bench-reader'], ttl: '1h' })).auth.client_token;
}


/** A PKI mount with an EC P-256 root and the roles the PKI scenarios use (once per run). */
async function ensurePki(url, token) {
  await ensureMount(url, token, 'pki', 'pki');
  const ca = await fetch(`${url}/v1/pki/ca/pem`);
  if (ca.status !== 200) await call(url, token, 'POST', 'pki/root/generate/internal', { common_name: 'Bench Root', key_type: 'ec', ttl: '8760h' });
  await call(url, token, 'POST', 'pki/roles/bench', { allowed_domains: 'bench.example', allow_subdomains: true, key_type: 'ec', key_bits: 256, max_ttl: '72h' });
  await call(url, token, 'POST', 'pki/roles/bench-nostore', { allowed_domains: 'bench.example', allow_subdomains: true, key_type: 'ec', key_bits: 256, max_ttl: '72h', no_store: true });
  await call(url, token, 'POST', 'pki/roles/bench-sign', { allowed_domains: 'bench.example', allow_subdomains: true, key_type: 'any', max_ttl: '72h', no_store: true });
}

/** A CSR for www.bench.example with a fresh P-256 key, made by openssl. */
async function benchCsr() {
  const { execFileSync } = await import('node:child_process');
  return execFileSync('openssl', ['req', '-new', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', '/dev/null', '-subj', '/CN=www.bench.example'], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'ignore'],
  });
}

/** Issues `count` stored certificates (20 at once) and returns their serials, for the revoke scenario. */
async function issueSerials(url, token, count) {
  const serials = [];
  let next = 0;
  const worker = async () => {
    for (let i = next++; i < count; i = next++) {
      serials.push((await call(url, token, 'POST', 'pki/issue/bench', { common_name: `r${i}.bench.example`, ttl: '1h' })).data.serial_number);
    }
  };
  await Promise.all(Array.from({ length: 20 }, worker));
  return serials;
}

/** The AWS IAM/STS emulator (a child process), started by the first AWS scenario's setup. */
let awsEmulator = null;

/** Stops the servers scenarios started (the AWS emulator, the DR secondary and its lag sampler). */
export async function stopScenarioServers() {
  const started = awsEmulator;
  awsEmulator = null;
  const emu = started && (await started.catch(() => null));
  if (emu) await emu.stop();
  if (dr) {
    const { secondary, sampler } = dr;
    dr = null;
    await sampler.stop();
    await stopProcess(secondary.proc);
  }
}

/** The DR scenario's secondary launcher and its lag sampler (started by its setup, the last one). */
let dr = null;

const drStatus = async (url) => (await (await fetch(`${url}/v1/sys/replication/dr/status`)).json()).data ?? {};

/**
 * Replication lag, sampled while the load runs: every 100 ms the primary's last_wal is noted with
 * the time, and the lag of a sample is how long the secondary took to report that many changes
 * applied (last_remote_wal). Printed as p50/p99 when the scenario servers stop.
 */
function lagSampler(primary, secondary) {
  const lags = [];
  const pending = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const both = await Promise.all([drStatus(primary), drStatus(secondary)]).catch(() => null);
      if (!both) break;
      const [p, s] = both;
      const now = Date.now();
      pending.push({ wal: p.last_wal, at: now });
      while (pending.length > 0 && s.last_remote_wal >= pending[0].wal) lags.push(now - pending.shift().at);
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      const sorted = [...lags].sort((a, b) => a - b);
      const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
      if (sorted.length > 0) {
        console.log(`DR replication lag under "kv v2 write with one DR secondary attached": p50 ${at(0.5)} ms, p99 ${at(0.99)} ms (${sorted.length} samples; sampled every 100 ms, so ±100 ms)`);
      }
    },
  };
}

/**
 * A DR secondary (a second launcher on the same seal key) following the bench server, which
 * becomes a DR primary: from here on every write is also logged for the secondary.
 */
async function attachSecondary(url, token, dataDir) {
  const secondaryDir = `${dataDir}-dr-secondary`;
  mkdirSync(secondaryDir, { recursive: true, mode: 0o700 });
  copyFileSync(path.join(dataDir, 'seal.key'), path.join(secondaryDir, 'seal.key'));
  const secondary = await startProcess('scripts/start.mjs', { PORT: '0', COFFER_DATA_DIR: secondaryDir, COFFER_LOG_LEVEL: 'warn' }, /Coffer is listening on (\S+)/);
  const secondaryToken = JSON.parse(readFileSync(path.join(secondaryDir, 'init.json'), 'utf8')).root_token;
  await call(url, token, 'POST', 'sys/replication/dr/primary/enable', {});
  const key = (await call(secondary.url, secondaryToken, 'POST', 'sys/replication/dr/secondary/generate-public-key', {})).data.secondary_public_key;
  const activation = (await call(url, token, 'POST', 'sys/replication/dr/primary/secondary-token', { id: 'bench', secondary_public_key: key })).data.token;
  await call(secondary.url, secondaryToken, 'POST', 'sys/replication/dr/secondary/enable', { token: activation });
  let last = null;
  for (let i = 0; ; i++) {
    // A status call can fail on its own (a kept-alive socket the server closed: "other side
    // closed" ended a full run here); the next poll asks again.
    const both = await Promise.all([drStatus(url), drStatus(secondary.url)]).catch((e) => ((last = e), null));
    if (both) {
      const [p, s] = both;
      last = s;
      if (s.state === 'stream-wals' && s.last_remote_wal === p.last_wal) break;
    }
    if (i > 600) throw new Error(`the DR secondary did not catch up: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  dr = { secondary, sampler: lagSampler(url, secondary.url) };
}

const AWS_ADMIN = { userName: 'vault-admin', accessKeyId: 'AKIAADMINEXAMPLE0001', secretAccessKey: 'admin/secret/key/EXAMPLE0000000000000001' };
const AWS_ROLE_ARN = 'arn:aws:iam::123456789012:role/bench';

/**
 * The aws/ mount configured against a freshly reset emulator account: the admin user whose key
 * the engine signs with, and one role to assume. Each AWS scenario resets it, so the IAM users
 * one scenario made (about one per request, ≈ 1 KiB each in the emulator's memory) go before the
 * next; within a scenario they are a few thousand for the default 2 + 10 s. The emulator keeps
 * only its latest ~1000 calls in its log. Leases (1 h) outlive the run: no revocation (seven IAM
 * calls each) runs during the measurement. max_retries 0: a throttled or failed call fails its
 * request (and shows in the non-2xx count) instead of being retried out of sight.
 */
async function ensureAws(url, token) {
  awsEmulator ??= startAwsEmulatorProcess({ maxLoggedCalls: 1000 });
  const emu = await awsEmulator;
  const reset = await fetch(`${emu.url}/_emulator/reset`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      users: [{ userName: AWS_ADMIN.userName, accessKeys: [{ accessKeyId: AWS_ADMIN.accessKeyId, secretAccessKey: AWS_ADMIN.secretAccessKey }] }],
      roles: [{ roleName: 'bench' }],
    }),
  });
  if (!reset.ok) throw new Error(`AWS emulator reset: ${reset.status} ${await reset.text()}`);
  await ensureMount(url, token, 'aws', 'aws');
  await call(url, token, 'POST', 'aws/config/root', {
    access_key: AWS_ADMIN.accessKeyId,
    secret_key: AWS_ADMIN.secretAccessKey,
    iam_endpoint: emu.url,
    sts_endpoint: emu.url,
    region: 'us-east-1',
    max_retries: 0,
  });
  await call(url, token, 'POST', 'aws/config/lease', { lease: '1h', lease_max: '1h' });
}

export const SCENARIOS = [
  {
    name: 'sys/health',
    kind: 'read',
    request: (url) => ({ url: `${url}/v1/sys/health` }),
  },
  {
    name: 'KV v1 read',
    kind: 'read',
    target: 0.9,
    setup: async (url, token) => {
      await ensureKV(url, token, 'kv1', '1');
      await call(url, token, 'PUT', 'kv1/bench/read', SECRET);
    },
    request: (url, token) => ({ url: `${url}/v1/kv1/bench/read`, headers: json(token) }),
  },
  {
    name: 'KV v1 write',
    kind: 'write',
    target: 0.9,
    setup: (url, token) => ensureKV(url, token, 'kv1', '1'),
    request: (url, token) => ({ url: `${url}/v1/kv1/bench/write`, method: 'PUT', headers: json(token), body: JSON.stringify(SECRET) }),
  },
  {
    name: 'KV v2 read',
    kind: 'read',
    target: 0.9,
    setup: (url, token) => call(url, token, 'POST', 'secret/data/bench/read', { data: SECRET }),
    request: (url, token) => ({ url: `${url}/v1/secret/data/bench/read`, headers: json(token) }),
  },
  {
    // The same read by a non-root token that one RGP (attached to the token) and one EGP (on the
    // path) govern: the Sentinel programs run on every request.
    name: 'KV v2 read with one EGP and one RGP',
    kind: 'read',
    relativeTo: { scenario: 'KV v2 read', min: 0.85 },
    setup: async (url, token) => {
      await call(url, token, 'POST', 'secret/data/bench/governed', { data: SECRET });
      await call(url, token, 'PUT', 'sys/policies/acl/bench-kv2', { policy: 'path "secret/data/bench/*" { capabilities = ["read"] }' });
      await call(url, token, 'PUT', 'sys/policies/rgp/bench-rgp', {
        enforcement_level: 'hard-mandatory',
        policy: 'main = rule { token.metadata.team is "bench" and "bench-kv2" in token.policies }',
      });
      await call(url, token, 'PUT', 'sys/policies/egp/bench-egp', {
        enforcement_level: 'hard-mandatory',
        paths: ['secret/data/bench/governed'],
        policy: 'import "strings"\nmain = rule { strings.has_prefix(request.path, "secret/data/bench/") and request.operation is "read" }',
      });
      const created = await call(url, token, 'POST', 'auth/token/create', { policies: ['bench-kv2', 'bench-rgp'], meta: { team: 'bench' }, ttl: '1h' });
      return created.auth.client_token;
    },
    request: (url, _root, governed) => ({ url: `${url}/v1/secret/data/bench/governed`, headers: json(governed) }),
  },
  {
    name: 'KV v2 write',
    kind: 'write',
    target: 0.9,
    request: (url, token) => ({ url: `${url}/v1/secret/data/bench/write`, method: 'POST', headers: json(token), body: JSON.stringify({ data: SECRET }) }),
  },
  {
    name: 'KV v2 list a folder',
    kind: 'read',
    target: 0.9,
    // A key of its own, so that run alone (BENCH_ONLY, bench:profile) the folder is not empty,
    // which answers 404; in a full run the read and write scenarios' keys are there too.
    setup: (url, token) => call(url, token, 'POST', 'secret/data/bench/listed', { data: SECRET }),
    request: (url, token) => ({ url: `${url}/v1/secret/metadata/bench/?list=true`, headers: json(token) }),
  },
  {
    name: `KV v2 read, ${BIG_KEYS / 1000}k-key mount`,
    kind: 'read',
    // As fast as in the (nearly) empty secret/ mount: within 10%.
    relativeTo: { scenario: 'KV v2 read', min: 0.9 },
    setup: async (url, token) => {
      await ensureKV(url, token, 'big', '2');
      const probe = await fetch(`${url}/v1/big/data/bench/read`, { headers: json(token) });
      if (probe.status === 404) await fillKV2(url, token, 'big', BIG_KEYS);
      await call(url, token, 'POST', 'big/data/bench/read', { data: SECRET });
      await call(url, token, 'POST', 'big/data/bench/write', { data: SECRET });
    },
    request: (url, token) => ({ url: `${url}/v1/big/data/bench/read`, headers: json(token) }),
  },
  {
    name: `KV v2 list a folder, ${BIG_KEYS / 1000}k-key mount`,
    kind: 'read',
    relativeTo: { scenario: 'KV v2 list a folder', min: 0.9 },
    request: (url, token) => ({ url: `${url}/v1/big/metadata/bench/?list=true`, headers: json(token) }),
  },
  {
    name: 'token create',
    kind: 'write',
    target: 0.9,
    request: (url, token) => ({
      url: `${url}/v1/auth/token/create`,
      method: 'POST',
      headers: json(token),
      body: JSON.stringify({ policies: ['default'], ttl: RUN_OUTLIVING_TTL }),
    }),
  },
  {
    name: 'token lookup-self',
    kind: 'read',
    target: 0.9,
    setup: narrowToken,
    request: (url, _root, narrow) => ({ url: `${url}/v1/auth/token/lookup-self`, headers: json(narrow) }),
  },
  {
    // A wave of expiries under writes: 15,000 tokens made together expire together, ~1 s into the
    // measurement (after its 2 s warm-up), and the shard's alarm revokes them while KV v2 writes
    // run. Judged against "KV v2 write" of the same run; no goal, it shows what a wave costs.
    name: `KV v2 write while ${EXPIRY_WAVE / 1000}k tokens expire`,
    kind: 'write',
    relativeTo: { scenario: 'KV v2 write', paired: false },
    setup: async (url, token) => {
      const before = (await call(url, token, 'GET', 'auth/token/accessors?list=true')).data.keys.length;
      await expiryWave(url, token, EXPIRY_WAVE, 3_000);
      return before;
    },
    teardown: (url, token, before) => waitForAccessors(url, token, before),
    request: (url, token) => ({ url: `${url}/v1/secret/data/bench/write`, method: 'POST', headers: json(token), body: JSON.stringify({ data: SECRET }) }),
  },
  {
    name: 'KV v1 read, non-root token through ACL',
    kind: 'read',
    target: 0.9,
    setup: async (url, token) => {
      await ensureKV(url, token, 'kv1', '1');
      await call(url, token, 'PUT', 'kv1/bench/acl-read', SECRET);
      return narrowToken(url, token);
    },
    request: (url, _root, narrow) => ({ url: `${url}/v1/kv1/bench/acl-read`, headers: json(narrow) }),
  },
  {
    // KV v1 read again with one audit device enabled (entries discarded: what the device costs is
    // its object's HMACs and hash chain, and the calls to it). Judged against the unaudited read
    // measured right before the device is enabled; it is disabled afterwards, so no later scenario
    // pays it.
    name: 'KV v1 read, one audit device',
    kind: 'read',
    relativeTo: { scenario: 'KV v1 read', paired: false },
    setup: async (url, token) => {
      await ensureKV(url, token, 'kv1', '1');
      await call(url, token, 'PUT', 'kv1/bench/read', SECRET);
      await call(url, token, 'PUT', 'sys/audit/bench', { type: 'file', options: { file_path: 'discard' } });
    },
    teardown: (url, token) => call(url, token, 'DELETE', 'sys/audit/bench'),
    request: (url, token) => ({ url: `${url}/v1/kv1/bench/read`, headers: json(token) }),
  },
  {
    name: 'transit encrypt 1 KiB, aes256-gcm96',
    // On a handed-off path but below OFFLOAD_MIN_COST_US, so it stays in the object: measured again
    // with OFFLOAD_HANDLERS=0 all the same, to show the two are alike.
    offloaded: true,
    kind: 'read',
    target: 0.7,
    setup: async (url, token) => {
      await ensureMount(url, token, 'transit', 'transit');
      await call(url, token, 'POST', 'transit/keys/bench-aes', {});
    },
    request: (url, token) => ({ url: `${url}/v1/transit/encrypt/bench-aes`, method: 'POST', headers: json(token), body: JSON.stringify({ plaintext: KIB_B64 }) }),
  },
  {
    name: 'transit batch encrypt, 100 items',
    // Handed off to the Worker: measured again with every handler in the object (OFFLOAD_HANDLERS=0).
    offloaded: true,
    kind: 'read',
    setup: async (url, token) => {
      await ensureMount(url, token, 'transit', 'transit');
      await call(url, token, 'POST', 'transit/keys/bench-aes', {});
    },
    request: (url, token) => ({
      url: `${url}/v1/transit/encrypt/bench-aes`,
      method: 'POST',
      headers: json(token),
      body: JSON.stringify({ batch_input: Array.from({ length: 100 }, (_, i) => ({ plaintext: SMALL_B64, reference: String(i) })) }),
    }),
  },
  {
    name: 'transit sign, ed25519',
    kind: 'read',
    target: 0.6,
    setup: async (url, token) => {
      await ensureMount(url, token, 'transit', 'transit');
      await call(url, token, 'POST', 'transit/keys/bench-ed', { type: 'ed25519' });
    },
    request: (url, token) => ({ url: `${url}/v1/transit/sign/bench-ed`, method: 'POST', headers: json(token), body: JSON.stringify({ input: SMALL_B64 }) }),
  },
  {
    name: 'transit sign, rsa-2048',
    // Handed off to the Worker: measured again with every handler in the object (OFFLOAD_HANDLERS=0).
    offloaded: true,
    kind: 'read',
    setup: async (url, token) => {
      await ensureMount(url, token, 'transit', 'transit');
      await call(url, token, 'POST', 'transit/keys/bench-rsa', { type: 'rsa-2048' });
    },
    request: (url, token) => ({ url: `${url}/v1/transit/sign/bench-rsa`, method: 'POST', headers: json(token), body: JSON.stringify({ input: SMALL_B64 }) }),
  },
  {
    name: 'transit sign, ecdsa-p256',
    kind: 'read',
    setup: async (url, token) => {
      await ensureMount(url, token, 'transit', 'transit');
      await call(url, token, 'POST', 'transit/keys/bench-p256', { type: 'ecdsa-p256' });
    },
    request: (url, token) => ({ url: `${url}/v1/transit/sign/bench-p256`, method: 'POST', headers: json(token), body: JSON.stringify({ input: SMALL_B64 }) }),
  },
  {
    // A read served by a catalog plugin (plugins/totp) in its own isolate: the hop from the mount's
    // object into the plugin and its storage calls back, against a built-in engine's read.
    name: 'totp code generate (plugin)',
    kind: 'read',
    relativeTo: { scenario: 'KV v1 read', min: 0.6 },
    setup: async (url, token, server) => {
      const { sha256 } = await buildPlugin(path.join(import.meta.dirname, '../plugins/totp/src/index.ts'), path.join(server.dataDir, 'plugins', 'totp.js'));
      await call(url, token, 'POST', 'sys/plugins/catalog/secret/totp', { sha256, command: 'totp.js' });
      await ensureMount(url, token, 'totp', 'totp');
      await call(url, token, 'POST', 'totp/keys/bench', { generate: true, issuer: 'Coffer', account_name: 'bench', qr_size: 0 });
    },
    request: (url, token) => ({ url: `${url}/v1/totp/code/bench`, headers: json(token) }),
  },
  {
    // The same signature made by a P-256 key in SoftHSM2, through the HSM bridge (mutual TLS).
    name: 'transit sign ecdsa-p256 managed (SoftHSM2)',
    kind: 'read',
    relativeTo: { scenario: 'transit sign, ecdsa-p256', min: 0.25 },
    setup: async (url, token, server) => {
      await ensureMount(url, token, 'transit', 'transit');
      const pin = readFileSync(path.join(server.dataDir, 'hsm', 'pin'), 'utf8').trim();
      await call(url, token, 'POST', 'sys/managed-keys/pkcs11/bench-hsm', {
        library: 'softhsm',
        token_label: 'coffer',
        pin,
        key_label: 'bench-p256',
        mechanism: '0x1041',
        curve: 'P256',
        allow_generate_key: true,
        any_mount: true,
        usages: ['sign', 'verify'],
        // Operations the bridge runs at once on this key (Vault's default is 1: one at a time).
        max_parallel: 16,
      });
      await call(url, token, 'POST', 'transit/keys/bench-hsm-p256', { type: 'managed_key', managed_key_name: 'bench-hsm' });
    },
    request: (url, token) => ({ url: `${url}/v1/transit/sign/bench-hsm-p256`, method: 'POST', headers: json(token), body: JSON.stringify({ input: SMALL_B64 }) }),
  },
  {
    name: 'JWT login, jwt_validation_pubkeys',
    kind: 'write',
    minRps: 2500,
    setup: async (url, token) => {
      const { SignJWT, exportSPKI, generateKeyPair } = await import('jose');
      const { publicKey, privateKey } = await generateKeyPair('ES256');
      const res = await fetch(`${url}/v1/sys/auth/jwt`, { method: 'POST', headers: json(token), body: JSON.stringify({ type: 'jwt' }) });
      if (!res.ok && !(await res.text()).includes('path is already in use')) throw new Error(`enable auth/jwt: ${res.status}`);
      await call(url, token, 'POST', 'auth/jwt/config', { jwt_validation_pubkeys: [await exportSPKI(publicKey)], bound_issuer: 'https://bench.example' });
      await call(url, token, 'POST', 'auth/jwt/role/bench', { role_type: 'jwt', user_claim: 'sub', bound_audiences: ['coffer-bench'], token_policies: ['default'], token_ttl: RUN_OUTLIVING_TTL });
      return new SignJWT({})
        .setProtectedHeader({ alg: 'ES256' })
        .setIssuer('https://bench.example')
        .setAudience('coffer-bench')
        .setSubject('bench-user')
        .setIssuedAt()
        .setExpirationTime('2h')
        .sign(privateKey);
    },
    request: (url, _token, jwt) => ({ url: `${url}/v1/auth/jwt/login`, method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ role: 'bench', jwt }) }),
  },
  {
    name: 'PKI issue EC P-256, no_store',
    // Handed off to the Worker: measured again with every handler in the object (OFFLOAD_HANDLERS=0).
    offloaded: true,
    kind: 'read',
    minRps: 3000,
    setup: (url, token) => ensurePki(url, token),
    request: (url, token) => ({ url: `${url}/v1/pki/issue/bench-nostore`, method: 'POST', headers: json(token), body: JSON.stringify({ common_name: 'www.bench.example', ttl: '1h' }) }),
  },
  {
    name: 'PKI issue EC P-256, stored',
    kind: 'write',
    minRps: 2000,
    setup: (url, token) => ensurePki(url, token),
    request: (url, token) => ({ url: `${url}/v1/pki/issue/bench`, method: 'POST', headers: json(token), body: JSON.stringify({ common_name: 'www.bench.example', ttl: '1h' }) }),
  },
  {
    name: 'PKI sign a CSR (P-256)',
    // Handed off to the Worker: measured again with every handler in the object (OFFLOAD_HANDLERS=0).
    offloaded: true,
    kind: 'write',
    setup: async (url, token) => {
      await ensurePki(url, token);
      return benchCsr();
    },
    request: (url, token, csr) => ({ url: `${url}/v1/pki/sign/bench-sign`, method: 'POST', headers: json(token), body: JSON.stringify({ csr, ttl: '1h' }) }),
  },
  {
    name: 'PKI revoke',
    kind: 'write',
    setup: async (url, token) => {
      await ensurePki(url, token);
      return issueSerials(url, token, 15_000);
    },
    // Each request revokes a different stored certificate.
    request: (url, token, serials) => ({
      url: `${url}/v1/pki/revoke`,
      requests: [{ method: 'POST', headers: json(token), setupRequest: (req) => ({ ...req, body: JSON.stringify({ serial_number: serials.pop() ?? '00:01' }) }) }],
    }),
  },
  {
    // CreateUser, AttachUserPolicy, CreateAccessKey, and a lease: in the mount's write order.
    name: 'aws creds iam_user',
    kind: 'write',
    target: 0.1,
    setup: async (url, token) => {
      await ensureAws(url, token);
      await call(url, token, 'POST', 'aws/roles/bench-user', { credential_type: 'iam_user', policy_arns: ['arn:aws:iam::aws:policy/ReadOnlyAccess'] });
    },
    request: (url, token) => ({ url: `${url}/v1/aws/creds/bench-user`, headers: json(token) }),
  },
  {
    // One AssumeRole call, and a lease: in the mount's write order.
    name: 'aws sts assumed_role',
    kind: 'write',
    target: 0.3,
    setup: async (url, token) => {
      await ensureAws(url, token);
      await call(url, token, 'POST', 'aws/roles/bench-sts', { credential_type: 'assumed_role', role_arns: [AWS_ROLE_ARN] });
    },
    request: (url, token) => ({ url: `${url}/v1/aws/sts/bench-sts`, method: 'POST', headers: json(token), body: '{}' }),
  },
  {
    // Last: it makes the bench server a DR primary, which every later write would pay for. The
    // same write as "KV v2 write", with every change also logged for a secondary that pulls it.
    name: 'kv v2 write with one DR secondary attached',
    kind: 'write',
    relativeTo: { scenario: 'KV v2 write', min: 0.8, paired: false },
    setup: (url, token, server) => attachSecondary(url, token, server.dataDir),
    request: (url, token) => ({ url: `${url}/v1/secret/data/bench/dr-write`, method: 'POST', headers: json(token), body: JSON.stringify({ data: SECRET }) }),
  },
];
