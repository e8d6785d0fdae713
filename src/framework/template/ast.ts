// The parse tree of a template, shaped like Go's text/template/parse nodes, and their String()
// forms (which execution errors quote as the context: `executing "template" at <truncate 0>`).

import { quote } from './go-strconv';

export interface TextNode {
  type: 'text';
  pos: number;
  text: string;
}

export interface ActionNode {
  type: 'action';
  pos: number;
  line: number;
  pipe: PipeNode;
}

export interface ControlNode {
  type: 'if' | 'with' | 'range';
  pos: number;
  line: number;
  pipe: PipeNode;
  list: ListNode;
  elseList: ListNode | null;
}

export interface ListNode {
  type: 'list';
  pos: number;
  nodes: Node[];
}

export interface LoopControlNode {
  type: 'break' | 'continue';
  pos: number;
  line: number;
}

/** {{else}} and {{end}}: only seen while parsing, never in a finished tree. */
export interface DelimiterNode {
  type: 'else' | 'end';
  pos: number;
}

export interface PipeNode {
  type: 'pipe';
  pos: number;
  line: number;
  isAssign: boolean;
  decl: VariableNode[];
  cmds: CommandNode[];
}

export interface CommandNode {
  type: 'command';
  pos: number;
  args: ArgNode[];
}

export interface IdentifierNode {
  type: 'identifier';
  pos: number;
  ident: string;
}

export interface DotNode {
  type: 'dot';
  pos: number;
}

export interface NilNode {
  type: 'nil';
  pos: number;
}

export interface VariableNode {
  type: 'variable';
  pos: number;
  /** "$x.A.B" is ["$x", "A", "B"]. */
  ident: string[];
}

export interface FieldNode {
  type: 'field';
  pos: number;
  /** ".A.B" is ["A", "B"]. */
  ident: string[];
}

/** (pipeline).Field or function.Field. */
export interface ChainNode {
  type: 'chain';
  pos: number;
  node: ArgNode;
  field: string[];
}

export interface BoolNode {
  type: 'bool';
  pos: number;
  value: boolean;
}

export interface NumberNode {
  type: 'number';
  pos: number;
  text: string;
  isInt: boolean;
  isUint: boolean;
  isFloat: boolean;
  int: number;
  float: number;
}

export interface StringNode {
  type: 'string';
  pos: number;
  /** The literal as written, quotes included. */
  quoted: string;
  text: string;
}

export type ArgNode =
  | PipeNode
  | IdentifierNode
  | DotNode
  | NilNode
  | VariableNode
  | FieldNode
  | ChainNode
  | BoolNode
  | NumberNode
  | StringNode;

export type Node = TextNode | ActionNode | ControlNode | ListNode | LoopControlNode | DelimiterNode | ArgNode | CommandNode;

/** The node as Go's String() writes it. */
export function nodeString(n: Node): string {
  switch (n.type) {
    case 'text':
      return n.text;
    case 'action':
      return `{{${nodeString(n.pipe)}}}`;
    case 'if':
    case 'with':
    case 'range':
      return `{{${n.type} ${nodeString(n.pipe)}}}${nodeString(n.list)}${n.elseList ? `{{else}}${nodeString(n.elseList)}` : ''}{{end}}`;
    case 'list':
      return n.nodes.map(nodeString).join('');
    case 'break':
    case 'continue':
    case 'else':
    case 'end':
      return `{{${n.type}}}`;
    case 'pipe': {
      let s = '';
      if (n.decl.length > 0) s = n.decl.map(nodeString).join(', ') + (n.isAssign ? ' = ' : ' := ');
      return s + n.cmds.map(nodeString).join(' | ');
    }
    case 'command':
      return n.args.map((a) => (a.type === 'pipe' ? `(${nodeString(a)})` : nodeString(a))).join(' ');
    case 'identifier':
      return n.ident;
    case 'dot':
      return '.';
    case 'nil':
      return 'nil';
    case 'variable':
      return n.ident.join('.');
    case 'field':
      return n.ident.map((f) => '.' + f).join('');
    case 'chain':
      return (n.node.type === 'pipe' ? `(${nodeString(n.node)})` : nodeString(n.node)) + n.field.map((f) => '.' + f).join('');
    case 'bool':
      return n.value ? 'true' : 'false';
    case 'number':
      return n.text;
    case 'string':
      return n.quoted;
  }
}

/** %q of a node's string, for "unexpected . after term" messages. */
export const quotedNode = (n: Node): string => quote(nodeString(n));
