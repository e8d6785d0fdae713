// What a new cluster gets on its first start, through the public API only: sys/init (one recovery
// share), the root token and recovery key written to <dataDir>/init.json (mode 0600), and a kv
// version 2 engine at secret/ as Vault's dev server mounts it. Shared by `npm start` and
// `npm run init` (for a server started some other way, such as `npx wrangler dev`).
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

async function api(url, method, pathName, body, token) {
  const res = await fetch(`${url}/v1/${pathName}`, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { 'x-vault-token': token } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${pathName}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

export const isInitialised = async (url) => (await api(url, 'GET', 'sys/init')).initialized;

/** Initialises the cluster at `url`; returns the path of the init.json it wrote. */
export async function initialise(url, dataDir) {
  const init = await api(url, 'PUT', 'sys/init', { recovery_shares: 1, recovery_threshold: 1 });
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const initFile = path.join(dataDir, 'init.json');
  writeFileSync(initFile, JSON.stringify(init, null, 2) + '\n', { mode: 0o600 });
  await api(url, 'POST', 'sys/mounts/secret', { type: 'kv', description: 'key/value secret storage', options: { version: '2' } }, init.root_token);
  return initFile;
}
