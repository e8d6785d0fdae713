// Encrypted DR activation tokens: a payload encrypted to a secondary's public key opens only with
// its private key; any change to any part of the token, a wrong key, a wrong version or a bad
// payload is a clear 400, never a raw exception.
import { describe, expect, it } from 'vitest';
import {
  decryptActivation,
  encryptActivation,
  generateSecondaryKeyPair,
  isEncryptedActivation,
  parsePayload,
  validatePublicKey,
  type ActivationPayload,
} from '../../../../src/core/replication/activation';
import { concatBytes, fromBase64, toBase64, toBase64Url, utf8 } from '../../../../src/crypto/encoding';
import { CofferError } from '../../../../src/framework/errors';

const payload: ActivationPayload = {
  primary_api_addr: 'https://primary.example.com',
  primary_cluster_addr: '',
  cluster_id: '7c2d6a7e-8f3b-4c1d-9e0a-1b2c3d4e5f60',
  secondary_id: 'dr-east',
  credential: 'c'.repeat(43),
  expires: 1_900_000_000_000,
  token_shards: 4,
};

/** The 400 message a promise fails with (fails the test on success or any other error). */
async function message(p: Promise<unknown>): Promise<string> {
  const e = await p.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(CofferError);
  expect((e as CofferError).status).toBe(400);
  return (e as CofferError).errors[0];
}
const syncMessage = (fn: () => unknown): Promise<string> => message(Promise.resolve().then(fn));

/** Replaces part `i` of a token. */
const withPart = (token: string, i: number, part: string) => token.split('.').map((p, j) => (j === i ? part : p)).join('.');
/** Flips one bit of the decoded bytes of part `i` at byte `at`. */
function flip(token: string, i: number, at: number): string {
  const raw = fromBase64(token.split('.')[i].replace(/-/g, '+').replace(/_/g, '/'))!;
  raw[at < 0 ? raw.length + at : at] ^= 0x01;
  return withPart(token, i, toBase64Url(raw));
}

/**
 * The token format written out independently of the module: ECDH P-256 with an ephemeral key,
 * HKDF-SHA-256 (empty salt, info "cofferdr1 activation" || ephemeral point || recipient point) to
 * an AES-256-GCM key, AAD "cofferdr1". Options break one binding to show it is checked.
 */
async function sealRaw(plaintext: Uint8Array, recipientB64: string, opts: { aad?: string; bindRecipient?: boolean } = {}): Promise<string> {
  const ecdh = { name: 'ECDH', namedCurve: 'P-256' };
  const recipientRaw = fromBase64(recipientB64)!;
  const recipient = await crypto.subtle.importKey('raw', recipientRaw, ecdh, false, []);
  const eph = (await crypto.subtle.generateKey(ecdh, true, ['deriveBits'])) as CryptoKeyPair;
  const ephRaw = new Uint8Array((await crypto.subtle.exportKey('raw', eph.publicKey)) as ArrayBuffer);
  const shared = await crypto.subtle.deriveBits({ name: 'ECDH', public: recipient } as unknown as SubtleCryptoDeriveKeyAlgorithm, eph.privateKey, 256);
  const ikm = await crypto.subtle.importKey('raw', shared, 'HKDF', false, ['deriveKey']);
  const info = concatBytes(utf8('cofferdr1 activation'), ephRaw, opts.bindRecipient === false ? new Uint8Array(0) : recipientRaw);
  const key = await crypto.subtle.deriveKey({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(0), info }, ikm, { name: 'AES-GCM', length: 256 }, false, ['encrypt']);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: utf8(opts.aad ?? 'cofferdr1') }, key, plaintext));
  return ['cofferdr1', toBase64Url(ephRaw), toBase64Url(iv), toBase64Url(ct)].join('.');
}

describe('activation token encryption', () => {
  it('generates a key pair: a 65-byte uncompressed point and a private JWK', async () => {
    const pair = await generateSecondaryKeyPair();
    const raw = fromBase64(pair.publicKey)!;
    expect(raw).toHaveLength(65);
    expect(raw[0]).toBe(4);
    expect(pair.privateKeyJwk).toMatchObject({ kty: 'EC', crv: 'P-256' });
    expect(typeof pair.privateKeyJwk.d).toBe('string');
    expect(await validatePublicKey(pair.publicKey)).toEqual(raw);
  });

  it('round-trips a payload and survives JSON storage of the private key', async () => {
    const pair = await generateSecondaryKeyPair();
    const token = await encryptActivation(payload, pair.publicKey);
    expect(token).toMatch(/^cofferdr1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(isEncryptedActivation(token)).toBe(true);
    expect(isEncryptedActivation('hvs.CAESIabc')).toBe(false);
    const stored = JSON.parse(JSON.stringify(pair.privateKeyJwk)) as JsonWebKey;
    expect(await decryptActivation(token, stored)).toEqual(payload);
    expect(await decryptActivation(`  ${token}\n`, stored)).toEqual(payload);
  });

  it('never produces the same token twice (fresh ephemeral key and IV)', async () => {
    const pair = await generateSecondaryKeyPair();
    const [a, b] = await Promise.all([encryptActivation(payload, pair.publicKey), encryptActivation(payload, pair.publicKey)]);
    expect(a.split('.')[1]).not.toBe(b.split('.')[1]);
    expect(a.split('.')[2]).not.toBe(b.split('.')[2]);
  });

  it('keeps only the known payload fields', async () => {
    const pair = await generateSecondaryKeyPair();
    const token = await encryptActivation({ ...payload, extra: 'x' } as ActivationPayload, pair.publicKey);
    expect(await decryptActivation(token, pair.privateKeyJwk)).toEqual(payload);
  });

  it('refuses to open with another secondary’s key', async () => {
    const [to, other] = await Promise.all([generateSecondaryKeyPair(), generateSecondaryKeyPair()]);
    const token = await encryptActivation(payload, to.publicKey);
    expect(await message(decryptActivation(token, other.privateKeyJwk))).toMatch(/could not be decrypted/);
  });

  it('refuses a token re-targeted by swapping in another ephemeral public key', async () => {
    const pair = await generateSecondaryKeyPair();
    const [a, b] = await Promise.all([encryptActivation(payload, pair.publicKey), encryptActivation(payload, pair.publicKey)]);
    expect(await message(decryptActivation(withPart(a, 1, b.split('.')[1]), pair.privateKeyJwk))).toMatch(/could not be decrypted/);
  });

  it.each([
    ['ephemeral key (last byte)', 1, -1],
    ['ephemeral key (first coordinate byte)', 1, 1],
    ['IV', 2, 0],
    ['ciphertext (first byte)', 3, 0],
    ['ciphertext (tag, last byte)', 3, -1],
  ])('refuses a token whose %s was changed', async (_name, part, at) => {
    const pair = await generateSecondaryKeyPair();
    const token = await encryptActivation(payload, pair.publicKey);
    expect(await message(decryptActivation(flip(token, part, at), pair.privateKeyJwk))).toMatch(/could not be decrypted|expected format/);
  });

  it('refuses an ephemeral key whose leading byte is not 0x04', async () => {
    const pair = await generateSecondaryKeyPair();
    const token = await encryptActivation(payload, pair.publicKey);
    const raw = fromBase64(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/'))!;
    raw[0] = 0x02;
    expect(await message(decryptActivation(withPart(token, 1, toBase64Url(raw)), pair.privateKeyJwk))).toMatch(/expected format/);
  });

  it('refuses a non-canonical base64url spelling of a part', async () => {
    const pair = await generateSecondaryKeyPair();
    const token = await encryptActivation(payload, pair.publicKey);
    // 65 bytes → 87 characters: the last one carries 4 unused bits; setting one keeps the bytes.
    const eph = token.split('.')[1];
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
    const last = alphabet[alphabet.indexOf(eph[eph.length - 1]) | 1];
    expect(await message(decryptActivation(withPart(token, 1, eph.slice(0, -1) + last), pair.privateKeyJwk))).toMatch(/expected format/);
  });

  it.each([
    ['an empty string', ''],
    ['a wrapping token', 'hvs.CAESIJ1234567890'],
    ['too few parts', 'cofferdr1.AAAA.AAAA'],
    ['too many parts', 'cofferdr1.a.b.c.d'],
    ['padded base64url', 'cofferdr1.AAAA=.AAAA.AAAA'],
    ['standard base64 characters', 'cofferdr1.AA+/.AAAA.AAAA'],
  ])('refuses %s as malformed', async (_name, token) => {
    const pair = await generateSecondaryKeyPair();
    expect(await message(decryptActivation(token, pair.privateKeyJwk))).toMatch(/expected format/);
  });

  it('refuses a non-string token', async () => {
    const pair = await generateSecondaryKeyPair();
    expect(await message(decryptActivation(42, pair.privateKeyJwk))).toMatch(/expected format/);
  });

  it('refuses truncated tokens', async () => {
    const pair = await generateSecondaryKeyPair();
    const token = await encryptActivation(payload, pair.publicKey);
    const parts = token.split('.');
    expect(await message(decryptActivation(withPart(token, 3, parts[3].slice(0, 20)), pair.privateKeyJwk))).toMatch(/expected format|could not be decrypted/);
    // Three bytes fewer: refused by the GCM tag, or by the decoder when the new last group is not canonical.
    expect(await message(decryptActivation(withPart(token, 3, parts[3].slice(0, -4)), pair.privateKeyJwk))).toMatch(/expected format|could not be decrypted/);
    expect(await message(decryptActivation(withPart(token, 1, parts[1].slice(0, 40)), pair.privateKeyJwk))).toMatch(/expected format/);
    expect(await message(decryptActivation(token.slice(0, token.lastIndexOf('.')), pair.privateKeyJwk))).toMatch(/expected format/);
  });

  it('names an unsupported version, and refuses a relabelled one', async () => {
    const pair = await generateSecondaryKeyPair();
    const token = await encryptActivation(payload, pair.publicKey);
    expect(await message(decryptActivation(withPart(token, 0, 'cofferdr2'), pair.privateKeyJwk))).toBe('unsupported activation token version "cofferdr2"; this server reads cofferdr1');
    expect(await message(decryptActivation(withPart(token, 0, 'COFFERDR1'), pair.privateKeyJwk))).toMatch(/expected format/);
  });

  it('reports an unusable private key clearly', async () => {
    const pair = await generateSecondaryKeyPair();
    const token = await encryptActivation(payload, pair.publicKey);
    for (const jwk of [{}, { ...pair.privateKeyJwk, crv: 'P-384' }, { ...pair.privateKeyJwk, d: undefined }, { ...pair.privateKeyJwk, x: 'AAAA' }, null]) {
      expect(await message(decryptActivation(token, jwk as JsonWebKey))).toMatch(/activation key is unusable/);
    }
  });

  it('refuses to encrypt an invalid payload', async () => {
    const pair = await generateSecondaryKeyPair();
    expect(await message(encryptActivation({ ...payload, credential: '' }, pair.publicKey))).toMatch(/credential must be a non-empty string/);
  });

  it('opens a token built independently from the documented format', async () => {
    const pair = await generateSecondaryKeyPair();
    const token = await sealRaw(utf8(JSON.stringify(payload)), pair.publicKey);
    expect(await decryptActivation(token, pair.privateKeyJwk)).toEqual(payload);
  });

  it('refuses a token whose GCM additional data is not the version', async () => {
    const pair = await generateSecondaryKeyPair();
    const token = await sealRaw(utf8(JSON.stringify(payload)), pair.publicKey, { aad: 'cofferdr2' });
    expect(await message(decryptActivation(token, pair.privateKeyJwk))).toMatch(/could not be decrypted/);
  });

  it('refuses a token whose key derivation did not bind the recipient key', async () => {
    const pair = await generateSecondaryKeyPair();
    const token = await sealRaw(utf8(JSON.stringify(payload)), pair.publicKey, { bindRecipient: false });
    expect(await message(decryptActivation(token, pair.privateKeyJwk))).toMatch(/could not be decrypted/);
  });

  it('refuses a correctly encrypted plaintext that is not JSON', async () => {
    const pair = await generateSecondaryKeyPair();
    const token = await sealRaw(utf8('{"cluster_id":'), pair.publicKey);
    expect(await message(decryptActivation(token, pair.privateKeyJwk))).toBe('activation token payload is not valid JSON');
  });

  it('refuses a correctly encrypted payload with missing or bad fields', async () => {
    const pair = await generateSecondaryKeyPair();
    const { credential: _omitted, ...rest } = payload;
    expect(await message(decryptActivation(await sealRaw(utf8(JSON.stringify(rest)), pair.publicKey), pair.privateKeyJwk))).toBe(
      'activation token payload: credential must be a non-empty string',
    );
    expect(await message(decryptActivation(await sealRaw(utf8('[1]'), pair.publicKey), pair.privateKeyJwk))).toBe('activation token payload must be a JSON object');
  });
});

describe('validatePublicKey', () => {
  it('accepts standard and URL-safe base64, padded or not', async () => {
    const pair = await generateSecondaryKeyPair();
    const raw = fromBase64(pair.publicKey)!;
    expect(await validatePublicKey(toBase64Url(raw))).toEqual(raw);
    expect(await validatePublicKey(toBase64(raw).replace(/=+$/, ''))).toEqual(raw);
    const token = await encryptActivation(payload, toBase64Url(raw));
    expect(await decryptActivation(token, pair.privateKeyJwk)).toEqual(payload);
  });

  it('refuses a point that is not on the curve', async () => {
    const raw = fromBase64((await generateSecondaryKeyPair()).publicKey)!;
    raw[64] ^= 0x01;
    expect(await message(validatePublicKey(toBase64(raw)))).toMatch(/uncompressed P-256 public key/);
  });

  it.each([
    ['empty', ''],
    ['not base64', 'not a key!'],
    ['too short', toBase64(new Uint8Array(33).fill(4))],
    ['compressed form', toBase64(new Uint8Array([0x02, ...new Uint8Array(32).fill(7)]))],
    ['wrong prefix byte', toBase64(new Uint8Array([0x05, ...new Uint8Array(64).fill(7)]))],
    ['all zero coordinates', toBase64(new Uint8Array([0x04, ...new Uint8Array(64)]))],
    ['a P-384 sized point', toBase64(new Uint8Array([0x04, ...new Uint8Array(96).fill(1)]))],
    ['a non-string', 12345],
  ])('refuses %s', async (_name, key) => {
    expect(await message(validatePublicKey(key))).toMatch(/secondary_public_key must be/);
  });

  it('refuses to encrypt to a bad key', async () => {
    expect(await message(encryptActivation(payload, 'AAAA'))).toMatch(/secondary_public_key must be/);
  });
});

describe('parsePayload', () => {
  it('accepts a complete payload, including an empty primary_cluster_addr, and drops unknown fields', () => {
    expect(parsePayload({ ...payload, other: 1 })).toEqual(payload);
    expect(parsePayload({ ...payload, primary_api_addr: 'http://127.0.0.1:8200', primary_cluster_addr: 'https://p:8201' }).primary_cluster_addr).toBe('https://p:8201');
  });

  it.each([
    ['null', null],
    ['an array', [payload]],
    ['a string', JSON.stringify(payload)],
  ])('refuses %s', async (_name, json) => {
    expect(await syncMessage(() => parsePayload(json))).toBe('activation token payload must be a JSON object');
  });

  it.each(['primary_api_addr', 'primary_cluster_addr', 'cluster_id', 'secondary_id', 'credential', 'expires', 'token_shards'] as const)('refuses a payload missing %s', async (field) => {
    const o: Record<string, unknown> = { ...payload };
    delete o[field];
    expect(await syncMessage(() => parsePayload(o))).toMatch(new RegExp(`^activation token payload: ${field} must be`));
  });

  it.each([
    ['cluster_id', ''],
    ['secondary_id', 7],
    ['credential', null],
    ['primary_cluster_addr', 5],
    ['primary_api_addr', ''],
    ['primary_api_addr', 'primary.example.com'],
    ['primary_api_addr', 'ftp://primary.example.com'],
    ['expires', '1900000000000'],
    ['expires', 0],
    ['expires', -5],
    ['expires', 1.5],
    ['expires', Number.MAX_VALUE],
    ['token_shards', 0],
    ['token_shards', '4'],
    ['token_shards', 2.5],
  ])('refuses %s = %j', async (field, value) => {
    expect(await syncMessage(() => parsePayload({ ...payload, [field]: value }))).toMatch(new RegExp(`^activation token payload: ${field} must be`));
  });
});
