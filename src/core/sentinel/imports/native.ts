// The plumbing shared by the standard imports: an SObject built from tables of attributes and
// functions, and the argument checks every import function makes. The rules, one place for all:
// a wrong number of arguments or an argument of the wrong type is a runtime error (the policy
// fails with that reason); an `undefined` argument makes the call answer `undefined`, as the
// language specification says of every operation on undefined.

import { SentinelRuntimeError, typeName, UNDEFINED, type SObject, type Value } from '../values';

/** A function of an import or of a value it hands out; `args` already passed the arity check. */
export type NativeFn = (args: Value[]) => Value;

export interface FnSpec {
  /** Parameter names, for messages; the last `optional` of them may be left out. */
  params: readonly string[];
  optional?: number;
  fn: NativeFn;
  /** Whether an undefined argument poisons the call (the default) or reaches `fn`. */
  passUndefined?: boolean;
}

/** An SObject answering from fixed tables. Maps, not records: a policy may ask for `__proto__`. */
export class NativeObject implements SObject {
  readonly kind = 'object' as const;
  private readonly attrs: ReadonlyMap<string, () => Value>;
  private readonly fns: ReadonlyMap<string, FnSpec>;

  constructor(
    readonly typeName: string,
    attrs: Record<string, () => Value>,
    fns: Record<string, FnSpec>,
  ) {
    this.attrs = new Map(Object.entries(attrs));
    this.fns = new Map(Object.entries(fns));
  }

  get(name: string): Value {
    const attr = this.attrs.get(name);
    return attr ? attr() : UNDEFINED;
  }

  call(name: string, args: Value[]): Value {
    const spec = this.fns.get(name);
    if (!spec) {
      const what = this.attrs.has(name) ? 'is not a function' : 'does not exist';
      throw new SentinelRuntimeError(`${this.typeName}.${name} ${what}`);
    }
    return invoke(`${this.typeName}.${name}`, spec, args);
  }

  /** The names it answers, for tests and for a printer. */
  attributeNames(): string[] {
    return [...this.attrs.keys()];
  }
  functionNames(): string[] {
    return [...this.fns.keys()];
  }
}

export function invoke(qualified: string, spec: FnSpec, args: Value[]): Value {
  const max = spec.params.length;
  const min = max - (spec.optional ?? 0);
  if (args.length < min || args.length > max) {
    const want = min === max ? `${max}` : `${min} to ${max}`;
    throw new SentinelRuntimeError(
      `${qualified}: expected ${want} argument${max === 1 ? '' : 's'} (${spec.params.join(', ')}), got ${args.length}`,
    );
  }
  if (!spec.passUndefined && args.some((a) => a === UNDEFINED)) return UNDEFINED;
  return spec.fn(args);
}

/** The error for an argument of the wrong type, worded the same everywhere. */
export function badArg(fn: string, param: string, want: string, got: Value): SentinelRuntimeError {
  return new SentinelRuntimeError(`${fn}: ${param} must be ${want}, got ${typeName(got)}`);
}

export function stringArg(fn: string, param: string, v: Value): string {
  if (typeof v !== 'string') throw badArg(fn, param, 'a string', v);
  return v;
}

export function intArg(fn: string, param: string, v: Value): bigint {
  if (typeof v !== 'bigint') throw badArg(fn, param, 'an int', v);
  return v;
}

export const INT64_MIN = -(1n << 63n);
export const INT64_MAX = (1n << 63n) - 1n;
