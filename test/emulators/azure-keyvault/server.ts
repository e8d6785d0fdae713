// An Azure emulator for the cloudbkeyvault (azurekeyvault) managed-key backend: Entra ID's token
// endpoint (aad.ts) and Key Vault's keys API (keyvault.ts) on one server, with real keys and real
// cryptography (crypto.ts). Node builtins and npm packages only.
//
// Addresses (one server answers them all):
//   <base>/<tenant>/oauth2/v2.0/token                     the token endpoint (AZURE_AUTHORITY_HOST = <base>)
//   <base>/<tenant>/v2.0/.well-known/openid-configuration  the authority metadata MSAL reads
//   <base>/vaults/<vault>/keys/…                          a vault by path (AZURE_KEYVAULT_URL = <base>/vaults/{vault_name})
//   https://<vault>.<resource>:<port>/keys/…              a vault by host name, as Azure addresses it: for
//                                                         clients (the Azure SDK) that resolve every name
//                                                         to 127.0.0.1 and reach the https listener
// A vault name that is not registered is treated as a name that does not resolve: the connection is
// closed without an answer. Tenants keep test files apart: each registers its own tenant ids and
// vault names, and reads back only its own calls.
//
// Control API (unauthenticated JSON; types in types.ts, a fetch client in client.ts):
//   POST   /_emulator/tenants/<tenant>          TenantSpec: replaces the tenant (clients, vaults, keys, calls, faults)
//   GET    /_emulator/tenants/<tenant>          TenantState: clients, tokens issued, vaults, keys and versions
//   DELETE /_emulator/tenants/<tenant>
//   GET    /_emulator/tenants/<tenant>/calls    CallRecord[] in order
//   POST   /_emulator/tenants/<tenant>/faults   {faults: FaultSpec[]} replaces the pending ones; GET reads them
//   POST   /_emulator/tenants/<tenant>/revoke   the vaults refuse every token issued so far (401)
//   POST   /_emulator/tenants/<tenant>/vaults/<vault>/keys/<name>          KeySpec: a new version, made out of band
//   POST   /_emulator/tenants/<tenant>/vaults/<vault>/keys/<name>/enabled  {enabled}: of the latest version
// AZURE_EMULATOR_TRACE=1 in the environment prints each call to stderr.
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { grantToken, openidConfiguration, tenantNotFound, TokenIssuer } from './aad';
import { AadError, KvError } from './errors';
import { handleKeyVault, type KvAnswer } from './keyvault';
import { Directory, type Tenant } from './state';
import type { FaultSpec, KeySpec, TenantSpec } from './types';

export interface AzureEmulator {
  /** http://127.0.0.1:<port>: the authority host, and <base>/vaults/<vault> the vaults. */
  base: string;
  port: number;
  /** https://127.0.0.1:<port>, when started with a certificate. */
  httpsBase?: string;
  httpsPort?: number;
  close(): Promise<void>;
}

export interface AzureEmulatorOptions {
  /** Also listen with TLS (PEM certificate and key), for clients that insist on https. */
  https?: { cert: string; key: string };
}

const TRACE = !!process.env.AZURE_EMULATOR_TRACE;
const IPV4_RE = /^\d+\.\d+\.\d+\.\d+$/;

function sendJson(res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache', 'content-length': Buffer.byteLength(text), ...headers }).end(text);
}

export async function startAzureEmulator(options: AzureEmulatorOptions = {}): Promise<AzureEmulator> {
  // Key files for openssl: removed on close, or when the process exits without closing.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'azure-kv-emulator-'));
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  process.once('exit', removeDir);
  const directory = new Directory(dir);
  const issuer = new TokenIssuer();

  async function handle(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer, scheme: 'http' | 'https', listenerBase: string) {
    const host = req.headers.host ?? '127.0.0.1';
    const url = new URL(req.url ?? '/', `${scheme}://${host}`);
    if (url.pathname.startsWith('/_emulator/')) return control(req.method ?? 'GET', url.pathname, raw, res, `${scheme}://${host}`);

    const drop = () => req.socket.destroy();
    const hostname = url.hostname.toLowerCase();
    if (!IPV4_RE.test(hostname) && hostname !== 'localhost') {
      // A vault addressed by its DNS name.
      const vault = directory.vaults.get(hostname.split('.')[0]);
      if (!vault || hostname !== `${vault.name}.${vault.resource}`) return drop();
      return keyVault(req, res, raw, url, vault.name, url.pathname, `${scheme}://${host}`, listenerBase);
    }
    const byPath = /^\/vaults\/([^/]+)(\/.*)?$/.exec(url.pathname);
    if (byPath) {
      if (!directory.vaults.has(byPath[1].toLowerCase())) return drop();
      return keyVault(req, res, raw, url, byPath[1].toLowerCase(), byPath[2] ?? '/', `${scheme}://${host}/vaults/${byPath[1]}`, listenerBase);
    }
    const token = /^\/([^/]+)\/oauth2\/v2\.0\/token$/.exec(url.pathname);
    if (token && req.method === 'POST') return tokenEndpoint(req, res, raw, decodeURIComponent(token[1]));
    const meta = /^\/([^/]+)\/v2\.0\/\.well-known\/openid-configuration$/.exec(url.pathname);
    if (meta && req.method === 'GET') {
      const tenantId = decodeURIComponent(meta[1]);
      const tenant = directory.tenants.get(tenantId);
      if (!tenant) return sendJson(res, 400, tenantNotFound(tenantId).document());
      tenant.log({ api: 'aad', op: 'openid-configuration', status: 200 });
      return sendJson(res, 200, openidConfiguration(listenerBase, tenantId));
    }
    return sendJson(res, 404, { error: { code: 'NotFound', message: `nothing at ${req.method} ${url.pathname}` } });
  }

  async function keyVault(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer, url: URL, vaultName: string, rest: string, vaultBase: string, authority: string) {
    const vault = directory.vaults.get(vaultName)!;
    const a: KvAnswer = await handleKeyVault(directory, issuer, { method: req.method ?? 'GET', path: rest, query: url.searchParams, headers: req.headers, body: raw, vault, vaultBase, authority });
    if (TRACE) console.error(`azure-emulator: ${req.method} ${vaultBase}${rest} ${a.drop ? 'dropped' : a.status}`);
    if (a.drop) return req.socket.destroy();
    sendJson(res, a.status, a.body, a.headers);
  }

  async function tokenEndpoint(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer, tenantId: string) {
    const tenant = directory.tenants.get(tenantId);
    if (!tenant) return sendJson(res, 400, tenantNotFound(tenantId).document());
    const form = new URLSearchParams(raw.toString('utf8'));
    const record = { api: 'aad' as const, op: 'token', client_id: form.get('client_id') ?? undefined, scope: form.get('scope') ?? undefined, status: 0, code: undefined as string | undefined };
    try {
      const fault = tenant.faults.take('token');
      if (fault?.drop) {
        tenant.log({ ...record, status: 0, code: 'dropped' });
        return req.socket.destroy();
      }
      if (fault) throw new AadError(fault.status!, fault.code ?? 'server_error', fault.aadsts ?? 50000, fault.message ?? 'The emulator was told to fail this request.');
      const type = req.headers['content-type'] ?? '';
      if (!type.toLowerCase().startsWith('application/x-www-form-urlencoded')) throw new AadError(400, 'invalid_request', 900144, "The request body must contain the following parameter: 'grant_type'.");
      const granted = await grantToken(issuer, tenant, form);
      tenant.tokensIssued.set(granted.clientId, (tenant.tokensIssued.get(granted.clientId) ?? 0) + 1);
      tenant.issued.push(granted.uti);
      tenant.log({ ...record, status: 200 });
      if (TRACE) console.error(`azure-emulator: token for ${granted.clientId} in ${tenantId}`);
      return sendJson(res, 200, granted.body, { 'cache-control': 'no-store, no-cache', pragma: 'no-cache' });
    } catch (e) {
      const err = e instanceof AadError ? e : new AadError(500, 'server_error', 50000, `The emulator failed: ${e instanceof Error ? e.message : String(e)}`);
      tenant.log({ ...record, status: err.status, code: `${err.error}/AADSTS${err.aadsts}` });
      return sendJson(res, err.status, err.document());
    }
  }

  async function control(method: string, pathname: string, raw: Buffer, res: http.ServerResponse, base: string) {
    let body: unknown = {};
    try {
      if (raw.byteLength) body = JSON.parse(raw.toString('utf8'));
    } catch {
      return sendJson(res, 400, { error: 'the body is not JSON' });
    }
    const m = /^\/_emulator\/tenants\/([^/]+)(\/.*)?$/.exec(pathname);
    if (!m) return sendJson(res, 404, { error: `no control route ${method} ${pathname}` });
    const tenantId = decodeURIComponent(m[1]);
    const rest = m[2] ?? '';
    try {
      if (rest === '' && method === 'POST') return sendJson(res, 200, directory.snapshot(directory.register(tenantId, body as TenantSpec), base));
      if (rest === '' && method === 'DELETE') {
        directory.remove(tenantId);
        return sendJson(res, 204, undefined);
      }
      const tenant: Tenant | undefined = directory.tenants.get(tenantId);
      if (!tenant) return sendJson(res, 404, { error: `no tenant ${tenantId}` });
      if (rest === '' && method === 'GET') return sendJson(res, 200, directory.snapshot(tenant, base));
      if (rest === '/calls' && method === 'GET') return sendJson(res, 200, tenant.calls);
      if (rest === '/faults' && method === 'GET') return sendJson(res, 200, { faults: tenant.faults.pending() });
      if (rest === '/faults' && method === 'POST') {
        tenant.faults.set((body as { faults?: FaultSpec[] }).faults ?? []);
        return sendJson(res, 200, { faults: tenant.faults.pending() });
      }
      if (rest === '/revoke' && method === 'POST') {
        for (const uti of tenant.issued) tenant.revoked.add(uti);
        return sendJson(res, 200, { revoked: tenant.revoked.size });
      }
      const key = /^\/vaults\/([^/]+)\/keys\/([^/]+)(\/enabled)?$/.exec(rest);
      const vault = key && tenant.vaults.find((v) => v.name === key[1].toLowerCase());
      if (key && vault && method === 'POST' && !key[3]) {
        await directory.createKey(vault, key[2], body as KeySpec);
        return sendJson(res, 200, directory.snapshot(tenant, base).vaults.find((v) => v.name === vault.name)!.keys[key[2].toLowerCase()].at(-1));
      }
      if (key && vault && method === 'POST' && key[3]) {
        const latest = vault.versions(key[2])?.at(-1);
        if (!latest) return sendJson(res, 404, { error: `no key ${key[2]}` });
        latest.enabled = (body as { enabled?: unknown }).enabled === true;
        return sendJson(res, 200, { enabled: latest.enabled });
      }
      return sendJson(res, 404, { error: `no control route ${method} ${pathname}` });
    } catch (e) {
      const message = e instanceof KvError ? e.message : e instanceof Error ? e.message : String(e);
      return sendJson(res, 400, { error: message });
    }
  }

  const listener = (scheme: 'http' | 'https', base: () => string) => (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks), scheme, base()).catch((e: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { error: String(e) });
        else res.destroy();
      });
    });
  };

  const servers: http.Server[] = [];
  const listen = async (srv: http.Server) => {
    servers.push(srv);
    await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    return (srv.address() as net.AddressInfo).port;
  };
  let base = '';
  let httpsBase = '';
  const port = await listen(http.createServer(listener('http', () => base)));
  base = `http://127.0.0.1:${port}`;
  let httpsPort: number | undefined;
  if (options.https) {
    httpsPort = await listen(https.createServer({ cert: options.https.cert, key: options.https.key }, listener('https', () => httpsBase)));
    httpsBase = `https://127.0.0.1:${httpsPort}`;
  }
  return {
    base,
    port,
    ...(httpsPort ? { httpsBase, httpsPort } : {}),
    close: async () => {
      await Promise.all(
        servers.map(
          (srv) =>
            new Promise<void>((resolve) => {
              srv.close(() => resolve());
              srv.closeAllConnections();
            }),
        ),
      );
      removeDir();
      process.off('exit', removeDir);
    },
  };
}
