// otpauth:// key URIs (the format authenticator apps scan from QR codes):
//   otpauth://totp/<issuer>:<account>?secret=<base32>&issuer=<issuer>&algorithm=&digits=&period=

import { badRequest } from '../../../src/framework/errors';

export interface OtpauthKey {
  issuer: string;
  accountName: string;
  /** Base32. */
  secret: string;
  algorithm: string;
  digits: number;
  period: number;
}

/** What an otpauth URL sets; absent members are left to the request's fields. */
export interface ParsedOtpauth {
  /** The issuer parameter, else the label's prefix before ':'; absent when neither is there. */
  issuer?: string;
  /** The label after ':' (or the whole label). */
  accountName: string;
  /** The secret parameter ("" when absent). */
  secret: string;
  algorithm?: string;
  digits?: number;
  period?: number;
}

// The label keeps '@' readable, as Go's path escaping does; ':' inside a part is escaped so the
// issuer/account split stays unambiguous.
const escapeLabelPart = (s: string): string => encodeURIComponent(s).replace(/%40/g, '@');

/** The URL of a generated key, its parameters in Vault's order (sorted by name). */
export function buildOtpauthUrl(key: OtpauthKey): string {
  const label = `${escapeLabelPart(key.issuer)}:${escapeLabelPart(key.accountName)}`;
  const query = [
    ['algorithm', key.algorithm],
    ['digits', String(key.digits)],
    ['issuer', key.issuer],
    ['period', String(key.period)],
    ['secret', key.secret],
  ]
    .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
    .join('&');
  return `otpauth://totp/${label}?${query}`;
}

const urlError = (why: string) => badRequest(`an error occurred while parsing url string: ${why}`);

function intParam(params: URLSearchParams, name: 'period' | 'digits'): number | undefined {
  const raw = params.get(name) ?? '';
  if (raw === '') return undefined;
  if (!/^[-+]?\d{1,15}$/.test(raw)) throw badRequest(`an error occurred while parsing ${name} value in url: ${JSON.stringify(raw)} is not an integer`);
  return parseInt(raw, 10);
}

/** Reads a TOTP key URL; a 400 when it is not one. */
export function parseOtpauthUrl(input: string): ParsedOtpauth {
  let url: URL;
  try {
    url = new URL(input.trim());
  } catch {
    throw urlError('not a URL');
  }
  if (url.protocol !== 'otpauth:') throw urlError(`the scheme is ${JSON.stringify(url.protocol.slice(0, -1))}, not "otpauth"`);
  if (url.host !== 'totp') throw urlError(`the key type is ${JSON.stringify(url.host)}, not "totp"`);
  let label: string;
  try {
    label = decodeURIComponent(url.pathname.replace(/^\//, ''));
  } catch {
    throw urlError('the label is not valid percent-encoding');
  }
  const params = url.searchParams;
  const colon = label.indexOf(':');
  const issuer = params.get('issuer') || (colon >= 0 ? label.slice(0, colon) : undefined);
  const parsed: ParsedOtpauth = { accountName: colon >= 0 ? label.slice(colon + 1) : label, secret: params.get('secret') ?? '' };
  if (issuer !== undefined) parsed.issuer = issuer;
  const algorithm = params.get('algorithm');
  if (algorithm) parsed.algorithm = algorithm;
  const digits = intParam(params, 'digits');
  if (digits !== undefined) parsed.digits = digits;
  const period = intParam(params, 'period');
  if (period !== undefined) parsed.period = period;
  return parsed;
}
