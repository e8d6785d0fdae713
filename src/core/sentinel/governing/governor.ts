// Enforces RGPs and EGPs in every object that serves requests. The cluster's set is fetched from
// the SystemObject, parsed once per version and kept until a policy change clears it (the same
// notice that clears compiled ACLs) or for a minute at most, bounding what a missed notice leaves.
// Evaluation is synchronous: the per-request work is matching paths and running the programs.

import type { AuthContext } from '../../../framework/backend';
import type { CofferError } from '../../../framework/errors';
import type { SentinelIdentity } from '../../identity/types';
import type { Program } from '../ast';
import { dataImports, type RequestFacts } from '../data';
import { evaluatePolicy } from '../evaluate';
import { standardImports } from '../imports';
import { parsePolicy } from '../parser';
import type { SObject } from '../values';
import { egpPathMatches, parseEgpPath, type EgpPath } from './egp-paths';
import type { EnforcementLevel, GoverningFetch, GoverningSet } from './types';
import { sentinelDenial, type SentinelRecord } from './verdict';

const MAX_AGE_MS = 60_000;

/**
 * Paths no EGP governs: root-token generation is the way back in when policies lock everyone
 * out (as in Vault), the seal endpoints are served outside Vault's policy checks, and a DR
 * secondary's pulls are cluster traffic (Vault's cluster port), not requests.
 */
const UNGOVERNED = /^sys\/(generate-root(\/.*)?|init|seal-status|unseal|health|leader|replication\/dr\/internal\/.*)$/;

interface Compiled {
  /** "rgp/<name>" or "egp/<name>". */
  id: string;
  level: EnforcementLevel;
  program: Program | null;
  /** Why the stored text no longer parses (then the policy fails closed). */
  broken?: string;
}

interface CompiledEgp extends Compiled {
  paths: EgpPath[];
}

export interface GovernFacts {
  request: RequestFacts;
  auth: AuthContext | null;
  identity: SentinelIdentity | null;
  /** The caller's policy names (token, entity and groups): the RGPs among them apply. */
  policyNames: readonly string[];
}

export interface Enforcement {
  records: SentinelRecord[];
  denial: CofferError | null;
}

const NOTHING: Enforcement = { records: [], denial: null };

export class GoverningPolicies {
  private readonly rgps = new Map<string, Compiled>();
  private readonly egps: CompiledEgp[] = [];
  /** The standard imports, built once; time.now reads the instant of the run in progress. */
  private readonly standard: Record<string, SObject>;
  private runNow = 0;

  constructor(readonly set: GoverningSet) {
    for (const p of set.rgps) this.rgps.set(p.name, compile(`rgp/${p.name}`, p.enforcement_level, p.policy));
    for (const p of set.egps) this.egps.push({ ...compile(`egp/${p.name}`, p.enforcement_level, p.policy), paths: p.paths.map(parseEgpPath) });
    this.standard = standardImports(() => this.runNow);
  }

  get empty(): boolean {
    return this.rgps.size === 0 && this.egps.length === 0;
  }

  /**
   * Runs the policies that apply (RGPs of an authenticated caller, then EGPs on the path): what
   * was evaluated, and the 403 to answer when a mandatory policy denied.
   */
  enforce(facts: GovernFacts, now = Date.now()): Enforcement {
    const applicable: Compiled[] = [];
    if (facts.auth) {
      for (const name of facts.policyNames) {
        const p = this.rgps.get(name);
        if (p) applicable.push(p);
      }
    }
    if (!UNGOVERNED.test(facts.request.path)) {
      for (const p of this.egps) if (p.paths.some((e) => egpPathMatches(e, facts.request.path))) applicable.push(p);
    }
    if (applicable.length === 0) return NOTHING;
    this.runNow = now;
    const records: SentinelRecord[] = [];
    const denied: SentinelRecord[] = [];
    for (const p of applicable) {
      // Fresh data imports per run: lists and maps are mutable, and no policy may see another's changes.
      const record = run(p, { ...this.standard, ...dataImports(facts) });
      if (!record.passed) {
        if (p.level === 'soft-mandatory' && facts.request.policyOverride) record.overridden = true;
        else if (p.level !== 'advisory') denied.push(record);
        else console.warn(`advisory policy "${p.id}" failed for ${facts.request.operation} ${facts.request.path}`);
      }
      records.push(record);
    }
    return { records, denial: denied.length > 0 ? sentinelDenial(denied) : null };
  }
}

function compile(id: string, level: EnforcementLevel, text: string): Compiled {
  try {
    return { id, level, program: parsePolicy(text, id) };
  } catch (e) {
    return { id, level, program: null, broken: e instanceof Error ? e.message : String(e) };
  }
}

function run(p: Compiled, imports: Record<string, SObject>): SentinelRecord {
  if (!p.program) return { policy: p.id, level: p.level, passed: false, error: `policy does not parse: ${p.broken}` };
  const result = evaluatePolicy(p.program, { imports });
  const record: SentinelRecord = { policy: p.id, level: p.level, passed: result.result };
  if (result.trace.length > 0) record.trace = result.trace;
  if (result.error) record.error = result.error;
  return record;
}

/** Each object's copy of the cluster's set, compiled. */
export class Governor {
  private current: { policies: GoverningPolicies | null; at: number } | null = null;
  private inflight: Promise<GoverningPolicies | null> | null = null;
  private generation = 0;

  constructor(private readonly fetch: GoverningFetch) {}

  /** The compiled set; null when there are no governing policies, or while sealed. */
  policies(now = Date.now()): GoverningPolicies | null | Promise<GoverningPolicies | null> {
    if (this.current && now - this.current.at < MAX_AGE_MS) return this.current.policies;
    if (!this.inflight) {
      const generation = this.generation;
      const pending = this.fetch()
        .then((set) => {
          const policies = set ? new GoverningPolicies(set) : null;
          const usable = policies && !policies.empty ? policies : null;
          // Sealed: nothing is kept (the next request asks again).
          if (set && generation === this.generation) this.current = { policies: usable, at: now };
          return usable;
        })
        .finally(() => {
          if (this.inflight === pending) this.inflight = null;
        });
      this.inflight = pending;
    }
    return this.inflight;
  }

  clear(): void {
    this.generation++;
    this.current = null;
    this.inflight = null;
  }
}
