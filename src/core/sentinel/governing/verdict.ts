// What enforcing the governing policies of one request produced: a record per policy evaluated
// (audit entries carry them), and the 403 a denial answers with — Vault's wording, naming the
// policy and its level, with the evaluation trace.

import { CofferError, multierror } from '../../../framework/errors';
import type { EnforcementLevel } from './types';

export interface SentinelRecord {
  /** "rgp/<name>" or "egp/<name>". */
  policy: string;
  level: EnforcementLevel;
  passed: boolean;
  /** A soft-mandatory failure let through by X-Vault-Policy-Override. */
  overridden?: boolean;
  /** Rules evaluated and print() output (rules only when the policy failed). */
  trace?: string[];
  /** Why the run ended early (a runtime error or a limit). */
  error?: string;
}

function denialText(r: SentinelRecord): string {
  const [kind, name] = [r.policy.slice(0, 3), r.policy.slice(4)];
  return [
    `${kind} standard policy "root/${name}" evaluation resulted in denial (enforcement level: ${r.level}).`,
    '',
    'The specific error was:',
    r.error ?? '<nil>',
    '',
    `A trace of the execution for policy "root/${name}" is available:`,
    '',
    'Result: false',
    '',
    ...(r.trace ?? []),
  ].join('\n');
}

/** The 403 for the policies that denied a request. */
export function sentinelDenial(denied: SentinelRecord[]): CofferError {
  return new CofferError(403, [multierror([...denied.map(denialText), 'permission denied'])]);
}
