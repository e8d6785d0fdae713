// Transit key management through the Worker: create (every type and creation field), read's
// shape, list, delete, config rules (one-way flags, min versions), rotate, trim, config/keys,
// and every refused input leaving nothing behind.
import { beforeAll, describe, expect, it } from 'vitest';
import { caller, initCluster, type Cluster } from '../../helpers/api';
import { GO_TIME } from '../../helpers/kv2';

let c: Cluster;
const { call, ok } = caller(() => c.root);

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/transit', { type: 'transit' });
});

const PEM = /^-----BEGIN PUBLIC KEY-----\n(?:[A-Za-z0-9+/=]{1,64}\n)+-----END PUBLIC KEY-----\n$/;

describe('creating and reading keys', () => {
  it('creates an aes256-gcm96 key by default and reads it in Vault\'s shape', async () => {
    const before = Math.floor(Date.now() / 1000);
    const created = await ok('POST', 'transit/keys/default');
    expect(created.status).toBe(200);
    const r = await ok('GET', 'transit/keys/default');
    expect(r.body.data).toEqual({
      name: 'default',
      type: 'aes256-gcm96',
      derived: false,
      deletion_allowed: false,
      exportable: false,
      allow_plaintext_backup: false,
      latest_version: 1,
      min_available_version: 0,
      min_decryption_version: 1,
      min_encryption_version: 0,
      supports_encryption: true,
      supports_decryption: true,
      supports_derivation: true,
      supports_signing: false,
      auto_rotate_period: 0,
      imported_key: false,
      keys: { '1': expect.any(Number) },
    });
    expect(r.body.data.keys['1']).toBeGreaterThanOrEqual(before);
    expect(created.body.data).toEqual(r.body.data);
  });

  it('creating an existing key changes nothing and says so', async () => {
    await ok('POST', 'transit/keys/twice', { type: 'aes128-gcm96' });
    const again = await ok('POST', 'transit/keys/twice', { type: 'ed25519', exportable: true });
    expect(again.body.warnings).toEqual(['key twice already existed']);
    expect(again.body.data).toMatchObject({ type: 'aes128-gcm96', exportable: false });
  });

  it.each([
    ['aes128-gcm96', { supports_encryption: true, supports_signing: false, supports_derivation: true }],
    ['chacha20-poly1305', { supports_encryption: true, supports_signing: false, supports_derivation: true }],
    ['hmac', { supports_encryption: false, supports_signing: false, supports_derivation: false, key_size: 32 }],
  ])('creates %s keys', async (type, flags) => {
    const r = await ok('POST', `transit/keys/t-${type}`, { type });
    expect(r.body.data).toMatchObject({ type, ...flags });
    if (type === 'hmac') expect(r.body.data.keys).toBeUndefined();
  });

  it.each([
    ['ecdsa-p256', 'P-256'],
    ['ecdsa-p384', 'P-384'],
    ['ecdsa-p521', 'P-521'],
    ['rsa-2048', 'rsa-2048'],
  ])('creates %s keys and shows their PEM public keys', async (type, curve) => {
    const r = await ok('POST', `transit/keys/a-${type}`, { type });
    expect(r.body.data).toMatchObject({ type, supports_signing: true, supports_encryption: type.startsWith('rsa') });
    const v = r.body.data.keys['1'];
    expect(v).toEqual({ name: curve, public_key: expect.stringMatching(PEM), certificate_chain: '', creation_time: expect.stringMatching(GO_TIME), hybrid_public_key: '' });
  });

  it('shows ed25519 public keys raw; derived ones only for a context', async () => {
    const plain = await ok('POST', 'transit/keys/ed', { type: 'ed25519' });
    expect(plain.body.data.keys['1']).toMatchObject({ name: 'ed25519', public_key: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/) });
    const derived = await ok('POST', 'transit/keys/ed-derived', { type: 'ed25519', derived: true });
    expect(derived.body.data).toMatchObject({ derived: true, kdf: 'hkdf_sha256', convergent_encryption: false });
    expect(derived.body.data.keys['1'].public_key).toBe('');
    const ctx = btoa('tenant-1');
    const a = (await ok('GET', `transit/keys/ed-derived?context=${encodeURIComponent(ctx)}`)).body.data.keys['1'].public_key;
    const b = (await ok('GET', `transit/keys/ed-derived?context=${encodeURIComponent(btoa('tenant-2'))}`)).body.data.keys['1'].public_key;
    expect(a).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(a).not.toBe(b);
    expect((await ok('GET', `transit/keys/ed-derived?context=${encodeURIComponent(ctx)}`)).body.data.keys['1'].public_key).toBe(a);
  });

  it('shows derivation and convergence settings', async () => {
    const r = await ok('POST', 'transit/keys/conv', { derived: true, convergent_encryption: true });
    expect(r.body.data).toMatchObject({ derived: true, kdf: 'hkdf_sha256', convergent_encryption: true, convergent_encryption_version: -1 });
  });

  it('creates hmac keys of the requested size, and every creation flag sticks', async () => {
    expect((await ok('POST', 'transit/keys/h64', { type: 'hmac', key_size: 64 })).body.data.key_size).toBe(64);
    const r = await ok('POST', 'transit/keys/flags', { exportable: true, allow_plaintext_backup: true, auto_rotate_period: '2h' });
    expect(r.body.data).toMatchObject({ exportable: true, allow_plaintext_backup: true, auto_rotate_period: 7200 });
  });

  it('404s an unknown key and lists names', async () => {
    const r = await call('GET', 'transit/keys/nope');
    expect(r.status).toBe(404);
    expect(r.body).toEqual({ errors: [] });
    const listed = await ok('GET', 'transit/keys?list=true');
    expect(listed.body.data.keys).toEqual(expect.arrayContaining(['default', 'twice', 'ed', 'conv']));
  });
});

describe('refused creations leave nothing behind', () => {
  it.each([
    [{ type: 'aes512-gcm' }, 'unknown key type aes512-gcm'],
    // Names an Object's own properties have: once looked up with `in`, they asked for RSA pairs.
    [{ type: 'constructor' }, 'unknown key type constructor'],
    [{ type: '__proto__' }, 'unknown key type __proto__'],
    [{ type: 'toString' }, 'unknown key type toString'],
    [{ type: 'aes256-cmac' }, 'key type aes256-cmac is only available in Vault Enterprise'],
    [{ type: 'managed_key' }, 'missing argument managed_key_name or managed_key_id'],
    [{ type: 'ecdsa-p256', derived: true }, 'key derivation not supported for keys of type ecdsa-p256'],
    [{ convergent_encryption: true }, 'convergent encryption requires derivation to be enabled'],
    [{ type: 'aes256-gcm96', key_size: 32 }, 'key_size is not valid for algorithm aes256-gcm96'],
    [{ type: 'hmac', key_size: 8 }, 'invalid key_size 8: HMAC keys are 16 to 512 bytes'],
    [{ type: 'hmac', key_size: 513 }, 'invalid key_size 513: HMAC keys are 16 to 512 bytes'],
    [{ auto_rotate_period: '30m' }, 'auto rotate period must be 0 to disable or at least an hour'],
  ])('%j', async (body, message) => {
    const r = await call('POST', 'transit/keys/refused', body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
    expect((await call('GET', 'transit/keys/refused')).status).toBe(404);
  });

  it('refuses badly typed fields', async () => {
    const r = await call('POST', 'transit/keys/refused', { derived: 'maybe' });
    expect(r.status).toBe(400);
    expect(r.body.errors[0]).toContain('derived');
  });
});

describe('configuring keys', () => {
  beforeAll(async () => {
    await ok('POST', 'transit/keys/cfg');
    for (let i = 0; i < 3; i++) await ok('POST', 'transit/keys/cfg/rotate');
  });

  it('rotation adds versions; min versions move within the rules', async () => {
    const r = await ok('GET', 'transit/keys/cfg');
    expect(r.body.data.latest_version).toBe(4);
    expect(Object.keys(r.body.data.keys)).toEqual(['1', '2', '3', '4']);
    const set = await ok('POST', 'transit/keys/cfg/config', { min_decryption_version: 2, min_encryption_version: 3 });
    expect(set.body.data).toMatchObject({ min_decryption_version: 2, min_encryption_version: 3 });
  });

  it.each([
    [{ min_decryption_version: 5 }, 'cannot set min decryption version of 5, latest key version is 4'],
    [{ min_decryption_version: -1 }, 'min decryption version cannot be negative'],
    [{ min_encryption_version: 9 }, 'cannot set min encryption version of 9, latest key version is 4'],
    [{ min_encryption_version: 1 }, 'cannot set min encryption/decryption values; min encryption version of 1 must be greater than or equal to min decryption version of 2'],
    [{ auto_rotate_period: '10m' }, 'auto rotate period must be 0 to disable or at least an hour'],
  ])('refuses %j and keeps the key as it was', async (body, message) => {
    const r = await call('POST', 'transit/keys/cfg/config', body);
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual([message]);
    expect((await ok('GET', 'transit/keys/cfg')).body.data).toMatchObject({ min_decryption_version: 2, min_encryption_version: 3, auto_rotate_period: 0 });
  });

  it('one-way flags stay one-way', async () => {
    await ok('POST', 'transit/keys/cfg/config', { exportable: true, allow_plaintext_backup: true });
    const a = await call('POST', 'transit/keys/cfg/config', { exportable: false });
    expect(a.status).toBe(400);
    expect(a.body.errors).toEqual(['cannot disable exportability after it has been enabled']);
    const b = await call('POST', 'transit/keys/cfg/config', { allow_plaintext_backup: false });
    expect(b.body.errors).toEqual(['cannot disable plaintext backup after it has been enabled']);
    expect((await ok('GET', 'transit/keys/cfg')).body.data).toMatchObject({ exportable: true, allow_plaintext_backup: true });
  });

  it('min_decryption_version 0 means 1, with a warning', async () => {
    await ok('POST', 'transit/keys/zero');
    const r = await ok('POST', 'transit/keys/zero/config', { min_decryption_version: 0 });
    expect(r.body.data.min_decryption_version).toBe(1);
    expect(r.body.warnings).toEqual(['since Vault 0.3, transit key numbering starts at 1; forcing minimum to 1']);
  });

  it('trims versions below min_available_version within the min versions', async () => {
    const bad = await call('POST', 'transit/keys/cfg/trim', { min_available_version: 3 });
    expect(bad.status).toBe(400);
    expect(bad.body.errors).toEqual(['minimum available version cannot be greater than minimum decryption version']);
    const r = await ok('POST', 'transit/keys/cfg/trim', { min_available_version: 2 });
    expect(r.body.data).toMatchObject({ min_available_version: 2 });
    expect(Object.keys(r.body.data.keys)).toEqual(['2', '3', '4']);
    const below = await call('POST', 'transit/keys/cfg/config', { min_decryption_version: 1 });
    expect(below.status).toBe(400);
    const unset = await ok('POST', 'transit/keys/zero/config', { min_decryption_version: 1 });
    expect(unset.status).toBe(200);
    const needsMins = await call('POST', 'transit/keys/zero/trim', { min_available_version: 1 });
    expect(needsMins.body.errors).toEqual(['minimum decryption and encryption versions must be set before trimming']);
  });

  it('configuring, rotating or trimming an unknown key is a 400', async () => {
    for (const path of ['config', 'rotate', 'trim']) {
      const r = await call('POST', `transit/keys/ghost/${path}`, { min_available_version: 1 });
      expect(r.status).toBe(400);
      expect(r.body.errors).toEqual(['no existing key named ghost could be found']);
    }
  });
});

describe('deleting keys', () => {
  it('needs deletion_allowed', async () => {
    await ok('POST', 'transit/keys/doomed');
    const refused = await call('DELETE', 'transit/keys/doomed');
    expect(refused.status).toBe(400);
    expect(refused.body.errors).toEqual(['deletion is not allowed for this key']);
    expect((await call('GET', 'transit/keys/doomed')).status).toBe(200);
    await ok('POST', 'transit/keys/doomed/config', { deletion_allowed: true });
    expect((await call('DELETE', 'transit/keys/doomed')).status).toBe(204);
    expect((await call('GET', 'transit/keys/doomed')).status).toBe(404);
    expect((await call('DELETE', 'transit/keys/doomed')).body.errors).toEqual(['could not delete key; not found']);
  });
});

describe('mount-wide settings', () => {
  it('config/keys reads and sets disable_upsert', async () => {
    expect((await ok('GET', 'transit/config/keys')).body.data).toEqual({ disable_upsert: false });
    expect((await ok('POST', 'transit/config/keys', { disable_upsert: true })).body.data).toEqual({ disable_upsert: true });
    expect((await ok('GET', 'transit/config/keys')).body.data).toEqual({ disable_upsert: true });
    const r = await call('POST', 'transit/encrypt/upserted', { plaintext: btoa('x') });
    expect(r.status).toBe(400);
    expect(r.body.errors).toEqual(['encryption key not found']);
    await ok('POST', 'transit/config/keys', { disable_upsert: false });
    expect((await call('POST', 'transit/encrypt/upserted', { plaintext: btoa('x') })).status).toBe(200);
  });

  it('cache-config accepts 0 or at least 10', async () => {
    expect((await ok('GET', 'transit/cache-config')).body.data).toEqual({ size: 0 });
    expect((await ok('POST', 'transit/cache-config', { size: 20 })).body.data).toEqual({ size: 20 });
    const r = await call('POST', 'transit/cache-config', { size: 5 });
    expect(r.status).toBe(400);
    expect((await ok('GET', 'transit/cache-config')).body.data).toEqual({ size: 20 });
  });
});
