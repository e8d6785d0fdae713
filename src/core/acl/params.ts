// Parameter constraints of a path rule (required / denied / allowed parameters), checked against
// request data for read, create, update and patch.

import { exactText, exactToNumber, isExactNumber } from '../../framework/json-numbers';

export interface ParameterConstraints {
  /** Keys lowercased. An empty list means "any value". */
  allowed: ReadonlyMap<string, readonly unknown[]>;
  denied: ReadonlyMap<string, readonly unknown[]>;
  /** Lowercased names. */
  required: readonly string[];
}

/** Merges two value lists for the same key: an empty list (any value) wins, else concatenation. */
export function mergeValueLists(a: readonly unknown[], b: readonly unknown[]): unknown[] {
  return a.length === 0 || b.length === 0 ? [] : [...a, ...b];
}

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((v, i) => deepEqual(v, b[i]));
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const keys = Object.keys(ra);
  return keys.length === Object.keys(rb).length && keys.every((k) => Object.hasOwn(rb, k) && deepEqual(ra[k], rb[k]));
}

/**
 * Vault's glob for parameter values: a leading and/or trailing `*`. Patterns shorter than two
 * characters are literal, so a lone "*" only matches the string "*" (as in Vault).
 */
export function globMatch(pattern: string, value: string): boolean {
  if (pattern.length < 2) return pattern === value;
  const lead = pattern.startsWith('*');
  const trail = pattern.endsWith('*');
  if (lead && trail) return value.includes(pattern.slice(1, -1));
  if (lead) return value.endsWith(pattern.slice(1));
  if (trail) return value.startsWith(pattern.slice(0, -1));
  return value === pattern;
}

/** One policy value against one request value: strings by glob, anything else by deep equality. */
export function valueMatches(policyValue: unknown, requestValue: unknown): boolean {
  // A number kept exact compares as text with a string, as a number with anything else.
  if (isExactNumber(requestValue)) requestValue = typeof policyValue === 'string' ? exactText(requestValue) : exactToNumber(requestValue);
  if (typeof policyValue === 'string' && typeof requestValue === 'string') return globMatch(policyValue, requestValue);
  return deepEqual(policyValue, requestValue);
}

const inList = (value: unknown, list: readonly unknown[]): boolean => list.some((p) => valueMatches(p, value));

/**
 * Allowed: an empty list allows anything; an array request value must have every element
 * allowed (or equal a listed value as a whole).
 */
export function valueAllowed(value: unknown, list: readonly unknown[]): boolean {
  if (list.length === 0 || inList(value, list)) return true;
  return Array.isArray(value) && value.every((v) => inList(v, list));
}

/** Denied: an empty list denies any value; an array is denied if any element (or the whole) is. */
export function valueDenied(value: unknown, list: readonly unknown[]): boolean {
  if (list.length === 0 || inList(value, list)) return true;
  return Array.isArray(value) && value.some((v) => inList(v, list));
}

/** Why the request data breaks the constraints, or null when it satisfies them. */
export function parameterProblem(c: ParameterConstraints, data: Record<string, unknown>): string | null {
  // Required names are lowercase; the request must carry them verbatim (backends read fields by
  // exact name, so "TTL" would not satisfy a required "ttl").
  for (const name of c.required) {
    if (!Object.hasOwn(data, name)) return `required parameter "${name}" is missing`;
  }
  const entries = Object.entries(data);
  if (entries.length === 0) return null;

  if (c.denied.has('*')) return 'all parameters are denied';
  for (const [key, value] of entries) {
    const list = c.denied.get(key.toLowerCase());
    if (list && valueDenied(value, list)) return `parameter "${key}" is denied`;
  }

  if (c.allowed.size === 0) return null;
  const allowAll = c.allowed.has('*');
  if (allowAll && c.allowed.size === 1) return null;
  for (const [key, value] of entries) {
    const list = c.allowed.get(key.toLowerCase());
    if (!list) {
      if (!allowAll) return `parameter "${key}" is not allowed`;
    } else if (!valueAllowed(value, list)) {
      return `value of parameter "${key}" is not allowed`;
    }
  }
  return null;
}
