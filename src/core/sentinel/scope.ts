// Lexical scopes (spec: "Declarations and Scope", and the Scope page): a block's variables, with a
// link to the enclosing block. Assignment updates the nearest scope that already has the name and
// otherwise declares it in the current one. Rules are stored unevaluated (RuleThunk) and forced on
// first reference.

import type { RuleExpr } from './ast';
import type { Pos } from './errors';
import type { Value } from './values';

/** A rule bound to a name: evaluated at most once, in the scope it was written in. */
export class RuleThunk {
  /** 0 not yet evaluated, 1 being evaluated (a reference now is a cycle), 2 done. */
  state: 0 | 1 | 2 = 0;
  value: Value = null;
  constructor(
    readonly expr: RuleExpr,
    readonly scope: Scope,
    readonly name: string,
  ) {}
  get pos(): Pos {
    return this.expr.pos;
  }
}

export type Slot = Value | RuleThunk;

export class Scope {
  readonly vars = new Map<string, Slot>();
  constructor(readonly parent: Scope | null) {}

  /** The nearest scope declaring `name`, if any. */
  find(name: string): Scope | null {
    for (let s: Scope | null = this; s; s = s.parent) if (s.vars.has(name)) return s;
    return null;
  }
}
