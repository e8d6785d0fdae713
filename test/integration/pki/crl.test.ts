// CRLs through the Worker (reference §1.2, §1.10; spec "CRL endpoints"): config/crl, every read
// form (legacy and per-issuer, JSON/DER/PEM, complete/delta, local/unified), the contents (number,
// AKID, validity, entries), delta CRLs with their base number, rotation, disabling, issuers
// without a CRL, certificates of a deleted issuer moving to the default CRL, and
// If-Modified-Since / Last-Modified with the mount tuned and not tuned.
import { Buffer } from 'node:buffer';
import { SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseCrl, type ParsedCrl } from '../../../src/crypto/pki/crl';
import { verifySignature } from '../../../src/crypto/pki/keys';
import * as x509 from '../../../src/crypto/pki/x509';
import { api, caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { call, ok } = caller(() => c.root);

let root: { id: string; cert: x509.X509Certificate };

interface Raw {
  status: number;
  headers: Headers;
  bytes: Uint8Array;
}

async function raw(path: string, headers: Record<string, string> = {}, token: string | null = c.root): Promise<Raw> {
  const res = await SELF.fetch(`http://coffer.test/v1/${path}`, { headers: { ...(token ? { 'X-Vault-Token': token } : {}), ...headers } });
  return { status: res.status, headers: res.headers, bytes: new Uint8Array(await res.arrayBuffer()) };
}

const text = (r: Raw): string => new TextDecoder().decode(r.bytes);
const pemToDer = (pem: string): Uint8Array => new Uint8Array(x509.PemConverter.decodeFirst(pem));

async function crl(path: string): Promise<ParsedCrl> {
  const r = await raw(path);
  expect(r.status, path).toBe(200);
  return parseCrl(r.bytes);
}

async function issue(mount = 'pki', role = 'leaf', issuer?: string): Promise<string> {
  const path = issuer ? `${mount}/issuer/${issuer}/issue/${role}` : `${mount}/issue/${role}`;
  return (await ok('POST', path, { common_name: 'leaf.example.com' })).body.data.serial_number;
}

async function revoke(serial: string, mount = 'pki'): Promise<void> {
  await ok('POST', `${mount}/revoke`, { serial_number: serial });
}

const DEFAULT_CONFIG = {
  expiry: '72h',
  disable: false,
  ocsp_disable: false,
  ocsp_expiry: '12h',
  auto_rebuild: false,
  auto_rebuild_grace_period: '12h',
  enable_delta: false,
  delta_rebuild_interval: '15m',
  cross_cluster_revocation: false,
  unified_crl: false,
  unified_crl_on_existing_paths: false,
  max_crl_entries: 100000,
};

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/pki', { type: 'pki', config: { max_lease_ttl: '768h' } });
  const r = await ok('POST', 'pki/root/generate/internal', { common_name: 'CRL Root', ttl: '720h', key_type: 'ec', issuer_name: 'root' });
  root = { id: r.body.data.issuer_id, cert: new x509.X509Certificate(r.body.data.certificate) };
  await ok('POST', 'pki/roles/leaf', { allow_any_name: true, ttl: '1h', key_type: 'ec' });
});

describe('config/crl', () => {
  it('shows every field before any write, with durations as strings', async () => {
    await ok('POST', 'sys/mounts/fresh', { type: 'pki' });
    expect((await ok('GET', 'fresh/config/crl')).body.data).toEqual(DEFAULT_CONFIG);
  });

  it('stores what it is given, keeps the rest, and answers the whole configuration', async () => {
    const r = await ok('POST', 'fresh/config/crl', { expiry: '48h', ocsp_expiry: 3600, max_crl_entries: 500 });
    const want = { ...DEFAULT_CONFIG, expiry: '48h', ocsp_expiry: '3600', max_crl_entries: 500 };
    expect(r.body.data).toEqual(want);
    expect((await ok('GET', 'fresh/config/crl')).body.data).toEqual(want);
    // 0 and other negatives than -1 leave max_crl_entries alone; -1 disables the limit.
    await ok('POST', 'fresh/config/crl', { max_crl_entries: 0 });
    expect((await ok('GET', 'fresh/config/crl')).body.data.max_crl_entries).toBe(500);
    await ok('POST', 'fresh/config/crl', { max_crl_entries: -1, auto_rebuild: true, enable_delta: true, delta_rebuild_interval: '5m' });
    const d = (await ok('GET', 'fresh/config/crl')).body.data;
    expect([d.max_crl_entries, d.auto_rebuild, d.enable_delta, d.delta_rebuild_interval]).toEqual([-1, true, true, '5m']);
  });

  it('refuses invalid combinations with Vault messages, changing nothing', async () => {
    await ok('POST', 'sys/mounts/strict', { type: 'pki' });
    const cases: [Record<string, unknown>, string][] = [
      [{ expiry: 'soon' }, 'given expiry could not be decoded: time: invalid duration "soon"'],
      [{ ocsp_expiry: 'x1' }, 'given ocsp_expiry could not be decoded: time: invalid duration "x1"'],
      [{ ocsp_expiry: '-1h' }, 'ocsp_expiry must be greater than or equal to 0 got: -1h0m0s'],
      [{ auto_rebuild_grace_period: '1y' }, 'given auto_rebuild_grace_period could not be decoded: time: invalid duration "1y"'],
      [{ delta_rebuild_interval: 'abc' }, 'given delta_rebuild_interval could not be decoded: time: invalid duration "abc"'],
      [{ enable_delta: true }, 'Delta CRLs cannot be enabled when auto rebuilding is disabled as the complete CRL is always regenerated!'],
      [
        { auto_rebuild: true, auto_rebuild_grace_period: '72h' },
        'CRL auto-rebuilding grace period (72h) must be strictly shorter than CRL expiry (72h) value when auto-rebuilding of CRLs is enabled',
      ],
      [
        { auto_rebuild: true, enable_delta: true, delta_rebuild_interval: '100h' },
        'CRL delta rebuild window (100h) must be strictly shorter than CRL expiry (72h) value when delta CRLs are enabled',
      ],
      [
        { cross_cluster_revocation: true },
        'Global, cross-cluster revocation queue cannot be enabled when auto rebuilding is disabled as the local cluster may not have the certificate entry!',
      ],
      [{ cross_cluster_revocation: true, auto_rebuild: true }, 'Global, cross-cluster revocation queue (cross_cluster_revocation) can only be enabled on Vault Enterprise.'],
      [{ unified_crl: true, auto_rebuild: true }, 'unified_crl can only be enabled on Vault Enterprise'],
      [{ unified_crl_on_existing_paths: true }, 'unified_crl_on_existing_paths cannot be enabled if unified_crl is disabled'],
    ];
    for (const [body, message] of cases) {
      const r = await call('POST', 'strict/config/crl', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.errors).toEqual([message]);
    }
    expect((await ok('GET', 'strict/config/crl')).body.data).toEqual(DEFAULT_CONFIG);
  });
});

describe('reading CRLs', () => {
  let serial: string;
  beforeAll(async () => {
    serial = await issue();
    await revoke(serial);
  });

  it('serves the same signed CRL as DER, PEM and JSON on the legacy and issuer paths', async () => {
    const der = await raw('pki/crl');
    expect(der.status).toBe(200);
    expect(der.headers.get('content-type')).toBe('application/pkix-crl');
    const parsed = parseCrl(der.bytes);
    expect(parsed.serials).toEqual([serial]);

    const pem = await raw('pki/crl/pem');
    expect(pem.headers.get('content-type')).toBe('application/x-pem-file');
    expect(text(pem)).toMatch(/^-----BEGIN X509 CRL-----\n[\s\S]+\n-----END X509 CRL-----$/);
    expect(pemToDer(text(pem))).toEqual(der.bytes);

    const legacyJson = (await ok('GET', 'pki/cert/crl')).body.data;
    expect(legacyJson).toEqual({ certificate: text(pem), revocation_time: 0, revocation_time_rfc3339: '' });

    // The issuer paths: Go's PEM as is (with its final newline) in `crl`, /der and /pem raw.
    for (const ref of ['default', 'root', root.id]) {
      const j = (await ok('GET', `pki/issuer/${ref}/crl`)).body.data;
      expect(j).toEqual({ crl: `${text(pem)}\n` });
      expect((await raw(`pki/issuer/${ref}/crl/der`)).bytes).toEqual(der.bytes);
      const p = await raw(`pki/issuer/${ref}/crl/pem`);
      expect(p.headers.get('content-type')).toBe('application/x-pem-file');
      expect(text(p)).toBe(`${text(pem)}\n`);
    }
    // Unified CRLs are the local ones (no other clusters).
    expect((await raw('pki/unified-crl')).bytes).toEqual(der.bytes);
    expect((await raw(`pki/issuer/root/unified-crl/der`)).bytes).toEqual(der.bytes);
    expect((await ok('GET', 'pki/cert/unified-crl')).body.data.certificate).toBe(text(pem));
    expect((await raw('pki/cert/crl/raw')).bytes).toEqual(der.bytes);
    expect(text(await raw('pki/cert/crl/raw/pem'))).toBe(text(pem));
  });

  it('is readable without a token', async () => {
    for (const path of ['pki/crl', 'pki/crl/pem', `pki/issuer/${root.id}/crl/der`, 'pki/issuer/default/crl/pem']) {
      const r = await raw(path, {}, null);
      expect(r.status, path).toBe(200);
    }
    const json = await api('GET', 'pki/issuer/default/crl');
    expect(json.status).toBe(200);
    expect((await api('GET', 'pki/cert/crl')).status).toBe(200);
  });

  it('carries the issuer name, AKID, validity from expiry, and a number that grows with each rebuild', async () => {
    const first = await crl('pki/crl');
    expect(Buffer.from(first.issuerDer).toString('hex')).toBe(Buffer.from(root.cert.subjectName.toArrayBuffer()).toString('hex'));
    const skid = root.cert.getExtension(x509.SubjectKeyIdentifierExtension)!.keyId;
    expect(Buffer.from(first.akid!).toString('hex')).toBe(skid);
    expect(first.nextUpdate!.getTime() - first.thisUpdate.getTime()).toBe(72 * 3600_000);
    expect(Math.abs(first.thisUpdate.getTime() - Date.now())).toBeLessThan(120_000);
    expect(first.deltaBase).toBeNull();

    // Reading again does not rebuild; a revocation does.
    expect((await crl('pki/crl')).number).toBe(first.number);
    const second = await issue();
    await revoke(second);
    const after = await crl('pki/crl');
    expect(after.number).toBe(first.number! + 1n);
    expect(after.serials.sort()).toEqual([serial, second].sort());
    await ok('GET', 'pki/crl/rotate');
    expect((await crl('pki/crl')).number).toBe(first.number! + 2n);

    await ok('POST', 'pki/config/crl', { expiry: '48h' });
    await ok('GET', 'pki/crl/rotate');
    const short = await crl('pki/crl');
    expect(short.nextUpdate!.getTime() - short.thisUpdate.getTime()).toBe(48 * 3600_000);
    await ok('POST', 'pki/config/crl', { expiry: '72h' });
  });

  it('crl/rotate and crl/rotate-delta answer success; rotate-delta warns when deltas are off', async () => {
    const r = await ok('GET', 'pki/crl/rotate');
    expect(r.body.data).toEqual({ success: true });
    const d = await ok('GET', 'pki/crl/rotate-delta');
    expect(d.body.data).toEqual({ success: true });
    expect(d.body.warnings).toEqual(['requested rebuild of delta CRL when delta CRL is not enabled; this is a no-op']);
    // Without deltas there is no delta CRL: raw 204, JSON an empty crl.
    expect((await raw('pki/crl/delta')).status).toBe(204);
    expect((await ok('GET', 'pki/issuer/default/crl/delta')).body.data).toEqual({ crl: '' });
    // Rotation needs a token.
    expect((await api('GET', 'pki/crl/rotate')).status).toBe(403);
  });
});

describe('delta CRLs', () => {
  it('hold revocations since the complete CRL, name its number, and empty out at the next complete CRL', async () => {
    await ok('POST', 'sys/mounts/delta', { type: 'pki', config: { max_lease_ttl: '768h' } });
    await ok('POST', 'delta/root/generate/internal', { common_name: 'Delta Root', ttl: '720h', key_type: 'ec' });
    await ok('POST', 'delta/roles/leaf', { allow_any_name: true, ttl: '1h', key_type: 'ec' });
    const early = await issue('delta');
    await revoke(early, 'delta');
    await ok('POST', 'delta/config/crl', { auto_rebuild: true, enable_delta: true });

    const complete = await crl('delta/crl');
    expect(complete.serials).toEqual([early]);
    let delta = await crl('delta/crl/delta');
    expect(delta.deltaBase).toBe(complete.number);
    expect(delta.number).toBe(complete.number! + 1n);
    expect(delta.serials).toEqual([]);

    // With auto_rebuild a revocation waits for the schedule; the delta catches it on rotation.
    const late = await issue('delta');
    await revoke(late, 'delta');
    expect((await crl('delta/crl')).serials).toEqual([early]);
    await ok('GET', 'delta/crl/rotate-delta');
    delta = await crl('delta/crl/delta');
    expect(delta.serials).toEqual([late]);
    expect(delta.deltaBase).toBe(complete.number);
    for (const path of ['delta/crl/delta/pem', 'delta/issuer/default/crl/delta/pem', 'delta/unified-crl/delta/pem']) {
      expect(parseCrl(pemToDer(text(await raw(path)))).serials, path).toEqual([late]);
    }
    expect(parseCrl(pemToDer((await ok('GET', 'delta/cert/delta-crl')).body.data.certificate)).serials).toEqual([late]);
    expect((await raw('delta/issuer/default/crl/delta/der')).status).toBe(200);

    await ok('GET', 'delta/crl/rotate');
    const next = await crl('delta/crl');
    expect(next.serials.sort()).toEqual([early, late].sort());
    delta = await crl('delta/crl/delta');
    expect(delta.serials).toEqual([]);
    expect(delta.deltaBase).toBe(next.number);
  });
});

describe('disabling CRLs', () => {
  it('serves a signed, empty CRL while disabled and the entries again once enabled', async () => {
    await ok('POST', 'sys/mounts/off', { type: 'pki', config: { max_lease_ttl: '768h' } });
    await ok('POST', 'off/root/generate/internal', { common_name: 'Off Root', ttl: '720h', key_type: 'ec' });
    await ok('POST', 'off/roles/leaf', { allow_any_name: true, ttl: '1h', key_type: 'ec' });
    const serial = await issue('off');
    await revoke(serial, 'off');
    expect((await crl('off/crl')).serials).toEqual([serial]);
    await ok('POST', 'off/config/crl', { disable: true });
    const empty = await crl('off/crl');
    expect(empty.serials).toEqual([]);
    // Still revocable, still empty.
    const another = await issue('off');
    await revoke(another, 'off');
    expect((await crl('off/crl')).serials).toEqual([]);
    await ok('POST', 'off/config/crl', { disable: false });
    expect((await crl('off/crl')).serials.sort()).toEqual([serial, another].sort());
  });
});

describe('issuers and CRLs', () => {
  it('an issuer without a key has no CRL', async () => {
    await ok('POST', 'sys/mounts/other', { type: 'pki', config: { max_lease_ttl: '768h' } });
    const foreign = (await ok('POST', 'other/root/generate/internal', { common_name: 'Other Root', ttl: '720h', key_type: 'ec' })).body.data.certificate;
    const imported = (await ok('POST', 'pki/issuers/import/cert', { pem_bundle: foreign })).body.data.imported_issuers[0];
    const r = await call('GET', `pki/issuer/${imported}/crl`);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([`unable to find CRL for issuer: id:${imported}/ref:${imported}`]);
    expect((await call('GET', `pki/issuer/${imported}/crl/der`)).status).toBe(400);
    await ok('DELETE', `pki/issuer/${imported}`);
  });

  it('certificates of a deleted issuer move to the default issuer CRL', async () => {
    await ok('POST', 'sys/mounts/two', { type: 'pki', config: { max_lease_ttl: '768h' } });
    await ok('POST', 'two/root/generate/internal', { common_name: 'Root A', ttl: '720h', key_type: 'ec', issuer_name: 'a' });
    await ok('POST', 'two/root/generate/internal', { common_name: 'Root B', ttl: '720h', key_type: 'ec', issuer_name: 'b' });
    await ok('POST', 'two/roles/leaf', { allow_any_name: true, ttl: '1h', key_type: 'ec' });
    const fromB = await issue('two', 'leaf', 'b');
    await revoke(fromB, 'two');
    expect((await crl('two/issuer/b/crl/der')).serials).toEqual([fromB]);
    expect((await crl('two/issuer/a/crl/der')).serials).toEqual([]);
    await ok('DELETE', 'two/issuer/b');
    expect((await crl('two/issuer/a/crl/der')).serials).toEqual([fromB]);
    expect((await crl('two/crl')).serials).toEqual([fromB]);
  });

  it('the legacy paths answer 204 without a default issuer', async () => {
    await ok('POST', 'sys/mounts/empty', { type: 'pki' });
    expect((await raw('empty/crl')).status).toBe(204);
    expect((await raw('empty/crl/pem')).status).toBe(204);
    const r = await call('GET', 'empty/cert/crl');
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['no default issuer currently configured']);
    expect((await call('GET', 'empty/issuer/default/crl')).body.errors).toEqual(['no default issuer currently configured']);
  });
});

describe('If-Modified-Since', () => {
  const future = (): string => new Date(Date.now() + 3600_000).toUTCString();
  const past = 'Mon, 01 Jan 2001 00:00:00 GMT';

  it('answers 304 with Last-Modified on a mount that passes the headers through', async () => {
    await ok('POST', 'sys/mounts/pki/tune', { passthrough_request_headers: ['If-Modified-Since'], allowed_response_headers: ['Last-Modified'] });
    const fresh = await raw('pki/crl');
    const lastModified = fresh.headers.get('last-modified');
    expect(lastModified).toMatch(/GMT$/);
    for (const path of ['pki/crl', 'pki/crl/pem', 'pki/issuer/default/crl/der', 'pki/issuer/root/crl']) {
      const r = await raw(path, { 'If-Modified-Since': lastModified! });
      expect(r.status, path).toBe(304);
      expect(r.bytes.length).toBe(0);
      expect(r.headers.get('last-modified')).toBe(lastModified);
      expect((await raw(path, { 'If-Modified-Since': future() })).status).toBe(304);
      const old = await raw(path, { 'If-Modified-Since': past });
      expect(old.status).toBe(200);
      expect(old.bytes.length).toBeGreaterThan(0);
    }
    // A new revocation makes the CRL newer than the client's copy.
    await new Promise((r) => setTimeout(r, 1100));
    await revoke(await issue());
    const changed = await raw('pki/crl', { 'If-Modified-Since': lastModified! });
    expect(changed.status).toBe(200);
    expect(Date.parse(changed.headers.get('last-modified')!)).toBeGreaterThan(Date.parse(lastModified!));
  });

  it('is ignored, and Last-Modified withheld, on a mount that is not tuned for them', async () => {
    await ok('POST', 'sys/mounts/plain', { type: 'pki', config: { max_lease_ttl: '768h' } });
    await ok('POST', 'plain/root/generate/internal', { common_name: 'Plain Root', ttl: '720h', key_type: 'ec' });
    const r = await raw('plain/crl', { 'If-Modified-Since': future() });
    expect(r.status).toBe(200);
    expect(r.bytes.length).toBeGreaterThan(0);
    expect(r.headers.get('last-modified')).toBeNull();
  });
});

describe('issuer/:ref/sign-revocation-list and resign-crls', () => {
  const rootSpki = () => new Uint8Array(root.cert.publicKey.rawData);
  const verify = async (der: Uint8Array) => {
    const parsed = parseCrl(der);
    return await verifySignature(rootSpki(), parsed.signatureAlgorithm, parsed.tbsDer, parsed.signature);
  };

  it('signs a CRL with exactly the given entries, number and validity', async () => {
    const r = await ok('POST', 'pki/issuer/root/sign-revocation-list', {
      crl_number: 42,
      next_update: '1h',
      revoked_certs: [
        { serial_number: '11:22', revocation_time: '2024-01-02T03:04:05Z' },
        { serial_number: '33-44', revocation_time: 1700000000 },
      ],
    });
    const pem = r.body.data.crl as string;
    expect(pem).toMatch(/^-----BEGIN X509 CRL-----\n[\s\S]+\n-----END X509 CRL-----\n$/);
    const der = pemToDer(pem);
    const parsed = parseCrl(der);
    expect(parsed.number).toBe(42n);
    expect(parsed.deltaBase).toBeNull();
    expect(parsed.entries.map((e) => [e.serial, e.revocationTime.toISOString()])).toEqual([
      ['11:22', '2024-01-02T03:04:05.000Z'],
      ['33:44', new Date(1700000000 * 1000).toISOString()],
    ]);
    expect(parsed.nextUpdate!.getTime() - parsed.thisUpdate.getTime()).toBe(3600_000);
    expect(await verify(der)).toBe(true);

    const b64 = (await ok('POST', 'pki/issuer/default/sign-revocation-list', { crl_number: 7, delta_crl_base_number: 6, format: 'der' })).body.data.crl;
    const delta = parseCrl(Uint8Array.from(atob(b64), (ch) => ch.charCodeAt(0)));
    expect([delta.number, delta.deltaBase, delta.entries.length]).toEqual([7n, 6n, 0]);
  });

  it('resign-crls combines CRLs the issuer signed, keeping the oldest revocation of a serial', async () => {
    const sign = async (entries: { serial_number: string; revocation_time: string }[]) =>
      (await ok('POST', 'pki/issuer/root/sign-revocation-list', { crl_number: 1, revoked_certs: entries })).body.data.crl as string;
    const a = await sign([
      { serial_number: '01', revocation_time: '2024-01-01T00:00:00Z' },
      { serial_number: '02', revocation_time: '2024-02-01T00:00:00Z' },
    ]);
    const b = await sign([
      { serial_number: '02', revocation_time: '2024-01-15T00:00:00Z' },
      { serial_number: '03', revocation_time: '2024-03-01T00:00:00Z' },
    ]);
    const r = await ok('POST', 'pki/issuer/root/resign-crls', { crl_number: 9, crls: [a, b], next_update: '2h' });
    expect(r.body.warnings).toEqual(['Duplicate serial 02 with different revocation times detected, using oldest revocation time']);
    const der = pemToDer(r.body.data.crl);
    const parsed = parseCrl(der);
    expect(parsed.number).toBe(9n);
    expect(Object.fromEntries(parsed.entries.map((e) => [e.serial, e.revocationTime.toISOString()]))).toEqual({
      '01': '2024-01-01T00:00:00.000Z',
      '02': '2024-01-15T00:00:00.000Z',
      '03': '2024-03-01T00:00:00.000Z',
    });
    expect(await verify(der)).toBe(true);

    // A CRL another issuer signed is refused.
    const foreign = (await ok('POST', 'plain/issuer/default/sign-revocation-list', { crl_number: 1 })).body.data.crl;
    const bad = await call('POST', 'pki/issuer/root/resign-crls', { crl_number: 1, crls: [a, foreign] });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(['CRL index: 1 was not signed by requested issuer']);
    const twoBlocks = await call('POST', 'pki/issuer/root/resign-crls', { crl_number: 1, crls: [`${a}${b}`] });
    expect(twoBlocks.body.errors).toEqual(['failed decoding crl 0: invalid crl; should be one PEM block only']);
  });

  it('refuses bad parameters with Vault messages', async () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['sign-revocation-list', { crl_number: 1, format: 'xml' }, 'unknown format value of xml'],
      ['sign-revocation-list', { crl_number: 1, next_update: '0s' }, 'next_update parameter must be greater than 0'],
      ['sign-revocation-list', { crl_number: 1, next_update: 'later' }, 'invalid value for next_update: time: invalid duration "later"'],
      ['sign-revocation-list', { crl_number: -1 }, 'crl_number parameter must be 0 or greater'],
      ['sign-revocation-list', { crl_number: 1, delta_crl_base_number: -2 }, 'delta_crl_base_number parameter must be -1 or greater'],
      [
        'sign-revocation-list',
        { crl_number: 1, revoked_certs: [{ serial_number: 'zz', revocation_time: 1 }] },
        "failed parsing serial_number from entry 0: 'serial_number' failed converting to bytes",
      ],
      ['sign-revocation-list', { crl_number: 1, revoked_certs: [{ serial_number: '01' }] }, "failed parsing revocation_time from entry 0: missing 'revocation_time' field"],
      [
        'sign-revocation-list',
        { crl_number: 1, revoked_certs: [{ serial_number: '01', revocation_time: 1 }, { serial_number: '0-1', revocation_time: 2 }] },
        'duplicate serial number: 0-1, original entry 0 and 1',
      ],
      ['resign-crls', { crl_number: 1, crls: ['not a crl'] }, 'failed decoding crl 0: invalid crl; should be one PEM block only'],
    ];
    for (const [path, body, message] of cases) {
      const r = await call('POST', `pki/issuer/root/${path}`, body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.errors).toEqual([message]);
    }
    const unknown = await call('POST', 'pki/issuer/nope/sign-revocation-list', { crl_number: 1 });
    expect(unknown.body.errors).toEqual(['failed to resolve issuer issuer_ref: unable to find PKI issuer for reference: nope']);
  });
});
