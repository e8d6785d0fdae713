// Who is calling, checked as KMS does: a SigV4 Authorization header scoped to service "kms" and a
// region, a fresh X-Amz-Date (±15 minutes of real time), and a signature made with the secret of
// an access key the account holds. The signature is recomputed by ../aws-iam-sts/sigv4.ts with
// @smithy/signature-v4 (the AWS SDK's signer, not the product's aws4fetch) over the method, path,
// signed headers and the SHA-256 of the body as received. Failures are KMS's JSON error codes.
import { AwsError } from '../aws-iam-sts/errors';
import { checkFreshness, parseAmzDate, parseAuthorization, signatureMatches, type Authorization, type SignedRequest } from '../aws-iam-sts/sigv4';
import { incompleteSignature, invalidSignatureRequest, KmsError, missingAuthentication, unrecognizedClient } from './errors';
import type { Account, Credential } from './state';

const header = (req: SignedRequest, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
};

const REGION_RE = /^[a-z]{2}(-[a-z]+)+-\d+$/;

/** The IAM emulator's helpers speak IAM's XML error codes: the same failures in KMS's words. */
function asKms(e: unknown): unknown {
  if (!(e instanceof AwsError)) return e;
  if (e.code === 'IncompleteSignature') return incompleteSignature(e.message);
  if (e.code === 'SignatureDoesNotMatch') return invalidSignatureRequest(e.message);
  return new KmsError(e.status >= 500 ? 500 : 400, e.code, e.message);
}

/** The Authorization header parsed, or the error KMS answers for a request without a usable one. */
export function readAuthorization(req: SignedRequest): Authorization {
  const value = header(req, 'authorization');
  if (!value) throw missingAuthentication();
  try {
    return parseAuthorization(value);
  } catch (e) {
    throw asKms(e);
  }
}

export async function authenticate(account: Account, req: SignedRequest, auth: Authorization): Promise<Credential> {
  if (auth.service !== 'kms') throw invalidSignatureRequest(`Credential should be scoped to correct service: 'kms'. `);
  if (!REGION_RE.test(auth.region)) throw invalidSignatureRequest(`Credential should be scoped to a valid region. `);
  if (!auth.signedHeaders.includes('host')) throw incompleteSignature("'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.");
  const amzDate = header(req, 'x-amz-date');
  const signedAt = amzDate === undefined ? null : parseAmzDate(amzDate);
  if (amzDate === undefined || signedAt === null) {
    throw incompleteSignature(`Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header.`);
  }
  if (auth.scopeDate !== amzDate.slice(0, 8)) {
    throw invalidSignatureRequest(`Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '${auth.scopeDate}' != '${amzDate.slice(0, 8)}', from '${amzDate}'.`);
  }
  const credential = account.credentials.get(auth.accessKeyId);
  // Only long-term keys are held here: a session token means credentials this account never issued.
  if (!credential || header(req, 'x-amz-security-token') !== undefined) throw unrecognizedClient();
  try {
    checkFreshness(amzDate, signedAt, Date.now());
  } catch (e) {
    throw asKms(e);
  }
  if (!(await signatureMatches(req, auth, credential.secretAccessKey, signedAt))) throw invalidSignatureRequest();
  return credential;
}
