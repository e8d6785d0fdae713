// Executes a parsed template (text/template exec.go): walks the tree, evaluates pipelines,
// fields, variables and function calls with Go's rules for argument types, missing values and
// truth, and reports failures as Go does:
//   template: template:1:3: executing "template" at <truncate 0>: error calling truncate: ...
//
// Work is bounded: every node, call and loop iteration is a step, strings produced count against
// a budget, and the output has a maximum length.

import type { ArgNode, ChainNode, CommandNode, ControlNode, FieldNode, IdentifierNode, ListNode, Node, NumberNode, PipeNode, VariableNode } from './ast';
import { nodeString } from './ast';
import { truth } from './builtins';
import { TemplateError } from './errors';
import { type FuncSpec, type ParamType, FuncError, GO_TYPE_NAMES } from './func-spec';
import { sprint } from './go-printf';
import { quote } from './go-strconv';
import { GoFloat, type GoMap, type GoValue, byteLength, fromData, isMap, kindOf, mapKeys, mapLookup, typeName } from './values';

/** Nodes, calls and loop iterations one render may take. */
export const MAX_STEPS = 1_000_000;
/** Characters of output one render may write. */
export const MAX_OUTPUT = 1 << 20;
/** Characters all function results of one render may add up to. */
export const MAX_PRODUCED = 1 << 24;

/** The absent pipeline value: the first command of a pipeline has no previous value to receive. */
const MISSING: unique symbol = Symbol('missing');
type Final = GoValue | typeof MISSING;

type Signal = 'break' | 'continue' | undefined;

interface Variable {
  name: string;
  value: GoValue;
  /** Holds an element of a list or map, which Go sees as an interface{} (it names that type in errors). */
  iface?: boolean;
}

const isHexInt = (s: string): boolean => s.length > 2 && s[0] === '0' && (s[1] === 'x' || s[1] === 'X') && !/[pP]/.test(s);
const isRuneInt = (s: string): boolean => s.length > 0 && s[0] === "'";

export class Executor {
  private readonly vars: Variable[];
  private node: Node | null = null;
  private out = '';
  private steps = 0;
  private produced = 0;
  /** Whether dot is an element of a list or map being ranged over (see Variable.iface). */
  private dotIface = false;

  constructor(
    private readonly text: string,
    private readonly name: string,
    private readonly funcs: ReadonlyMap<string, FuncSpec>,
    private readonly now: Date,
    private readonly data: GoValue,
  ) {
    this.vars = [{ name: '$', value: data }];
  }

  run(root: ListNode): string {
    this.walk(this.data, root);
    return this.out;
  }

  // --- errors and limits ---------------------------------------------------------------------------

  private at(node: Node): void {
    this.node = node;
  }

  private errorf(message: string): never {
    if (!this.node) throw new TemplateError(`template: ${this.name}: ${message}`, 'execute');
    const before = this.text.slice(0, this.node.pos);
    const lineStart = before.lastIndexOf('\n') + 1;
    const line = before.split('\n').length;
    const location = `${this.name}:${line}:${byteLength(before.slice(lineStart))}`;
    throw new TemplateError(`template: ${location}: executing ${quote(this.name)} at <${nodeString(this.node)}>: ${message}`, 'execute');
  }

  private step(): void {
    if (++this.steps > MAX_STEPS) this.errorf(`execution takes more than ${MAX_STEPS} steps`);
  }

  private write(s: string): void {
    this.out += s;
    if (this.out.length > MAX_OUTPUT) this.errorf(`output is longer than ${MAX_OUTPUT} characters`);
  }

  // --- variables -----------------------------------------------------------------------------------

  private variable(name: string): Variable {
    for (let i = this.vars.length - 1; i >= 0; i--) if (this.vars[i].name === name) return this.vars[i];
    return this.errorf(`undefined variable: ${name}`);
  }

  private setVar(name: string, value: GoValue, iface = false): void {
    for (let i = this.vars.length - 1; i >= 0; i--) {
      if (this.vars[i].name === name) {
        this.vars[i].value = value;
        this.vars[i].iface = iface;
        return;
      }
    }
    this.errorf(`undefined variable: ${name}`);
  }

  private setTopVar(n: number, value: GoValue, iface: boolean): void {
    const v = this.vars[this.vars.length - n];
    v.value = value;
    v.iface = iface;
  }

  /** Walks `node` with a new dot. */
  private walkWith(dot: GoValue, iface: boolean, node: Node): Signal {
    const outer = this.dotIface;
    this.dotIface = iface;
    try {
      return this.walk(dot, node);
    } finally {
      this.dotIface = outer;
    }
  }

  // --- walking -------------------------------------------------------------------------------------

  private walk(dot: GoValue, node: Node): Signal {
    this.at(node);
    this.step();
    switch (node.type) {
      case 'action': {
        // Variables declared here live until the end of the enclosing control; a declaration prints nothing.
        const value = this.evalPipeline(dot, node.pipe);
        if (node.pipe.decl.length === 0) this.printValue(node, value);
        return undefined;
      }
      case 'break':
      case 'continue':
        return node.type;
      case 'if':
      case 'with':
        return this.walkIfOrWith(dot, node);
      case 'range':
        return this.walkRange(dot, node);
      case 'list':
        for (const n of node.nodes) {
          const signal = this.walk(dot, n);
          if (signal) return signal;
        }
        return undefined;
      case 'text':
        this.write(node.text);
        return undefined;
      default:
        return this.errorf(`unknown node: ${nodeString(node)}`);
    }
  }

  private walkIfOrWith(dot: GoValue, node: ControlNode): Signal {
    const mark = this.vars.length;
    try {
      const value = this.evalPipeline(dot, node.pipe);
      if (truth(value)) return node.type === 'with' ? this.walkWith(value, false, node.list) : this.walk(dot, node.list);
      if (node.elseList) return this.walk(dot, node.elseList);
      return undefined;
    } finally {
      this.vars.length = mark;
    }
  }

  private walkRange(dot: GoValue, r: ControlNode): Signal {
    this.at(r);
    const outer = this.vars.length;
    try {
      let value = this.evalPipeline(dot, r.pipe);
      if (value === null) value = undefined;
      const mark = this.vars.length;
      const decl = r.pipe.decl;
      // Elements of lists and maps are interface{} values to Go; the integers of `range N` are not.
      const iface = kindOf(value) !== 'int';
      /** One pass over the body; true when {{break}} ends the loop. */
      const iteration = (index: GoValue, elem: GoValue): boolean => {
        this.at(r);
        this.step();
        if (decl.length > 0) {
          if (r.pipe.isAssign) this.setVar(decl[0].ident[0], decl.length > 1 ? index : elem, decl.length === 1 && iface);
          else this.setTopVar(1, elem, iface);
        }
        if (decl.length > 1) {
          if (r.pipe.isAssign) this.setVar(decl[1].ident[0], elem, iface);
          else this.setTopVar(2, index, false);
        }
        try {
          return this.walkWith(elem, iface, r.list) === 'break';
        } finally {
          this.vars.length = mark;
        }
      };
      switch (kindOf(value)) {
        case 'int': {
          if (decl.length > 1) this.errorf(`can't use ${this.format(value)} to iterate over more than one variable`);
          const n = value as number;
          if (n <= 0) break;
          for (let i = 0; i < n; i++) if (iteration(undefined, i)) break;
          return undefined;
        }
        case 'slice': {
          const list = value as unknown[];
          if (list.length === 0) break;
          for (let i = 0; i < list.length; i++) if (iteration(i, fromData(list[i]))) break;
          return undefined;
        }
        case 'map': {
          const keys = mapKeys(value as GoMap);
          if (keys.length === 0) break;
          for (const k of keys) if (iteration(k, mapLookup(value as GoMap, k).value)) break;
          return undefined;
        }
        case 'invalid':
          break; // like an empty map
        default:
          this.errorf(`range can't iterate over ${this.format(value)}`);
      }
      return r.elseList ? this.walk(dot, r.elseList) : undefined;
    } finally {
      this.vars.length = outer;
    }
  }

  private printValue(node: Node, value: GoValue): void {
    this.at(node);
    this.write(value === undefined ? '<no value>' : this.format(value));
  }

  /** fmt's %v of a value, for output and error messages. */
  private format(value: GoValue): string {
    try {
      return sprint([value]);
    } catch (e) {
      if (e instanceof FuncError) this.errorf(e.message);
      throw e;
    }
  }

  // --- evaluation ----------------------------------------------------------------------------------

  private evalPipeline(dot: GoValue, pipe: PipeNode): GoValue {
    this.at(pipe);
    let value: Final = MISSING;
    for (const cmd of pipe.cmds) {
      value = this.evalCommand(dot, cmd, value);
      // An interface{} holding nil is no value at all once it leaves a command.
      if (value === null) value = undefined;
    }
    const result = value === MISSING ? undefined : value;
    for (const v of pipe.decl) {
      if (pipe.isAssign) this.setVar(v.ident[0], result);
      else this.vars.push({ name: v.ident[0], value: result });
    }
    return result;
  }

  private notAFunction(args: ArgNode[] | null, final: Final): void {
    if ((args && args.length > 1) || final !== MISSING) this.errorf(`can't give argument to non-function ${args ? nodeString(args[0]) : ''}`);
  }

  private evalCommand(dot: GoValue, cmd: CommandNode, final: Final): GoValue {
    const first = cmd.args[0];
    switch (first.type) {
      case 'field':
        return this.evalFieldNode(dot, first, cmd.args, final);
      case 'chain':
        return this.evalChainNode(dot, first, cmd.args, final);
      case 'identifier':
        return this.evalFunction(dot, first, cmd, cmd.args, final);
      case 'pipe':
        this.notAFunction(cmd.args, final);
        return this.evalPipeline(dot, first);
      case 'variable':
        return this.evalVariableNode(first, cmd.args, final);
    }
    this.at(first);
    this.notAFunction(cmd.args, final);
    switch (first.type) {
      case 'bool':
        return first.value;
      case 'dot':
        return dot;
      case 'nil':
        return this.errorf('nil is not a command');
      case 'number':
        return this.idealConstant(first);
      case 'string':
        return first.text;
    }
  }

  /** A number literal where no type is expected: its syntax decides between int and float64. */
  private idealConstant(n: NumberNode): GoValue {
    this.at(n);
    if (n.isFloat && !isHexInt(n.text) && !isRuneInt(n.text) && /[.eEpP]/.test(n.text)) return new GoFloat(n.float);
    if (n.isInt) return n.int;
    if (n.isUint) this.errorf(`${n.text} overflows int`);
    return undefined;
  }

  private evalFieldNode(dot: GoValue, field: FieldNode, args: ArgNode[] | null, final: Final): GoValue {
    this.at(field);
    return this.evalFieldChain(dot, this.dotIface, field.ident, args, final);
  }

  private evalChainNode(dot: GoValue, chain: ChainNode, args: ArgNode[] | null, final: Final): GoValue {
    this.at(chain);
    if (chain.node.type === 'nil') this.errorf(`indirection through explicit nil in ${nodeString(chain)}`);
    const receiver = this.evalArg(dot, null, chain.node);
    return this.evalFieldChain(receiver, false, chain.field, args, final);
  }

  private evalVariableNode(variable: VariableNode, args: ArgNode[] | null, final: Final): GoValue {
    this.at(variable);
    const { value, iface } = this.variable(variable.ident[0]);
    if (variable.ident.length === 1) {
      this.notAFunction(args, final);
      return value;
    }
    return this.evalFieldChain(value, iface ?? false, variable.ident.slice(1), args, final);
  }

  /** .A.B.C on `receiver`; every value after the first is read from a map, so is an interface{}. */
  private evalFieldChain(receiver: GoValue, iface: boolean, ident: string[], args: ArgNode[] | null, final: Final): GoValue {
    for (let i = 0; i < ident.length - 1; i++) receiver = this.evalField(ident[i], null, MISSING, receiver, iface || i > 0);
    return this.evalField(ident[ident.length - 1], args, final, receiver, iface || ident.length > 1);
  }

  private evalField(fieldName: string, args: ArgNode[] | null, final: Final, receiver: GoValue, iface: boolean): GoValue {
    if (receiver === undefined) return undefined; // a missing key's fields are missing too
    if (receiver === null) this.errorf(`nil pointer evaluating interface {}.${fieldName}`);
    if (isMap(receiver)) {
      if ((args && args.length > 1) || final !== MISSING) this.errorf(`${fieldName} is not a method but has arguments`);
      const { found, value } = mapLookup(receiver, fieldName);
      return found ? value : undefined;
    }
    return this.errorf(`can't evaluate field ${fieldName} in type ${iface ? 'interface {}' : typeName(receiver)}`);
  }

  private evalFunction(dot: GoValue, node: IdentifierNode, cmd: Node, args: ArgNode[] | null, final: Final): GoValue {
    this.at(node);
    const spec = this.funcs.get(node.ident);
    if (!spec) this.errorf(`${quote(node.ident)} is not a defined function`);
    return this.evalCall(dot, spec, cmd, node.ident, args, final);
  }

  private evalCall(dot: GoValue, spec: FuncSpec, cmd: Node, name: string, args: ArgNode[] | null, final: Final): GoValue {
    this.step();
    const callArgs = args ? args.slice(1) : []; // args[0] names the function
    const numIn = callArgs.length + (final === MISSING ? 0 : 1);
    const numFixed = spec.variadic ? spec.params.length : callArgs.length;
    if (spec.variadic) {
      if (numIn < spec.params.length) this.errorf(`wrong number of args for ${name}: want at least ${spec.params.length} got ${callArgs.length}`);
    } else if (numIn !== spec.params.length) {
      this.errorf(`wrong number of args for ${name}: want ${spec.params.length} got ${numIn}`);
    }

    // and/or stop at the first argument that decides the result, and return that argument.
    if (name === 'and' || name === 'or') {
      let v: GoValue;
      for (const a of callArgs) {
        v = this.evalArg(dot, 'value', a);
        if (truth(v) === (name === 'or')) return v;
      }
      if (final !== MISSING) v = this.validateType(final, 'value');
      return v;
    }

    const argv: GoValue[] = [];
    let i = 0;
    for (; i < numFixed && i < callArgs.length; i++) argv.push(this.evalArg(dot, spec.params[i], callArgs[i]));
    if (spec.variadic) for (; i < callArgs.length; i++) argv.push(this.evalArg(dot, spec.variadic, callArgs[i]));
    if (final !== MISSING) {
      let t: ParamType;
      if (!spec.variadic) t = spec.params[spec.params.length - 1];
      else t = numIn - 1 < numFixed ? spec.params[numIn - 1] : spec.variadic;
      argv.push(this.validateType(final, t));
    }
    if (name === 'call') {
      const callee = callArgs.length > 0 ? nodeString(callArgs[0]) : typeof final === 'string' ? final : `<${typeName(final as GoValue)} Value>`;
      argv.unshift(callee);
    }

    let result: GoValue;
    try {
      result = spec.fn(argv, { now: this.now });
    } catch (e) {
      if (!(e instanceof FuncError)) throw e;
      this.at(cmd);
      this.errorf(`error calling ${name}: ${e.message}`);
    }
    if (typeof result === 'string') {
      this.produced += result.length;
      if (this.produced > MAX_PRODUCED) this.errorf(`functions produced more than ${MAX_PRODUCED} characters`);
    }
    return result;
  }

  /** Go's evalArg: an argument for a parameter of the given type (null: no particular type). */
  private evalArg(dot: GoValue, typ: ParamType | null, n: ArgNode): GoValue {
    this.at(n);
    switch (n.type) {
      case 'dot':
        return this.validateType(dot, typ);
      case 'nil':
        if (typ === 'string' || typ === 'int') this.errorf(`cannot assign nil to ${GO_TYPE_NAMES[typ]}`);
        return typ === 'any' ? null : undefined;
      case 'field':
        return this.validateType(this.evalFieldNode(dot, n, [n], MISSING), typ);
      case 'variable':
        return this.validateType(this.evalVariableNode(n, null, MISSING), typ);
      case 'pipe':
        return this.validateType(this.evalPipeline(dot, n), typ);
      case 'identifier':
        return this.validateType(this.evalFunction(dot, n, n, null, MISSING), typ);
      case 'chain':
        return this.validateType(this.evalChainNode(dot, n, null, MISSING), typ);
    }
    switch (typ) {
      case 'string':
        if (n.type === 'string') return n.text;
        return this.errorf(`expected string; found ${nodeString(n)}`);
      case 'int':
        if (n.type === 'number' && n.isInt) return n.int;
        return this.errorf(`expected integer; found ${nodeString(n)}`);
      case 'any':
      case 'value':
        switch (n.type) {
          case 'bool':
            return n.value;
          case 'number':
            return this.idealConstant(n);
          case 'string':
            return n.text;
        }
    }
    return this.errorf(`can't handle ${nodeString(n)} for arg of type ${typ === null ? '<nil>' : GO_TYPE_NAMES[typ]}`);
  }

  /** Go's validateType: the value must exist and be assignable to the parameter's type. */
  private validateType(value: GoValue, typ: ParamType | null): GoValue {
    if (value === undefined) {
      if (typ === null || typ === 'value') return undefined;
      if (typ === 'any') return null;
      this.errorf(`invalid value; expected ${GO_TYPE_NAMES[typ]}`);
    }
    if (typ === null || typ === 'any' || typ === 'value') return value;
    if (typ === 'string' ? typeof value === 'string' : typeof value === 'number') return value;
    // A nil read from a map is an interface{} with nothing in it.
    return this.errorf(`wrong type for value; expected ${GO_TYPE_NAMES[typ]}; got ${value === null ? 'interface {}' : typeName(value)}`);
  }
}
