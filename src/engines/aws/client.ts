// A client for AWS's Query APIs (IAM, STS): form-encoded `Action=…&Version=…` requests signed
// with SigV4 by aws4fetch, XML answers parsed by fast-xml-parser, and the SDK's retry rules
// (throttling and server errors retried with backoff, `max_retries` of them; −1 = the SDK's 3).

import { AwsV4Signer } from 'aws4fetch';
import { XMLParser } from 'fast-xml-parser';
import { textWithin } from '../../framework/deadline';

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** One place a service is reached: the URL and the region requests to it are signed for. */
export interface Endpoint {
  url: string;
  region: string;
}

/** An error document AWS answered (or the network failing, as code `RequestError`). */
export class AwsError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly awsMessage: string,
    readonly requestId: string,
  ) {
    // The form aws-sdk-go's errors print in, which Vault's messages embed.
    super(status ? `${code}: ${awsMessage}\n\tstatus code: ${status}, request id: ${requestId}` : `${code}: ${awsMessage}`);
  }

  /** AWS refused because of the rate of calls (Vault answers these 502, upstream rate limited). */
  get throttled(): boolean {
    return THROTTLING.has(this.code) || this.status === 429;
  }
}

const THROTTLING = new Set(['Throttling', 'ThrottlingException', 'ThrottledException', 'RequestThrottledException', 'TooManyRequestsException', 'RequestLimitExceeded', 'RequestThrottled', 'SlowDown', 'PriorRequestNotComplete']);
const TRANSIENT = new Set(['RequestError', 'RequestTimeout', 'RequestTimeoutException', 'InternalFailure', 'ServiceUnavailable', 'ServiceFailure']);

/** What the SDK retries: throttling, server errors and failed connections. */
const retryable = (e: AwsError): boolean => e.throttled || e.status >= 500 || TRANSIENT.has(e.code);

export const SERVICE_VERSIONS = { iam: '2010-05-08', sts: '2011-06-15' } as const;
export type Service = keyof typeof SERVICE_VERSIONS;

/** The SDK's default number of retries (aws-sdk-go's DefaultRetryerMaxNumRetries). */
const DEFAULT_RETRIES = 3;
const BACKOFF_BASE_MS = 30;
const BACKOFF_MAX_MS = 2_000;
/** One attempt may not take longer than this (a hung endpoint must not hold the mount forever). */
const ATTEMPT_TIMEOUT_MS = 20_000;

// Lists are <member> elements; keeping every value as text leaves ids and dates untouched.
const parser = new XMLParser({ ignoreAttributes: true, parseTagValue: false, trimValues: true, isArray: (name) => name === 'member' });

/** Query parameters of a call: values, and lists sent as `Name.member.N` (1-based). */
export type QueryParams = Record<string, string | number | undefined | readonly string[] | readonly Record<string, string>[]>;

/** Flattens parameters into AWS's form encoding. */
export function encodeQuery(action: string, version: string, params: QueryParams): string {
  const form = new URLSearchParams({ Action: action, Version: version });
  for (const [name, value] of Object.entries(params)) {
    if (value === undefined) continue;
    if (typeof value === 'string' || typeof value === 'number') {
      form.append(name, String(value));
      continue;
    }
    value.forEach((item, i) => {
      if (typeof item === 'string') form.append(`${name}.member.${i + 1}`, item);
      else for (const [k, v] of Object.entries(item)) form.append(`${name}.member.${i + 1}.${k}`, v);
    });
  }
  return form.toString();
}

/** Reads the error document of a failed call. */
function parseError(status: number, body: string): AwsError {
  try {
    const doc = parser.parse(body) as { ErrorResponse?: { Error?: { Code?: string; Message?: string }; RequestId?: string } };
    const err = doc.ErrorResponse?.Error;
    if (err?.Code) return new AwsError(status, err.Code, err.Message ?? '', doc.ErrorResponse?.RequestId ?? '');
  } catch {
    // Not XML: reported with the status below.
  }
  return new AwsError(status, status >= 500 ? 'InternalFailure' : 'UnknownError', body.slice(0, 200), '');
}

/**
 * SigV4 signing keys derived from a secret key (aws4fetch's cache: one per secret, day, region and
 * service), so that a mount's calls with its root key derive each once instead of per call (four
 * HMACs). Bounded: it starts over past SIGNING_KEYS entries.
 */
export class SigningKeys extends Map<string, ArrayBuffer> {
  override set(key: string, value: ArrayBuffer): this {
    if (this.size >= SIGNING_KEYS) this.clear();
    return super.set(key, value);
  }
}

const SIGNING_KEYS = 32;

const FORM = { 'content-type': 'application/x-www-form-urlencoded; charset=utf-8' };

export class QueryClient {
  readonly #credentials: AwsCredentials;
  readonly #cache: SigningKeys | undefined;
  readonly #retries: number;

  constructor(
    credentials: AwsCredentials,
    readonly service: Service,
    /** Tried in order: the next one when a call to one fails after its retries (STS fallbacks). */
    readonly endpoints: readonly Endpoint[],
    maxRetries: number,
    signingKeys?: SigningKeys,
  ) {
    this.#credentials = credentials;
    this.#cache = signingKeys;
    this.#retries = maxRetries < 0 ? DEFAULT_RETRIES : maxRetries;
  }

  /** Calls `action` and returns its `<ActionResult>` element (an empty object for result-less calls). */
  async call(action: string, params: QueryParams = {}): Promise<Record<string, unknown>> {
    const body = encodeQuery(action, SERVICE_VERSIONS[this.service], params);
    let last: AwsError | null = null;
    for (const endpoint of this.endpoints) {
      try {
        return await this.#withRetries(endpoint, action, body);
      } catch (e) {
        if (!(e instanceof AwsError) || !retryable(e)) throw e;
        last = e;
      }
    }
    throw last ?? new AwsError(0, 'RequestError', `no ${this.service} endpoint configured`, '');
  }

  async #withRetries(endpoint: Endpoint, action: string, body: string): Promise<Record<string, unknown>> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.#once(endpoint, action, body);
      } catch (e) {
        if (!(e instanceof AwsError) || !retryable(e) || attempt >= this.#retries) throw e;
        const cap = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** attempt);
        await new Promise((resolve) => setTimeout(resolve, cap / 2 + Math.random() * (cap / 2)));
      }
    }
  }

  async #once(endpoint: Endpoint, action: string, body: string): Promise<Record<string, unknown>> {
    let res: Response;
    let text: string;
    try {
      // The signer's parts go to fetch as they are: AwsClient.sign would first build a Request of
      // them that fetch then copies (measured: the costliest step of a call after its wait).
      const signer = new AwsV4Signer({ ...this.#credentials, url: endpoint.url, method: 'POST', headers: FORM, body, service: this.service, region: endpoint.region, cache: this.#cache });
      const signed = await signer.sign();
      ({ res, text } = await textWithin(ATTEMPT_TIMEOUT_MS, (signal) => fetch(signed.url, { method: signed.method, headers: signed.headers, body, signal })));
    } catch (e) {
      throw new AwsError(0, 'RequestError', `send request failed: ${e instanceof Error ? e.message : String(e)}`, '');
    }
    if (!res.ok) throw parseError(res.status, text);
    let doc: Record<string, unknown>;
    try {
      doc = parser.parse(text) as Record<string, unknown>;
    } catch (e) {
      throw new AwsError(res.status, 'SerializationError', `failed decoding ${this.service} response: ${e instanceof Error ? e.message : String(e)}`, '');
    }
    const response = doc[`${action}Response`] as Record<string, unknown> | undefined;
    if (!response || typeof response !== 'object') throw new AwsError(res.status, 'SerializationError', `unexpected ${this.service} response to ${action}`, '');
    const result = response[`${action}Result`];
    return result && typeof result === 'object' ? (result as Record<string, unknown>) : {};
  }
}

/** A text element of a parsed result ("" when absent). */
export const text = (node: unknown, name: string): string => {
  const v = node && typeof node === 'object' ? (node as Record<string, unknown>)[name] : undefined;
  return typeof v === 'string' ? v : '';
};

/** The elements of a `<Name><member>…</member></Name>` list. */
export const members = (node: unknown, name: string): unknown[] => {
  const list = node && typeof node === 'object' ? (node as Record<string, unknown>)[name] : undefined;
  const items = list && typeof list === 'object' ? (list as { member?: unknown }).member : undefined;
  return Array.isArray(items) ? items : [];
};

/** A child element. */
export const child = (node: unknown, name: string): Record<string, unknown> => {
  const v = node && typeof node === 'object' ? (node as Record<string, unknown>)[name] : undefined;
  return v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
};
