import { createHash, createHmac } from 'node:crypto';
import { hmac as nobleHmac } from '@noble/hashes/hmac.js';
import { sha224 as nobleSha224, sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { describe, expect, it } from 'vitest';
import { fromHex, toHex, utf8 } from '../../../../src/crypto/encoding';
import { randomBytes } from '../../../../src/crypto/random';
import { HASH_NAMES, type HashName, digest, hashLength, hmac, parseHashName } from '../../../../src/crypto/transit/hashes';

const hex = (s: string): Uint8Array => fromHex(s) as Uint8Array;
const NODE_NAME: Partial<Record<HashName, string>> = {
  sha1: 'sha1',
  'sha2-224': 'sha224',
  'sha2-256': 'sha256',
  'sha2-384': 'sha384',
  'sha2-512': 'sha512',
};

describe('parseHashName / hashLength', () => {
  it('accepts exactly Vault names', () => {
    for (const h of HASH_NAMES) expect(parseHashName(h)).toBe(h);
    expect(HASH_NAMES).toHaveLength(9);
  });

  it('rejects anything else', () => {
    for (const bad of ['', 'SHA2-256', 'sha256', 'sha2_256', 'sha2-256 ', 'none', 'sha3', 'md5', 'SHA1']) {
      expect(parseHashName(bad)).toBeNull();
    }
  });

  it('gives each digest length', async () => {
    const want = { sha1: 20, 'sha2-224': 28, 'sha2-256': 32, 'sha2-384': 48, 'sha2-512': 64, 'sha3-224': 28, 'sha3-256': 32, 'sha3-384': 48, 'sha3-512': 64 };
    for (const h of HASH_NAMES) {
      expect(hashLength(h)).toBe(want[h]);
      expect((await digest(h, utf8('x'))).length).toBe(want[h]);
      expect((await hmac(h, utf8('k'), utf8('x'))).length).toBe(want[h]);
    }
  });
});

describe('digest', () => {
  // FIPS 180-2 / FIPS 202 example values for the message "abc".
  const ABC: Record<HashName, string> = {
    sha1: 'a9993e364706816aba3e25717850c26c9cd0d89d',
    'sha2-224': '23097d223405d8228642a477bda255b32aadbce4bda0b3f7e36c9da7',
    'sha2-256': 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad',
    'sha2-384':
      'cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7',
    'sha2-512':
      'ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f',
    'sha3-224': 'e642824c3f8cf24ad09234ee7d3c766fc9a3a5168d0c94ad73b46fdf',
    'sha3-256': '3a985da74fe225b2045c172d6bd390bd855f086e3e9d525b46bfe24511431532',
    'sha3-384':
      'ec01498288516fc926459f58e2c6ad8df9b473cb0fc08c2596da7cf0e49be4b298d88cea927ac7f539f1edf228376d25',
    'sha3-512':
      'b751850b1a57168a5693cd924b6b096e08f621827444f70d884f5d0240d2712e10e116e9192af3c91a7ec57647e3934057340b4cf408d5a56592f8274eec53f0',
  };

  it.each(HASH_NAMES.map((h) => [h]))('%s of "abc" matches the standard', async (h) => {
    const out = await digest(h, utf8('abc'));
    expect(toHex(out)).toBe(ABC[h]);
    expect(out).toBeInstanceOf(Uint8Array);
    expect(Buffer.isBuffer(out)).toBe(false);
  });

  it('hashes the empty message (SHA-256 and SHA3-256 known answers)', async () => {
    expect(toHex(await digest('sha2-256', new Uint8Array(0)))).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(toHex(await digest('sha3-256', new Uint8Array(0)))).toBe('a7ffc6f8bf1ed76651c14756a061d662f580ff4de43b49fa82d80a4b80f8434a');
  });

  it('agrees with node:crypto for sha1/sha2, on a subarray view too', async () => {
    const big = randomBytes(3000);
    const view = big.subarray(7, 2999);
    for (const h of HASH_NAMES) {
      const name = NODE_NAME[h];
      if (!name) continue;
      expect(toHex(await digest(h, view))).toBe(createHash(name).update(view).digest('hex'));
    }
  });
});

describe('hmac', () => {
  // RFC 4231 test cases 1, 2 and 6 (a key longer than the block size).
  const RFC4231 = [
    {
      key: hex('0b'.repeat(20)),
      data: utf8('Hi There'),
      out: {
        'sha2-224': '896fb1128abbdf196832107cd49df33f47b4b1169912ba4f53684b22',
        'sha2-256': 'b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7',
        'sha2-384':
          'afd03944d84895626b0825f4ab46907f15f9dadbe4101ec682aa034c7cebc59cfaea9ea9076ede7f4af152e8b2fa9cb6',
        'sha2-512':
          '87aa7cdea5ef619d4ff0b4241a1d6cb02379f4e2ce4ec2787ad0b30545e17cdedaa833b7d6b8a702038b274eaea3f4e4be9d914eeb61f1702e696c203a126854',
      },
    },
    {
      key: utf8('Jefe'),
      data: utf8('what do ya want for nothing?'),
      out: {
        'sha2-224': 'a30e01098bc6dbbf45690f3a7e9e6d0f8bbea2a39e6148008fd05e44',
        'sha2-256': '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
        'sha2-384':
          'af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649',
        'sha2-512':
          '164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737',
      },
    },
    {
      key: hex('aa'.repeat(131)),
      data: utf8('Test Using Larger Than Block-Size Key - Hash Key First'),
      out: {
        'sha2-224': '95e9a0db962095adaebe9b2d6f0dbce2d499f112f2d2b7273fa6870e',
        'sha2-256': '60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54',
        'sha2-384':
          '4ece084485813e9088d2c63a041bc5b44f9ef1012a2b588f3cd11f05033ac4c60c2ef6ab4030fe8296248df163f44952',
        'sha2-512':
          '80b24263c7c1a3ebb71493c1dd7be8b49b46d1f41b4aeec1121b013783f8f3526b56d037e05f2598bd0fd2215d6a1e5295e64f73f63f0aec8b915a985d786598',
      },
    },
  ] as const;

  it('matches RFC 4231 for sha2-224/256/384/512', async () => {
    for (const tc of RFC4231) {
      for (const [h, want] of Object.entries(tc.out)) {
        expect(toHex(await hmac(h as HashName, tc.key, tc.data))).toBe(want);
      }
    }
  });

  // NIST CSRC "HMAC_SHA3" examples: key 0x00..0x1f, "Sample message for keylen<blocklen".
  it('matches the NIST HMAC-SHA3 examples', async () => {
    const key = hex(Array.from({ length: 32 }, (_, i) => i.toString(16).padStart(2, '0')).join(''));
    const msg = utf8('Sample message for keylen<blocklen');
    expect(toHex(await hmac('sha3-224', key.subarray(0, 28), msg))).toBe('332cfd59347fdb8e576e77260be4aba2d6dc53117b3bfb52c6d18c04');
    expect(toHex(await hmac('sha3-256', key, msg))).toBe('4fe8e202c4f058e8dddc23d8c34e467343e23555e24fc2f025d598f558f67205');
  });

  it('agrees with node:crypto for sha1/sha2 (WebCrypto path) across keys and hashes sharing a key', async () => {
    const key = randomBytes(32);
    const data = randomBytes(1000);
    for (let round = 0; round < 2; round++) {
      for (const h of HASH_NAMES) {
        const name = NODE_NAME[h];
        if (!name) continue;
        expect(toHex(await hmac(h, key, data))).toBe(createHmac(name, key).update(data).digest('hex'));
      }
    }
    const other = randomBytes(64);
    expect(toHex(await hmac('sha2-256', other, data))).toBe(createHmac('sha256', other).update(data).digest('hex'));
  });

  it('accepts an empty key (which WebCrypto refuses) and empty data', async () => {
    const empty = new Uint8Array(0);
    expect(toHex(await hmac('sha2-256', empty, empty))).toBe(toHex(nobleHmac(nobleSha256, empty, empty)));
    expect(toHex(await hmac('sha2-224', empty, utf8('m')))).toBe(toHex(nobleHmac(nobleSha224, empty, utf8('m'))));
    // RFC 2104 with an empty key and message, HMAC-SHA256 (widely published value).
    expect(toHex(await hmac('sha2-256', empty, empty))).toBe('b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad');
    for (const h of HASH_NAMES) expect((await hmac(h, empty, utf8('x'))).length).toBe(hashLength(h));
  });

  it('returns plain Uint8Arrays from every backend', async () => {
    for (const h of HASH_NAMES) {
      const out = await hmac(h, utf8('key'), utf8('data'));
      expect(Buffer.isBuffer(out)).toBe(false);
    }
  });
});
