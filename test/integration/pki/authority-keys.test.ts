// PKI keys through the Worker (reference §1.7): LIST keys with key_info, key/:ref read (subject key
// id checked against the key's own SPKI), rename, delete (refused while an issuer uses the key;
// clears the default), keys/import (every key encoding, deduplication) and each refusal.
import { createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { call, ok } = caller(() => c.root);

let n = 0;
async function mount(): Promise<string> {
  const path = `keys${++n}`;
  await ok('POST', `sys/mounts/${path}`, { type: 'pki' });
  return path;
}

async function expectRefused(method: string, path: string, body: unknown, message: string | RegExp): Promise<void> {
  const r = await call(method, path, body);
  expect(r.status, r.text).toBe(400);
  if (typeof message === 'string') expect(r.body.errors).toEqual([message]);
  else expect(r.body.errors[0]).toMatch(message);
}

/** SHA-1 over the subjectPublicKey bits, colon hex (what subject_key_id shows). */
function skidOf(privatePem: string): string {
  const spki = createPublicKey(createPrivateKey(privatePem)).export({ format: 'der', type: 'spki' });
  const jwk = createPublicKey(createPrivateKey(privatePem)).export({ format: 'jwk' });
  // The BIT STRING is the SPKI's tail: for EC the uncompressed point (0x04 || x || y).
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
  expect(spki.subarray(spki.length - point.length)).toEqual(point);
  return createHash('sha1').update(point).digest('hex').match(/../g)!.join(':');
}

/** One EC key (made in beforeAll), in either encoding. */
let ecSource = '';
const ecKeyPem = (type: 'sec1' | 'pkcs8'): string => createPrivateKey(ecSource).export({ format: 'pem', type }) as string;

beforeAll(async () => {
  c = await initCluster();
  const pair = (await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify'])) as CryptoKeyPair;
  const der = new Uint8Array((await crypto.subtle.exportKey('pkcs8', pair.privateKey)) as ArrayBuffer);
  ecSource = createPrivateKey({ key: Buffer.from(der), format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'pkcs8' }) as string;
});

describe('keys/import', () => {
  it('imports a SEC1 key, names it, shows its subject key id; the PKCS#8 form of the same key is "existing"', async () => {
    const m = await mount();
    const sec1 = ecKeyPem('sec1');
    const r = await ok('POST', `${m}/keys/import`, { pem_bundle: sec1, key_name: 'imported' });
    expect(r.body.data).toEqual({ key_id: expect.stringMatching(/^[0-9a-f-]{36}$/), key_name: 'imported', key_type: 'ec' });
    expect(r.body.warnings).toBeFalsy();
    const read = (await ok('GET', `${m}/key/imported`)).body.data;
    expect(read).toEqual({ key_id: r.body.data.key_id, key_name: 'imported', key_type: 'ec', subject_key_id: skidOf(sec1) });
    expect((await ok('GET', `${m}/config/keys`)).body.data.default).toBe(r.body.data.key_id);

    const again = await ok('POST', `${m}/keys/import`, { pem_bundle: ecKeyPem('pkcs8') });
    expect(again.body.data).toEqual(r.body.data);
    expect(again.body.warnings).toEqual(['Key already imported, use key/ endpoint to update name.']);
    expect((await ok('GET', `${m}/keys?list=true`)).body.data.keys).toEqual([r.body.data.key_id]);
  });

  it('imports PKCS#1 RSA and PKCS#8 Ed25519 keys', async () => {
    const m = await mount();
    const rsa = (await crypto.subtle.generateKey({ name: 'RSASSA-PKCS1-v1_5', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' }, true, ['sign'])) as CryptoKeyPair;
    const rsaPem = createPrivateKey({ key: Buffer.from((await crypto.subtle.exportKey('pkcs8', rsa.privateKey)) as ArrayBuffer), format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'pkcs1' }) as string;
    expect((await ok('POST', `${m}/keys/import`, { pem_bundle: rsaPem })).body.data.key_type).toBe('rsa');
    const ed = (await crypto.subtle.generateKey({ name: 'Ed25519' }, true, ['sign', 'verify'])) as CryptoKeyPair;
    const edPem = createPrivateKey({ key: Buffer.from((await crypto.subtle.exportKey('pkcs8', ed.privateKey)) as ArrayBuffer), format: 'der', type: 'pkcs8' }).export({ format: 'pem', type: 'pkcs8' }) as string;
    const edKey = (await ok('POST', `${m}/keys/import`, { pem_bundle: edPem })).body.data;
    expect(edKey.key_type).toBe('ed25519');
    expect(edKey.key_name).toBe('');
  });

  it('refuses bad input, writing nothing', async () => {
    const m = await mount();
    await ok('POST', `${m}/keys/generate/internal`, { key_name: 'taken', key_type: 'ec' });
    const sec1 = ecKeyPem('sec1');
    await expectRefused('POST', `${m}/keys/import`, { pem_bundle: '/tmp/key.pem' }, 'provided data for import was too short; perhaps a path was passed to the API rather than the contents of a PEM file');
    await expectRefused('POST', `${m}/keys/import`, { pem_bundle: `${sec1}\n${sec1}` }, 'only a single key can be present within the pem_bundle for importing');
    await expectRefused('POST', `${m}/keys/import`, { pem_bundle: 'k'.repeat(80) }, 'provided PEM block contained no data');
    await expectRefused('POST', `${m}/keys/import`, { pem_bundle: sec1, key_name: 'taken' }, 'key name already in use');
    await expectRefused('POST', `${m}/keys/import`, { pem_bundle: sec1, key_name: 'default' }, "reserved keyword 'default' can not be used as key name");
    await expectRefused('POST', `${m}/keys/import`, { pem_bundle: sec1, key_name: 'no spaces' }, 'key name contained invalid characters');
    await expectRefused('POST', `${m}/keys/import`, { pem_bundle: `-----BEGIN ENCRYPTED PRIVATE KEY-----\n${btoa('x'.repeat(60))}\n-----END ENCRYPTED PRIVATE KEY-----` }, /private key/);
    expect((await ok('GET', `${m}/keys?list=true`)).body.data.keys).toHaveLength(1);
  });
});

describe('LIST keys, key/:ref', () => {
  let m: string;
  let a: { key_id: string };
  let b: { key_id: string };
  beforeAll(async () => {
    m = await mount();
    a = (await ok('POST', `${m}/keys/generate/internal`, { key_name: 'alpha', key_type: 'ec' })).body.data;
    b = (await ok('POST', `${m}/keys/generate/internal`, { key_type: 'ed25519' })).body.data;
  });

  it('lists ids with name and default flag', async () => {
    const d = (await ok('GET', `${m}/keys?list=true`)).body.data;
    expect([...d.keys].sort()).toEqual([a.key_id, b.key_id].sort());
    expect(d.key_info).toEqual({ [a.key_id]: { key_name: 'alpha', is_default: true }, [b.key_id]: { key_name: '', is_default: false } });
  });

  it('reads by id, name or default', async () => {
    for (const ref of [a.key_id, 'alpha', 'default', 'DEFAULT']) {
      expect((await ok('GET', `${m}/key/${ref}`)).body.data.key_id).toBe(a.key_id);
    }
    const ed = (await ok('GET', `${m}/key/${b.key_id}`)).body.data;
    expect(ed.key_type).toBe('ed25519');
    expect(ed.subject_key_id).toMatch(/^([0-9a-f]{2}:){19}[0-9a-f]{2}$/);
    await expectRefused('GET', `${m}/key/missing`, undefined, 'unable to find PKI key for reference: missing');
  });

  it('renames (only the name changes); clearing the name warns; names stay unique and valid', async () => {
    const r = await ok('POST', `${m}/key/${b.key_id}`, { key_name: 'beta' });
    expect(r.body.data).toMatchObject({ key_id: b.key_id, key_name: 'beta', key_type: 'ed25519' });
    expect((await ok('GET', `${m}/key/beta`)).body.data.key_id).toBe(b.key_id);
    await expectRefused('POST', `${m}/key/beta`, { key_name: 'alpha' }, 'key name already in use');
    await expectRefused('POST', `${m}/key/beta`, { key_name: 'no way' }, 'new key name outside of valid character limits');
    await expectRefused('POST', `${m}/key/beta`, { key_name: 'default' }, "reserved keyword 'default' can not be used as key name");
    const same = await ok('POST', `${m}/key/beta`, { key_name: 'beta' });
    expect(same.body.data.key_name).toBe('beta');
    const cleared = await ok('POST', `${m}/key/beta`, { key_name: '' });
    expect(cleared.body.data.key_name).toBe('');
    expect(cleared.body.warnings).toEqual([`Name successfully deleted, you will now need to reference this key by it's Id: ${b.key_id}`]);
    await expectRefused('GET', `${m}/key/beta`, undefined, 'unable to find PKI key for reference: beta');
  });

  it('delete: refused while an issuer uses the key; deleting the default key clears the default', async () => {
    const root = (await ok('POST', `${m}/root/generate/existing`, { common_name: 'uses alpha', key_ref: 'alpha' })).body.data;
    await expectRefused('DELETE', `${m}/key/alpha`, undefined, `Failed to Delete Key.  Key in Use by Issuer: ${root.issuer_id}`);
    await ok('DELETE', `${m}/issuer/${root.issuer_id}`);
    const del = await ok('DELETE', `${m}/key/alpha`);
    expect(del.body.warnings).toEqual([
      `Deleted key ${a.key_id} (via key_ref alpha); this was configured as the default key. Operations without an explicit key will not work until a new default is configured.`,
    ]);
    expect((await ok('GET', `${m}/config/keys`)).body.data.default).toBe('');
    const plain = await call('DELETE', `${m}/key/${b.key_id}`);
    expect(plain.status).toBe(204);
    expect((await call('GET', `${m}/keys?list=true`)).status).toBe(404);
    await expectRefused('DELETE', `${m}/key/${b.key_id}`, undefined, `unable to find PKI key for reference: ${b.key_id}`);
  });
});
