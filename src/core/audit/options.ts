// Audit device types and their options, as `sys/audit/:path` accepts them. Options arrive as
// Vault's map of strings; everything is checked here, at enable time, so a device that was
// accepted can always format and deliver an entry.

import { badRequest } from '../../framework/errors';

export type DeviceType = 'file' | 'http';

/** The options a device works with, parsed once at enable time. */
export interface DeviceOptions {
  type: DeviceType;
  /** file: "stdout", "discard" or a path (every path still goes to the Worker log). */
  filePath: string;
  /** http: where entries are POSTed. */
  url: string;
  /**
   * http (beyond Vault): one POST per group of entries, one entry per line (newline-delimited
   * JSON), instead of one POST per entry, so a receiver far away is not paid a round trip per entry.
   */
  batch?: boolean;
  /** Written before each entry (Vault's `prefix`). */
  prefix: string;
  hmacAccessor: boolean;
  logRaw: boolean;
  elideListResponses: boolean;
}

/** Vault's strconv.ParseBool spellings. */
const TRUE = new Set(['1', 't', 'T', 'TRUE', 'true', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'FALSE', 'false', 'False']);

const COMMON_OPTIONS = ['format', 'prefix', 'hmac_accessor', 'log_raw', 'elide_list_responses'];
const TYPE_OPTIONS: Record<DeviceType, string[]> = {
  file: ['file_path', 'path', 'mode'],
  http: ['url', 'batch'],
};

/** Types Vault has that a Worker cannot offer: named in the error so the operator knows why. */
const VAULT_ONLY_TYPES = new Set(['socket', 'syslog']);

function boolOption(options: Record<string, string>, key: string, fallback: boolean): boolean {
  const raw = options[key];
  if (raw === undefined || raw === '') return fallback;
  if (TRUE.has(raw)) return true;
  if (FALSE.has(raw)) return false;
  throw badRequest(`unable to parse '${key}': ${JSON.stringify(raw)} is not a boolean`);
}

function httpURL(raw: string | undefined): string {
  if (!raw) throw badRequest('url is required for an http audit device');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw badRequest(`url ${JSON.stringify(raw)} is not a valid URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw badRequest(`url must use http or https, not ${url.protocol.replace(/:$/, '')}`);
  if (url.username || url.password) throw badRequest('url must not carry credentials');
  return url.toString();
}

export interface ParsedOptions {
  options: DeviceOptions;
  warnings: string[];
}

/** Validates a device's type and options; throws a 400 naming the first problem. */
export function parseDeviceOptions(type: string, options: Record<string, string>): ParsedOptions {
  if (type === '') throw badRequest('type is required');
  if (VAULT_ONLY_TYPES.has(type)) throw badRequest(`audit device type "${type}" is not available: a Worker has no ${type === 'socket' ? 'sockets' : 'syslog'}; use "file" or "http"`);
  if (type !== 'file' && type !== 'http') throw badRequest(`unknown backend type: "${type}"`);
  const warnings: string[] = [];

  const format = options.format ?? 'json';
  if (format === 'jsonx') throw badRequest('format "jsonx" is not supported: audit entries are written as "json" only');
  if (format !== 'json' && format !== '') throw badRequest(`unknown format type "${format}"`);

  let filePath = '';
  let url = '';
  let batch = false;
  if (type === 'file') {
    // Older Vault versions called the option `path`.
    filePath = options.file_path || options.path || '';
    if (!filePath) throw badRequest('file_path is required');
    if (options.mode !== undefined && options.mode !== '' && !/^[0-7]{1,4}$/.test(options.mode)) {
      throw badRequest(`unable to parse 'mode': ${JSON.stringify(options.mode)} is not an octal file mode`);
    }
    if (filePath !== 'stdout' && filePath !== 'discard') {
      warnings.push(`a Worker has no file system: entries for "${filePath}" are written to the Worker log (collected by Workers Logs or Logpush), one JSON line each`);
    }
  } else {
    url = httpURL(options.url);
    batch = boolOption(options, 'batch', false);
  }

  const known = new Set([...COMMON_OPTIONS, ...TYPE_OPTIONS[type]]);
  const unknown = Object.keys(options).filter((k) => !known.has(k)).sort();
  if (unknown.length > 0) warnings.push(`these options are not used by a ${type} audit device and were ignored: ${unknown.join(', ')}`);

  return {
    options: {
      type,
      filePath,
      url,
      ...(batch ? { batch } : {}),
      prefix: options.prefix ?? '',
      hmacAccessor: boolOption(options, 'hmac_accessor', true),
      logRaw: boolOption(options, 'log_raw', false),
      elideListResponses: boolOption(options, 'elide_list_responses', false),
    },
    warnings,
  };
}
