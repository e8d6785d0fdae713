// SigV4 verification, independent of the product's signer (aws4fetch): the Authorization header
// is parsed, and the request is signed again with @smithy/signature-v4 (the AWS SDK's own signer)
// from the same method, path, query, signed headers, body, X-Amz-Date and credential scope, with
// the secret the emulator holds for the key id. The signatures must be equal.
import { createHash, timingSafeEqual } from 'node:crypto';
import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { incompleteSignature, signatureDoesNotMatch } from './errors';

export interface Authorization {
  accessKeyId: string;
  /** The credential scope: YYYYMMDD/region/service/aws4_request. */
  scopeDate: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string;
}

export interface SignedRequest {
  method: string;
  /** The path as sent, without the query. */
  path: string;
  query: Record<string, string | string[]>;
  /** Lower-case names, as Node hands them over. */
  headers: Record<string, string | string[] | undefined>;
  body: Uint8Array;
}

const ALGORITHM = 'AWS4-HMAC-SHA256';

/** The Credential, SignedHeaders and Signature of an Authorization header (IncompleteSignature if any is missing). */
export function parseAuthorization(header: string): Authorization {
  const space = header.indexOf(' ');
  const algorithm = space < 0 ? header : header.slice(0, space);
  if (algorithm !== ALGORITHM) throw incompleteSignature(`Unsupported AWS 'algorithm': '${algorithm}'`);
  const parts: Record<string, string> = {};
  for (const part of header.slice(space + 1).split(',')) {
    const eq = part.indexOf('=');
    if (eq > 0) parts[part.slice(0, eq).trim()] = part.slice(eq + 1).trim();
  }
  for (const name of ['Credential', 'Signature', 'SignedHeaders']) {
    if (!parts[name]) throw incompleteSignature(`Authorization header requires '${name}' parameter. Authorization=${header}`);
  }
  const scope = parts.Credential.split('/');
  if (scope.length !== 5 || scope[4] !== 'aws4_request' || !scope[0]) {
    throw incompleteSignature(`Credential should be scoped to a valid region. Credential=${parts.Credential}`);
  }
  const [accessKeyId, scopeDate, region, service] = scope;
  return { accessKeyId, scopeDate, region, service, signedHeaders: parts.SignedHeaders.split(';'), signature: parts.Signature };
}

/** X-Amz-Date (YYYYMMDDTHHMMSSZ) as epoch milliseconds, or null if it is not one. */
export function parseAmzDate(value: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value);
  if (!m) return null;
  const ms = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]);
  return Number.isNaN(ms) ? null : ms;
}

export const formatAmzDate = (ms: number) => new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z');

const SKEW_MS = 15 * 60_000;

/** Throws AWS's SignatureDoesNotMatch "Signature expired"/"not yet current" if the date is over 15 minutes off. */
export function checkFreshness(amzDate: string, signedAt: number, now: number): void {
  if (signedAt < now - SKEW_MS) {
    throw signatureDoesNotMatch(`Signature expired: ${amzDate} is now earlier than ${formatAmzDate(now - SKEW_MS)} (${formatAmzDate(now)} - 15 min.)`);
  }
  if (signedAt > now + SKEW_MS) {
    throw signatureDoesNotMatch(`Signature not yet current: ${amzDate} is still later than ${formatAmzDate(now + SKEW_MS)} (${formatAmzDate(now)} + 15 min.)`);
  }
}

const headerValue = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(',') : v);

/** Signs the request again with `secretAccessKey` and says whether the signature is the one sent. */
export async function signatureMatches(request: SignedRequest, auth: Authorization, secretAccessKey: string, signedAt: number): Promise<boolean> {
  // Only the headers the client signed take part, so the signer adds none of its own choosing.
  const headers: Record<string, string> = {};
  for (const name of auth.signedHeaders) {
    const value = headerValue(request.headers[name]);
    if (value !== undefined) headers[name] = value;
  }
  // The SDK signs X-Amz-Content-Sha256, which the signer would take on trust as the payload's hash.
  // AWS hashes the body it received; so do we, so that a changed body cannot pass.
  if (headers['x-amz-content-sha256'] !== undefined) headers['x-amz-content-sha256'] = createHash('sha256').update(request.body).digest('hex');
  const signer = new SignatureV4({
    credentials: { accessKeyId: auth.accessKeyId, secretAccessKey },
    region: auth.region,
    service: auth.service,
    sha256: Sha256,
    applyChecksum: false,
    uriEscapePath: true,
  });
  const host = headerValue(request.headers.host) ?? '';
  const signed = await signer.sign(
    { method: request.method, protocol: 'http:', hostname: host, path: request.path, query: request.query, headers, body: request.body.byteLength ? request.body : undefined },
    { signingDate: new Date(signedAt), signableHeaders: new Set(auth.signedHeaders) },
  );
  const ours = /Signature=([0-9a-f]+)/.exec(signed.headers.authorization ?? '')?.[1] ?? '';
  const theirs = Buffer.from(auth.signature);
  return ours.length === theirs.length && timingSafeEqual(Buffer.from(ours), theirs);
}
