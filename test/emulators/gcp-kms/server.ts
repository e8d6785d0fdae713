// A Google Cloud KMS emulator for the cloudckms managed-key backend and the official Node SDK: one
// HTTP server answering
//   POST /token        Google's OAuth 2.0 token endpoint (JWT-bearer grant; auth.ts)
//   /v1/...            the Cloud KMS REST API (kms.ts) for callers with an access token it issued
//                      or a self-signed JWT of a known service account, holding the permission
//                      on the project (403 PERMISSION_DENIED otherwise, 401 UNAUTHENTICATED
//                      without valid credentials)
// with real keys and cryptography (keys.ts). Service-account key files come from the control API,
// with token_uri pointing here. State lives per project: test files use projects (and so service
// accounts) of their own and never meet. Node builtins and npm packages only.
//
// Control API (unauthenticated JSON; types in types.ts, a fetch client in client.ts):
//   POST /_emulator/service-accounts                  {project, name?, projects?, permissions?, tokenLifetime?} → a key file
//   POST /_emulator/service-accounts/<email>/revoke-tokens   its access tokens stop working → {revoked}
//   POST /_emulator/projects/<p>/reset                {generationDelayMs?}: no key rings, calls or faults
//   GET  /_emulator/projects/<p>/state                key rings, crypto keys, versions (state, public key)
//   GET  /_emulator/projects/<p>/calls                every request naming the project (and its accounts' token grants)
//   POST /_emulator/projects/<p>/faults               {faults: [{rpc, status?, code?, message?, corrupt?, after?, times?}]}; GET: pending
//   POST /_emulator/projects/<p>/key-rings            {location, keyRingId}: a key ring, as an administrator would make it
//   POST /_emulator/projects/<p>/version-state        {name, state}: e.g. DISABLED or DESTROYED
// GCP_KMS_EMULATOR_TRACE=1 in the environment prints each call to stderr.
import { generateKeyPairSync, randomBytes, randomInt } from 'node:crypto';
import http from 'node:http';
import type net from 'node:net';
import { Auth, GOOGLE_TOKEN_URL, publicKeyOf, type Principal } from './auth';
import { withEnums } from './enums';
import { GcpError, invalidArgument, OAuthError } from './errors';
import { authorize, perform, route, type Route } from './kms';
import { World } from './state';
import type { CallRecord, FaultsBody, ResetBody, ServiceAccountKeyFile, ServiceAccountSpec } from './types';

export interface GcpKmsEmulator {
  port: number;
  /** http://127.0.0.1:<port>: the Cloud KMS origin (GOOGLE_CLOUDKMS_URL); the token endpoint is <base>/token. */
  base: string;
  close(): Promise<void>;
}

const TRACE = !!process.env.GCP_KMS_EMULATOR_TRACE;
const PROJECT_RE = /^[a-z][a-z0-9-]{4,28}[a-z0-9]$/;

interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Reply => ({ status, body, headers });

export async function startGcpKmsEmulator(): Promise<GcpKmsEmulator> {
  const world = new World();
  const auth = new Auth();
  let base = '';

  function log(project: string, record: CallRecord): void {
    if (TRACE) console.error(`gcp-kms-emulator ${project}: ${record.rpc} ${record.name} ${record.status}${record.code ? ` ${record.code}` : ''} (${record.principal ?? 'anonymous'}, ${record.auth})`);
    world.project(project).calls.push(record);
  }

  function createServiceAccount(spec: ServiceAccountSpec): ServiceAccountKeyFile {
    if (!PROJECT_RE.test(spec.project ?? '')) throw new Error(`bad project ${JSON.stringify(spec.project)}`);
    const name = spec.name ?? `coffer-${randomBytes(4).toString('hex')}`;
    const email = `${name}@${spec.project}.iam.gserviceaccount.com`;
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const keyId = randomBytes(20).toString('hex');
    const existing = auth.accounts.get(email);
    // A second key for an existing account (as keys.create does); its settings are replaced.
    const keys = existing?.keys ?? new Map();
    keys.set(keyId, publicKeyOf(pem));
    auth.addAccount({
      email,
      project: spec.project,
      keys,
      projects: new Set(spec.projects ?? [spec.project]),
      permissions: spec.permissions ? new Set(spec.permissions) : null,
      tokenLifetime: spec.tokenLifetime ?? 3599,
    });
    const clientId = String(randomInt(1e9, 1e10 - 1)) + String(randomInt(1e9, 1e10 - 1));
    return {
      type: 'service_account',
      project_id: spec.project,
      private_key_id: keyId,
      private_key: pem,
      client_email: email,
      client_id: clientId,
      auth_uri: 'https://accounts.google.com/o/oauth2/auth',
      token_uri: `${base}/token`,
      auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
      client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(email)}`,
      universe_domain: 'googleapis.com',
    };
  }

  function control(method: string, path: string, raw: string): Reply {
    let body: Record<string, unknown> = {};
    try {
      if (raw) body = JSON.parse(raw) as Record<string, unknown>;
    } catch {
      return json(400, { error: 'the body is not JSON' });
    }
    try {
      if (method === 'POST' && path === 'service-accounts') return json(200, createServiceAccount(body as unknown as ServiceAccountSpec));
      const sa = /^service-accounts\/([^/]+)\/revoke-tokens$/.exec(path);
      if (method === 'POST' && sa) return json(200, { revoked: auth.revokeTokens(decodeURIComponent(sa[1])) });
      const m = /^projects\/([^/]+)\/([\w-]+)$/.exec(path);
      if (!m) return json(404, { error: `no control route ${method} /_emulator/${path}` });
      const project = world.project(m[1]);
      switch (`${method} ${m[2]}`) {
        case 'POST reset':
          project.reset((body as ResetBody).generationDelayMs);
          return json(200, {});
        case 'GET state':
          return json(200, project.snapshot());
        case 'GET calls':
          return json(200, project.calls);
        case 'POST faults':
          project.setFaults((body as unknown as FaultsBody).faults ?? []);
          return json(200, { faults: project.pendingFaults() });
        case 'GET faults':
          return json(200, { faults: project.pendingFaults() });
        case 'POST key-rings': {
          if (!/^[a-z0-9-]{1,63}$/.test(String(body.location))) throw new Error(`bad location ${JSON.stringify(body.location)}`);
          const parent = `projects/${m[1]}/locations/${String(body.location)}`;
          const r: Route = { rpc: 'CreateKeyRing', project: m[1], name: parent, permission: '' };
          return json(200, perform(project, r, { method, path: '', query: new URLSearchParams({ keyRingId: String(body.keyRingId) }), body: {} }, false));
        }
        case 'POST version-state':
          world.setVersionState(m[1], String(body.name), String(body.state));
          return json(200, {});
      }
      return json(404, { error: `no control route ${method} /_emulator/${path}` });
    } catch (e) {
      return json(400, { error: e instanceof Error ? e.message : String(e) });
    }
  }

  function token(raw: string): Reply {
    const form = new URLSearchParams(raw);
    // The account the assertion claims to be (unverified): whose project logs the call.
    let claimed: string | null = null;
    try {
      const iss = (JSON.parse(Buffer.from((form.get('assertion') ?? '').split('.')[1] ?? '', 'base64url').toString()) as { iss?: unknown }).iss;
      claimed = typeof iss === 'string' ? iss : null;
    } catch {
      claimed = null;
    }
    const project = claimed ? auth.accounts.get(claimed)?.project : undefined;
    const record = (status: number, principal: string | null, code?: string) =>
      project && log(project, { rpc: 'Token', name: 'token', principal, auth: 'none', numericEnums: false, status, ...(code ? { code } : {}) });
    try {
      const fault = project ? world.project(project).faultFor('Token') : undefined;
      if (fault?.status) throw new OAuthError(fault.status, fault.code ?? 'internal_failure', fault.message ?? 'injected by the emulator');
      const { account, response } = auth.grant(form, [GOOGLE_TOKEN_URL, `${base}/token`]);
      record(200, account.email);
      return json(200, response, { 'cache-control': 'no-cache, no-store, max-age=0, must-revalidate' });
    } catch (e) {
      if (!(e instanceof OAuthError)) throw e;
      record(e.httpStatus, null, e.error);
      return json(e.httpStatus, e.document());
    }
  }

  function kms(req: http.IncomingMessage, url: URL, raw: string): Reply {
    const method = req.method ?? 'GET';
    const path = url.pathname.slice('/v1/'.length);
    const numericEnums = url.searchParams.get('$alt') === 'json;enum-encoding=int';
    let r: Route | undefined;
    let principal: Principal | undefined;
    let body: Record<string, unknown> = {};
    const done = (reply: Reply, code?: string): Reply => {
      if (r) {
        log(r.project, {
          rpc: r.rpc,
          name: r.name,
          principal: principal?.account.email ?? null,
          auth: principal?.how ?? 'none',
          numericEnums,
          status: reply.status,
          ...(code ? { code } : {}),
          ...(url.search ? { query: url.search.slice(1) } : {}),
          ...(method === 'POST' ? { body } : {}),
        });
      }
      return reply;
    };
    try {
      r = route(method, decodeURIComponent(path));
      principal = auth.authenticate(req.headers.authorization);
      authorize(principal, r);
      if (method === 'POST' && raw.trim()) {
        try {
          body = JSON.parse(raw) as Record<string, unknown>;
        } catch {
          throw invalidArgument('Invalid JSON payload received.');
        }
      }
      const project = world.project(r.project);
      const fault = project.faultFor(r.rpc);
      if (fault?.status) throw new GcpError(fault.code ?? 'UNAVAILABLE', fault.message ?? `${fault.code} (injected by the emulator)`, undefined, fault.status);
      return done(json(200, withEnums(perform(project, r, { method, path, query: url.searchParams, body }, !!fault?.corrupt), numericEnums)));
    } catch (e) {
      const err = e instanceof GcpError ? e : new GcpError('INTERNAL', `The emulator failed: ${e instanceof Error ? e.message : String(e)}`);
      const headers: Record<string, string> = err.httpStatus === 401 ? { 'www-authenticate': 'Bearer realm="https://accounts.google.com/", error="invalid_token"' } : {};
      return done(json(err.httpStatus, err.document(), headers), err.status);
    }
  }

  const srv = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const url = new URL(req.url ?? '/', base);
      let reply: Reply;
      try {
        if (url.pathname.startsWith('/_emulator/')) reply = control(req.method ?? 'GET', url.pathname.slice('/_emulator/'.length), raw);
        else if (url.pathname === '/token' && req.method === 'POST') reply = token(raw);
        else if (url.pathname.startsWith('/v1/')) reply = kms(req, url, raw);
        else reply = json(404, new GcpError('NOT_FOUND', `The requested URL ${url.pathname} was not found on this server.`).document());
      } catch (e) {
        reply = json(500, { error: String(e) });
      }
      const text = JSON.stringify(reply.body);
      res.writeHead(reply.status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(text), ...reply.headers }).end(text);
    });
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
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
