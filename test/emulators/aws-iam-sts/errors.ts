// The errors the emulated IAM and STS answer with: an AWS error code, its HTTP status and message.
// Handlers throw them; the server renders them as an <ErrorResponse> document.

export class AwsError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }

  /** "Sender" for the caller's mistakes (4xx), "Receiver" for the service's own (5xx). */
  get type(): 'Sender' | 'Receiver' {
    return this.status >= 500 ? 'Receiver' : 'Sender';
  }
}

const quote = (value: string | null) => (value === null ? 'null' : `'${value}'`);

/** A 400 ValidationError in the words AWS uses for a parameter that breaks its constraints. */
export const validation = (field: string, value: string | null, constraint: string) =>
  new AwsError(400, 'ValidationError', `1 validation error detected: Value ${quote(value)} at '${field}' failed to satisfy constraint: ${constraint}`);

export const missing = (field: string) => validation(field, null, 'Member must not be null');

export const noSuchUser = (name: string) => new AwsError(404, 'NoSuchEntity', `The user with name ${name} cannot be found.`);
export const noSuchGroup = (name: string) => new AwsError(404, 'NoSuchEntity', `The group with name ${name} cannot be found.`);
export const invalidInput = (message: string) => new AwsError(400, 'InvalidInput', message);
export const malformedPolicy = (message = 'Syntax errors in policy.') => new AwsError(400, 'MalformedPolicyDocument', message);
export const limitExceeded = (message: string) => new AwsError(409, 'LimitExceeded', message);
export const accessDenied = (message: string) => new AwsError(403, 'AccessDenied', message);

// Authentication failures, answered before any action is looked at.
export const invalidClientTokenId = () => new AwsError(403, 'InvalidClientTokenId', 'The security token included in the request is invalid.');
export const expiredToken = () => new AwsError(403, 'ExpiredToken', 'The security token included in the request is expired');
export const signatureDoesNotMatch = (
  message = 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
) => new AwsError(403, 'SignatureDoesNotMatch', message);
export const missingAuthenticationToken = () => new AwsError(403, 'MissingAuthenticationToken', 'Request is missing Authentication Token');
export const incompleteSignature = (message: string) => new AwsError(400, 'IncompleteSignature', message);
