// Vault's special-path globs: exact names, '*' prefixes, and '+' for one whole segment.
import { describe, expect, it } from 'vitest';
import { matchesSpecialPath } from '../../../src/framework/backend';

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
});
