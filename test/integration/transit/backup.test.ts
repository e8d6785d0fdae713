// Transit backup/:name and restore(/:name) through the Worker (reference §6.12): round trips for
// every key type (old ciphertexts, signatures and HMACs keep working; versions, settings and
// min versions survive), exact big integers, Vault-shaped backups built here from oracle key
// material (independent of Coffer's serializer), and every refusal.
import { createPrivateKey, createPublicKey } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { caller, initCluster, type Cluster } from '../../helpers/api';
import { oracle, type Keygen } from '../../helpers/transit-oracle';

let c: Cluster;
const { call, ok } = caller(() => c.root);

const input = btoa('kept across backup and restore');
const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;
const b64ToBig = (s: string): bigint => BigInt(`0x${Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), (ch) => ch.charCodeAt(0).toString(16).padStart(2, '0')).join('')}`);
const decodeBackup = (backup: string): string => new TextDecoder().decode(Uint8Array.from(atob(backup), (ch) => ch.charCodeAt(0)));
const encodeBackup = (json: string): string => btoa(String.fromCharCode(...new TextEncoder().encode(json)));

async function expectRefused(method: string, path: string, body: unknown, message: string | RegExp): Promise<void> {
  const r = await call(method, path, body);
  expect(r.status).toBe(400);
  if (typeof message === 'string') expect(r.body.errors).toEqual([message]);
  else expect(r.body.errors[0]).toMatch(message);
}

const canEncrypt = (type: string) => !type.startsWith('ecdsa-') && type !== 'ed25519' && type !== 'hmac';
const canSign = (type: string) => type.startsWith('ecdsa-') || type.startsWith('rsa-') || type === 'ed25519';

/** Ciphertexts, signatures and HMACs made with version `v` of key `name`. */
async function evidence(name: string, type: string, v: number) {
  const out: { ciphertext?: string; signature?: string; hmac: string } = {
    hmac: (await ok('POST', `transit/hmac/${name}`, { input, key_version: v })).body.data.hmac,
  };
  if (canEncrypt(type)) out.ciphertext = (await ok('POST', `transit/encrypt/${name}`, { plaintext: input, key_version: v })).body.data.ciphertext;
  if (canSign(type)) out.signature = (await ok('POST', `transit/sign/${name}`, { input, key_version: v })).body.data.signature;
  return out;
}

async function expectEvidenceHolds(name: string, e: Awaited<ReturnType<typeof evidence>>): Promise<void> {
  expect((await ok('POST', `transit/verify/${name}`, { input, hmac: e.hmac })).body.data.valid).toBe(true);
  if (e.ciphertext) expect((await ok('POST', `transit/decrypt/${name}`, { ciphertext: e.ciphertext })).body.data.plaintext).toBe(input);
  if (e.signature) expect((await ok('POST', `transit/verify/${name}`, { input, signature: e.signature })).body.data.valid).toBe(true);
}

/** Every export of every version that applies to the type. */
async function allExports(name: string, type: string): Promise<Record<string, unknown>> {
  const kinds = ['hmac-key', ...(canEncrypt(type) ? ['encryption-key'] : []), ...(canSign(type) ? ['signing-key', 'public-key'] : [])];
  const out: Record<string, unknown> = {};
  for (const kind of kinds) out[kind] = (await ok('GET', `transit/export/${kind}/${name}`)).body.data.keys;
  return out;
}

beforeAll(async () => {
  c = await initCluster();
  await ok('POST', 'sys/mounts/transit', { type: 'transit' });
});

describe('backup then restore under another name', () => {
  it.each(['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305', 'hmac', 'ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'ed25519', 'rsa-2048'])('%s', async (type) => {
    const name = `bk-${type}`;
    await ok('POST', `transit/keys/${name}`, { type, exportable: true, allow_plaintext_backup: true, ...(type === 'hmac' ? { key_size: 48 } : {}) });
    await ok('POST', `transit/keys/${name}/rotate`);
    await ok('POST', `transit/keys/${name}/rotate`);
    const made = [await evidence(name, type, 1), await evidence(name, type, 2), await evidence(name, type, 3)];
    const exports = await allExports(name, type);
    await ok('POST', `transit/keys/${name}/config`, { min_decryption_version: 2, min_encryption_version: 3, deletion_allowed: true, auto_rotate_period: '72h' });

    const r = await ok('GET', `transit/backup/${name}`);
    expect(Object.keys(r.body.data)).toEqual(['backup']);
    const original = (await ok('GET', `transit/keys/${name}`)).body.data;
    expect(original.backup_info).toEqual({ time: expect.stringMatching(RFC3339), version: 3 });

    expect((await call('POST', `transit/restore/${name}-copy`, { backup: r.body.data.backup })).status).toBe(204);
    const copy = (await ok('GET', `transit/keys/${name}-copy`)).body.data;
    const { name: _n, restore_info, ...rest } = copy;
    expect(rest).toEqual({ ...original, name: undefined, restore_info: undefined });
    expect(restore_info).toEqual({ time: expect.stringMatching(RFC3339), version: 3 });
    expect(copy).toMatchObject({ latest_version: 3, min_decryption_version: 2, min_encryption_version: 3, deletion_allowed: true, auto_rotate_period: 259200 });

    await expectEvidenceHolds(`${name}-copy`, made[1]);
    await expectEvidenceHolds(`${name}-copy`, made[2]);
    // Version 1 is below min_decryption_version: it travels in Vault's archive, not the live map.
    await ok('POST', `transit/keys/${name}-copy/config`, { min_decryption_version: 1, min_encryption_version: 0 });
    await expectEvidenceHolds(`${name}-copy`, made[0]);
    expect(await allExports(`${name}-copy`, type)).toEqual(exports);
  });

  it('derived convergent keys keep their scheme: the same plaintext and context give the same ciphertext', async () => {
    await ok('POST', 'transit/keys/conv', { derived: true, convergent_encryption: true, exportable: true, allow_plaintext_backup: true });
    const context = btoa('tenant');
    const first = (await ok('POST', 'transit/encrypt/conv', { plaintext: input, context })).body.data.ciphertext;
    await ok('POST', 'transit/restore', { name: 'conv-copy', backup: (await ok('GET', 'transit/backup/conv')).body.data.backup });
    expect((await ok('POST', 'transit/encrypt/conv-copy', { plaintext: input, context })).body.data.ciphertext).toBe(first);
    expect((await ok('GET', 'transit/keys/conv-copy')).body.data).toMatchObject({ derived: true, kdf: 'hkdf_sha256', convergent_encryption: true, convergent_encryption_version: -1 });
  });

  it('keeps trimmed keys trimmed, imported flags and the version template', async () => {
    await ok('POST', 'transit/keys/trimmed', { exportable: true, allow_plaintext_backup: true });
    for (let i = 0; i < 3; i++) await ok('POST', 'transit/keys/trimmed/rotate');
    await ok('POST', 'transit/keys/trimmed/config', { min_decryption_version: 3, min_encryption_version: 4 });
    await ok('POST', 'transit/keys/trimmed/trim', { min_available_version: 3 });
    const made = await evidence('trimmed', 'aes256-gcm96', 4);
    await ok('POST', 'transit/restore/trimmed-copy', { backup: (await ok('GET', 'transit/backup/trimmed')).body.data.backup });
    const copy = (await ok('GET', 'transit/keys/trimmed-copy')).body.data;
    expect(copy).toMatchObject({ min_available_version: 3, min_decryption_version: 3, latest_version: 4 });
    expect(Object.keys(copy.keys)).toEqual(['3', '4']);
    await expectEvidenceHolds('trimmed-copy', made);

    const k = await oracle<Keygen>('keygen', { type: 'aes256-gcm96' });
    const pem = (await ok('GET', 'transit/wrapping_key')).body.data.public_key;
    const { ciphertext } = await oracle<{ ciphertext: string }>('wrap', { wrapping_public_pem: pem, material: k.key });
    await ok('POST', 'transit/keys/imported/import', { ciphertext, exportable: true, allow_plaintext_backup: true, allow_rotation: true });
    await ok('POST', 'transit/restore/imported-copy', { backup: (await ok('GET', 'transit/backup/imported')).body.data.backup });
    expect((await ok('GET', 'transit/keys/imported-copy')).body.data).toMatchObject({ imported_key: true, imported_key_allow_rotation: true });
  });
});

describe('public-only keys', () => {
  it.each(['ecdsa-p256', 'ed25519', 'rsa-2048'])('%s: the public key survives, the private part stays absent', async (type) => {
    const k = await oracle<Keygen>('keygen', { type });
    const name = `pub-${type}`;
    await ok('POST', `transit/keys/${name}/import`, { type, public_key: k.public_pem, exportable: true, allow_plaintext_backup: true });
    const publicKey = (await ok('GET', `transit/export/public-key/${name}`)).body.data.keys;
    await ok('POST', `transit/restore/${name}-copy`, { backup: (await ok('GET', `transit/backup/${name}`)).body.data.backup });
    expect((await ok('GET', `transit/export/public-key/${name}-copy`)).body.data.keys).toEqual(publicKey);
    expect((await ok('GET', `transit/export/signing-key/${name}-copy`)).body.data.keys).toEqual({ '1': '' });
    const theirs = await oracle<{ signature: string }>('sign', { type, input, private_pem: k.private_pem });
    expect((await ok('POST', `transit/verify/${name}-copy`, { input, signature: theirs.signature })).body.data.valid).toBe(true);
  });
});

describe('the backup document', () => {
  let doc: string;
  let ecPub: string;
  let rsaPub: string;
  beforeAll(async () => {
    await ok('POST', 'transit/keys/doc-ec', { type: 'ecdsa-p521', exportable: true, allow_plaintext_backup: true });
    await ok('POST', 'transit/keys/doc-rsa', { type: 'rsa-2048', exportable: true, allow_plaintext_backup: true });
    doc = decodeBackup((await ok('GET', 'transit/backup/doc-ec')).body.data.backup) + decodeBackup((await ok('GET', 'transit/backup/doc-rsa')).body.data.backup);
    ecPub = (await ok('GET', 'transit/export/public-key/doc-ec')).body.data.keys['1'];
    rsaPub = (await ok('GET', 'transit/export/public-key/doc-rsa')).body.data.keys['1'];
  });

  it("uses Vault's field names, type codes and units", async () => {
    const ec = JSON.parse(decodeBackup((await ok('GET', 'transit/backup/doc-ec')).body.data.backup));
    expect(Object.keys(ec)).toEqual(['policy', 'archived_keys']);
    expect(ec.policy).toMatchObject({
      name: 'doc-ec',
      type: 7,
      latest_version: 1,
      min_decryption_version: 1,
      archive_version: 1,
      min_available_version: 0,
      exportable: true,
      allow_plaintext_backup: true,
      auto_rotate_period: 0,
      Imported: false,
      AllowImportedKeyRotation: false,
      backup_info: { time: expect.stringMatching(RFC3339), version: 1 },
    });
    // The archive starts at min_available_version (0): a zero entry, then version 1.
    expect(ec.archived_keys.keys[0]).toEqual({ key: null, hmac_key: null, time: '0001-01-01T00:00:00Z', creation_time: 0 });
    expect(ec.archived_keys.keys[1].public_key).toBe(`${ecPub}\n`);
    expect(ec.policy.keys['1'].creation_time).toBe(Math.floor(Date.parse(ec.policy.keys['1'].time) / 1000));
  });

  it('writes EC and RSA components as exact JSON integers', () => {
    const jwk = createPublicKey(ecPub).export({ format: 'jwk' });
    const x = /"ec_x":(\d+)/.exec(doc)?.[1] ?? '';
    const y = /"ec_y":(\d+)/.exec(doc)?.[1] ?? '';
    expect(x.length).toBeGreaterThan(100); // 521-bit values: far beyond what a double holds
    expect(BigInt(x)).toBe(b64ToBig(jwk.x ?? ''));
    expect(BigInt(y)).toBe(b64ToBig(jwk.y ?? ''));
    const rsa = createPublicKey(rsaPub).export({ format: 'jwk' });
    expect(BigInt(/"rsa_public_key":\{"N":(\d+),"E":65537\}/.exec(doc)?.[1] ?? '0')).toBe(b64ToBig(rsa.n ?? ''));
    expect(/"rsa_key":\{"N":\d+,"E":65537,"D":\d+,"Primes":\[\d+,\d+\],"Precomputed":\{"Dp":\d+,"Dq":\d+,"Qinv":\d+,"CRTValues":\[\]\}\}/.test(doc)).toBe(true);
  });
});

describe('Vault-shaped backups built here from oracle key material', () => {
  const hmacKey = btoa('H'.repeat(32));
  const policyJson = (name: string, type: number, keys: string, archive: string, extra = '', periodNs = '0') =>
    `{"policy":{"name":"${name}","keys":{${keys}},"derived":false,"kdf":0,"convergent_encryption":false,"exportable":true,` +
    `"min_decryption_version":1,"min_encryption_version":0,"latest_version":1,"archive_version":1,"archive_min_version":0,` +
    `"min_available_version":0,"deletion_allowed":false,"convergent_version":0,"type":${type},"backup_info":null,"restore_info":null,` +
    `"allow_plaintext_backup":true,"version_template":"","storage_prefix":"","auto_rotate_period":${periodNs},` +
    `"Imported":false,"AllowImportedKeyRotation":false${extra}},"archived_keys":{"keys":[${archive}]}}`;
  const zero = '{"key":null,"hmac_key":null,"time":"0001-01-01T00:00:00Z","ec_x":null,"ec_y":null,"ec_d":null,"rsa_key":null,"rsa_public_key":null,"public_key":"","convergent_version":0,"creation_time":0}';
  const jwkBig = (s: string | undefined) => b64ToBig(s ?? '').toString();

  it('ECDSA P-384 with big-integer components, a nanosecond time with an offset and a 100-year period in ns', async () => {
    const k = await oracle<Keygen>('keygen', { type: 'ecdsa-p384' });
    const jwk = createPrivateKey(k.private_pem ?? '').export({ format: 'jwk' });
    const entry = `{"key":null,"hmac_key":"${hmacKey}","time":"2023-03-04T05:06:07.123456789+02:00","ec_x":${jwkBig(jwk.x)},"ec_y":${jwkBig(jwk.y)},"ec_d":${jwkBig(jwk.d)},"rsa_key":null,"rsa_public_key":null,"public_key":${JSON.stringify(k.public_pem)},"convergent_version":0,"creation_time":1677899167}`;
    await ok('POST', 'transit/restore', { backup: encodeBackup(policyJson('vault-ec', 6, `"1":${entry}`, `${zero},${entry}`, '', '3153600000000000000')) });
    const read = (await ok('GET', 'transit/keys/vault-ec')).body.data;
    expect(read).toMatchObject({ type: 'ecdsa-p384', auto_rotate_period: 3153600000, keys: { '1': { creation_time: '2023-03-04T03:06:07.123Z' } } });
    const { signature } = (await ok('POST', 'transit/sign/vault-ec', { input })).body.data;
    expect(await oracle('verify', { type: 'ecdsa-p384', input, signature, public_pem: k.public_pem })).toEqual({ valid: true });
    const forms = await oracle<{ signing_key: string }>('export-forms', { type: 'ecdsa-p384', private_pem: k.private_pem });
    expect((await ok('GET', 'transit/export/signing-key/vault-ec')).body.data.keys).toEqual({ '1': forms.signing_key });
    expect((await ok('GET', 'transit/export/hmac-key/vault-ec')).body.data.keys).toEqual({ '1': hmacKey });
  });

  it("RSA-2048 from Go's rsa.PrivateKey JSON", async () => {
    const k = await oracle<Keygen>('keygen', { type: 'rsa-2048' });
    const j = createPrivateKey(k.private_pem ?? '').export({ format: 'jwk' });
    const rsaKey = `{"N":${jwkBig(j.n)},"E":65537,"D":${jwkBig(j.d)},"Primes":[${jwkBig(j.p)},${jwkBig(j.q)}],"Precomputed":{"Dp":${jwkBig(j.dp)},"Dq":${jwkBig(j.dq)},"Qinv":${jwkBig(j.qi)},"CRTValues":[]}}`;
    const entry = `{"key":null,"hmac_key":"${hmacKey}","time":"2024-01-02T03:04:05Z","rsa_key":${rsaKey},"rsa_public_key":{"N":${jwkBig(j.n)},"E":65537},"creation_time":1704164645}`;
    await ok('POST', 'transit/restore', { backup: encodeBackup(policyJson('vault-rsa', 3, `"1":${entry}`, `${zero},${entry}`)) });
    const { ciphertext } = (await ok('POST', 'transit/encrypt/vault-rsa', { plaintext: input })).body.data;
    expect(await oracle('decrypt', { type: 'rsa-2048', ciphertext, private_key: k.private_pem })).toEqual({ plaintext: input });
    const forms = await oracle<{ encryption_key: string }>('export-forms', { type: 'rsa-2048', private_pem: k.private_pem });
    expect((await ok('GET', 'transit/export/encryption-key/vault-rsa')).body.data.keys).toEqual({ '1': forms.encryption_key });
  });

  it('Ed25519 (64-byte key) and its raw public key', async () => {
    const k = await oracle<Keygen>('keygen', { type: 'ed25519' });
    const entry = `{"key":"${k.ed25519_private64}","hmac_key":"${hmacKey}","time":"2024-01-02T03:04:05.5Z","public_key":"${k.ed25519_public}","creation_time":1704164645}`;
    await ok('POST', 'transit/restore', { backup: encodeBackup(policyJson('vault-ed', 2, `"1":${entry}`, `${zero},${entry}`)) });
    const { signature } = (await ok('POST', 'transit/sign/vault-ed', { input })).body.data;
    expect(await oracle<{ signature: string }>('sign', { type: 'ed25519', input, ed25519_private64: k.ed25519_private64 })).toEqual({ signature });
    expect((await ok('GET', 'transit/keys/vault-ed')).body.data.keys['1'].public_key).toBe(k.ed25519_public);
  });

  it('a derived convergent AES key with two versions, version 1 only in the archive', async () => {
    const [k1, k2] = await Promise.all([oracle<Keygen>('keygen', { type: 'aes256-gcm96' }), oracle<Keygen>('keygen', { type: 'aes256-gcm96' })]);
    const e = (k: Keygen, t: number) => `{"key":"${k.key}","hmac_key":"${hmacKey}","time":"2024-02-0${t}T00:00:00Z","convergent_version":3,"creation_time":0}`;
    const json = policyJson('vault-conv', 0, `"2":${e(k2, 2)}`, `${zero},${e(k1, 1)},${e(k2, 2)}`)
      .replace('"derived":false,"kdf":0,"convergent_encryption":false', '"derived":true,"kdf":1,"convergent_encryption":true')
      .replace('"min_decryption_version":1', '"min_decryption_version":2')
      .replace('"latest_version":1,"archive_version":1', '"latest_version":2,"archive_version":2')
      .replace('"convergent_version":0,"type"', '"convergent_version":-1,"type"');
    await ok('POST', 'transit/restore', { backup: encodeBackup(json) });
    const context = btoa('ctx');
    const mine = (await ok('POST', 'transit/encrypt/vault-conv', { plaintext: input, context })).body.data.ciphertext;
    const theirs = await oracle<{ ciphertext: string }>('encrypt', { type: 'aes256-gcm96', key: k2.key, plaintext: input, derived: true, convergent: true, context, version: 2 });
    expect(mine).toBe(theirs.ciphertext);
    const old = await oracle<{ ciphertext: string }>('encrypt', { type: 'aes256-gcm96', key: k1.key, plaintext: input, derived: true, convergent: true, context, version: 1 });
    await expectRefused('POST', 'transit/decrypt/vault-conv', { ciphertext: old.ciphertext, context }, 'ciphertext or signature version is disallowed by policy (too old)');
    await ok('POST', 'transit/keys/vault-conv/config', { min_decryption_version: 1 });
    expect((await ok('POST', 'transit/decrypt/vault-conv', { ciphertext: old.ciphertext, context })).body.data.plaintext).toBe(input);
  });

  it('an HMAC key, its size and a Vault time without fraction', async () => {
    const k = await oracle<Keygen>('keygen', { type: 'hmac', key_size: 40 });
    const entry = `{"key":"${k.key}","hmac_key":"${k.key}","time":"2024-01-02T03:04:05Z","creation_time":1704164645}`;
    await ok('POST', 'transit/restore/vault-hmac', { backup: encodeBackup(policyJson('ignored-name', 11, `"1":${entry}`, '', ',"key_size":40')) });
    expect((await ok('GET', 'transit/keys/vault-hmac')).body.data).toMatchObject({ type: 'hmac', key_size: 40 });
    const mine = (await ok('POST', 'transit/hmac/vault-hmac', { input })).body.data.hmac;
    expect(await oracle('hmac', { key: k.key, input })).toEqual({ hmac: mine });
  });
});

describe('force, names and refusals', () => {
  let backup: string;
  beforeAll(async () => {
    await ok('POST', 'transit/keys/src', { exportable: true, allow_plaintext_backup: true, deletion_allowed: true });
    backup = (await ok('GET', 'transit/backup/src')).body.data.backup;
    await ok('POST', 'transit/keys/closed', {});
    await ok('POST', 'transit/keys/half-open', { exportable: true });
  });

  it('refuses an existing name unless forced; force replaces the key', async () => {
    await ok('POST', 'transit/keys/victim', {});
    const before = (await ok('GET', 'transit/keys/victim')).body.data;
    await expectRefused('POST', 'transit/restore/victim', { backup }, 'key "victim" already exists');
    expect((await ok('GET', 'transit/keys/victim')).body.data).toEqual(before);
    const { ciphertext } = (await ok('POST', 'transit/encrypt/src', { plaintext: input })).body.data;
    expect((await call('POST', 'transit/restore/victim', { backup, force: true })).status).toBe(204);
    expect((await ok('POST', 'transit/decrypt/victim', { ciphertext })).body.data.plaintext).toBe(input);
  });

  it('restores under the backed-up name when none is given', async () => {
    const { ciphertext } = (await ok('POST', 'transit/encrypt/src', { plaintext: input })).body.data;
    await ok('POST', 'transit/keys/src/config', { deletion_allowed: true });
    await ok('DELETE', 'transit/keys/src');
    await expectRefused('GET', 'transit/backup/src', undefined, 'key "src" not found');
    expect((await call('POST', 'transit/restore', { backup })).status).toBe(204);
    expect((await ok('POST', 'transit/decrypt/src', { ciphertext })).body.data.plaintext).toBe(input);
  });

  it('refuses backups of keys that are not exportable or not allowed in plaintext', async () => {
    await expectRefused('GET', 'transit/backup/closed', undefined, 'exporting is disallowed on the policy');
    await expectRefused('GET', 'transit/backup/half-open', undefined, 'plaintext backup is disallowed on the policy');
    expect((await ok('GET', 'transit/keys/half-open')).body.data.backup_info).toBeUndefined();
  });

  const policy = (extra: string) => encodeBackup(`{"policy":{"name":"bad","latest_version":1,"min_decryption_version":1${extra}}}`);
  const aes = (key: string) => `,"type":0,"keys":{"1":{"key":"${key}","hmac_key":"${btoa('h'.repeat(32))}","time":"2024-01-01T00:00:00Z"}}`;
  it.each([
    ['no backup', {}, "'backup' must be supplied"],
    ['a name that is a path', { backup: policy(aes(btoa('k'.repeat(32)))), name: 'a/b' }, 'key names cannot be paths'],
    ['not base64', { backup: '%%%' }, 'invalid backup: not base64'],
    ['not JSON', { backup: encodeBackup('{"policy":') }, 'invalid backup: not JSON'],
    ['no policy', { backup: encodeBackup('{"archived_keys":{"keys":[]}}') }, 'backup data does not contain a valid policy'],
    ['a policy that is not an object', { backup: encodeBackup('{"policy":[1]}') }, 'invalid backup: policy is not an object'],
    ['an ML-DSA key', { backup: policy(',"type":14') }, 'restoring keys of type ml-dsa is not supported'],
    ['an unknown type code', { backup: policy(',"type":99') }, 'restoring keys of type code 99 is not supported'],
    ['a missing version', { backup: policy(',"type":0,"keys":{}') }, 'invalid backup: key version 1 is missing'],
    ['a wrong key length', { backup: policy(aes(btoa('short'))) }, 'invalid backup: version 1 has no valid aes256-gcm96 key'],
    ['a key that is not base64', { backup: policy(aes('***')) }, 'invalid backup: key is not base64'],
    ['a wrong field type', { backup: policy(`${aes(btoa('k'.repeat(32)))},"exportable":"yes"`) }, 'invalid backup: exportable is not a boolean'],
    ['an invalid name', { backup: encodeBackup('{"policy":{"name":"-bad-","type":0}}') }, 'invalid backup: invalid key name "-bad-"'],
    [
      'an inconsistent RSA key',
      { backup: policy(',"type":3,"keys":{"1":{"rsa_key":{"N":15,"E":3,"D":5,"Primes":[3,5],"Precomputed":{"Dp":1,"Dq":1,"Qinv":2,"CRTValues":[]}}}}') },
      /^invalid backup: /,
    ],
    ['a point off the curve', { backup: policy(',"type":1,"keys":{"1":{"ec_x":1,"ec_y":2,"ec_d":3}}') }, /^invalid backup: invalid EC key/],
  ])('refuses %s and writes nothing', async (_label, body, message) => {
    await expectRefused('POST', 'transit/restore', body, message);
    expect((await call('GET', 'transit/keys/bad')).status).toBe(404);
  });
});
