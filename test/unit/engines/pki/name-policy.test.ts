// The role's name rules (reference §1.14 "Name validation algorithm"): a table of names against
// role settings, the CN type check, IDNA conversion, globs, templates, other SANs, URI SANs,
// serial numbers and user ids.
import { describe, expect, it } from 'vitest';
import { FieldData } from '../../../../src/framework/fields';
import {
  commonNameAllowed,
  disallowedOtherSan,
  glob,
  nameAllowed,
  resolveTemplate,
  serialNumberAllowed,
  toAsciiHostname,
  uriSanAllowed,
  userIdAllowed,
  type NameContext,
} from '../../../../src/engines/pki/name-policy';
import { parseOtherSans } from '../../../../src/engines/pki/other-sans';
import { ROLE_FIELDS, roleFromWrite, validateRole, type RoleEntry } from '../../../../src/engines/pki/role';

/** A role as POST roles/:name would store it from these fields (defaults for the rest). */
function role(fields: Record<string, unknown> = {}): RoleEntry {
  const f = new FieldData(ROLE_FIELDS, fields);
  f.validate();
  const { role: r } = roleFromWrite(f, null);
  validateRole(r);
  return r;
}

const anon: NameContext = { displayName: 'token', identity: null };

describe('name rules: a table of names × role settings', () => {
  const subdomains = role({ allowed_domains: 'example.com', allow_subdomains: true });
  const bare = role({ allowed_domains: 'example.com', allow_bare_domains: true });
  const both = role({ allowed_domains: 'example.com', allow_bare_domains: true, allow_subdomains: true });
  const globbing = role({ allowed_domains: '*.example.com,ex*le.org', allow_glob_domains: true });
  const anyName = role({ allow_any_name: true });
  const anyNameLoose = role({ allow_any_name: true, enforce_hostnames: false });
  const noWildcards = role({ allow_any_name: true, allow_wildcard_certificates: false });
  const noLocalhost = role({ allow_localhost: false, allowed_domains: 'example.com', allow_subdomains: true });
  const localSub = role({ allow_subdomains: true });
  const nothing = role({});

  const table: [string, RoleEntry, string, boolean][] = [
    ['subdomains', subdomains, 'foo.example.com', true],
    ['subdomains', subdomains, 'a.b.example.com', true],
    ['subdomains', subdomains, 'example.com', false],
    ['subdomains', subdomains, 'fooexample.com', false],
    ['subdomains', subdomains, 'foo.example.com.evil.org', false],
    ['subdomains', subdomains, 'FOO.EXAMPLE.COM', false], // the suffix match is case-sensitive, as in Vault
    ['subdomains', subdomains, '*.example.com', true],
    ['subdomains', subdomains, 'f*.example.com', true],
    ['subdomains', subdomains, '*o.example.com', true],
    ['subdomains', subdomains, 'f*o.example.com', true],
    ['subdomains', subdomains, '*.*.example.com', false],
    ['subdomains', subdomains, 'foo.*.example.com', false],
    ['subdomains', subdomains, '**.example.com', false],
    ['subdomains', subdomains, 'bad_name.example.com', false],
    ['subdomains', subdomains, 'bücher.example.com', true],
    ['subdomains', subdomains, '-bad.example.com', false],
    ['subdomains', subdomains, 'a..example.com', false],
    ['subdomains', subdomains, `${'a'.repeat(64)}.example.com`, false],
    ['subdomains', subdomains, 'user@mail.example.com', true],
    ['subdomains', subdomains, 'user@example.com', false],
    ['subdomains', subdomains, 'a@b@mail.example.com', false],
    ['subdomains', subdomains, 'user@*.example.com', false],
    ['subdomains', subdomains, 'localhost', true],
    ['subdomains', subdomains, 'web.localhost', true],
    ['subdomains', subdomains, 'localdomain', true],
    ['subdomains', subdomains, '*.localdomain', true],
    ['subdomains', subdomains, 'root@localhost', true],
    ['bare', bare, 'example.com', true],
    ['bare', bare, 'Example.COM', true],
    ['bare', bare, 'user@example.com', true],
    ['bare', bare, 'foo.example.com', false],
    ['bare', bare, '*.example.com', false],
    ['bare', bare, 'web.localhost', false], // localhost subdomains need allow_subdomains
    ['bare+subdomains', both, 'example.com', true],
    ['bare+subdomains', both, 'x.example.com', true],
    ['glob', globbing, 'a.b.example.com', true], // a glob `*` spans dots
    ['glob', globbing, 'A.Example.com', true], // globs compare lowercased
    ['glob', globbing, '*.example.com', true],
    ['glob', globbing, 'example.com', false],
    ['glob', globbing, 'example.org', true],
    ['glob', globbing, 'exabc.org', false],
    ['any name', anyName, 'anything.at.all', true],
    ['any name', anyName, '*.wild.example', true],
    ['any name', anyName, 'not a hostname', false], // enforce_hostnames still applies
    ['any name', anyName, 'under_score.example', false],
    ['any name, hostnames not enforced', anyNameLoose, 'not a hostname', true],
    ['any name, no wildcards', noWildcards, '*.example.com', false],
    ['any name, no wildcards', noWildcards, 'www.example.com', true],
    ['no localhost', noLocalhost, 'localhost', false],
    ['no localhost', noLocalhost, 'web.example.com', true],
    ['localhost subdomains', localSub, 'a.localhost', true],
    ['localhost subdomains', localSub, '*.localhost', true],
    ['localhost subdomains', localSub, 'a.example.com', false],
    ['default role', nothing, 'localhost', true],
    ['default role', nothing, 'localhost.', false], // compared verbatim, as Vault does
    ['default role', nothing, 'a.localhost', false],
    ['default role', nothing, 'example.com', false],
  ];
  it.each(table)('%s: %s → %s', (_label, r, name, allowed) => {
    expect(nameAllowed(r, anon, name)).toBe(allowed);
  });

  it('allows the token display name, and its subdomains only with allow_subdomains', () => {
    const ctx: NameContext = { displayName: 'bob.corp', identity: null };
    const r = role({ allow_token_displayname: true });
    expect(nameAllowed(r, ctx, 'bob.corp')).toBe(true);
    expect(nameAllowed(r, ctx, 'x.bob.corp')).toBe(false);
    const sub = role({ allow_token_displayname: true, allow_subdomains: true });
    expect(nameAllowed(sub, ctx, 'x.bob.corp')).toBe(true);
    expect(nameAllowed(sub, ctx, '*.bob.corp')).toBe(true);
    expect(nameAllowed(sub, ctx, 'x.alice.corp')).toBe(false);
    expect(nameAllowed(role({}), ctx, 'bob.corp')).toBe(false);
    // An email display name: subdomains of its domain part.
    const mail: NameContext = { displayName: 'bob@corp.example', identity: null };
    expect(nameAllowed(sub, mail, 'bob@corp.example')).toBe(true);
    expect(nameAllowed(sub, mail, 'x@mx.corp.example')).toBe(true);
  });

  it('fills identity templates in allowed_domains only when the role enables them', () => {
    const entity: NameContext = { displayName: 't', identity: { entityId: 'ent-1', entityName: 'alice', aliasNames: { auth_jwt_1: 'alice@corp' } } };
    const templated = role({ allowed_domains: '{{identity.entity.id}}.example.com,{{identity.entity.name}}.corp', allowed_domains_template: true, allow_bare_domains: true });
    expect(nameAllowed(templated, entity, 'ent-1.example.com')).toBe(true);
    expect(nameAllowed(templated, entity, 'alice.corp')).toBe(true);
    expect(nameAllowed(templated, entity, 'other.example.com')).toBe(false);
    // No identity: the templated entries are skipped, not matched literally.
    expect(nameAllowed(templated, anon, '{{identity.entity.id}}.example.com')).toBe(false);
    const literal = role({ allowed_domains: '{{identity.entity.id}}.example.com', allow_bare_domains: true });
    expect(nameAllowed(literal, entity, 'ent-1.example.com')).toBe(false);
    const alias = role({ allowed_domains: '{{identity.entity.aliases.auth_jwt_1.name}}', allowed_domains_template: true, allow_bare_domains: true });
    expect(nameAllowed(alias, entity, 'alice@corp')).toBe(true); // a bare match compares the whole name
    expect(nameAllowed(alias, entity, 'x@alice@corp')).toBe(false); // two @: never a valid name
  });

  it('resolves templates, refusing unknown or unresolvable ones', () => {
    const id = { entityId: 'e1', entityName: 'n1', aliasNames: { acc: 'al' } };
    expect(resolveTemplate('{{identity.entity.id}}.x', id)).toBe('e1.x');
    expect(resolveTemplate('{{ identity.entity.name }}-{{identity.entity.aliases.acc.name}}', id)).toBe('n1-al');
    expect(resolveTemplate('{{identity.entity.aliases.other.name}}', id)).toBeNull();
    expect(resolveTemplate('{{identity.entity.metadata.x}}', id)).toBeNull();
    expect(resolveTemplate('{{identity.entity.name}}', { entityId: 'e1' })).toBeNull();
    expect(resolveTemplate('{{identity.entity.id}}', null)).toBeNull();
    expect(resolveTemplate('{{identity.entity.id', id)).toBeNull();
    expect(resolveTemplate('plain', null)).toBe('plain');
  });
});

describe('the common name check', () => {
  it('runs the name rules, then requires email or hostname validation by the CN shape', () => {
    const hostOnly = role({ allow_any_name: true, cn_validations: 'hostname' });
    expect(commonNameAllowed(hostOnly, anon, 'www.example.com')).toBe(true);
    expect(commonNameAllowed(hostOnly, anon, 'me@example.com')).toBe(false);
    const emailOnly = role({ allow_any_name: true, cn_validations: ['email'] });
    expect(commonNameAllowed(emailOnly, anon, 'me@example.com')).toBe(true);
    expect(commonNameAllowed(emailOnly, anon, 'www.example.com')).toBe(false);
    const both = role({ allow_any_name: true });
    expect(commonNameAllowed(both, anon, 'me@example.com')).toBe(true);
    expect(commonNameAllowed(both, anon, 'www.example.com')).toBe(true);
  });

  it('skips every check with cn_validations=disabled, allowed_domains included', () => {
    const disabled = role({ cn_validations: 'disabled', allow_localhost: false });
    expect(commonNameAllowed(disabled, anon, 'My Service (prod) #1')).toBe(true);
    expect(commonNameAllowed(disabled, anon, '*.*.anything')).toBe(true);
    expect(nameAllowed(disabled, anon, 'My Service (prod) #1')).toBe(false);
  });
});

describe('IDNA conversion (Go idna, no mapping)', () => {
  it('keeps ASCII labels as they are and punycodes the others', () => {
    expect(toAsciiHostname('Example.COM')).toBe('Example.COM');
    expect(toAsciiHostname('bücher.example')).toBe('xn--bcher-kva.example');
    expect(toAsciiHostname('host.example.')).toBe('host.example.');
    expect(toAsciiHostname('under_score.example')).toBe('under_score.example');
  });
  it('refuses empty labels, long labels and long names', () => {
    expect(() => toAsciiHostname('a..b')).toThrow('idna: invalid label');
    expect(() => toAsciiHostname('')).toThrow('idna: invalid label');
    expect(() => toAsciiHostname('.')).toThrow('idna: invalid label');
    expect(() => toAsciiHostname(`${'a'.repeat(64)}.x`)).toThrow('idna: invalid label');
    expect(toAsciiHostname(`${'a'.repeat(63)}.x`)).toBe(`${'a'.repeat(63)}.x`);
    expect(() => toAsciiHostname(Array(60).fill('abcd').join('.'))).toThrow('idna: invalid label'); // 299 bytes
  });
});

describe('globs (go-glob: only * is special)', () => {
  it.each([
    ['*', 'anything', true],
    ['', '', true],
    ['', 'x', false],
    ['abc', 'abc', true],
    ['abc', 'abd', false],
    ['a*', 'abc', true],
    ['a*', 'b', false],
    ['*c', 'abc', true],
    ['*c', 'abd', false],
    ['a*b*c', 'axxbyyc', true],
    ['a*b*c', 'axxbyy', false],
    ['*.example.com', 'example.com', false],
    ['*.example.com', 'a.b.example.com', true],
    ['spiffe://corp/*', 'spiffe://corp/ns/a', true],
    ['a?c', 'abc', false],
  ])('%s ~ %s → %s', (p, s, want) => {
    expect(glob(p, s)).toBe(want);
  });
});

describe('other SANs, URI SANs, serial numbers, user ids', () => {
  it('parses <oid>;UTF8:<value> (also UTF-8, any case), refusing other forms with Vault\'s words', () => {
    expect([...parseOtherSans(['1.2.3;UTF8:a', '1.2.3;utf-8:b:c', '1.3;Utf8:'])]).toEqual([
      ['1.2.3', ['a', 'b:c']],
      ['1.3', ['']],
    ]);
    expect(() => parseOtherSans(['1.2.3'])).toThrow('expected a semicolon in other SAN "1.2.3"');
    expect(() => parseOtherSans(['1.2.3;UTF8'])).toThrow('expected a colon in other SAN "1.2.3;UTF8"');
    expect(() => parseOtherSans(['1.2.3;IA5:x'])).toThrow('only utf8 other SANs are supported; found non-supported type in other SAN "1.2.3;IA5:x"');
  });

  it('matches requested other SANs by OID, then by value glob', () => {
    const r = role({ allowed_other_sans: ['1.2.3;UTF8:dev-*', '1.2.4;UTF8:*'] });
    expect(disallowedOtherSan(r, parseOtherSans(['1.2.3;UTF8:dev-01', '1.2.4;UTF8:whatever']))).toBeNull();
    expect(disallowedOtherSan(r, parseOtherSans(['1.2.3;UTF8:prod-01']))).toEqual({ oid: '1.2.3', value: 'prod-01' });
    expect(disallowedOtherSan(r, parseOtherSans(['1.9;UTF8:x']))).toEqual({ oid: '1.9', value: '' });
    expect(disallowedOtherSan(role({}), parseOtherSans(['1.2.3;UTF8:x']))).toEqual({ oid: '1.2.3', value: '' });
    expect(disallowedOtherSan(role({ allowed_other_sans: '*' }), parseOtherSans(['9.9;UTF8:x']))).toBeNull();
  });

  it('globs URI SANs, templated only when allowed_uri_sans_template is set', () => {
    const ctx: NameContext = { displayName: 't', identity: { entityId: 'ent-9' } };
    const r = role({ allowed_uri_sans: 'spiffe://corp/*,https://{{identity.entity.id}}.svc', allowed_uri_sans_template: true });
    expect(uriSanAllowed(r, ctx, 'spiffe://corp/ns/x')).toBe(true);
    expect(uriSanAllowed(r, ctx, 'https://ent-9.svc')).toBe(true);
    expect(uriSanAllowed(r, ctx, 'https://other.svc')).toBe(false);
    expect(uriSanAllowed(r, anon, 'https://ent-9.svc')).toBe(false);
    expect(uriSanAllowed(role({}), ctx, 'spiffe://corp/ns/x')).toBe(false);
  });

  it('allows serial numbers exactly or by glob; none by default', () => {
    const r = role({ allowed_serial_numbers: ['SN-1', 'LOT-*'] });
    expect(serialNumberAllowed(r, 'SN-1')).toBe(true);
    expect(serialNumberAllowed(r, 'sn-1')).toBe(false);
    expect(serialNumberAllowed(r, 'LOT-77')).toBe(true);
    expect(serialNumberAllowed(r, 'SN-2')).toBe(false);
    expect(serialNumberAllowed(role({}), 'SN-1')).toBe(false);
  });

  it('allows user ids case-insensitively or by glob; none by default', () => {
    const r = role({ allowed_user_ids: ['Alice', 'svc-*'] });
    expect(userIdAllowed(r, 'alice')).toBe(true);
    expect(userIdAllowed(r, 'svc-web')).toBe(true);
    expect(userIdAllowed(r, 'bob')).toBe(false);
    expect(userIdAllowed(role({}), 'alice')).toBe(false);
    expect(userIdAllowed(role({ allowed_user_ids: '*' }), 'anyone')).toBe(true);
  });
});
