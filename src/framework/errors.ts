// Logical errors carry the HTTP status and the `errors` list of Vault's error envelope.
// Handlers throw these; the HTTP layer turns them into `{"errors": [...]}` with the status.

import { CryptoInputError } from '../crypto/errors';

export class CofferError extends Error {
  constructor(
    readonly status: number,
    readonly errors: string[],
    /** Extra members for the error body (rare: e.g. `data` alongside `errors`). */
    readonly extra?: Record<string, unknown>,
  ) {
    super(errors.join('; ') || `HTTP ${status}`);
  }
}

/** Vault wraps many messages with hashicorp/go-multierror's formatting. */
export function multierror(messages: string[]): string {
  const head = messages.length === 1 ? '1 error occurred:' : `${messages.length} errors occurred:`;
  return `${head}\n${messages.map((m) => `\t* ${m}\n`).join('')}\n`;
}

export const badRequest = (message: string): CofferError => new CofferError(400, [message]);
/** Crypto's bad-input error as the 400 it answers; any other error unchanged. */
export const asCofferError = (e: unknown): unknown => (e instanceof CryptoInputError ? badRequest(e.message) : e);
/** Vault answers a missing item with an empty error list. */
export const notFound = (): CofferError => new CofferError(404, []);
export const permissionDenied = (): CofferError => new CofferError(403, [multierror(['permission denied'])]);
/** A token was sent but is unknown, revoked or expired. */
export const invalidToken = (): CofferError => new CofferError(403, [multierror(['permission denied', 'invalid token'])]);
export const unsupportedPath = (): CofferError => new CofferError(404, [multierror(['unsupported path'])]);
export const unsupportedOperation = (): CofferError => new CofferError(405, [multierror(['unsupported operation'])]);
export const sealedError = (): CofferError => new CofferError(503, ['Vault is sealed']);
/** Vault's answer on a DR secondary to everything but its replication and health endpoints. */
export const drSecondaryError = (): CofferError => new CofferError(400, ['path disabled in replication DR secondary mode']);
/**
 * Not an error for the client: the request needs RSA key pairs of these sizes made outside the
 * mount's object first (PathDef.rsaKeysNeeded). The host asks its caller for them and runs the
 * request again; nothing was written or audited yet.
 */
export class RsaKeysNeeded extends Error {
  constructor(readonly bits: number[]) {
    super(`RSA key pairs needed: ${bits.join(', ')} bits`);
  }
}

export const noHandler = (path: string): CofferError =>
  new CofferError(404, [`no handler for route "${path}". route entry not found.`]);
