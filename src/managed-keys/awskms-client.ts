// A client for AWS KMS's JSON 1.1 protocol: `POST <endpoint>/` with the operation in X-Amz-Target
// (TrentService.<Op>), a JSON body (binary members base64), SigV4 for service "kms" signed by
// aws4fetch, and errors {"__type", "message"}. Throttling is retried a couple of times with
// backoff, as the AWS SDKs do; so are server errors and failed connections for operations that
// are safe to repeat. Failures become ManagedKeyErrors naming KMS's error code: 400 for what AWS
// refused (4xx), 502 when it cannot be reached, keeps throttling or answers oddly. The
// credentials never appear in a message: AWS's own text is scrubbed of them before it is quoted.

import { AwsClient } from 'aws4fetch';
import { ManagedKeyError, type BackendDeps } from './types';
import { textWithin } from '../framework/deadline';

export interface KmsClientOptions {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  /** '' for the regional public endpoint. */
  endpoint: string;
  fetch: BackendDeps['fetch'];
}

/** A KMS call that failed: `code` is AWS's error code (or RequestError / SerializationError). */
export class KmsCallError extends ManagedKeyError {
  constructor(
    status: number,
    readonly code: string,
    readonly operation: string,
    message: string,
  ) {
    super(status, message);
    this.name = 'KmsCallError';
  }
}

const THROTTLING = new Set(['ThrottlingException', 'Throttling', 'TooManyRequestsException', 'RequestLimitExceeded']);
/** Operations that create something: repeating one after an unclear failure could create it twice. */
const NOT_IDEMPOTENT = new Set(['CreateKey']);

const RETRIES = 2;
const BACKOFF_BASE_MS = 100;
const ATTEMPT_TIMEOUT_MS = 20_000;

/** What an error code means for whoever reads the message. */
const HINTS: Record<string, string> = {
  UnrecognizedClientException: 'AWS does not know the access_key',
  InvalidSignatureException: 'check secret_key (and the clock)',
  IncompleteSignatureException: 'the request was not signed as AWS expects',
  AccessDeniedException: "the access key's IAM policy does not allow this KMS operation",
};

/** https://kms.<region>.amazonaws.com (.com.cn in the China regions), or the configured endpoint. */
export function kmsEndpoint(region: string, endpoint: string): string {
  if (endpoint !== '') return endpoint;
  return `https://kms.${region}.amazonaws.com${region.startsWith('cn-') ? '.cn' : ''}/`;
}

/** AWS's code without the namespace ("com.amazon.coral.service#X") or the header's ":<url>" tail. */
const bareCode = (raw: string): string => raw.split('#').pop()!.split(':')[0].trim();

export class KmsClient {
  readonly #signer: AwsClient;
  readonly #url: string;
  readonly #region: string;
  readonly #fetch: BackendDeps['fetch'];
  readonly #secrets: string[];

  constructor(o: KmsClientOptions) {
    this.#signer = new AwsClient({ accessKeyId: o.accessKeyId, secretAccessKey: o.secretAccessKey, service: 'kms', region: o.region, retries: 0 });
    this.#url = kmsEndpoint(o.region, o.endpoint);
    this.#region = o.region;
    this.#fetch = o.fetch;
    this.#secrets = [o.secretAccessKey, o.accessKeyId].filter((s) => s.length >= 4);
  }

  /** Calls `operation` and returns its JSON answer ({} for an empty one). */
  async call<T>(operation: string, body: Record<string, unknown>): Promise<T> {
    const json = JSON.stringify(body);
    for (let attempt = 0; ; attempt++) {
      try {
        return (await this.#once(operation, json)) as T;
      } catch (e) {
        if (!(e instanceof KmsCallError) || attempt >= RETRIES || !this.#retryable(e)) throw e;
        const cap = BACKOFF_BASE_MS * 2 ** attempt;
        await new Promise((resolve) => setTimeout(resolve, cap / 2 + Math.random() * (cap / 2)));
      }
    }
  }

  #retryable(e: KmsCallError): boolean {
    if (THROTTLING.has(e.code)) return true;
    return !NOT_IDEMPOTENT.has(e.operation) && (e.code === 'RequestError' || (e.status === 502 && e.code !== 'SerializationError'));
  }

  async #once(operation: string, body: string): Promise<unknown> {
    let res: Response;
    let text: string;
    try {
      const request = await this.#signer.sign(this.#url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.1', 'x-amz-target': `TrentService.${operation}` },
        body,
        aws: { service: 'kms', region: this.#region },
      });
      ({ res, text } = await textWithin(ATTEMPT_TIMEOUT_MS, (signal) => this.#fetch(request, { signal })));
    } catch (e) {
      throw new KmsCallError(502, 'RequestError', operation, `AWS KMS cannot be reached (${operation}): ${this.#scrub(e instanceof Error ? e.message : String(e))}`);
    }
    if (!res.ok) throw this.#failure(operation, res, text);
    if (text.trim() === '') return {};
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed;
    } catch {
      // reported below
    }
    throw new KmsCallError(502, 'SerializationError', operation, `AWS KMS answered ${operation} with something that is not a JSON object`);
  }

  #failure(operation: string, res: Response, text: string): KmsCallError {
    let doc: Record<string, unknown> = {};
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed && typeof parsed === 'object') doc = parsed as Record<string, unknown>;
    } catch {
      // not JSON: the status and the error-type header are all there is
    }
    const rawCode = typeof doc.__type === 'string' ? doc.__type : typeof doc.code === 'string' ? doc.code : (res.headers.get('x-amzn-errortype') ?? '');
    const code = bareCode(rawCode) || (res.status >= 500 ? 'InternalFailure' : `HTTP${res.status}`);
    const message = typeof doc.message === 'string' ? doc.message : typeof doc.Message === 'string' ? doc.Message : '';
    // Throttling that outlasted the retries is the service's state, not the configuration's (like a 5xx).
    const status = res.status >= 500 || THROTTLING.has(code) || res.status === 429 ? 502 : 400;
    const hint = HINTS[code] ? ` (${HINTS[code]})` : '';
    const said = message ? `: ${this.#scrub(message)}` : '';
    return new KmsCallError(status, code, operation, `AWS KMS ${operation} failed with ${code}${said}${hint}`);
  }

  #scrub(text: string): string {
    let out = text;
    for (const s of this.#secrets) out = out.split(s).join('[redacted]');
    return out;
  }
}
