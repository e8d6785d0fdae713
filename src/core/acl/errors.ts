// Kept apart from policy.ts so the HCL parser can throw it without an import cycle.

/**
 * A policy document failed to parse or validate. The message is the detail part only: callers
 * answer `failed to parse policy: <message>`.
 */
export class PolicyError extends Error {
  override name = 'PolicyError';
}
