// Vault ACL policy documents: HCL or JSON (or base64 of either) parsed and validated into a
// Policy. Templates stay unresolved here; the ACL resolves them per token.

import { fromBase64, strictUtf8 } from '../../crypto/encoding';
import { DurationError, parseDurationSeconds } from '../../framework/duration';
import { parseDocument } from './document';
import { PolicyError } from './errors';
import { HclObject, type HclItem, type HclValue } from './hcl';
import { mergeValueLists } from './params';
import { patternProblem } from './pattern';
import { hasTemplate, scanTemplate, templateProblem } from '../../framework/identity-templates';

export { PolicyError } from './errors';

export type Capability = 'create' | 'read' | 'update' | 'patch' | 'delete' | 'list' | 'sudo' | 'deny' | 'subscribe';

export const CAPABILITIES: readonly Capability[] = [
  'create',
  'read',
  'update',
  'patch',
  'delete',
  'list',
  'sudo',
  'deny',
  'subscribe',
];

export interface PathRule {
  /** As written, leading "/" stripped. May contain {{...}} templates (then templated = true). */
  pattern: string;
  /**
   * Normalised: sorted, deduplicated; a rule containing deny is exactly ['deny']. Legacy `policy`
   * mapped per reference 4.1.
   */
  capabilities: Capability[];
  /** Keys lowercased. An empty list means "any value". */
  allowedParameters: Record<string, unknown[]>;
  deniedParameters: Record<string, unknown[]>;
  requiredParameters: string[];
  /** Seconds; 0 when unset. */
  minWrappingTTL: number;
  maxWrappingTTL: number;
  templated: boolean;
}

export interface Policy {
  name: string;
  rules: PathRule[];
  templated: boolean;
}

/** The pre-capabilities `policy = "..."` shorthand. */
const LEGACY_POLICY: Record<string, Capability[]> = {
  deny: ['deny'],
  read: ['read', 'list'],
  write: ['create', 'read', 'update', 'delete', 'list'],
  sudo: ['create', 'read', 'update', 'delete', 'list', 'sudo'],
};

const BLOCK_KEYS = new Set([
  'capabilities',
  'policy',
  'allowed_parameters',
  'denied_parameters',
  'required_parameters',
  'min_wrapping_ttl',
  'max_wrapping_ttl',
  'mfa_methods',
  'control_group',
  'subscribe_event_types',
  'comment',
]);

const onLine = (line: number | undefined): string => (line ? ` on line ${line}` : '');

const isStringList = (v: HclValue): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');

/** An object, or a list of objects (HCL tooling writes JSON objects wrapped in lists); else null. */
function objectList(v: HclValue): HclObject[] | null {
  if (v instanceof HclObject) return [v];
  return Array.isArray(v) && v.every((o) => o instanceof HclObject) ? (v as HclObject[]) : null;
}

/** Policy values (HCL objects included) as plain data, for comparison with request data. */
function toPlain(v: HclValue): unknown {
  if (Array.isArray(v)) return v.map(toPlain);
  if (v instanceof HclObject) {
    // fromEntries defines own properties, so a "__proto__" key cannot touch the prototype.
    return Object.fromEntries(
      v.items.map((it) => [it.key, it.labels.reduceRight<unknown>((inner, l) => ({ [l]: inner }), toPlain(it.value))]),
    );
  }
  return v;
}

class RuleBuilder {
  private readonly caps = new Set<Capability>();
  private readonly allowed = new Map<string, unknown[]>();
  private readonly denied = new Map<string, unknown[]>();
  private readonly required = new Set<string>();
  private minTTL = 0;
  private maxTTL = 0;

  constructor(private readonly pattern: string) {}

  private fail(message: string, line?: number): never {
    throw new PolicyError(`path ${JSON.stringify(this.pattern)}: ${message}${onLine(line)}`);
  }

  private stringList(item: HclItem): string[] {
    if (!isStringList(item.value)) this.fail(`${item.key} must be a list of strings`, item.line);
    return item.value;
  }

  private paramMap(item: HclItem, into: Map<string, unknown[]>): void {
    const objects = objectList(item.value);
    if (!objects) this.fail(`${item.key} must be an object mapping parameter names to lists of values`, item.line);
    for (const obj of objects) {
      for (const entry of obj.items) {
        if (entry.labels.length > 0 || !Array.isArray(entry.value)) {
          this.fail(`${item.key} ${JSON.stringify(entry.key)} must be a list of values`, entry.line ?? item.line);
        }
        const key = entry.key.toLowerCase();
        const values = (entry.value as HclValue[]).map(toPlain);
        const existing = into.get(key);
        into.set(key, existing ? mergeValueLists(existing, values) : values);
      }
    }
  }

  private duration(item: HclItem): number {
    const v = item.value;
    if (typeof v !== 'string' && typeof v !== 'number') {
      this.fail(`${item.key} must be a duration string or a number of seconds`, item.line);
    }
    let seconds: number;
    try {
      seconds = parseDurationSeconds(v);
    } catch (err) {
      if (err instanceof DurationError) this.fail(`invalid ${item.key}: ${err.message}`, item.line);
      throw err;
    }
    if (seconds < 0) this.fail(`${item.key} cannot be negative`, item.line);
    return seconds;
  }

  add(body: HclObject): void {
    const seen = new Set<string>();
    for (const item of body.items) {
      if (!BLOCK_KEYS.has(item.key)) this.fail(`invalid key ${JSON.stringify(item.key)}`, item.line);
      if (item.labels.length > 0) this.fail(`unexpected label after ${JSON.stringify(item.key)}`, item.line);
      if (seen.has(item.key)) this.fail(`duplicate key ${JSON.stringify(item.key)}`, item.line);
      seen.add(item.key);
      this.addItem(item);
    }
    if (this.minTTL && this.maxTTL && this.maxTTL < this.minTTL) {
      throw new PolicyError('max_wrapping_ttl cannot be less than min_wrapping_ttl');
    }
  }

  private addItem(item: HclItem): void {
    switch (item.key) {
      case 'capabilities':
        for (const c of this.stringList(item)) {
          if (!(CAPABILITIES as readonly string[]).includes(c)) this.fail(`invalid capability ${JSON.stringify(c)}`);
          this.caps.add(c as Capability);
        }
        return;
      case 'policy': {
        const v = item.value;
        const mapped = typeof v === 'string' && Object.hasOwn(LEGACY_POLICY, v) ? LEGACY_POLICY[v] : null;
        if (!mapped) {
          const expected = '(expected "deny", "read", "write" or "sudo")';
          const shown = typeof v === 'string' ? JSON.stringify(v) : 'value';
          this.fail(`invalid policy ${shown} ${expected}`, item.line);
        }
        for (const c of mapped) this.caps.add(c);
        return;
      }
      case 'allowed_parameters':
        return this.paramMap(item, this.allowed);
      case 'denied_parameters':
        return this.paramMap(item, this.denied);
      case 'required_parameters':
        for (const p of this.stringList(item)) this.required.add(p.toLowerCase());
        return;
      case 'min_wrapping_ttl':
        this.minTTL = this.duration(item);
        return;
      case 'max_wrapping_ttl':
        this.maxTTL = this.duration(item);
        return;
      case 'mfa_methods':
      case 'subscribe_event_types':
        this.stringList(item);
        return;
      case 'comment':
        if (typeof item.value !== 'string') this.fail('comment must be a string', item.line);
        return;
      case 'control_group':
        // Enterprise feature: accepted for compatibility, not enforced.
        if (!(item.value instanceof HclObject)) this.fail('control_group must be an object', item.line);
        return;
    }
  }

  build(): PathRule {
    const deny = this.caps.has('deny');
    return {
      pattern: this.pattern,
      capabilities: deny ? ['deny'] : [...this.caps].sort(),
      allowedParameters: Object.fromEntries(this.allowed),
      deniedParameters: Object.fromEntries(this.denied),
      requiredParameters: [...this.required].sort(),
      minWrappingTTL: this.minTTL,
      maxWrappingTTL: this.maxTTL,
      templated: hasTemplate(this.pattern),
    };
  }
}

function validatePattern(pattern: string): void {
  const where = `path ${JSON.stringify(pattern)}`;
  const tplProblem = templateProblem(pattern);
  if (tplProblem) throw new PolicyError(`${where}: ${tplProblem}`);
  // Check wildcards with each template standing in for a plain value, which is all it can
  // resolve to.
  const scan = scanTemplate(pattern);
  const skeleton = scan.ok ? scan.parts.map((p) => ('literal' in p ? p.literal : 'x')).join('') : pattern;
  const problem = patternProblem(skeleton);
  if (problem) throw new PolicyError(`${where}: ${problem}`);
}

function parseRule(rawPattern: string, body: HclObject): PathRule {
  const pattern = rawPattern.startsWith('/') ? rawPattern.slice(1) : rawPattern;
  validatePattern(pattern);
  const builder = new RuleBuilder(pattern);
  builder.add(body);
  return builder.build();
}

const PATH_SHAPE = 'expected path "<pattern>" { ... }';

/** The (pattern, body) pairs of a top-level `path` item, in HCL block or JSON object form. */
function pathBlocks(item: HclItem): [string, HclObject][] {
  const v = item.value;
  if (item.labels.length === 1 && v instanceof HclObject) return [[item.labels[0], v]];
  if (item.labels.length > 1) {
    throw new PolicyError(`${PATH_SHAPE}, found ${item.labels.length} labels${onLine(item.line)}`);
  }
  // `path = { "<pattern>" = {...} }` (the JSON form), possibly as a list of such objects.
  const maps = objectList(v);
  if (!maps) throw new PolicyError(`${PATH_SHAPE}${onLine(item.line)}`);
  const out: [string, HclObject][] = [];
  for (const map of maps) {
    for (const entry of map.items) {
      const bodies = objectList(entry.value);
      if (entry.labels.length > 0 || !bodies || bodies.length === 0) {
        const where = `path ${JSON.stringify(entry.key)}`;
        throw new PolicyError(`${where}: expected an object${onLine(entry.line ?? item.line)}`);
      }
      for (const b of bodies) out.push([entry.key, b]);
    }
  }
  return out;
}

function buildPolicy(name: string, text: string): Policy {
  const doc = parseDocument(text);
  const rules: PathRule[] = [];
  for (const item of doc.items) {
    if (item.key === 'name') continue; // informational only, as in Vault
    if (item.key !== 'path') throw new PolicyError(`invalid key ${JSON.stringify(item.key)}${onLine(item.line)}`);
    for (const [pattern, body] of pathBlocks(item)) rules.push(parseRule(pattern, body));
  }
  return { name, rules, templated: rules.some((r) => r.templated) };
}

// No control characters other than tab and line breaks, and no invalid sequences.
const PRINTABLE = /^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]*$/;

/** Text of a base64-encoded document, or null when the input is not base64 of UTF-8 text. */
function decodeBase64(text: string): string | null {
  const compact = text.replace(/[\r\n]/g, '');
  if (compact.trim() === '') return null;
  const bytes = fromBase64(compact);
  return bytes ? strictUtf8(bytes) : null;
}

/** Accepts HCL, JSON, or base64 of either. Name is used as given (callers lowercase it). */
export function parsePolicy(name: string, text: string): Policy {
  // Vault accepts base64-encoded policies. Decoding is kept only when the result is itself a
  // policy: base64 text can never be a valid policy, but a stray word can be valid base64.
  const decoded = decodeBase64(text);
  if (decoded === null) return buildPolicy(name, text);
  try {
    return buildPolicy(name, decoded);
  } catch (err) {
    if (!(err instanceof PolicyError)) throw err;
    // Report against the decoded text when it reads as text (the user meant base64),
    // otherwise against the text as written.
    if (PRINTABLE.test(decoded)) throw err;
    return buildPolicy(name, text);
  }
}
