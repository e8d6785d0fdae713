// Who is calling: every API request must carry a SigV4 Authorization header whose credential
// scope names iam or sts (any region: a custom IAM endpoint is signed for the configured region,
// the call log records which), a fresh X-Amz-Date (±15 minutes of real time), and a signature
// made with the secret of an active key the account holds: a user's or the root's long-term key
// (sent without a session token), or temporary credentials STS issued (with X-Amz-Security-Token
// equal to their session token, and not yet expired).
import { expiredToken, incompleteSignature, invalidClientTokenId, missingAuthenticationToken, signatureDoesNotMatch } from './errors';
import { checkFreshness, parseAmzDate, parseAuthorization, signatureMatches, type Authorization, type SignedRequest } from './sigv4';
import type { Account, Caller } from './state';

const header = (req: SignedRequest, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
};

/** The Authorization header parsed, or the error AWS answers for a request that has none or a broken one. */
export function readAuthorization(req: SignedRequest): Authorization {
  const value = header(req, 'authorization');
  if (!value) {
    if (req.query['X-Amz-Algorithm'] !== undefined) throw incompleteSignature('This emulator does not accept presigned (query string) SigV4; sign with the Authorization header.');
    throw missingAuthenticationToken();
  }
  return parseAuthorization(value);
}

export async function authenticate(account: Account, req: SignedRequest, auth: Authorization): Promise<Caller> {
  if (auth.service !== 'iam' && auth.service !== 'sts') {
    throw signatureDoesNotMatch(`Credential should be scoped to correct service: 'iam' or 'sts', not '${auth.service}'. `);
  }
  if (!/^[a-z]{2}(-[a-z]+)+-\d+$/.test(auth.region)) throw signatureDoesNotMatch(`Credential should be scoped to a valid region, not '${auth.region}'. `);
  if (!auth.signedHeaders.includes('host')) throw incompleteSignature("'Host' or ':authority' must be a 'SignedHeader' in the AWS Authorization.");
  const amzDate = header(req, 'x-amz-date');
  const signedAt = amzDate === undefined ? null : parseAmzDate(amzDate);
  if (amzDate === undefined || signedAt === null) {
    throw incompleteSignature(`Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. Authorization=${header(req, 'authorization')}`);
  }
  if (auth.scopeDate !== amzDate.slice(0, 8)) {
    throw signatureDoesNotMatch(`Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '${auth.scopeDate}' != '${amzDate.slice(0, 8)}', from '${amzDate}'.`);
  }

  const token = header(req, 'x-amz-security-token');
  let secret: string;
  let caller: Caller;
  const key = account.keys.get(auth.accessKeyId);
  const temp = account.temps.get(auth.accessKeyId);
  if (key) {
    if (key.status !== 'Active' || token !== undefined) throw invalidClientTokenId();
    secret = key.secretAccessKey;
    caller = {
      accessKeyId: key.accessKeyId,
      principal: key.owner ? { type: 'user', userName: key.owner.userName, userId: key.owner.userId, arn: key.owner.arn } : { type: 'root' },
      temporary: null,
    };
  } else if (temp) {
    if (token !== temp.sessionToken) throw invalidClientTokenId();
    if (temp.expiration <= account.now()) throw expiredToken();
    secret = temp.secretAccessKey;
    caller = { accessKeyId: temp.accessKeyId, principal: temp.principal, temporary: temp };
  } else {
    throw invalidClientTokenId();
  }

  checkFreshness(amzDate, signedAt, Date.now());
  if (!(await signatureMatches(req, auth, secret, signedAt))) throw signatureDoesNotMatch();
  return caller;
}
