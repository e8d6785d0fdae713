// The small data imports (mfa, namespace, controlgroup) and LazyObject, the SObject every data
// import is built on: attributes computed on first read and kept for the rest of the run, because
// dataImports runs on every request and most policies read only two or three fields.

import { NativeObject } from '../imports/native';
import { SentinelRuntimeError, SMap, UNDEFINED, type SObject, type Value } from '../values';

/** How one attribute is computed from the facts it is built over. */
export type Attr<F> = (facts: F) => Value;

/** An SObject whose attributes come from a fixed table, each computed at most once per object. */
export class LazyObject<F> implements SObject {
  readonly kind = 'object' as const;
  private readonly memo = new Map<string, Value>();

  constructor(
    readonly typeName: string,
    private readonly attrs: ReadonlyMap<string, Attr<F>>,
    private readonly facts: F,
  ) {}

  get(name: string): Value {
    const hit = this.memo.get(name);
    if (hit !== undefined) return hit;
    const attr = this.attrs.get(name);
    if (!attr) return UNDEFINED;
    const v = attr(this.facts);
    this.memo.set(name, v);
    return v;
  }

  call(name: string): Value {
    throw new SentinelRuntimeError(`${this.typeName}.${name} ${this.attrs.has(name) ? 'is not a function' : 'does not exist'}`);
  }

  attributeNames(): string[] {
    return [...this.attrs.keys()];
  }
}

/** A table of attributes; a Map, not a record, because a policy may ask for `__proto__`. */
export const attrTable = <F>(attrs: Record<string, Attr<F>>): ReadonlyMap<string, Attr<F>> => new Map(Object.entries(attrs));

/** Seconds as a Sentinel int (whole seconds; UNDEFINED when the host did not say). */
export function seconds(s: number | undefined): Value {
  return s === undefined || !Number.isFinite(s) ? UNDEFINED : BigInt(Math.trunc(s));
}

/** Seconds as Vault's nanosecond durations, the unit the time import's arithmetic uses. */
export function nanos(s: number | undefined): Value {
  const v = seconds(s);
  return typeof v === 'bigint' ? v * 1_000_000_000n : v;
}

/** A map of string keys. */
export const smap = (entries: Record<string, Value>): SMap => SMap.of(Object.entries(entries));

/** Coffer serves only the root namespace. */
export const rootNamespace = (): SMap => smap({ id: 'root', path: '' });

/**
 * `mfa.methods.<name>`: Coffer has no MFA yet, so every method, whatever its name, answers
 * `{valid: false}` and a policy requiring MFA fails closed. An SObject rather than a map so that
 * both `methods.okta` and `methods["okta"]` find it (the evaluator selects and string-indexes
 * SObjects through get). Each read is a fresh map: a policy writing `valid = true` into one
 * changes nothing the next read sees.
 */
const mfaMethods: SObject = {
  kind: 'object',
  typeName: 'mfa_methods',
  get: () => smap({ valid: false }),
  call: (name) => {
    throw new SentinelRuntimeError(`mfa.methods.${name} is not a function`);
  },
};

export function mfaImport(): SObject {
  return new NativeObject('mfa', { methods: () => mfaMethods }, {});
}

export function namespaceImport(): SObject {
  return new NativeObject('namespace', { id: () => 'root', path: () => '' }, {});
}

/** No control groups: no authorisation time and nobody has authorised. */
export function controlGroupImport(): SObject {
  return new NativeObject('controlgroup', { time: () => UNDEFINED, authorizations: () => [] }, {});
}
