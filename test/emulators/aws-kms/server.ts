// An AWS KMS emulator for the cloudakms (awskms) managed-key backend's tests: one HTTP server
// answering KMS's JSON 1.1 protocol (POST / with Content-Type application/x-amz-json-1.1 and
// X-Amz-Target TrentService.<Op>; binary members base64; errors {"__type", "message"} with KMS's
// codes and statuses) for callers whose SigV4 signature verifies (auth.ts) against the access keys
// the emulated account holds (state.ts). Keys are real key pairs (crypto.ts); the region is the one
// the request was signed for. Node builtins, OpenSSL's CLI and npm packages only.
//
// Tenants: a path under /t/<name>/ (API and control alike) reaches an account of its own, so test
// files running side by side against one server do not meet; other paths reach the default one.
// Point the clients at http://127.0.0.1:<port>/t/<name> (the signature covers the whole path).
//
// Tests script it through an unsigned JSON control API (types in types.ts, a fetch client in
// client.ts), per tenant:
//   POST /_emulator/reset      {accountId?, credentials?} replaces all state (keys, aliases, access
//                              keys), clears faults, delays and the call log
//   GET  /_emulator/state      the account: access keys (ids only) and every key with its aliases
//   GET  /_emulator/calls      every API request in order: {operation, region, accessKeyId, params,
//                              status, code?}
//   POST /_emulator/faults     {faults?: [{action, after?, times?, status, code, message?}],
//                              delays?: [...]} (action = operation name, or "*"); GET: pending ones
//   POST /_emulator/keys       {keySpec, keyUsage, region?, alias?, description?}: a key made directly
//   POST /_emulator/key-state  {keyId, state}: Enabled, Disabled or PendingDeletion
// KMS_EMULATOR_TRACE=1 in the environment prints each call to stderr as it is answered.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { Faults } from '../aws-iam-sts/faults';
import type { SignedRequest } from '../aws-iam-sts/sigv4';
import { authenticate, readAuthorization } from './auth';
import { accessDenied, AUTH_CODES, COMMON_NAMESPACE, KmsError } from './errors';
import { BLOB_MEMBERS, OPERATIONS, type Body } from './ops';
import { Account } from './state';
import type { CallRecord, FaultsBody, KeyStateBody, ResetBody, SeedKey } from './types';

export interface KmsEmulator {
  port: number;
  /** http://127.0.0.1:<port>: the KMS endpoint of the default tenant. */
  base: string;
  close(): Promise<void>;
}

export interface KmsEmulatorOptions {
  /** Default 0 (a free port). */
  port?: number;
}

const TRACE = !!process.env.KMS_EMULATOR_TRACE;
const TARGET_PREFIX = 'TrentService.';
const JSON_11 = 'application/x-amz-json-1.1';
const MAX_LOGGED = 100_000;

/** One independent emulated account with its own faults and call log. */
class Tenant {
  readonly account = new Account();
  readonly faults = new Faults();
  calls: CallRecord[] = [];

  constructor(private readonly name: string) {}

  log(record: CallRecord): void {
    if (TRACE) console.error(`kms-emulator ${this.name || '(default)'}: ${record.operation} ${record.status}${record.code ? ` ${record.code}` : ''} ${JSON.stringify(record.params)}`);
    this.calls.push(record);
    if (this.calls.length >= 2 * MAX_LOGGED) this.calls = this.calls.slice(-MAX_LOGGED);
  }
}

/** `/t/<tenant>/rest` → [tenant, /rest]; any other path belongs to the default tenant "". */
function splitTenant(pathname: string): [string, string] {
  const m = /^\/t\/([\w.-]+)(\/.*)?$/.exec(pathname);
  return m ? [m[1], m[2] ?? '/'] : ['', pathname];
}

function sendJson(res: http.ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

async function control(tenant: Tenant, route: string, res: http.ServerResponse, raw: Buffer) {
  const { account, faults } = tenant;
  let body: unknown = {};
  try {
    if (raw.byteLength) body = JSON.parse(raw.toString());
  } catch {
    return sendJson(res, 400, { error: 'the body is not JSON' });
  }
  try {
    switch (route) {
      case 'POST /_emulator/reset':
        tenant.calls = [];
        faults.clear();
        account.reset(body as ResetBody);
        return sendJson(res, 200, account.snapshot());
      case 'GET /_emulator/state':
        return sendJson(res, 200, account.snapshot());
      case 'GET /_emulator/calls':
        return sendJson(res, 200, tenant.calls);
      case 'POST /_emulator/faults':
        faults.set(body as FaultsBody);
        return sendJson(res, 200, faults.pending());
      case 'GET /_emulator/faults':
        return sendJson(res, 200, faults.pending());
      case 'POST /_emulator/keys': {
        const seed = body as SeedKey;
        const region = seed.region ?? 'us-east-1';
        const key = await account.createKey(region, seed.keySpec, seed.keyUsage, seed.description ?? '');
        if (seed.alias) account.setAlias(region, seed.alias, key, !account.alias(region, seed.alias));
        return sendJson(res, 200, account.view(key));
      }
      case 'POST /_emulator/key-state': {
        const { keyId, state } = body as KeyStateBody;
        const key = [...account.keys.values()].find((k) => k.id === keyId || k.arn === keyId);
        if (!key) return sendJson(res, 404, { error: `no key ${keyId}` });
        if (!['Enabled', 'Disabled', 'PendingDeletion'].includes(state)) return sendJson(res, 400, { error: `bad state ${state}` });
        key.state = state;
        if (state === 'PendingDeletion') key.deletionDate = Date.now() + 7 * 86_400_000;
        else delete key.deletionDate;
        return sendJson(res, 200, account.view(key));
      }
      default:
        return sendJson(res, 404, { error: `no control route ${route}` });
    }
  } catch (e) {
    return sendJson(res, 400, { error: e instanceof Error ? e.message : String(e) });
  }
}

/** What the call log keeps of a request: text members as sent, blobs as their decoded length. */
function loggedParams(body: Body): CallRecord['params'] {
  const out: CallRecord['params'] = {};
  for (const [k, v] of Object.entries(body)) {
    if (BLOB_MEMBERS.has(k) && typeof v === 'string') out[k] = Buffer.from(v, 'base64').length;
    else if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = v;
  }
  return out;
}

/** The ARN an AccessDeniedException names: the key the request is about, when it can be found. */
function resourceOf(account: Account, region: string, body: Body): string {
  for (const member of ['KeyId', 'TargetKeyId']) {
    const ref = body[member];
    if (typeof ref !== 'string') continue;
    try {
      return account.resolveKey(region, ref).arn;
    } catch {
      return `arn:aws:kms:${region}:${account.accountId}:key/*`;
    }
  }
  return '*';
}

async function api(tenant: Tenant, req: http.IncomingMessage, res: http.ServerResponse, url: URL, raw: Buffer) {
  const { account, faults } = tenant;
  const requestId = randomUUID();
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of url.searchParams) {
    const prev = query[k];
    query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  // The whole path (tenant prefix included) is what the client signed.
  const signed: SignedRequest = { method: req.method ?? 'GET', path: url.pathname, query, headers: req.headers, body: raw };
  const target = typeof req.headers['x-amz-target'] === 'string' ? req.headers['x-amz-target'] : '';
  const operation = target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : null;
  let body: Body = {};
  let accessKeyId: string | null = null;
  let region: string | null = null;

  const answer = (status: number, result: Body | undefined, code?: string) => {
    const text = result === undefined ? '' : JSON.stringify(result);
    const headers: Record<string, string | number> = { 'content-type': JSON_11, 'content-length': Buffer.byteLength(text), 'x-amzn-requestid': requestId };
    if (code) headers['x-amzn-errortype'] = code;
    res.writeHead(status, headers).end(text);
    tenant.log({ operation, region, accessKeyId, status, ...(code ? { code } : {}), params: loggedParams(body) });
  };

  try {
    const auth = readAuthorization(signed);
    accessKeyId = auth.accessKeyId;
    region = auth.region;
    const credential = await authenticate(account, signed, auth);
    if (req.method !== 'POST' || operation === null || !Object.hasOwn(OPERATIONS, operation)) {
      throw new KmsError(400, 'UnknownOperationException', target ? `Operation ${target} is not known to TrentService.` : 'Missing X-Amz-Target.');
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (type !== JSON_11) throw new KmsError(400, 'SerializationException', `Content-Type must be ${JSON_11}, not ${JSON.stringify(type)}.`);
    try {
      const parsed: unknown = raw.byteLength ? JSON.parse(raw.toString()) : {};
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new Error('not an object');
      body = parsed as Body;
    } catch {
      throw new KmsError(400, 'SerializationException', 'The request body is not a JSON object.');
    }
    if (credential.allow && !credential.allow.has(operation)) throw accessDenied(account.userArn(credential), operation, resourceOf(account, auth.region, body));
    const delay = faults.delayFor(operation);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    const fault = faults.faultFor(operation);
    if (fault) throw new KmsError(fault.status, fault.code, fault.message);
    answer(200, await OPERATIONS[operation]({ account, region: auth.region, body }));
  } catch (e) {
    const err = e instanceof KmsError ? e : new KmsError(500, 'KMSInternalException', `The emulator failed: ${e instanceof Error ? e.message : String(e)}`);
    const type = AUTH_CODES.has(err.code) ? `${COMMON_NAMESPACE}${err.code}` : err.code;
    answer(err.status, { __type: type, message: err.message }, err.code);
  }
}

export async function startKmsEmulator(options: KmsEmulatorOptions = {}): Promise<KmsEmulator> {
  const tenants = new Map<string, Tenant>();
  const tenantNamed = (name: string) => {
    let t = tenants.get(name);
    if (!t) tenants.set(name, (t = new Tenant(name)));
    return t;
  };

  let base = '';
  const srv = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      const url = new URL(req.url ?? '/', base);
      const [name, rest] = splitTenant(url.pathname);
      const tenant = tenantNamed(name);
      const work = rest.startsWith('/_emulator/') ? control(tenant, `${req.method} ${rest}`, res, raw) : api(tenant, req, res, url, raw);
      work.catch((e: unknown) => {
        if (!res.headersSent) sendJson(res, 500, { error: String(e) });
        else res.destroy();
      });
    });
  });
  await new Promise<void>((resolve) => srv.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (srv.address() as net.AddressInfo).port;
  base = `http://127.0.0.1:${port}`;
  return {
    port,
    base,
    close: () =>
      new Promise<void>((resolve) => {
        srv.close(() => resolve());
        srv.closeAllConnections();
      }),
  };
}
