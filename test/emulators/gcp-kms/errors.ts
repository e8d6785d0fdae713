// The errors Google answers with. Cloud KMS: {"error": {code, message, status}} with the gRPC
// status name and its HTTP mapping. The OAuth token endpoint: {"error", "error_description"}.

const HTTP: Record<string, number> = {
  INVALID_ARGUMENT: 400,
  FAILED_PRECONDITION: 400,
  OUT_OF_RANGE: 400,
  UNAUTHENTICATED: 401,
  PERMISSION_DENIED: 403,
  NOT_FOUND: 404,
  ALREADY_EXISTS: 409,
  ABORTED: 409,
  RESOURCE_EXHAUSTED: 429,
  INTERNAL: 500,
  UNIMPLEMENTED: 501,
  UNAVAILABLE: 503,
  DEADLINE_EXCEEDED: 504,
};

export class GcpError extends Error {
  readonly httpStatus: number;
  constructor(
    readonly status: string,
    message: string,
    readonly details?: unknown[],
    httpStatus?: number,
  ) {
    super(message);
    this.httpStatus = httpStatus ?? HTTP[status] ?? 500;
  }

  document(): unknown {
    return { error: { code: this.httpStatus, message: this.message, status: this.status, ...(this.details ? { details: this.details } : {}) } };
  }
}

export const invalidArgument = (message: string) => new GcpError('INVALID_ARGUMENT', message);
export const notFound = (kind: string, name: string) => new GcpError('NOT_FOUND', `${kind} ${name} not found.`);
export const alreadyExists = (kind: string, name: string) => new GcpError('ALREADY_EXISTS', `${kind} ${name} already exists.`);
export const permissionDenied = (permission: string, resource: string) =>
  new GcpError('PERMISSION_DENIED', `Permission '${permission}' denied on resource '${resource}' (or it may not exist).`, [
    { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'IAM_PERMISSION_DENIED', domain: 'cloudkms.googleapis.com', metadata: { permission, resource } },
  ]);
export const unauthenticated = (missing: boolean) =>
  new GcpError(
    'UNAUTHENTICATED',
    missing
      ? 'Request is missing required authentication credential. Expected OAuth 2 access token, login cookie or other valid authentication credential.'
      : 'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
  );
export const notEnabled = (name: string, state: string) =>
  new GcpError('FAILED_PRECONDITION', `${name} is not enabled, current state is: ${state}.`, [
    { '@type': 'type.googleapis.com/google.rpc.PreconditionFailure', violations: [{ type: `KEY_${state}`, subject: name }] },
  ]);

/** An OAuth 2.0 token endpoint refusal. */
export class OAuthError extends Error {
  constructor(
    readonly httpStatus: number,
    readonly error: string,
    readonly description: string,
  ) {
    super(`${error}: ${description}`);
  }

  document(): unknown {
    return { error: this.error, error_description: this.description };
  }
}

export const invalidGrant = (description: string) => new OAuthError(400, 'invalid_grant', description);
