// The Sentinel evaluator: runs a parsed policy (ast.ts) against the host's imports and params and
// answers whether `main` is true. It walks the tree directly; per-run state lives in one Run object
// (step and depth counters, the trace). Every failure — a runtime error, error(), a limit — ends the
// run with result false and a message carrying line:column; nothing is thrown to the caller.
//
// Semantics follow HashiCorp's Sentinel language specification; where it is silent or loose, the
// choice made is noted at the code that makes it.

import type {
  AssignStmt, BinaryExpr, Block, CallExpr, Expr, ForStmt, FuncLit, IndexExpr, Program, QuantifierExpr, RuleExpr,
  SliceExpr, Stmt,
} from './ast';
import { Builtin, BUILTINS, formatValue, lengthOf, type BuiltinContext } from './builtins';
import type { Pos } from './errors';
import {
  DEFAULT_MAX_DEPTH, DEFAULT_MAX_MILLIS, DEFAULT_MAX_STEPS, fail, LimitError, MAX_TRACE_LINE, MAX_TRACE_LINES, PolicyError,
  type Limits,
} from './limits';
import { arith, binary, equality, negate } from './operators';
import { RuleThunk, Scope, type Slot } from './scope';
import { describeType, SentinelRuntimeError, SMap, typeName, UNDEFINED, type SFunction, type SObject, type Value } from './values';

export interface PolicyInput {
  /** Import name → the object `import "name"` binds (data imports such as request, token, identity, mfa, and the standard ones). */
  imports: Record<string, SObject>;
  /** Values for `param`s (else their defaults; a param with neither is an error). */
  params?: Record<string, Value>;
  /**
   * Which of `imports` a policy sees without an `import` statement (spec: "Imports" allows
   * implicit imports; Vault's policies use `request`, `token`, `identity` unimported). Default:
   * all of them. A policy's own variable of the same name shadows an implicit import.
   */
  implicit?: readonly string[];
  limits?: Limits;
}

export interface PolicyResult {
  result: boolean;
  /** Why, when false or an error: the rules evaluated with their values, and print() output. When true: print() output only. */
  trace: string[];
  error?: string;
}

const NORMAL = 0;
const BREAK = 1;
const CONTINUE = 2;
const RETURN = 3;
type Signal = typeof NORMAL | typeof BREAK | typeof CONTINUE | typeof RETURN;

const INT_MIN = -(2n ** 63n);
const INT_MAX = 2n ** 63n - 1n;

/** A `func` value: its parameters and body, closed over the scope it was created in. */
class UserFunc implements SFunction {
  readonly kind = 'function';
  constructor(
    readonly name: string,
    readonly params: string[],
    readonly body: Block,
    readonly scope: Scope,
    readonly run: Run,
    readonly pos: Pos,
  ) {}
  call(args: Value[]): Value {
    return this.run.invoke(this, args, this.pos);
  }
}

type TraceEvent = string | { rule: string; pos: Pos; value: Value };

class Run implements BuiltinContext {
  steps = 0;
  depth = 0;
  readonly maxSteps: number;
  readonly maxDepth: number;
  readonly deadline: number;
  readonly maxMillis: number;
  readonly events: TraceEvent[] = [];
  prints = 0;
  /** The value of the `return` being unwound. */
  ret: Value = UNDEFINED;
  /** Implicit imports: the parent of the program scope, never assigned to. */
  readonly implicit = new Scope(null);
  readonly global = new Scope(this.implicit);
  readonly namedFuncs = new Set<string>();
  readonly importNames = new Set<string>();

  constructor(limits: Limits | undefined) {
    this.maxSteps = limits?.maxSteps ?? DEFAULT_MAX_STEPS;
    this.maxDepth = limits?.maxDepth ?? DEFAULT_MAX_DEPTH;
    this.maxMillis = limits?.maxMillis ?? DEFAULT_MAX_MILLIS;
    this.deadline = Date.now() + this.maxMillis;
  }

  // ---- BuiltinContext ---------------------------------------------------------------------------

  charge(n: number): void {
    this.steps += n;
    this.tick();
  }

  print(line: string): void {
    if (this.prints++ >= MAX_TRACE_LINES) return;
    this.events.push(line.length > MAX_TRACE_LINE ? `${line.slice(0, MAX_TRACE_LINE)}…` : line);
  }

  // ---- limits -----------------------------------------------------------------------------------

  private tick(): void {
    if (this.steps > this.maxSteps) throw new LimitError(`policy exceeded its step limit (${this.maxSteps})`);
    if ((this.steps & 0xfff) === 0 && Date.now() > this.deadline) {
      throw new LimitError(`policy exceeded its time limit (${this.maxMillis} ms)`);
    }
  }

  private enter(pos: Pos): void {
    if (++this.depth > this.maxDepth) {
      throw new LimitError(`policy exceeded its depth limit (${this.maxDepth}) at ${pos.line}:${pos.column}`);
    }
  }

  // ---- variables --------------------------------------------------------------------------------

  private lookup(name: string, scope: Scope, pos: Pos): Value {
    for (let s: Scope | null = scope; s; s = s.parent) {
      const v = s.vars.get(name);
      if (v !== undefined) return v instanceof RuleThunk ? this.force(v) : v;
    }
    const b = BUILTINS.get(name);
    if (b) return b;
    return fail(pos, `${name} is not defined (no variable, rule or function of that name has been assigned yet)`);
  }

  force(t: RuleThunk): Value {
    if (t.state === 2) return t.value;
    if (t.state === 1) fail(t.pos, `rule ${t.name} refers to itself`);
    t.state = 1;
    this.enter(t.pos);
    try {
      t.value = this.ruleValue(t.expr, t.scope);
    } finally {
      this.depth--;
      if (t.state === 1) t.state = 0;
    }
    t.state = 2;
    this.events.push({ rule: t.name, pos: t.pos, value: t.value });
    return t.value;
  }

  /** A `when` guard that is false makes the rule true; one that is not a bool leaves it undefined. */
  private ruleValue(r: RuleExpr, scope: Scope): Value {
    if (r.when) {
      const g = this.evalBool(r.when, scope);
      if (g === false) return true;
      if (g === UNDEFINED) return UNDEFINED;
    }
    return this.eval(r.body, scope);
  }

  private assignName(name: string, v: Slot, scope: Scope, pos: Pos): void {
    const owner = scope.find(name);
    if (owner === this.global && (this.namedFuncs.has(name) || this.importNames.has(name))) {
      fail(pos, `cannot assign to ${name}: it is ${this.namedFuncs.has(name) ? 'a named function' : 'an import'}`);
    }
    (owner === this.implicit ? this.global : (owner ?? scope)).vars.set(name, v);
  }

  // ---- program ----------------------------------------------------------------------------------

  runProgram(program: Program, input: PolicyInput): Value {
    const explicit = new Set(program.imports.map((i) => i.path));
    for (const name of input.implicit ?? Object.keys(input.imports)) {
      // An explicit import of the same name replaces the implicit one (under its alias, if any).
      const obj = input.imports[name];
      if (obj && !explicit.has(name)) this.implicit.vars.set(name, obj);
    }
    for (const imp of program.imports) {
      const name = imp.alias ?? imp.path;
      const obj = Object.prototype.hasOwnProperty.call(input.imports, imp.path) ? input.imports[imp.path] : undefined;
      if (!obj) fail(imp.pos, `import "${imp.path}" is not available`);
      if (this.global.vars.has(name)) fail(imp.pos, `import name ${name} is used twice`);
      this.global.vars.set(name, obj);
      this.importNames.add(name);
    }
    const params = input.params ?? {};
    for (const p of program.params) {
      if (this.global.vars.has(p.name) || BUILTINS.has(p.name)) fail(p.pos, `param ${p.name} conflicts with an existing name`);
      let v: Value;
      if (Object.prototype.hasOwnProperty.call(params, p.name)) v = params[p.name];
      else if (p.default) v = this.eval(p.default, this.global);
      else return fail(p.pos, `param ${p.name} is required and was not supplied`);
      this.global.vars.set(p.name, v);
    }
    this.execList(program.body, this.global);
    const main = this.global.vars.get('main');
    if (main === undefined) fail(undefined, 'policy has no main rule');
    return main instanceof RuleThunk ? this.force(main) : main;
  }

  // ---- statements -------------------------------------------------------------------------------

  execList(stmts: Stmt[], scope: Scope): Signal {
    for (let i = 0; i < stmts.length; i++) {
      const r = this.exec(stmts[i], scope);
      if (r !== NORMAL) return r;
    }
    return NORMAL;
  }

  private exec(s: Stmt, scope: Scope): Signal {
    if (++this.steps > this.maxSteps || (this.steps & 0xfff) === 0) this.tick();
    switch (s.kind) {
      case 'Assign':
        this.assign(s, scope);
        return NORMAL;
      case 'ExprStmt':
        this.eval(s.expr, scope);
        return NORMAL;
      case 'FuncDecl':
        // Named functions take a fresh name (functions page: "Named Functions"); an implicit import may be shadowed.
        if ((scope.find(s.name) ?? this.implicit) !== this.implicit || BUILTINS.has(s.name)) {
          fail(s.pos, `cannot declare function ${s.name}: the name is already used`);
        }
        scope.vars.set(s.name, new UserFunc(s.name, s.params, s.body, scope, this, s.pos));
        this.namedFuncs.add(s.name);
        return NORMAL;
      case 'If': {
        // `if` opens no scope: names assigned in its branches stay visible after it (spec: "Blocks").
        // A condition that is not a bool (undefined included) ends the run. The spec says only that
        // a true condition runs the first branch; taking `else` on undefined would let
        // `if not ok { return false }` pass when `ok` is undefined, so we fail closed instead.
        const c = this.eval(s.cond, scope);
        if (typeof c !== 'boolean') fail(s.cond.pos, `if condition is ${c === UNDEFINED ? 'undefined' : `${describeType(c)}, not a bool`}`);
        if (c) return this.execList(s.then.body, scope);
        if (!s.else) return NORMAL;
        return s.else.kind === 'If' ? this.exec(s.else, scope) : this.execList(s.else.body, scope);
      }
      case 'For':
        return this.execFor(s, scope);
      case 'Case': {
        const subject = s.subject ? this.eval(s.subject, scope) : true;
        let otherwise: Stmt[] | undefined;
        for (const cl of s.clauses) {
          if (!cl.values) {
            otherwise = cl.body;
            continue;
          }
          for (const e of cl.values) {
            if (equality(subject, this.eval(e, scope)) === true) return this.execList(cl.body, scope);
          }
        }
        return otherwise ? this.execList(otherwise, scope) : NORMAL;
      }
      case 'Break':
        return BREAK;
      case 'Continue':
        return CONTINUE;
      case 'Return':
        this.ret = this.eval(s.value, scope);
        return RETURN;
    }
  }

  private assign(s: AssignStmt, scope: Scope): void {
    const t = s.target;
    if (t.kind === 'Ident') {
      if (s.op === '=') {
        // A rule is stored unevaluated; a function literal takes the name it is assigned to (for messages).
        const v: Slot =
          s.value.kind === 'Rule' ? new RuleThunk(s.value, scope, t.name)
          : s.value.kind === 'Func' ? new UserFunc(t.name, s.value.params, s.value.body, scope, this, s.value.pos)
          : this.eval(s.value, scope);
        this.assignName(t.name, v, scope, t.pos);
        return;
      }
      const rhs = this.eval(s.value, scope);
      const old = this.lookup(t.name, scope, t.pos);
      this.assignName(t.name, this.combine(s.op, old, rhs, s.pos), scope, t.pos);
      return;
    }
    // Index assignment: the right-hand side first, then the target (spec: "Assignments").
    const rhs = this.eval(s.value, scope);
    const coll = this.eval(t.object, scope);
    const key = this.eval(t.index, scope);
    const v = s.op === '=' ? rhs : this.combine(s.op, this.indexGet(coll, key, t.pos), rhs, s.pos);
    if (Array.isArray(coll)) {
      if (typeof key !== 'bigint') fail(t.pos, `a list index must be an int, not ${describeType(key)}`);
      const i = key < 0n ? key + BigInt(coll.length) : key;
      if (i < 0n || i >= BigInt(coll.length)) fail(t.pos, `list index ${key} out of range (length ${coll.length})`);
      coll[Number(i)] = v;
    } else if (coll instanceof SMap) {
      checkKey(key, t.pos);
      coll.set(key, v);
    } else {
      fail(t.pos, `cannot assign to an index of ${describeType(coll)} (only lists and maps)`);
    }
  }

  private combine(op: string, old: Value, rhs: Value, pos: Pos): Value {
    const r = arith(op[0] as '+' | '-' | '*' | '/' | '%', old, rhs, pos);
    this.chargeSize(r);
    return r;
  }

  private chargeSize(v: Value): void {
    if (typeof v === 'string' || Array.isArray(v)) {
      if (v.length > 64) this.charge(v.length >> 3);
    }
  }

  private execFor(s: ForStmt, outer: Scope): Signal {
    const coll = this.eval(s.collection, outer);
    const scope = new Scope(outer);
    const [a, b] = s.vars;
    if (Array.isArray(coll)) {
      // The length is read on every pass: a loop that appends to its own list keeps going (until a limit).
      for (let i = 0; i < coll.length; i++) {
        if (b === undefined) scope.vars.set(a, coll[i]);
        else {
          scope.vars.set(a, BigInt(i));
          scope.vars.set(b, coll[i]);
        }
        const r = this.execList(s.body.body, scope);
        if (r === BREAK) break;
        if (r === RETURN) return r;
      }
      return NORMAL;
    }
    if (coll instanceof SMap) {
      for (const e of coll.entries.values()) {
        this.charge(1);
        scope.vars.set(a, e.key);
        if (b !== undefined) scope.vars.set(b, e.value);
        const r = this.execList(s.body.body, scope);
        if (r === BREAK) break;
        if (r === RETURN) return r;
      }
      return NORMAL;
    }
    return fail(s.collection.pos, `for needs a list or map, not ${describeType(coll)}`);
  }

  // ---- functions --------------------------------------------------------------------------------

  invoke(f: UserFunc, args: Value[], pos: Pos): Value {
    if (args.length !== f.params.length) {
      fail(pos, `${f.name} takes ${f.params.length} argument${f.params.length === 1 ? '' : 's'}, got ${args.length}`);
    }
    this.enter(pos);
    try {
      const scope = new Scope(f.scope);
      for (let i = 0; i < args.length; i++) scope.vars.set(f.params[i], args[i]);
      const r = this.execList(f.body.body, scope);
      if (r !== RETURN) fail(f.pos, `function ${f.name} ended without a return statement`);
      const v = this.ret;
      this.ret = UNDEFINED;
      return v;
    } finally {
      this.depth--;
    }
  }

  private callValue(fn: Value, args: Value[], pos: Pos): Value {
    if (fn instanceof Builtin) return fn.impl(this, args, pos);
    if (fn instanceof UserFunc) return this.invoke(fn, args, pos);
    // Calling undefined (say, a function taken from a missing map key) is undefined (spec: "Undefined").
    if (fn === UNDEFINED) return UNDEFINED;
    if (fn !== null && typeof fn === 'object' && !Array.isArray(fn) && !(fn instanceof SMap) && fn.kind === 'function') {
      const f = fn;
      return external(pos, () => f.call(args));
    }
    return fail(pos, `cannot call ${describeType(fn)}`);
  }

  private evalCall(e: CallExpr, scope: Scope): Value {
    const callee = e.callee;
    let fn: Value;
    if (callee.kind === 'Selector') {
      const obj = this.eval(callee.object, scope);
      if (isObject(obj)) {
        const args = this.evalArgs(e.args, scope);
        return external(callee.pos, () => obj.call(callee.name, args));
      }
      fn = this.select(obj, callee.name, callee.pos);
    } else {
      fn = this.eval(callee, scope);
    }
    return this.callValue(fn, this.evalArgs(e.args, scope), e.pos);
  }

  private evalArgs(exprs: Expr[], scope: Scope): Value[] {
    const out = new Array<Value>(exprs.length);
    for (let i = 0; i < exprs.length; i++) out[i] = this.eval(exprs[i], scope);
    return out;
  }

  // ---- expressions ------------------------------------------------------------------------------

  /** A boolean expression: any value but a bool counts as undefined (spec: "Boolean Expressions"). */
  evalBool(e: Expr, scope: Scope): Value {
    const v = this.eval(e, scope);
    return typeof v === 'boolean' ? v : UNDEFINED;
  }

  eval(e: Expr, scope: Scope): Value {
    if (++this.steps > this.maxSteps || (this.steps & 0xfff) === 0) this.tick();
    switch (e.kind) {
      case 'Ident':
        return this.lookup(e.name, scope, e.pos);
      case 'Int':
        if (e.value > INT_MAX) fail(e.pos, `integer literal ${e.raw} is out of the 64-bit range`);
        return e.value;
      case 'Float':
        return e.value;
      case 'String':
        return e.value;
      case 'Bool':
        return e.value;
      case 'Null':
        return null;
      case 'Undefined':
        return UNDEFINED;
      case 'List':
        return this.evalArgs(e.elements, scope);
      case 'Map': {
        const m = new SMap();
        for (const en of e.entries) {
          const k = this.eval(en.key, scope);
          checkKey(k, en.key.pos);
          m.set(k, this.eval(en.value, scope));
        }
        return m;
      }
      case 'Func':
        return this.makeFunc(e, scope);
      case 'Rule':
        // A rule not bound by an assignment (in a list, a call, a return …) is evaluated here.
        return this.ruleValue(e, scope);
      case 'Selector':
        return this.select(this.eval(e.object, scope), e.name, e.pos);
      case 'Index':
        return this.evalIndex(e, scope);
      case 'Slice':
        return this.evalSlice(e, scope);
      case 'Call':
        return this.evalCall(e, scope);
      case 'Unary': {
        if (e.op === 'not' || e.op === '!') {
          const v = this.evalBool(e.operand, scope);
          return v === UNDEFINED ? UNDEFINED : !v;
        }
        // `-9223372036854775808` is the negation of a literal one past the int range.
        if (e.op === '-' && e.operand.kind === 'Int' && e.operand.value === -INT_MIN) return INT_MIN;
        return negate(e.op, this.eval(e.operand, scope), e.pos);
      }
      case 'Binary':
        return this.evalBinary(e, scope);
      case 'Empty': {
        const n = lengthOf(this.eval(e.operand, scope), e.negated ? 'is not empty' : 'is empty', e.pos);
        if (n === UNDEFINED) return UNDEFINED;
        return (n === 0n) !== e.negated;
      }
      case 'Defined':
        return (this.eval(e.operand, scope) !== UNDEFINED) !== e.negated;
      case 'Quantifier':
        return this.evalQuantifier(e, scope);
    }
  }

  private makeFunc(e: FuncLit, scope: Scope): UserFunc {
    return new UserFunc('func', e.params, e.body, scope, this, e.pos);
  }

  /**
   * Logical operators short-circuit and follow the spec's table for undefined: only
   * `undefined or true` recovers; `undefined and x` is undefined without looking at x.
   */
  private evalBinary(e: BinaryExpr, scope: Scope): Value {
    switch (e.op) {
      case 'and': {
        const l = this.evalBool(e.left, scope);
        if (l !== true) return l;
        return this.evalBool(e.right, scope);
      }
      case 'or': {
        const l = this.evalBool(e.left, scope);
        if (l === true) return true;
        const r = this.evalBool(e.right, scope);
        return l === false || r === true ? r : UNDEFINED;
      }
      case 'xor': {
        const l = this.evalBool(e.left, scope);
        const r = this.evalBool(e.right, scope);
        return l === UNDEFINED || r === UNDEFINED ? UNDEFINED : l !== r;
      }
      case 'else': {
        const l = this.eval(e.left, scope);
        return l !== UNDEFINED ? l : this.eval(e.right, scope);
      }
      default: {
        const l = this.eval(e.left, scope);
        const r = this.eval(e.right, scope);
        const v = binary(e.op, l, r, e.opPos);
        if (e.op === '+') this.chargeSize(v);
        return v;
      }
    }
  }

  /** `x.name`: a map key, an import's attribute; undefined and null give undefined. */
  private select(obj: Value, name: string, pos: Pos): Value {
    if (obj instanceof SMap) return obj.get(name);
    if (obj === UNDEFINED || obj === null) return UNDEFINED;
    if (isObject(obj)) return external(pos, () => obj.get(name));
    return fail(pos, `cannot select .${name} on ${describeType(obj)}`);
  }

  private evalIndex(e: IndexExpr, scope: Scope): Value {
    return this.indexGet(this.eval(e.object, scope), this.eval(e.index, scope), e.pos);
  }

  private indexGet(obj: Value, key: Value, pos: Pos): Value {
    if (obj === UNDEFINED || obj === null) return UNDEFINED;
    if (obj instanceof SMap) {
      if (key === UNDEFINED) return UNDEFINED;
      checkKey(key, pos);
      return obj.get(key);
    }
    if (Array.isArray(obj)) {
      if (key === UNDEFINED) return UNDEFINED;
      if (typeof key !== 'bigint') fail(pos, `a list index must be an int, not ${describeType(key)}`);
      const n = BigInt(obj.length);
      const i = key < 0n ? key + n : key;
      return i >= 0n && i < n ? obj[Number(i)] : UNDEFINED;
    }
    if (isObject(obj)) {
      if (typeof key !== 'string') fail(pos, `an import can only be indexed with a string, not ${describeType(key)}`);
      return external(pos, () => obj.get(key));
    }
    return fail(pos, `cannot index ${describeType(obj)}`);
  }

  private evalSlice(e: SliceExpr, scope: Scope): Value {
    const obj = this.eval(e.object, scope);
    const lo = e.low ? this.eval(e.low, scope) : 0n;
    const hi = e.high ? this.eval(e.high, scope) : undefined;
    if (obj === UNDEFINED || obj === null || lo === UNDEFINED || hi === UNDEFINED) return UNDEFINED;
    if (typeof obj !== 'string' && !Array.isArray(obj)) return fail(e.pos, `cannot slice ${describeType(obj)}`);
    if (typeof lo !== 'bigint' || (hi !== undefined && typeof hi !== 'bigint')) {
      return fail(e.pos, 'slice bounds must be ints');
    }
    if (Array.isArray(obj)) {
      const h = hi === undefined ? BigInt(obj.length) : hi;
      if (lo < 0n || lo > h || h > BigInt(obj.length)) return UNDEFINED;
      return obj.slice(Number(lo), Number(h));
    }
    return sliceString(obj, lo, hi);
  }

  private evalQuantifier(e: QuantifierExpr, outer: Scope): Value {
    const coll = this.eval(e.collection, outer);
    if (coll === UNDEFINED || coll === null) return UNDEFINED;
    const isList = Array.isArray(coll);
    if (!isList && !(coll instanceof SMap)) return fail(e.collection.pos, `${e.op} needs a list or map, not ${describeType(coll)}`);
    const scope = new Scope(outer);
    const [a, b] = e.vars;
    const op = e.op;
    // all: a chain of `and` (false or undefined ends it; empty is true). any: a chain of `or` (true
    // ends it; an undefined met on the way leaves undefined unless a later body is true; empty is
    // false). filter: an undefined body makes the whole result undefined.
    let result: Value = op === 'all' ? true : false;
    let sawUndefined = false;
    const kept: Value[] = [];
    const keptMap = isList ? undefined : new SMap();
    const visit = (k: Value, v: Value): boolean => {
      if (op === 'map') {
        kept.push(this.eval(e.body, scope));
        return false;
      }
      const r = this.evalBool(e.body, scope);
      switch (op) {
        case 'all':
          if (r === true) return false;
          result = r;
          return true;
        case 'any':
          if (r === true) {
            result = true;
            return true;
          }
          if (r === UNDEFINED) sawUndefined = true;
          return false;
        case 'filter':
          if (r === UNDEFINED) {
            result = UNDEFINED;
            return true;
          }
          if (r) {
            if (keptMap) keptMap.set(k, v);
            else kept.push(v);
          }
          return false;
      }
    };
    let stopped = false;
    if (Array.isArray(coll)) {
      for (let i = 0; i < coll.length && !stopped; i++) {
        const v = coll[i];
        if (b === undefined) scope.vars.set(a, v);
        else {
          scope.vars.set(a, BigInt(i));
          scope.vars.set(b, v);
        }
        stopped = visit(null, v);
      }
    } else {
      for (const en of (coll as SMap).entries.values()) {
        scope.vars.set(a, en.key);
        if (b !== undefined) scope.vars.set(b, en.value);
        if ((stopped = visit(en.key, en.value))) break;
      }
    }
    switch (op) {
      case 'all':
        return result;
      case 'any':
        return result === true ? true : sawUndefined ? UNDEFINED : false;
      case 'filter':
        return stopped ? UNDEFINED : (keptMap ?? kept);
      case 'map':
        return kept;
    }
  }

  // ---- trace ------------------------------------------------------------------------------------

  trace(full: boolean): string[] {
    const out: string[] = [];
    for (const ev of this.events) {
      if (typeof ev === 'string') out.push(`print: ${ev}`);
      else if (full) out.push(`rule ${ev.rule} (${ev.pos.line}:${ev.pos.column}) = ${formatValue(ev.value, false, 200)}`);
    }
    return out;
  }
}

function isObject(v: Value): v is SObject {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !(v instanceof SMap) && v.kind === 'object';
}

/** Map keys are bools, numbers and strings (spec: "Map Literals"). */
function checkKey(k: Value, pos: Pos): void {
  const t = typeof k;
  if (t === 'string' || t === 'bigint' || t === 'boolean' || (t === 'number' && !Number.isNaN(k))) return;
  fail(pos, `a map key must be a bool, int, float or string, not ${describeType(k)}`);
}

/** Runs an import's code: its errors get the policy position; anything else it throws is reported, not rethrown. */
function external(pos: Pos, f: () => Value): Value {
  try {
    const v = f();
    return v === undefined ? UNDEFINED : v;
  } catch (e) {
    if (e instanceof PolicyError || e instanceof LimitError) throw e;
    if (e instanceof SentinelRuntimeError) fail(pos, e.message);
    return fail(pos, `import failed: ${e instanceof Error ? e.message : String(e)}`);
  }
}

const ASCII = /^[\x00-\x7f]*$/;

/** Strings slice by UTF-8 bytes (spec: "Slice Expressions", "String Literals"). */
function sliceString(s: string, lo: bigint, hi: bigint | undefined): Value {
  if (ASCII.test(s)) {
    const h = hi === undefined ? BigInt(s.length) : hi;
    if (lo < 0n || lo > h || h > BigInt(s.length)) return UNDEFINED;
    return s.slice(Number(lo), Number(h));
  }
  const bytes = new TextEncoder().encode(s);
  const h = hi === undefined ? BigInt(bytes.length) : hi;
  if (lo < 0n || lo > h || h > BigInt(bytes.length)) return UNDEFINED;
  return new TextDecoder().decode(bytes.subarray(Number(lo), Number(h)));
}

// ---- entry points ---------------------------------------------------------------------------------

/** Evaluates a parsed policy. Never throws: every failure is `result: false` with `error`. */
export function evaluatePolicy(program: Program, input: PolicyInput): PolicyResult {
  const run = new Run(input.limits);
  try {
    const main = run.runProgram(program, input);
    if (main === true) return { result: true, trace: run.trace(false) };
    if (main === false) return { result: false, trace: run.trace(true) };
    if (main === UNDEFINED) return { result: false, trace: [...run.trace(true), 'main is undefined (treated as false)'] };
    return { result: false, trace: run.trace(true), error: `main must be a bool, not ${describeType(main)}` };
  } catch (e) {
    let error: string;
    if (e instanceof SentinelRuntimeError || e instanceof LimitError) error = e.message;
    else if (e instanceof RangeError && /call stack/i.test(e.message)) error = 'policy exceeded the evaluator stack';
    else error = `internal evaluator error: ${e instanceof Error ? e.message : String(e)}`;
    return { result: false, trace: run.trace(true), error };
  }
}

/** A reusable evaluator for one parsed policy (the host caches one per policy version). */
export function compilePolicy(program: Program): (input: PolicyInput) => PolicyResult {
  return (input) => evaluatePolicy(program, input);
}
