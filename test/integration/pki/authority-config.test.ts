// PKI engine-wide configuration through the Worker (reference §1.7, §1.13): config/issuers and
// root/replace, config/keys, config/urls (nothing until set; arrays or comma strings; blank clears;
// URL checks; templating) and config/cluster; every refusal leaves the configuration unchanged.
import { SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { caller, initCluster, type Cluster } from '../../helpers/api';

/** A raw (non-JSON) read, as PEM clients do it. */
const rawText = async (path: string): Promise<string> => await (await SELF.fetch(`http://coffer.test/v1/${path}`)).text();

let c: Cluster;
const { call, ok } = caller(() => c.root);

let n = 0;
async function mount(): Promise<string> {
  const path = `cfg${++n}`;
  await ok('POST', `sys/mounts/${path}`, { type: 'pki' });
  return path;
}

/** 400 with `message`, and `readPath` reads the same before and after. */
async function expectRefused(path: string, body: unknown, message: string, readPath: string): Promise<void> {
  const before = await call('GET', readPath);
  const r = await call('POST', path, body);
  expect(r.status, r.text).toBe(400);
  expect(r.body.errors).toEqual([message]);
  const after = await call('GET', readPath);
  expect([after.status, after.body?.data]).toEqual([before.status, before.body?.data]);
}

const root = async (m: string, body: Record<string, unknown> = {}) =>
  (await ok('POST', `${m}/root/generate/internal`, { common_name: 'Root', key_type: 'ec', ...body })).body.data;

beforeAll(async () => {
  c = await initCluster();
});

describe('config/issuers and root/replace', () => {
  let m: string;
  let a: Record<string, string>;
  let b: Record<string, string>;
  beforeAll(async () => {
    m = await mount();
    expect((await ok('GET', `${m}/config/issuers`)).body.data).toEqual({ default: '', default_follows_latest_issuer: false });
    a = await root(m, { issuer_name: 'current' });
    b = await root(m, { issuer_name: 'next' });
  });

  it('sets the default by name or id; default_follows_latest_issuer only when given', async () => {
    const set = await ok('POST', `${m}/config/issuers`, { default: 'next' });
    expect(set.body.data).toEqual({ default: b.issuer_id, default_follows_latest_issuer: false });
    expect(set.body.warnings).toBeFalsy();
    await ok('POST', `${m}/config/issuers`, { default: a.issuer_id, default_follows_latest_issuer: true });
    expect((await ok('GET', `${m}/config/issuers`)).body.data).toEqual({ default: a.issuer_id, default_follows_latest_issuer: true });
    await ok('POST', `${m}/config/issuers`, { default: a.issuer_id });
    expect((await ok('GET', `${m}/config/issuers`)).body.data.default_follows_latest_issuer).toBe(true);
    await ok('POST', `${m}/config/issuers`, { default: a.issuer_id, default_follows_latest_issuer: false });
    // The default issuer is what issuer/default and ca read.
    expect((await ok('GET', `${m}/issuer/default`)).body.data.issuer_id).toBe(a.issuer_id);
    expect(await rawText(`${m}/ca/pem`)).toBe(a.certificate);
  });

  it('refuses an empty or "default" reference and unknown issuers', async () => {
    const read = `${m}/config/issuers`;
    await expectRefused(read, {}, "Invalid issuer specification; must be non-empty and can't be 'default'.", read);
    await expectRefused(read, { default: 'default' }, "Invalid issuer specification; must be non-empty and can't be 'default'.", read);
    await expectRefused(read, { default: 'nobody' }, 'Error resolving issuer reference: unable to find PKI issuer for reference: nobody', read);
  });

  it('root/replace makes the issuer named "next" the default unless told otherwise', async () => {
    const r = await ok('POST', `${m}/root/replace`, {});
    expect(r.body.data).toEqual({ default: b.issuer_id, default_follows_latest_issuer: false });
    expect((await ok('GET', `${m}/config/issuers`)).body.data.default).toBe(b.issuer_id);
    expect((await ok('POST', `${m}/root/replace`, { default: 'current' })).body.data.default).toBe(a.issuer_id);
    const m2 = await mount();
    await root(m2);
    await expectRefused(`${m2}/root/replace`, {}, 'Error resolving issuer reference: unable to find PKI issuer for reference: next', `${m2}/config/issuers`);
  });
});

describe('config/keys', () => {
  it('reads and sets the default key', async () => {
    const m = await mount();
    expect((await ok('GET', `${m}/config/keys`)).body.data).toEqual({ default: '' });
    const k1 = (await ok('POST', `${m}/keys/generate/internal`, { key_name: 'one', key_type: 'ec' })).body.data;
    const k2 = (await ok('POST', `${m}/keys/generate/internal`, { key_name: 'two', key_type: 'ec' })).body.data;
    expect((await ok('GET', `${m}/config/keys`)).body.data).toEqual({ default: k1.key_id });
    expect((await ok('POST', `${m}/config/keys`, { default: 'two' })).body.data).toEqual({ default: k2.key_id });
    expect((await ok('GET', `${m}/key/default`)).body.data.key_id).toBe(k2.key_id);
    // existing-key generation follows the default key.
    expect((await ok('POST', `${m}/root/generate/existing`, { common_name: 'r' })).body.data.key_id).toBe(k2.key_id);
    const read = `${m}/config/keys`;
    await expectRefused(read, { default: '' }, "Invalid key specification; must be non-empty and can't be 'default'.", read);
    await expectRefused(read, { default: 'default' }, "Invalid key specification; must be non-empty and can't be 'default'.", read);
    await expectRefused(read, { default: 'three' }, 'Error resolving issuer reference: unable to find PKI key for reference: three', read);
  });
});

describe('config/urls', () => {
  it('reads nothing until set; then every field, lists from arrays or comma strings; blank clears', async () => {
    const m = await mount();
    expect((await call('GET', `${m}/config/urls`)).status).toBe(404);
    const set = await ok('POST', `${m}/config/urls`, {
      issuing_certificates: ['http://ca.example/ca', 'http://ca2.example/ca'],
      crl_distribution_points: 'http://ca.example/crl,http://ca2.example/crl',
      delta_crl_distribution_points: 'http://ca.example/delta',
      ocsp_servers: 'http://ocsp.example:8080',
    });
    const expected = {
      issuing_certificates: ['http://ca.example/ca', 'http://ca2.example/ca'],
      crl_distribution_points: ['http://ca.example/crl', 'http://ca2.example/crl'],
      delta_crl_distribution_points: ['http://ca.example/delta'],
      ocsp_servers: ['http://ocsp.example:8080'],
      enable_templating: false,
    };
    expect(set.body.data).toEqual(expected);
    expect((await ok('GET', `${m}/config/urls`)).body.data).toEqual(expected);
    // A partial write keeps the other fields; a blank string clears one.
    await ok('POST', `${m}/config/urls`, { ocsp_servers: '' });
    expect((await ok('GET', `${m}/config/urls`)).body.data).toEqual({ ...expected, ocsp_servers: [] });
    // Leaves signed from now on carry them.
    const r = await root(m);
    expect(r.certificate).toBeTruthy();
  });

  it('refuses a value that is not a URL (unless templating)', async () => {
    const m = await mount();
    await ok('POST', `${m}/config/urls`, { issuing_certificates: 'http://keep.example/ca' });
    const read = `${m}/config/urls`;
    await expectRefused(read, { issuing_certificates: 'ldap server' }, 'invalid URL found in Authority Information Access (AIA) parameter issuing_certificates: ldap server', read);
    await expectRefused(read, { crl_distribution_points: 'nohost' }, 'invalid URL found in Authority Information Access (AIA) parameter crl_distribution_points: nohost', read);
    await expectRefused(read, { ocsp_servers: 'http://o.example,{{cluster_path}}/ocsp' }, 'invalid URL found in Authority Information Access (AIA) parameter ocsp_servers: {{cluster_path}}/ocsp', read);
    await expectRefused(read, { delta_crl_distribution_points: '.example.com' }, 'invalid URL found in Authority Information Access (AIA) parameter delta_crl_distribution_points: .example.com', read);
    // host:port and dotted paths count as URLs, as in Vault.
    await ok('POST', read, { ocsp_servers: 'ocsp.example:80', crl_distribution_points: '/pki/crl.der' });
  });

  it('templating: templates accepted; a warning when an issuer exists and the cluster path is missing', async () => {
    const m = await mount();
    // With no issuer yet there is nothing to try the templates on.
    const quiet = await ok('POST', `${m}/config/urls`, { enable_templating: true, issuing_certificates: '{{cluster_path}}/issuer/{{issuer_id}}/der' });
    expect(quiet.body.warnings).toBeFalsy();
    expect(quiet.body.data.enable_templating).toBe(true);
    // A root cannot be generated while the templates cannot be filled.
    expect((await call('POST', `${m}/root/generate/internal`, { common_name: 'r' })).status).toBe(400);
    await ok('POST', `${m}/config/urls`, { enable_templating: false, issuing_certificates: '' });
    await root(m);
    const warned = await ok('POST', `${m}/config/urls`, { enable_templating: true, ocsp_servers: '{{cluster_path}}/ocsp' });
    expect(warned.body.warnings).toEqual([
      'issuance may fail: unable to template AIA URLs as we lack local cluster address information (path)\n\nConsider setting the cluster-local address if it is not already set.',
    ]);
    await ok('POST', `${m}/config/cluster`, { path: 'https://vault.example/v1/pki' });
    expect((await ok('POST', `${m}/config/urls`, {})).body.warnings).toBeFalsy();
  });
});

describe('config/cluster', () => {
  it('reads empty values until set; each field set on its own; non-URLs refused', async () => {
    const m = await mount();
    expect((await ok('GET', `${m}/config/cluster`)).body.data).toEqual({ path: '', aia_path: '' });
    expect((await ok('POST', `${m}/config/cluster`, { path: 'https://pr1.example/v1/pki' })).body.data).toEqual({ path: 'https://pr1.example/v1/pki', aia_path: '' });
    await ok('POST', `${m}/config/cluster`, { aia_path: 'http://cdn.example/pki' });
    expect((await ok('GET', `${m}/config/cluster`)).body.data).toEqual({ path: 'https://pr1.example/v1/pki', aia_path: 'http://cdn.example/pki' });
    const read = `${m}/config/cluster`;
    await expectRefused(read, { path: 'not a url' }, 'invalid, non-URL path given to cluster: not a url', read);
    await expectRefused(read, { aia_path: '' }, 'invalid, non-URL aia_path given to cluster: ', read);
  });
});
