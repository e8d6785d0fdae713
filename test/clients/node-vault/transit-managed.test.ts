// node-vault against transit keys of type managed_key, backed by pkcs11 managed keys on the
// launcher's SoftHSM2 token: its transit methods (transitCreateKey, transitReadKey, encryptData,
// decryptData) and its generic write for sign, verify and rotate, which it has no methods for.
// Signatures and ciphertexts are also checked with node:crypto against the public key of the read.
import { constants, createPublicKey, publicEncrypt, verify } from 'node:crypto';
import nodeVault from 'node-vault';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { coffer, failure, unique, vault } from './client';

const root = vault();
const hsm = inject('cofferHsm');
const b64 = (s: string) => Buffer.from(s).toString('base64');
/** The bytes of "vault:v<N>:<base64>" (Node's base64 decoder takes the URL alphabet of jws too). */
const payload = (versioned: string) => Buffer.from(versioned.split(':')[2], 'base64');

// node-vault's transit methods address "transit/" under its pathPrefix: with a prefix of our own
// they reach a mount of this file's (secrets.test.ts has the top-level transit/).
const prefix = unique('nv-mk');
const scoped = nodeVault({ endpoint: coffer.url, token: coffer.rootToken, noCustomHTTPVerbs: true, pathPrefix: `/${prefix}` });

const ec = unique('ec');
const rsa = unique('rsa');
const ids: Record<string, string> = {};

async function pkcs11Key(name: string, fields: Record<string, unknown>): Promise<void> {
  await root.write(`sys/managed-keys/pkcs11/${name}`, { library: hsm.library, token_label: hsm.tokenLabel, pin: hsm.pin, key_label: name, allow_generate_key: true, ...fields });
  ids[name] = (await root.read(`sys/managed-keys/pkcs11/${name}`)).data.UUID;
}

beforeAll(async () => {
  await pkcs11Key(ec, { mechanism: '0x1041', curve: 'P256' });
  await pkcs11Key(rsa, { mechanism: '0x0001', key_bits: 2048, usages: 'sign,verify,encrypt,decrypt' });
  await root.mount({ mount_point: `${prefix}/transit`, type: 'transit', config: { allowed_managed_keys: [ec, rsa] } });
});

describe('transit managed_key keys through node-vault', () => {
  it('transitCreateKey by managed_key_name, transitReadKey, and ECDSA signatures (asn1 and jws) checked with node:crypto', async () => {
    const name = unique('signer');
    await scoped.transitCreateKey({ name, type: 'managed_key', managed_key_name: ec });
    const key = (await scoped.transitReadKey({ name })).data;
    expect(key).toMatchObject({ name, type: 'managed_key', managed_key_name: ec, managed_key_id: ids[ec], exportable: false, supports_signing: true, supports_encryption: false });
    const publicKey = createPublicKey(key.keys['1'].public_key);
    expect(publicKey.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');

    const data = 'signed in the HSM';
    const asn1 = (await scoped.write(`transit/sign/${name}`, { input: b64(data) })).data.signature as string;
    expect(asn1).toMatch(/^vault:v1:/);
    expect(verify('sha256', Buffer.from(data), publicKey, payload(asn1))).toBe(true);
    const jws = (await scoped.write(`transit/sign/${name}`, { input: b64(data), marshaling_algorithm: 'jws' })).data.signature as string;
    expect(payload(jws)).toHaveLength(64);
    expect(verify('sha256', Buffer.from(data), { key: publicKey, dsaEncoding: 'ieee-p1363' }, payload(jws))).toBe(true);

    expect((await scoped.write(`transit/verify/${name}`, { input: b64(data), signature: asn1 })).data.valid).toBe(true);
    expect((await scoped.write(`transit/verify/${name}`, { input: b64('other'), signature: jws, marshaling_algorithm: 'jws' })).data.valid).toBe(false);
  });

  it('transitCreateKey by managed_key_id (null name), encryptData and decryptData with RSA-OAEP, and RSA signatures', async () => {
    const name = unique('crypter');
    await scoped.transitCreateKey({ name, type: 'managed_key', managed_key_name: null, managed_key_id: ids[rsa] });
    const key = (await scoped.transitReadKey({ name })).data;
    expect(key).toMatchObject({ managed_key_name: rsa, supports_encryption: true, supports_decryption: true });
    const pem = key.keys['1'].public_key as string;

    const plaintext = b64('kept by the HSM');
    const { ciphertext } = (await scoped.encryptData({ name, plaintext })).data;
    expect(ciphertext).toMatch(/^vault:v1:/);
    expect((await scoped.decryptData({ name, ciphertext })).data.plaintext).toBe(plaintext);
    // A ciphertext made here: RSA-OAEP with SHA-1, the managed_key scheme.
    const local = publicEncrypt({ key: pem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, Buffer.from('made by node'));
    expect((await scoped.decryptData({ name, ciphertext: `vault:v1:${local.toString('base64')}` })).data.plaintext).toBe(b64('made by node'));

    const data = Buffer.from('rsa data');
    const pss = (await scoped.write(`transit/sign/${name}/sha2-384`, { input: data.toString('base64') })).data.signature as string;
    expect(verify('sha384', data, { key: pem, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_AUTO }, payload(pss))).toBe(true);
    const pkcs1 = (await scoped.write(`transit/sign/${name}`, { input: data.toString('base64'), signature_algorithm: 'pkcs1v15' })).data.signature as string;
    expect(verify('sha256', data, { key: pem, padding: constants.RSA_PKCS1_PADDING }, payload(pkcs1))).toBe(true);
  });

  it('rotates onto another managed key; old signatures still verify', async () => {
    const name = unique('moving');
    await scoped.transitCreateKey({ name, type: 'managed_key', managed_key_name: ec });
    const v1 = (await scoped.write(`transit/sign/${name}`, { input: b64('x') })).data.signature as string;
    await scoped.write(`transit/keys/${name}/rotate`, { managed_key_name: rsa });
    const key = (await scoped.transitReadKey({ name })).data;
    expect(key).toMatchObject({ latest_version: 2, managed_key_name: rsa });
    expect(key.keys['1']).toMatchObject({ name: ec, managed_key_id: ids[ec] });
    expect(key.keys['2']).toMatchObject({ name: rsa, managed_key_id: ids[rsa] });
    expect((await scoped.write(`transit/verify/${name}`, { input: b64('x'), signature: v1 })).data.valid).toBe(true);
    expect((await scoped.write(`transit/sign/${name}`, { input: b64('x') })).data.key_version).toBe(2);
  });

  it('refusals answer 400 with the message', async () => {
    expect(await failure(scoped.transitCreateKey({ name: unique('bad'), type: 'managed_key', managed_key_name: ec, managed_key_id: ids[ec] }))).toEqual({
      status: 400,
      errors: ['only one argument of managed_key_name or managed_key_id should be specified'],
    });
    const other = unique('other');
    await pkcs11Key(other, { mechanism: '0x1041', curve: 'P256' });
    const notAllowed = await failure(scoped.transitCreateKey({ name: unique('bad'), type: 'managed_key', managed_key_name: other }));
    expect(notAllowed.status).toBe(400);
    expect(notAllowed.errors[0]).toMatch(new RegExp(`^managed key "${other}" is not allowed on this mount`));
    const name = unique('noexport');
    await scoped.transitCreateKey({ name, type: 'managed_key', managed_key_name: ec });
    expect((await failure(scoped.read(`transit/export/signing-key/${name}`))).status).toBe(400);
    expect((await failure(scoped.write(`transit/hmac/${name}`, { input: b64('x') }))).errors).toEqual(['HMAC is not supported for keys of type managed_key']);
  });
});
