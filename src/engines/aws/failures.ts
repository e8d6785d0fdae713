// AWS failures as Vault's engine answers them: the step's prefix ("Error assuming role: ...")
// before aws-sdk-go's error text, 502 when AWS throttled the call (upstream rate limited), else 400.

import { CofferError } from '../../framework/errors';
import { AwsError } from './client';

export function awsFailure(prefix: string, e: unknown): unknown {
  if (!(e instanceof AwsError)) return e;
  return new CofferError(e.throttled ? 502 : 400, [`${prefix}: ${e.message}`]);
}

/** Runs one step against AWS; its failure carries Vault's message for that step. */
export async function withPrefix<T>(prefix: string, run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (e) {
    throw awsFailure(prefix, e);
  }
}
