// Vault's special-path globs: exact names, '*' prefixes, and '+' for one whole segment.
import { describe, expect, it } from 'vitest';
import { matchesSpecialPath } from '../../../src/framework/backend';
import { backendType } from '../../../src/registry';

describe('matchesSpecialPath', () => {
  const globs = ['ca', 'cert/*', 'issuer/+/pem', 'issuer/+/crl/*', 'issuers/'];

  it('matches exact names and prefixes', () => {
    expect(matchesSpecialPath(globs, 'ca')).toBe(true);
    expect(matchesSpecialPath(globs, 'ca/pem')).toBe(false);
    expect(matchesSpecialPath(globs, 'cert/ca_chain')).toBe(true);
    expect(matchesSpecialPath(globs, 'issuers/')).toBe(true);
  });

  it('lets + stand for exactly one segment', () => {
    expect(matchesSpecialPath(globs, 'issuer/default/pem')).toBe(true);
    expect(matchesSpecialPath(globs, 'issuer/a.b-c/pem')).toBe(true);
    expect(matchesSpecialPath(globs, 'issuer/default')).toBe(false);
    expect(matchesSpecialPath(globs, 'issuer/a/b/pem')).toBe(false);
    expect(matchesSpecialPath(globs, 'issuer//pem')).toBe(false);
    expect(matchesSpecialPath(globs, 'issuer/x/pemx')).toBe(false);
    expect(matchesSpecialPath(globs, 'issuer/x/crl/delta/der')).toBe(true);
  });

  it('treats other characters literally', () => {
    expect(matchesSpecialPath(['a.b/+/c'], 'axb/1/c')).toBe(false);
    expect(matchesSpecialPath(['a.b/+/c'], 'a.b/1/c')).toBe(true);
  });

  it("agrees, compiled, with a test of each pattern in turn on the PKI backend's unauthenticated paths", () => {
    const backend = backendType('pki')!.create!({}, { authMounts: { byAccessor: async () => null } });
    const patterns = backend.unauthenticatedPaths!;
    const one = (p: string, path: string): boolean => {
      if (!p.includes('+')) return p.endsWith('*') ? path.startsWith(p.slice(0, -1)) : path === p;
      const body = p.replace(/\*$/, '').split('/').map((s) => (s === '+' ? '[^/]+' : s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/');
      return new RegExp(`^${body}${p.endsWith('*') ? '' : '$'}`).test(path);
    };
    const paths = ['ca', 'ca/pem', 'ca_chain', 'cert/ca_chain', 'cert/x', 'crl', 'crl/pem', 'crl/delta/pem', 'crl/rotate', 'issue/web', 'issuer/d/pem', 'issuer/d/der',
      'issuer/d/json', 'issuer/d', 'issuer/d/crl/delta/pem', 'issuer/d/unified-crl/der', 'issuer/d/issue/web', 'issuers/', 'issuers', 'ocsp', 'ocsp/abc', 'ocsp/a//b',
      'unified-ocsp', 'unified-ocsp/abc', 'roles/web', 'sign/web', 'acme/directory', 'issuer/d/acme/new-order', 'roles/r/acme/x', ''];
    for (const path of paths) expect(matchesSpecialPath(patterns, path), path).toBe(patterns.some((p) => one(p, path)));
  });

  it('answers a path asked again as the first time, past the memory of recent paths and for long paths', () => {
    // Answers are kept per list for recent paths (512, then the memory starts again), not for
    // paths over 256 characters: each list keeps its own, and none leaks into another.
    const lists = [['cert/*', 'issuer/+/pem'], ['cert/x', 'issue/*'], ['issuer/+/pem']];
    const paths: string[] = [];
    for (let i = 0; i < 700; i++) paths.push(i % 3 === 0 ? `cert/${i}` : i % 3 === 1 ? `issuer/${i}/pem` : `issue/${'n'.repeat(i % 300)}`);
    const expected = (list: string[], path: string): boolean =>
      list.some((p) => (p.includes('+') ? new RegExp(`^${p.replace('+', '[^/]+')}$`).test(path) : p.endsWith('*') ? path.startsWith(p.slice(0, -1)) : path === p));
    for (let round = 0; round < 3; round++) {
      for (const path of paths) for (const list of lists) expect(matchesSpecialPath(list, path), `${round} ${path}`).toBe(expected(list, path));
    }
  });
});
