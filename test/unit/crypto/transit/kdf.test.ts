import { createHmac, hkdfSync } from 'node:crypto';
import { hkdf as nobleHkdf } from '@noble/hashes/hkdf.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import { fromHex, toHex, utf8 } from '../../../../src/crypto/encoding';
import { randomBytes } from '../../../../src/crypto/random';
import { convergentNonce, counterKdfHmacSha256, hkdfSha256 } from '../../../../src/crypto/transit/kdf';

const hex = (s: string): Uint8Array => fromHex(s) as Uint8Array;
const EMPTY = new Uint8Array(0);

describe('hkdfSha256', () => {
  it('matches RFC 5869 test case 3 (empty salt and info)', async () => {
    const okm = await hkdfSha256(hex('0b'.repeat(22)), EMPTY, 42);
    expect(toHex(okm)).toBe('8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8');
  });

  it.each([16, 32, 64])('agrees with node:crypto hkdfSync and noble hkdf (empty salt), length %i', async (len) => {
    for (let i = 0; i < 3; i++) {
      const ikm = randomBytes(32);
      const info = randomBytes(i * 20);
      const ours = await hkdfSha256(ikm, info, len);
      expect(ours.length).toBe(len);
      expect(toHex(ours)).toBe(toHex(new Uint8Array(hkdfSync('sha256', ikm, EMPTY, info, len))));
      expect(toHex(ours)).toBe(toHex(nobleHkdf(nobleSha256, ikm, undefined, info, len)));
    }
  });

  it('is a deterministic function of (ikm, info): reuse of the cached key, different contexts', async () => {
    const ikm = randomBytes(32);
    const a1 = await hkdfSha256(ikm, utf8('ctx-a'), 32);
    const b = await hkdfSha256(ikm, utf8('ctx-b'), 32);
    const a2 = await hkdfSha256(ikm, utf8('ctx-a'), 32);
    expect(a2).toEqual(a1);
    expect(toHex(b)).not.toBe(toHex(a1));
    // A shorter output is a prefix of a longer one (HKDF-Expand), as convergent v3 relies on.
    expect((await hkdfSha256(ikm, utf8('ctx-a'), 64)).subarray(0, 32)).toEqual(a1);
  });

  it('accepts the 64-byte Ed25519 private key as IKM', async () => {
    const ikm = randomBytes(64);
    const ours = await hkdfSha256(ikm, utf8('c'), 32);
    expect(toHex(ours)).toBe(toHex(new Uint8Array(hkdfSync('sha256', ikm, EMPTY, utf8('c'), 32))));
  });

  it('rejects bad output lengths', async () => {
    const ikm = randomBytes(32);
    for (const len of [0, -1, 1.5, Number.NaN, 255 * 32 + 1]) {
      await expect(hkdfSha256(ikm, EMPTY, len)).rejects.toThrow(/output length/);
    }
    expect((await hkdfSha256(ikm, EMPTY, 255 * 32)).length).toBe(255 * 32);
  });
});

describe('counterKdfHmacSha256', () => {
  // SP 800-108 counter mode computed here with node:crypto: HMAC(key, BE32(0) ‖ context ‖ BE32(256)).
  function reference(key: Uint8Array, context: Uint8Array): string {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(0);
    const bits = Buffer.alloc(4);
    bits.writeUInt32BE(256);
    return createHmac('sha256', key).update(counter).update(context).update(bits).digest('hex');
  }

  it('matches an independent computation', async () => {
    for (const ctxLen of [0, 1, 16, 100]) {
      const key = randomBytes(32);
      const context = randomBytes(ctxLen);
      const out = await counterKdfHmacSha256(key, context);
      expect(out.length).toBe(32);
      expect(toHex(out)).toBe(reference(key, context));
    }
  });

  it('differs from plain HMAC and from HKDF of the same inputs', async () => {
    const key = randomBytes(32);
    const ctx = utf8('context');
    const out = toHex(await counterKdfHmacSha256(key, ctx));
    expect(out).not.toBe(createHmac('sha256', key).update(ctx).digest('hex'));
    expect(out).not.toBe(toHex(await hkdfSha256(key, ctx, 32)));
  });
});

describe('convergentNonce', () => {
  it('is the first 12 bytes of HMAC-SHA256(nonceKey, plaintext)', async () => {
    for (const ptLen of [0, 1, 1000]) {
      const nonceKey = randomBytes(32);
      const pt = randomBytes(ptLen);
      const nonce = await convergentNonce(nonceKey, pt);
      expect(nonce.length).toBe(12);
      expect(toHex(nonce)).toBe(createHmac('sha256', nonceKey).update(pt).digest('hex').slice(0, 24));
    }
  });

  it('matches RFC 4231 case 2 truncated (a fixed known answer)', async () => {
    const nonce = await convergentNonce(utf8('Jefe'), utf8('what do ya want for nothing?'));
    expect(toHex(nonce)).toBe('5bdcc146bf60754e6a042426');
    expect(nonce.byteLength).toBe(nonce.buffer.byteLength); // a compact copy, not a view
  });

  it('derives the convergent v3 nonce key from the tail of an HKDF of keyLen + 32 bytes', async () => {
    const versionKey = randomBytes(32);
    const context = utf8('user-42');
    const both = await hkdfSha256(versionKey, context, 32 + 32);
    const nonceKey = both.subarray(32);
    const pt = utf8('same plaintext');
    expect(await convergentNonce(nonceKey, pt)).toEqual(await convergentNonce(nonceKey, pt));
    expect(toHex(await convergentNonce(nonceKey, pt))).not.toBe(toHex(await convergentNonce(nonceKey, utf8('other'))));
  });
});
