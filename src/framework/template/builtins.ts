// Go's predefined template functions (text/template funcs.go): and, or, not, call, comparisons,
// len, index, slice, print, printf, println, html, js, urlquery. `and` and `or` are
// short-circuiting and `call` needs the callee's name: the executor handles those three.

import { type FuncSpec, FuncError } from './func-spec';
import { sprint, sprintf, sprintln } from './go-printf';
import { isPrint } from './go-strconv';
import {
  type GoFloat,
  type GoMap,
  type GoValue,
  byteLength,
  compareStrings,
  fromData,
  fromUtf8,
  isTrue,
  kindOf,
  mapLookup,
  mapSize,
  typeName,
  utf8,
} from './values';

/** Go's indirectInterface: a nil interface is no value at all. */
const indirect = (v: GoValue): GoValue => (v === null ? undefined : v);

export const truth = (v: GoValue): boolean => isTrue(indirect(v));

type BasicKind = 'bool' | 'int' | 'float' | 'string' | null;

function basicKind(v: GoValue): BasicKind {
  const k = kindOf(v);
  return k === 'bool' || k === 'int' || k === 'float' || k === 'string' ? k : null;
}

const numberOf = (v: GoValue): number => (typeof v === 'number' ? v : (v as GoFloat).value);

function eq(args: GoValue[]): boolean {
  const a = indirect(args[0]);
  if (args.length < 2) throw new FuncError('missing argument for comparison');
  const k1 = basicKind(a);
  for (const arg of args.slice(1)) {
    const b = indirect(arg);
    const k2 = basicKind(b);
    let equal = false;
    if (k1 !== k2) {
      if (a !== undefined && b !== undefined) throw new FuncError(`incompatible types for comparison: ${typeName(a)} and ${typeName(b)}`);
    } else if (k1 === 'int' || k1 === 'float') equal = numberOf(a) === numberOf(b);
    else if (k1 !== null) equal = a === b;
    else {
      // Neither is a basic type: only comparisons with nil are possible.
      if (kindOf(a) !== kindOf(b) && a !== undefined && b !== undefined) {
        throw new FuncError(`non-comparable types ${sprintf('%s', [a])}: ${typeName(a)}, ${typeName(b)}: ${sprintf('%v', [b])}`);
      }
      if (a === undefined || b === undefined) equal = a === b;
      else throw new FuncError(`non-comparable type ${sprintf('%s', [b])}: ${typeName(b)}`);
    }
    if (equal) return true;
  }
  return false;
}

function lt(x: GoValue, y: GoValue): boolean {
  const a = indirect(x);
  const k1 = basicKind(a);
  if (k1 === null) throw new FuncError('invalid type for comparison');
  const b = indirect(y);
  const k2 = basicKind(b);
  if (k2 === null) throw new FuncError('invalid type for comparison');
  if (k1 !== k2) throw new FuncError(`incompatible types for comparison: ${typeName(a)} and ${typeName(b)}`);
  switch (k1) {
    case 'bool':
      throw new FuncError('invalid type for comparison');
    case 'string':
      return compareStrings(a as string, b as string) < 0;
    default:
      return numberOf(a) < numberOf(b);
  }
}

const le = (a: GoValue, b: GoValue): boolean => lt(a, b) || eq([a, b]);

function length(v: GoValue): number {
  if (v === null) throw new FuncError('len of nil pointer');
  if (v === undefined) throw new FuncError('reflect: call of reflect.Value.Type on zero Value');
  switch (kindOf(v)) {
    case 'string':
      return byteLength(v as string);
    case 'slice':
      return (v as unknown[]).length;
    case 'map':
      return mapSize(v as GoMap);
    default:
      throw new FuncError(`len of type ${typeName(v)}`);
  }
}

/** Go's indexArg: an int within [0, cap]. */
function indexArg(index: GoValue, cap: number): number {
  if (index === undefined) throw new FuncError('cannot index slice/array with nil');
  if (typeof index !== 'number') throw new FuncError(`cannot index slice/array with type ${typeName(index)}`);
  if (index < 0 || index > cap) throw new FuncError(`index out of range: ${index}`);
  return index;
}

function index(args: GoValue[]): GoValue {
  let item = indirect(args[0]);
  if (item === undefined) throw new FuncError('index of untyped nil');
  for (const arg of args.slice(1)) {
    const i = indirect(arg);
    if (item === null) throw new FuncError('index of nil pointer');
    const kind = kindOf(item);
    if (kind === 'string') {
      const bytes = utf8(item as string);
      const x = indexArg(i, bytes.length);
      if (x === bytes.length) throw new FuncError('reflect: string index out of range');
      item = bytes[x];
    } else if (kind === 'slice') {
      const list = item as unknown[];
      const x = indexArg(i, list.length);
      if (x === list.length) throw new FuncError('reflect: slice index out of range');
      item = fromData(list[x]);
    } else if (kind === 'map') {
      if (i === undefined) throw new FuncError('value is nil; should be of type string');
      if (typeof i !== 'string') throw new FuncError(`value has type ${typeName(i)}; should be string`);
      const { found, value } = mapLookup(item as GoMap, i);
      item = found ? value : null; // a missing key gives the element type's zero value: a nil interface{}
    } else throw new FuncError(`can't index item of type ${typeName(item)}`);
  }
  return item;
}

function slice(args: GoValue[]): GoValue {
  const item = indirect(args[0]);
  if (item === undefined) throw new FuncError('slice of untyped nil');
  const indexes = args.slice(1);
  if (indexes.length > 3) throw new FuncError(`too many slice indexes: ${indexes.length}`);
  const kind = kindOf(item);
  let cap: number;
  if (kind === 'string') {
    if (indexes.length === 3) throw new FuncError('cannot 3-index slice a string');
    cap = byteLength(item as string);
  } else if (kind === 'slice') cap = (item as unknown[]).length;
  else throw new FuncError(`can't slice item of type ${typeName(item)}`);
  const idx = [0, cap, 0];
  indexes.forEach((v, i) => {
    idx[i] = indexArg(indirect(v), cap);
  });
  if (idx[0] > idx[1]) throw new FuncError(`invalid slice index: ${idx[0]} > ${idx[1]}`);
  if (indexes.length === 3 && idx[1] > idx[2]) throw new FuncError(`invalid slice index: ${idx[1]} > ${idx[2]}`);
  if (kind === 'string') return fromUtf8(utf8(item as string).subarray(idx[0], idx[1]));
  return (item as unknown[]).slice(idx[0], idx[1]);
}

/** The escapers' argument handling (evalArgs): one string as is, anything else through Sprint. */
function evalArgs(args: GoValue[]): string {
  if (args.length === 1 && typeof args[0] === 'string') return args[0];
  return sprint(args.map((a) => (a === null || a === undefined ? '<no value>' : a)));
}

function htmlEscape(s: string): string {
  const map: Record<string, string> = { '\0': '\uFFFD', '"': '&#34;', "'": '&#39;', '&': '&amp;', '<': '&lt;', '>': '&gt;' };
  return s.replace(/[\0"'&<>]/g, (c) => map[c]);
}

function jsEscape(s: string): string {
  const map: Record<string, string> = { '\\': '\\\\', "'": "\\'", '"': '\\"', '<': '\\u003C', '>': '\\u003E', '&': '\\u0026', '=': '\\u003D' };
  let out = '';
  for (const ch of s) {
    const r = ch.codePointAt(0) ?? 0;
    if (ch in map) out += map[ch];
    else if (r < 0x20) out += '\\u00' + r.toString(16).toUpperCase().padStart(2, '0');
    else if (r < 0x80 || isPrint(r)) out += ch;
    else out += '\\u' + r.toString(16).toUpperCase().padStart(4, '0');
  }
  return out;
}

/** Go's url.QueryEscape. */
function queryEscape(s: string): string {
  let out = '';
  for (const b of utf8(s)) {
    const c = String.fromCharCode(b);
    if (/[A-Za-z0-9\-_.~]/.test(c)) out += c;
    else if (c === ' ') out += '+';
    else out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

export const GO_BUILTINS: Record<string, FuncSpec> = {
  // and, or and call are evaluated by the executor; these entries carry their signatures.
  and: { params: ['value'], variadic: 'value', fn: () => undefined },
  or: { params: ['value'], variadic: 'value', fn: () => undefined },
  call: {
    params: ['value'],
    variadic: 'value',
    // The executor passes the callee's name first, as Go does.
    fn: ([name, fn]) => {
      const f = indirect(fn);
      if (f === undefined) throw new FuncError('call of nil');
      throw new FuncError(`non-function ${name as string} of type ${typeName(f)}`);
    },
  },
  not: { params: ['value'], fn: ([v]) => !truth(v) },
  eq: { params: ['value'], variadic: 'value', fn: (args) => eq(args) },
  ne: { params: ['value', 'value'], fn: ([a, b]) => !eq([a, b]) },
  lt: { params: ['value', 'value'], fn: ([a, b]) => lt(a, b) },
  le: { params: ['value', 'value'], fn: ([a, b]) => le(a, b) },
  gt: { params: ['value', 'value'], fn: ([a, b]) => !le(a, b) },
  ge: { params: ['value', 'value'], fn: ([a, b]) => !lt(a, b) },
  len: { params: ['value'], fn: ([v]) => length(v) },
  index: { params: ['value'], variadic: 'value', fn: (args) => index(args) },
  slice: { params: ['value'], variadic: 'value', fn: (args) => slice(args) },
  print: { params: [], variadic: 'any', fn: (args) => sprint(args) },
  printf: { params: ['string'], variadic: 'any', fn: ([format, ...args]) => sprintf(format as string, args) },
  println: { params: [], variadic: 'any', fn: (args) => sprintln(args) },
  html: { params: [], variadic: 'any', fn: (args) => htmlEscape(evalArgs(args)) },
  js: { params: [], variadic: 'any', fn: (args) => jsEscape(evalArgs(args)) },
  urlquery: { params: [], variadic: 'any', fn: (args) => queryEscape(evalArgs(args)) },
};
