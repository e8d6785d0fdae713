/// <reference types="vite/client" />
// The fuel rewrite of plugin bundles. workerd has no eval, so these tests are structural: the
// output parses, every loop iteration and function entry starts with the tick, and with the ticks
// taken out the program is the original one, node for node. Running the modules (a plugin that
// loops forever stopped, the wrapper's forwarding) needs the Worker Loader.
import { parse, type Node } from 'acorn';
import { full } from 'acorn-walk';
import { describe, expect, it } from 'vitest';
import acornBundle from '../../../../node_modules/acorn/dist/acorn.mjs?raw';
import {
  FUEL_EXHAUSTED,
  PLUGIN_METHODS,
  PluginCodeError,
  instrumentPlugin,
  isFuelExhausted,
  type InstrumentedPlugin,
} from '../../../../src/core/plugins/instrument';

const HEAD = "import { WorkerEntrypoint } from 'cloudflare:workers';\n";
const TAIL = '\nexport default class Plugin extends WorkerEntrypoint {}\n';

type AnyNode = Node & Record<string, unknown>;

const parseModule = (source: string, locations = false) => parse(source, { ecmaVersion: 'latest', sourceType: 'module', locations }) as unknown as AnyNode;

/** The three modules of a result, by role. */
function parts(result: InstrumentedPlugin) {
  const names = Object.keys(result.modules);
  const fuel = names.find((n) => n.startsWith('fuel-'))!;
  const plugin = names.find((n) => n.startsWith('plugin-'))!;
  expect(names).toHaveLength(3);
  expect(names).toContain(result.mainModule);
  expect(result.mainModule).toMatch(/^main-[0-9a-f]{16}\.js$/);
  expect(fuel).toMatch(/^fuel-[0-9a-f]{16}\.js$/);
  expect(plugin).toMatch(/^plugin-[0-9a-f]{16}\.js$/);
  const code = result.modules[plugin];
  const tick = /import \{ tick as (\$coffer_tick_[0-9a-f]{16}) \} from '\.\/(fuel-[0-9a-f]{16}\.js)';\n$/.exec(code);
  expect(tick, 'the tick import ends the plugin module').not.toBeNull();
  expect(tick![2]).toBe(fuel);
  return { fuel: result.modules[fuel], fuelName: fuel, plugin: code, pluginName: plugin, main: result.modules[result.mainModule], tick: tick![1] };
}

const isTickCall = (node: AnyNode | undefined, tick: string): boolean => {
  const call = node?.type === 'ExpressionStatement' ? (node.expression as AnyNode) : node;
  return call?.type === 'CallExpression' && (call.callee as AnyNode).type === 'Identifier' && (call.callee as AnyNode).name === tick && (call.arguments as unknown[]).length === 0;
};

const LOOPS = new Set(['ForStatement', 'ForInStatement', 'ForOfStatement', 'WhileStatement', 'DoWhileStatement']);
const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

/** Each loop and function of a tree, in source order. */
function sites(tree: AnyNode): AnyNode[] {
  const found: AnyNode[] = [];
  full(tree, (node) => {
    if (LOOPS.has(node.type) || FUNCTIONS.has(node.type)) found.push(node as unknown as AnyNode);
  });
  return found.sort((a, b) => a.start - b.start);
}

/** The statements a function's block body runs first: past its directives (and the `;` ending one). */
function firstAfterDirectives(body: AnyNode): AnyNode | undefined {
  const statements = body.body as AnyNode[];
  let i = 0;
  while (statements[i]?.type === 'ExpressionStatement' && statements[i].directive !== undefined) i++;
  if (i > 0 && statements[i]?.type === 'EmptyStatement') i++;
  return statements[i];
}

/**
 * A tree without positions, ticks and the tick import: loop bodies as statement lists (a block
 * added around a body is no difference), arrow bodies `(tick(), (e))` as `e`, empty statements
 * dropped (the `;` after a directive).
 */
function strip(value: unknown, tick: string): unknown {
  if (Array.isArray(value)) return value.map((v) => strip(v, tick));
  if (value === null || typeof value !== 'object') return value;
  const node = value as AnyNode;
  const statements = (list: AnyNode[]) => list.filter((s) => s.type !== 'EmptyStatement' && !isTickCall(s, tick)).map((s) => strip(s, tick));
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(node)) {
    if (key === 'start' || key === 'end') continue;
    if (LOOPS.has(node.type) && key === 'body') {
      const body = v as AnyNode;
      out.body = statements(body.type === 'BlockStatement' ? (body.body as AnyNode[]) : [body]);
    } else if ((node.type === 'BlockStatement' || node.type === 'StaticBlock') && key === 'body') {
      out.body = statements(v as AnyNode[]);
    } else if (node.type === 'Program' && key === 'body') {
      out.body = statements((v as AnyNode[]).filter((s) => !(s.type === 'ImportDeclaration' && (s.specifiers as AnyNode[]).some((x) => (x.local as AnyNode).name === tick))));
    } else if (node.type === 'ArrowFunctionExpression' && key === 'body' && (v as AnyNode).type === 'SequenceExpression') {
      const seq = (v as AnyNode).expressions as AnyNode[];
      out.body = seq.length === 2 && isTickCall(seq[0], tick) ? strip(seq[1], tick) : strip(v, tick);
    } else out[key] = strip(v, tick);
  }
  return out;
}

/** Instruments `source` and checks the output thoroughly; returns the parts for more checks. */
function instrumentAndCheck(source: string, fuel = 1000) {
  const result = instrumentPlugin(source, { fuel });
  const p = parts(result);
  expect(source.includes(p.tick), 'the tick name is not in the source').toBe(false);
  const before = parseModule(source);
  const after = parseModule(p.plugin);

  // Every loop body starts with the tick; every function body does, past its directives.
  const expected = sites(before);
  const got = sites(after);
  expect(got.map((n) => n.type)).toEqual(expected.map((n) => n.type));
  for (const node of got) {
    const body = node.body as AnyNode;
    if (LOOPS.has(node.type)) {
      expect(body.type, `${node.type} body`).toBe('BlockStatement');
      expect(isTickCall((body.body as AnyNode[])[0], p.tick), `${node.type} at ${node.start} starts with the tick`).toBe(true);
    } else if (body.type === 'BlockStatement') {
      expect(isTickCall(firstAfterDirectives(body), p.tick), `${node.type} at ${node.start} starts with the tick`).toBe(true);
    } else {
      expect(body.type).toBe('SequenceExpression');
      expect(isTickCall((body.expressions as AnyNode[])[0], p.tick), `arrow at ${node.start} ticks first`).toBe(true);
    }
  }
  // One tick per loop and function, and nothing else calls it.
  let ticks = 0;
  full(after, (node) => {
    if (node.type === 'CallExpression' && isTickCall(node as unknown as AnyNode, p.tick)) ticks++;
  });
  expect(ticks).toBe(expected.length);
  // Without the ticks, the same program.
  expect(strip(after, p.tick)).toEqual(strip(before, p.tick));
  return { ...p, result };
}

const module = (body: string) => HEAD + body + TAIL;

describe('the fuel rewrite', () => {
  const samples: Record<string, string> = {
    'for, for-in, for-of, while, do-while with blocks': `
      let n = 0;
      for (let i = 0; i < 3; i++) { n += i; }
      for (const k in { a: 1 }) { n += k.length; }
      for (const v of [1, 2]) { n += v; }
      while (n < 10) { n++; }
      do { n--; } while (n > 5);`,
    'bodies without braces, with and without semicolons (ASI), comments after them': `
      let n = 0
      for (let i = 0; i < 3; i++) n += i
      for (const k in { a: 1 }) n += k.length; // a comment
      for (const v of [1, 2]) /* before */ n += v /* after */
      while (n < 10) n++
      do n--; while (n > 5)
      do n--
      while (n > 5)
      while (n < 0);
      for (;;) break`,
    'nested loops without braces and loops under if/else': `
      let n = 0;
      while (n < 2) while (n < 1) for (;;) do n++; while (false)
      for (;;) for (;;) break
      if (n) while (n) n--; else for (;;) break;
      if (n) for (const x of [1]) if (x) n++; else n--;`,
    'labelled loops, continue and break': `
      outer: for (let i = 0; i < 3; i++) inner: for (let j = 0; j < 3; j++) { if (j) continue outer; else break inner; }
      lbl: while (true) lbl2: do { break lbl; } while (true)
      for (;;) lbl3: { break lbl3; }`,
    'for await and async loops': `
      async function f(xs) { for await (const x of xs) await x; for await (const y of xs) { await y } }`,
    'functions of every kind': `
      function a() { return 1 }
      function* b() { yield 1 }
      async function c() { await 1 }
      async function* d() { yield await 1 }
      const e = function () {}, f = function* named() {}, g = async function () {};
      const o = { m() {}, get x() { return 1 }, set x(v) {}, *gen() {}, async am() {}, async *ag() {}, ['comp' + 1]() {} };
      class K extends Object {
        constructor() { super(); }
        static s() {} #p() {} get g() { return 1 } set g(v) {} static async *sag() {}
        field = 1; arrow = () => this.field; static { for (;;) break }
      }
      (function () {})(); (() => {})();`,
    'arrows with expression bodies: object literals, sequences, in, async, nesting': `
      const a = () => ({ x: 1 }), b = () => ({}), c = (x, y) => (x, y), d = x => x in {}, e = async x => await x;
      const f = x => y => z => x + y + z, g = () => () => ({}), h = x => x ? () => 1 : () => 2;
      for (let k = x => x; ;) break;
      const i = async () => ({ ...await Promise.resolve({}) }), j = () => class {}, k = () => function () {};
      const l = (a = () => 1, { b } = { b: () => 2 }) => a() + b();
      const m = () => \`\${(() => '{')()}}\`, n = () => /[{}]/.test('{'), o = () => '}' + "{";`,
    'directives with and without semicolons': `
      function a() { 'use strict'; return 1 }
      function b() { "use strict"
        return 2 }
      function c() { 'x'; "use strict"; }
      const d = () => { 'use strict' }
      function e() { 'use strict'
      }`,
    'code between the insertion points that looks like syntax: strings, templates, regexes, emoji': `
      const s = '{ for (;;) }', t = \`while(\${'x'}) {\`, r = /for\\(;;\\)\\{/g;
      const ü = '😀'; for (const ch of '😀é') ü.length;
      function 𝒻() { return '}' }`,
    'a loop body that is a declaration-free statement of every kind': `
      let n = 0;
      for (;;) if (n) break; else break;
      for (;;) { }
      for (;;) ;
      while (n) switch (n) { case 1: n--; break; default: n = 0 }
      while (n) try { n-- } catch { n = 0 } finally { }
      while (n) throw new Error('x')
      do ; while (false)`,
    'modern syntax: private in, optional chains, logical assignment, top-level await, using': `
      class P { #x = 1; static has(o) { return #x in o } }
      let v = null; v ??= () => 1; v?.()?.x;
      await Promise.resolve(1);
      { using r = null; }
      async function u() { await using q = null; }`,
  };

  for (const [name, body] of Object.entries(samples)) {
    it(`keeps the program and ticks in each loop and function: ${name}`, () => {
      instrumentAndCheck(module(body));
    });
  }

  it('keeps every token on its line (no newline added), so stack traces point into the bundle', () => {
    const source = module(samples['bodies without braces, with and without semicolons (ASI), comments after them'] + samples['functions of every kind']);
    const { plugin, tick } = instrumentAndCheck(source);
    const lines = (code: string) => {
      const out: string[] = [];
      full(parseModule(code, true), (node) => {
        const n = node as unknown as AnyNode;
        if (n.type === 'Identifier' && n.name !== tick) out.push(`${n.name}@${n.loc!.start.line}:${n.start}`);
      });
      return out.map((s) => s.replace(/:\d+$/, ''));
    };
    expect(lines(plugin)).toEqual(lines(source));
    // Only a newline and the tick import follow the bundle.
    expect(plugin.split('\n').length).toBe(source.split('\n').length + 2);
  });

  it('keeps a trailing line comment and a hashbang from swallowing the tick import', () => {
    const { plugin } = instrumentAndCheck(`#!/usr/bin/env node\n${HEAD}export default class extends WorkerEntrypoint {} // the end`);
    expect(plugin.startsWith('#!/usr/bin/env node\n')).toBe(true);
  });

  it('instruments a real 235 KB bundle (acorn itself) and keeps it node for node', () => {
    const { plugin } = instrumentAndCheck(`${acornBundle}\nexport default class {}\n`);
    expect(plugin.length).toBeGreaterThan(acornBundle.length);
  });

  it('instruments a dense 300 KB bundle quickly', () => {
    // Measured here, in workerd after one warm-up run: 179 ms, on a throttled VM where Node needs
    // 12.6 s for 1e9 additions (src/core/plugins/instrument.ts has the breakdown: acorn's parse is
    // three quarters of it). The bound only catches a gross regression, such as a quadratic rebuild.
    const chunk = (i: number) =>
      `function f${i}(a, b = () => ({ k: ${i} })) { for (let i = 0; i < a.length; i++) if (a[i]) b(); while (a.x) a = a.next; return a.map((x) => x * 2).filter((y) => { return y > ${i} }); }\n`;
    let body = '';
    for (let i = 0; body.length < 300_000; i++) body += chunk(i);
    const source = module(body);
    instrumentPlugin(source, { fuel: 1 }); // warm up
    const start = performance.now();
    const result = instrumentPlugin(source, { fuel: 1 });
    const elapsed = performance.now() - start;
    expect(elapsed).toBeLessThan(1000);
    expect(parts(result).plugin.length).toBeGreaterThan(source.length);
  });
});

describe('the modules for the Worker Loader', () => {
  const source = module('function f() { for (;;) break }');

  it('uses fresh random names for the modules and the tick on every load', () => {
    const a = parts(instrumentPlugin(source, { fuel: 10 }));
    const b = parts(instrumentPlugin(source, { fuel: 10 }));
    expect(b.fuelName).not.toBe(a.fuelName);
    expect(b.pluginName).not.toBe(a.pluginName);
    expect(b.tick).not.toBe(a.tick);
    const ra = instrumentPlugin(source, { fuel: 10 });
    expect(instrumentPlugin(source, { fuel: 10 }).mainModule).not.toBe(ra.mainModule);
  });

  it('takes names from the given random source, skipping a tick name the source contains', () => {
    const values = ['abc', 't1', 'f1', 'p1', 'm1'];
    const result = instrumentPlugin(`${source}\nconst $coffer_tick_abc = 1;`, { fuel: 10, random: () => values.shift()! });
    // abc is in the source, so the tick takes the next value; then the fuel, plugin and main modules.
    expect(result.mainModule).toBe('main-m1.js');
    expect(Object.keys(result.modules).sort()).toEqual(['fuel-f1.js', 'main-m1.js', 'plugin-p1.js']);
    expect(result.modules['plugin-p1.js']).toMatch(/\nimport \{ tick as \$coffer_tick_t1 \} from '\.\/fuel-f1\.js';\n$/);
    expect(result.modules['main-m1.js']).toContain("import * as bundle from './plugin-p1.js';");
    // A random source stuck on names the plugin uses is an error, not an endless loop.
    expect(() => instrumentPlugin(`${source}\nconst $coffer_tick_abc = 1;`, { fuel: 10, random: () => 'abc' })).toThrow(/already contains/);
  });

  it('refuses a random source that gives anything but letters and digits, and a bad fuel', () => {
    expect(() => instrumentPlugin(source, { fuel: 10, random: () => 'a-b' })).toThrow(/letters and digits/);
    expect(() => instrumentPlugin(source, { fuel: 10, random: () => '' })).toThrow(/letters and digits/);
    expect(() => instrumentPlugin(source, { fuel: 0 })).toThrow(RangeError);
    expect(() => instrumentPlugin(source, { fuel: 1.5 })).toThrow(RangeError);
    expect(() => instrumentPlugin(source, { fuel: Number.POSITIVE_INFINITY })).toThrow(RangeError);
  });

  it('has a fuel module with the budget, the tick and a take() that works once', () => {
    const { fuel } = parts(instrumentPlugin(source, { fuel: 1234 }));
    const tree = parseModule(fuel);
    const exported = (tree.body as AnyNode[]).filter((s) => s.type === 'ExportNamedDeclaration').map((s) => ((s.declaration as AnyNode).id as AnyNode).name);
    expect(exported).toEqual(['tick', 'take']);
    expect(fuel).toContain('const FULL = 1234;');
    expect(fuel).toContain(JSON.stringify(`${FUEL_EXHAUSTED} (1234 steps)`));
    expect(fuel).toMatch(/if \(taken\) throw/);
    expect(fuel).toMatch(/if \(dry\) throw AGAIN;/);
  });

  it('has a main module that takes the fuel first and forwards exactly the contract, refilling first', () => {
    const { main, fuelName, pluginName } = parts(instrumentPlugin(source, { fuel: 10 }));
    const tree = parseModule(main);
    const body = tree.body as AnyNode[];
    const imports = body.filter((s) => s.type === 'ImportDeclaration').map((s) => (s.source as AnyNode).value);
    expect(imports).toEqual([`./${fuelName}`, `./${pluginName}`, 'cloudflare:workers']);
    expect(main.indexOf('const meter = take();')).toBeLessThan(main.indexOf('bundle.default'));
    expect(main).toContain("if (typeof Plugin !== 'function') throw new Error('coffer: the plugin bundle has no default export class (its entrypoint)');");

    const cls = (body.find((s) => s.type === 'ExportDefaultDeclaration')!.declaration as AnyNode);
    expect(cls.type).toBe('ClassDeclaration');
    expect((cls.superClass as AnyNode).name).toBe('WorkerEntrypoint');
    const members = (cls.body as AnyNode).body as AnyNode[];
    const methods = members.filter((m) => m.type === 'MethodDefinition' && m.kind === 'method');
    expect(methods.map((m) => (m.key as AnyNode).name)).toEqual([...PLUGIN_METHODS]);
    for (const m of methods) {
      const name = (m.key as AnyNode).name as string;
      expect(main.slice(m.start, m.end)).toBe(`${name}(...args) { return call(this.#plugin, ${JSON.stringify(name)}, args); }`);
    }
    // The plugin's own instance is private: the host reaches nothing but the contract.
    expect(members.some((m) => m.type === 'PropertyDefinition' && (m.key as AnyNode).type === 'PrivateIdentifier')).toBe(true);
    const call = body.find((s) => s.type === 'FunctionDeclaration' && (s.id as AnyNode).name === 'call')!;
    expect(main.slice(((call.body as AnyNode).body as AnyNode[])[0].start).startsWith('meter.refill();')).toBe(true);
    expect(main.indexOf('meter.refill();\n    try {\n      this.#plugin = new Plugin(ctx, env);')).toBeGreaterThan(0);
  });

  it('reports a spent budget by message, as it arrives over RPC', () => {
    expect(isFuelExhausted(new Error(`${FUEL_EXHAUSTED} (10 steps)`))).toBe(true);
    expect(isFuelExhausted(new Error(`Error: ${FUEL_EXHAUSTED}`))).toBe(true);
    expect(isFuelExhausted(new Error('something else'))).toBe(false);
    expect(isFuelExhausted(FUEL_EXHAUSTED)).toBe(false);
  });
});

describe('what a plugin bundle may not be', () => {
  const codeError = (source: string): PluginCodeError => {
    try {
      instrumentPlugin(source, { fuel: 10 });
    } catch (e) {
      expect(e).toBeInstanceOf(PluginCodeError);
      return e as PluginCodeError;
    }
    throw new Error('no error');
  };

  it('reports a syntax error with its 1-based line and column', () => {
    const e = codeError(`${HEAD}\nconst a = 1;\nconst x = ;\n`);
    expect(e.message).toBe('plugin bundle, 4:11: syntax error: Unexpected token');
    expect([e.line, e.column]).toEqual([4, 11]);
    expect(e.name).toBe('PluginCodeError');
    expect(codeError('let x = 1;\nlet x = 2;').message).toBe("plugin bundle, 2:5: syntax error: Identifier 'x' has already been declared");
    // Module code is strict.
    expect(codeError('with (a) {}').message).toMatch(/^plugin bundle, 1:1: syntax error: /);
  });

  it('refuses imports of anything but cloudflare:workers, with where they are', () => {
    for (const [line, from] of [
      ["import x from 'lodash';", 'lodash'],
      ["import 'side-effect';", 'side-effect'],
      ["import * as fs from 'node:fs';", 'node:fs'],
      ["export * from './other.js';", './other.js'],
      ["export { a } from './other.js';", './other.js'],
      ["import { x } from './fuel-0123456789abcdef.js';", './fuel-0123456789abcdef.js'],
    ]) {
      const e = codeError(`${HEAD}  ${line}${TAIL}`);
      expect(e.message).toBe(`plugin bundle, 2:3: imports ${JSON.stringify(from)}: a plugin must be one self-contained bundle (only "cloudflare:workers" may be imported)`);
    }
    // Re-exporting from cloudflare:workers is an import of it: fine.
    expect(() => instrumentPlugin(`${HEAD}export { RpcTarget } from 'cloudflare:workers';${TAIL}`, { fuel: 1 })).not.toThrow();
  });

  it('refuses import(), wherever it is', () => {
    expect(codeError(`${HEAD}const m = await import('x');${TAIL}`).message).toBe('plugin bundle, 2:17: uses import(): a plugin must be one self-contained bundle');
    const e = codeError(`${HEAD}function f() {\n  return () => import('cloudflare:workers');\n}${TAIL}`);
    expect([e.line, e.column]).toEqual([3, 16]);
  });

  it('needs a default export, in any form', () => {
    expect(codeError(`${HEAD}export class P extends WorkerEntrypoint {}`).message).toBe('plugin bundle: has no default export (the class of its entrypoint)');
    expect(codeError(`${HEAD}export class P extends WorkerEntrypoint {}`).line).toBeUndefined();
    for (const form of ['class P extends WorkerEntrypoint {}\nexport { P as default };', 'class P extends WorkerEntrypoint {}\nexport { P as "default" };', 'export default class extends WorkerEntrypoint {}']) {
      expect(() => instrumentPlugin(HEAD + form, { fuel: 1 })).not.toThrow();
    }
  });
});
