// A role applied to a whole issue/sign request: the resulting subject and SANs, every refusal with
// Vault's message, and names smuggled in a CSR (SANs, IPs, URIs, other SANs, serial numbers, user
// ids) refusing the request as a whole.
import { describe, expect, it } from 'vitest';
import { emptySans, emptySubject, type SanSet, type SubjectFields } from '../../../../src/crypto/pki/certificate';
import type { ParsedCsr } from '../../../../src/crypto/pki/csr';
import { CofferError } from '../../../../src/framework/errors';
import { FieldData } from '../../../../src/framework/fields';
import type { NameContext } from '../../../../src/engines/pki/name-policy';
import { leafNames, parseIp, type LeafNameRequest } from '../../../../src/engines/pki/request-policy';
import { ROLE_FIELDS, roleFromWrite, validateRole, type RoleEntry } from '../../../../src/engines/pki/role';

function role(fields: Record<string, unknown> = {}): RoleEntry {
  const f = new FieldData(ROLE_FIELDS, fields);
  f.validate();
  const { role: r } = roleFromWrite(f, null);
  validateRole(r);
  return r;
}

const request = (r: Partial<LeafNameRequest> = {}): LeafNameRequest => ({
  commonName: '',
  altNames: null,
  ipSans: [],
  uriSans: [],
  otherSans: [],
  serialNumber: '',
  excludeCnFromSans: false,
  userIds: [],
  ...r,
});


/** The parts of a parsed CSR the name policy reads. */
function csr(subject: Partial<SubjectFields> = {}, sans: Partial<SanSet> = {}): ParsedCsr {
  return {
    der: new Uint8Array(0),
    subject: { ...emptySubject(), ...subject },
    subjectDer: new Uint8Array(0),
    sans: { ...emptySans(), ...sans },
    spki: new Uint8Array(0),
    keyInfo: { type: 'ec', bits: 256 },
    keyUsage: null,
    extKeyUsage: null,
    extKeyUsageOids: [],
    basicConstraints: null,
    extensions: [],
  };
}

const ctx: NameContext = { displayName: 'token', identity: null };

/** The 400 message a call throws (fails the test if it does not throw one). */
function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(CofferError);
    expect((e as CofferError).status).toBe(400);
    return (e as CofferError).errors[0];
  }
  throw new Error('expected a 400');
}

const web = role({ allowed_domains: 'example.com', allow_subdomains: true, organization: 'Acme,Acme', ou: 'Web', country: 'DE' });

describe('issue: names from the request', () => {
  it('puts the CN and alt_names in the SANs (sorted, deduplicated) and the role subject fields in the subject', () => {
    const out = leafNames(web, request({ commonName: 'www.example.com', altNames: ['b.example.com', 'a.example.com', 'ops@mail.example.com', 'a.example.com', ' '] }), null, ctx);
    expect(out.sans.dnsNames).toEqual(['a.example.com', 'b.example.com', 'www.example.com']);
    expect(out.sans.emails).toEqual(['ops@mail.example.com']);
    expect(out.subject.commonName).toBe('www.example.com');
    expect(out.subject.organization).toEqual(['Acme']);
    expect(out.subject.ou).toEqual(['Web']);
    expect(out.subject.country).toEqual(['DE']);
    expect(out.subject.serialNumber).toBe('');
  });

  it('adds an email CN as an email SAN, and leaves the CN out with exclude_cn_from_sans', () => {
    const mail = role({ allowed_domains: 'example.com', allow_subdomains: true, allow_bare_domains: true });
    expect(leafNames(mail, request({ commonName: 'me@example.com' }), null, ctx).sans.emails).toEqual(['me@example.com']);
    const out = leafNames(web, request({ commonName: 'www.example.com', excludeCnFromSans: true }), null, ctx);
    expect(out.sans.dnsNames).toEqual([]);
    expect(out.subject.commonName).toBe('www.example.com');
  });

  it('keeps a CN that is not a host name out of the SANs (cn_validations=disabled)', () => {
    const free = role({ cn_validations: 'disabled', allow_any_name: true });
    const out = leafNames(free, request({ commonName: 'My Service #1' }), null, ctx);
    expect(out.subject.commonName).toBe('My Service #1');
    expect(out.sans.dnsNames).toEqual([]);
    const unicode = leafNames(free, request({ commonName: 'Ünïcödé Näme!' }), null, ctx);
    expect(unicode.subject.commonName).toBe('Ünïcödé Näme!');
    expect(unicode.sans.dnsNames).toEqual([]);
  });

  it('converts IDN names to punycode in the SANs', () => {
    const out = leafNames(web, request({ commonName: 'bücher.example.com' }), null, ctx);
    expect(out.sans.dnsNames).toEqual(['xn--bcher-kva.example.com']);
  });

  it('takes IP, URI and other SANs, serial number and user ids when the role allows them', () => {
    const r = role({
      allowed_domains: 'example.com',
      allow_subdomains: true,
      allowed_uri_sans: 'spiffe://corp/*',
      allowed_other_sans: '1.3.6.1.4.1.311.20.2.3;UTF8:*@corp',
      allowed_serial_numbers: 'SN-*',
      allowed_user_ids: 'alice',
    });
    const out = leafNames(
      r,
      request({
        commonName: 'a.example.com',
        ipSans: ['10.0.0.1', '2001:DB8::1', '::ffff:192.0.2.1'],
        uriSans: ['spiffe://corp/ns/a'],
        otherSans: ['1.3.6.1.4.1.311.20.2.3;UTF8:bob@corp'],
        serialNumber: 'SN-7',
        userIds: ['alice'],
      }),
      null,
      ctx,
    );
    expect(out.sans.ips).toEqual(['10.0.0.1', '2001:db8::1', '192.0.2.1']);
    expect(out.sans.uris).toEqual(['spiffe://corp/ns/a']);
    expect(out.sans.otherNames).toEqual([{ oid: '1.3.6.1.4.1.311.20.2.3', value: 'bob@corp' }]);
    expect(out.subject.serialNumber).toBe('SN-7');
    expect(out.subject.userIds).toEqual(['alice']);
  });

  it('needs a common name unless require_cn=false', () => {
    expect(refusal(() => leafNames(web, request(), null, ctx))).toBe(
      'the common_name field is required, or must be provided in a CSR with "use_csr_common_name" set to true, unless "require_cn" is set to false',
    );
    const optional = role({ require_cn: false, allowed_domains: 'example.com', allow_subdomains: true });
    const out = leafNames(optional, request({ altNames: ['x.example.com'] }), null, ctx);
    expect(out.subject.commonName).toBe('');
    expect(out.sans.dnsNames).toEqual(['x.example.com']);
  });

  it.each<[string, RoleEntry, Partial<LeafNameRequest>, string]>([
    ['CN', web, { commonName: 'www.evil.com' }, 'common name www.evil.com not allowed by this role'],
    ['excluded CN is still checked', web, { commonName: 'www.evil.com', excludeCnFromSans: true }, 'common name www.evil.com not allowed by this role'],
    ['DNS SAN', web, { commonName: 'a.example.com', altNames: ['x.evil.com'] }, 'subject alternate name x.evil.com not allowed by this role'],
    ['email SAN', web, { commonName: 'a.example.com', altNames: ['me@evil.com'] }, 'email address me@evil.com not allowed by this role'],
    ['bad DNS SAN', web, { commonName: 'a.example.com', altNames: ['not a host'] }, 'subject alternate name not a host is not a valid DNS name and cannot be included as a SAN'],
    ['IDNA failure', web, { commonName: 'a..example.com' }, 'idna: invalid label "a..example.com"'],
    ['IP SANs forbidden', role({ allow_any_name: true, allow_ip_sans: false }), { commonName: 'x.y', ipSans: ['10.0.0.1', '10.0.0.2'] }, 'IP Subject Alternative Names are not allowed in this role, but was provided [10.0.0.1 10.0.0.2]'],
    ['bad IP', web, { commonName: 'a.example.com', ipSans: ['10.0.0.256'] }, 'the value "10.0.0.256" is not a valid IP address'],
    ['IPv4 with leading zero', web, { commonName: 'a.example.com', ipSans: ['010.0.0.1'] }, 'the value "010.0.0.1" is not a valid IP address'],
    ['URI SANs forbidden', web, { commonName: 'a.example.com', uriSans: ['https://x'] }, 'URI Subject Alternative Names are not allowed in this role, but were provided via the API'],
    ['URI not allowed', role({ allow_any_name: true, allowed_uri_sans: 'spiffe://corp/*' }), { commonName: 'x.y', uriSans: ['spiffe://other/a'] }, 'URI Subject Alternative Names were provided via the API which are not valid for this role'],
    ['bad URI', role({ allow_any_name: true, allowed_uri_sans: '*' }), { commonName: 'x.y', uriSans: ['http://x/%zz'] }, 'the provided URI Subject Alternative Name "http://x/%zz" is not a valid URI'],
    ['other SAN OID', web, { commonName: 'a.example.com', otherSans: ['1.2.3;UTF8:x'] }, 'other SAN OID 1.2.3 not allowed by this role'],
    ['other SAN value', role({ allow_any_name: true, allowed_other_sans: '1.2.3;UTF8:ok-*' }), { commonName: 'x.y', otherSans: ['1.2.3;UTF8:bad'] }, 'other SAN bad not allowed for OID 1.2.3 by this role'],
    ['malformed other SAN', web, { commonName: 'a.example.com', otherSans: ['1.2.3:x'] }, 'could not parse requested other SAN: expected a semicolon in other SAN "1.2.3:x"'],
    ['serial number', web, { commonName: 'a.example.com', serialNumber: 'SN-1' }, 'serial_number SN-1 not allowed by this role'],
    ['user id', web, { commonName: 'a.example.com', userIds: ['mallory'] }, 'user_id mallory is not allowed by this role'],
  ])('refuses: %s', (_label, r, req, message) => {
    expect(refusal(() => leafNames(r, request(req), null, ctx))).toBe(message);
  });
});

describe('sign: names from the CSR', () => {
  it('uses the CSR CN and SANs, ignoring the request\'s alt_names and ip_sans', () => {
    const r = role({ allowed_domains: 'example.com', allow_subdomains: true });
    const c = csr({ commonName: 'csr.example.com' }, { dnsNames: ['alt.example.com'], ips: ['10.1.1.1'] });
    const out = leafNames(r, request({ commonName: 'req.example.com', altNames: ['other.example.com'], ipSans: ['10.9.9.9'] }), c, ctx);
    expect(out.subject.commonName).toBe('csr.example.com');
    expect(out.sans.dnsNames).toEqual(['alt.example.com', 'csr.example.com']);
    expect(out.sans.ips).toEqual(['10.1.1.1']);
  });

  it('uses the request values when use_csr_common_name / use_csr_sans are off', () => {
    const r = role({ allowed_domains: 'example.com', allow_subdomains: true, use_csr_common_name: false, use_csr_sans: false });
    const c = csr({ commonName: 'csr.example.com' }, { dnsNames: ['x.evil.com'], ips: ['10.1.1.1'] });
    const out = leafNames(r, request({ commonName: 'req.example.com', altNames: ['b.example.com'] }), c, ctx);
    expect(out.subject.commonName).toBe('req.example.com');
    expect(out.sans.dnsNames).toEqual(['b.example.com', 'req.example.com']);
    expect(out.sans.ips).toEqual([]);
  });

  it('falls back to the request CN when the CSR has none', () => {
    const out = leafNames(web, request({ commonName: 'req.example.com' }), csr(), ctx);
    expect(out.subject.commonName).toBe('req.example.com');
  });

  it('takes the subject serial number and user ids from the CSR when the request has none', () => {
    const r = role({ allow_any_name: true, allowed_serial_numbers: '*', allowed_user_ids: '*' });
    const out = leafNames(r, request(), csr({ commonName: 'x.y', serialNumber: 'SN-CSR', userIds: ['u1'] }), ctx);
    expect(out.subject.serialNumber).toBe('SN-CSR');
    expect(out.subject.userIds).toEqual(['u1']);
    const overridden = leafNames(r, request({ serialNumber: 'SN-REQ', userIds: ['u2'] }), csr({ commonName: 'x.y', serialNumber: 'SN-CSR', userIds: ['u1'] }), ctx);
    expect(overridden.subject.serialNumber).toBe('SN-REQ');
    expect(overridden.subject.userIds).toEqual(['u2']);
  });

  // The CVE class: whatever a CSR carries is held to the role like request values are.
  it.each<[string, RoleEntry, ParsedCsr, string]>([
    ['a CN the role forbids', web, csr({ commonName: 'www.evil.com' }), 'common name www.evil.com not allowed by this role'],
    ['a DNS SAN the role forbids', web, csr({ commonName: 'ok.example.com' }, { dnsNames: ['ok2.example.com', 'attacker.evil.com'] }), 'subject alternate name attacker.evil.com not allowed by this role'],
    ['an email SAN the role forbids', web, csr({ commonName: 'ok.example.com' }, { emails: ['ceo@evil.com'] }), 'email address ceo@evil.com not allowed by this role'],
    ['an IP SAN when IP SANs are off', role({ allowed_domains: 'example.com', allow_subdomains: true, allow_ip_sans: false }), csr({ commonName: 'ok.example.com' }, { ips: ['10.0.0.1'] }), 'IP Subject Alternative Names are not allowed in this role, but was provided some via CSR'],
    ['a URI SAN when none are allowed', web, csr({ commonName: 'ok.example.com' }, { uris: ['https://evil'] }), 'URI Subject Alternative Names are not allowed in this role, but were provided via CSR'],
    ['a URI SAN outside allowed_uri_sans', role({ allowed_domains: 'example.com', allow_subdomains: true, allowed_uri_sans: 'spiffe://corp/*' }), csr({ commonName: 'ok.example.com' }, { uris: ['spiffe://corp/a', 'spiffe://evil/b'] }), 'URI Subject Alternative Names were provided via CSR which are not valid for this role'],
    ['an other SAN OID the role forbids', web, csr({ commonName: 'ok.example.com' }, { otherNames: [{ oid: '1.3.6.1.4.1.311.20.2.3', value: 'admin@corp' }] }), 'other SAN OID 1.3.6.1.4.1.311.20.2.3 not allowed by this role'],
    ['an other SAN value the role forbids', role({ allowed_domains: 'example.com', allow_subdomains: true, allowed_other_sans: '1.2.3;UTF8:user-*' }), csr({ commonName: 'ok.example.com' }, { otherNames: [{ oid: '1.2.3', value: 'admin' }] }), 'other SAN admin not allowed for OID 1.2.3 by this role'],
    ['a subject serial number', web, csr({ commonName: 'ok.example.com', serialNumber: 'SN-EVIL' }), 'serial_number SN-EVIL not allowed by this role'],
    ['a user id', web, csr({ commonName: 'ok.example.com', userIds: ['root'] }), 'user_id root is not allowed by this role'],
    ['a wildcard when wildcards are off', role({ allowed_domains: 'example.com', allow_subdomains: true, allow_wildcard_certificates: false }), csr({ commonName: 'ok.example.com' }, { dnsNames: ['*.example.com'] }), 'subject alternate name *.example.com not allowed by this role'],
  ])('refuses a CSR carrying %s', (_label, r, c, message) => {
    expect(refusal(() => leafNames(r, request(), c, ctx))).toBe(message);
  });

  it('checks CSR SANs even when the CSR CN is ignored', () => {
    const r = role({ allowed_domains: 'example.com', allow_subdomains: true, use_csr_common_name: false });
    const c = csr({ commonName: 'ignored.evil.com' }, { dnsNames: ['x.evil.com'] });
    expect(refusal(() => leafNames(r, request({ commonName: 'a.example.com' }), c, ctx))).toBe('subject alternate name x.evil.com not allowed by this role');
  });
});

describe('IP parsing (Go net.ParseIP)', () => {
  it.each([
    ['1.2.3.4', '1.2.3.4'],
    ['255.255.255.255', '255.255.255.255'],
    ['::1', '::1'],
    ['2001:0DB8:0:0::1', '2001:db8::1'],
    ['::ffff:10.0.0.1', '10.0.0.1'],
    ['1.2.3', null],
    ['1.2.3.4.5', null],
    ['01.2.3.4', null],
    ['fe80::1%eth0', null],
    ['[::1]', null],
    ['example.com', null],
    ['', null],
  ])('%s → %s', (input, want) => {
    expect(parseIp(input)).toBe(want);
  });
});
