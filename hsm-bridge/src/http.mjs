// @ts-check
// Request handling: the client-name check, the JSON body, dispatch to a route, `{ error, code }`
// answers, and one log line per request. The log line names the key and token, never the PIN:
// it is built from an allow-list of request fields.

import { createHash, timingSafeEqual } from 'node:crypto';
import { BridgeError, toBridgeError } from './errors.mjs';
import { log } from './log.mjs';

/** @typedef {import('./routes.mjs').Handler} Handler */

/** Request fields that may appear in the log. */
const LOGGED_FIELDS = ['library', 'slot', 'token_label', 'key_label', 'key_id', 'mechanism', 'hash', 'key_type', 'key_bits', 'curve', 'max_parallel', 'force_rw_session'];

/**
 * @param {import('node:http').IncomingMessage} req
 * @param {number} limit
 * @returns {Promise<Buffer>}
 */
function readBody(req, limit) {
  const tooLarge = () => new BridgeError(413, 'request_too_large', `the request body is larger than ${limit} bytes`);
  return new Promise((resolve, reject) => {
    if (Number(req.headers['content-length'] ?? 0) > limit) return reject(tooLarge());
    /** @type {Buffer[]} */
    const chunks = [];
    let size = 0;
    req.on('data', (/** @type {Buffer} */ c) => {
      size += c.length;
      if (size > limit) {
        // Stop reading; the answer goes out with `connection: close`, which ends the upload.
        req.removeAllListeners('data');
        req.pause();
        reject(tooLarge());
        return;
      }
      chunks.push(c);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/**
 * Names of the client certificate: its subject CN and DNS subject alternative names.
 * @param {import('node:tls').TLSSocket} socket
 */
function clientNames(socket) {
  const cert = socket.getPeerCertificate();
  /** @type {string[]} */
  const names = [];
  /** @type {unknown} */
  const cn = cert?.subject?.CN;
  if (typeof cn === 'string') names.push(cn);
  else if (Array.isArray(cn)) names.push(...cn.filter((n) => typeof n === 'string'));
  for (const part of (cert?.subjectaltname ?? '').split(/,\s*/)) {
    if (part.startsWith('DNS:')) names.push(part.slice(4));
  }
  return names;
}

const digest = (/** @type {string} */ s) => createHash('sha256').update(s).digest();

/**
 * @param {{ routes: Map<string, Handler>, maxRequestBytes: number, allowedClientNames: string[] | null, clientCertificates: boolean, bearerToken: string | null }} opts
 */
export function createHandler({ routes, maxRequestBytes, allowedClientNames, clientCertificates, bearerToken }) {
  const expected = bearerToken === null ? null : digest(bearerToken);
  /**
   * @param {import('node:http').IncomingMessage} req
   * @param {import('node:http').ServerResponse} res
   */
  return async function handle(req, res) {
    const started = performance.now();
    const path = new URL(req.url ?? '/', 'https://bridge').pathname;
    const socket = /** @type {import('node:tls').TLSSocket} */ (req.socket);
    const names = clientNames(socket);
    /** @type {Record<string, unknown>} */
    let body = {};
    let status = 200;
    /** @type {Record<string, unknown>} */
    let answer;
    try {
      // The TLS layer already refused certificates from other CAs; this narrows to named clients.
      if (clientCertificates && !socket.authorized) throw new BridgeError(401, 'client_certificate_required', 'a client certificate from the configured CA is required');
      if (expected) {
        const given = /^Bearer (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        // Hashes of equal length, compared in constant time.
        if (!given || !timingSafeEqual(digest(given), expected)) throw new BridgeError(401, 'bearer_token_required', 'a valid bearer secret (auth.bearer_token_file) is required');
      }
      if (allowedClientNames && !names.some((n) => allowedClientNames.includes(n))) {
        throw new BridgeError(403, 'client_not_allowed', 'this client certificate is not among tls.allowed_client_names');
      }
      const route = routes.get(`${req.method} ${path}`);
      if (!route) {
        const other = [...routes.keys()].some((k) => k.endsWith(` ${path}`));
        throw other ? new BridgeError(405, 'method_not_allowed', `${req.method} is not allowed on ${path}`) : new BridgeError(404, 'not_found', `no route ${path}`);
      }
      if (req.method === 'POST') {
        const raw = await readBody(req, maxRequestBytes);
        if (raw.length > 0) {
          /** @type {unknown} */
          let parsed;
          try {
            parsed = JSON.parse(raw.toString('utf8'));
          } catch {
            throw new BridgeError(400, 'bad_request', 'the request body is not JSON');
          }
          if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new BridgeError(400, 'bad_request', 'the request body must be a JSON object');
          body = /** @type {Record<string, unknown>} */ (parsed);
        }
      }
      answer = await route(body);
    } catch (e) {
      const err = toBridgeError(e);
      if (err.code === 'internal_error') log.error('unexpected error', { path, error: e instanceof Error ? e.stack : String(e) });
      status = err.status;
      answer = { error: err.message, code: err.code };
    }
    const text = JSON.stringify(answer);
    res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
      'cache-control': 'no-store',
      ...(status === 413 ? { connection: 'close' } : {}),
    });
    res.end(text);

    /** @type {Record<string, unknown>} */
    const fields = { method: req.method, path, status, ms: Math.round((performance.now() - started) * 10) / 10, client: names[0] };
    for (const f of LOGGED_FIELDS) {
      const v = body[f];
      if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') fields[f] = typeof v === 'string' ? v.slice(0, 128) : v;
    }
    if (status >= 400) fields.code = answer.code;
    if (status >= 500) log.warn('request failed', fields);
    else log.info('request', fields);
  };
}
