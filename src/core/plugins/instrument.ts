// Fuel: the portable guard against a plugin that never returns. Locally workerd enforces no CPU
// limit and every isolate shares one thread, so `while (true) {}` in a plugin would hang the whole
// server (in production the Worker Loader's cpuMs limit applies as well). Before loading, the
// plugin's source is rewritten so that every loop iteration and every function entry calls a tick
// that spends one unit of a budget refilled before each call from the host; once it is spent,
// every further tick throws, so the plugin can only unwind: it cannot loop or call a function of
// its own again until the next call refills it. The budget is the isolate's: calls in flight at
// the same time share it.
//
// Fuel counts steps, not time. A step is normally a few nanoseconds, but one that overflows the
// stack costs ~25 µs (a plugin that catches the RangeError and recurses again makes every other
// step one), and builtins run without steps: catastrophic regular-expression backtracking, or an
// array method over an array-like of length 2**53, still holds the thread. Fuel stops runaway
// loops and recursion; only cpuMs stops a plugin written to burn CPU.
//
// The rewrite inserts text at positions acorn finds and adds no newline inside the bundle (the
// tick's import goes after its last line), so line numbers in a plugin's stack traces stay those
// of its bundle. Names are random per load: the source cannot name the tick to shadow it, nor the
// fuel module to import it (it may import nothing anyway).
//
// Speed, measured (Node 20, acorn 8.19, median of 20 warm runs, CPU time) on a throttled 2-core
// VM that needs 12.6 s for a plain loop of 1e9 additions: acorn's own 235 KB bundle 45 ms; a
// token-dense 300 KB bundle (16,000 insertions) 184 ms, of which acorn's parse is 141 ms and the
// walk 23 ms. A cold isolate's first run takes 3-4 times as long (JIT). It runs once per isolate
// load, not per request.

import { getLineInfo, parse, type BlockStatement, type Expression, type Node, type Program, type Statement } from 'acorn';
import { simple } from 'acorn-walk';
import { toHex } from '../../crypto/encoding';
import type { PluginEntrypoint } from './contract';

/** What the Worker Loader gets: `modules` by name, `mainModule` the one whose default export is the entrypoint. */
export interface InstrumentedPlugin {
  mainModule: string;
  modules: Record<string, string>;
}

export interface InstrumentOptions {
  /** Ticks one call may spend (each loop iteration and function entry is one). */
  fuel: number;
  /** A fresh random string per call, letters and digits only; 64 random bits in hex by default. */
  random?: () => string;
}

/**
 * The start of the message of the error a tick throws once the budget is spent, and of the error
 * the wrapper throws when a call spent it (even if the plugin swallowed the first one). RPC keeps
 * only an Error's message, so the host recognises it by this prefix (isFuelExhausted).
 */
export const FUEL_EXHAUSTED = 'coffer: plugin exceeded its step budget';

/** Whether `error` (as it arrives from the plugin's isolate, over RPC) reports a spent budget. */
export function isFuelExhausted(error: unknown): boolean {
  return error instanceof Error && error.message.includes(FUEL_EXHAUSTED);
}

/** The plugin's source cannot be loaded: a syntax error, a forbidden import, no entrypoint. */
export class PluginCodeError extends Error {
  override name = 'PluginCodeError';
  /** Where, 1-based (columns count UTF-16 code units, as JavaScript engines do); absent when the problem has no place. */
  readonly line?: number;
  readonly column?: number;

  constructor(message: string, at?: { line: number; column: number }) {
    super(at ? `plugin bundle, ${at.line}:${at.column}: ${message}` : `plugin bundle: ${message}`);
    if (at) {
      this.line = at.line;
      this.column = at.column;
    }
  }
}

/** The calls the host makes; the wrapper forwards exactly these and nothing else of the plugin's class. */
export const PLUGIN_METHODS = ['describe', 'handle', 'exists', 'periodic', 'revoke', 'renew', 'renewLogin'] as const;
// Compile-time check that the list and the contract agree.
type Unlisted = Exclude<keyof PluginEntrypoint, (typeof PLUGIN_METHODS)[number]>;
const allListed: [Unlisted] extends [never] ? true : Unlisted = true;
void allListed;

/** The one module a plugin may import: its entrypoint extends WorkerEntrypoint. */
const ALLOWED_IMPORT = 'cloudflare:workers';

/**
 * Parses `source` (an ES module), refuses what a self-contained plugin bundle must not do, inserts
 * the fuel ticks and returns the modules for the Worker Loader. Throws PluginCodeError for the
 * plugin's faults.
 */
export function instrumentPlugin(source: string, options: InstrumentOptions): InstrumentedPlugin {
  const { fuel } = options;
  if (!Number.isSafeInteger(fuel) || fuel < 1) throw new RangeError(`fuel must be a positive integer, not ${fuel}`);
  const random = options.random ?? randomHex;

  const program = parseModule(source);
  checkModuleShape(source, program);

  const tick = freshName(source, random, '$coffer_tick_');
  const fuelModule = `fuel-${token(random)}.js`;
  const pluginModule = `plugin-${token(random)}.js`;
  const mainModule = `main-${token(random)}.js`;

  // Appended, not prepended: import declarations are hoisted, and this way nothing on the bundle's
  // first line (all of a minified bundle) moves. The newline ends a trailing line comment.
  const instrumented = `${insertTicks(source, program, tick)}\nimport { tick as ${tick} } from './${fuelModule}';\n`;
  return {
    mainModule,
    modules: {
      [fuelModule]: fuelModuleSource(fuel),
      [pluginModule]: instrumented,
      [mainModule]: mainModuleSource(fuelModule, pluginModule),
    },
  };
}

function parseModule(source: string): Program {
  try {
    return parse(source, { ecmaVersion: 'latest', sourceType: 'module' });
  } catch (e) {
    if (e instanceof SyntaxError && 'pos' in e && typeof e.pos === 'number') {
      // acorn appends " (line:column)" with a 0-based column; ours is 1-based and leads.
      throw new PluginCodeError(`syntax error: ${e.message.replace(/ \(\d+:\d+\)$/, '')}`, lineColumn(source, e.pos));
    }
    throw e;
  }
}

function lineColumn(source: string, offset: number): { line: number; column: number } {
  const { line, column } = getLineInfo(source, offset);
  return { line, column: column + 1 };
}

/** Only `cloudflare:workers` may be imported, and there must be a default export (import() is refused by insertTicks' walk). */
function checkModuleShape(source: string, program: Program): void {
  let hasDefault = false;
  for (const node of program.body) {
    if (node.type === 'ImportDeclaration' || node.type === 'ExportAllDeclaration' || (node.type === 'ExportNamedDeclaration' && node.source)) {
      const from = node.source!.value;
      if (from !== ALLOWED_IMPORT) {
        throw new PluginCodeError(
          `imports ${JSON.stringify(from)}: a plugin must be one self-contained bundle (only "${ALLOWED_IMPORT}" may be imported)`,
          lineColumn(source, node.start),
        );
      }
    }
    if (node.type === 'ExportDefaultDeclaration') hasDefault = true;
    if (node.type === 'ExportNamedDeclaration') {
      for (const s of node.specifiers) if ((s.exported.type === 'Identifier' ? s.exported.name : s.exported.value) === 'default') hasDefault = true;
    }
  }
  if (!hasDefault) throw new PluginCodeError('has no default export (the class of its entrypoint)');
}

/**
 * One piece of text to insert. At equal positions, closing text goes before opening text (the
 * node closed ends where the next begins); closings go innermost first, openings outermost first.
 */
interface Insertion {
  at: number;
  text: string;
  close: boolean;
  /** Length of the node the text opens or closes: the nesting order at equal positions. */
  span: number;
}

function insertTicks(source: string, program: Program, tick: string): string {
  const call = `${tick}();`;
  const edits: Insertion[] = [];
  const add = (at: number, text: string, close: boolean, node: Node) => edits.push({ at, text, close, span: node.end - node.start });

  const loopBody = (body: Statement) => {
    if (body.type === 'BlockStatement') add(body.start + 1, call, false, body);
    else {
      add(body.start, `{${call}`, false, body);
      add(body.end, '}', true, body);
    }
  };
  const functionBody = (body: BlockStatement) => {
    // After the directive prologue, so a "use strict" stays a directive. The semicolon ends a
    // directive written without one.
    let last: Statement | undefined;
    for (const statement of body.body) {
      if (statement.type === 'ExpressionStatement' && statement.directive !== undefined) last = statement;
      else break;
    }
    if (last) add(last.end, `;${call}`, false, body);
    else add(body.start + 1, call, false, body);
  };
  const expressionBody = (body: Expression) => {
    // Parenthesised whole, so an object literal, a sequence or `in` keep their meaning.
    add(body.start, `(${tick}(), (`, false, body);
    add(body.end, '))', true, body);
  };

  simple(program, {
    ForStatement: (n) => loopBody(n.body),
    ForInStatement: (n) => loopBody(n.body),
    ForOfStatement: (n) => loopBody(n.body),
    WhileStatement: (n) => loopBody(n.body),
    DoWhileStatement: (n) => loopBody(n.body),
    // Declarations, expressions, and with them every method, getter, setter and constructor.
    FunctionDeclaration: (n) => functionBody(n.body),
    FunctionExpression: (n) => functionBody(n.body),
    ArrowFunctionExpression: (n) => (n.body.type === 'BlockStatement' ? functionBody(n.body) : expressionBody(n.body)),
    // Refused here rather than in a walk of its own (a walk costs about a sixth of the parse).
    ImportExpression: (n) => {
      throw new PluginCodeError('uses import(): a plugin must be one self-contained bundle', lineColumn(source, n.start));
    },
  });

  edits.sort((a, b) => a.at - b.at || (a.close !== b.close ? (a.close ? -1 : 1) : a.close ? a.span - b.span : b.span - a.span));
  const parts: string[] = [];
  let from = 0;
  for (const edit of edits) {
    parts.push(source.slice(from, edit.at), edit.text);
    from = edit.at;
  }
  parts.push(source.slice(from));
  return parts.join('');
}

/**
 * The counter. `take()` hands the refill (and the check) to its first caller only: the wrapper,
 * which imports this module before the plugin's. The plugin cannot import it at all; this is a
 * second lock. This module runs before any plugin code, so what it keeps of the globals is
 * genuine. The first tick past the budget throws a fresh error (its stack shows where the plugin
 * was); later ones throw one frozen error made here, so a plugin that catches and recurses (or
 * raises Error.stackTraceLimit) cannot make each of those throws expensive.
 */
function fuelModuleSource(fuel: number): string {
  const message = JSON.stringify(`${FUEL_EXHAUSTED} (${fuel} steps)`);
  return `const FULL = ${fuel};
const Err = Error;
const AGAIN = Object.freeze(new Err(${message}));
let left = FULL;
let dry = false;
let taken = false;
function spent() {
  left = 0;
  if (dry) throw AGAIN;
  dry = true;
  throw new Err(${message});
}
export function tick() {
  if (--left < 0) spent();
}
export function take() {
  if (taken) throw new Err('coffer: the fuel of this plugin was already taken');
  taken = true;
  return {
    refill() { left = FULL; dry = false; },
    exhausted() { return dry; },
  };
}
`;
}

/**
 * The entrypoint the host calls: builds the plugin's class with its own ctx and env, refills the
 * fuel before each call, and forwards only the contract's methods. A call that spent the fuel
 * fails with FUEL_EXHAUSTED even when the plugin caught the tick's error.
 */
function mainModuleSource(fuelModule: string, pluginModule: string): string {
  const fuelError = `new Error(${JSON.stringify(FUEL_EXHAUSTED)})`;
  const methods = PLUGIN_METHODS.map((m) => `  ${m}(...args) { return call(this.#plugin, ${JSON.stringify(m)}, args); }`).join('\n');
  return `import { take } from './${fuelModule}';
import * as bundle from './${pluginModule}';
import { WorkerEntrypoint } from '${ALLOWED_IMPORT}';

const meter = take();
const Plugin = bundle.default;
if (typeof Plugin !== 'function') throw new Error('coffer: the plugin bundle has no default export class (its entrypoint)');

async function call(plugin, name, args) {
  meter.refill();
  let result;
  try {
    const method = plugin[name];
    if (typeof method !== 'function') throw new Error('coffer: the plugin has no method ' + name);
    result = await method.apply(plugin, args);
  } catch (e) {
    if (meter.exhausted()) throw ${fuelError};
    throw e;
  }
  if (meter.exhausted()) throw ${fuelError};
  return result;
}

export default class extends WorkerEntrypoint {
  #plugin;
  constructor(ctx, env) {
    super(ctx, env);
    meter.refill();
    try {
      this.#plugin = new Plugin(ctx, env);
    } catch (e) {
      if (meter.exhausted()) throw ${fuelError};
      throw e;
    }
    if (meter.exhausted()) throw ${fuelError};
  }
${methods}
}
`;
}

function token(random: () => string): string {
  const t = random();
  if (!/^[A-Za-z0-9]+$/.test(t)) throw new Error(`random() must return letters and digits only, not ${JSON.stringify(t)}`);
  return t;
}

/** A random identifier that does not occur anywhere in `source`, so nothing there can shadow it. */
function freshName(source: string, random: () => string, prefix: string): string {
  for (let i = 0; i < 8; i++) {
    const name = prefix + token(random);
    if (!source.includes(name)) return name;
  }
  throw new Error('random() keeps returning names the plugin source already contains');
}

function randomHex(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(8)));
}
