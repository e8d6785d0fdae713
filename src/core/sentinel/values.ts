// Sentinel's runtime values, shared by the evaluator and the imports. Kept apart from JavaScript's
// own semantics: integers are bigints (Sentinel ints are exact), floats are numbers, `undefined`
// is a value of its own (UNDEFINED, not JavaScript's undefined), maps keep their keys by a
// canonical form, and import members are SObjects that answer attribute reads and calls.

/** Sentinel's `undefined`: a value that poisons expressions instead of failing them. */
export const UNDEFINED: unique symbol = Symbol('sentinel undefined');
export type Undefined = typeof UNDEFINED;

/** A map: entries by a canonical key (mapKey), each with its original key value. */
export class SMap {
  readonly entries = new Map<string, { key: Value; value: Value }>();

  get size(): number {
    return this.entries.size;
  }
  get(key: Value): Value {
    return this.entries.get(mapKey(key))?.value ?? UNDEFINED;
  }
  has(key: Value): boolean {
    return this.entries.has(mapKey(key));
  }
  set(key: Value, value: Value): void {
    this.entries.set(mapKey(key), { key, value });
  }
  delete(key: Value): void {
    this.entries.delete(mapKey(key));
  }
  static of(pairs: Iterable<readonly [Value, Value]>): SMap {
    const m = new SMap();
    for (const [k, v] of pairs) m.set(k, v);
    return m;
  }
}

/**
 * What an import (and values it hands out, such as a time) is: named attributes and methods. `get`
 * answers UNDEFINED for a name it does not have; `call` throws SentinelRuntimeError for one.
 */
export interface SObject {
  readonly kind: 'object';
  /** For messages and type(): "time", "strings", … */
  readonly typeName: string;
  get(name: string): Value;
  call(name: string, args: Value[]): Value;
}

/** A function value (Sentinel `func`, or a built-in). */
export interface SFunction {
  readonly kind: 'function';
  readonly name: string;
  call(args: Value[]): Value;
}

export type Value = null | Undefined | boolean | bigint | number | string | Value[] | SMap | SObject | SFunction;

/** An error a policy's run ends with (a denial with this reason; never a crash of the host). */
export class SentinelRuntimeError extends Error {}

/** The canonical key of a map key: equal Sentinel values give equal strings. */
export function mapKey(key: Value): string {
  if (key === null) return 'n';
  if (key === UNDEFINED) throw new SentinelRuntimeError('undefined cannot be a map key');
  switch (typeof key) {
    case 'boolean':
      return key ? 'b1' : 'b0';
    case 'bigint':
      return `i${key}`;
    case 'number':
      // A float equal to an int is the same key, as their == says.
      return Number.isInteger(key) ? `i${BigInt(key)}` : `f${key}`;
    case 'string':
      return `s${key}`;
  }
  throw new SentinelRuntimeError(`a ${typeName(key)} cannot be a map key`);
}

export function typeName(v: Value): string {
  if (v === null) return 'null';
  if (v === UNDEFINED) return 'undefined';
  if (Array.isArray(v)) return 'list';
  if (v instanceof SMap) return 'map';
  switch (typeof v) {
    case 'boolean':
      return 'bool';
    case 'bigint':
      return 'int';
    case 'number':
      return 'float';
    case 'string':
      return 'string';
  }
  return v.kind === 'function' ? 'func' : v.typeName;
}

/**
 * A JSON value (what the host injects as request, token, identity…) as Sentinel values: integral
 * numbers become ints, others floats, objects maps.
 */
export function fromJSON(json: unknown): Value {
  if (json === null || json === undefined) return null;
  if (typeof json === 'boolean' || typeof json === 'string') return json;
  if (typeof json === 'number') return Number.isSafeInteger(json) ? BigInt(json) : json;
  if (Array.isArray(json)) return json.map(fromJSON);
  if (typeof json === 'object') return SMap.of(Object.entries(json as Record<string, unknown>).map(([k, v]) => [k, fromJSON(v)] as const));
  throw new SentinelRuntimeError(`cannot represent a ${typeof json} in a policy`);
}

/** A value's type for messages, with its article: "an int", "a string", "undefined", "null". */
export function describeType(v: Value): string {
  const t = typeName(v);
  if (v === null || v === UNDEFINED) return t;
  return /^[aeiou]/.test(t) ? `an ${t}` : `a ${t}`;
}
