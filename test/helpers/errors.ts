// Asserting how a logical call fails: its CofferError's status and first message.
import { expect } from 'vitest';
import { CofferError } from '../../src/framework/errors';

/** Asserts the call fails with this status and (exact) message; without one, any message. */
export async function expectError(p: Promise<unknown>, status: number, message?: string): Promise<void> {
  let err: unknown = null;
  try {
    await p;
  } catch (e) {
    err = e;
  }
  expect(err, 'expected the call to fail').toBeInstanceOf(CofferError);
  const ce = err as CofferError;
  expect({ status: ce.status, message: ce.errors[0] }).toEqual(message === undefined ? { status, message: ce.errors[0] } : { status, message });
}
