// matchPath finds a path's definition among only the patterns that can match its first segment:
// the answer must be the one a scan of every pattern in declaration order gives.
import { describe, expect, it } from 'vitest';
import { literalFirstSegment, matchPath, type Backend, type PathDef } from '../../../src/framework/backend';
import { backendType } from '../../../src/registry';

const def = (pattern: string): PathDef => ({ pattern, operations: {} });

/** The reference: every pattern, in order. */
function scan(backend: Backend, path: string): { def: PathDef; params: Record<string, string> } | null {
  for (const d of backend.paths) {
    const m = new RegExp(`^(?:${d.pattern})$`).exec(path);
    if (m) return { def: d, params: Object.fromEntries(Object.entries(m.groups ?? {}).filter(([, v]) => v !== undefined)) as Record<string, string> };
  }
  return null;
}

describe('matchPath', () => {
  const backend: Backend = {
    type: 'test',
    paths: [
      def('(?<any>[^/]+)/first'),
      def('config/urls'),
      def('config/(?<name>\\w+)'),
      def('keys/?'),
      def('crl(/pem)?'),
      def('alpha/x|beta/y'),
      def('issue/(?<role>\\w+)'),
      def(''),
    ],
  };

  it('keeps declaration order across a literal first segment and the patterns that start otherwise', () => {
    expect(matchPath(backend, 'config/first')?.def.pattern).toBe('(?<any>[^/]+)/first');
    expect(matchPath(backend, 'config/urls')?.def.pattern).toBe('config/urls');
    expect(matchPath(backend, 'config/crl')).toEqual({ def: backend.paths[2], params: { name: 'crl' } });
  });

  it('matches optional tails, groups in the first segment, alternatives and the root', () => {
    expect(matchPath(backend, 'keys')?.def.pattern).toBe('keys/?');
    expect(matchPath(backend, 'keys/')?.def.pattern).toBe('keys/?');
    expect(matchPath(backend, 'crl/pem')?.def.pattern).toBe('crl(/pem)?');
    expect(matchPath(backend, 'beta/y')?.def.pattern).toBe('alpha/x|beta/y');
    expect(matchPath(backend, '')?.def.pattern).toBe('');
    expect(matchPath(backend, 'issue/web')).toEqual({ def: backend.paths[6], params: { role: 'web' } });
    expect(matchPath(backend, 'nothing/here')).toBeNull();
  });

  it('agrees with a scan of every pattern on the PKI, transit and KV backends', () => {
    const paths = [
      'issue/web', 'issuer/default/issue/web', 'sign/web', 'issuer/abc/sign/web', 'sign-verbatim', 'sign-verbatim/web', 'roles/web', 'roles',
      'roles/', 'cert/ca_chain', 'cert/17-aa', 'certs', 'certs/', 'ca', 'ca/pem', 'crl', 'crl/pem', 'crl/rotate', 'config/urls', 'config/crl',
      'issuer/default', 'issuer/default/pem', 'issuer/default/crl/der', 'issuers', 'keys/generate/internal', 'key/abc', 'root/generate/internal',
      'tidy', 'tidy-status', 'ocsp', 'ocsp/abc', 'revoke', 'unified-crl', 'encrypt/k', 'decrypt/k', 'keys/k', 'keys/k/rotate', 'keys/k/config',
      'export/encryption-key/k/1', 'hmac/k/sha2-512', 'sign/k/sha2-256', 'verify/k', 'hash', 'hash/sha2-512', 'random/32', 'random/hex', 'wrapping_key',
      'backup/k', 'restore', 'restore/k', 'datakey/plaintext/k', 'cache-config', 'config/keys', 'data/a/b', 'metadata/a', 'delete/a', 'undelete/a',
      'destroy/a', 'subkeys/a', 'config', 'a/b/c', '', 'x',
      // PKI patterns whose first segment is a literal followed by a group, or varies.
      'ca_chain', 'ca/pem/x', 'cax', 'unified-ocsp', 'unified-ocsp/abc', 'unified-ocsp/a//b', 'unified-ocspx', 'unified-crl/delta/pem', 'crl/delta',
      'cert/crl', 'cert/crl/raw/pem', 'cert/unified-delta-crl/raw', 'issuer/x/json', 'issuer/x/der', 'issuer/x/unified-crl/delta/der',
      'issuers/import/cert', 'issuers/import/bundle', 'issuers/generate/root/internal', 'keys/generate/kms', 'keys/generate/other', 'ocsp/a//b',
      // Auth methods and the others.
      'login', 'role/r', 'role', 'oidc/auth_url', 'oidc/callback', 'creds/r', 'sts/r', 'config/root', 'config/rotate-root', 'roles/r',
      'entity', 'entity/id/abc', 'entity/name/n', 'group/id/g', 'lookup/entity', 'alias/id/a', 'oidc/key/k', 'mfa/method/totp/abc',
    ];
    for (const type of ['pki', 'transit', 'kv', 'aws', 'jwt', 'identity', 'cubbyhole']) {
      const backend = backendType(type)!.create!({ version: '2' }, { authMounts: { byAccessor: async () => null } });
      for (const path of paths) expect(matchPath(backend, path), `${type} ${path}`).toEqual(scan(backend, path));
    }
  });

  it('answers a path again from memory, each caller with params of its own', () => {
    const first = matchPath(backend, 'issue/web')!;
    first.params.role = 'changed';
    expect(matchPath(backend, 'issue/web')).toEqual({ def: backend.paths[6], params: { role: 'web' } });
    expect(matchPath(backend, 'nothing/here')).toBeNull();
    expect(matchPath(backend, 'nothing/here')).toBeNull();
    // Past the bound the memory starts again, with the same answers.
    for (let i = 0; i < 600; i++) expect(matchPath(backend, `issue/r${i}`)?.params).toEqual({ role: `r${i}` });
    expect(matchPath(backend, 'issue/web')?.params).toEqual({ role: 'web' });
  });

  it.each([
    ['issue/(?<role>\\w+)', 'issue'],
    ['keys/?', 'keys'],
    ['config', 'config'],
    ['ca(?<pem>/pem)?', 'ca'],
    ['unified-ocsp(?:/(?<req>.+))?', 'unified-ocsp'],
    ['cert/(?<which>crl|delta-crl)(?<raw>/raw)?', 'cert'],
    ['ca(/pem)?_chain', ''],
    ['certs?', ''],
    ['(?:unified-)?crl', ''],
    ['(?<any>[^/]+)/first', ''],
    ['alpha/x|beta/y', ''],
    ['a(/b|c)/d', 'a'],
    ['a[|]/x', ''],
    ['', ''],
  ])('fixes the first segment of %j as %j', (pattern, first) => expect(literalFirstSegment(pattern)).toBe(first));
});
