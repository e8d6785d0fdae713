// PKI roles through the Worker: LIST/GET/POST/PATCH/DELETE, the read shape with every default,
// field coercion, key type rules, Vault's validation errors (each leaving nothing behind) and the
// write warnings.
import { beforeAll, describe, expect, it } from 'vitest';
import { api, caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { call, ok } = caller(() => c.root);
const patch = (path: string, body: unknown, contentType = 'application/merge-patch+json') =>
  api('PATCH', path, { token: c.root, body, headers: { 'Content-Type': contentType } });

const NO_DEFAULT_ISSUER = 'Issuing Certificate was set to default, but no default issuing certificate (configurable at /config/issuers) is currently set';

/** GET roles/:name of a role created with no fields (reference §1.14 defaults). */
const DEFAULT_ROLE = {
  ttl: 0,
  max_ttl: 0,
  allow_localhost: true,
  allowed_domains: [],
  allowed_domains_template: false,
  allow_bare_domains: false,
  allow_subdomains: false,
  allow_glob_domains: false,
  allow_wildcard_certificates: true,
  allow_any_name: false,
  allow_token_displayname: false,
  enforce_hostnames: true,
  allow_ip_sans: true,
  allowed_uri_sans: [],
  allowed_uri_sans_template: false,
  allowed_other_sans: [],
  allowed_serial_numbers: [],
  allowed_user_ids: [],
  server_flag: true,
  client_flag: true,
  code_signing_flag: false,
  email_protection_flag: false,
  key_type: 'rsa',
  key_bits: 2048,
  signature_bits: 256,
  use_pss: false,
  key_usage: ['DigitalSignature', 'KeyAgreement', 'KeyEncipherment'],
  ext_key_usage: [],
  ext_key_usage_oids: [],
  use_csr_common_name: true,
  use_csr_sans: true,
  ou: [],
  organization: [],
  country: [],
  locality: [],
  province: [],
  street_address: [],
  postal_code: [],
  generate_lease: false,
  no_store: false,
  require_cn: true,
  cn_validations: ['email', 'hostname'],
  policy_identifiers: [],
  basic_constraints_valid_for_non_ca: false,
  not_before_duration: 30,
  not_after: '',
  issuer_ref: 'default',
};

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/pki', { type: 'pki' });
});

describe('creating and reading roles', () => {
  it('answers 404 to LIST while there are no roles', async () => {
    const r = await call('GET', 'pki/roles?list=true');
    expect(r.status).toBe(404);
  });

  it('creates a role with every default and answers with it, warning that no default issuer exists yet', async () => {
    const created = await call('POST', 'pki/roles/plain', {});
    expect(created.status).toBe(200);
    expect(created.body.data).toEqual(DEFAULT_ROLE);
    expect(created.body.warnings).toEqual([NO_DEFAULT_ISSUER]);
    const read = await ok('GET', 'pki/roles/plain');
    expect(read.body.data).toEqual(DEFAULT_ROLE);
    expect(read.body.lease_id).toBe('');
  });

  it('coerces comma strings, durations and string booleans as Vault does', async () => {
    await ok('POST', 'pki/roles/coerced', {
      allowed_domains: 'example.com, example.org',
      allow_subdomains: 'true',
      ttl: '1h',
      max_ttl: 7200,
      not_before_duration: '2m',
      key_usage: 'DigitalSignature',
      ext_key_usage: ['ServerAuth', 'TimeStamping'],
      ext_key_usage_oids: '1.3.6.1.5.5.7.3.17',
      organization: 'Acme,Acme Labs',
      ou: ['Ops'],
      country: 'DE',
      allowed_uri_sans: 'spiffe://corp/*',
      allowed_other_sans: '1.3.6.1.4.1.311.20.2.3;UTF8:*@corp',
      allowed_serial_numbers: 'SN-*',
      allowed_user_ids: 'alice,bob',
      cn_validations: 'Hostname',
      not_after: '9999-12-31T23:59:59Z',
      issuer_ref: 'my-issuer',
    });
    const d = (await ok('GET', 'pki/roles/coerced')).body.data;
    expect(d.allowed_domains).toEqual(['example.com', 'example.org']);
    expect(d.allow_subdomains).toBe(true);
    expect(d.ttl).toBe(3600);
    expect(d.max_ttl).toBe(7200);
    expect(d.not_before_duration).toBe(120);
    expect(d.key_usage).toEqual(['DigitalSignature']);
    expect(d.ext_key_usage).toEqual(['ServerAuth', 'TimeStamping']);
    expect(d.ext_key_usage_oids).toEqual(['1.3.6.1.5.5.7.3.17']);
    expect(d.organization).toEqual(['Acme', 'Acme Labs']);
    expect(d.ou).toEqual(['Ops']);
    expect(d.country).toEqual(['DE']);
    expect(d.allowed_uri_sans).toEqual(['spiffe://corp/*']);
    expect(d.allowed_other_sans).toEqual(['1.3.6.1.4.1.311.20.2.3;UTF8:*@corp']);
    expect(d.allowed_serial_numbers).toEqual(['SN-*']);
    expect(d.allowed_user_ids).toEqual(['alice', 'bob']);
    expect(d.cn_validations).toEqual(['hostname']);
    expect(d.not_after).toBe('9999-12-31T23:59:59Z');
    expect(d.issuer_ref).toBe('my-issuer');
  });

  it('stores issuer_ref as given and warns when it names no issuer', async () => {
    const r = await ok('POST', 'pki/roles/named-issuer', { issuer_ref: 'future-issuer' });
    expect(r.body.warnings).toEqual(['Issuing Certificate was set to future-issuer but no issuing certificate currently has that name']);
    expect(r.body.data.issuer_ref).toBe('future-issuer');
  });

  it('settles key_bits and signature_bits per key type', async () => {
    const cases: [Record<string, unknown>, number, number][] = [
      [{ key_type: 'rsa', key_bits: 4096, signature_bits: 384 }, 4096, 384],
      [{ key_type: 'rsa', key_bits: 3072 }, 3072, 256],
      [{ key_type: 'ec' }, 256, 0],
      [{ key_type: 'ec', key_bits: 521 }, 521, 0],
      [{ key_type: 'ec', key_bits: 224, signature_bits: 384 }, 224, 384],
      [{ key_type: 'ed25519' }, 0, 0],
      [{ key_type: 'any' }, 0, 0],
    ];
    for (const [fields, bits, sig] of cases) {
      const d = (await ok('POST', 'pki/roles/keys', fields)).body.data;
      expect([d.key_type, d.key_bits, d.signature_bits]).toEqual([fields.key_type, bits, sig]);
    }
  });

  it('keeps qualified policy identifiers given as a JSON list, one JSON string each', async () => {
    const policies = JSON.stringify([{ oid: '1.3.6.1.4.1.7.8', notice: 'I am a user Notice' }, { oid: '1.3.6.1.4.1.44947.1.2.4', cps: 'https://example.com' }]);
    const d = (await ok('POST', 'pki/roles/policies', { policy_identifiers: policies })).body.data;
    expect(d.policy_identifiers).toEqual(['{"oid":"1.3.6.1.4.1.7.8","notice":"I am a user Notice"}', '{"oid":"1.3.6.1.4.1.44947.1.2.4","cps":"https://example.com"}']);
    const plain = (await ok('POST', 'pki/roles/policies', { policy_identifiers: '1.2.3.4,2.5.29.32.0' })).body.data;
    expect(plain.policy_identifiers).toEqual(['1.2.3.4', '2.5.29.32.0']);
  });

  it('lists roles by name', async () => {
    const r = await ok('GET', 'pki/roles?list=true');
    expect(r.body.data.keys).toEqual(expect.arrayContaining(['plain', 'coerced', 'named-issuer', 'keys', 'policies']));
  });

  it('answers 404 for a role that does not exist', async () => {
    const r = await call('GET', 'pki/roles/nope');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ errors: [] });
  });
});

describe('leases and no_store', () => {
  it('warns about generate_lease', async () => {
    const r = await ok('POST', 'pki/roles/leased', { generate_lease: true });
    expect(r.body.data.generate_lease).toBe(true);
    expect(r.body.warnings).toContain(
      "it is encouraged to disable generate_lease and rely on PKI's native capabilities when possible; this option can cause Vault-wide issues with large numbers of issued certificates",
    );
  });

  it('lets no_store win over generate_lease, with a warning', async () => {
    const r = await ok('POST', 'pki/roles/unstored', { generate_lease: true, no_store: true });
    expect(r.body.data.generate_lease).toBe(false);
    expect(r.body.data.no_store).toBe(true);
    expect(r.body.warnings).toContain('mutually exclusive values no_store=true and generate_lease=true were both specified; no_store=true takes priority');
  });
});

describe('refused writes leave nothing behind', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['ttl above max_ttl', { ttl: '2h', max_ttl: '1h' }, '"ttl" value must be less than "max_ttl" value'],
    ['small RSA key', { key_bits: 1024 }, 'RSA keys < 2048 bits are unsafe and not supported: got 1024'],
    ['odd RSA size', { key_bits: 3000 }, 'unsupported bit length for RSA key: 3000'],
    ['odd EC size', { key_type: 'ec', key_bits: 512 }, 'unsupported bit length for EC key: 512'],
    ['unknown key type', { key_type: 'dsa' }, 'unknown key type dsa'],
    ['bad signature bits', { signature_bits: 123 }, 'unsupported hash signature algorithm: 123'],
    ['bad EKU OID', { ext_key_usage_oids: '1.2.x' }, '"1.2.x" could not be parsed as a valid oid for an extended key usage'],
    ['bad policy OID', { policy_identifiers: 'not-an-oid' }, '"not-an-oid" could not be parsed as a valid oid for a policy identifier'],
    ['malformed allowed_other_sans', { allowed_other_sans: '1.2.3:x' }, 'error parsing allowed_other_sans: expected a semicolon in other SAN "1.2.3:x"'],
    ['non-UTF8 allowed_other_sans', { allowed_other_sans: '1.2.3;IA5:x' }, 'error parsing allowed_other_sans: only utf8 other SANs are supported; found non-supported type in other SAN "1.2.3;IA5:x"'],
    ['unknown CN validation', { cn_validations: 'ip' }, 'cn_validations value incorrect: unknown type: `ip`'],
    ['repeated CN validation', { cn_validations: 'email,email' }, 'cn_validations value incorrect: `email` specified multiple times'],
    ['disabled with others', { cn_validations: 'disabled,hostname' }, 'cn_validations value incorrect: cannot specify `disabled` along with `email` or `hostname`'],
    ['a bad duration', { ttl: 'forever' }, 'error converting input "forever" for field "ttl": time: invalid duration "forever"'],
    ['a bad boolean', { allow_any_name: 'maybe' }, 'error converting input "maybe" for field "allow_any_name": cannot parse "maybe" as a boolean'],
  ])('refuses %s', async (_label, body, message) => {
    const r = await call('POST', 'pki/roles/refused', body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
    expect((await call('GET', 'pki/roles/refused')).status).toBe(404);
  });
});

describe('overwriting, patching and deleting', () => {
  it('POST overwrites the whole role: omitted fields go back to their defaults', async () => {
    await ok('POST', 'pki/roles/over', { allowed_domains: 'example.com', allow_subdomains: true, key_type: 'ec', ttl: 60 });
    const d = (await ok('POST', 'pki/roles/over', { allow_any_name: true })).body.data;
    expect(d).toEqual({ ...DEFAULT_ROLE, allow_any_name: true });
  });

  it('PATCH changes only the given fields', async () => {
    await ok('POST', 'pki/roles/patched', { allowed_domains: 'example.com', allow_subdomains: true, key_type: 'ec', ttl: 60, generate_lease: true });
    const r = await patch('pki/roles/patched', { allow_bare_domains: true, max_ttl: '1h', organization: 'Acme' });
    expect(r.status).toBe(200);
    const expected = {
      ...DEFAULT_ROLE,
      allowed_domains: ['example.com'],
      allow_subdomains: true,
      allow_bare_domains: true,
      key_type: 'ec',
      key_bits: 256,
      signature_bits: 0,
      ttl: 60,
      max_ttl: 3600,
      organization: ['Acme'],
      generate_lease: true,
    };
    expect(r.body.data).toEqual(expected);
    expect((await ok('GET', 'pki/roles/patched')).body.data).toEqual(expected);
  });

  it('PATCH with no_store turns a kept generate_lease off, with the warning', async () => {
    const r = await patch('pki/roles/patched', { no_store: true });
    expect(r.status).toBe(200);
    expect(r.body.data.generate_lease).toBe(false);
    expect(r.body.warnings).toContain('mutually exclusive values no_store=true and generate_lease=true were both specified; no_store=true takes priority');
  });

  it('a refused PATCH leaves the role as it was', async () => {
    const before = (await ok('GET', 'pki/roles/patched')).body.data;
    const r = await patch('pki/roles/patched', { ttl: '10h' });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['"ttl" value must be less than "max_ttl" value']);
    expect((await ok('GET', 'pki/roles/patched')).body.data).toEqual(before);
  });

  it('PATCH of a missing role is a 400; PATCH needs the merge-patch content type', async () => {
    const missing = await patch('pki/roles/ghost', { ttl: 1 });
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toEqual(['Unable to fetch role entry to patch']);
    expect((await call('GET', 'pki/roles/ghost')).status).toBe(404);
    const wrongType = await patch('pki/roles/patched', { ttl: 1 }, 'application/json');
    expect(wrongType.status).toBe(415);
  });

  it('DELETE removes the role (204), and deleting again is fine', async () => {
    await ok('POST', 'pki/roles/doomed', {});
    const del = await call('DELETE', 'pki/roles/doomed');
    expect(del.status).toBe(204);
    expect((await call('GET', 'pki/roles/doomed')).status).toBe(404);
    expect((await call('DELETE', 'pki/roles/doomed')).status).toBe(204);
    expect((await ok('GET', 'pki/roles?list=true')).body.data.keys).not.toContain('doomed');
  });
});
