// Coffer's benchmark scenarios. `target` is the goal as a ratio to the one-DO baseline.
// Later areas append their scenarios here.

const json = (token) => ({ 'X-Vault-Token': token, 'Content-Type': 'application/json' });

async function call(url, token, method, path, body) {
  const res = await fetch(`${url}/v1/${path}`, { method, headers: json(token), body: body && JSON.stringify(body) });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
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
];
