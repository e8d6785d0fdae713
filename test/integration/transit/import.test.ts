// Transit BYOK through the Worker (reference §6.11): the wrapping key, keys/:name/import of key
// material wrapped independently by the oracle (Node's OpenSSL) for every importable type, proof
// that the imported key is the one in use, public-key import then import_version, rotation rules,
// every refusal (with nothing written), and byok-export checked by the oracle's unwrap.
import { createPublicKey } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { caller, initCluster, type Cluster } from '../../helpers/api';
import { oracle, type Keygen } from '../../helpers/transit-oracle';

let c: Cluster;
const { call, ok } = caller(() => c.root);
let wrappingPem = '';


const input = btoa('bring your own key');
const keygen = (type: string, extra: Record<string, unknown> = {}) => oracle<Keygen>('keygen', { type, ...extra });
const material = (k: Keygen): string => (k.pkcs8_der ?? k.key) as string;

async function wrap(materialB64: string, hash_function = 'SHA256', pem = wrappingPem): Promise<string> {
  return (await oracle<{ ciphertext: string }>('wrap', { wrapping_public_pem: pem, material: materialB64, hash_function })).ciphertext;
}

/** Fails with the key's state if anything of `name` was written. */
async function expectNoKey(name: string): Promise<void> {
  expect((await call('GET', `transit/keys/${name}`)).status).toBe(404);
  const list = await call('GET', 'transit/keys?list=true');
  expect(list.status === 404 ? [] : list.body.data.keys).not.toContain(name);
}

async function expectRefused(method: string, path: string, body: unknown, message: string | RegExp): Promise<void> {
  const r = await call(method, path, body);
  expect(r.status).toBe(400);
  expect(r.body.errors).toHaveLength(1);
  if (typeof message === 'string') expect(r.body.errors[0]).toBe(message);
  else expect(r.body.errors[0]).toMatch(message);
}

/** Proves key `name` holds the oracle's key `k`: each side's output checked by the other. */
async function proveSameKey(name: string, type: string, k: Keygen): Promise<void> {
  if (type === 'hmac') {
    const mine = (await ok('POST', `transit/hmac/${name}/sha2-512`, { input })).body.data.hmac;
    const version = Number(/^vault:v(\d+):/.exec(mine)?.[1]);
    expect(await oracle('hmac', { key: k.key, input, algorithm: 'sha2-512', version })).toEqual({ hmac: mine });
    return;
  }
  if (!type.startsWith('ecdsa-') && type !== 'ed25519') {
    const mine = (await ok('POST', `transit/encrypt/${name}`, { plaintext: input })).body.data.ciphertext;
    const keyFields = type.startsWith('rsa-') ? { private_key: k.private_pem, public_key: k.public_pem } : { key: k.key };
    expect(await oracle('decrypt', { type, ciphertext: mine, private_key: keyFields.private_key, key: keyFields.key })).toEqual({ plaintext: input });
    const theirs = (await oracle<{ ciphertext: string }>('encrypt', { type, plaintext: input, public_key: keyFields.public_key, key: keyFields.key })).ciphertext;
    expect((await ok('POST', `transit/decrypt/${name}`, { ciphertext: theirs })).body.data.plaintext).toBe(input);
  }
  if (type.startsWith('aes') || type.startsWith('chacha')) return;
  const { signature } = (await ok('POST', `transit/sign/${name}`, { input })).body.data;
  const pub = type === 'ed25519' ? { ed25519_public: k.ed25519_public } : { public_pem: k.public_pem };
  expect(await oracle('verify', { type, input, signature, ...pub })).toEqual({ valid: true });
  const theirs = await oracle<{ signature: string }>('sign', { type, input, private_pem: k.private_pem });
  expect((await ok('POST', `transit/verify/${name}`, { input, signature: theirs.signature })).body.data.valid).toBe(true);
}

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/transit', { type: 'transit' });
  await ok('POST', 'sys/mounts/transit2', { type: 'transit' });
  wrappingPem = (await ok('GET', 'transit/wrapping_key')).body.data.public_key;
});

describe('wrapping_key', () => {
  it('is an RSA-4096 PKIX PEM with a trailing newline, the same on every read', async () => {
    expect(wrappingPem).toMatch(/^-----BEGIN PUBLIC KEY-----\n([A-Za-z0-9+/=]{64}\n)+[A-Za-z0-9+/=]{1,64}\n-----END PUBLIC KEY-----\n$/);
    const key = createPublicKey(wrappingPem);
    expect([key.asymmetricKeyType, key.asymmetricKeyDetails?.modulusLength]).toEqual(['rsa', 4096]);
    expect((await ok('GET', 'transit/wrapping_key')).body.data).toEqual({ public_key: wrappingPem });
  });

  it('is per mount', async () => {
    const other = (await ok('GET', 'transit2/wrapping_key')).body.data.public_key;
    expect(other).not.toBe(wrappingPem);
    expect((await ok('GET', 'transit2/wrapping_key')).body.data.public_key).toBe(other);
  });
});

describe('import of every importable type, wrapped by the oracle', () => {
  it.each(['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305', 'hmac', 'ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'ed25519', 'rsa-2048', 'rsa-3072', 'rsa-4096'])(
    '%s',
    async (type) => {
      const k = await keygen(type, type === 'hmac' ? { key_size: 100 } : {});
      const name = `byok-${type}`;
      expect((await call('POST', `transit/keys/${name}/import`, { type, ciphertext: await wrap(material(k)) })).status).toBe(204);
      const read = (await ok('GET', `transit/keys/${name}`)).body.data;
      expect(read).toMatchObject({ type, imported_key: true, imported_key_allow_rotation: false, latest_version: 1, exportable: false });
      if (type === 'hmac') expect(read.key_size).toBe(100);
      await proveSameKey(name, type, k);
    },
  );

  it.each(['SHA1', 'SHA224', 'SHA256', 'SHA384', 'SHA512', 'sha384'])('hash_function %s', async (hash) => {
    const k = await keygen('aes256-gcm96');
    const name = `hash-${hash}`;
    await ok('POST', `transit/keys/${name}/import`, { ciphertext: await wrap(material(k), hash.toUpperCase()), hash_function: hash });
    await proveSameKey(name, 'aes256-gcm96', k);
  });

  it('keeps the creation options: derived, exportable, allow_plaintext_backup, auto_rotate_period', async () => {
    const k = await keygen('chacha20-poly1305');
    await ok('POST', 'transit/keys/opts/import', {
      type: 'chacha20-poly1305',
      ciphertext: await wrap(material(k)),
      derived: true,
      exportable: true,
      allow_plaintext_backup: true,
      allow_rotation: true,
      auto_rotate_period: '2h',
    });
    const read = (await ok('GET', 'transit/keys/opts')).body.data;
    expect(read).toMatchObject({ derived: true, exportable: true, allow_plaintext_backup: true, auto_rotate_period: 7200, imported_key_allow_rotation: true, kdf: 'hkdf_sha256' });
    const context = btoa('tenant-7');
    const mine = (await ok('POST', 'transit/encrypt/opts', { plaintext: input, context })).body.data.ciphertext;
    expect(await oracle('decrypt', { type: 'chacha20-poly1305', key: k.key, derived: true, context, ciphertext: mine })).toEqual({ plaintext: input });
  });

  it('derived ed25519: the imported key is the derivation input', async () => {
    const k = await keygen('ed25519');
    await ok('POST', 'transit/keys/ed-derived/import', { type: 'ed25519', ciphertext: await wrap(material(k)), derived: true });
    const context = btoa('ctx');
    const signed = (await ok('POST', 'transit/sign/ed-derived', { input, context })).body.data;
    const theirs = await oracle<{ signature: string; public_key: string }>('sign', { type: 'ed25519', ed25519_private64: k.ed25519_private64, input, derived: true, context });
    // Ed25519 is deterministic: same derived key, same signature.
    expect(signed.signature).toBe(theirs.signature);
  });
});

describe('public key import, then the private part', () => {
  it.each(['ecdsa-p384', 'ed25519', 'rsa-2048'])('%s: verify-only until import_version adds the private key', async (type) => {
    const k = await keygen(type);
    const name = `half-${type}`;
    expect((await call('POST', `transit/keys/${name}/import`, { type, public_key: k.public_pem })).status).toBe(204);
    const theirs = await oracle<{ signature: string }>('sign', { type, input, private_pem: k.private_pem });
    expect((await ok('POST', `transit/verify/${name}`, { input, signature: theirs.signature })).body.data.valid).toBe(true);
    expect((await call('POST', `transit/sign/${name}`, { input })).status).toBe(400);
    await expectRefused('POST', `transit/keys/${name}/import_version`, { public_key: k.public_pem, version: 1 }, 'cannot add a public key to a key version that already has a public key set');

    // A private key of a different pair does not fill the version.
    const stranger = await keygen(type);
    await expectRefused('POST', `transit/keys/${name}/import_version`, { ciphertext: await wrap(material(stranger)), version: 1 }, 'cannot import key, key pair does not match');

    expect((await call('POST', `transit/keys/${name}/import_version`, { ciphertext: await wrap(material(k)), version: 1 })).status).toBe(204);
    expect((await ok('GET', `transit/keys/${name}`)).body.data.latest_version).toBe(1);
    await proveSameKey(name, type, k);
    await expectRefused('POST', `transit/keys/${name}/import_version`, { ciphertext: await wrap(material(k)), version: 1 }, 'private key imported, key version cannot be updated');
  });

  it('without a version, the private half fills a public-only latest version; another pair becomes a new version', async () => {
    const [k1, k2] = await Promise.all([keygen('ecdsa-p256'), keygen('ecdsa-p256')]);
    await ok('POST', 'transit/keys/fill/import', { type: 'ecdsa-p256', public_key: k1.public_pem, exportable: true });
    await ok('POST', 'transit/keys/fill/import_version', { ciphertext: await wrap(material(k1)) });
    expect((await ok('GET', 'transit/keys/fill')).body.data.latest_version).toBe(1);
    await ok('POST', 'transit/keys/fill/import_version', { public_key: k2.public_pem });
    const stranger = await keygen('ecdsa-p256');
    await ok('POST', 'transit/keys/fill/import_version', { ciphertext: await wrap(material(stranger)) });
    const keys = (await ok('GET', 'transit/export/signing-key/fill')).body.data.keys;
    expect(Object.keys(keys)).toEqual(['1', '2', '3']);
    expect(keys['2']).toBe('');
  });

  it('refuses a public-only import of a derived ed25519 key', async () => {
    const k = await keygen('ed25519');
    await expectRefused(
      'POST',
      'transit/keys/ed-pub-derived/import',
      { type: 'ed25519', public_key: k.public_pem, derived: true },
      'error importing key: unable to import only public key for derived Ed25519 key: imported key should not be an Ed25519 key pair but is instead an HKDF key',
    );
    await expectNoKey('ed-pub-derived');
  });
});

describe('import_version of symmetric keys and rotation rules', () => {
  it('adds the next version; every version stays usable', async () => {
    const [k1, k2] = await Promise.all([keygen('aes128-gcm96'), keygen('aes128-gcm96')]);
    await ok('POST', 'transit/keys/versions/import', { type: 'aes128-gcm96', ciphertext: await wrap(material(k1)) });
    const old = (await ok('POST', 'transit/encrypt/versions', { plaintext: input })).body.data.ciphertext;
    expect((await call('POST', 'transit/keys/versions/import_version', { ciphertext: await wrap(material(k2), 'SHA512'), hash_function: 'SHA512' })).status).toBe(204);
    expect((await ok('GET', 'transit/keys/versions')).body.data.latest_version).toBe(2);
    const fresh = (await ok('POST', 'transit/encrypt/versions', { plaintext: input })).body.data.ciphertext;
    expect(fresh.startsWith('vault:v2:')).toBe(true);
    expect(await oracle('decrypt', { type: 'aes128-gcm96', key: k2.key, ciphertext: fresh })).toEqual({ plaintext: input });
    expect((await ok('POST', 'transit/decrypt/versions', { ciphertext: old })).body.data.plaintext).toBe(input);
    await expectRefused('POST', 'transit/keys/versions/import_version', { ciphertext: await wrap(material(k2)), version: 1 }, 'provided type does not support importing key versions');
    await expectRefused('POST', 'transit/keys/versions/import_version', { ciphertext: await wrap(material(k2)), version: 7 }, 'no such key version');
  });

  it('hmac import_version sets the new key size', async () => {
    const [k1, k2] = await Promise.all([keygen('hmac', { key_size: 32 }), keygen('hmac', { key_size: 64 })]);
    await ok('POST', 'transit/keys/hmac-v/import', { type: 'hmac', ciphertext: await wrap(material(k1)) });
    await ok('POST', 'transit/keys/hmac-v/import_version', { ciphertext: await wrap(material(k2)) });
    expect((await ok('GET', 'transit/keys/hmac-v')).body.data).toMatchObject({ latest_version: 2, key_size: 64 });
    await proveSameKey('hmac-v', 'hmac', k2);
  });

  it('an imported key without allow_rotation cannot rotate; with it, rotation ends import_version', async () => {
    const k = await keygen('aes256-gcm96');
    await ok('POST', 'transit/keys/fixed/import', { ciphertext: await wrap(material(k)) });
    await expectRefused('POST', 'transit/keys/fixed/rotate', {}, 'imported key fixed does not allow rotation within Vault');
    await ok('POST', 'transit/keys/rotating/import', { ciphertext: await wrap(material(k)), allow_rotation: true });
    await ok('POST', 'transit/keys/rotating/import_version', { ciphertext: await wrap(material(k)) });
    await ok('POST', 'transit/keys/rotating/rotate');
    expect((await ok('GET', 'transit/keys/rotating')).body.data.latest_version).toBe(3);
    await expectRefused('POST', 'transit/keys/rotating/import_version', { ciphertext: await wrap(material(k)) }, 'the import_version endpoint can only be used with an imported key');
    expect((await ok('GET', 'transit/keys/rotating')).body.data.latest_version).toBe(3);
  });

  it('refuses import_version on generated keys and unknown keys', async () => {
    await ok('POST', 'transit/keys/generated', {});
    const k = await keygen('aes256-gcm96');
    await expectRefused('POST', 'transit/keys/generated/import_version', { ciphertext: await wrap(material(k)) }, 'the import_version endpoint can only be used with an imported key');
    expect((await ok('GET', 'transit/keys/generated')).body.data.latest_version).toBe(1);
    await expectRefused('POST', 'transit/keys/ghost/import_version', { ciphertext: await wrap(material(k)) }, 'no key found with name ghost; to import a new key, use the import/ endpoint');
    await expectNoKey('ghost');
  });
});

describe('refused imports write nothing', () => {
  let aes: Keygen;
  let ec: Keygen;
  let rsa: Keygen;
  beforeAll(async () => {
    [aes, ec, rsa] = await Promise.all([keygen('aes256-gcm96'), keygen('ecdsa-p256'), keygen('rsa-2048')]);
    await ok('POST', 'transit/keys/taken', {});
  });

  const cases: [string, () => Promise<Record<string, unknown>>, string | RegExp][] = [
    ['short ciphertext', async () => ({ ciphertext: btoa('x'.repeat(512)) }), 'provided ciphertext is too short'],
    ['ciphertext not base64', async () => ({ ciphertext: '%%%' }), 'failed to base64-decode ciphertext'],
    ['wrong OAEP hash', async () => ({ ciphertext: await wrap(material(aes), 'SHA1') }), 'crypto/rsa: decryption error'],
    [
      'tampered key wrap',
      async () => {
        const blob = Uint8Array.from(atob(await wrap(material(aes))), (ch) => ch.charCodeAt(0));
        blob[blob.length - 1] ^= 1;
        return { ciphertext: btoa(String.fromCharCode(...blob)) };
      },
      'kwp: unwrap failed integrity check',
    ],
    ['wrong size', async () => ({ type: 'aes128-gcm96', ciphertext: await wrap(material(aes)) }), 'error importing key: invalid key size 32 bytes for key type aes128-gcm96'],
    ['HMAC key too long', async () => ({ type: 'hmac', ciphertext: await wrap(btoa('k'.repeat(600))) }), 'error importing key: invalid key size 600 bytes for key type hmac'],
    ['PKCS#8 as a symmetric key', async () => ({ type: 'chacha20-poly1305', ciphertext: await wrap(material(ec)) }), /^error importing key: invalid key size \d+ bytes for key type chacha20-poly1305$/],
    ['RSA material for an ECDSA key', async () => ({ type: 'ecdsa-p256', ciphertext: await wrap(material(rsa)) }), /^error importing key: /],
    ['EC material for an RSA key', async () => ({ type: 'rsa-2048', ciphertext: await wrap(material(ec)) }), /^error importing key: /],
    ['raw bytes for an asymmetric key', async () => ({ type: 'ed25519', ciphertext: await wrap(material(aes)) }), /^error importing key: error parsing asymmetric key/],
    ['RSA public key for an ECDSA key', async () => ({ type: 'ecdsa-p256', public_key: rsa.public_pem }), /^error importing key: /],
    ['public key not PEM', async () => ({ type: 'ecdsa-p256', public_key: 'not a key' }), 'error importing key: error parsing public key: not in PEM format'],
    ['both ciphertext and public_key', async () => ({ type: 'ecdsa-p256', ciphertext: await wrap(material(ec)), public_key: ec.public_pem }), 'only one of the following fields, ciphertext and public_key, can be set'],
    ['neither ciphertext nor public_key', async () => ({ type: 'aes256-gcm96' }), 'one of the following fields, ciphertext xor public_key, has to be set'],
    ['public_key for a symmetric type', async () => ({ type: 'aes256-gcm96', public_key: ec.public_pem }), 'provided type does not support public_key import'],
    ['unknown hash function', async () => ({ ciphertext: await wrap(material(aes)), hash_function: 'MD5' }), 'unknown hash function: MD5'],
    ['unknown type', async () => ({ type: 'des3', ciphertext: await wrap(material(aes)) }), 'unknown key type: des3'],
    ['convergent encryption', async () => ({ ciphertext: await wrap(material(aes)), derived: true, convergent_encryption: true }), 'import cannot be used on keys with convergent encryption enabled'],
    ['auto rotation without allow_rotation', async () => ({ ciphertext: await wrap(material(aes)), auto_rotate_period: '1h' }), 'allow_rotation must be set to true if auto-rotation is enabled'],
    ['auto rotation under an hour', async () => ({ ciphertext: await wrap(material(aes)), auto_rotate_period: '10m', allow_rotation: true }), 'auto rotate period must be 0 to disable or at least an hour'],
    ['derivation for ECDSA', async () => ({ type: 'ecdsa-p256', ciphertext: await wrap(material(ec)), derived: true }), 'key derivation not supported for keys of type ecdsa-p256'],
  ];

  it.each(cases)('%s', async (_label, body, message) => {
    await expectRefused('POST', 'transit/keys/refused/import', await body(), message);
    await expectNoKey('refused');
  });

  it('refuses an existing name and leaves that key alone', async () => {
    const before = (await ok('GET', 'transit/keys/taken')).body.data;
    await expectRefused(
      'POST',
      'transit/keys/taken/import',
      { ciphertext: await wrap(material(aes)) },
      'the import path cannot be used with an existing key; use import-version to rotate an existing imported key',
    );
    expect((await ok('GET', 'transit/keys/taken')).body.data).toEqual(before);
  });
});

describe('byok-export', () => {
  let dest: Keygen;
  beforeAll(async () => {
    dest = await keygen('rsa-2048');
    await ok('POST', 'transit/keys/dest/import', { type: 'rsa-2048', public_key: dest.public_pem });
  });

  const unwrapped = async (ciphertext: string, hash_function = 'SHA256') =>
    (await oracle<{ material: string }>('unwrap', { wrapping_private_pem: dest.private_pem, ciphertext, hash_function })).material;

  it.each(['aes256-gcm96', 'chacha20-poly1305', 'hmac'])('%s: the oracle unwraps the raw key, for every version', async (type) => {
    const [k1, k2] = await Promise.all([keygen(type), keygen(type)]);
    const name = `src-${type}`;
    await ok('POST', `transit/keys/${name}/import`, { type, ciphertext: await wrap(material(k1)), exportable: true });
    await ok('POST', `transit/keys/${name}/import_version`, { ciphertext: await wrap(material(k2)) });
    const r = await ok('GET', `transit/byok-export/dest/${name}`);
    expect(r.body.data.name).toBe(name);
    expect(r.body.data.type).toBe(type);
    const keys = r.body.data.keys as Record<string, string>;
    expect(Object.keys(keys)).toEqual(['1', '2']);
    expect(await unwrapped(keys['1'])).toBe(k1.key);
    expect(await unwrapped(keys['2'])).toBe(k2.key);
    const latest = (await ok('GET', `transit/byok-export/dest/${name}/latest?hash=SHA384`)).body.data.keys;
    expect(Object.keys(latest)).toEqual(['2']);
    expect(await unwrapped(latest['2'], 'SHA384')).toBe(k2.key);
  });

  it.each(['ecdsa-p521', 'ed25519', 'rsa-3072'])('%s: the unwrapped PKCS#8 is the same key pair', async (type) => {
    await ok('POST', `transit/keys/src-${type}`, { type, exportable: true });
    const pkcs8 = await unwrapped((await ok('GET', `transit/byok-export/dest/src-${type}/1`)).body.data.keys['1']);
    const pem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)?.join('\n')}\n-----END PRIVATE KEY-----\n`;
    const { signature } = (await ok('POST', `transit/sign/src-${type}`, { input })).body.data;
    const pub = createPublicKey(pem).export({ type: 'spki', format: 'pem' }) as string;
    expect(await oracle('verify', { type, input, signature, public_pem: pub })).toEqual({ valid: true });
  });

  it('moves a key to another mount: export wrapped for its wrapping key, then import there', async () => {
    await ok('POST', 'transit/keys/moving', { type: 'ecdsa-p256', exportable: true });
    const target = (await ok('GET', 'transit2/wrapping_key')).body.data.public_key;
    await ok('POST', 'transit/keys/transit2-wrapping/import', { type: 'rsa-4096', public_key: target });
    const wrapped = (await ok('GET', 'transit/byok-export/transit2-wrapping/moving')).body.data.keys['1'];
    await ok('POST', 'transit2/keys/moved/import', { type: 'ecdsa-p256', ciphertext: wrapped });
    const original = (await ok('GET', 'transit/keys/moving')).body.data.keys['1'].public_key;
    expect((await ok('GET', 'transit2/keys/moved')).body.data.keys['1'].public_key).toBe(original);
    const { signature } = (await ok('POST', 'transit2/sign/moved', { input })).body.data;
    expect((await ok('POST', 'transit/verify/moving', { input, signature })).body.data.valid).toBe(true);
  });

  it.each([
    ['dest/absent', 'no such source key for export'],
    ['absent/src-hmac', 'no such destination key to export to'],
    ['dest/generated', 'key is not exportable'],
    ['generated/src-hmac', 'message signing not supported for key type aes256-gcm96'],
    ['src-ed25519/src-hmac', 'unsupported key type in use; must be a rsa key'],
    ['dest/src-hmac?hash=MD5', 'unknown hash function: MD5'],
    ['dest/src-hmac/9', 'version does not exist or cannot be found'],
    ['dest/src-hmac/x', 'invalid key version'],
  ])('refuses %s', async (path, message) => {
    await expectRefused('GET', `transit/byok-export/${path}`, undefined, message);
  });
});
