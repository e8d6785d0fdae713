// Coffer's benchmark scenarios. `target` is the goal as a ratio to the one-DO baseline.
// `setup(url, rootToken)` may return a context that `request(url, rootToken, context)` receives.
// Later areas append their scenarios here.

const json = (token) => ({ 'X-Vault-Token': token, 'Content-Type': 'application/json' });

async function call(url, token, method, path, body) {
  const res = await fetch(`${url}/v1/${path}`, { method, headers: json(token), body: body && JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? null : res.json();
}

/** Mounts a kv engine unless the path is taken already (scenarios share mounts). */
async function ensureKV(url, token, mount, version) {
  const res = await fetch(`${url}/v1/sys/mounts/${mount}`, { method: 'POST', headers: json(token), body: JSON.stringify({ type: 'kv', options: { version } }) });
  if (!res.ok && !(await res.text()).includes('path is already in use')) throw new Error(`mount ${mount}: ${res.status}`);
}

const SECRET = { user: 'app', password: 'correct-horse-battery-staple' };
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

export const SCENARIOS = [
  {
    name: 'sys/health',
    request: (url) => ({ url: `${url}/v1/sys/health` }),
  },
  {
    name: 'KV v1 read',
    target: 0.75,
    setup: async (url, token) => {
      await ensureKV(url, token, 'kv1', '1');
      await call(url, token, 'PUT', 'kv1/bench/read', SECRET);
    },
    request: (url, token) => ({ url: `${url}/v1/kv1/bench/read`, headers: json(token) }),
  },
  {
    name: 'KV v1 write',
    target: 0.6,
    setup: (url, token) => ensureKV(url, token, 'kv1', '1'),
    request: (url, token) => ({ url: `${url}/v1/kv1/bench/write`, method: 'PUT', headers: json(token), body: JSON.stringify(SECRET) }),
  },
  {
    name: 'KV v2 read',
    target: 0.75,
    setup: (url, token) => call(url, token, 'POST', 'secret/data/bench/read', { data: SECRET }),
    request: (url, token) => ({ url: `${url}/v1/secret/data/bench/read`, headers: json(token) }),
  },
  {
    name: 'KV v2 write',
    target: 0.6,
    request: (url, token) => ({ url: `${url}/v1/secret/data/bench/write`, method: 'POST', headers: json(token), body: JSON.stringify({ data: SECRET }) }),
  },
  {
    name: 'KV v2 list a folder',
    request: (url, token) => ({ url: `${url}/v1/secret/metadata/bench/?list=true`, headers: json(token) }),
  },
  {
    name: `KV v2 read, ${BIG_KEYS / 1000}k-key mount`,
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
    relativeTo: { scenario: 'KV v2 list a folder', min: 0.9 },
    request: (url, token) => ({ url: `${url}/v1/big/metadata/bench/?list=true`, headers: json(token) }),
  },
  {
    name: 'token create',
    request: (url, token) => ({
      url: `${url}/v1/auth/token/create`,
      method: 'POST',
      headers: json(token),
      body: JSON.stringify({ policies: ['default'], ttl: '10m' }),
    }),
  },
  {
    name: 'token lookup-self',
    target: 0.85,
    setup: narrowToken,
    request: (url, _root, narrow) => ({ url: `${url}/v1/auth/token/lookup-self`, headers: json(narrow) }),
  },
  {
    name: 'KV v1 read, non-root token through ACL',
    target: 0.7,
    setup: async (url, token) => {
      await ensureKV(url, token, 'kv1', '1');
      await call(url, token, 'PUT', 'kv1/bench/acl-read', SECRET);
      return narrowToken(url, token);
    },
    request: (url, _root, narrow) => ({ url: `${url}/v1/kv1/bench/acl-read`, headers: json(narrow) }),
  },
];
