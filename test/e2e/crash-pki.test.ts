// PKI survives kill -9 in the middle of a burst: issued (stored) certificates, revocations and CRL
// rebuilds, and a tidy cut off halfway. After the restart every acknowledged certificate is
// stored as issued, every acknowledged revocation is in the CRL (which openssl verifies), every
// listed serial can be read, and the tidy finishes the work it was given.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { burst, client, restart, statusOf, type Client } from './crash';
import { startLauncher, tempDir, type Server } from './processes';

const ROOT_TOKEN = 'hvs.e2eRootTokenForCrashPkiTest0';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let dir: string;
let work: string;
let server: Server;
let vault: Client;
let caPem = '';

beforeAll(async () => {
  dir = tempDir('coffer-e2e-crash-pki-');
  work = tempDir('coffer-e2e-crash-pki-files-');
  server = await startLauncher(dir, { COFFER_DEV_ROOT_TOKEN: ROOT_TOKEN });
  vault = client(server, ROOT_TOKEN);
  await vault.mount({ mount_point: 'pki', type: 'pki', config: { max_lease_ttl: '87600h' } });
  caPem = (await vault.write('pki/root/generate/internal', { common_name: 'Crash Root', key_type: 'ec', ttl: '8760h' })).data.certificate;
  await vault.write('pki/roles/web', { allow_any_name: true, key_type: 'ec', ttl: '1h', max_ttl: '1h' });
  await vault.write('pki/roles/brief', { allow_any_name: true, key_type: 'ec', ttl: '1s', max_ttl: '1s', not_before_duration: '1s' });
});
afterAll(async () => {
  await server?.stop('SIGTERM');
});

async function crashAndRestart<T>(workers: number, afterMs: number, op: (n: number) => Promise<T>) {
  const result = await burst(server, workers, afterMs, op);
  server = await restart(dir);
  vault = client(server, ROOT_TOKEN);
  expect(result.refused).toEqual([]);
  expect(result.acked.length).toBeGreaterThan(3);
  return result;
}

const openssl = (...args: string[]) => execFileSync('openssl', args, { cwd: work, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
/** Serials in "aa:bb:cc" form, as the API writes them, of every entry of a CRL openssl has verified. */
function crlSerials(crlPem: string): Set<string> {
  writeFileSync(path.join(work, 'ca.pem'), caPem);
  writeFileSync(path.join(work, 'crl.pem'), crlPem);
  // -CAfile makes openssl check the CRL's signature; it fails the call otherwise.
  openssl('crl', '-in', 'crl.pem', '-CAfile', 'ca.pem', '-noout');
  const text = openssl('crl', '-in', 'crl.pem', '-noout', '-text');
  const hex = [...text.matchAll(/Serial Number: ([0-9A-F]+)/g)].map((m) => m[1].toLowerCase().padStart(2, '0'));
  return new Set(hex.map((h) => (h.length % 2 ? `0${h}` : h).match(/../g)!.join(':')));
}

/** Every serial the mount lists can be read: nothing listed is half-stored. */
async function everyListedReadable(): Promise<string[]> {
  const serials = ((await vault.list('pki/certs')).data.keys ?? []) as string[];
  for (const serial of serials) expect(await statusOf(() => vault.read(`pki/cert/${serial}`)), serial).toBe(200);
  return serials;
}

describe('PKI under kill -9', () => {
  it('issues, revocations and CRL rebuilds: all acknowledged, all stored, the CRL complete and valid', async () => {
    const issued: string[] = [];
    type Ack = { kind: 'issue'; serial: string; certificate: string } | { kind: 'revoke'; serial: string } | { kind: 'crl' };
    const { acked } = await crashAndRestart<Ack>(6, 1_200, async (n) => {
      if (n % 4 === 2 && issued.length > 0) {
        const serial = issued.shift()!;
        await vault.write('pki/revoke', { serial_number: serial });
        return { kind: 'revoke', serial };
      }
      if (n % 8 === 3) {
        await vault.read('pki/crl/rotate');
        return { kind: 'crl' };
      }
      const r = await vault.write('pki/issue/web', { common_name: `host-${n}.example.com` });
      issued.push(r.data.serial_number);
      return { kind: 'issue', serial: r.data.serial_number as string, certificate: r.data.certificate as string };
    });

    const revoked = acked.filter((a) => a.kind === 'revoke').map((a) => a.serial);
    expect(revoked.length).toBeGreaterThan(0);
    for (const a of acked) {
      if (a.kind !== 'issue') continue;
      const stored = (await vault.read(`pki/cert/${a.serial}`)).data;
      expect(stored.certificate.trim()).toBe(a.certificate.trim());
    }
    for (const serial of revoked) expect((await vault.read(`pki/cert/${serial}`)).data.revocation_time, serial).toBeGreaterThan(0);
    // The CRL read after the restart rebuilds what the crash left stale: every revocation is in it.
    const crl = crlSerials((await vault.read('pki/cert/crl')).data.certificate);
    for (const serial of revoked) expect(crl.has(serial), `${serial} in the CRL`).toBe(true);
    await everyListedReadable();
  });

  it('a tidy cut off halfway finishes after the restart, and removes exactly the expired', async () => {
    const brief: string[] = [];
    for (let i = 0; i < 60; i++) brief.push((await vault.write('pki/issue/brief', { common_name: `brief-${i}.example.com` })).data.serial_number);
    await sleep(2_500); // all of them expired, beyond the 1 s safety buffer

    const { acked } = await crashAndRestart<string>(4, 700, async (n) => {
      if (n === 0) {
        // Vault answers a started tidy 202, which node-vault reports as an error carrying it.
        const status = await statusOf(() => vault.write('pki/tidy', { tidy_cert_store: true, tidy_revoked_certs: true, safety_buffer: '1s', pause_duration: '20ms' }));
        if (status !== 202) throw Object.assign(new Error('tidy'), { response: { statusCode: status } });
        return 'tidy';
      }
      return (await vault.write('pki/issue/web', { common_name: `kept-${n}.example.com` })).data.serial_number as string;
    });
    expect(acked).toContain('tidy');

    let status: Record<string, unknown> = {};
    for (let i = 0; i < 120; i++) {
      status = (await vault.read('pki/tidy-status')).data;
      if (status.state !== 'Running') break;
      await sleep(250);
    }
    expect(status.state).toBe('Finished');
    const listed = new Set(await everyListedReadable());
    for (const serial of brief) expect(listed.has(serial), `expired ${serial} tidied`).toBe(false);
    for (const serial of acked) if (serial !== 'tidy') expect(listed.has(serial), `issued ${serial} kept`).toBe(true);
  });
});
