// EMSA-PSS over a given digest, with raw RSA from node:crypto, cross-checked against WebCrypto's RSA-PSS
// (BoringSSL) in both directions; salt length 0 is deterministic, so there the bytes must match exactly.
import { beforeAll, describe, expect, it } from 'vitest';
import * as nc from 'node:crypto';
import { pssEncode, pssMaxSaltLength, pssVerify } from '../../../../src/crypto/transit/rsa-pss';
import { digest, hashLength, type HashName } from '../../../../src/crypto/transit/hashes';
import { toHex, utf8 } from '../../../../src/crypto/encoding';

const WEB: Partial<Record<HashName, string>> = { sha1: 'SHA-1', 'sha2-256': 'SHA-256', 'sha2-384': 'SHA-384', 'sha2-512': 'SHA-512' };
const message = utf8('EMSA-PSS test message');

let pkcs8: Buffer;
let spki: Buffer;
beforeAll(async () => {
  const pair = (await crypto.subtle.generateKey(
    { name: 'RSA-PSS', modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: 'SHA-256' },
    true,
    ['sign', 'verify'],
  )) as CryptoKeyPair;
  pkcs8 = Buffer.from((await crypto.subtle.exportKey('pkcs8', pair.privateKey)) as ArrayBuffer);
  spki = Buffer.from((await crypto.subtle.exportKey('spki', pair.publicKey)) as ArrayBuffer);
});

// Raw RSA (no padding): node:crypto's private and public operations.
const NO_PADDING = { padding: nc.constants.RSA_NO_PADDING };
const rawPrivate = (block: Uint8Array) =>
  new Uint8Array(nc.privateDecrypt({ ...{ key: pkcs8, format: 'der', type: 'pkcs8' } as const, ...NO_PADDING }, Buffer.from(block)));
const rawPublic = (sig: Uint8Array) =>
  new Uint8Array(nc.publicEncrypt({ ...{ key: spki, format: 'der', type: 'spki' } as const, ...NO_PADDING }, Buffer.from(sig)));
const webKey = (hash: HashName, usage: 'sign' | 'verify') =>
  usage === 'sign'
    ? crypto.subtle.importKey('pkcs8', pkcs8, { name: 'RSA-PSS', hash: WEB[hash] as string }, false, ['sign'])
    : crypto.subtle.importKey('spki', spki, { name: 'RSA-PSS', hash: WEB[hash] as string }, false, ['verify']);

describe('pssMaxSaltLength', () => {
  it('is emLen - hLen - 2', () => {
    expect(pssMaxSaltLength(2048, 'sha2-256')).toBe(222);
    expect(pssMaxSaltLength(2049, 'sha2-256')).toBe(222); // emLen = ceil(2048 / 8)
    expect(pssMaxSaltLength(2050, 'sha2-256')).toBe(223);
    expect(pssMaxSaltLength(3072, 'sha1')).toBe(362);
    expect(pssMaxSaltLength(4096, 'sha3-512')).toBe(446);
  });
});

describe('against WebCrypto RSA-PSS', () => {
  it.each(['sha1', 'sha2-256', 'sha2-384', 'sha2-512'] as const)('%s: both directions, several salt lengths', async (hash) => {
    const mHash = await digest(hash, message);
    const hLen = hashLength(hash);
    const signer = await webKey(hash, 'sign');
    const verifier = await webKey(hash, 'verify');
    for (const salt of [0, 20, hLen, pssMaxSaltLength(2048, hash)]) {
      const ours = rawPrivate(await pssEncode(hash, mHash, 2048, salt));
      expect(await crypto.subtle.verify({ name: 'RSA-PSS', saltLength: salt }, verifier, ours, message)).toBe(true);
      const theirs = new Uint8Array(await crypto.subtle.sign({ name: 'RSA-PSS', saltLength: salt }, signer, message));
      const block = rawPublic(theirs);
      expect(await pssVerify(hash, mHash, block, 2048, salt)).toBe(true);
      expect(await pssVerify(hash, mHash, block, 2048, 'auto')).toBe(true);
      expect(await pssVerify(hash, mHash, block, 2048, salt + 1)).toBe(false);
      if (salt > 0) expect(await pssVerify(hash, mHash, block, 2048, salt - 1)).toBe(false);
      if (salt === 0) expect(toHex(ours)).toBe(toHex(theirs)); // deterministic
    }
  });
});

describe('hashes WebCrypto lacks (SHA-224, SHA-3)', () => {
  it.each(['sha2-224', 'sha3-224', 'sha3-256', 'sha3-384', 'sha3-512'] as const)('%s round-trips through raw RSA', async (hash) => {
    const mHash = await digest(hash, message);
    for (const salt of [0, hashLength(hash), pssMaxSaltLength(2048, hash)]) {
      const block = rawPublic(rawPrivate(await pssEncode(hash, mHash, 2048, salt)));
      expect(await pssVerify(hash, mHash, block, 2048, salt)).toBe(true);
      expect(await pssVerify(hash, mHash, block, 2048, 'auto')).toBe(true);
      const other = await digest(hash, utf8('another message'));
      expect(await pssVerify(hash, other, block, 2048, 'auto')).toBe(false);
    }
    // a random salt makes two encodings differ
    const a = await pssEncode(hash, mHash, 2048, 16);
    const b = await pssEncode(hash, mHash, 2048, 16);
    expect(toHex(a)).not.toBe(toHex(b));
  });
});

describe('encoding layout', () => {
  it('masks the top bits and ends with 0xbc', async () => {
    const mHash = await digest('sha2-256', message);
    const block = await pssEncode('sha2-256', mHash, 2048, 32);
    expect(block.length).toBe(256);
    expect(block[0] & 0x80).toBe(0);
    expect(block[255]).toBe(0xbc);
    const topBitSet = block.slice();
    topBitSet[0] |= 0x80;
    expect(await pssVerify('sha2-256', mHash, topBitSet, 2048, 'auto')).toBe(false);
  });

  it('prefixes a zero byte when emLen is one byte shorter than the modulus (modBits ≡ 1 mod 8)', async () => {
    const mHash = await digest('sha2-256', message);
    const block = await pssEncode('sha2-256', mHash, 2049, 40);
    expect(block.length).toBe(257);
    expect(block[0]).toBe(0);
    expect(await pssVerify('sha2-256', mHash, block, 2049, 40)).toBe(true);
    expect(await pssVerify('sha2-256', mHash, block, 2049, 'auto')).toBe(true);
    const nonZero = block.slice();
    nonZero[0] = 1;
    expect(await pssVerify('sha2-256', mHash, nonZero, 2049, 'auto')).toBe(false);
    expect(await pssVerify('sha2-256', mHash, block.subarray(1), 2049, 'auto')).toBe(false);
  });
});

describe('bad input', () => {
  it('pssEncode refuses a wrong digest length and salts that do not fit', async () => {
    const mHash = await digest('sha2-256', message);
    await expect(pssEncode('sha2-256', mHash.subarray(1), 2048, 32)).rejects.toThrow(RangeError);
    await expect(pssEncode('sha2-512', mHash, 2048, 32)).rejects.toThrow(RangeError);
    await expect(pssEncode('sha2-256', mHash, 2048, 223)).rejects.toThrow(RangeError);
    await expect(pssEncode('sha2-256', mHash, 2048, -1)).rejects.toThrow(RangeError);
    await expect(pssEncode('sha2-256', mHash, 2048, 2.5)).rejects.toThrow(RangeError);
  });

  it('pssVerify answers false for anything malformed', async () => {
    const mHash = await digest('sha2-256', message);
    const block = await pssEncode('sha2-256', mHash, 2048, 32);
    expect(await pssVerify('sha2-256', mHash, block, 2048, 32)).toBe(true);
    expect(await pssVerify('sha2-256', mHash.subarray(1), block, 2048, 32)).toBe(false);
    expect(await pssVerify('sha2-256', mHash, block.subarray(1), 2048, 32)).toBe(false);
    expect(await pssVerify('sha2-256', mHash, new Uint8Array(0), 2048, 'auto')).toBe(false);
    expect(await pssVerify('sha2-256', mHash, new Uint8Array(256), 2048, 'auto')).toBe(false);
    const badTrailer = block.slice();
    badTrailer[255] = 0xbd;
    expect(await pssVerify('sha2-256', mHash, badTrailer, 2048, 32)).toBe(false);
    const badH = block.slice();
    badH[240] ^= 1;
    expect(await pssVerify('sha2-256', mHash, badH, 2048, 'auto')).toBe(false);
    const badDb = block.slice();
    badDb[10] ^= 1; // breaks the zero padding before the 0x01 separator
    expect(await pssVerify('sha2-256', mHash, badDb, 2048, 32)).toBe(false);
    expect(await pssVerify('sha2-256', mHash, block, 2048, 300)).toBe(false);
    expect(await pssVerify('sha2-512', mHash, block, 2048, 'auto')).toBe(false);
  });
});
