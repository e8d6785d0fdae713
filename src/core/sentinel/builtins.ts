// The pre-declared functions of the universe block (spec: "Built-in Functions"): length, append,
// delete, keys, values, range, the type conversions, print and error; and how print shows values.

import type { Pos } from './errors';
import { fail } from './limits';
import { describeType, SMap, UNDEFINED, type SFunction, type Value } from './values';

/** What a built-in may use of the running evaluation. */
export interface BuiltinContext {
  /** Charges `n` steps (for work proportional to a size, such as range's list). */
  charge(n: number): void;
  print(line: string): void;
}

export class Builtin implements SFunction {
  readonly kind = 'function';
  constructor(
    readonly name: string,
    readonly impl: (ctx: BuiltinContext, args: Value[], pos: Pos) => Value,
  ) {}
  call(): Value {
    throw new Error(`built-in ${this.name} is called by the evaluator only`);
  }
}

function arity(name: string, args: Value[], min: number, max: number, pos: Pos): void {
  if (args.length < min || args.length > max) {
    const want = min === max ? `${min}` : max === Infinity ? `at least ${min}` : `${min} to ${max}`;
    fail(pos, `${name} takes ${want} argument${min === 1 && max === 1 ? '' : 's'}, got ${args.length}`);
  }
}

/** Length in UTF-8 bytes (Sentinel strings are byte sequences). */
export function utf8Length(s: string): number {
  let n = s.length;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) n += 1;
    else if (c >= 0xd800 && c <= 0xdbff) {
      n += 1; // 4 bytes for the pair's 2 units
      i++;
    } else n += 2;
  }
  return n;
}

export function lengthOf(v: Value, what: string, pos: Pos): Value {
  if (v === UNDEFINED) return UNDEFINED;
  if (typeof v === 'string') return BigInt(utf8Length(v));
  if (Array.isArray(v)) return BigInt(v.length);
  if (v instanceof SMap) return BigInt(v.size);
  return fail(pos, `${what} needs a string, list or map, not ${describeType(v)}`);
}

const INT_LIT = /^[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)$/;
const FLOAT_LIT = /^[+-]?(\d+\.\d*([eE][+-]?\d+)?|\d+[eE][+-]?\d+|\.\d+([eE][+-]?\d+)?|\d+)$/;
const MIN_INT = -(2n ** 63n);
const MAX_INT = 2n ** 63n - 1n;

function toInt(v: Value): Value {
  if (typeof v === 'bigint') return v;
  if (typeof v === 'boolean') return v ? 1n : 0n;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) return UNDEFINED;
    const n = BigInt(Math.floor(v));
    return n < MIN_INT || n > MAX_INT ? UNDEFINED : n;
  }
  if (typeof v === 'string' && INT_LIT.test(v)) {
    const neg = v.startsWith('-');
    const body = v.replace(/^[+-]/, '');
    const n = /^0[0-7]+$/.test(body) ? BigInt(`0o${body.slice(1)}`) : BigInt(body);
    const r = neg ? -n : n;
    return r < MIN_INT || r > MAX_INT ? UNDEFINED : r;
  }
  return UNDEFINED;
}

function toFloat(v: Value): Value {
  if (typeof v === 'number') return v;
  if (typeof v === 'bigint') return Number(v);
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'string' && FLOAT_LIT.test(v)) return Number(v);
  return UNDEFINED;
}

function toBool(v: Value): Value {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'bigint') return v !== 0n;
  if (typeof v === 'number') return v !== 0;
  if (typeof v === 'string') {
    if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
    if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  }
  return UNDEFINED;
}

function toStr(v: Value): Value {
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'number') return Number.isFinite(v) ? v.toFixed(6) : String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return UNDEFINED;
}

function rangeOf(ctx: BuiltinContext, args: Value[], pos: Pos): Value {
  arity('range', args, 1, 3, pos);
  if (args.includes(UNDEFINED)) return UNDEFINED;
  for (const a of args) if (typeof a !== 'bigint') fail(pos, `range takes ints, not ${describeType(a)}`);
  const ints = args as bigint[];
  const [start, end, step] = ints.length === 1 ? [0n, ints[0], 1n] : [ints[0], ints[1], ints[2] ?? 1n];
  if (step === 0n) fail(pos, 'range with a zero step');
  const count = step > 0n ? (end > start ? (end - start + step - 1n) / step : 0n) : start > end ? (start - end - step - 1n) / -step : 0n;
  ctx.charge(Number(count > 1_000_000_000n ? 1_000_000_000n : count));
  const out: Value[] = [];
  for (let x = start; step > 0n ? x < end : x > end; x += step) out.push(x);
  return out;
}

/** How print and the trace show a value: strings bare at the top level, quoted inside collections. */
export function formatValue(v: Value, top = true, budget = 2_000): string {
  if (typeof v === 'string') return top ? v : JSON.stringify(v);
  if (v === null) return 'null';
  if (v === UNDEFINED) return 'undefined';
  if (typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  if (typeof v === 'number') return Number.isInteger(v) && Math.abs(v) < 1e21 ? `${v}.0` : String(v);
  if (Array.isArray(v)) {
    const parts: string[] = [];
    let used = 2;
    for (const e of v) {
      if (used > budget) {
        parts.push('…');
        break;
      }
      const s = formatValue(e, false, budget - used);
      used += s.length + 2;
      parts.push(s);
    }
    return `[${parts.join(', ')}]`;
  }
  if (v instanceof SMap) {
    const parts: string[] = [];
    let used = 2;
    for (const { key, value } of v.entries.values()) {
      if (used > budget) {
        parts.push('…');
        break;
      }
      const s = `${formatValue(key, false, budget - used)}: ${formatValue(value, false, budget - used)}`;
      used += s.length + 2;
      parts.push(s);
    }
    return `{${parts.join(', ')}}`;
  }
  return v.kind === 'function' ? `func ${v.name}` : `<${v.typeName}>`;
}

const formatArgs = (args: Value[]): string => args.map((a) => formatValue(a)).join(' ');

const list: Builtin[] = [
  new Builtin('length', (_c, a, pos) => {
    arity('length', a, 1, 1, pos);
    return lengthOf(a[0], 'length', pos);
  }),
  new Builtin('append', (_c, a, pos) => {
    arity('append', a, 2, 2, pos);
    const l = a[0];
    if (!Array.isArray(l)) fail(pos, `append needs a list, not ${describeType(l)}`);
    l.push(a[1]);
    return UNDEFINED;
  }),
  new Builtin('delete', (_c, a, pos) => {
    arity('delete', a, 2, 2, pos);
    const m = a[0];
    if (!(m instanceof SMap)) fail(pos, `delete needs a map, not ${describeType(m)}`);
    if (a[1] !== UNDEFINED) m.delete(a[1]);
    return UNDEFINED;
  }),
  new Builtin('keys', (c, a, pos) => {
    arity('keys', a, 1, 1, pos);
    const m = a[0];
    if (m === UNDEFINED) return UNDEFINED;
    if (!(m instanceof SMap)) fail(pos, `keys needs a map, not ${describeType(m)}`);
    c.charge(m.size);
    return Array.from(m.entries.values(), (e) => e.key);
  }),
  new Builtin('values', (c, a, pos) => {
    arity('values', a, 1, 1, pos);
    const m = a[0];
    if (m === UNDEFINED) return UNDEFINED;
    if (!(m instanceof SMap)) fail(pos, `values needs a map, not ${describeType(m)}`);
    c.charge(m.size);
    return Array.from(m.entries.values(), (e) => e.value);
  }),
  new Builtin('range', rangeOf),
  new Builtin('int', (_c, a, pos) => {
    arity('int', a, 1, 1, pos);
    return toInt(a[0]);
  }),
  new Builtin('float', (_c, a, pos) => {
    arity('float', a, 1, 1, pos);
    return toFloat(a[0]);
  }),
  new Builtin('string', (_c, a, pos) => {
    arity('string', a, 1, 1, pos);
    return toStr(a[0]);
  }),
  new Builtin('bool', (_c, a, pos) => {
    arity('bool', a, 1, 1, pos);
    return toBool(a[0]);
  }),
  new Builtin('print', (c, a) => {
    c.print(formatArgs(a));
    return true;
  }),
  new Builtin('error', (c, a, pos) => {
    const msg = formatArgs(a);
    c.print(msg);
    return fail(pos, `error(): ${msg}`);
  }),
];

/** The universe block's functions by name. */
export const BUILTINS: ReadonlyMap<string, Builtin> = new Map(list.map((b) => [b.name, b]));
