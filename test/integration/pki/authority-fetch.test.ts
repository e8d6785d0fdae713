// PKI authority information through the Worker (reference §1.2, §1.8; spec "Authority information"):
// cert/ca, ca, ca/pem, ca_chain, cert/ca_chain, issuer/:ref/{json,der,pem}, cert/:serial and its
// raw forms, LIST certs with paging; content types, trimmed PEM, 204 when empty, no token needed
// (except LIST certs), and If-Modified-Since / Last-Modified through the mount's header tunables.
import { SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import * as x509 from '../../../src/crypto/pki/x509';
import { api, caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { call, ok } = caller(() => c.root);

interface Raw {
  status: number;
  type: string | null;
  bytes: Uint8Array;
  text: string;
  headers: Headers;
}

/** An unauthenticated GET answered with whatever body type. */
async function raw(path: string, headers: Record<string, string> = {}): Promise<Raw> {
  const res = await SELF.fetch(`http://coffer.test/v1/${path}`, { headers });
  const bytes = new Uint8Array(await res.arrayBuffer());
  return { status: res.status, type: res.headers.get('Content-Type'), bytes, text: new TextDecoder().decode(bytes), headers: res.headers };
}

const derOf = (pem: string) => new Uint8Array(new x509.X509Certificate(pem).rawData);
const PEM_TYPE = 'application/pem-certificate-chain';
const DER_TYPE = 'application/pkix-cert';

let n = 0;
async function mount(config: Record<string, unknown> = {}): Promise<string> {
  const path = `fetch${++n}`;
  await ok('POST', `sys/mounts/${path}`, { type: 'pki', config });
  return path;
}

beforeAll(async () => {
  c = await initCluster();
});

describe('before any issuer exists', () => {
  it('raw CA reads answer 204; JSON reads refuse; LIST certs 404', async () => {
    const m = await mount();
    for (const p of ['ca', 'ca/pem', 'ca_chain', 'cert/ca/raw', 'cert/ca/raw/pem']) {
      const r = await raw(`${m}/${p}`);
      expect([p, r.status, r.bytes.length]).toEqual([p, 204, 0]);
    }
    for (const p of ['cert/ca', 'cert/ca_chain']) {
      const r = await api('GET', `/v1/${m}/${p}`);
      expect([p, r.status, r.body.errors]).toEqual([p, 400, ['no default issuer currently configured']]);
    }
    expect((await call('GET', `${m}/certs?list=true`)).status).toBe(404);
    expect((await api('GET', `/v1/${m}/issuer/default/json`)).body.errors).toEqual(['no default issuer currently configured']);
  });
});

describe('with a root and an intermediate', () => {
  let m: string;
  let root: Record<string, string>;
  let int: { id: string; pem: string; serial: string };
  beforeAll(async () => {
    m = await mount();
    root = (await ok('POST', `${m}/root/generate/internal`, { common_name: 'Fetch Root', key_type: 'ec', issuer_name: 'root' })).body.data;
    const csr = (await ok('POST', `${m}/intermediate/generate/internal`, { common_name: 'Fetch Int', key_type: 'ec' })).body.data.csr;
    const signed = (await ok('POST', `${m}/root/sign-intermediate`, { csr })).body.data;
    const id = (await ok('POST', `${m}/intermediate/set-signed`, { certificate: signed.certificate })).body.data.imported_issuers[0];
    int = { id, pem: signed.certificate, serial: signed.serial_number };
    await ok('POST', `${m}/config/issuers`, { default: id });
  });

  it('ca (DER) and ca/pem (trimmed PEM): the default issuer, no token needed', async () => {
    const der = await raw(`${m}/ca`);
    expect([der.status, der.type]).toEqual([200, DER_TYPE]);
    expect(der.bytes).toEqual(derOf(int.pem));
    const pem = await raw(`${m}/ca/pem`);
    expect([pem.status, pem.type, pem.text]).toEqual([200, PEM_TYPE, int.pem]);
    const viaCert = await raw(`${m}/cert/ca/raw`);
    expect([viaCert.type, viaCert.bytes]).toEqual([DER_TYPE, derOf(int.pem)]);
    expect((await raw(`${m}/cert/ca/raw/pem`)).text).toBe(int.pem);
  });

  it('ca_chain: the default issuer and its parents as one PEM text (labelled pkix-cert, as Vault)', async () => {
    const r = await raw(`${m}/ca_chain`);
    expect([r.status, r.type, r.text]).toEqual([200, DER_TYPE, `${int.pem}\n${root.certificate}`]);
    const json = await api('GET', `/v1/${m}/cert/ca_chain`);
    expect(json.body.data).toEqual({ certificate: `${int.pem}\n${root.certificate}`, ca_chain: `${int.pem}\n${root.certificate}`, revocation_time: 0, revocation_time_rfc3339: '' });
  });

  it('cert/ca: the default issuer as JSON', async () => {
    const r = await api('GET', `/v1/${m}/cert/ca`);
    expect(r.status).toBe(200);
    expect(r.body.data).toEqual({ certificate: int.pem, revocation_time: 0, revocation_time_rfc3339: '' });
  });

  it('issuer/:ref/json|der|pem for any issuer, by id, name or default', async () => {
    const json = await api('GET', `/v1/${m}/issuer/root/json`);
    expect(json.body.data).toEqual({ certificate: root.certificate, ca_chain: [root.certificate], issuer_id: root.issuer_id, issuer_name: 'root', revocation_time: 0, revocation_time_rfc3339: '' });
    const intJson = await api('GET', `/v1/${m}/issuer/default/json`);
    expect(intJson.body.data.ca_chain).toEqual([int.pem, root.certificate]);
    const der = await raw(`${m}/issuer/${root.issuer_id}/der`);
    expect([der.type, der.bytes]).toEqual([DER_TYPE, derOf(root.certificate)]);
    const pem = await raw(`${m}/issuer/root/pem`);
    expect([pem.type, pem.text]).toEqual([PEM_TYPE, root.certificate]);
    expect((await api('GET', `/v1/${m}/issuer/ghost/pem`)).status).toBe(400);
  });

  it('cert/:serial: stored certificates (generated roots and signed intermediates), colon or hyphen serials', async () => {
    const r = await api('GET', `/v1/${m}/cert/${root.serial_number}`);
    expect(r.body.data).toEqual({ certificate: root.certificate, revocation_time: 0, revocation_time_rfc3339: '' });
    const hyphen = await api('GET', `/v1/${m}/cert/${int.serial.replace(/:/g, '-').toUpperCase()}`);
    expect(hyphen.body.data.certificate).toBe(int.pem);
    expect((await raw(`${m}/cert/${int.serial}/raw`)).bytes).toEqual(derOf(int.pem));
    const pem = await raw(`${m}/cert/${int.serial}/raw/pem`);
    expect([pem.type, pem.text]).toEqual([PEM_TYPE, int.pem]);
    expect((await api('GET', `/v1/${m}/cert/01:02:03`)).status).toBe(404);
    expect((await raw(`${m}/cert/01:02:03/raw`)).status).toBe(204);
  });

  let revoked = '';
  it('cert/:serial shows a revocation', async () => {
    const csr = (await ok('POST', `${m}/intermediate/generate/internal`, { common_name: 'to revoke', key_type: 'ec' })).body.data.csr;
    revoked = (await ok('POST', `${m}/issuer/root/sign-intermediate`, { csr })).body.data.serial_number;
    expect((await api('GET', `/v1/${m}/cert/${revoked}`)).body.data.revocation_time).toBe(0);
    await ok('POST', `${m}/revoke`, { serial_number: revoked });
    const r = (await api('GET', `/v1/${m}/cert/${revoked}`)).body.data;
    expect(r.revocation_time).toBeGreaterThan(0);
    expect(r.revocation_time_rfc3339).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(r.issuer_id).toBe(root.issuer_id);
  });

  it('LIST certs: authenticated, colon serials in order, paged by after/limit', async () => {
    expect((await api('GET', `/v1/${m}/certs?list=true`)).status).toBe(403);
    const more = [];
    for (let i = 0; i < 3; i++) {
      const csr = (await ok('POST', `${m}/intermediate/generate/internal`, { common_name: `extra${i}`, key_type: 'ec' })).body.data.csr;
      more.push((await ok('POST', `${m}/issuer/root/sign-intermediate`, { csr })).body.data.serial_number);
    }
    const all = [root.serial_number, int.serial, revoked, ...more].sort();
    expect((await ok('GET', `${m}/certs?list=true`)).body.data.keys).toEqual(all);
    expect((await ok('GET', `${m}/certs?list=true&limit=2`)).body.data.keys).toEqual(all.slice(0, 2));
    expect((await ok('GET', `${m}/certs?list=true&after=${all[1]}&limit=2`)).body.data.keys).toEqual(all.slice(2, 4));
    expect((await ok('GET', `${m}/certs?list=true&after=${all[3].replace(/:/g, '-')}`)).body.data.keys).toEqual(all.slice(4));
    expect((await call('GET', `${m}/certs?list=true&after=${all[5]}`)).status).toBe(404);
  });
});

describe('If-Modified-Since', () => {
  it('304 with Last-Modified once the client has the current copy; a change of default issuer is a modification', async () => {
    const m = await mount({ passthrough_request_headers: ['If-Modified-Since'], allowed_response_headers: ['Last-Modified'] });
    const a = (await ok('POST', `${m}/root/generate/internal`, { common_name: 'IMS', key_type: 'ec' })).body.data;
    const first = await raw(`${m}/ca/pem`);
    const lastModified = first.headers.get('Last-Modified');
    expect(lastModified).toMatch(/^\w{3}, \d\d \w{3} \d{4} \d\d:\d\d:\d\d GMT$/);

    for (const p of ['ca', 'ca/pem', 'cert/ca', 'cert/ca/raw', `issuer/${a.issuer_id}/pem`, `issuer/${a.issuer_id}/der`, `issuer/${a.issuer_id}/json`]) {
      const r = await raw(`${m}/${p}`, { 'If-Modified-Since': lastModified! });
      expect([p, r.status, r.bytes.length, r.headers.get('Last-Modified')]).toEqual([p, 304, 0, lastModified]);
    }
    const stale = new Date(Date.parse(lastModified!) - 3600_000).toUTCString();
    expect((await raw(`${m}/ca/pem`, { 'If-Modified-Since': stale })).status).toBe(200);
    expect((await raw(`${m}/ca/pem`, { 'If-Modified-Since': 'not a date' })).status).toBe(200);

    // A new default: `ca` changed for the client even though that issuer is older than its copy.
    const b = (await ok('POST', `${m}/root/generate/internal`, { common_name: 'IMS 2', key_type: 'ec' })).body.data;
    await new Promise((r) => setTimeout(r, 1100));
    const later = new Date(Date.now()).toUTCString();
    expect((await raw(`${m}/ca/pem`, { 'If-Modified-Since': later })).status).toBe(304);
    await new Promise((r) => setTimeout(r, 1100));
    await ok('POST', `${m}/config/issuers`, { default: b.issuer_id });
    const after = await raw(`${m}/ca/pem`, { 'If-Modified-Since': later });
    expect([after.status, after.text]).toEqual([200, b.certificate]);
    // Renaming an issuer modifies it.
    const before = (await raw(`${m}/issuer/${a.issuer_id}/pem`)).headers.get('Last-Modified')!;
    await new Promise((r) => setTimeout(r, 1100));
    await ok('POST', `${m}/issuer/${a.issuer_id}`, { issuer_name: 'renamed' });
    expect((await raw(`${m}/issuer/${a.issuer_id}/pem`, { 'If-Modified-Since': before })).status).toBe(200);
  });

  it('without the mount tunables the header is not seen and Last-Modified not sent', async () => {
    const m = await mount();
    await ok('POST', `${m}/root/generate/internal`, { common_name: 'plain', key_type: 'ec' });
    const r = await raw(`${m}/ca/pem`, { 'If-Modified-Since': new Date(Date.now() + 86_400_000).toUTCString() });
    expect(r.status).toBe(200);
    expect(r.headers.get('Last-Modified')).toBeNull();
  });
});
