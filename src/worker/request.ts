// HTTP request → logical request: method to operation, the /v1 path, token, and the data from
// the query string and/or body (JSON, or form-encoded), within the size and JSON limits.

import type { WireOperation } from '../framework/backend';
import { parseDurationSeconds } from '../framework/duration';
import { CofferError, badRequest } from '../framework/errors';
import { decodePath } from './canonical';
import { parseJsonObject, type JsonLimits } from './json';

export interface ParsedRequest {
  operation: WireOperation;
  /** Canonical logical path after /v1/. */
  path: string;
  /** Where an empty segment starts in `path` (-1: none); the router refuses it unless it is in an opaque tail. */
  emptySegmentAt: number;
  data: Record<string, unknown>;
  token: string;
  /** HEAD: answer with the status only. */
  head: boolean;
  /** Requested response-wrapping TTL in seconds (0 = none). */
  wrapTTL: number;
  /** X-Vault-Policy-Override: let failing soft-mandatory RGPs and EGPs through. */
  policyOverride: boolean;
  clientIP: string;
  /** The Cloudflare location (IATA code) the request entered by, for sys/host-info only (see handleV1). */
  colo?: string;
  headers: Headers;
  /** The body as bytes when its content type is one of RAW_BODY_TYPES (data is then {}). */
  rawBody?: Uint8Array;
}

/** Bodies that are a message of their own rather than parameters (PKI's OCSP POST). */
const RAW_BODY_TYPES = ['application/ocsp-request'];

export interface RequestLimits {
  maxRequestSize: number;
  /** How long a request body may take to arrive (ms): a client that trickles it is cut off. */
  readTimeoutMs: number;
  json: JsonLimits;
}

/** Go's strconv.ParseBool, which Vault uses for ?list=. */
function parseBool(v: string): boolean | null {
  if (['1', 't', 'T', 'true', 'TRUE', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'false', 'FALSE', 'False'].includes(v)) return false;
  return null;
}

const decoder = new TextDecoder();
const EMPTY_BODY = new Uint8Array(0);

const tooLarge = (max: number): CofferError =>
  new CofferError(413, ['error parsing JSON', `request body exceeds the ${max}-byte limit`]);

/**
 * The body's bytes. A body the runtime cannot read (a malformed chunked encoding, a connection
 * dropped half-way) is the client's fault: 400, as Vault answers "error reading data".
 */
async function readBody(req: Request, max: number, timeoutMs: number): Promise<Uint8Array> {
  if (!req.body) return new Uint8Array(0);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CofferError(408, ['error reading data', `the request body did not arrive within ${timeoutMs} ms`])), timeoutMs);
  });
  try {
    return await Promise.race([readBodyBytes(req, max), late]);
  } catch (e) {
    if (e instanceof CofferError) throw e;
    throw new CofferError(400, ['error reading data']);
  } finally {
    clearTimeout(timer);
  }
}

async function readBodyBytes(req: Request, max: number): Promise<Uint8Array> {
  const declared = req.headers.get('content-length');
  if (declared !== null && Number(declared) > max) throw tooLarge(max);
  if (!req.body) return new Uint8Array(0);
  // With a declared length within the limit the runtime enforces it; read natively. (Bytes, not
  // .text(): workerd warns when .text() meets a form Content-Type.)
  if (declared !== null) return new Uint8Array(await req.arrayBuffer());
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > max) {
      await reader.cancel();
      throw tooLarge(max);
    }
    chunks.push(value);
  }
  if (chunks.length === 1) return chunks[0];
  const all = new Uint8Array(total);
  let off = 0;
  for (const c of chunks) {
    all.set(c, off);
    off += c.length;
  }
  return all;
}

function formData(text: string): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of new URLSearchParams(text)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  return out;
}

function bodyData(text: string, contentType: string, limits: RequestLimits): Record<string, unknown> {
  const trimmed = text.trimStart();
  if (trimmed === '') return {};
  const isForm = contentType.toLowerCase().startsWith('application/x-www-form-urlencoded');
  if (isForm && trimmed[0] !== '{' && trimmed[0] !== '[') return formData(text);
  return parseJsonObject(text, limits.json);
}

export function requestToken(headers: Headers): string {
  const vaultToken = headers.get('x-vault-token');
  if (vaultToken) return vaultToken.trim();
  const authz = headers.get('authorization');
  if (authz && authz.startsWith('Bearer ')) return authz.slice(7).trim();
  return '';
}

/**
 * The logical request; at once (no promise) when there is no body to read, so a GET goes on
 * without an event-loop turn.
 */
export function parseRequest(req: Request, url: URL, limits: RequestLimits): ParsedRequest | Promise<ParsedRequest> {
  const method = req.method.toUpperCase();
  const { path, emptyAt } = decodePath(url.pathname.slice('/v1/'.length));

  let operation: WireOperation;
  switch (method) {
    case 'GET':
    case 'HEAD': {
      // Only reads look at `list` (Vault ignores it on writes); a non-boolean is Vault's bare 400.
      const listParam = url.searchParams.get('list');
      const list = listParam === null ? false : parseBool(listParam);
      if (list === null) throw new CofferError(400, []);
      operation = list ? 'list' : 'read';
      break;
    }
    case 'LIST':
      operation = 'list';
      break;
    case 'POST':
    case 'PUT':
      operation = 'write';
      break;
    case 'PATCH':
      operation = 'patch';
      break;
    case 'DELETE':
      operation = 'delete';
      break;
    default:
      throw new CofferError(405, []);
  }

  const help = url.searchParams.get('help');
  if (help !== null && parseBool(help) === true) operation = 'help';

  const contentType = req.headers.get('content-type') ?? '';
  if (operation === 'patch' && !contentType.toLowerCase().startsWith('application/merge-patch+json')) {
    throw new CofferError(415, [`PATCH requires Content-Type of application/merge-patch+json, provided ${contentType}`]);
  }

  // A body is accepted on any method (hvac sends JSON bodies with GETs).
  const head: RequestHead = { method, path, emptyAt, operation, contentType };
  if (!req.body) return withBody(req, url, limits, head, EMPTY_BODY);
  return readBody(req, limits.maxRequestSize, limits.readTimeoutMs).then((bytes) => withBody(req, url, limits, head, bytes));
}

/** What parseRequest learnt before the body. */
interface RequestHead {
  method: string;
  path: string;
  emptyAt: number;
  operation: WireOperation;
  contentType: string;
}

function withBody(req: Request, url: URL, limits: RequestLimits, { method, path, emptyAt, operation, contentType }: RequestHead, bytes: Uint8Array): ParsedRequest {
  // Query parameters are data for reads, lists and deletes, merged over the body's.
  const rawType = RAW_BODY_TYPES.some((t) => contentType.toLowerCase().startsWith(t));
  const data: Record<string, unknown> = rawType || bytes.length === 0 ? {} : bodyData(decoder.decode(bytes), contentType, limits);
  if (url.search !== '' && (operation === 'read' || operation === 'list' || operation === 'delete' || operation === 'help')) {
    for (const key of new Set(url.searchParams.keys())) {
      if (key === 'help' || key === 'list') continue;
      const values = url.searchParams.getAll(key);
      data[key] = values.length === 1 ? values[0] : values;
    }
  }

  let wrapTTL = 0;
  const wrapHeader = req.headers.get('x-vault-wrap-ttl');
  if (wrapHeader) {
    try {
      wrapTTL = parseDurationSeconds(wrapHeader);
    } catch (e) {
      throw badRequest(`error parsing X-Vault-Wrap-TTL header: ${(e as Error).message}`);
    }
    if (wrapTTL < 0) throw badRequest('error parsing X-Vault-Wrap-TTL header: requested wrap ttl cannot be negative');
  }

  const overrideHeader = req.headers.get('x-vault-policy-override');
  const policyOverride = overrideHeader === null || overrideHeader === '' ? false : parseBool(overrideHeader);
  if (policyOverride === null) throw badRequest(`invalid value for X-Vault-Policy-Override header: "${overrideHeader}"`);

  return {
    operation,
    path: operation === 'list' && path !== '' && !path.endsWith('/') ? `${path}/` : path,
    emptySegmentAt: emptyAt,
    data,
    token: requestToken(req.headers),
    head: method === 'HEAD',
    wrapTTL,
    policyOverride,
    clientIP: req.headers.get('cf-connecting-ip') ?? '127.0.0.1',
    headers: req.headers,
    ...(rawType ? { rawBody: bytes } : {}),
  };
}
