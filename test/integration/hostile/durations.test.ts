// Durations and dates beyond what can be represented are refused with a 400 before anything is
// written (invariant 4): Go's time.Duration caps Vault at 2562047h47m16s, and a certificate's
// NotAfter at 9999-12-31T23:59:59Z.
import { X509Certificate } from '../../../src/crypto/pki/x509';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { call, ok } = caller(() => c.root);

const refused = (r: { status: number; body: { errors?: string[] } }, text: RegExp) => {
  expect(r.status).toBe(400);
  expect(r.body.errors?.join(' ')).toMatch(text);
};

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/transit', { type: 'transit' });
  await ok('POST', 'sys/mounts/kv', { type: 'kv' });
});

describe('durations', () => {
  it('transit: a key with an unrepresentable auto_rotate_period is refused and not created', async () => {
    refused(await call('POST', 'transit/keys/huge', { auto_rotate_period: '9999999999h' }), /invalid duration "9999999999h"/);
    expect((await call('GET', 'transit/keys/huge')).status).toBe(404);
    await ok('POST', 'transit/keys/k', {});
    refused(await call('POST', 'transit/keys/k/config', { auto_rotate_period: 1e15 }), /out of range/);
    expect((await ok('GET', 'transit/keys/k')).body.data.auto_rotate_period).toBe(0);
    // The longest representable period is taken.
    await ok('POST', 'transit/keys/k/config', { auto_rotate_period: '2562047h' });
    expect((await ok('GET', 'transit/keys/k')).body.data.auto_rotate_period).toBe(2562047 * 3600);
  });

  it('mount tune and token create refuse what no duration can hold, and store nothing', async () => {
    refused(await call('POST', 'sys/mounts/kv/tune', { max_lease_ttl: '99999999999999h' }), /invalid duration/);
    refused(await call('POST', 'sys/mounts/kv/tune', { default_lease_ttl: 99999999999999 }), /out of range/);
    expect((await ok('GET', 'sys/mounts/kv/tune')).body.data.max_lease_ttl).toBe(2764800);
    refused(await call('POST', 'auth/token/create', { period: '99999999999999h' }), /invalid duration/);
    refused(await call('POST', 'auth/token/create', { ttl: '106751992d' }), /out of range/);
    refused(await call('POST', 'sys/auth/huge', { type: 'jwt', config: { max_lease_ttl: '9999999999h' } }), /invalid duration/);
    expect((await ok('GET', 'sys/auth')).body.data['huge/']).toBeUndefined();
  });

  it('a response-wrapping TTL out of range is a 400 as well', async () => {
    refused(await api('GET', 'sys/mounts', { token: c.root, headers: { 'X-Vault-Wrap-TTL': '9999999999h' } }), /X-Vault-Wrap-TTL/);
  });
});

describe('PKI dates', () => {
  beforeAll(async () => {
    await ok('POST', 'sys/mounts/pki', { type: 'pki', config: { max_lease_ttl: '2562047h' } });
  });

  it('refuses a TTL beyond any duration, and issues nothing', async () => {
    refused(await call('POST', 'pki/root/generate/internal', { common_name: 'r', ttl: '9999999999h', key_type: 'ec' }), /invalid duration/);
    expect((await call('GET', 'pki/issuers?list=true')).status).toBe(404);
  });

  it('a root good for centuries reads back with its true dates (GeneralizedTime past 2049)', async () => {
    const r = await ok('POST', 'pki/root/generate/internal', { common_name: 'long root', ttl: '2000000h', key_type: 'ec' });
    const cert = new X509Certificate(r.body.data.certificate);
    expect(cert.notAfter.getUTCFullYear()).toBeGreaterThan(2200);
    expect(r.body.data.expiration).toBe(Math.floor(cert.notAfter.getTime() / 1000));
    await ok('POST', 'pki/roles/web', { allowed_domains: 'example.com', allow_subdomains: true, key_type: 'ec', max_ttl: '1000000h' });
    const leaf = await ok('POST', 'pki/issue/web', { common_name: 'a.example.com', ttl: '900000h' });
    expect(new X509Certificate(leaf.body.data.certificate).notAfter.getUTCFullYear()).toBeGreaterThan(2100);
  });

  it('not_after up to 9999-12-31T23:59:59Z, and not beyond (time zones included)', async () => {
    await ok('POST', 'sys/mounts/pki2', { type: 'pki' });
    const max = await ok('POST', 'pki2/root/generate/internal', { common_name: 'forever', not_after: '9999-12-31T23:59:59Z', key_type: 'ec' });
    expect(new X509Certificate(max.body.data.certificate).notAfter.toISOString()).toBe('9999-12-31T23:59:59.000Z');
    await ok('POST', 'sys/mounts/pki3', { type: 'pki' });
    refused(await call('POST', 'pki3/root/generate/internal', { common_name: 'x', not_after: '9999-12-31T23:59:59-01:00', key_type: 'ec' }), /later than 9999-12-31T23:59:59Z/);
    expect((await call('GET', 'pki3/issuers?list=true')).status).toBe(404);
  });
});
