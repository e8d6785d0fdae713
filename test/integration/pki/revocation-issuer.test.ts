// Issuer revocation (reference §1.6, spec "issuer present → POST revoke"): irreversible, no more
// issuance, the issuer lands on the CRL of the issuer that signed it, all CRLs are rebuilt, and the
// response is the issuer read shape with its revocation time and Vault's warnings.
import { beforeAll, describe, expect, it } from 'vitest';
import { parseCrl } from '../../../src/crypto/pki/crl';
import * as x509 from '../../../src/crypto/pki/x509';
import { api, caller, initCluster, type Cluster } from '../../helpers/api';
import { GO_TIME, MERGE_PATCH } from '../../helpers/kv2';
import { SELF } from 'cloudflare:test';

let c: Cluster;
const { call, ok } = caller(() => c.root);

let intId: string;
let intSerial: string;

const colon = (cert: x509.X509Certificate): string => cert.serialNumber.toLowerCase().replace(/^(00)+(?=..)/, '').match(/../g)!.join(':');

async function crlOf(ref: string) {
  const res = await SELF.fetch(`http://coffer.test/v1/pki/issuer/${ref}/crl/der`, { headers: { 'X-Vault-Token': c.root } });
  expect(res.status).toBe(200);
  return parseCrl(new Uint8Array(await res.arrayBuffer()));
}

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/pki', { type: 'pki', config: { max_lease_ttl: '768h' } });
  await ok('POST', 'pki/root/generate/internal', { common_name: 'Issuer Root', ttl: '720h', key_type: 'ec', issuer_name: 'root' });
  const csr = (await ok('POST', 'pki/intermediate/generate/internal', { common_name: 'Issuer Intermediate', key_type: 'ec' })).body.data.csr;
  const signed = (await ok('POST', 'pki/issuer/root/sign-intermediate', { csr, common_name: 'Issuer Intermediate', ttl: '360h' })).body.data.certificate;
  intSerial = colon(new x509.X509Certificate(signed));
  intId = (await ok('POST', 'pki/intermediate/set-signed', { certificate: signed })).body.data.imported_issuers[0];
  expect((await api('PATCH', `pki/issuer/${intId}`, { token: c.root, body: { issuer_name: 'int' }, headers: MERGE_PATCH })).status).toBe(200);
  await ok('POST', 'pki/roles/leaf', { allow_any_name: true, ttl: '1h', key_type: 'ec' });
});

describe('issuer/:ref/revoke', () => {
  it('cannot be done through revoke by serial', async () => {
    const r = await call('POST', 'pki/revoke', { serial_number: intSerial });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([`adding issuer (id: ${intId}) to its own CRL is not allowed`]);
  });

  it('revokes the intermediate, stops its issuance and puts it on the root CRL', async () => {
    await ok('POST', 'pki/issuer/int/issue/leaf', { common_name: 'before.example.com' });
    const rootBefore = await crlOf('root');
    expect(rootBefore.serials).not.toContain(intSerial);

    const r = await ok('POST', 'pki/issuer/int/revoke');
    const d = r.body.data;
    expect(d.issuer_id).toBe(intId);
    expect(d.revoked).toBe(true);
    expect(d.revocation_time).toBeGreaterThan(0);
    expect(d.revocation_time_rfc3339).toMatch(GO_TIME);
    expect(d.usage.split(',')).not.toContain('issuing-certificates');
    expect(d.usage.split(',')).toContain('crl-signing');
    // It has a parent in the mount and is not the default: no warnings about that.
    expect(r.body.warnings ?? []).toEqual([]);

    const rootAfter = await crlOf('root');
    expect(rootAfter.serials).toContain(intSerial);
    expect(rootAfter.number).toBeGreaterThan(rootBefore.number!);
    const entry = rootAfter.entries.find((e) => e.serial === intSerial)!;
    expect(Math.floor(entry.revocationTime.getTime() / 1000)).toBe(d.revocation_time);
    // Not on its own CRL; it still signs that CRL.
    expect((await crlOf('int')).serials).not.toContain(intSerial);

    const issue = await call('POST', 'pki/issuer/int/issue/leaf', { common_name: 'after.example.com' });
    expect(issue.status).toBe(400);

    // Reading or revoking again shows the same revocation.
    expect((await ok('GET', 'pki/issuer/int')).body.data.revocation_time).toBe(d.revocation_time);
    const again = await ok('POST', 'pki/issuer/int/revoke');
    expect(again.body.data.revocation_time).toBe(d.revocation_time);
    expect(again.body.data.revocation_time_rfc3339).toBe(d.revocation_time_rfc3339);
  });

  it('warns when revoking a self-signed default issuer without another parent', async () => {
    await ok('POST', 'sys/mounts/solo', { type: 'pki', config: { max_lease_ttl: '768h' } });
    await ok('POST', 'solo/root/generate/internal', { common_name: 'Solo Root', ttl: '720h', key_type: 'ec' });
    const r = await ok('POST', 'solo/issuer/default/revoke');
    expect(r.body.data.revoked).toBe(true);
    expect(r.body.warnings).toEqual([
      "This issuer is a self-signed (potentially root) certificate. This means it may not be considered revoked if there is not an external, cross-signed variant of this certificate. This issuer's serial number will not appear on its own CRL.",
      "This issuer lacks another parent issuer within the mount. This means it will not appear on any other CRLs and may not be considered revoked by clients. Consider adding this issuer to its issuer's CRL as well if it is not self-signed.",
      'This issuer is currently configured as the default issuer for this mount; operations such as certificate issuance may not work until a new default issuer is selected.',
    ]);
  });

  it('answers 400 for an unknown issuer', async () => {
    const r = await call('POST', 'pki/issuer/nope/revoke');
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['unable to find PKI issuer for reference: nope']);
  });
});
