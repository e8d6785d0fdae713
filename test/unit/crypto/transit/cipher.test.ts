import { createCipheriv, createDecipheriv } from 'node:crypto';
import { chacha20poly1305 } from '@noble/ciphers/chacha.js';
import { describe, expect, it } from 'vitest';
import { concatBytes, fromHex, toHex, utf8 } from '../../../../src/crypto/encoding';
import { randomBytes } from '../../../../src/crypto/random';
import { type CipherName, NONCE_LENGTH, cipherKeyLength, open, seal } from '../../../../src/crypto/transit/cipher';

const hex = (s: string): Uint8Array => fromHex(s.replace(/\s+/g, '')) as Uint8Array;
const CIPHERS: CipherName[] = ['aes128-gcm96', 'aes256-gcm96', 'chacha20-poly1305'];
const EMPTY = new Uint8Array(0);

describe('cipherKeyLength', () => {
  it('is 16 | 32 | 32', () => {
    expect(cipherKeyLength('aes128-gcm96')).toBe(16);
    expect(cipherKeyLength('aes256-gcm96')).toBe(32);
    expect(cipherKeyLength('chacha20-poly1305')).toBe(32);
    expect(NONCE_LENGTH).toBe(12);
  });
});

describe('known answers', () => {
  it('ChaCha20-Poly1305: RFC 8439 §2.8.2', async () => {
    const key = hex('808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f');
    const nonce = hex('070000004041424344454647');
    const aad = hex('50515253c0c1c2c3c4c5c6c7');
    const pt = utf8("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.");
    const ct = hex(`d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b
      1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de5
      76d26586cec64b6116`);
    const tag = hex('1ae10b594f09e26a7e902ecbd0600691');
    const payload = await seal('chacha20-poly1305', key, nonce, pt, aad);
    expect(toHex(payload)).toBe(toHex(concatBytes(nonce, ct, tag)));
    expect(await open('chacha20-poly1305', key, payload, aad)).toEqual(pt);
  });

  // McGrew & Viega, "The Galois/Counter Mode of Operation", test cases 4 (AES-128) and 16 (AES-256).
  const P = hex(`d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525
    b16aedf5aa0de657ba637b39`);
  const A = hex('feedfacedeadbeeffeedfacedeadbeefabaddad2');
  const IV = hex('cafebabefacedbaddecaf888');
  const GCM = [
    {
      c: 'aes128-gcm96' as const,
      key: hex('feffe9928665731c6d6a8f9467308308'),
      ct: hex(`42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa05
        1ba30b396a0aac973d58e091`),
      tag: hex('5bc94fbc3221a5db94fae95ae7121a47'),
    },
    {
      c: 'aes256-gcm96' as const,
      key: hex('feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308'),
      ct: hex(`522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838
        c5f61e6393ba7a0abcc9f662`),
      tag: hex('76fc6ece0f4e1768cddf8853bb2d551b'),
    },
  ];

  it.each(GCM.map((v) => [v.c, v]))('%s: GCM spec vector with 96-bit IV and AAD', async (_name, v) => {
    const payload = await seal(v.c, v.key, IV, P, A);
    expect(toHex(payload)).toBe(toHex(concatBytes(IV, v.ct, v.tag)));
    expect(await open(v.c, v.key, payload, A)).toEqual(P);
  });

  it('GCM spec test cases 1 and 13: empty plaintext gives just the tag', async () => {
    const zeroIv = new Uint8Array(12);
    const t1 = await seal('aes128-gcm96', new Uint8Array(16), zeroIv, EMPTY, EMPTY);
    expect(toHex(t1)).toBe(`${'00'.repeat(12)}58e2fccefa7e3061367f1d57a4e7455a`);
    const t13 = await seal('aes256-gcm96', new Uint8Array(32), zeroIv, EMPTY, EMPTY);
    expect(toHex(t13)).toBe(`${'00'.repeat(12)}530f8afbc74536b9a963b4f1c4cb738b`);
    expect(await open('aes256-gcm96', new Uint8Array(32), t13, EMPTY)).toEqual(EMPTY);
  });
});

describe('round trips and rejection', () => {
  it.each(CIPHERS.map((c) => [c]))('%s: round trip, empty plaintext, AAD binding', async (c) => {
    const key = randomBytes(cipherKeyLength(c));
    const nonce = randomBytes(NONCE_LENGTH);
    const aad = utf8('context');
    const pt = randomBytes(100);
    const payload = await seal(c, key, nonce, pt, aad);
    expect(payload.length).toBe(12 + 100 + 16);
    expect(payload.subarray(0, 12)).toEqual(nonce);
    expect(await open(c, key, payload, aad)).toEqual(pt);

    const empty = await seal(c, key, nonce, EMPTY, EMPTY);
    expect(empty.length).toBe(28);
    expect(await open(c, key, empty, EMPTY)).toEqual(EMPTY);

    // Wrong AAD, missing AAD, wrong key.
    expect(await open(c, key, payload, utf8('contexT'))).toBeNull();
    expect(await open(c, key, payload, EMPTY)).toBeNull();
    expect(await open(c, randomBytes(cipherKeyLength(c)), payload, aad)).toBeNull();
    expect(await open(c, key, empty, aad)).toBeNull();
  });

  it.each(CIPHERS.map((c) => [c]))('%s: any flipped byte (nonce, body, tag) fails', async (c) => {
    const key = randomBytes(cipherKeyLength(c));
    const payload = await seal(c, key, randomBytes(12), utf8('secret message'), EMPTY);
    for (const i of [0, 11, 12, 20, payload.length - 16, payload.length - 1]) {
      const bad = payload.slice();
      bad[i] ^= 0x01;
      expect(await open(c, key, bad, EMPTY)).toBeNull();
    }
    // Truncated tag / appended byte.
    expect(await open(c, key, payload.subarray(0, payload.length - 1), EMPTY)).toBeNull();
    expect(await open(c, key, concatBytes(payload, new Uint8Array(1)), EMPTY)).toBeNull();
  });

  it.each(CIPHERS.map((c) => [c]))('%s: payloads shorter than nonce + tag are null', async (c) => {
    const key = randomBytes(cipherKeyLength(c));
    for (const n of [0, 1, 12, 27]) expect(await open(c, key, randomBytes(n), EMPTY)).toBeNull();
  });

  it('does not mix up AES-128 and AES-256 keys that share a cache', async () => {
    const k16 = randomBytes(16);
    const k32 = randomBytes(32);
    const nonce = randomBytes(12);
    const a = await seal('aes128-gcm96', k16, nonce, utf8('x'), EMPTY);
    const b = await seal('aes256-gcm96', k32, nonce, utf8('x'), EMPTY);
    expect(toHex(a)).not.toBe(toHex(b));
    expect(await open('aes128-gcm96', k16, a, EMPTY)).toEqual(utf8('x'));
    expect(await open('aes256-gcm96', k32, b, EMPTY)).toEqual(utf8('x'));
  });

  it('works on subarray views of larger buffers', async () => {
    const big = randomBytes(200);
    const key = big.subarray(10, 42);
    const nonce = big.subarray(50, 62);
    const pt = big.subarray(100, 150);
    for (const c of ['aes256-gcm96', 'chacha20-poly1305'] as const) {
      const payload = await seal(c, key, nonce, pt, big.subarray(0, 5));
      const inner = concatBytes(new Uint8Array(3), payload).subarray(3);
      expect(await open(c, key, inner, big.subarray(0, 5))).toEqual(pt);
    }
  });
});

describe('bad arguments throw', () => {
  it.each(CIPHERS.map((c) => [c]))('%s: wrong key length', async (c) => {
    const bad = randomBytes(cipherKeyLength(c) === 16 ? 32 : 16);
    await expect(seal(c, bad, randomBytes(12), utf8('x'), EMPTY)).rejects.toThrow(/key must be/);
    await expect(open(c, bad, randomBytes(40), EMPTY)).rejects.toThrow(/key must be/);
    await expect(seal(c, EMPTY, randomBytes(12), utf8('x'), EMPTY)).rejects.toThrow(/key must be/);
  });

  it.each(CIPHERS.map((c) => [c]))('%s: wrong nonce length', async (c) => {
    const key = randomBytes(cipherKeyLength(c));
    for (const n of [0, 8, 11, 13, 16]) {
      await expect(seal(c, key, randomBytes(n), utf8('x'), EMPTY)).rejects.toThrow(/nonce must be 12 bytes/);
    }
  });
});

describe('cross-checks against other implementations', () => {
  it.each([
    ['aes128-gcm96', 'aes-128-gcm'],
    ['aes256-gcm96', 'aes-256-gcm'],
  ] as const)('%s agrees with node:crypto %s both ways', async (c, nodeName) => {
    const key = randomBytes(cipherKeyLength(c));
    const nonce = randomBytes(12);
    const aad = randomBytes(20);
    const pt = randomBytes(333);

    const enc = createCipheriv(nodeName, key, nonce);
    enc.setAAD(aad);
    const nodePayload = concatBytes(nonce, enc.update(pt), enc.final(), enc.getAuthTag());
    expect(toHex(await seal(c, key, nonce, pt, aad))).toBe(toHex(nodePayload));

    const ours = await seal(c, key, nonce, pt, aad);
    const dec = createDecipheriv(nodeName, key, ours.subarray(0, 12));
    dec.setAAD(aad);
    dec.setAuthTag(ours.subarray(ours.length - 16));
    const back = concatBytes(dec.update(ours.subarray(12, ours.length - 16)), dec.final());
    expect(back).toEqual(pt);
  });

  it('chacha20-poly1305 agrees with @noble/ciphers both ways', async () => {
    const key = randomBytes(32);
    const nonce = randomBytes(12);
    const aad = randomBytes(7);
    const pt = randomBytes(1000);
    const nobleOut = chacha20poly1305(key, nonce, aad).encrypt(pt);
    const ours = await seal('chacha20-poly1305', key, nonce, pt, aad);
    expect(toHex(ours)).toBe(toHex(concatBytes(nonce, nobleOut)));
    expect(await open('chacha20-poly1305', key, concatBytes(nonce, nobleOut), aad)).toEqual(pt);
  });
});
