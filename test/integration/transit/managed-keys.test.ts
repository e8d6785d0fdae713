// Transit keys of type managed_key against the real HSM bridge on SoftHSM2 (test/global/
// hsm-bridge-setup.ts): creation by managed_key_name and by managed_key_id, the read, ECDSA and RSA
// signatures checked independently with WebCrypto against the public key the read shows, verify,
// RSA-OAEP encrypt/decrypt (a ciphertext made here with WebCrypto decrypts through the API),
// rotation (over the same managed key and onto another one), and every refusal: the references,
// the mount's allowed_managed_keys, the managed key's usages, and what such a key cannot do.
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { caller, initCluster, type Cluster } from '../../helpers/api';

let c: Cluster;
const { call, ok } = caller(() => c.root);

const LIBRARY = inject('hsmBridgeLibrary');
const TOKEN = inject('hsmBridgeTokenLabel');
const PIN = inject('hsmBridgePin');
/** Labels unique to this run: a re-run never finds the keys of an earlier one. */
const run = Math.random().toString(36).slice(2, 8);
const label = (name: string) => `tmk-${run}-${name}`;

const b64 = (s: string) => btoa(s);
const input = b64('message to sign');
const bytes = (s: string) => Uint8Array.from(atob(s), (ch) => ch.charCodeAt(0));
const fromB64Url = (s: string) => bytes(s.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(s.length / 4) * 4, '='));
const text = (b: Uint8Array) => btoa(String.fromCharCode(...b));
const utf8 = (s: string) => new TextEncoder().encode(s);
const der = (pem: string) => bytes(pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''));
/** The signature bytes of "vault:v<N>:<base64>". */
const sigBytes = (sig: string, url = false) => (url ? fromB64Url(sig.split(':')[2]) : bytes(sig.split(':')[2]));

/** ECDSA DER SEQUENCE{r, s} as the r‖s WebCrypto verifies (short-form lengths: P-256). */
function derToP1363(sig: Uint8Array, size: number): Uint8Array {
  expect(sig[0]).toBe(0x30);
  const out = new Uint8Array(size * 2);
  let at = 2;
  for (let i = 0; i < 2; i++) {
    expect(sig[at]).toBe(0x02);
    const len = sig[at + 1];
    let n = sig.subarray(at + 2, at + 2 + len);
    while (n.length > size && n[0] === 0) n = n.subarray(1);
    out.set(n, i * size + size - n.length);
    at += 2 + len;
  }
  expect(at).toBe(sig.length);
  return out;
}

async function pkcs11Key(name: string, fields: Record<string, unknown>): Promise<string> {
  await ok('POST', `sys/managed-keys/pkcs11/${name}`, { library: LIBRARY, token_label: TOKEN, pin: PIN, ...fields });
  return (await ok('GET', `sys/managed-keys/pkcs11/${name}`)).body.data.UUID as string;
}
const allow = (names: string[]) => ok('POST', 'sys/mounts/transit/tune', { allowed_managed_keys: names });
const ALLOWED = ['ec', 'ec-b', 'rsa', 'rsa-replace', 'absent', 'sign-only'];

const refused = async (method: string, path: string, body: unknown, message: string | RegExp) => {
  const r = await call(method, path, body);
  expect({ status: r.status, errors: r.body?.errors }).toEqual({ status: 400, errors: [message instanceof RegExp ? expect.stringMatching(message) : message] });
};

const ids: Record<string, string> = {};
const RSA_ALL = { mechanism: '0x0001', key_bits: 2048, usages: 'sign,verify,encrypt,decrypt' };

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/transit', { type: 'transit' });
  ids.ec = await pkcs11Key('ec', { key_label: label('ec'), mechanism: '0x1041', curve: 'P256', allow_generate_key: true });
  ids['ec-b'] = await pkcs11Key('ec-b', { key_label: label('ec-b'), mechanism: '0x1041', curve: 'P256', allow_generate_key: true });
  ids.rsa = await pkcs11Key('rsa', { key_label: label('rsa'), allow_generate_key: true, ...RSA_ALL });
  ids['rsa-replace'] = await pkcs11Key('rsa-replace', { key_label: label('rsa-replace'), allow_generate_key: true, allow_replace_key: true, ...RSA_ALL });
  ids.absent = await pkcs11Key('absent', { key_label: label('absent'), mechanism: '0x1041', curve: 'P256' });
  // The HSM key of "rsa", under another entry that may only sign.
  ids['sign-only'] = await pkcs11Key('sign-only', { key_label: label('rsa'), mechanism: '0x0001', usages: 'sign' });
  ids.other = await pkcs11Key('other', { key_label: label('ec'), mechanism: '0x1041' });
  await allow(ALLOWED);
  await ok('POST', 'transit/keys/ec', { type: 'managed_key', managed_key_name: 'ec' });
  await ok('POST', 'transit/keys/rsa', { type: 'managed_key', managed_key_id: ids.rsa });
}, 120_000);

const publicKey = async (name: string, version = 1) => (await ok('GET', `transit/keys/${name}`)).body.data.keys[String(version)].public_key as string;
const ecKey = async (name: string, version = 1) =>
  crypto.subtle.importKey('spki', der(await publicKey(name, version)), { name: 'ECDSA', namedCurve: 'P-256' }, false, ['verify']);
const rsaKey = async (name: string, alg: 'RSA-PSS' | 'RSASSA-PKCS1-v1_5', hash = 'SHA-256', version = 1) =>
  crypto.subtle.importKey('spki', der(await publicKey(name, version)), { name: alg, hash }, false, ['verify']);

describe('creating and reading', () => {
  it('by managed_key_name: the read shows the managed key, its public key and what it can do', async () => {
    const r = await ok('GET', 'transit/keys/ec');
    const pem = r.body.data.keys['1'].public_key;
    expect(pem).toMatch(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\n$/);
    expect(r.body.data).toEqual({
      name: 'ec',
      type: 'managed_key',
      derived: false,
      deletion_allowed: false,
      exportable: false,
      allow_plaintext_backup: false,
      latest_version: 1,
      min_available_version: 0,
      min_decryption_version: 1,
      min_encryption_version: 0,
      // An ECDSA key with the default usages (sign, verify).
      supports_encryption: false,
      supports_decryption: false,
      supports_derivation: false,
      supports_signing: true,
      supports_verification: true,
      auto_rotate_period: 0,
      imported_key: false,
      keys: { '1': { creation_time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), name: 'ec', managed_key_id: ids.ec, public_key: pem } },
      managed_key_name: 'ec',
      managed_key_id: ids.ec,
    });
    // The PIN and the rest of the managed key's configuration are nowhere in it.
    expect(r.text).not.toContain(PIN);
    expect(r.text).not.toContain(LIBRARY);
  });

  it('by managed_key_id (a JSON null managed_key_name is empty): an RSA key with every usage', async () => {
    const r = await ok('POST', 'transit/keys/by-id', { type: 'managed_key', managed_key_name: null, managed_key_id: ids.rsa });
    expect(r.body.data).toMatchObject({
      type: 'managed_key',
      managed_key_name: 'rsa',
      managed_key_id: ids.rsa,
      supports_encryption: true,
      supports_decryption: true,
      supports_signing: true,
      supports_verification: true,
    });
    // The same HSM key as the transit key made by name.
    expect(r.body.data.keys['1'].public_key).toBe(await publicKey('rsa'));
    // Creating it again answers the existing key.
    const again = await ok('POST', 'transit/keys/by-id', { type: 'managed_key', managed_key_name: 'ec' });
    expect(again.body.warnings).toEqual(['key by-id already existed']);
    expect(again.body.data.managed_key_name).toBe('rsa');
  });
});

describe('ECDSA P-256 signatures', () => {
  it('asn1 (default) and jws, verified with WebCrypto against the public key of the read', async () => {
    const key = await ecKey('ec');
    const asn1 = (await ok('POST', 'transit/sign/ec', { input })).body.data;
    expect(asn1).toEqual({ signature: expect.stringMatching(/^vault:v1:[A-Za-z0-9+/]+=*$/), key_version: 1 });
    const p1363 = derToP1363(sigBytes(asn1.signature), 32);
    expect(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, p1363, utf8('message to sign'))).toBe(true);
    expect(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, p1363, utf8('another message'))).toBe(false);

    const jws = (await ok('POST', 'transit/sign/ec', { input, marshaling_algorithm: 'jws' })).body.data.signature as string;
    expect(jws).toMatch(/^vault:v1:[A-Za-z0-9_-]+$/);
    const raw = sigBytes(jws, true);
    expect(raw.length).toBe(64);
    expect(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, raw, utf8('message to sign'))).toBe(true);
    // Through the API too, each with its own marshaling.
    expect((await ok('POST', 'transit/verify/ec', { input, signature: asn1.signature })).body.data).toEqual({ valid: true });
    expect((await ok('POST', 'transit/verify/ec', { input, signature: jws, marshaling_algorithm: 'jws' })).body.data).toEqual({ valid: true });
    expect((await ok('POST', 'transit/verify/ec', { input: b64('other'), signature: jws, marshaling_algorithm: 'jws' })).body.data).toEqual({ valid: false });
  });

  it('hash in the path (sha2-384), and prehashed input', async () => {
    const key = await ecKey('ec');
    const sig = (await ok('POST', 'transit/sign/ec/sha2-384', { input })).body.data.signature;
    expect(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-384' }, key, derToP1363(sigBytes(sig), 32), utf8('message to sign'))).toBe(true);
    expect((await ok('POST', 'transit/verify/ec/sha2-384', { input, signature: sig })).body.data.valid).toBe(true);
    expect((await ok('POST', 'transit/verify/ec/sha2-256', { input, signature: sig })).body.data.valid).toBe(false);

    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', utf8('message to sign')));
    const pre = (await ok('POST', 'transit/sign/ec', { input: text(digest), prehashed: true })).body.data.signature;
    expect(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, key, derToP1363(sigBytes(pre), 32), utf8('message to sign'))).toBe(true);
    expect((await ok('POST', 'transit/verify/ec', { input: text(digest), prehashed: true, signature: pre })).body.data.valid).toBe(true);
  });

  it('batches, with references', async () => {
    const signed = (await ok('POST', 'transit/sign/ec', { batch_input: [{ input, reference: 'a' }, { input: b64('two'), reference: 'b' }] })).body.data.batch_results;
    expect(signed).toEqual([
      { signature: expect.stringMatching(/^vault:v1:/), key_version: 1, reference: 'a' },
      { signature: expect.stringMatching(/^vault:v1:/), key_version: 1, reference: 'b' },
    ]);
    const checked = await ok('POST', 'transit/verify/ec', {
      batch_input: [
        { input, signature: signed[0].signature, reference: 'a' },
        { input, signature: signed[1].signature, reference: 'b' },
      ],
    });
    expect(checked.body.data.batch_results).toEqual([
      { valid: true, reference: 'a' },
      { valid: false, reference: 'b' },
    ]);
  });
});

describe('RSA signatures', () => {
  it('PSS by default (a salt as long as the hash, what cloud KMS sign with), verified with WebCrypto', async () => {
    const sig = (await ok('POST', 'transit/sign/rsa', { input })).body.data.signature;
    const raw = sigBytes(sig);
    expect(raw.length).toBe(256);
    expect(await crypto.subtle.verify({ name: 'RSA-PSS', saltLength: 32 }, await rsaKey('rsa', 'RSA-PSS'), raw, utf8('message to sign'))).toBe(true);
    // The largest salt (256 - 32 - 2 bytes) when asked for; both verify with the default salt_length.
    const largest = (await ok('POST', 'transit/sign/rsa', { input, salt_length: 222 })).body.data.signature;
    expect(await crypto.subtle.verify({ name: 'RSA-PSS', saltLength: 222 }, await rsaKey('rsa', 'RSA-PSS'), sigBytes(largest), utf8('message to sign'))).toBe(true);
    expect((await ok('POST', 'transit/verify/rsa', { input, signature: largest })).body.data.valid).toBe(true);
    expect((await ok('POST', 'transit/verify/rsa', { input, signature: sig })).body.data.valid).toBe(true);
    expect((await ok('POST', 'transit/verify/rsa', { input: b64('x'), signature: sig })).body.data.valid).toBe(false);
  });

  it('PSS with salt_length=hash and sha2-512', async () => {
    const sig = (await ok('POST', 'transit/sign/rsa/sha2-512', { input, signature_algorithm: 'pss', salt_length: 'hash' })).body.data.signature;
    expect(await crypto.subtle.verify({ name: 'RSA-PSS', saltLength: 64 }, await rsaKey('rsa', 'RSA-PSS', 'SHA-512'), sigBytes(sig), utf8('message to sign'))).toBe(true);
    expect((await ok('POST', 'transit/verify/rsa/sha2-512', { input, signature: sig, salt_length: 'hash' })).body.data.valid).toBe(true);
  });

  it('PKCS#1 v1.5, verified with WebCrypto; a PSS verify of it fails', async () => {
    const sig = (await ok('POST', 'transit/sign/rsa', { input, signature_algorithm: 'pkcs1v15' })).body.data.signature;
    expect(await crypto.subtle.verify('RSASSA-PKCS1-v1_5', await rsaKey('rsa', 'RSASSA-PKCS1-v1_5'), sigBytes(sig), utf8('message to sign'))).toBe(true);
    expect((await ok('POST', 'transit/verify/rsa', { input, signature: sig, signature_algorithm: 'pkcs1v15' })).body.data.valid).toBe(true);
    expect((await ok('POST', 'transit/verify/rsa', { input, signature: sig })).body.data.valid).toBe(false);
  });
});

describe('RSA-OAEP encryption', () => {
  it('round trip, rewrap and datakey', async () => {
    const plaintext = b64('attack at dawn');
    const enc = (await ok('POST', 'transit/encrypt/rsa', { plaintext })).body.data;
    expect(enc).toEqual({ ciphertext: expect.stringMatching(/^vault:v1:[A-Za-z0-9+/]+=*$/), key_version: 1 });
    expect(sigBytes(enc.ciphertext).length).toBe(256);
    expect((await ok('POST', 'transit/decrypt/rsa', { ciphertext: enc.ciphertext })).body.data).toEqual({ plaintext });
    const rewrapped = (await ok('POST', 'transit/rewrap/rsa', { ciphertext: enc.ciphertext })).body.data.ciphertext;
    expect(rewrapped).not.toBe(enc.ciphertext);
    expect((await ok('POST', 'transit/decrypt/rsa', { ciphertext: rewrapped })).body.data.plaintext).toBe(plaintext);
    const dk = (await ok('POST', 'transit/datakey/plaintext/rsa', {})).body.data;
    expect((await ok('POST', 'transit/decrypt/rsa', { ciphertext: dk.ciphertext })).body.data.plaintext).toBe(dk.plaintext);
  });

  it('decrypts what WebCrypto encrypts with RSA-OAEP (SHA-1) under the public key of the read', async () => {
    const key = await crypto.subtle.importKey('spki', der(await publicKey('rsa')), { name: 'RSA-OAEP', hash: 'SHA-1' }, false, ['encrypt']);
    const local = new Uint8Array(await crypto.subtle.encrypt({ name: 'RSA-OAEP' }, key, utf8('made outside')));
    const r = await ok('POST', 'transit/decrypt/rsa', { ciphertext: `vault:v1:${text(local)}` });
    expect(r.body.data.plaintext).toBe(b64('made outside'));
    // Tampered: the HSM refuses it.
    local[10] ^= 1;
    const bad = await call('POST', 'transit/decrypt/rsa', { ciphertext: `vault:v1:${text(local)}` });
    expect(bad.status).toBe(400);
  });

  it('batches', async () => {
    const enc = (await ok('POST', 'transit/encrypt/rsa', { batch_input: [{ plaintext: b64('1') }, { plaintext: b64('2') }] })).body.data.batch_results;
    const dec = (await ok('POST', 'transit/decrypt/rsa', { batch_input: enc.map((e: { ciphertext: string }) => ({ ciphertext: e.ciphertext })) })).body.data.batch_results;
    expect(dec.map((d: { plaintext: string }) => d.plaintext)).toEqual([b64('1'), b64('2')]);
  });

  it('refuses pkcs1v15 padding, associated data, an EC key, and a plaintext too long for OAEP', async () => {
    await refused('POST', 'transit/encrypt/rsa', { plaintext: b64('x'), padding_scheme: 'pkcs1v15' }, 'padding_scheme "pkcs1v15" is not supported for keys of type managed_key: they use oaep');
    await refused('POST', 'transit/encrypt/rsa', { plaintext: b64('x'), associated_data: b64('ad') }, 'associated_data is not supported for keys of type managed_key');
    await refused('POST', 'transit/encrypt/ec', { plaintext: b64('x') }, 'message encryption not supported for a managed_key key on an ECDSA managed key: only RSA managed keys encrypt');
    await refused('POST', 'transit/encrypt/rsa', { plaintext: text(new Uint8Array(215)) }, 'failed to RSA encrypt the plaintext: message too long for RSA key size');
  });
});

describe('rotation', () => {
  it('over the same managed key: a fresh HSM key (allow_replace_key); old signatures verify, old versions no longer sign or decrypt', async () => {
    await ok('POST', 'transit/keys/rot', { type: 'managed_key', managed_key_name: 'rsa-replace' });
    const v1sig = (await ok('POST', 'transit/sign/rot', { input })).body.data.signature;
    const v1ct = (await ok('POST', 'transit/encrypt/rot', { plaintext: b64('v1') })).body.data.ciphertext;
    const r = await ok('POST', 'transit/keys/rot/rotate', {});
    expect(r.body.data.latest_version).toBe(2);
    const keys = r.body.data.keys;
    expect(keys['2']).toMatchObject({ name: 'rsa-replace', managed_key_id: ids['rsa-replace'] });
    expect(keys['2'].public_key).not.toBe(keys['1'].public_key);

    const v2sig = (await ok('POST', 'transit/sign/rot', { input })).body.data.signature;
    expect(v2sig).toMatch(/^vault:v2:/);
    expect(await crypto.subtle.verify({ name: 'RSA-PSS', saltLength: 32 }, await rsaKey('rot', 'RSA-PSS', 'SHA-256', 2), sigBytes(v2sig), utf8('message to sign'))).toBe(true);
    expect((await ok('POST', 'transit/verify/rot', { input, signature: v1sig })).body.data.valid).toBe(true);
    expect((await ok('POST', 'transit/verify/rot', { input, signature: v2sig })).body.data.valid).toBe(true);
    // v1's HSM key is gone: it can no longer sign (the check against its public key says so) or decrypt.
    await refused('POST', 'transit/sign/rot', { input, key_version: 1 }, 'managed key "rsa-replace" no longer holds the key of version 1 of this key (it was replaced): sign with a newer version');
    expect((await call('POST', 'transit/decrypt/rot', { ciphertext: v1ct })).status).toBe(400);
    const v2ct = (await ok('POST', 'transit/encrypt/rot', { plaintext: b64('v2') })).body.data.ciphertext;
    expect(v2ct).toMatch(/^vault:v2:/);
    expect((await ok('POST', 'transit/decrypt/rot', { ciphertext: v2ct })).body.data.plaintext).toBe(b64('v2'));

    // min_decryption_version applies to verification as to any transit key.
    await ok('POST', 'transit/keys/rot/config', { min_decryption_version: 2 });
    await refused('POST', 'transit/verify/rot', { input, signature: v1sig }, 'ciphertext or signature version is disallowed by policy (too old)');
  });

  it('onto another managed key (by name): the old one keeps signing with its version', async () => {
    await ok('POST', 'transit/keys/moving', { type: 'managed_key', managed_key_name: 'ec' });
    const v1sig = (await ok('POST', 'transit/sign/moving', { input })).body.data.signature;
    const r = await ok('POST', 'transit/keys/moving/rotate', { managed_key_name: 'ec-b' });
    expect(r.body.data).toMatchObject({ latest_version: 2, managed_key_name: 'ec-b', managed_key_id: ids['ec-b'] });
    expect(r.body.data.keys['1']).toMatchObject({ name: 'ec', managed_key_id: ids.ec });
    expect(r.body.data.keys['2']).toMatchObject({ name: 'ec-b', managed_key_id: ids['ec-b'] });
    const v2sig = (await ok('POST', 'transit/sign/moving', { input })).body.data.signature;
    expect(await crypto.subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, await ecKey('moving', 2), derToP1363(sigBytes(v2sig), 32), utf8('message to sign'))).toBe(true);
    const again = (await ok('POST', 'transit/sign/moving', { input, key_version: 1 })).body.data.signature;
    expect(again).toMatch(/^vault:v1:/);
    for (const signature of [v1sig, v2sig, again]) expect((await ok('POST', 'transit/verify/moving', { input, signature })).body.data.valid).toBe(true);
    // And back, by id: "ec" already holds its key, used as it is.
    const back = await ok('POST', 'transit/keys/moving/rotate', { managed_key_id: ids.ec });
    expect(back.body.data.keys['3'].public_key).toBe(back.body.data.keys['1'].public_key);
  });

  it('refuses a fresh key without allow_replace_key, and references that do not resolve', async () => {
    await refused('POST', 'transit/keys/ec/rotate', {}, 'managed key "ec": a key already exists in the backend, and allow_replace_key is false');
    await refused('POST', 'transit/keys/ec/rotate', { managed_key_name: 'ec', managed_key_id: ids.ec }, 'only one argument of managed_key_name or managed_key_id should be specified');
    await refused('POST', 'transit/keys/ec/rotate', { managed_key_name: 'other' }, /^managed key "other" is not allowed on this mount/);
    await refused('POST', 'transit/keys/ec/rotate', { managed_key_name: 'nope' }, 'no managed key found with name "nope"');
    expect((await ok('GET', 'transit/keys/ec')).body.data.latest_version).toBe(1);
    // Other key types take no managed key.
    await ok('POST', 'transit/keys/plain', {});
    await refused('POST', 'transit/keys/plain/rotate', { managed_key_name: 'ec' }, 'managed_key_name and managed_key_id apply only to keys of type managed_key');
  });
});

describe('refused creations leave nothing behind', () => {
  it.each([
    [{}, 'missing argument managed_key_name or managed_key_id'],
    [{ managed_key_name: null, managed_key_id: null }, 'missing argument managed_key_name or managed_key_id'],
    [{ managed_key_name: 'ec', managed_key_id: 'x' }, 'only one argument of managed_key_name or managed_key_id should be specified'],
    [{ managed_key_name: 'nope' }, 'no managed key found with name "nope"'],
    [{ managed_key_id: '00000000-0000-0000-0000-000000000000' }, 'no managed key found with uuid "00000000-0000-0000-0000-000000000000"'],
    [{ managed_key_name: 'other' }, /^managed key "other" is not allowed on this mount: add it to the mount's allowed_managed_keys/],
    [{ managed_key_name: 'absent' }, 'managed key "absent": no key was found in the pkcs11 backend, and allow_generate_key is false'],
    [{ managed_key_name: 'ec', derived: true }, 'key derivation not supported for keys of type managed_key'],
    [{ managed_key_name: 'ec', convergent_encryption: true }, 'convergent encryption requires derivation to be enabled'],
    [{ managed_key_name: 'ec', exportable: true }, "keys of type managed_key cannot be exported or backed up: their key never leaves the managed key's backend"],
    [{ managed_key_name: 'ec', allow_plaintext_backup: true }, "keys of type managed_key cannot be exported or backed up: their key never leaves the managed key's backend"],
    [{ managed_key_name: 'ec', auto_rotate_period: '24h' }, 'automatic rotation is not supported for keys of type managed_key: rotate them with keys/:name/rotate'],
    [{ managed_key_name: 'ec', key_size: 32 }, 'key_size is not valid for algorithm managed_key'],
  ])('%j', async (body, message) => {
    await refused('POST', 'transit/keys/refused', { type: 'managed_key', ...body }, message);
    expect((await call('GET', 'transit/keys/refused')).status).toBe(404);
  });

  it('a managed key named for another type, and managed_key made by encrypt (upsert) or import', async () => {
    await refused('POST', 'transit/keys/refused', { type: 'aes256-gcm96', managed_key_name: 'ec' }, 'managed_key_name and managed_key_id apply only to keys of type managed_key');
    const made = 'keys of type managed_key are created only with keys/:name and a managed_key_name or managed_key_id';
    await refused('POST', 'transit/encrypt/refused', { plaintext: b64('x'), type: 'managed_key' }, made);
    await refused('POST', 'transit/keys/refused/import', { type: 'managed_key', public_key: await publicKey('ec') }, made);
    expect((await call('GET', 'transit/keys/refused')).status).toBe(404);
  });
});

describe('what a managed_key key refuses', () => {
  it('export, backup, restore of a managed_key backup, HMAC, hash_algorithm=none and settings that do not apply', async () => {
    const noExport = "keys of type managed_key cannot be exported or backed up: their key never leaves the managed key's backend";
    for (const type of ['signing-key', 'encryption-key', 'hmac-key', 'public-key']) {
      const r = await call('GET', `transit/export/${type}/ec`);
      expect({ status: r.status, errors: r.body.errors }).toEqual({ status: 400, errors: [noExport] });
    }
    const backup = await call('GET', 'transit/backup/ec');
    expect({ status: backup.status, errors: backup.body.errors }).toEqual({ status: 400, errors: [noExport] });
    const doc = btoa(JSON.stringify({ policy: { name: 'restored', type: 10, latest_version: 1, min_decryption_version: 1, keys: {} } }));
    await refused('POST', 'transit/restore', { backup: doc }, 'restoring keys of type managed_key is not supported');
    await refused('POST', 'transit/hmac/ec', { input }, 'HMAC is not supported for keys of type managed_key');
    await refused('POST', 'transit/verify/ec', { input, hmac: 'vault:v1:AAAA' }, 'HMAC is not supported for keys of type managed_key');
    await refused('POST', 'transit/sign/rsa', { input, hash_algorithm: 'none', prehashed: true, signature_algorithm: 'pkcs1v15' }, 'hash_algorithm=none is not supported for keys of type managed_key');
    await refused('POST', 'transit/keys/ec/config', { exportable: true }, noExport);
    await refused('POST', 'transit/keys/ec/config', { allow_plaintext_backup: true }, noExport);
    await refused('POST', 'transit/keys/ec/config', { auto_rotate_period: '1h' }, 'automatic rotation is not supported for keys of type managed_key: rotate them with keys/:name/rotate');
    // What does apply is taken: deletion_allowed, and the settings that say "no".
    const cfg = await ok('POST', 'transit/keys/ec/config', { deletion_allowed: true, exportable: false, auto_rotate_period: 0 });
    expect(cfg.body.data).toMatchObject({ deletion_allowed: true, exportable: false, auto_rotate_period: 0, managed_key_name: 'ec' });
    await ok('POST', 'transit/keys/ec/config', { deletion_allowed: false });
  });

  it("the managed key's usages: a key that may only sign neither verifies nor encrypts", async () => {
    const r = await ok('POST', 'transit/keys/signer', { type: 'managed_key', managed_key_name: 'sign-only' });
    expect(r.body.data).toMatchObject({ supports_signing: true, supports_verification: false, supports_encryption: false, supports_decryption: false });
    const sig = (await ok('POST', 'transit/sign/signer', { input })).body.data.signature;
    // The same HSM key as "rsa": its signature verifies there.
    expect((await ok('POST', 'transit/verify/rsa', { input, signature: sig })).body.data.valid).toBe(true);
    await refused('POST', 'transit/verify/signer', { input, signature: sig }, 'managed key "sign-only" may not be used to verify: its usages are sign');
    await refused('POST', 'transit/encrypt/signer', { plaintext: b64('x') }, 'managed key "sign-only" may not be used to encrypt: its usages are sign');
    await refused('POST', 'transit/decrypt/signer', { ciphertext: `vault:v1:${text(new Uint8Array(256))}` }, 'managed key "sign-only" may not be used to decrypt: its usages are sign');
    const batch = await ok('POST', 'transit/verify/signer', { batch_input: [{ input, signature: sig }] });
    expect(batch.body.data.batch_results).toEqual([{ error: 'managed key "sign-only" may not be used to verify: its usages are sign', valid: false, reference: '' }]);
  });

  it("a mount that no longer lists the managed key, and a managed key deleted and made again under the same name", async () => {
    await ok('POST', 'transit/keys/gone', { type: 'managed_key', managed_key_name: 'ec-b' });
    await allow(ALLOWED.filter((n) => n !== 'ec-b'));
    const notAllowed = /^managed key "ec-b" is not allowed on this mount/;
    await refused('POST', 'transit/sign/gone', { input }, notAllowed);
    await refused('POST', 'transit/verify/gone', { input, signature: 'vault:v1:AAAA' }, notAllowed);
    // The read still works: the UUID without a name, and nothing it can do.
    const read = (await ok('GET', 'transit/keys/gone')).body.data;
    expect(read).toMatchObject({ managed_key_name: '', managed_key_id: ids['ec-b'], supports_signing: false, supports_verification: false });
    expect(read.keys['1']).toMatchObject({ name: '', managed_key_id: ids['ec-b'] });

    // Deleted, and a new managed key of the same name: the transit key keeps naming the old UUID.
    await ok('DELETE', 'sys/managed-keys/pkcs11/ec-b');
    const fresh = await pkcs11Key('ec-b', { key_label: label('ec-b'), mechanism: '0x1041' });
    expect(fresh).not.toBe(ids['ec-b']);
    await allow(ALLOWED);
    await refused('POST', 'transit/sign/gone', { input }, `no managed key found with uuid "${ids['ec-b']}"`);
    await ok('POST', 'transit/keys/gone/rotate', { managed_key_name: 'ec-b' });
    expect((await ok('POST', 'transit/sign/gone', { input })).body.data.key_version).toBe(2);
  });
  it('a managed key changed after use applies at once: the mount object drops its cached entry', async () => {
    await ok('POST', 'transit/keys/cached', { type: 'managed_key', managed_key_name: 'ec' });
    await ok('POST', 'transit/sign/cached', { input });
    await ok('POST', 'sys/managed-keys/pkcs11/ec', { usages: 'verify' });
    await refused('POST', 'transit/sign/cached', { input }, 'managed key "ec" may not be used to sign: its usages are verify');
    await ok('POST', 'sys/managed-keys/pkcs11/ec', { usages: 'sign,verify' });
    await ok('POST', 'transit/sign/cached', { input });
  });
});
