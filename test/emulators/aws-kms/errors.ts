// The errors the emulated KMS answers with: a status, the __type code and a message. Handlers
// throw them; the server renders them as AWS JSON 1.1 error documents.

export class KmsError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** Failures of the request's authentication, which AWS's front end reports in its own namespace. */
export const COMMON_NAMESPACE = 'com.amazon.coral.service#';
export const AUTH_CODES = new Set(['UnrecognizedClientException', 'InvalidSignatureException', 'IncompleteSignatureException', 'MissingAuthenticationTokenException']);

export const validation = (message: string) => new KmsError(400, 'ValidationException', message);
export const missingMember = (member: string) => validation(`1 validation error detected: Value null at '${member}' failed to satisfy constraint: Member must not be null`);
export const notFound = (message: string) => new KmsError(400, 'NotFoundException', message);
export const disabled = (arn: string) => new KmsError(400, 'DisabledException', `${arn} is disabled.`);
export const invalidState = (arn: string) => new KmsError(400, 'KMSInvalidStateException', `${arn} is pending deletion.`);
export const invalidKeyUsage = (arn: string, usage: string, op: string) => new KmsError(400, 'InvalidKeyUsageException', `${arn} key usage is ${usage} which is not valid for ${op}.`);
export const alreadyExists = (message: string) => new KmsError(400, 'AlreadyExistsException', message);
export const invalidSignature = () => new KmsError(400, 'KMSInvalidSignatureException', 'The signature is not valid for the message, key and signing algorithm.');
export const invalidCiphertext = () => new KmsError(400, 'InvalidCiphertextException', 'The ciphertext could not be decrypted with this key and encryption algorithm.');

export const unrecognizedClient = () => new KmsError(400, 'UnrecognizedClientException', 'The security token included in the request is invalid.');
export const invalidSignatureRequest = (
  message = 'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
) => new KmsError(400, 'InvalidSignatureException', message);
export const incompleteSignature = (message: string) => new KmsError(400, 'IncompleteSignatureException', message);
export const missingAuthentication = () => new KmsError(400, 'MissingAuthenticationTokenException', 'Missing Authentication Token');
export const accessDenied = (userArn: string, op: string, resource: string) =>
  new KmsError(400, 'AccessDeniedException', `User: ${userArn} is not authorized to perform: kms:${op} on resource: ${resource} because no identity-based policy allows the kms:${op} action`);
