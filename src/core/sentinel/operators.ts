// The binary and unary operators on Sentinel values (spec: "Operators", "Arithmetic Operators",
// "Comparison Operators", "Set Operators"). Logical operators and `else` short-circuit, so the
// evaluator handles them itself; everything here gets both operands already evaluated.

import type { BinaryOp, UnaryOp } from './ast';
import type { Pos } from './errors';
import { fail } from './limits';
import { matches } from './regex';
import { describeType, SMap, typeName, UNDEFINED, type Value } from './values';

const isNum = (v: Value): v is bigint | number => typeof v === 'bigint' || typeof v === 'number';
const wrap64 = (n: bigint): bigint => BigInt.asIntN(64, n);

/** Arithmetic, comparison, set and regex operators. */
export function binary(op: BinaryOp, l: Value, r: Value, pos: Pos): Value {
  switch (op) {
    case '+': case '-': case '*': case '/': case '%':
      return arith(op, l, r, pos);
    case '==': case 'is':
      return equality(l, r);
    case '!=': case 'is not': {
      const eq = equality(l, r);
      return eq === UNDEFINED ? UNDEFINED : !eq;
    }
    case '<': case '<=': case '>': case '>=':
      return order(op, l, r, pos);
    case 'contains':
      return contains(l, r, pos);
    case 'not contains':
      return not(contains(l, r, pos));
    case 'in':
      return contains(r, l, pos);
    case 'not in':
      return not(contains(r, l, pos));
    case 'matches':
      return matches(l, r, pos);
    case 'not matches':
      return not(matches(l, r, pos));
    default:
      return fail(pos, `internal: operator ${op} is not evaluated here`);
  }
}

const not = (v: Value): Value => (v === UNDEFINED ? UNDEFINED : !v);

export function arith(op: '+' | '-' | '*' | '/' | '%', l: Value, r: Value, pos: Pos): Value {
  if (l === UNDEFINED || r === UNDEFINED) return UNDEFINED;
  if (typeof l === 'bigint' && typeof r === 'bigint') {
    switch (op) {
      case '+': return wrap64(l + r);
      case '-': return wrap64(l - r);
      case '*': return wrap64(l * r);
      case '/':
        if (r === 0n) fail(pos, 'integer division by zero');
        return wrap64(l / r);
      case '%':
        if (r === 0n) fail(pos, 'integer division by zero');
        return l % r;
    }
  }
  if (isNum(l) && isNum(r)) {
    const a = Number(l);
    const b = Number(r);
    switch (op) {
      case '+': return a + b;
      case '-': return a - b;
      case '*': return a * b;
      case '/': return a / b;
      case '%': return a % b;
    }
  }
  if (op === '+') {
    if (typeof l === 'string' && typeof r === 'string') return l + r;
    if (Array.isArray(l) && Array.isArray(r)) return l.concat(r);
  }
  return fail(pos, `operator ${op} does not apply to ${typeName(l)} and ${typeName(r)}`);
}

export function negate(op: UnaryOp, v: Value, pos: Pos): Value {
  if (v === UNDEFINED) return UNDEFINED;
  if (op === '-') {
    if (typeof v === 'bigint') return wrap64(-v);
    if (typeof v === 'number') return -v;
  } else if (isNum(v)) {
    return v;
  }
  return fail(pos, `unary ${op} does not apply to ${typeName(v)}`);
}

/**
 * `==`: ints and floats compare numerically; lists and maps deeply; other values of different
 * types are not comparable (undefined). `null` is comparable with everything (and equal only to
 * itself), so `x is null` and `x is not null` answer a bool whatever x holds.
 */
export function equality(l: Value, r: Value): Value {
  if (l === UNDEFINED || r === UNDEFINED) return UNDEFINED;
  if (l === null || r === null) return l === r;
  if (isNum(l) && isNum(r)) return typeof l === typeof r ? l === r : Number(l) === Number(r);
  if (typeName(l) !== typeName(r)) return UNDEFINED;
  return deepEqual(l, r);
}

/** Equality inside collections: values of different types are simply unequal. */
export function deepEqual(l: Value, r: Value): boolean {
  if (l === r) return true;
  if (isNum(l) && isNum(r)) return typeof l !== typeof r && Number(l) === Number(r);
  if (Array.isArray(l)) {
    if (!Array.isArray(r) || l.length !== r.length) return false;
    for (let i = 0; i < l.length; i++) if (!deepEqual(l[i], r[i])) return false;
    return true;
  }
  if (l instanceof SMap) {
    if (!(r instanceof SMap) || l.size !== r.size) return false;
    for (const [k, e] of l.entries) {
      const o = r.entries.get(k);
      if (!o || !deepEqual(e.value, o.value)) return false;
    }
    return true;
  }
  return false;
}

function order(op: '<' | '<=' | '>' | '>=', l: Value, r: Value, pos: Pos): Value {
  if (l === UNDEFINED || r === UNDEFINED) return UNDEFINED;
  let c: number;
  if (typeof l === 'bigint' && typeof r === 'bigint') {
    c = l < r ? -1 : l > r ? 1 : 0;
  } else if (isNum(l) && isNum(r)) {
    const a = Number(l);
    const b = Number(r);
    if (Number.isNaN(a) || Number.isNaN(b)) return false;
    c = a < b ? -1 : a > b ? 1 : 0;
  } else if (typeof l === 'string' && typeof r === 'string') {
    c = compareStrings(l, r);
  } else if (typeName(l) !== typeName(r)) {
    return UNDEFINED;
  } else {
    return fail(pos, `operator ${op} does not apply to ${typeName(l)} values (they are not ordered)`);
  }
  switch (op) {
    case '<': return c < 0;
    case '<=': return c <= 0;
    case '>': return c > 0;
    case '>=': return c >= 0;
  }
}

/**
 * Byte-wise order of the UTF-8 encodings, which is code point order. JavaScript's `<` compares
 * UTF-16 units, which disagrees only where a surrogate meets a unit at or above U+E000.
 */
export function compareStrings(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xs = x >= 0xd800 && x <= 0xdfff;
    const ys = y >= 0xd800 && y <= 0xdfff;
    if (xs !== ys) return xs ? 1 : -1;
    return x < y ? -1 : 1;
  }
  return a.length - b.length;
}

/** `collection contains value`: list elements, map keys, or substrings. */
export function contains(coll: Value, v: Value, pos: Pos): Value {
  if (coll === UNDEFINED || v === UNDEFINED) return UNDEFINED;
  if (Array.isArray(coll)) {
    for (const e of coll) if (deepEqual(e, v)) return true;
    return false;
  }
  if (coll instanceof SMap) {
    if (v === null || typeof v === 'boolean' || typeof v === 'string' || isNum(v)) return coll.has(v);
    return false;
  }
  if (typeof coll === 'string') {
    if (typeof v !== 'string') fail(pos, `a string can only contain a string, not ${describeType(v)}`);
    return coll.includes(v);
  }
  return fail(pos, `contains and in need a list, map or string, not ${describeType(coll)}`);
}
