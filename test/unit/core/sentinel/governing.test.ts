// Governing policies below the pipeline: validation in the store (base64, levels, paths), EGP path
// matching, and the Governor each object keeps — which policies apply to a request, what each
// enforcement level does with a failure, the override, fail-closed on a text that no longer
// parses, the cache (kept per version, dropped by clear(), nothing kept while sealed).

import { describe, expect, it } from 'vitest';
import { MemoryStorage } from '../../../../src/framework/storage';
import { CofferError } from '../../../../src/framework/errors';
import { egpPathList, egpPathMatches, Governor, GoverningPolicies, GoverningStore, parseEgpPath, type GovernFacts, type GoverningSet } from '../../../../src/core/sentinel/governing';
import type { AuthContext } from '../../../../src/framework/backend';

const auth = (policies: string[], meta: Record<string, string> = {}): AuthContext => ({
  accessor: 'acc',
  policies,
  root: false,
  displayName: 'token',
  entityId: '',
  tokenType: 'service',
  boundCidrs: [],
  metadata: meta,
  ttl: 3600,
  issueTime: '2026-11-01T00:00:00Z',
});

const facts = (path: string, over: Partial<GovernFacts> = {}, override = false): GovernFacts => ({
  request: { path, operation: 'read', data: {}, remoteAddr: '127.0.0.1', policyOverride: override, unauthenticated: false, wrapTTL: 0 },
  auth: auth(['reader']),
  identity: null,
  policyNames: ['reader'],
  ...over,
});

const set = (over: Partial<GoverningSet>): GoverningSet => ({ version: 1, rgps: [], egps: [], ...over });
const egp = (name: string, paths: string[], policy: string, level: 'advisory' | 'soft-mandatory' | 'hard-mandatory' = 'hard-mandatory') => ({
  name,
  paths,
  policy,
  enforcement_level: level,
});

describe('EGP paths', () => {
  it.each([
    ['*', 'anything/at/all', true],
    ['*', '', true],
    ['secret/*', 'secret/a/b', true],
    ['secret/*', 'secret/', true],
    ['secret/*', 'secret', false],
    ['secret/*', 'secrets/x', false],
    ['secret/app', 'secret/app', true],
    ['secret/app', 'secret/app/x', false],
    ['/sys/mounts', 'sys/mounts', true],
  ])('%s against %s: %s', (entry, path, expected) => {
    expect(egpPathMatches(parseEgpPath(entry), path)).toBe(expected);
  });

  it('reads arrays and comma strings, drops blanks and duplicates, refuses bad ones', () => {
    expect(egpPathList('a/*, /b ,a/*')).toEqual(['a/*', 'b']);
    expect(egpPathList(['x', ' y '])).toEqual(['x', 'y']);
    expect(() => egpPathList([])).toThrow('paths cannot be empty');
    expect(() => egpPathList(' , ')).toThrow('paths cannot be empty');
    expect(() => egpPathList(42)).toThrow('paths cannot be empty');
    expect(() => egpPathList(['a/*/b'])).toThrow('"*" may only end a path');
  });
});

describe('the store', () => {
  it('keeps decoded base64 only when it parses, bumps the version on each change, and snapshots everything', async () => {
    const store = new GoverningStore(new MemoryStorage());
    await store.putRgp('a', { policy: btoa('main = rule { true }'), enforcement_level: 'Advisory' });
    // "main" alone is valid base64 but decodes to no policy; as text it does not parse either.
    await expect(store.putRgp('b', { policy: 'main', enforcement_level: 'advisory' })).rejects.toThrow(/failed to parse policy: rgp\/b:1:5/);
    await store.putEgp('e', { policy: 'main = rule { false }', enforcement_level: 'soft-mandatory', paths: 'x/*' });
    const snap = await store.snapshot();
    expect(snap.version).toBe(2);
    expect(snap.rgps).toEqual([{ name: 'a', policy: 'main = rule { true }', enforcement_level: 'advisory' }]);
    expect(snap.egps).toEqual([{ name: 'e', policy: 'main = rule { false }', enforcement_level: 'soft-mandatory', paths: ['x/*'] }]);
    await store.delete('rgp', 'a');
    expect((await store.snapshot()).version).toBe(3);
    expect(await store.names('rgp')).toEqual([]);
  });

  it('refuses bad input with 400s and writes nothing', async () => {
    const store = new GoverningStore(new MemoryStorage());
    const cases: [() => Promise<void>, string][] = [
      [() => store.putRgp('x', { policy: '', enforcement_level: 'advisory' }), "'policy' parameter not supplied or empty"],
      [() => store.putRgp('x', { policy: null, enforcement_level: 'advisory' }), "'policy' parameter not supplied or empty"],
      [() => store.putRgp('x', { policy: 'main = rule { true }', enforcement_level: 'loud' }), 'unknown enforcement_level "loud"'],
      [() => store.putRgp('x', { policy: 'main = rule { true }', enforcement_level: '' }), 'missing enforcement_level'],
      [() => store.putEgp('x', { policy: 'main = rule { true }', enforcement_level: 'advisory', paths: [] }), 'paths cannot be empty'],
      [() => store.putEgp('x', { policy: 'main = rule {', enforcement_level: 'advisory', paths: ['a'] }), 'failed to parse policy: egp/x:1:14'],
    ];
    for (const [write, message] of cases) {
      const e = await write().then(
        () => null,
        (err: unknown) => err,
      );
      expect(e).toBeInstanceOf(CofferError);
      expect((e as CofferError).status).toBe(400);
      expect((e as CofferError).errors[0]).toContain(message);
    }
    expect((await store.snapshot()).version).toBe(0);
  });
});

describe('enforcement', () => {
  it('applies RGPs named by the caller and EGPs on matching paths only', () => {
    const p = new GoverningPolicies(
      set({
        rgps: [{ name: 'team', policy: 'main = rule { token.metadata.team is "blue" }', enforcement_level: 'hard-mandatory' }],
        egps: [egp('kv', ['secret/*'], 'main = rule { request.operation is "read" }')],
      }),
    );
    expect(p.enforce(facts('other/x')).records).toEqual([]);
    expect(p.enforce(facts('secret/a')).records.map((r) => [r.policy, r.passed])).toEqual([['egp/kv', true]]);
    const red = facts('other/x', { auth: auth(['team'], { team: 'red' }), policyNames: ['team'] });
    const out = p.enforce(red);
    expect(out.records.map((r) => [r.policy, r.passed])).toEqual([['rgp/team', false]]);
    expect(out.denial?.status).toBe(403);
    expect(out.denial?.errors[0]).toContain('rgp standard policy "root/team" evaluation resulted in denial (enforcement level: hard-mandatory).');
    // RGPs never apply without a caller.
    expect(p.enforce(facts('other/x', { auth: null, policyNames: ['team'] })).records).toEqual([]);
  });

  it('advisory records a failure and allows; soft-mandatory yields to the override; hard-mandatory never', () => {
    const level = (l: 'advisory' | 'soft-mandatory' | 'hard-mandatory') => new GoverningPolicies(set({ egps: [egp('deny', ['*'], 'main = rule { false }', l)] }));
    const advisory = level('advisory').enforce(facts('a'));
    expect([advisory.denial, advisory.records[0].passed]).toEqual([null, false]);
    expect(level('soft-mandatory').enforce(facts('a')).denial).not.toBeNull();
    const overridden = level('soft-mandatory').enforce(facts('a', {}, true));
    expect(overridden.denial).toBeNull();
    expect(overridden.records[0].overridden).toBe(true);
    expect(level('hard-mandatory').enforce(facts('a', {}, true)).denial).not.toBeNull();
  });

  it('spares the root-generation and seal paths from EGPs on "*"', () => {
    const p = new GoverningPolicies(set({ egps: [egp('deny', ['*'], 'main = rule { false }')] }));
    for (const path of ['sys/generate-root', 'sys/generate-root/attempt', 'sys/generate-root/update', 'sys/unseal', 'sys/seal-status', 'sys/init', 'sys/health']) {
      expect(p.enforce(facts(path)).denial).toBeNull();
    }
    expect(p.enforce(facts('sys/generate-root-x')).denial).not.toBeNull();
    expect(p.enforce(facts('sys/mounts')).denial).not.toBeNull();
  });

  it('fails closed on a stored text that no longer parses, and reports runtime errors and limits', () => {
    const p = new GoverningPolicies(
      set({
        egps: [
          egp('broken', ['a'], 'main = rule {'),
          egp('error', ['b'], 'main = rule { 1 / 0 == 1 }'),
          egp('spin', ['c'], 'main = rule { all range(100000000) as i { i >= 0 } }'),
        ],
      }),
    );
    expect(p.enforce(facts('a')).records[0].error).toMatch(/^policy does not parse: /);
    const error = p.enforce(facts('b'));
    expect(error.denial?.errors[0]).toMatch(/The specific error was:\n.*1:\d+: /);
    const spin = p.enforce(facts('c'));
    expect(spin.denial).not.toBeNull();
    expect(spin.records[0].error).toMatch(/step limit/);
  });

  it('gives each policy its own data imports: one cannot change what the next one reads', () => {
    const p = new GoverningPolicies(
      set({
        rgps: [
          { name: 'first', policy: 'p = token.policies\np = append(p, "admin")\nmain = rule { true }', enforcement_level: 'hard-mandatory' },
          { name: 'second', policy: 'main = rule { "admin" not in token.policies }', enforcement_level: 'hard-mandatory' },
        ],
      }),
    );
    const out = p.enforce(facts('x', { auth: auth(['first', 'second']), policyNames: ['first', 'second'] }));
    expect(out.denial).toBeNull();
  });
});

describe('the Governor cache', () => {
  it('fetches once, keeps the compiled set, and fetches again after clear()', async () => {
    let fetches = 0;
    let current = set({ egps: [egp('one', ['*'], 'main = rule { true }')] });
    const g = new Governor(async () => {
      fetches++;
      return current;
    });
    const first = await g.policies(0);
    expect(first).toBeInstanceOf(GoverningPolicies);
    expect(g.policies(1000)).toBe(first);
    expect(fetches).toBe(1);
    // Stale after a minute.
    expect(await g.policies(61_000)).not.toBe(first);
    expect(fetches).toBe(2);
    current = set({ version: 2 });
    g.clear();
    // No policies at all: null, so requests pay nothing.
    expect(await g.policies(61_001)).toBeNull();
    expect(g.policies(61_002)).toBeNull();
    expect(fetches).toBe(3);
  });

  it('keeps nothing while sealed, and a fetch begun before clear() is not kept', async () => {
    let answer: GoverningSet | null = null;
    let release: () => void = () => undefined;
    let fetches = 0;
    const g = new Governor(async () => {
      fetches++;
      await new Promise<void>((r) => (release = r));
      return answer;
    });
    const sealed = g.policies(0);
    release();
    expect(await sealed).toBeNull();
    answer = set({ egps: [egp('old', ['*'], 'main = rule { false }')] });
    const racing = g.policies(1);
    g.clear();
    release();
    expect(await racing).not.toBeNull();
    // The racing result was not kept: the next call fetches again.
    answer = set({});
    const next = g.policies(2);
    release();
    expect(await next).toBeNull();
    expect(fetches).toBe(3);
  });
});
