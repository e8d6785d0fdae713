// Helpers for integration tests: the Worker through SELF.fetch, as a Vault client would call it.
import { SELF } from 'cloudflare:test';

export interface ApiResult {
  status: number;
  headers: Headers;
  text: string;
  // Parsed JSON body (null for an empty body).
  body: any;
}

export interface ApiOptions {
  token?: string;
  body?: unknown;
  /** A raw body string, sent as-is. */
  raw?: string;
  headers?: Record<string, string>;
}

export async function api(method: string, path: string, opts: ApiOptions = {}): Promise<ApiResult> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers['X-Vault-Token'] = opts.token;
  let body: string | undefined = opts.raw;
  if (opts.body !== undefined) {
    body = JSON.stringify(opts.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const res = await SELF.fetch(`http://coffer.test${path.startsWith('/') ? path : `/v1/${path}`}`, { method, headers, body });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, body: text ? JSON.parse(text) : null };
}

/** Requests as one token: `call` answers whatever came back; `ok` throws unless it succeeded (setup steps). */
export function caller(token: () => string) {
  const call = (method: string, path: string, body?: unknown) => api(method, path, { token: token(), body });
  const ok = async (method: string, path: string, body?: unknown) => {
    const r = await call(method, path, body);
    if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
    return r;
  };
  return { call, ok };
}

export interface Cluster {
  root: string;
  recoveryKeys: string[];
}

/** Initialises this test file's cluster (storage is isolated per file) with 3 shares, threshold 2. */
export async function initCluster(shares = 3, threshold = 2): Promise<Cluster> {
  const r = await api('PUT', 'sys/init', { body: { recovery_shares: shares, recovery_threshold: threshold } });
  if (r.status !== 200) throw new Error(`init failed: ${r.status} ${r.text}`);
  return { root: r.body.root_token, recoveryKeys: r.body.recovery_keys };
}

export const PERMISSION_DENIED = '1 error occurred:\n\t* permission denied\n\n';

/** A token holding only `policy` (written as the ACL policy `name` first), created by `root`. */
export async function tokenWithPolicy(root: string, name: string, policy: string): Promise<string> {
  const written = await api('PUT', `sys/policies/acl/${name}`, { token: root, body: { policy } });
  if (written.status !== 204) throw new Error(`policy ${name}: ${written.status} ${written.text}`);
  return (await api('POST', 'auth/token/create', { token: root, body: { policies: [name] } })).body.auth.client_token as string;
}
