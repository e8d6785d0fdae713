// A token's policies compiled into one ACL. Exactly one rule applies to a request: the exact rule
// for the path if there is one, otherwise the highest-priority matching glob. Rules with the
// same pattern (across policies and repeated blocks) are merged first.

import type { Operation } from '../../framework/backend';
import { mergeValueLists, parameterProblem } from './params';
import { comparePriority, compilePattern, matchesPattern, patternProblem, type CompiledPattern } from './pattern';
import type { Capability, PathRule, Policy } from './policy';
import { resolveTemplate, type IdentityContext } from '../../framework/identity-templates';

export interface AclRequest {
  operation: Operation;
  /** Full logical path, e.g. "secret/data/foo"; list operations carry a trailing "/" (e.g. "secret/metadata/"). */
  path: string;
  data: Record<string, unknown>;
  /** Requested response-wrapping TTL in seconds; 0 when the request is not wrapped. */
  wrapTTL: number;
}

export interface AclResult {
  allowed: boolean;
  /** True when the rule that applied grants sudo (callers require it on sudo-protected paths). */
  sudo: boolean;
  /** Present when refused: why (for logs/tests; the HTTP answer stays "permission denied"). */
  reason?: string;
  /** The (resolved) pattern of the rule that applied, when one did. */
  rule?: string;
}

interface Permissions {
  capabilities: Set<Capability>;
  allowed: Map<string, unknown[]>;
  denied: Map<string, unknown[]>;
  required: Set<string>;
  minWrappingTTL: number;
  maxWrappingTTL: number;
}

interface GlobRule {
  compiled: CompiledPattern;
  perms: Permissions;
}

/** Operations whose request data is checked against parameter constraints. */
const PARAMETER_OPS = new Set<Operation>(['read', 'create', 'update', 'patch']);

const smallerNonZero = (a: number, b: number): number => (a === 0 ? b : b === 0 ? a : Math.min(a, b));

function mergeParams(into: Map<string, unknown[]>, from: Record<string, unknown[]>): void {
  for (const [key, values] of Object.entries(from)) {
    const existing = into.get(key);
    into.set(key, existing ? mergeValueLists(existing, values) : [...values]);
  }
}

function emptyPermissions(): Permissions {
  return {
    capabilities: new Set(),
    allowed: new Map(),
    denied: new Map(),
    required: new Set(),
    minWrappingTTL: 0,
    maxWrappingTTL: 0,
  };
}

/** Folds one rule into the permissions of its pattern. Deny anywhere leaves deny only. */
function mergeRule(perms: Permissions, rule: PathRule): void {
  if (perms.capabilities.has('deny')) return;
  if (rule.capabilities.includes('deny')) {
    Object.assign(perms, emptyPermissions(), { capabilities: new Set<Capability>(['deny']) });
    return;
  }
  for (const c of rule.capabilities) perms.capabilities.add(c);
  mergeParams(perms.allowed, rule.allowedParameters);
  mergeParams(perms.denied, rule.deniedParameters);
  for (const r of rule.requiredParameters) perms.required.add(r.toLowerCase());
  perms.minWrappingTTL = smallerNonZero(perms.minWrappingTTL, rule.minWrappingTTL);
  perms.maxWrappingTTL = smallerNonZero(perms.maxWrappingTTL, rule.maxWrappingTTL);
}

export class ACL {
  private constructor(
    readonly root: boolean,
    private readonly exact: Map<string, Permissions>,
    /** Sorted by descending priority, so the first match is the one that applies. */
    private readonly globs: GlobRule[],
  ) {}

  /**
   * Compiles policies (templates resolved against identity). A policy named "root" makes a root
   * ACL that allows everything.
   */
  static compile(policies: Policy[], identity?: IdentityContext): ACL {
    if (policies.some((p) => p.name === 'root')) return new ACL(true, new Map(), []);
    const byPattern = new Map<string, Permissions>();
    for (const policy of policies) {
      for (const rule of policy.rules) {
        const pattern = rule.templated ? resolveTemplate(rule.pattern, identity) : rule.pattern;
        // Unresolvable templates skip the rule; malformed patterns (not from parsePolicy) never match.
        if (pattern === null || patternProblem(pattern)) continue;
        let perms = byPattern.get(pattern);
        if (!perms) byPattern.set(pattern, (perms = emptyPermissions()));
        mergeRule(perms, rule);
      }
    }
    const exact = new Map<string, Permissions>();
    const globs: GlobRule[] = [];
    for (const [pattern, perms] of byPattern) {
      const compiled = compilePattern(pattern);
      if (compiled.kind === 'exact') exact.set(pattern, perms);
      else globs.push({ compiled, perms });
    }
    globs.sort((a, b) => comparePriority(b.compiled, a.compiled));
    return new ACL(false, exact, globs);
  }

  /** The single rule that applies to a path. List-style lookups also try the exact rule without the trailing "/". */
  private find(path: string, listStyle: boolean): { pattern: string; perms: Permissions } | null {
    const exact = this.exact.get(path);
    if (exact) return { pattern: path, perms: exact };
    if (listStyle && path.endsWith('/')) {
      const trimmed = path.slice(0, -1);
      const perms = this.exact.get(trimmed);
      if (perms) return { pattern: trimmed, perms };
    }
    const glob = this.globs.find((g) => matchesPattern(g.compiled, path));
    return glob ? { pattern: glob.compiled.pattern, perms: glob.perms } : null;
  }

  /**
   * Capabilities on a path (sys/capabilities): sorted; ['root'] for root; ['deny'] when nothing
   * matches or the rule denies. Matching is list-style: "a/b/" also finds an exact rule "a/b".
   */
  capabilities(path: string): string[] {
    if (this.root) return ['root'];
    const match = this.find(path, true);
    const caps = match ? [...match.perms.capabilities] : [];
    if (caps.length === 0 || caps.includes('deny')) return ['deny'];
    return caps.sort();
  }

  /**
   * Whether some rule grants something (not deny) at or under `prefix` — how the UI's mount
   * listing decides which mounts a token may see. Globs count when their literal part and the
   * prefix overlap.
   */
  hasAccessUnder(prefix: string): boolean {
    if (this.root) return true;
    const grants = (p: Permissions) => p.capabilities.size > 0 && !p.capabilities.has('deny');
    for (const [pattern, perms] of this.exact) if (pattern.startsWith(prefix) && grants(perms)) return true;
    for (const { compiled, perms } of this.globs) {
      const literal = compiled.pattern.slice(0, Math.max(0, compiled.firstWildcard));
      if ((literal.startsWith(prefix) || prefix.startsWith(literal)) && grants(perms)) return true;
    }
    return false;
  }

  check(req: AclRequest): AclResult {
    if (this.root) return { allowed: true, sudo: true };
    const match = this.find(req.path, req.operation === 'list');
    if (!match) return { allowed: false, sudo: false, reason: `no policy rule matches "${req.path}"` };
    const { pattern, perms } = match;
    const refuse = (reason: string): AclResult => ({ allowed: false, sudo: false, reason, rule: pattern });

    if (perms.capabilities.has('deny')) return refuse(`rule "${pattern}" denies access`);
    if (!perms.capabilities.has(req.operation)) return refuse(`rule "${pattern}" does not grant "${req.operation}"`);

    const wrapTTL = req.wrapTTL > 0 ? req.wrapTTL : 0;
    if (perms.maxWrappingTTL > 0 && (wrapTTL === 0 || wrapTTL > perms.maxWrappingTTL)) {
      return refuse(`rule "${pattern}" requires response wrapping with a TTL of at most ${perms.maxWrappingTTL}s`);
    }
    if (perms.minWrappingTTL > 0 && (wrapTTL === 0 || wrapTTL < perms.minWrappingTTL)) {
      return refuse(`rule "${pattern}" requires response wrapping with a TTL of at least ${perms.minWrappingTTL}s`);
    }

    if (PARAMETER_OPS.has(req.operation)) {
      const problem = parameterProblem(
        { allowed: perms.allowed, denied: perms.denied, required: [...perms.required] },
        req.data,
      );
      if (problem) return refuse(`rule "${pattern}": ${problem}`);
    }
    return { allowed: true, sudo: perms.capabilities.has('sudo'), rule: pattern };
  }
}
