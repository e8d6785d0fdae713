// @ts-check
// Loads and checks the bridge's JSON configuration (see config.example.json and the README).
// Relative file names are read relative to the configuration file.

import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * @typedef {{ name: string, library: string, max_sessions: number }} LibraryStanza
 * @typedef {{
 *   listen: { address: string, port: number },
 *   tls: { cert: string, key: string, clientCa: string | null, allowedClientNames: string[] | null },
 *   auth: { bearerToken: string | null },
 *   libraries: Map<string, LibraryStanza>,
 *   maxRequestBytes: number,
 *   logLevel: string,
 * }} Config
 */

class ConfigError extends Error {}

/** @param {string} msg */
const fail = (msg) => {
  throw new ConfigError(msg);
};

/**
 * @param {Record<string, unknown>} obj
 * @param {string} key
 * @param {string} where
 */
function str(obj, key, where) {
  const v = obj[key];
  if (typeof v !== 'string' || v === '') fail(`${where}.${key} must be a non-empty string`);
  return /** @type {string} */ (v);
}

/**
 * @param {unknown} v
 * @param {string} where
 * @returns {Record<string, unknown>}
 */
function obj(v, where) {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(`${where} must be an object`);
  return /** @type {Record<string, unknown>} */ (v);
}

/**
 * @param {unknown} v
 * @param {string} where
 * @param {number} min
 * @param {number} max
 * @param {number} dflt
 */
function int(v, where, min, max, dflt) {
  if (v === undefined) return dflt;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < min || v > max) fail(`${where} must be an integer from ${min} to ${max}`);
  return /** @type {number} */ (v);
}

/**
 * @param {string} dir
 * @param {string} value
 */
const libraryPath = (dir, value) => (value.includes('/') ? path.resolve(dir, value) : value);

/**
 * @param {string} file
 * @returns {Config}
 */
export function loadConfig(file) {
  const dir = path.dirname(path.resolve(file));
  /** @type {unknown} */
  let raw;
  try {
    raw = JSON.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ConfigError(`cannot read the configuration ${file}: ${/** @type {Error} */ (e).message}`);
  }
  const root = obj(raw, 'config');
  const listen = obj(root.listen ?? {}, 'listen');
  const tls = obj(root.tls, 'tls');
  const readPem = (/** @type {string} */ key) => {
    const name = path.resolve(dir, str(tls, key, 'tls'));
    try {
      return readFileSync(name, 'utf8');
    } catch (e) {
      throw new ConfigError(`tls.${key}: cannot read ${name}: ${/** @type {Error} */ (e).message}`);
    }
  };
  // The client credential: a certificate from client_ca_file (mutual TLS), a bearer secret (for a
  // path that cannot present certificates: a Workers VPC service through cloudflared), or both.
  const auth = obj(root.auth ?? {}, 'auth');
  const clientCa = tls.client_ca_file === undefined ? null : readPem('client_ca_file');
  let bearerToken = null;
  if (auth.bearer_token_file !== undefined) {
    const name = path.resolve(dir, str(auth, 'bearer_token_file', 'auth'));
    try {
      bearerToken = readFileSync(name, 'utf8').trim();
    } catch (e) {
      fail(`auth.bearer_token_file: cannot read ${name}: ${/** @type {Error} */ (e).message}`);
    }
    if (/** @type {string} */ (bearerToken).length < 32) fail('auth.bearer_token_file must hold a secret of at least 32 characters');
  }
  if (clientCa === null && bearerToken === null) fail('configure a client credential: tls.client_ca_file (mutual TLS), auth.bearer_token_file, or both');
  const names = tls.allowed_client_names;
  if (names !== undefined && clientCa === null) fail('tls.allowed_client_names needs tls.client_ca_file');
  if (names !== undefined && (!Array.isArray(names) || names.some((n) => typeof n !== 'string' || n === ''))) {
    fail('tls.allowed_client_names must be a list of certificate names');
  }

  const stanzas = root.kms_library;
  if (!Array.isArray(stanzas) || stanzas.length === 0) fail('kms_library must list at least one library stanza');
  /** @type {Map<string, LibraryStanza>} */
  const libraries = new Map();
  /** @type {unknown[]} */ (stanzas).forEach((s, i) => {
    const where = `kms_library[${i}]`;
    const o = obj(s, where);
    const name = str(o, 'name', where);
    const key = name.toLowerCase();
    if (libraries.has(key)) fail(`${where}.name ${name} appears twice`);
    libraries.set(key, {
      name,
      // A bare file name ("libsofthsm2.so") is left to the dynamic loader's search path.
      library: libraryPath(dir, str(o, 'library', where)),
      max_sessions: int(o.max_sessions, `${where}.max_sessions`, 1, 1024, 32),
    });
  });

  const address = listen.address ?? '127.0.0.1';
  if (typeof address !== 'string') fail('listen.address must be a string');
  const logLevel = root.log_level ?? 'info';
  if (typeof logLevel !== 'string') fail('log_level must be a string');
  return {
    listen: { address: /** @type {string} */ (address), port: int(listen.port, 'listen.port', 0, 65535, 8443) },
    tls: {
      cert: readPem('cert_file'),
      key: readPem('key_file'),
      clientCa,
      allowedClientNames: /** @type {string[] | undefined} */ (names) ?? null,
    },
    auth: { bearerToken },
    libraries,
    maxRequestBytes: int(root.max_request_bytes, 'max_request_bytes', 1024, 16 * 1024 * 1024, 256 * 1024),
    logLevel: /** @type {string} */ (logLevel),
  };
}

export { ConfigError };
