// Tidy through the Worker and the mount's alarm (reference §1.12): config/auto-tidy and tidy-status
// shapes, refusals, a tidy that removes only expired certificates and revocation entries (past the
// safety buffer), issuer re-association, cancellation between entries, and auto-tidy started by
// the real alarm.
import { runDurableObjectAlarm, SELF } from 'cloudflare:test';
import { beforeAll, describe, expect, it } from 'vitest';
import { parseCrl } from '../../../src/crypto/pki/crl';
import * as x509 from '../../../src/crypto/pki/x509';
import { caller, initCluster, type Cluster } from '../../helpers/api';
import { GO_TIME, mountObject, sleep } from '../../helpers/kv2';

let c: Cluster;
const { call, ok } = caller(() => c.root);

const AUTO_DEFAULTS = {
  enabled: false,
  interval_duration: 43200,
  min_startup_backoff_duration: 300,
  max_startup_backoff_duration: 900,
  tidy_cert_store: false,
  tidy_revoked_certs: false,
  tidy_revoked_cert_issuer_associations: false,
  tidy_expired_issuers: false,
  tidy_move_legacy_ca_bundle: false,
  tidy_acme: false,
  safety_buffer: 259200,
  issuer_safety_buffer: 31536000,
  acme_account_safety_buffer: 2592000,
  pause_duration: '0s',
  publish_stored_certificate_count_metrics: false,
  maintain_stored_certificate_counts: false,
  tidy_revocation_queue: false,
  revocation_queue_safety_buffer: 172800,
  tidy_cross_cluster_revoked_certs: false,
  tidy_cert_metadata: false,
  tidy_cmpv2_nonce_store: false,
};

const STATUS_FIELDS = [
  'acme_account_deleted_count',
  'acme_account_revoked_count',
  'acme_account_safety_buffer',
  'acme_orders_deleted_count',
  'cert_metadata_deleted_count',
  'cert_store_deleted_count',
  'cmpv2_nonce_deleted_count',
  'cross_revoked_cert_deleted_count',
  'current_cert_store_count',
  'current_revoked_cert_count',
  'error',
  'internal_backend_uuid',
  'issuer_safety_buffer',
  'last_auto_tidy_finished',
  'message',
  'missing_issuer_cert_count',
  'pause_duration',
  'revocation_queue_deleted_count',
  'revocation_queue_safety_buffer',
  'revoked_cert_deleted_count',
  'safety_buffer',
  'state',
  'tidy_acme',
  'tidy_cert_metadata',
  'tidy_cert_store',
  'tidy_cmpv2_nonce_store',
  'tidy_cross_cluster_revoked_certs',
  'tidy_expired_issuers',
  'tidy_move_legacy_ca_bundle',
  'tidy_revocation_queue',
  'tidy_revoked_cert_issuer_associations',
  'tidy_revoked_certs',
  'time_finished',
  'time_started',
  'total_acme_account_count',
];

async function mountCa(mount: string): Promise<{ id: string; pem: string }> {
  await ok('POST', `sys/mounts/${mount}`, { type: 'pki', config: { max_lease_ttl: '768h' } });
  const r = await ok('POST', `${mount}/root/generate/internal`, { common_name: `${mount} root`, ttl: '720h', key_type: 'ec' });
  await ok('POST', `${mount}/roles/short`, { allow_any_name: true, ttl: '4s', key_type: 'ec' });
  await ok('POST', `${mount}/roles/long`, { allow_any_name: true, ttl: '1h', key_type: 'ec' });
  return { id: r.body.data.issuer_id, pem: r.body.data.certificate };
}

const issue = async (mount: string, role: 'short' | 'long', issuer?: string): Promise<string> =>
  (await ok('POST', issuer ? `${mount}/issuer/${issuer}/issue/${role}` : `${mount}/issue/${role}`, { common_name: 'tidy.example.com' })).body.data
    .serial_number;

async function list(path: string): Promise<string[]> {
  const r = await call('GET', `${path}?list=true`);
  return r.status === 404 ? [] : r.body.data.keys;
}

/** Runs the mount's alarm until tidy-status says `state` (the alarm may also fire by itself). */
async function alarmUntil(mount: string, state: string): Promise<Record<string, unknown>> {
  const stub = await mountObject(c.root, mount);
  for (let i = 0; i < 100; i++) {
    const status = (await ok('GET', `${mount}/tidy-status`)).body.data;
    if (status.state === state) return status;
    await runDurableObjectAlarm(stub);
    await sleep(20);
  }
  throw new Error(`tidy on ${mount} never reached ${state}`);
}

const short: Record<string, string> = {};
const long: Record<string, string> = {};

beforeAll(async () => {
  c = await initCluster();
  await mountCa('pki');
  await mountCa('auto');
  // Certificates that expire in a few seconds; the one revoked is revoked while still valid.
  short.plain = await issue('pki', 'short');
  short.revoked = await issue('pki', 'short');
  await ok('POST', 'pki/revoke', { serial_number: short.revoked });
  short.auto = await issue('auto', 'short');
  long.plain = await issue('pki', 'long');
  long.revoked = await issue('pki', 'long');
  await ok('POST', 'pki/revoke', { serial_number: long.revoked });
  long.auto = await issue('auto', 'long');
  // Past their NotAfter by more than a one-second safety buffer.
  await sleep(6000);
}, 30_000);

describe('config/auto-tidy', () => {
  it('shows every field with Vault defaults, and stores changes', async () => {
    await ok('POST', 'sys/mounts/cfg', { type: 'pki' });
    expect((await ok('GET', 'cfg/config/auto-tidy')).body.data).toEqual(AUTO_DEFAULTS);
    const r = await ok('POST', 'cfg/config/auto-tidy', { tidy_cert_store: true, safety_buffer: '1h', pause_duration: '2s', interval_duration: '30m' });
    const want = { ...AUTO_DEFAULTS, tidy_cert_store: true, safety_buffer: 3600, pause_duration: '2s', interval_duration: 1800 };
    expect(r.body.data).toEqual(want);
    expect((await ok('GET', 'cfg/config/auto-tidy')).body.data).toEqual(want);
  });

  it('refuses bad values with Vault messages', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ interval_duration: -5 }, 'given interval_duration must be greater than or equal to zero seconds; got: -5'],
      [{ safety_buffer: 0 }, 'given safety_buffer must be at least one second; got: 0'],
      [{ issuer_safety_buffer: 0 }, 'given safety_buffer must be at least one second; got: 0'],
      [{ revocation_queue_safety_buffer: 0 }, 'given revocation_queue_safety_buffer must be at least one second; got: 0'],
      [{ acme_account_safety_buffer: 0 }, 'given acme_account_safety_buffer must be at least one second; got: 0'],
      [{ pause_duration: 'later' }, 'unable to parse given pause_duration: time: invalid duration "later"'],
      [{ pause_duration: '-1s' }, 'received invalid, negative pause_duration'],
      [{ min_startup_backoff_duration: 0 }, 'min_startup_backoff_duration must be at least 1 second: parsed: 0s'],
      [{ min_startup_backoff_duration: '20m' }, 'max_startup_backoff_duration 15m0s must be greater or equal to min_startup_backoff_duration 20m0s'],
      [{ tidy_cert_metadata: true }, 'certificate metadata is only supported on Vault Enterprise'],
      [
        { enabled: true, tidy_cert_store: false },
        'Auto-tidy enabled but no tidy operations were requested. Enable at least one tidy operation to be run (tidy_cert_store / tidy_revoked_certs / tidy_revoked_cert_issuer_associations / tidy_expired_issuers / tidy_move_legacy_ca_bundle / tidy_revocation_queue / tidy_cross_cluster_revoked_certs / tidy_acme).',
      ],
      [
        { publish_stored_certificate_count_metrics: true },
        'Can not publish a running storage metrics count to metrics without first maintaining that count.  Enable `maintain_stored_certificate_counts` to enable `publish_stored_certificate_count_metrics`.',
      ],
    ];
    const before = (await ok('GET', 'cfg/config/auto-tidy')).body.data;
    for (const [body, message] of cases) {
      const r = await call('POST', 'cfg/config/auto-tidy', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.errors).toEqual([message]);
    }
    expect((await ok('GET', 'cfg/config/auto-tidy')).body.data).toEqual(before);
  });
});

describe('tidy and tidy-status', () => {
  it('status before any tidy: Inactive, every field present, nulls', async () => {
    const d = (await ok('GET', 'cfg/tidy-status')).body.data;
    expect(Object.keys(d).sort()).toEqual(STATUS_FIELDS);
    expect(d.state).toBe('Inactive');
    expect(d.time_started).toBeNull();
    expect(d.cert_store_deleted_count).toBeNull();
    expect(d.last_auto_tidy_finished).toBe('0001-01-01T00:00:00Z');
    expect(d.internal_backend_uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect((await ok('GET', 'cfg/tidy-status')).body.data.internal_backend_uuid).toBe(d.internal_backend_uuid);
  });

  it('refuses bad parameters and cancelling when nothing runs', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ tidy_cert_store: true, safety_buffer: 0 }, 'safety_buffer must be greater than zero'],
      [{ tidy_cert_store: true, issuer_safety_buffer: -1 }, 'issuer_safety_buffer must be greater than zero'],
      [{ tidy_cert_store: true, revocation_queue_safety_buffer: 0 }, 'revocation_queue_safety_buffer must be greater than zero'],
      [{ tidy_cert_store: true, acme_account_safety_buffer: 0 }, 'acme_account_safety_buffer must be greater than zero'],
      [{ tidy_cert_store: true, pause_duration: 'xx' }, 'Error parsing pause_duration: time: invalid duration "xx"'],
      [{ tidy_cert_store: true, pause_duration: '-2s' }, 'received invalid, negative pause_duration'],
      [{ tidy_cert_metadata: true }, 'certificate metadata is only supported on Vault Enterprise'],
    ];
    for (const [body, message] of cases) {
      const r = await call('POST', 'cfg/tidy', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.errors).toEqual([message]);
    }
    expect((await ok('GET', 'cfg/tidy-status')).body.data.state).toBe('Inactive');
    const r = await call('POST', 'cfg/tidy-cancel');
    expect(r.status).toBe(200);
    expect(r.body.data).toBeNull();
    expect(r.body.warnings).toEqual(['Tidy operation cannot be cancelled as none is currently running.']);
  });

  it('removes expired certificates and revocation entries past the buffer, and nothing else', async () => {
    const started = Date.now();
    const r = await call('POST', 'pki/tidy', { tidy_cert_store: true, tidy_revoked_certs: true, safety_buffer: '1s' });
    expect(r.status).toBe(202);
    expect(r.body.data).toBeNull();
    expect(r.body.warnings).toEqual(["Tidy operation successfully started. Any information from the operation will be printed to Vault's server logs."]);

    const d = await alarmUntil('pki', 'Finished');
    expect(d).toMatchObject({
      tidy_cert_store: true,
      tidy_revoked_certs: true,
      tidy_revoked_cert_issuer_associations: false,
      safety_buffer: 1,
      issuer_safety_buffer: 31536000,
      pause_duration: '0s',
      error: null,
      message: null,
      cert_store_deleted_count: 2,
      revoked_cert_deleted_count: 1,
      missing_issuer_cert_count: 0,
    });
    expect(d.time_started).toMatch(GO_TIME);
    expect(d.time_finished).toMatch(GO_TIME);
    expect(Date.parse(d.last_auto_tidy_finished as string)).toBeGreaterThanOrEqual(started - 1000);

    const certs = await list('pki/certs');
    expect(certs).toEqual(expect.arrayContaining([long.plain, long.revoked]));
    expect(certs).not.toContain(short.plain);
    expect(certs).not.toContain(short.revoked);
    expect(await list('pki/certs/revoked')).toEqual([long.revoked]);
    // The CRL was rebuilt without the removed entry.
    const res = await SELF.fetch('http://coffer.test/v1/pki/crl');
    expect(parseCrl(new Uint8Array(await res.arrayBuffer())).serials).toEqual([long.revoked]);
  });

  it('re-associates revoked entries whose issuer is gone', async () => {
    await ok('POST', 'sys/mounts/assoc', { type: 'pki', config: { max_lease_ttl: '768h' } });
    await ok('POST', 'assoc/root/generate/internal', { common_name: 'Assoc A', ttl: '720h', key_type: 'ec', issuer_name: 'a' });
    const b = (await ok('POST', 'assoc/root/generate/internal', { common_name: 'Assoc B', ttl: '720h', key_type: 'ec', issuer_name: 'b' })).body.data;
    await ok('POST', 'assoc/roles/long', { allow_any_name: true, ttl: '1h', key_type: 'ec' });
    const serial = await issue('assoc', 'long', 'b');
    await ok('POST', 'assoc/revoke', { serial_number: serial });
    expect((await ok('GET', `assoc/cert/${serial}`)).body.data.issuer_id).toBe(b.issuer_id);
    // B goes, key and all, then comes back as a certificate only: a new issuer id.
    await ok('DELETE', 'assoc/issuer/b');
    await ok('DELETE', `assoc/key/${b.key_id}`);
    const newB = (await ok('POST', 'assoc/issuers/import/cert', { pem_bundle: b.certificate })).body.data.imported_issuers[0];
    expect(newB).not.toBe(b.issuer_id);

    expect((await call('POST', 'assoc/tidy', { tidy_revoked_cert_issuer_associations: true })).status).toBe(202);
    const d = await alarmUntil('assoc', 'Finished');
    expect(d.missing_issuer_cert_count).toBe(1);
    expect(d.revoked_cert_deleted_count).toBe(0);
    expect((await ok('GET', `assoc/cert/${serial}`)).body.data.issuer_id).toBe(newB);
    expect(await list('assoc/certs/revoked')).toEqual([serial]);
  });

  it('can be cancelled between entries; a second tidy meanwhile is refused', async () => {
    await mountCa('slow');
    await issue('slow', 'long');
    await issue('slow', 'long');
    const certsBefore = await list('slow/certs');
    expect((await call('POST', 'slow/tidy', { tidy_cert_store: true, pause_duration: '1h' })).status).toBe(202);
    // The first entry is handled, then it waits an hour before the next.
    const stub = await mountObject(c.root, 'slow');
    let status = (await ok('GET', 'slow/tidy-status')).body.data;
    for (let i = 0; i < 50 && status.message === null; i++) {
      await runDurableObjectAlarm(stub);
      status = (await ok('GET', 'slow/tidy-status')).body.data;
    }
    expect(status.state).toBe('Running');
    expect(status.message).toBe(`Tidying certificate store: checking entry 0 of ${certsBefore.length}`);
    expect(status.pause_duration).toBe('1h0m0s');
    expect(status.time_finished).toBeNull();

    const again = await call('POST', 'slow/tidy', { tidy_cert_store: true });
    expect(again.status).toBe(200);
    expect(again.body.warnings).toEqual(['Tidy operation already in progress.']);

    const cancel = await ok('POST', 'slow/tidy-cancel');
    expect(cancel.body.data.state).toBe('Cancelling');
    expect(Object.keys(cancel.body.data).sort()).toEqual(STATUS_FIELDS);
    const d = await alarmUntil('slow', 'Cancelled');
    expect(d.time_finished).toMatch(GO_TIME);
    expect(await list('slow/certs')).toEqual(certsBefore);
    const none = await call('POST', 'slow/tidy-cancel');
    expect(none.body.warnings).toEqual(['Tidy operation cannot be cancelled as none is currently running.']);
  });

  it('removes issuers expired past issuer_safety_buffer, but never the default one', async () => {
    await mountCa('issuers');
    const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
    const expiredCa = async (cn: string) => {
      const keys = (await crypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
      const cert = await x509.X509CertificateGenerator.createSelfSigned({
        serialNumber: '0102',
        name: `CN=${cn}`,
        notBefore: new Date(Date.now() - 10 * 86400_000),
        notAfter: new Date(Date.now() - 5 * 86400_000),
        keys,
        signingAlgorithm: alg,
        extensions: [new x509.BasicConstraintsExtension(true, undefined, true), new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true)],
      });
      return cert.toString('pem');
    };
    const old = (await ok('POST', 'issuers/issuers/import/cert', { pem_bundle: await expiredCa('Old CA') })).body.data.imported_issuers[0];
    const before = await list('issuers/issuers');
    expect(before).toContain(old);
    // Expired five days ago: kept with the default one-year buffer.
    expect((await call('POST', 'issuers/tidy', { tidy_expired_issuers: true })).status).toBe(202);
    await alarmUntil('issuers', 'Finished');
    expect(await list('issuers/issuers')).toEqual(before);
    // Past a one-day buffer: removed; the default issuer stays.
    expect((await call('POST', 'issuers/tidy', { tidy_expired_issuers: true, issuer_safety_buffer: '24h' })).status).toBe(202);
    const d = await alarmUntil('issuers', 'Finished');
    expect(d.tidy_expired_issuers).toBe(true);
    expect(d.issuer_safety_buffer).toBe(86400);
    expect(await list('issuers/issuers')).toEqual(before.filter((id) => id !== old));
    expect((await call('GET', `issuers/issuer/${old}`)).status).not.toBe(200);
  });

  it('warns when a tidy has nothing to do', async () => {
    const r = await call('POST', 'cfg/tidy', {});
    expect(r.status).toBe(202);
    expect(r.body.warnings).toEqual([
      'Manual tidy requested but no tidy operations were set. Enable at least one tidy operation to be run (tidy_cert_store / tidy_revoked_certs / tidy_revoked_cert_issuer_associations / tidy_expired_issuers / tidy_move_legacy_ca_bundle / tidy_revocation_queue / tidy_cross_cluster_revoked_certs / tidy_acme).',
    ]);
    await alarmUntil('cfg', 'Finished');
  });

  it('shows stored counts when maintain_stored_certificate_counts is on', async () => {
    await ok('POST', 'pki/config/auto-tidy', { maintain_stored_certificate_counts: true });
    const d = (await ok('GET', 'pki/tidy-status')).body.data;
    expect(d.current_cert_store_count).toBe((await list('pki/certs')).length);
    expect(d.current_revoked_cert_count).toBe(1);
  });
});

describe('auto-tidy', () => {
  it('the alarm starts a tidy once interval_duration has passed, with the configured operations', async () => {
    const enabledAt = Date.now();
    const r = await ok('POST', 'auto/config/auto-tidy', { enabled: true, interval_duration: '2s', tidy_cert_store: true, safety_buffer: '1s' });
    expect(r.body.data.enabled).toBe(true);
    // Turning it on starts the interval: nothing ran yet.
    const first = (await ok('GET', 'auto/tidy-status')).body.data;
    expect(first.state).toBe('Inactive');
    expect(Date.parse(first.last_auto_tidy_finished)).toBeGreaterThanOrEqual(enabledAt - 1000);
    await sleep(2100);
    const d = await alarmUntil('auto', 'Finished');
    expect(d.tidy_cert_store).toBe(true);
    expect(d.safety_buffer).toBe(1);
    expect(d.cert_store_deleted_count).toBe(1);
    expect(await list('auto/certs')).not.toContain(short.auto);
    expect(await list('auto/certs')).toContain(long.auto);
    expect(Date.parse(d.last_auto_tidy_finished as string)).toBeGreaterThan(Date.parse(first.last_auto_tidy_finished));
    await ok('POST', 'auto/config/auto-tidy', { enabled: false });
  });
});
