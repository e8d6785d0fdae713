import { constants, createPublicKey, generateKeyPairSync, privateDecrypt, publicEncrypt } from 'node:crypto';
import { aeskwp } from '@noble/ciphers/aes.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { concatBytes, fromHex, toHex } from '../../../../src/crypto/encoding';
import { randomBytes } from '../../../../src/crypto/random';
import {
  KeyWrapError,
  type OaepHash,
  generateWrappingKey,
  parseOaepHash,
  unwrapImport,
  wrapForImport,
} from '../../../../src/crypto/transit/key-wrap';

const hex = (s: string): Uint8Array => fromHex(s) as Uint8Array;
const HASHES: OaepHash[] = ['sha1', 'sha224', 'sha256', 'sha384', 'sha512'];

// One 2048-bit test key per file: DER for the code under test, PEM for direct node:crypto calls.
let pkcs8: Uint8Array;
let spki: Uint8Array;
let privatePem: string;
let publicPem: string;

beforeAll(() => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048, publicExponent: 65537 });
  pkcs8 = new Uint8Array(privateKey.export({ format: 'der', type: 'pkcs8' }));
  spki = new Uint8Array(publicKey.export({ format: 'der', type: 'spki' }));
  privatePem = privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  publicPem = publicKey.export({ format: 'pem', type: 'spki' }) as string;
});

/** A BYOK blob built only from node:crypto OAEP and noble KWP, not from wrapForImport. */
function nodeBlob(material: Uint8Array, hash: OaepHash, ephemeral = randomBytes(32)): Uint8Array {
  const rsaPart = publicEncrypt({ key: publicPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash }, ephemeral);
  return concatBytes(rsaPart, aeskwp(ephemeral).encrypt(material));
}

async function expectWrapError(p: Promise<unknown>, message: string): Promise<void> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(KeyWrapError);
  expect((err as Error).message).toBe(message);
}

describe('parseOaepHash', () => {
  it('accepts Vault hash_function values case-insensitively', () => {
    expect(parseOaepHash('SHA1')).toBe('sha1');
    expect(parseOaepHash('SHA224')).toBe('sha224');
    expect(parseOaepHash('SHA256')).toBe('sha256');
    expect(parseOaepHash('sha384')).toBe('sha384');
    expect(parseOaepHash('Sha512')).toBe('sha512');
  });

  it('rejects anything else', () => {
    for (const bad of ['', 'sha2-256', 'SHA-256', 'SHA3-256', 'md5', ' SHA256', 'sha']) expect(parseOaepHash(bad)).toBeNull();
  });
});

describe('AES-KWP (RFC 5649 §6) as used here', () => {
  const kek = hex('5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8');
  it('wraps the 20-octet key', () => {
    const wrapped = aeskwp(kek).encrypt(hex('c37b7e6492584340bed12207808941155068f738'));
    expect(toHex(wrapped)).toBe('138bdeaa9b8fa7fc61f97742e72248ee5ae6ae5360d1ae6a5f54f373fa543b6a');
    expect(toHex(aeskwp(kek).decrypt(wrapped))).toBe('c37b7e6492584340bed12207808941155068f738');
  });
  it('wraps the 7-octet key', () => {
    const wrapped = aeskwp(kek).encrypt(hex('466f7250617369'));
    expect(toHex(wrapped)).toBe('afbeb0f07dfbf5419200f2ccb50bb24f');
    expect(toHex(aeskwp(kek).decrypt(wrapped))).toBe('466f7250617369');
  });
});

describe('round trips (RSA-2048 test key)', () => {
  it.each(HASHES.map((h) => [h]))('wrapForImport -> unwrapImport with %s', async (hash) => {
    for (const len of [16, 32, 33, 512]) {
      const material = randomBytes(len);
      const blob = await wrapForImport(spki, material, hash);
      expect(blob.length).toBe(256 + Math.ceil(len / 8) * 8 + 8);
      expect(await unwrapImport(pkcs8, blob, hash)).toEqual(material);
    }
  });

  it.each(HASHES.map((h) => [h]))('unwraps a blob built with node:crypto + noble directly (%s)', async (hash) => {
    const material = randomBytes(32);
    const out = await unwrapImport(pkcs8, nodeBlob(material, hash), hash);
    expect(out).toEqual(material);
    expect(out.byteLength).toBe(out.buffer.byteLength);
  });

  it.each(HASHES.map((h) => [h]))('wrapForImport output opens with node:crypto + noble directly (%s)', async (hash) => {
    const material = randomBytes(48);
    const blob = await wrapForImport(spki, material, hash);
    const eph = privateDecrypt(
      { key: privatePem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash },
      blob.subarray(0, 256),
    );
    expect(eph.length).toBe(32);
    expect(aeskwp(new Uint8Array(eph)).decrypt(blob.subarray(256))).toEqual(material);
  });

  it('handles Vault KWP size bounds (16 and 8192 bytes) and a PKCS#8 payload', async () => {
    for (const material of [randomBytes(16), randomBytes(8192), pkcs8]) {
      expect(await unwrapImport(pkcs8, await wrapForImport(spki, material, 'sha256'), 'sha256')).toEqual(material);
    }
  });

  it('uses a fresh ephemeral key each time', async () => {
    const material = randomBytes(32);
    const a = await wrapForImport(spki, material, 'sha256');
    const b = await wrapForImport(spki, material, 'sha256');
    expect(toHex(a.subarray(256))).not.toBe(toHex(b.subarray(256)));
  });
});

describe('errors', () => {
  it('blob not longer than the RSA part -> "provided ciphertext is too short"', async () => {
    for (const len of [0, 1, 255, 256]) {
      await expectWrapError(unwrapImport(pkcs8, randomBytes(len), 'sha256'), 'provided ciphertext is too short');
    }
  });

  it('OAEP failure: wrong hash or corrupted RSA part', async () => {
    const blob = nodeBlob(randomBytes(32), 'sha256');
    await expectWrapError(unwrapImport(pkcs8, blob, 'sha1'), 'crypto/rsa: decryption error');
    await expectWrapError(unwrapImport(pkcs8, blob, 'sha224'), 'crypto/rsa: decryption error');
    const bad = blob.slice();
    bad[100] ^= 0x01;
    await expectWrapError(unwrapImport(pkcs8, bad, 'sha256'), 'crypto/rsa: decryption error');
    // Wrapped for a different RSA key.
    const other = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const otherSpki = new Uint8Array(other.publicKey.export({ format: 'der', type: 'spki' }));
    await expectWrapError(
      unwrapImport(pkcs8, await wrapForImport(otherSpki, randomBytes(32), 'sha224'), 'sha224'),
      'crypto/rsa: decryption error',
    );
  });

  it('ephemeral key that is not 32 bytes', async () => {
    for (const ephLen of [16, 24, 31, 33]) {
      const eph = randomBytes(ephLen);
      const rsaPart = publicEncrypt({ key: publicPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, eph);
      const blob = concatBytes(rsaPart, randomBytes(40));
      await expectWrapError(unwrapImport(pkcs8, blob, 'sha256'), 'expected ephemeral AES key to be 256-bit');
    }
  });

  it('KWP integrity failure: tampered wrapped key or wrong ephemeral key', async () => {
    const material = randomBytes(32);
    const blob = nodeBlob(material, 'sha256');
    for (const i of [256, 270, blob.length - 1]) {
      const bad = blob.slice();
      bad[i] ^= 0x80;
      await expectWrapError(unwrapImport(pkcs8, bad, 'sha256'), 'kwp: unwrap failed integrity check');
    }
    const eph = randomBytes(32);
    const rsaPart = publicEncrypt({ key: publicPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, eph);
    const mismatched = concatBytes(rsaPart, aeskwp(randomBytes(32)).encrypt(material));
    await expectWrapError(unwrapImport(pkcs8, mismatched, 'sha256'), 'kwp: unwrap failed integrity check');
  });

  it('KWP part of an impossible size', async () => {
    const eph = randomBytes(32);
    const rsaPart = publicEncrypt({ key: publicPem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, eph);
    // 16 bytes is a valid RFC 5649 wrap of <= 8 octets, but below Vault's 16-octet minimum.
    const tiny = aeskwp(eph).encrypt(randomBytes(8));
    expect(tiny.length).toBe(16);
    await expectWrapError(unwrapImport(pkcs8, concatBytes(rsaPart, tiny), 'sha256'), 'kwp: wrapped key size too small');
    await expectWrapError(unwrapImport(pkcs8, concatBytes(rsaPart, randomBytes(1)), 'sha256'), 'kwp: wrapped key size too small');
    await expectWrapError(
      unwrapImport(pkcs8, concatBytes(rsaPart, randomBytes(8208)), 'sha256'),
      'kwp: wrapped key size too large',
    );
    await expectWrapError(
      unwrapImport(pkcs8, concatBytes(rsaPart, randomBytes(33)), 'sha256'),
      'kwp: wrapped key size must be a multiple of 8 bytes',
    );
  });

  it('wrapForImport refuses material outside 16..8192 bytes', async () => {
    await expectWrapError(wrapForImport(spki, randomBytes(15), 'sha256'), 'kwp: key size to wrap too small');
    await expectWrapError(wrapForImport(spki, new Uint8Array(0), 'sha256'), 'kwp: key size to wrap too small');
    await expectWrapError(wrapForImport(spki, randomBytes(8193), 'sha256'), 'kwp: key size to wrap too large');
  });

  it('a wrapping key that is not RSA PKCS#8 is a plain error (a server fault, not a 400)', async () => {
    const ec = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const ecPkcs8 = new Uint8Array(ec.privateKey.export({ format: 'der', type: 'pkcs8' }));
    const err = await unwrapImport(ecPkcs8, randomBytes(600), 'sha256').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(KeyWrapError);
    const garbage = await unwrapImport(randomBytes(100), randomBytes(600), 'sha256').catch((e: unknown) => e);
    expect(garbage).toBeInstanceOf(Error);
    expect(garbage).not.toBeInstanceOf(KeyWrapError);
  });
});

describe('generateWrappingKey (RSA-4096)', () => {
  it('makes an RSA-4096 e=65537 pair whose blobs have a 512-byte RSA part', async () => {
    const { privateKey, publicKey } = await generateWrappingKey();
    const pub = createPublicKey({ key: Buffer.from(publicKey), format: 'der', type: 'spki' });
    expect(pub.asymmetricKeyType).toBe('rsa');
    expect(pub.asymmetricKeyDetails?.modulusLength).toBe(4096);
    expect(pub.asymmetricKeyDetails?.publicExponent).toBe(65537n);

    const material = randomBytes(32);
    const blob = await wrapForImport(publicKey, material, 'sha256');
    expect(blob.length).toBe(512 + 40);
    expect(await unwrapImport(privateKey, blob, 'sha256')).toEqual(material);

    // A client-side blob (node OAEP-SHA224 + noble KWP) against the real wrapping key.
    const eph = randomBytes(32);
    const pem = pub.export({ format: 'pem', type: 'spki' }) as string;
    const rsaPart = publicEncrypt({ key: pem, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha224' }, eph);
    expect(rsaPart.length).toBe(512);
    const clientBlob = concatBytes(rsaPart, aeskwp(eph).encrypt(material));
    expect(await unwrapImport(privateKey, clientBlob, 'sha224')).toEqual(material);
    await expectWrapError(unwrapImport(privateKey, clientBlob.subarray(0, 512), 'sha224'), 'provided ciphertext is too short');
  });
});
