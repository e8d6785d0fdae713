// Calls to the Cloud KMS REST API (v1, JSON) with a service account's access token. Google's
// error documents ({"error": {code, message, status}}) become CloudKmsErrors: 4xx a 400 naming
// Google's status (PERMISSION_DENIED, NOT_FOUND, ...), 5xx and an unreachable API a 502. Busy
// answers (429, 500, 503, 504) and network failures are tried again twice; a refused token
// (401) is renewed once.

import { accessToken, forgetToken, type ServiceAccount } from './gcp-auth';
import { ManagedKeyError, type BackendDeps } from './types';
import { textWithin } from '../framework/deadline';

const PUBLIC_ENDPOINT = 'https://cloudkms.googleapis.com';
const RETRY_STATUSES = new Set([429, 500, 503, 504]);
const RETRIES = 2;
const REQUEST_TIMEOUT_MS = 20_000;

/** An error answer of Cloud KMS; `code` is Google's status name (NOT_FOUND, ALREADY_EXISTS, ...). */
export class CloudKmsError extends ManagedKeyError {
  constructor(
    readonly httpStatus: number,
    readonly code: string,
    message: string,
  ) {
    super(httpStatus >= 500 || httpStatus === 429 ? 502 : 400, message);
    this.name = 'CloudKmsError';
  }
}

export const isKmsError = (e: unknown, code: string): e is CloudKmsError => e instanceof CloudKmsError && e.code === code;

export interface KmsClient {
  /** `path` is relative to /v1/ (a resource name, with a collection or a :verb). */
  call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T>;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function errorOf(text: string): { status?: string; message?: string } {
  try {
    const e = (JSON.parse(text) as { error?: { status?: unknown; message?: unknown } }).error;
    return { status: typeof e?.status === 'string' ? e.status : undefined, message: typeof e?.message === 'string' ? e.message.slice(0, 500) : undefined };
  } catch {
    return {};
  }
}

export function kmsClient(sa: ServiceAccount, deps: BackendDeps): KmsClient {
  const origin = (deps.endpoints?.googleCloudKms || PUBLIC_ENDPOINT).replace(/\/+$/, '');
  const fetcher = deps.fetch as typeof fetch;

  return {
    async call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
      const url = `${origin}/v1/${path}`;
      let renewed = false;
      for (let attempt = 0; ; attempt++) {
        const token = await accessToken(sa, fetcher);
        let res: Response;
        let text: string;
        try {
          ({ res, text } = await textWithin(REQUEST_TIMEOUT_MS, (signal) =>
            fetcher(url, {
              method,
              headers: { authorization: `Bearer ${token}`, accept: 'application/json', ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
              body: body !== undefined ? JSON.stringify(body) : undefined,
              signal,
            }),
          ));
        } catch (e) {
          if (attempt < RETRIES) {
            await sleep(250 * 3 ** attempt);
            continue;
          }
          throw new ManagedKeyError(502, `Google Cloud KMS (${origin}) cannot be reached: ${e instanceof Error ? e.message : String(e)}`);
        }
        if (res.ok) {
          try {
            return JSON.parse(text) as T;
          } catch {
            throw new ManagedKeyError(502, `Google Cloud KMS answered ${method} ${path} with something that is not JSON`);
          }
        }
        if (res.status === 401 && !renewed) {
          // The cached token may have been revoked: one more try with a new one.
          renewed = true;
          await forgetToken(sa);
          continue;
        }
        if (RETRY_STATUSES.has(res.status) && attempt < RETRIES) {
          await sleep(250 * 3 ** attempt);
          continue;
        }
        const err = errorOf(text);
        const code = err.status ?? `HTTP ${res.status}`;
        throw new CloudKmsError(res.status, code, `Google Cloud KMS: ${code} (HTTP ${res.status})${err.message ? `: ${err.message}` : ''}`);
      }
    },
  };
}
