// Runtime limits for one policy evaluation, so that a hostile or buggy policy ends with a denial
// instead of holding the request. Steps and depth are the primary guards: inside workerd the clock
// may not advance during a request, so the wall-time limit is only a backstop.

import { SentinelRuntimeError } from './values';
import type { Pos } from './errors';

export const DEFAULT_MAX_STEPS = 1_000_000;
export const DEFAULT_MAX_DEPTH = 200;
export const DEFAULT_MAX_MILLIS = 1_000;

/** Longest regular expression `matches` accepts, and longest text it runs one against. */
export const MAX_REGEX_LENGTH = 1_000;
export const MAX_MATCH_INPUT = 64 * 1024;
/** print() output kept in the trace: lines, and characters per line. */
export const MAX_TRACE_LINES = 100;
export const MAX_TRACE_LINE = 1_000;

export interface Limits {
  maxSteps?: number;
  maxDepth?: number;
  maxMillis?: number;
}

/** A runtime error at a place in the policy (the message gets `line:column: ` in front). */
export class PolicyError extends SentinelRuntimeError {
  constructor(
    readonly pos: Pos | undefined,
    readonly detail: string,
  ) {
    super(pos ? `${pos.line}:${pos.column}: ${detail}` : detail);
  }
}

/** A limit was exceeded; never caught by the policy's own constructs. */
export class LimitError extends Error {}

export function fail(pos: Pos | undefined, detail: string): never {
  throw new PolicyError(pos, detail);
}
