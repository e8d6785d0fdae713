// An AWS IAM + STS emulator for the AWS secrets engine's tests: one HTTP server answering both
// services' Query APIs (POST / with a form body `Action=…&Version=…`, or GET with the same in the
// query string) as AWS does — XML results and errors, AWS's codes and statuses — for callers whose
// SigV4 signature verifies (auth.ts) against the keys the emulated account holds (state.ts).
// The credential scope's service (iam or sts) picks the API; an action of the other API is
// InvalidAction, as on the real endpoints. Node builtins and npm packages only (the bench bundles it).
//
// Tenants: a path under /t/<name>/ (API and control alike) reaches an account of its own, so test
// files running side by side against one server do not meet; other paths reach the default one.
// Point the clients at http://127.0.0.1:<port>/t/<name> (the signature covers the whole path).
//
// Tests script it through an unsigned JSON control API (types in types.ts, a fetch client in
// client.ts), per tenant:
//   POST /_emulator/reset   {root?, users?, groups?, roles?} replaces all state, clears faults,
//                           delays, the call log and the clock offset
//   GET  /_emulator/state   the account: users (keys, policies, groups, tags, boundary), groups,
//                           roles, and every temporary credential with what it was issued from
//   GET  /_emulator/calls   every API request in order: {service, action, region, params, accessKeyId,
//                           status, code?}
//   POST /_emulator/faults  {faults?: [{action, after?, times?, status, code, message?}],
//                           delays?: [{action, ms, after?, times?}]} replaces the pending ones;
//                           GET answers what is still pending
//   POST /_emulator/clock   {advanceMs?, offsetMs?}: moves the account's clock (expiry), not SigV4's
// AWS_EMULATOR_TRACE=1 in the environment prints each call to stderr as it is answered.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { authenticate, readAuthorization } from './auth';
import { AwsError } from './errors';
import { Faults } from './faults';
import { IAM_ACTIONS } from './iam';
import { decodeForm, type Params } from './query';
import type { SignedRequest } from './sigv4';
import { Account } from './state';
import { STS_ACTIONS } from './sts';
import type { CallRecord, ClockBody, FaultsBody, ResetBody } from './types';
import { Reader } from './validate';
import { errorDocument, resultDocument, type Service } from './xml';

export interface AwsEmulator {
  port: number;
  /** http://127.0.0.1:<port>: the endpoint for both IAM and STS clients. */
  base: string;
  close(): Promise<void>;
}

export interface AwsEmulatorOptions {
  /** Default 0 (a free port). */
  port?: number;
  /** Each tenant's call log keeps at least this many of the latest calls (default 100,000). */
  maxLoggedCalls?: number;
}

const VERSIONS: Record<Service, string> = { iam: '2010-05-08', sts: '2011-06-15' };
const ACTIONS = { iam: IAM_ACTIONS, sts: STS_ACTIONS };

/** AWS_EMULATOR_TRACE=1 prints every call to stderr as it is answered. */
const TRACE = !!process.env.AWS_EMULATOR_TRACE;

const isForm = (type: string | undefined) => !type || type.toLowerCase().startsWith('application/x-www-form-urlencoded');

/** One independent emulated account with its own faults and call log. */
class Tenant {
  readonly account = new Account();
  readonly faults = new Faults();
  calls: CallRecord[] = [];

  constructor(
    private readonly name: string,
    private readonly maxLogged: number,
  ) {}

  log(record: CallRecord): void {
    if (TRACE) console.error(`aws-emulator ${this.name || '(default)'}: ${record.service} ${record.action} ${record.status}${record.code ? ` ${record.code}` : ''} ${JSON.stringify(record.params)}`);
    this.calls.push(record);
    if (this.calls.length >= 2 * this.maxLogged) this.calls = this.calls.slice(-this.maxLogged);
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

function control(tenant: Tenant, route: string, res: http.ServerResponse, raw: Buffer) {
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
      case 'POST /_emulator/clock': {
        const { advanceMs, offsetMs } = body as ClockBody;
        if (offsetMs !== undefined) account.clockOffset = Number(offsetMs);
        if (advanceMs !== undefined) account.clockOffset += Number(advanceMs);
        if (!Number.isFinite(account.clockOffset)) account.clockOffset = 0;
        return sendJson(res, 200, { offsetMs: account.clockOffset, now: new Date(account.now()).toISOString() });
      }
      default:
        return sendJson(res, 404, { error: `no control route ${route}` });
    }
  } catch (e) {
    return sendJson(res, 400, { error: e instanceof Error ? e.message : String(e) });
  }
}

async function api(tenant: Tenant, req: http.IncomingMessage, res: http.ServerResponse, url: URL, raw: Buffer) {
  const { account, faults } = tenant;
  const requestId = randomUUID();
  const query: Record<string, string | string[]> = {};
  for (const [k, v] of url.searchParams) {
    const prev = query[k];
    query[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  const params: Params = decodeForm(url.search.slice(1));
  if (req.method === 'POST' && isForm(req.headers['content-type'])) decodeForm(raw.toString(), params);
  // The whole path (tenant prefix included) is what the client signed.
  const signed: SignedRequest = { method: req.method ?? 'GET', path: url.pathname, query, headers: req.headers, body: raw };
  const action = params.Action ?? null;

  let service: Service = action !== null && Object.hasOwn(STS_ACTIONS, action) ? 'sts' : 'iam';
  let accessKeyId: string | null = null;
  let region: string | null = null;
  let scoped: Service | null = null;
  const answer = (status: number, xml: string, code?: string) => {
    res.writeHead(status, { 'content-type': 'text/xml', 'content-length': Buffer.byteLength(xml), 'x-amzn-requestid': requestId }).end(xml);
    tenant.log({ service: scoped ?? (accessKeyId === null ? service : null), action, region, params, accessKeyId, status, ...(code ? { code } : {}) });
  };

  try {
    const auth = readAuthorization(signed);
    accessKeyId = auth.accessKeyId;
    region = auth.region;
    if (auth.service === 'iam' || auth.service === 'sts') service = scoped = auth.service;
    const caller = await authenticate(account, signed, auth);
    if (action === null) {
      const type = req.headers['content-type'];
      const hint = raw.byteLength && !isForm(type) ? ` (the body was not read: its Content-Type is ${type}, not application/x-www-form-urlencoded)` : '';
      throw new AwsError(400, 'MissingAction', `Missing Action${hint}`);
    }
    const table = ACTIONS[service];
    if (params.Version !== VERSIONS[service] || !Object.hasOwn(table, action)) {
      throw new AwsError(400, 'InvalidAction', `Could not find operation ${action} for version ${params.Version ?? 'NO_VERSION_SPECIFIED'}`);
    }
    const delay = faults.delayFor(action);
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
    const fault = faults.faultFor(action);
    if (fault) throw fault;
    const result = table[action]({ account, caller, r: new Reader(params), params });
    answer(200, resultDocument(service, action, requestId, result));
  } catch (e) {
    const err = e instanceof AwsError ? e : new AwsError(500, 'ServiceFailure', `The emulator failed: ${e instanceof Error ? e.message : String(e)}`);
    answer(err.status, errorDocument(service, err.type, err.code, err.message, requestId), err.code);
  }
}

export async function startAwsEmulator(options: AwsEmulatorOptions = {}): Promise<AwsEmulator> {
  const tenants = new Map<string, Tenant>();
  const tenantNamed = (name: string) => {
    let t = tenants.get(name);
    if (!t) tenants.set(name, (t = new Tenant(name, options.maxLoggedCalls ?? 100_000)));
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
      const work = rest.startsWith('/_emulator/') ? Promise.resolve(control(tenant, `${req.method} ${rest}`, res, raw)) : api(tenant, req, res, url, raw);
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
