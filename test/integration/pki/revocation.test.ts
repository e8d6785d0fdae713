// Revocation through the Worker (reference §1.9): revoke by serial (either form) and by PEM,
// revoke-with-key, every refusal (none of which leaves anything behind), idempotence, expired
// certificates, LIST certs/revoked, cert/:serial showing the revocation, and revoking a lease of a
// generate_lease role.
import { beforeAll, describe, expect, it } from 'vitest';
import * as x509 from '../../../src/crypto/pki/x509';
import { caller, initCluster, type Cluster } from '../../helpers/api';
import { GO_TIME } from '../../helpers/kv2';

let c: Cluster;
const { call, ok } = caller(() => c.root);

let rootId: string;
/** A second mount whose root key we hold, to present certificates it never issued. */
let ext: { keys: CryptoKeyPair; cert: x509.X509Certificate };

const now = (): number => Math.floor(Date.now() / 1000);

async function issue(mount = 'pki', cn = 'leaf.example.com', extra: Record<string, unknown> = {}) {
  return (await ok('POST', `${mount}/issue/leaf`, { common_name: cn, ...extra })).body.data as {
    serial_number: string;
    certificate: string;
    private_key: string;
  };
}

async function revokedList(mount = 'pki'): Promise<string[]> {
  const r = await call('GET', `${mount}/certs/revoked?list=true`);
  return r.status === 404 ? [] : r.body.data.keys;
}

const EC_PARAMS = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** A certificate signed with the external mount's root key (never stored by that mount). */
async function craft(notAfter: Date, serial = '0a1b2c3d4e5f'): Promise<string> {
  const keys = (await crypto.subtle.generateKey(EC_PARAMS, true, ['sign', 'verify'])) as CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial,
    subject: 'CN=crafted.example.com',
    issuer: ext.cert.subject,
    notBefore: new Date(Date.now() - 60_000),
    notAfter,
    publicKey: keys.publicKey,
    signingKey: ext.keys.privateKey,
    signingAlgorithm: EC_PARAMS,
    extensions: [await x509.AuthorityKeyIdentifierExtension.create(ext.cert, false)],
  });
  return cert.toString('pem');
}

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/pki', { type: 'pki', config: { max_lease_ttl: '768h' } });
  rootId = (await ok('POST', 'pki/root/generate/internal', { common_name: 'Revocation Root', ttl: '720h', key_type: 'ec' })).body.data.issuer_id;
  await ok('POST', 'pki/roles/leaf', { allow_any_name: true, ttl: '1h', key_type: 'ec' });
  await ok('POST', 'pki/roles/leased', { allow_any_name: true, ttl: '1h', key_type: 'ec', generate_lease: true });
  await ok('POST', 'pki/roles/rsa', { allow_any_name: true, ttl: '1h', key_type: 'rsa' });

  await ok('POST', 'sys/mounts/ext', { type: 'pki', config: { max_lease_ttl: '768h' } });
  const r = await ok('POST', 'ext/root/generate/exported', { common_name: 'External Root', ttl: '720h', key_type: 'ec', private_key_format: 'pkcs8' });
  const pkcs8 = x509.PemConverter.decodeFirst(r.body.data.private_key);
  const cert = new x509.X509Certificate(r.body.data.certificate);
  const privateKey = await crypto.subtle.importKey('pkcs8', pkcs8, EC_PARAMS, true, ['sign']);
  const publicKey = await cert.publicKey.export(EC_PARAMS, ['verify']);
  ext = { keys: { privateKey, publicKey }, cert };
  await ok('POST', 'ext/roles/leaf', { allow_any_name: true, ttl: '1h', key_type: 'ec' });
});

describe('revoke by serial', () => {
  it('revokes, answers the revocation time, and shows it everywhere', async () => {
    expect(await revokedList()).toEqual([]);
    const leaf = await issue();
    const before = now();
    const r = await ok('POST', 'pki/revoke', { serial_number: leaf.serial_number });
    expect(r.status).toBe(200);
    const d = r.body.data;
    expect(Object.keys(d).sort()).toEqual(['revocation_time', 'revocation_time_rfc3339', 'state']);
    expect(d.state).toBe('revoked');
    expect(d.revocation_time).toBeGreaterThanOrEqual(before);
    expect(d.revocation_time).toBeLessThanOrEqual(now());
    expect(d.revocation_time_rfc3339).toMatch(GO_TIME);
    expect(Math.floor(Date.parse(d.revocation_time_rfc3339) / 1000)).toBe(d.revocation_time);
    expect(r.body.lease_id).toBe('');

    expect(await revokedList()).toEqual([leaf.serial_number]);
    const fetched = (await ok('GET', `pki/cert/${leaf.serial_number}`)).body.data;
    expect(fetched.revocation_time).toBe(d.revocation_time);
    expect(fetched.revocation_time_rfc3339).toBe(d.revocation_time_rfc3339);
    expect(fetched.issuer_id).toBe(rootId);

    // Again, in hyphen form and upper case: the stored revocation, unchanged.
    const again = await ok('POST', 'pki/revoke', { serial_number: leaf.serial_number.toUpperCase().replace(/:/g, '-') });
    expect(again.body.data).toEqual(d);
    expect(await revokedList()).toEqual([leaf.serial_number]);
  });

  it('refuses bad requests with Vault messages and writes nothing', async () => {
    const before = await revokedList();
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'The serial number or certificate to revoke must be provided.'],
      [{ serial_number: '11:22', certificate: 'x' }, 'Must provide either the certificate or the serial to revoke; not both.'],
      [{ serial_number: '' }, 'The serial number must be provided'],
      [{ serial_number: '11:22:33' }, 'certificate with serial 11:22:33 not found.'],
      [{ serial_number: 'not-a-serial' }, 'certificate with serial not-a-serial not found.'],
    ];
    for (const [body, message] of cases) {
      const r = await call('POST', 'pki/revoke', body);
      expect(r.status, JSON.stringify(body)).toBe(400);
      expect(r.body.errors).toEqual([message]);
    }
    // The issuer itself is revoked through issuer/:ref/revoke only.
    const rootSerial = (await ok('GET', `pki/issuer/${rootId}`)).body.data.certificate;
    const serial = new x509.X509Certificate(rootSerial).serialNumber.toLowerCase().match(/../g)!.join(':').replace(/^00:/, '');
    const r = await call('POST', 'pki/revoke', { serial_number: serial });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([`adding issuer (id: ${rootId}) to its own CRL is not allowed`]);
    expect(await revokedList()).toEqual(before);
  });
});

describe('revoke by certificate', () => {
  it('revokes a certificate the mount issued, given as PEM', async () => {
    const leaf = await issue();
    const r = await ok('POST', 'pki/revoke', { certificate: leaf.certificate });
    expect(r.body.data.state).toBe('revoked');
    expect(await revokedList()).toContain(leaf.serial_number);
  });

  it('stores and revokes a certificate signed by one of its issuers that it never stored', async () => {
    const pem = await craft(new Date(Date.now() + 3600_000), '0a1b2c3d4e5f');
    expect((await call('GET', 'ext/cert/0a:1b:2c:3d:4e:5f')).status).toBe(404);
    const r = await ok('POST', 'ext/revoke', { certificate: pem });
    expect(r.body.data.state).toBe('revoked');
    const stored = (await ok('GET', 'ext/cert/0a:1b:2c:3d:4e:5f')).body.data;
    expect(stored.certificate).toBe(pem.trim());
    expect(stored.revocation_time).toBe(r.body.data.revocation_time);
    expect(await revokedList('ext')).toContain('0a:1b:2c:3d:4e:5f');
  });

  it('refuses PEMs that are short, not PEM, unparseable, foreign or clash with a stored serial', async () => {
    const before = await revokedList('ext');
    const foreign = await issue('pki', 'foreign.example.com');
    const issued = await issue('ext', 'stored.example.com');
    const clash = await craft(new Date(Date.now() + 3600_000), issued.serial_number.replace(/:/g, ''));
    const garbage = `-----BEGIN CERTIFICATE-----\n${btoa('this is not a certificate at all, just bytes')}\n-----END CERTIFICATE-----`;
    const cases: [string, string | RegExp][] = [
      ['-----BEGIN CERTIFICATE-----', 'provided certificate data was too short; perhaps a path was passed to the API rather than the contents of a PEM file'],
      ['x'.repeat(100), 'certificate contains no PEM data'],
      [garbage, /^certificate could not be parsed: /],
      [
        foreign.certificate,
        'unable to verify signature on presented cert from any present issuer in this mount; certificates from previous CAs will need to have their issuing CA and key re-imported if revocation is necessary',
      ],
      [clash, "certificate with same serial but unequal value already present in this cluster's storage; refusing to revoke"],
    ];
    for (const [certificate, message] of cases) {
      const r = await call('POST', 'ext/revoke', { certificate });
      expect(r.status, certificate.slice(0, 40)).toBe(400);
      expect(r.body.errors).toHaveLength(1);
      if (typeof message === 'string') expect(r.body.errors[0]).toBe(message);
      else expect(r.body.errors[0]).toMatch(message);
    }
    expect(await revokedList('ext')).toEqual(before);
    // The foreign certificate was not stored either.
    expect((await call('GET', `ext/cert/${foreign.serial_number}`)).status).toBe(404);
  });

  it('an already expired certificate is not revoked: 200, no data, a warning', async () => {
    const pem = await craft(new Date(Date.now() + 1000), '776655');
    const r = await call('POST', 'ext/revoke', { certificate: pem });
    expect(r.status).toBe(200);
    expect(r.body.data).toBeNull();
    expect(r.body.warnings).toEqual(['certificate with serial 77:66:55 already expired; refusing to add to CRL']);
    expect(await revokedList('ext')).not.toContain('77:66:55');
  });
});

describe('revoke-with-key', () => {
  it('revokes when the private key matches the certificate', async () => {
    const leaf = await issue();
    const r = await ok('POST', 'pki/revoke-with-key', { serial_number: leaf.serial_number, private_key: leaf.private_key });
    expect(r.body.data.state).toBe('revoked');
    const byPem = await issue();
    await ok('POST', 'pki/revoke-with-key', { certificate: byPem.certificate, private_key: byPem.private_key });
    expect(await revokedList()).toEqual(expect.arrayContaining([leaf.serial_number, byPem.serial_number]));
  });

  it('refuses a missing, short, mismatched or wrong-type key and revokes nothing', async () => {
    const leaf = await issue();
    const other = await issue();
    const rsa = (await ok('POST', 'pki/issue/rsa', { common_name: 'rsa.example.com' })).body.data;
    const cases: [Record<string, unknown>, string][] = [
      [{ serial_number: leaf.serial_number }, 'Must have private key to revoke via the /revoke-with-key path.'],
      [{ serial_number: leaf.serial_number, private_key: 'short' }, 'Provided data for private_key was too short; perhaps a path was passed to the API rather than the contents of a PEM file?'],
      [{ serial_number: leaf.serial_number, private_key: other.private_key }, "provided private key does not match certificate's public key"],
      [{ serial_number: leaf.serial_number, private_key: rsa.private_key }, "provided private key type does not match certificate's public key type"],
      [{}, 'The serial number or certificate to revoke must be provided.'],
    ];
    for (const [body, message] of cases) {
      const r = await call('POST', 'pki/revoke-with-key', body);
      expect(r.status, message).toBe(400);
      expect(r.body.errors).toEqual([message]);
    }
    expect(await revokedList()).not.toContain(leaf.serial_number);
  });
});

describe('leases', () => {
  it('revoking the lease of a generate_lease certificate revokes the certificate', async () => {
    const r = await ok('POST', 'pki/issue/leased', { common_name: 'leased.example.com' });
    expect(r.body.lease_id).toMatch(/^pki\/issue\/leased\//);
    const serial = r.body.data.serial_number;
    expect(await revokedList()).not.toContain(serial);
    await ok('PUT', 'sys/leases/revoke', { lease_id: r.body.lease_id });
    expect(await revokedList()).toContain(serial);
    expect((await ok('GET', `pki/cert/${serial}`)).body.data.revocation_time).toBeGreaterThan(0);
  });
});
