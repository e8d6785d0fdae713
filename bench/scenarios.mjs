// Coffer's benchmark scenarios. `target` is the goal as a ratio to the one-DO baseline.
// `setup(url, rootToken)` may return a context that `request(url, rootToken, context)` receives.
// Later areas append their scenarios here.

const json = (token) => ({ 'X-Vault-Token': token, 'Content-Type': 'application/json' });

async function call(url, token, method, path, body) {
  const res = await fetch(`${url}/v1/${path}`, { method, headers: json(token), body: body && JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.status === 204 ? null : res.json();
}

/** A non-root token whose policy grants reads under secret/bench/ (and nothing else of note). */
async function narrowToken(url, token) {
  await call(url, token, 'PUT', 'sys/policies/acl/bench-reader', {
    policy: 'path "secret/bench/*" { capabilities = ["read", "list"] }\npath "secret/bench/private" { capabilities = ["deny"] }',
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
    setup: (url, token) => call(url, token, 'PUT', 'secret/bench/read', { user: 'app', password: 'correct-horse-battery-staple' }),
    request: (url, token) => ({ url: `${url}/v1/secret/bench/read`, headers: json(token) }),
  },
  {
    name: 'KV v1 write',
    target: 0.6,
    request: (url, token) => ({
      url: `${url}/v1/secret/bench/write`,
      method: 'PUT',
      headers: json(token),
      body: JSON.stringify({ user: 'app', password: 'correct-horse-battery-staple' }),
    }),
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
      await call(url, token, 'PUT', 'secret/bench/acl-read', { user: 'app', password: 'correct-horse-battery-staple' });
      return narrowToken(url, token);
    },
    request: (url, _root, narrow) => ({ url: `${url}/v1/secret/bench/acl-read`, headers: json(narrow) }),
  },
];
