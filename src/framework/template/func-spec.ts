// How template functions are declared: their parameter types (which decide how arguments are
// checked and converted, as Go's reflection does for a FuncMap), and how they fail.

import type { GoValue } from './values';

/**
 * A parameter's Go type: `string` and `int` are checked strictly (a literal of another kind is
 * "expected string; found 5"); `any` is interface{} (an absent value arrives as nil); `value` is
 * reflect.Value, the type Go's own builtins take (an absent value arrives as is).
 */
export type ParamType = 'string' | 'int' | 'any' | 'value';

export const GO_TYPE_NAMES: Record<ParamType, string> = {
  string: 'string',
  int: 'int',
  any: 'interface {}',
  value: 'reflect.Value',
};

export interface FuncContext {
  /** The time the template renders at: unix_time, unix_time_millis and timestamp read it. */
  now: Date;
}

export interface FuncSpec {
  params: ParamType[];
  /** The element type of a final variadic parameter, when there is one. */
  variadic?: ParamType;
  fn(args: GoValue[], ctx: FuncContext): GoValue;
}

/** A function's own error: execution stops with "error calling <name>: <message>". */
export class FuncError extends Error {}

/** The longest string a single function may produce (random, printf paddings, ...). */
export const MAX_STRING = 1 << 20;
