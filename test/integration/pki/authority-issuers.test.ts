// PKI issuers through the Worker (reference §1.6): LIST issuers, issuer/:ref read (every field),
// POST (replace, defaults for omitted fields), PATCH (merge), each field's validation, AIA URLs and
// templating, manual_chain, chains built from subject/issuer and signatures, DELETE issuer and
// DELETE root; every refusal leaves the issuer as it was.
import { beforeAll, describe, expect, it } from 'vitest';
import * as x509 from '../../../src/crypto/pki/x509';
import { api, caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { call: plainCall, ok: plainOk } = caller(() => c.root);
/** PATCH goes out as JSON merge patch, as Vault requires. */
const call = (method: string, path: string, body?: unknown) =>
  method === 'PATCH' ? api('PATCH', path, { token: c.root, body, headers: { 'Content-Type': 'application/merge-patch+json' } }) : plainCall(method, path, body);
const ok = async (method: string, path: string, body?: unknown) => {
  if (method !== 'PATCH') return await plainOk(method, path, body);
  const r = await call(method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: ${r.status} ${r.text}`);
  return r;
};

let n = 0;
async function mount(): Promise<string> {
  const path = `iss${++n}`;
  await ok('POST', `sys/mounts/${path}`, { type: 'pki' });
  return path;
}

/** Refused with 400 and `message`; the issuer reads the same afterwards. */
async function expectRefused(method: string, path: string, body: unknown, message: string | RegExp, issuerPath = path): Promise<void> {
  const before = (await call('GET', issuerPath)).body;
  const r = await call(method, path, body);
  expect(r.status, r.text).toBe(400);
  if (typeof message === 'string') expect(r.body.errors).toEqual([message]);
  else expect(r.body.errors[0]).toMatch(message);
  expect((await call('GET', issuerPath)).body?.data).toEqual(before?.data);
}

const root = async (m: string, body: Record<string, unknown> = {}) =>
  (await ok('POST', `${m}/root/generate/internal`, { common_name: 'Root', key_type: 'ec', ...body })).body.data;

/** An intermediate of `m`'s default issuer, living in `m` too (CSR, sign, set-signed). */
async function intermediate(m: string, cn: string, signer = 'default'): Promise<{ issuer_id: string; certificate: string }> {
  const csr = (await ok('POST', `${m}/intermediate/generate/internal`, { common_name: cn, key_type: 'ec' })).body.data.csr;
  const signed = (await ok('POST', `${m}/issuer/${signer}/sign-intermediate`, { csr, common_name: cn })).body.data.certificate;
  const id = (await ok('POST', `${m}/intermediate/set-signed`, { certificate: signed })).body.data.imported_issuers[0];
  return { issuer_id: id, certificate: signed };
}

beforeAll(async () => {
  c = await initCluster();
});

describe('LIST issuers and reads', () => {
  let m: string;
  let a: Record<string, string>;
  let b: Record<string, string>;
  beforeAll(async () => {
    m = await mount();
    a = await root(m, { issuer_name: 'alpha' });
    b = await root(m);
  });

  it('LIST: 404 when empty; ids with name, default flag, serial and key', async () => {
    const empty = await mount();
    expect((await call('GET', `${empty}/issuers?list=true`)).status).toBe(404);
    const d = (await ok('GET', `${m}/issuers?list=true`)).body.data;
    expect([...d.keys].sort()).toEqual([a.issuer_id, b.issuer_id].sort());
    expect(d.key_info[a.issuer_id]).toEqual({ issuer_name: 'alpha', is_default: true, serial_number: a.serial_number, key_id: a.key_id });
    expect(d.key_info[b.issuer_id]).toEqual({ issuer_name: '', is_default: false, serial_number: b.serial_number, key_id: b.key_id });
  });

  it('LIST issuers needs no token', async () => {
    const r = await api('GET', `/v1/${m}/issuers?list=true`);
    expect(r.status).toBe(200);
    expect(r.body.data.keys).toHaveLength(2);
  });

  it('GET issuer/:ref: every field, by id, name or default', async () => {
    const expected = {
      issuer_id: a.issuer_id,
      issuer_name: 'alpha',
      key_id: a.key_id,
      certificate: a.certificate,
      ca_chain: [a.certificate],
      manual_chain: null,
      leaf_not_after_behavior: 'err',
      usage: 'read-only,issuing-certificates,crl-signing,ocsp-signing',
      revocation_signature_algorithm: 'ECDSAWithSHA256',
      revoked: false,
      issuing_certificates: [],
      crl_distribution_points: [],
      delta_crl_distribution_points: [],
      ocsp_servers: [],
      enable_aia_url_templating: false,
    };
    for (const ref of [a.issuer_id, 'alpha', 'default', 'Default']) {
      expect((await ok('GET', `${m}/issuer/${ref}`)).body.data).toEqual(expected);
    }
    expect((await call('GET', `${m}/issuer/nope`)).body.errors).toEqual(['unable to find PKI issuer for reference: nope']);
    // issuer/:ref itself is not public.
    expect((await api('GET', `/v1/${m}/issuer/${a.issuer_id}`)).status).toBe(403);
  });
});

describe('POST issuer/:ref (replace)', () => {
  let m: string;
  let a: Record<string, string>;
  let path: string;
  beforeAll(async () => {
    m = await mount();
    a = await root(m, { issuer_name: 'first' });
    path = `${m}/issuer/${a.issuer_id}`;
    await root(m, { issuer_name: 'other' });
  });

  it('sets every field; omitted ones take their defaults', async () => {
    const set = await ok('POST', path, {
      issuer_name: 'renamed',
      leaf_not_after_behavior: 'truncate',
      usage: ['read-only', 'issuing-certificates'],
      revocation_signature_algorithm: 'ecdsawithsha384',
      issuing_certificates: ['http://ca.example/a', 'http://ca.example/b'],
      crl_distribution_points: 'http://ca.example/crl',
      delta_crl_distribution_points: 'http://ca.example/delta',
      ocsp_servers: 'http://ca.example/ocsp,http://ocsp2.example',
    });
    expect(set.body.data).toMatchObject({
      issuer_name: 'renamed',
      leaf_not_after_behavior: 'truncate',
      usage: 'read-only,issuing-certificates',
      revocation_signature_algorithm: 'ECDSAWithSHA384',
      issuing_certificates: ['http://ca.example/a', 'http://ca.example/b'],
      crl_distribution_points: ['http://ca.example/crl'],
      delta_crl_distribution_points: ['http://ca.example/delta'],
      ocsp_servers: ['http://ca.example/ocsp', 'http://ocsp2.example'],
      enable_aia_url_templating: false,
    });
    expect((await ok('GET', `${m}/issuer/renamed`)).body.data).toEqual(set.body.data);

    // A POST with nothing: name cleared, err, all usages, key default algorithm, no AIA.
    const reset = (await ok('POST', path, {})).body.data;
    expect(reset).toMatchObject({
      issuer_name: '',
      leaf_not_after_behavior: 'err',
      usage: 'read-only,issuing-certificates,crl-signing,ocsp-signing',
      revocation_signature_algorithm: '',
      issuing_certificates: [],
      crl_distribution_points: [],
      delta_crl_distribution_points: [],
      ocsp_servers: [],
      enable_aia_url_templating: false,
    });
  });

  it('the issuer-level AIA URLs go into certificates it signs', async () => {
    await ok('POST', path, { issuing_certificates: 'http://issuer.example/ca', ocsp_servers: 'http://issuer.example/ocsp' });
    const csr = (await ok('POST', `${m}/intermediate/generate/internal`, { common_name: 'aia child', key_type: 'ec' })).body.data.csr;
    const signed = (await ok('POST', `${path}/sign-intermediate`, { csr })).body.data.certificate;
    const aia = new x509.X509Certificate(signed).getExtension(x509.AuthorityInfoAccessExtension)!;
    expect(aia.caIssuers.map((g) => g.value)).toEqual(['http://issuer.example/ca']);
    expect(aia.ocsp.map((g) => g.value)).toEqual(['http://issuer.example/ocsp']);
    await ok('POST', path, {});
  });

  it('refuses bad names, behaviours, usages, algorithms and URLs', async () => {
    await expectRefused('POST', path, { issuer_name: 'other' }, 'issuer name already in use');
    await expectRefused('POST', path, { issuer_name: 'default' }, "reserved keyword 'default' can not be used as issuer name");
    await expectRefused('POST', path, { issuer_name: 'a b' }, 'issuer name contained invalid characters');
    await expectRefused('POST', path, { issuer_name: '' }, 'expected non-empty issuer name');
    await expectRefused('POST', path, { leaf_not_after_behavior: 'sometimes' }, 'Unknown value for field `leaf_not_after_behavior`. Possible values are `err`, `truncate`, and `permit`.');
    await expectRefused('POST', path, { usage: 'read-only,signing' }, 'Unable to parse specified usages: [read-only signing] - valid values are read-only,issuing-certificates,crl-signing,ocsp-signing');
    await expectRefused('POST', path, { revocation_signature_algorithm: 'MD5WithRSA' }, /^Unknown signature algorithm value: MD5WithRSA - valid values are SHA256WithRSA, /);
    await expectRefused('POST', path, { revocation_signature_algorithm: 'SHA256WithRSA' }, /SHA256WithRSA/);
    await expectRefused('POST', path, { issuing_certificates: 'not a url' }, 'invalid URL found in Authority Information Access (AIA) parameter issuing_certificates: not a url');
    await expectRefused('POST', path, { ocsp_servers: 'http://ok.example,/relative' }, 'invalid URL found in Authority Information Access (AIA) parameter ocsp_servers: /relative');
    await expectRefused('POST', path, { crl_distribution_points: 'http://ca.example/{{issuer_id}}.crl' }, 'invalid URL found in Authority Information Access (AIA) parameter crl_distribution_points: http://ca.example/{{issuer_id}}.crl');
  });

  it('keeps its own name without complaint', async () => {
    await ok('POST', path, { issuer_name: 'mine' });
    expect((await ok('POST', path, { issuer_name: 'mine' })).body.data.issuer_name).toBe('mine');
  });

  it('crl-signing needs the CRLSign key usage in the certificate', async () => {
    const m2 = await mount();
    const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
    const keys = (await crypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
    const ca = await x509.X509CertificateGenerator.createSelfSigned({
      serialNumber: '0a',
      name: 'CN=No CRLSign',
      keys,
      signingAlgorithm: alg,
      notBefore: new Date(Date.now() - 60_000),
      notAfter: new Date(Date.now() + 86_400_000),
      extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true)],
    });
    const id = (await ok('POST', `${m2}/issuers/import/cert`, { pem_bundle: ca.toString('pem') })).body.data.imported_issuers[0];
    expect((await ok('GET', `${m2}/issuer/${id}`)).body.data.usage).toBe('read-only,issuing-certificates,ocsp-signing');
    await expectRefused('POST', `${m2}/issuer/${id}`, { usage: 'crl-signing' }, "This issuer's underlying certificate lacks the CRLSign KeyUsage value; unable to set CRLSigningUsage on this issuer as a result.");
    await expectRefused('POST', `${m2}/issuer/${id}`, {}, "This issuer's underlying certificate lacks the CRLSign KeyUsage value; unable to set CRLSigningUsage on this issuer as a result.");
    // Without its key, the algorithm is checked against the certificate's public key.
    await expectRefused('PATCH', `${m2}/issuer/${id}`, { revocation_signature_algorithm: 'PureEd25519' }, /PureEd25519/);
    expect((await ok('PATCH', `${m2}/issuer/${id}`, { revocation_signature_algorithm: 'ECDSAWithSHA512' })).body.data.revocation_signature_algorithm).toBe('ECDSAWithSHA512');
  });

  it('a revoked issuer cannot get issuing-certificates back', async () => {
    const m2 = await mount();
    const r = await root(m2);
    await ok('POST', `${m2}/issuer/${r.issuer_id}/revoke`);
    await expectRefused(
      'POST',
      `${m2}/issuer/${r.issuer_id}`,
      { usage: 'issuing-certificates' },
      'This issuer was revoked; unable to modify its usage to include certificate signing again. Reissue this certificate (preferably with a new key) and modify that entry instead.',
    );
    const read = (await ok('GET', `${m2}/issuer/${r.issuer_id}`)).body.data;
    expect(read.revoked).toBe(true);
    expect(read.revocation_time).toEqual(expect.any(Number));
    expect(read.revocation_time_rfc3339).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('PSS revocation algorithm: a warning about OCSP', async () => {
    const m2 = await mount();
    const r = await root(m2, { key_type: 'rsa' });
    const set = await ok('PATCH', `${m2}/issuer/${r.issuer_id}`, { revocation_signature_algorithm: 'SHA512WithRSAPSS' });
    expect(set.body.data.revocation_signature_algorithm).toBe('SHA512WithRSAPSS');
    expect(set.body.warnings).toEqual([
      'Issuer uses a PSS Revocation Signature Algorithm. This algorithm will be downgraded to PKCS#1v1.5 signature scheme on OCSP responses, due to limitations in the OCSP library.',
    ]);
  });
});

describe('AIA templating', () => {
  it('templates are accepted with enable_aia_url_templating, warned about until config/cluster is set, and filled at signing', async () => {
    const m = await mount();
    const r = await root(m);
    const path = `${m}/issuer/${r.issuer_id}`;
    const set = await ok('POST', path, {
      enable_aia_url_templating: true,
      issuing_certificates: '{{cluster_aia_path}}/issuer/{{issuer_id}}/der',
      crl_distribution_points: '{{cluster_path}}/issuer/{{issuer_id}}/crl/der',
      ocsp_servers: '{{cluster_path}}/ocsp',
    });
    expect(set.body.data.enable_aia_url_templating).toBe(true);
    expect(set.body.data.issuing_certificates).toEqual(['{{cluster_aia_path}}/issuer/{{issuer_id}}/der']);
    expect(set.body.warnings).toEqual([
      'issuance may fail: unable to template AIA URLs as we lack local cluster address information (aia_path)\n\nConsider setting the cluster-local address if it is not already set.',
    ]);
    await ok('POST', `${m}/config/cluster`, { path: 'https://pr1.example/v1/pki', aia_path: 'http://cdn.example/pki' });
    const again = await ok('PATCH', path, { ocsp_servers: '{{cluster_path}}/ocsp' });
    expect(again.body.warnings).toBeFalsy();
    const csr = (await ok('POST', `${m}/intermediate/generate/internal`, { common_name: 't', key_type: 'ec' })).body.data.csr;
    const signed = (await ok('POST', `${path}/sign-intermediate`, { csr })).body.data.certificate;
    const aia = new x509.X509Certificate(signed).getExtension(x509.AuthorityInfoAccessExtension)!;
    expect(aia.caIssuers.map((g) => g.value)).toEqual([`http://cdn.example/pki/issuer/${r.issuer_id}/der`]);
    expect(aia.ocsp.map((g) => g.value)).toEqual(['https://pr1.example/v1/pki/ocsp']);
  });

  it('delta CRL points without base CRL points are warned about', async () => {
    const m = await mount();
    const r = await root(m);
    const set = await ok('PATCH', `${m}/issuer/${r.issuer_id}`, { delta_crl_distribution_points: 'http://ca.example/delta' });
    expect(set.body.warnings).toEqual([
      'delta crl distribution points were set: http://ca.example/delta but no base crl distribution point was set, consider setting base crl distribution point.',
    ]);
  });
});

describe('PATCH issuer/:ref (merge)', () => {
  it('changes only the fields given; AIA lists merge; an empty name clears it', async () => {
    const m = await mount();
    const r = await root(m, { issuer_name: 'patchme' });
    const path = `${m}/issuer/${r.issuer_id}`;
    await ok('POST', path, { issuer_name: 'patchme', leaf_not_after_behavior: 'permit', usage: 'issuing-certificates', ocsp_servers: 'http://o.example' });
    const p1 = (await ok('PATCH', path, { crl_distribution_points: ['http://c.example'] })).body.data;
    expect(p1).toMatchObject({ issuer_name: 'patchme', leaf_not_after_behavior: 'permit', usage: 'read-only,issuing-certificates', ocsp_servers: ['http://o.example'], crl_distribution_points: ['http://c.example'] });
    const p2 = (await ok('PATCH', path, { ocsp_servers: [], crl_distribution_points: [] })).body.data;
    expect(p2).toMatchObject({ ocsp_servers: [], crl_distribution_points: [], enable_aia_url_templating: false, leaf_not_after_behavior: 'permit' });
    const p3 = (await ok('PATCH', path, { issuer_name: '' })).body.data;
    expect(p3.issuer_name).toBe('');
    expect(p3.leaf_not_after_behavior).toBe('permit');
    await expectRefused('PATCH', path, { leaf_not_after_behavior: 'nah' }, 'Unknown value for field `leaf_not_after_behavior`. Possible values are `err`, `truncate`, and `permit`.');
    await expectRefused('PATCH', path, { issuing_certificates: 'bad url' }, 'invalid URL found in Authority Information Access (AIA) parameter issuing_certificates: bad url');
  });
});

describe('chains and manual_chain', () => {
  let m: string;
  let r1: Record<string, string>;
  let int: { issuer_id: string; certificate: string };
  beforeAll(async () => {
    m = await mount();
    r1 = await root(m, { common_name: 'Chain Root', issuer_name: 'r1' });
    int = await intermediate(m, 'Chain Int');
  });

  it('ca_chain is built from subjects and signatures: intermediate, then its root', async () => {
    expect((await ok('GET', `${m}/issuer/${int.issuer_id}`)).body.data.ca_chain).toEqual([int.certificate, r1.certificate]);
    expect((await ok('GET', `${m}/issuer/r1`)).body.data.ca_chain).toEqual([r1.certificate]);
  });

  it('a root with the same subject but another key is not taken as a parent', async () => {
    const impostor = await root(m, { common_name: 'Chain Root', issuer_name: 'impostor' });
    expect((await ok('GET', `${m}/issuer/${int.issuer_id}`)).body.data.ca_chain).toEqual([int.certificate, r1.certificate]);
    await ok('DELETE', `${m}/issuer/${impostor.issuer_id}`);
  });

  it('manual_chain: "self" first, each later entry signs the one before, ending at a root', async () => {
    const path = `${m}/issuer/${int.issuer_id}`;
    const set = (await ok('PATCH', path, { manual_chain: ['self', 'r1'] })).body.data;
    expect(set.manual_chain).toEqual([int.issuer_id, r1.issuer_id]);
    expect(set.ca_chain).toEqual([int.certificate, r1.certificate]);
    // A root's chain may be set to just itself.
    const justSelf = (await ok('PATCH', `${m}/issuer/r1`, { manual_chain: 'self' })).body.data;
    expect(justSelf.manual_chain).toEqual([r1.issuer_id]);
    expect(justSelf.ca_chain).toEqual([r1.certificate]);
    await ok('PATCH', `${m}/issuer/r1`, { manual_chain: [] });
    const cleared = (await ok('PATCH', path, { manual_chain: [] })).body.data;
    expect(cleared.manual_chain).toBeNull();
    expect(cleared.ca_chain).toEqual([int.certificate, r1.certificate]);

    await expectRefused('PATCH', path, { manual_chain: ['r1'] }, `expected first cert in chain to be a self-reference, but was: r1/${r1.issuer_id}`);
    await expectRefused('PATCH', path, { manual_chain: ['self', 'missing'] }, 'unable to find PKI issuer for reference: missing');
    const other = await root(m, { common_name: 'Unrelated', issuer_name: 'unrelated' });
    await expectRefused('PATCH', path, { manual_chain: ['self', 'unrelated'] }, `invalid manual_chain: issuer ${other.issuer_id} did not sign the certificate of issuer ${int.issuer_id}`);
    const int2 = await intermediate(m, 'Chain Int 2', 'r1');
    await expectRefused('POST', `${m}/issuer/${int2.issuer_id}`, { manual_chain: 'self' }, `invalid manual_chain: the last issuer (${int2.issuer_id}) is not a self-signed root`);
  });
});

describe('cross-signing', () => {
  it('a new root cross-signed by the old one: same key and SKID, and the chains link the roots', async () => {
    const m = await mount();
    const oldRoot = await root(m, { common_name: 'Old Root', issuer_name: 'old' });
    const newRoot = (await ok('POST', `${m}/root/rotate/internal`, { common_name: 'New Root', key_type: 'ec' })).body.data;
    expect(newRoot.issuer_name).toBe('next');
    const skidOf = (pem: string) => new x509.X509Certificate(pem).getExtension(x509.SubjectKeyIdentifierExtension)!.keyId;
    const csr = (await ok('POST', `${m}/intermediate/cross-sign`, { common_name: 'New Root', key_ref: newRoot.key_id })).body.data;
    expect(csr.key_id).toBe(newRoot.key_id);
    const cross = (await ok('POST', `${m}/issuer/old/sign-intermediate`, { csr: csr.csr, use_csr_values: true, skid: skidOf(newRoot.certificate) })).body.data.certificate;
    const x = new x509.X509Certificate(cross);
    expect([x.subject, x.issuer]).toEqual(['CN=New Root', 'CN=Old Root']);
    expect(x.getExtension(x509.SubjectKeyIdentifierExtension)!.keyId).toBe(skidOf(newRoot.certificate));
    const imported = (await ok('POST', `${m}/issuers/import/cert`, { pem_bundle: cross })).body.data;
    const crossId = imported.imported_issuers[0];
    expect(imported.mapping[crossId]).toBe(newRoot.key_id);
    expect((await ok('GET', `${m}/issuer/${crossId}`)).body.data.ca_chain).toEqual([cross, oldRoot.certificate]);
    expect((await ok('GET', `${m}/issuer/next`)).body.data.ca_chain).toEqual([newRoot.certificate, cross, oldRoot.certificate]);
    expect((await ok('GET', `${m}/issuer/old`)).body.data.ca_chain).toEqual([oldRoot.certificate]);
    // root/replace then switches the default to the new root.
    expect((await ok('POST', `${m}/root/replace`, {})).body.data.default).toBe(newRoot.issuer_id);
  });
});

describe('DELETE issuer/:ref and DELETE root', () => {
  it('deleting the default issuer clears the default, with a warning; others and unknown refs answer 204', async () => {
    const m = await mount();
    const a = await root(m, { issuer_name: 'a' });
    const b = await root(m, { issuer_name: 'b' });
    expect((await call('DELETE', `${m}/issuer/b`)).status).toBe(204);
    expect((await call('DELETE', `${m}/issuer/b`)).status).toBe(204);
    const del = await ok('DELETE', `${m}/issuer/default`);
    expect(del.body.warnings).toContain(
      `Deleted issuer ${a.issuer_id} (via issuer_ref default); this was configured as the default issuer. Operations without an explicit issuer will not work until a new default is configured.`,
    );
    expect((await ok('GET', `${m}/config/issuers`)).body.data.default).toBe('');
    expect((await call('GET', `${m}/issuers?list=true`)).status).toBe(404);
    // Keys stay.
    expect((await ok('GET', `${m}/keys?list=true`)).body.data.keys.sort()).toEqual([a.key_id, b.key_id].sort());
  });

  it('warns about roles that referenced the deleted issuer', async () => {
    const m = await mount();
    const a = await root(m, { issuer_name: 'used' });
    await ok('POST', `${m}/roles/web`, { issuer_ref: 'used', allow_any_name: true });
    await root(m, { issuer_name: 'spare' });
    await ok('POST', `${m}/config/issuers`, { default: 'spare' });
    const del = await ok('DELETE', `${m}/issuer/${a.issuer_id}`);
    expect(del.body.warnings).toEqual(['1 roles reference used']);
  });

  it('DELETE root removes every issuer and key (sudo), with Vault\'s warning', async () => {
    const m = await mount();
    await root(m);
    await root(m);
    await ok('POST', `${m}/keys/generate/internal`, { key_type: 'ec' });
    const del = await ok('DELETE', `${m}/root`);
    expect(del.body.warnings).toEqual([
      'DELETE /root deletes all keys and issuers; prefer the new DELETE /key/:key_ref and DELETE /issuer/:issuer_ref for finer granularity, unless removal of all keys and issuers is desired.',
    ]);
    expect((await call('GET', `${m}/issuers?list=true`)).status).toBe(404);
    expect((await call('GET', `${m}/keys?list=true`)).status).toBe(404);
    expect((await ok('GET', `${m}/config/issuers`)).body.data.default).toBe('');
    expect((await ok('GET', `${m}/config/keys`)).body.data.default).toBe('');
    // A new root becomes the default again.
    const fresh = await root(m);
    expect((await ok('GET', `${m}/config/issuers`)).body.data.default).toBe(fresh.issuer_id);
  });

  it('DELETE root needs sudo', async () => {
    const m = await mount();
    await root(m);
    await ok('POST', 'sys/policies/acl/pki-nosudo', { policy: `path "${m}/*" { capabilities = ["create","read","update","delete","list"] }` });
    const token = (await ok('POST', 'auth/token/create', { policies: ['pki-nosudo'] })).body.auth.client_token;
    const r = await api('DELETE', `/v1/${m}/root`, { token });
    expect(r.status).toBe(403);
    expect((await ok('GET', `${m}/issuers?list=true`)).body.data.keys).toHaveLength(1);
  });
});
