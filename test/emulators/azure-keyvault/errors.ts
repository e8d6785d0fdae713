// The two error documents the emulator answers with: Key Vault's {"error":{"code","message",
// "innererror"}} and Entra ID's OAuth error {error, error_description "AADSTS…", error_codes, …}.
import { randomUUID } from 'node:crypto';

/** A Key Vault REST error. */
export class KvError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly innerCode?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  document(): unknown {
    return { error: { code: this.code, message: this.message, ...(this.innerCode ? { innererror: { code: this.innerCode } } : {}) } };
  }
}

/** A token endpoint refusal. */
export class AadError extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly aadsts: number,
    text: string,
  ) {
    super(text);
  }

  document(): unknown {
    const trace = randomUUID();
    const correlation = randomUUID();
    const now = new Date();
    const stamp = now.toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
    return {
      error: this.error,
      error_description: `AADSTS${this.aadsts}: ${this.message} Trace ID: ${trace} Correlation ID: ${correlation} Timestamp: ${stamp}`.replace(/ (Trace ID|Correlation ID|Timestamp):/g, '\r\n$1:'),
      error_codes: [this.aadsts],
      timestamp: stamp,
      trace_id: trace,
      correlation_id: correlation,
      error_uri: `https://login.microsoftonline.com/error?code=${this.aadsts}`,
    };
  }
}

export const badParameter = (message: string) => new KvError(400, 'BadParameter', message);

export const keyNotFound = (name: string) =>
  new KvError(
    404,
    'KeyNotFound',
    `A key with (name/id) ${name} was not found in this key vault. If you recently deleted this key you may be able to recover it using the correct recovery command. For help resolving this issue, please see https://go.microsoft.com/fwlink/?linkid=2125182`,
  );

export const keyDisabled = (op: string) => new KvError(403, 'Forbidden', `Operation ${op} is not allowed on a disabled key.`, 'KeyDisabled');

export const keyOperationForbidden = (op: string) => new KvError(403, 'Forbidden', `Operation ${op} is not permitted on this key.`, 'KeyOperationForbidden');
