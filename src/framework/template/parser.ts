// The parser of Go's text/template (parse/parse.go), over the lexer's tokens: the same grammar,
// the same checks at parse time (undefined functions and variables, misplaced else/end/break,
// empty pipelines) and the same messages, "template: <name>:<line>: <message>".
//
// {{define}}, {{template}} and {{block}} (named sub-templates) are not supported.

import type {
  ArgNode,
  ChainNode,
  CommandNode,
  ControlNode,
  DelimiterNode,
  FieldNode,
  ListNode,
  Node,
  NumberNode,
  PipeNode,
  VariableNode,
} from './ast';
import { nodeString, quotedNode } from './ast';
import { TemplateError } from './errors';
import { parseGoFloat, parseGoInt, parseGoUint, quote, unquote, unquoteRune } from './go-strconv';
import { type Token, type TokenType, lex, tokenString } from './lexer';

/** Deepest nesting of parenthesised pipelines (Go allows 10000; the stack here is smaller). */
export const MAX_PAREN_DEPTH = 1000;
/** Deepest nesting of if/with/range. */
export const MAX_CONTROL_DEPTH = 1000;

const TERM_STARTS = new Set<TokenType>([
  'bool',
  'charConstant',
  'complex',
  'dot',
  'field',
  'identifier',
  'number',
  'nil',
  'rawString',
  'string',
  'variable',
  'leftParen',
]);

type ListEnd = DelimiterNode;

export class Parser {
  private readonly tokens: Token[];
  private i = 0;
  /** Index of the furthest token read: Go reports errors at the line of the latest token lexed. */
  private furthest = 0;
  private vars: string[] = ['$'];
  private actionLine = 0;
  private rangeDepth = 0;
  private parenDepth = 0;
  private controlDepth = 0;

  constructor(
    text: string,
    private readonly name: string,
    private readonly hasFunction: (name: string) => boolean,
  ) {
    this.tokens = lex(text);
  }

  // --- token stream ------------------------------------------------------------------------------

  private next(): Token {
    const t = this.tokens[Math.min(this.i, this.tokens.length - 1)];
    this.furthest = Math.max(this.furthest, Math.min(this.i, this.tokens.length - 1));
    this.i++;
    return t;
  }

  private backup(): void {
    this.i--;
  }

  private peek(): Token {
    const t = this.next();
    this.backup();
    return t;
  }

  private nextNonSpace(): Token {
    let t: Token;
    do t = this.next();
    while (t.type === 'space');
    return t;
  }

  private peekNonSpace(): Token {
    const t = this.nextNonSpace();
    this.backup();
    return t;
  }

  // --- errors --------------------------------------------------------------------------------------

  private errorf(message: string): never {
    const line = this.tokens[this.furthest]?.line ?? 1;
    throw new TemplateError(`template: ${this.name}:${line}: ${message}`, 'parse');
  }

  private unexpected(token: Token, context: string): never {
    if (token.type === 'error') {
      let extra = '';
      if (this.actionLine !== 0 && this.actionLine !== token.line) {
        extra = ` in action started at ${this.name}:${this.actionLine}`;
        if (token.val.endsWith(' action')) extra = extra.slice(' in action'.length);
      }
      this.errorf(token.val + extra);
    }
    this.errorf(`unexpected ${tokenString(token)} in ${context}`);
  }

  private expect(type: TokenType, context: string): Token {
    const token = this.nextNonSpace();
    if (token.type !== type) this.unexpected(token, context);
    return token;
  }

  // --- structure -----------------------------------------------------------------------------------

  parse(): ListNode {
    const root: ListNode = { type: 'list', pos: this.peek().pos, nodes: [] };
    while (this.peek().type !== 'eof') {
      const n = this.textOrAction();
      if (n.type === 'end' || n.type === 'else') this.errorf(`unexpected ${nodeString(n)}`);
      root.nodes.push(n);
    }
    return root;
  }

  private itemList(): { list: ListNode; next: ListEnd } {
    const list: ListNode = { type: 'list', pos: this.peekNonSpace().pos, nodes: [] };
    while (this.peekNonSpace().type !== 'eof') {
      const n = this.textOrAction();
      if (n.type === 'end' || n.type === 'else') return { list, next: n };
      list.nodes.push(n);
    }
    return this.errorf('unexpected EOF');
  }

  private textOrAction(): Node {
    const token = this.nextNonSpace();
    switch (token.type) {
      case 'text':
        return { type: 'text', pos: token.pos, text: token.val };
      case 'leftDelim': {
        this.actionLine = token.line;
        try {
          return this.action();
        } finally {
          this.actionLine = 0;
        }
      }
      default:
        return this.unexpected(token, 'input');
    }
  }

  private action(): Node {
    const token = this.nextNonSpace();
    switch (token.type) {
      case 'block':
      case 'define':
      case 'template':
        return this.errorf(`{{${token.type}}} is not supported`);
      case 'break':
      case 'continue':
        return this.loopControl(token);
      case 'else':
        return this.elseControl();
      case 'end':
        return { type: 'end', pos: this.expect('rightDelim', 'end').pos };
      case 'if':
      case 'range':
      case 'with':
        return this.control(token.type);
    }
    this.backup();
    const first = this.peek();
    return { type: 'action', pos: first.pos, line: first.line, pipe: this.pipeline('command', 'rightDelim') };
  }

  private loopControl(keyword: Token): Node {
    const kind = keyword.type as 'break' | 'continue';
    const token = this.nextNonSpace();
    if (token.type !== 'rightDelim') this.unexpected(token, `{{${kind}}}`);
    if (this.rangeDepth === 0) this.errorf(`{{${kind}}} outside {{range}}`);
    return { type: kind, pos: keyword.pos, line: keyword.line };
  }

  private elseControl(): Node {
    const peek = this.peekNonSpace();
    // {{else if ...}} and {{else with ...}} leave the keyword for the enclosing control to read.
    if (peek.type === 'if' || peek.type === 'with') return { type: 'else', pos: peek.pos };
    return { type: 'else', pos: this.expect('rightDelim', 'else').pos };
  }

  private control(context: 'if' | 'range' | 'with'): ControlNode {
    if (this.controlDepth >= MAX_CONTROL_DEPTH) this.errorf('max control nesting depth exceeded');
    this.controlDepth++;
    const varsBefore = this.vars.length;
    try {
      const pipe = this.pipeline(context, 'rightDelim');
      if (context === 'range') this.rangeDepth++;
      let { list, next } = this.itemList();
      if (context === 'range') this.rangeDepth--;
      let elseList: ListNode | null = null;
      if (next.type === 'else') {
        const chained = this.peek().type;
        if ((context === 'if' && chained === 'if') || (context === 'with' && chained === 'with')) {
          // {{if a}}x{{else if b}}y{{end}} is {{if a}}x{{else}}{{if b}}y{{end}}{{end}}: one {{end}} closes both.
          this.next();
          elseList = { type: 'list', pos: next.pos, nodes: [this.control(chained)] };
        } else {
          ({ list: elseList, next } = this.itemList());
          if (next.type !== 'end') this.errorf(`expected end; found ${nodeString(next)}`);
        }
      }
      return { type: context, pos: pipe.pos, line: pipe.line, pipe, list, elseList };
    } finally {
      this.vars.length = varsBefore;
      this.controlDepth--;
    }
  }

  // --- pipelines -----------------------------------------------------------------------------------

  private pipeline(context: string, end: 'rightDelim' | 'rightParen'): PipeNode {
    const first = this.peekNonSpace();
    const pipe: PipeNode = { type: 'pipe', pos: first.pos, line: first.line, isAssign: false, decl: [], cmds: [] };
    // Declarations or assignments: $x := ..., $x = ..., and in range $i, $v := ...
    for (;;) {
      const v = this.peekNonSpace();
      if (v.type !== 'variable') break;
      const at = this.i;
      this.nextNonSpace();
      const after = this.peekNonSpace();
      if (after.type === 'assign' || after.type === 'declare') {
        pipe.isAssign = after.type === 'assign';
        this.nextNonSpace();
        pipe.decl.push(this.variableNode(v.pos, v.val));
        this.vars.push(v.val);
        break;
      }
      if (after.type === 'char' && after.val === ',') {
        this.nextNonSpace();
        pipe.decl.push(this.variableNode(v.pos, v.val));
        this.vars.push(v.val);
        if (context === 'range' && pipe.decl.length < 2) {
          const t = this.peekNonSpace().type;
          if (t === 'variable' || t === 'rightDelim' || t === 'rightParen') continue;
          this.errorf('range can only initialize variables');
        }
        this.errorf(`too many declarations in ${context}`);
      }
      this.i = at; // an ordinary use of the variable
      break;
    }
    for (;;) {
      const token = this.nextNonSpace();
      if (token.type === end) {
        this.checkPipeline(pipe, context);
        return pipe;
      }
      if (!TERM_STARTS.has(token.type)) this.unexpected(token, context);
      this.backup();
      pipe.cmds.push(this.command());
    }
  }

  private checkPipeline(pipe: PipeNode, context: string): void {
    if (pipe.cmds.length === 0) this.errorf(`missing value for ${context}`);
    pipe.cmds.slice(1).forEach((c, i) => {
      const t = c.args[0].type;
      if (t === 'bool' || t === 'dot' || t === 'nil' || t === 'number' || t === 'string') {
        this.errorf(`non executable command in pipeline stage ${i + 2}`);
      }
    });
  }

  private command(): CommandNode {
    const cmd: CommandNode = { type: 'command', pos: this.peekNonSpace().pos, args: [] };
    for (;;) {
      this.peekNonSpace();
      const operand = this.operand();
      if (operand) cmd.args.push(operand);
      const token = this.next();
      if (token.type === 'space') continue;
      if (token.type === 'rightDelim' || token.type === 'rightParen') this.backup();
      else if (token.type !== 'pipe') this.unexpected(token, 'operand');
      break;
    }
    if (cmd.args.length === 0) this.errorf('empty command');
    return cmd;
  }

  private operand(): ArgNode | null {
    const node = this.term();
    if (!node || this.peek().type !== 'field') return node;
    const pos = this.peek().pos;
    const fields: string[] = [];
    while (this.peek().type === 'field') fields.push(this.next().val.slice(1));
    switch (node.type) {
      case 'field':
        return { type: 'field', pos, ident: [...node.ident, ...fields] } satisfies FieldNode;
      case 'variable':
        return { type: 'variable', pos, ident: [...node.ident, ...fields] } satisfies VariableNode;
      case 'bool':
      case 'string':
      case 'number':
      case 'nil':
      case 'dot':
        return this.errorf(`unexpected . after term ${quotedNode(node)}`);
      default:
        return { type: 'chain', pos, node, field: fields } satisfies ChainNode;
    }
  }

  private term(): ArgNode | null {
    const token = this.nextNonSpace();
    switch (token.type) {
      case 'identifier':
        if (!this.hasFunction(token.val)) this.errorf(`function ${quote(token.val)} not defined`);
        return { type: 'identifier', pos: token.pos, ident: token.val };
      case 'dot':
        return { type: 'dot', pos: token.pos };
      case 'nil':
        return { type: 'nil', pos: token.pos };
      case 'variable':
        return this.useVar(token.pos, token.val);
      case 'field':
        return { type: 'field', pos: token.pos, ident: token.val.slice(1).split('.') };
      case 'bool':
        return { type: 'bool', pos: token.pos, value: token.val === 'true' };
      case 'charConstant':
      case 'complex':
      case 'number':
        return this.number(token);
      case 'leftParen': {
        if (this.parenDepth >= MAX_PAREN_DEPTH) this.errorf('max expression depth exceeded');
        this.parenDepth++;
        try {
          return this.pipeline('parenthesized pipeline', 'rightParen');
        } finally {
          this.parenDepth--;
        }
      }
      case 'string':
      case 'rawString':
        try {
          return { type: 'string', pos: token.pos, quoted: token.val, text: unquote(token.val) };
        } catch (e) {
          return this.errorf((e as Error).message);
        }
    }
    this.backup();
    return null;
  }

  private variableNode(pos: number, name: string): VariableNode {
    return { type: 'variable', pos, ident: name.split('.') };
  }

  private useVar(pos: number, name: string): VariableNode {
    const v = this.variableNode(pos, name);
    if (!this.vars.includes(v.ident[0])) this.errorf(`undefined variable ${quote(v.ident[0])}`);
    return v;
  }

  /** Go's newNumber: which of int, uint and float the literal can be. */
  private number(token: Token): NumberNode {
    const text = token.val;
    const n: NumberNode = { type: 'number', pos: token.pos, text, isInt: false, isUint: false, isFloat: false, int: 0, float: 0 };
    if (token.type === 'charConstant') {
      let r: number;
      try {
        r = unquoteRune(text);
      } catch (e) {
        this.errorf((e as Error).message);
      }
      return { ...n, isInt: true, isUint: true, isFloat: true, int: r, float: r };
    }
    if (token.type === 'complex' || text.endsWith('i')) this.errorf(`complex constants are not supported: ${quote(text)}`);
    const big = parseGoInt(text);
    const ubig = parseGoUint(text);
    n.isUint = ubig !== null;
    if (big !== null) {
      n.isInt = true;
      n.int = Number(big);
      n.isFloat = true;
      n.float = n.int;
    } else if (ubig !== null) {
      n.isFloat = true;
      n.float = Number(ubig);
    } else {
      const f = parseGoFloat(text);
      if (f !== null) {
        if (!/[.eEpP]/.test(text)) this.errorf(`integer overflow: ${quote(text)}`);
        n.isFloat = true;
        n.float = f;
        if (Number.isInteger(f) && f >= -(2 ** 63) && f < 2 ** 63) {
          n.isInt = true;
          n.int = f;
        }
        if (Number.isInteger(f) && f >= 0 && f < 2 ** 64) n.isUint = true;
      }
    }
    if (!n.isInt && !n.isUint && !n.isFloat) this.errorf(`illegal number syntax: ${quote(text)}`);
    return n;
  }
}
