// Transit asymmetric keys: every sign/verify option combination Vault has, cross-checked against a
// second implementation (node:crypto / @noble), RFC 8032 vector 1, malformed input and bad options.
import { beforeAll, describe, expect, it } from 'vitest';
import * as nc from 'node:crypto';
import { ed25519 as nobleEd25519 } from '@noble/curves/ed25519.js';
import { p256, p384, p521 } from '@noble/curves/nist.js';
import { sha3_256 } from '@noble/hashes/sha3.js';
import {
  AsymmetricError,
  ed25519FromSeed,
  generateKeyPair,
  rsaDecrypt,
  rsaEncrypt,
  sign,
  verify,
  type AsymmetricKey,
  type AsymmetricType,
  type SignOptions,
} from '../../../../src/crypto/transit/asymmetric';
import { digest, type HashName } from '../../../../src/crypto/transit/hashes';
import { fromHex, toHex, utf8 } from '../../../../src/crypto/encoding';

const HASHES: HashName[] = ['sha1', 'sha2-224', 'sha2-256', 'sha2-384', 'sha2-512', 'sha3-224', 'sha3-256', 'sha3-384', 'sha3-512'];
const NODE_HASH: Partial<Record<HashName, string>> = { sha1: 'sha1', 'sha2-224': 'sha224', 'sha2-256': 'sha256', 'sha2-384': 'sha384', 'sha2-512': 'sha512' };
const EC_TYPES = ['ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521'] as const;
const EC_SIZE = { 'ecdsa-p256': 32, 'ecdsa-p384': 48, 'ecdsa-p521': 66 } as const;
const EC_ORDER = { 'ecdsa-p256': p256.Point.Fn.ORDER, 'ecdsa-p384': p384.Point.Fn.ORDER, 'ecdsa-p521': p521.Point.Fn.ORDER } as const;
const WEB_HASH: Partial<Record<HashName, string>> = { sha1: 'SHA-1', 'sha2-256': 'SHA-256', 'sha2-384': 'SHA-384', 'sha2-512': 'SHA-512' };
// node:crypto's sign/verify in workerd silently ignore RSA_PKCS1_PSS_PADDING (they produce and accept
// PKCS#1 v1.5), so the second RSA-PSS implementation here is WebCrypto (BoringSSL).
const webPss = async (k: AsymmetricKey, hash: HashName, usage: 'sign' | 'verify') =>
  usage === 'sign'
    ? crypto.subtle.importKey('pkcs8', k.privateKey as Uint8Array, { name: 'RSA-PSS', hash: WEB_HASH[hash] as string }, false, ['sign'])
    : crypto.subtle.importKey('spki', k.publicKey, { name: 'RSA-PSS', hash: WEB_HASH[hash] as string }, false, ['verify']);

const opts = (o: Partial<SignOptions> = {}): SignOptions => ({
  hash: 'sha2-256',
  prehashed: false,
  signatureAlgorithm: 'pss',
  saltLength: 'auto',
  marshaling: 'asn1',
  ...o,
});
const hex = (s: string): Uint8Array => fromHex(s.replace(/\s+/g, '')) as Uint8Array;
const buf = (b: Uint8Array): Buffer => Buffer.from(b);
const pub = (k: AsymmetricKey) => ({ key: buf(k.publicKey), format: 'der' as const, type: 'spki' as const });
const priv = (k: AsymmetricKey) => ({ key: buf(k.privateKey as Uint8Array), format: 'der' as const, type: 'pkcs8' as const });
const flip = (b: Uint8Array, i = b.length - 1): Uint8Array => {
  const c = b.slice();
  c[i] ^= 0x01;
  return c;
};
const input = utf8('the quick brown fox jumps over the lazy dog');

const keys = {} as Record<AsymmetricType, AsymmetricKey>;
beforeAll(async () => {
  const types: AsymmetricType[] = ['ed25519', 'ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'rsa-2048', 'rsa-3072', 'rsa-4096'];
  const made = await Promise.all(types.map((t) => generateKeyPair(t)));
  types.forEach((t, i) => (keys[t] = made[i]));
}, 60_000);

describe('generateKeyPair', () => {
  it('makes PKCS#8 / SPKI pairs of the requested shape', () => {
    for (const [type, key] of Object.entries(keys)) {
      const details = nc.createPrivateKey(priv(key)).asymmetricKeyDetails;
      const pubFromPriv = nc.createPublicKey(nc.createPrivateKey(priv(key))).export({ type: 'spki', format: 'der' });
      expect(toHex(new Uint8Array(pubFromPriv))).toBe(toHex(key.publicKey));
      expect(key.type).toBe(type);
      if (type.startsWith('rsa-')) {
        expect(details?.modulusLength).toBe(Number(type.slice(4)));
        expect(details?.publicExponent).toBe(65537n);
      }
      if (type.startsWith('ecdsa-')) expect(details?.namedCurve).toBe({ 'ecdsa-p256': 'prime256v1', 'ecdsa-p384': 'secp384r1', 'ecdsa-p521': 'secp521r1' }[type]);
      if (type === 'ed25519') expect(nc.createPrivateKey(priv(key)).asymmetricKeyType).toBe('ed25519');
    }
  });

  it('refuses an unknown type', async () => {
    await expect(generateKeyPair('rsa-1024' as AsymmetricType)).rejects.toThrow(AsymmetricError);
  });
});

describe('ed25519', () => {
  // RFC 8032 §7.1, TEST 1
  const seed = hex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60');
  const publicRaw = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
  const signature =
    'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b';

  it('ed25519FromSeed reproduces RFC 8032 test 1', async () => {
    const key = await ed25519FromSeed(seed);
    expect(toHex(key.publicKey).endsWith(publicRaw)).toBe(true);
    const sig = await sign(key, new Uint8Array(0), opts());
    expect(toHex(sig)).toBe(signature);
    expect(await verify(key, new Uint8Array(0), sig, opts())).toBe(true);
  });

  it('signs the raw input whatever the hash, and cross-verifies with noble and node', async () => {
    const key = keys.ed25519;
    const raw = key.publicKey.subarray(key.publicKey.length - 32);
    for (const hash of HASHES) {
      const sig = await sign(key, input, opts({ hash }));
      expect(sig.length).toBe(64);
      expect(nobleEd25519.verify(sig, input, raw)).toBe(true);
      expect(nc.verify(null, input, pub(key), buf(sig))).toBe(true);
      expect(await verify(key, input, sig, opts({ hash: 'sha3-512' }))).toBe(true);
    }
    const nodeSig = new Uint8Array(nc.sign(null, input, priv(key)));
    expect(await verify(key, input, nodeSig, opts())).toBe(true);
  });

  it('rejects tampered and malformed signatures with false', async () => {
    const key = keys.ed25519;
    const sig = await sign(key, input, opts());
    expect(await verify(key, input, flip(sig), opts())).toBe(false);
    expect(await verify(key, flip(input), sig, opts())).toBe(false);
    expect(await verify(key, input, sig.subarray(0, 63), opts())).toBe(false);
    expect(await verify(key, input, new Uint8Array(0), opts())).toBe(false);
    expect(await verify(key, input, new Uint8Array(64).fill(0xff), opts())).toBe(false);
  });

  it('refuses a seed of the wrong length', async () => {
    await expect(ed25519FromSeed(new Uint8Array(31))).rejects.toThrow(AsymmetricError);
    await expect(ed25519FromSeed(new Uint8Array(64))).rejects.toThrow(AsymmetricError);
  });
});

describe.each(EC_TYPES)('%s', (type) => {
  const size = EC_SIZE[type];

  it('round-trips every hash, prehashed or not, asn1 and jws', async () => {
    const key = keys[type];
    for (const hash of HASHES) {
      for (const prehashed of [false, true]) {
        const msg = prehashed ? await digest(hash, input) : input;
        for (const marshaling of ['asn1', 'jws'] as const) {
          const o = opts({ hash, prehashed, marshaling });
          const sig = await sign(key, msg, o);
          if (marshaling === 'jws') expect(sig.length).toBe(2 * size);
          else expect(sig[0]).toBe(0x30);
          expect(await verify(key, msg, sig, o)).toBe(true);
          expect(await verify(key, flip(msg, 0), sig, o)).toBe(false); // byte 0: digests longer than the curve are truncated
          expect(await verify(key, msg, flip(sig, marshaling === 'jws' ? size - 1 : sig.length - 1), o)).toBe(false);
          // The same signature is the signature of the digest when prehashed.
          if (!prehashed) expect(await verify(key, await digest(hash, input), sig, { ...o, prehashed: true })).toBe(true);
        }
      }
    }
  });

  it('cross-verifies with node:crypto both ways (WebCrypto, noble and sha2-224 paths)', async () => {
    const key = keys[type];
    for (const hash of ['sha1', 'sha2-224', 'sha2-256', 'sha2-384', 'sha2-512'] as const) {
      const nodeHash = NODE_HASH[hash] as string;
      const der = await sign(key, input, opts({ hash }));
      expect(nc.verify(nodeHash, input, { ...pub(key), dsaEncoding: 'der' }, buf(der))).toBe(true);
      const jws = await sign(key, input, opts({ hash, marshaling: 'jws' }));
      expect(nc.verify(nodeHash, input, { ...pub(key), dsaEncoding: 'ieee-p1363' }, buf(jws))).toBe(true);
      // prehashed goes through noble: node checks it over the original input
      const pre = await sign(key, await digest(hash, input), opts({ hash, prehashed: true }));
      expect(nc.verify(nodeHash, input, { ...pub(key), dsaEncoding: 'der' }, buf(pre))).toBe(true);
      const nodeSig = new Uint8Array(nc.sign(nodeHash, input, { ...priv(key), dsaEncoding: 'der' }));
      expect(await verify(key, input, nodeSig, opts({ hash }))).toBe(true);
      expect(await verify(key, await digest(hash, input), nodeSig, opts({ hash, prehashed: true }))).toBe(true);
    }
  });

  it('SHA-3 signs the SHA-3 digest (checked against @noble/hashes)', async () => {
    const key = keys[type];
    const sig = await sign(key, input, opts({ hash: 'sha3-256' }));
    expect(await verify(key, sha3_256(input), sig, opts({ hash: 'sha2-256', prehashed: true }))).toBe(true);
  });

  it('accepts high-S signatures, as Go and OpenSSL do', async () => {
    const key = keys[type];
    const jws = await sign(key, input, opts({ marshaling: 'jws' }));
    const s = BigInt('0x' + toHex(jws.subarray(size)));
    const highS = hex((EC_ORDER[type] - s).toString(16).padStart(2 * size, '0'));
    const flipped = new Uint8Array(2 * size);
    flipped.set(jws.subarray(0, size));
    flipped.set(highS, size);
    for (const prehashed of [false, true]) {
      const msg = prehashed ? await digest('sha2-256', input) : input;
      expect(await verify(key, msg, flipped, opts({ marshaling: 'jws', prehashed }))).toBe(true);
    }
  });

  it('treats malformed signatures as invalid, not as errors', async () => {
    const key = keys[type];
    const der = await sign(key, input, opts());
    const asn1 = opts();
    const jws = opts({ marshaling: 'jws' });
    expect(await verify(key, input, new Uint8Array(0), asn1)).toBe(false);
    expect(await verify(key, input, utf8('not der at all'), asn1)).toBe(false);
    expect(await verify(key, input, new Uint8Array([...der, 0]), asn1)).toBe(false); // trailing data
    expect(await verify(key, input, der.subarray(0, der.length - 1), asn1)).toBe(false);
    // non-minimal INTEGER: r with a redundant leading zero
    const r = hex('7f'.repeat(size));
    const nonMinimal = hex(`30 ${(2 * (size + 3)).toString(16)} 02 ${(size + 1).toString(16)} 00 ${toHex(r)} 02 ${(size + 1).toString(16)} 00 ${toHex(r)}`);
    if (size < 60) expect(await verify(key, input, nonMinimal, asn1)).toBe(false);
    // negative r
    expect(await verify(key, input, hex('3006020180020101'), asn1)).toBe(false);
    expect(await verify(key, input, hex('3006020100020100'), asn1)).toBe(false); // zeros
    expect(await verify(key, input, new Uint8Array(0), jws)).toBe(false);
    expect(await verify(key, input, new Uint8Array(10), jws)).toBe(false);
    expect(await verify(key, input, new Uint8Array(4 * size).fill(0xff), jws)).toBe(false); // r, s too large
    expect(await verify(key, input, new Uint8Array(2 * size).fill(0xff), jws)).toBe(false); // r, s ≥ n
    expect(await verify(key, input, new Uint8Array(2 * size).fill(0xff), opts({ marshaling: 'jws', prehashed: true }))).toBe(false);
  });
});

describe('RSA signatures', () => {
  const SALTS: SignOptions['saltLength'][] = ['auto', 'hash', 0, -1, 20];

  it('round-trips PSS for every hash, prehashed or not, every salt option (rsa-2048)', async () => {
    const key = keys['rsa-2048'];
    for (const hash of HASHES) {
      for (const prehashed of [false, true]) {
        const msg = prehashed ? await digest(hash, input) : input;
        for (const saltLength of SALTS) {
          const o = opts({ hash, prehashed, saltLength });
          const sig = await sign(key, msg, o);
          expect(sig.length).toBe(256);
          expect(await verify(key, msg, sig, o)).toBe(true);
          expect(await verify(key, msg, sig, { ...o, saltLength: 'auto' })).toBe(true);
          expect(await verify(key, flip(msg), sig, o)).toBe(false);
          expect(await verify(key, msg, flip(sig, 100), o)).toBe(false);
        }
      }
      // salt 'auto' signs with the maximum salt; 'hash' with the digest length
      const hLen = (await digest(hash, input)).length;
      const max = 256 - hLen - 2;
      expect(await verify(key, input, await sign(key, input, opts({ hash })), opts({ hash, saltLength: max }))).toBe(true);
      expect(await verify(key, input, await sign(key, input, opts({ hash, saltLength: 'hash' })), opts({ hash, saltLength: hLen }))).toBe(true);
      expect(await verify(key, input, await sign(key, input, opts({ hash, saltLength: 20 })), opts({ hash, saltLength: 21 }))).toBe(false);
      expect(await verify(key, input, await sign(key, input, opts({ hash, saltLength: max })), opts({ hash, saltLength: max }))).toBe(true);
    }
  });

  it('round-trips PKCS#1 v1.5 for every hash, prehashed or not, and hash none', async () => {
    const key = keys['rsa-2048'];
    for (const hash of HASHES) {
      for (const prehashed of [false, true]) {
        const msg = prehashed ? await digest(hash, input) : input;
        const o = opts({ hash, prehashed, signatureAlgorithm: 'pkcs1v15' });
        const sig = await sign(key, msg, o);
        expect(await verify(key, msg, sig, o)).toBe(true);
        expect(await verify(key, flip(msg), sig, o)).toBe(false);
        // deterministic: the prehashed and the hashing paths agree byte for byte
        if (!prehashed) expect(toHex(await sign(key, await digest(hash, input), { ...o, prehashed: true }))).toBe(toHex(sig));
      }
    }
    const none = opts({ hash: 'none', prehashed: true, signatureAlgorithm: 'pkcs1v15' });
    const raw = utf8('raw bytes, no DigestInfo');
    const sig = await sign(key, raw, none);
    expect(await verify(key, raw, sig, none)).toBe(true);
    expect(await verify(key, flip(raw), sig, none)).toBe(false);
    expect(new Uint8Array(nc.publicDecrypt({ ...pub(key), padding: nc.constants.RSA_PKCS1_PADDING }, buf(sig)))).toEqual(raw);
  });

  it('uses the DigestInfo of RFC 8017 §9.2 (and the NIST OIDs for SHA-3)', async () => {
    const key = keys['rsa-2048'];
    const prefixes: Partial<Record<HashName, string>> = {
      sha1: '3021300906052b0e03021a05000414',
      'sha2-224': '302d300d06096086480165030402040500041c',
      'sha2-256': '3031300d060960864801650304020105000420',
      'sha2-384': '3041300d060960864801650304020205000430',
      'sha2-512': '3051300d060960864801650304020305000440',
      'sha3-256': '3031300d060960864801650304020805000420',
      'sha3-512': '3051300d060960864801650304020a05000440',
    };
    for (const [hash, prefix] of Object.entries(prefixes) as [HashName, string][]) {
      const sig = await sign(key, input, opts({ hash, signatureAlgorithm: 'pkcs1v15' }));
      const t = toHex(new Uint8Array(nc.publicDecrypt({ ...pub(key), padding: nc.constants.RSA_PKCS1_PADDING }, buf(sig))));
      expect(t).toBe(prefix + toHex(await digest(hash, input)));
    }
  });

  it('cross-verifies PSS with WebCrypto both ways (raw EMSA-PSS path and WebCrypto path)', async () => {
    const key = keys['rsa-2048'];
    for (const hash of ['sha1', 'sha2-256', 'sha2-384', 'sha2-512'] as const) {
      const d = await digest(hash, input);
      const max = 256 - d.length - 2;
      const signer = await webPss(key, hash, 'sign');
      const verifier = await webPss(key, hash, 'verify');
      for (const [saltLength, exact] of [['auto', max], ['hash', d.length], [20, 20], [max, max]] as const) {
        for (const [msg, prehashed] of [[input, false], [d, true]] as const) {
          const ours = await sign(key, msg, opts({ hash, prehashed, saltLength }));
          expect(await crypto.subtle.verify({ name: 'RSA-PSS', saltLength: exact }, verifier, ours, input)).toBe(true);
        }
        const theirs = new Uint8Array(await crypto.subtle.sign({ name: 'RSA-PSS', saltLength: exact }, signer, input));
        expect(await verify(key, input, theirs, opts({ hash, saltLength }))).toBe(true);
        expect(await verify(key, input, theirs, opts({ hash }))).toBe(true);
        expect(await verify(key, d, theirs, opts({ hash, prehashed: true }))).toBe(true);
        expect(await verify(key, d, theirs, opts({ hash, prehashed: true, saltLength: exact }))).toBe(true);
        expect(await verify(key, d, theirs, opts({ hash, prehashed: true, saltLength: exact - 1 }))).toBe(false);
      }
      // salt 0 is deterministic, so both implementations must agree byte for byte
      const zeroSalt = new Uint8Array(await crypto.subtle.sign({ name: 'RSA-PSS', saltLength: 0 }, signer, input));
      expect(await verify(key, d, zeroSalt, opts({ hash, prehashed: true }))).toBe(true);
    }
  });

  it('cross-verifies PKCS#1 v1.5 with node:crypto both ways', async () => {
    const key = keys['rsa-2048'];
    const PKCS1 = nc.constants.RSA_PKCS1_PADDING;
    for (const hash of ['sha1', 'sha2-224', 'sha2-256', 'sha2-384', 'sha2-512'] as const) {
      const nodeHash = NODE_HASH[hash] as string;
      const d = await digest(hash, input);
      const nodeSig = nc.sign(nodeHash, input, { ...priv(key), padding: PKCS1 });
      for (const [msg, prehashed] of [[input, false], [d, true]] as const) {
        const o = opts({ hash, prehashed, signatureAlgorithm: 'pkcs1v15' });
        expect(toHex(await sign(key, msg, o))).toBe(nodeSig.toString('hex'));
        expect(await verify(key, msg, new Uint8Array(nodeSig), o)).toBe(true);
      }
    }
  });

  it('produces real PSS encodings (trailer 0xbc), never PKCS#1 v1.5', async () => {
    const key = keys['rsa-2048'];
    for (const hash of HASHES) {
      for (const prehashed of [false, true]) {
        const msg = prehashed ? await digest(hash, input) : input;
        const sig = await sign(key, msg, opts({ hash, prehashed }));
        const em = new Uint8Array(nc.publicEncrypt({ ...pub(key), padding: nc.constants.RSA_NO_PADDING }, buf(sig)));
        expect(em[255]).toBe(0xbc);
        expect(em[0] >> 7).toBe(0);
      }
    }
  });

  it.each(['rsa-3072', 'rsa-4096'] as const)('%s: every hash, both schemes, prehashed or not', async (type) => {
    const key = keys[type];
    const k = Number(type.slice(4)) / 8;
    for (const hash of HASHES) {
      for (const prehashed of [false, true]) {
        const msg = prehashed ? await digest(hash, input) : input;
        for (const o of [opts({ hash, prehashed }), opts({ hash, prehashed, saltLength: 'hash' }), opts({ hash, prehashed, signatureAlgorithm: 'pkcs1v15' })]) {
          const sig = await sign(key, msg, o);
          expect(sig.length).toBe(k);
          expect(await verify(key, msg, sig, o)).toBe(true);
          expect(await verify(key, msg, flip(sig, 10), o)).toBe(false);
        }
      }
    }
    const max = k - 64 - 2;
    const sig = await sign(key, await digest('sha2-512', input), opts({ hash: 'sha2-512', prehashed: true }));
    expect(await crypto.subtle.verify({ name: 'RSA-PSS', saltLength: max }, await webPss(key, 'sha2-512', 'verify'), sig, input)).toBe(true);
  });

  it('validates the PSS salt length like Vault', async () => {
    const key = keys['rsa-2048'];
    const max = 256 - 32 - 2;
    expect(await verify(key, input, await sign(key, input, opts({ saltLength: max })), opts({ saltLength: max }))).toBe(true);
    await expect(sign(key, input, opts({ saltLength: max + 1 }))).rejects.toThrow(`requested salt length ${max + 1} is invalid`);
    await expect(verify(key, input, new Uint8Array(256), opts({ saltLength: max + 1 }))).rejects.toThrow(AsymmetricError);
    await expect(sign(key, input, opts({ hash: 'sha2-512', saltLength: 256 - 64 - 1 }))).rejects.toThrow('requested salt length 191 is invalid');
    await expect(sign(key, input, opts({ saltLength: -2 }))).rejects.toThrow('salt length is invalid: -2');
    await expect(sign(key, input, opts({ saltLength: 1.5 }))).rejects.toThrow(AsymmetricError);
    await expect(verify(key, input, new Uint8Array(256), opts({ saltLength: -7 }))).rejects.toThrow('salt length is invalid: -7');
    // salt options only matter for PSS
    const pkcs = opts({ signatureAlgorithm: 'pkcs1v15', saltLength: 9999 });
    expect(await verify(key, input, await sign(key, input, pkcs), pkcs)).toBe(true);
  });

  it('treats malformed signatures as invalid, not as errors', async () => {
    const key = keys['rsa-2048'];
    for (const o of [
      opts(),
      opts({ saltLength: 32 }),
      opts({ prehashed: true }),
      opts({ hash: 'sha3-256' }),
      opts({ signatureAlgorithm: 'pkcs1v15' }),
      opts({ hash: 'sha3-256', signatureAlgorithm: 'pkcs1v15' }),
      opts({ hash: 'none', prehashed: true, signatureAlgorithm: 'pkcs1v15' }),
    ]) {
      expect(await verify(key, input, new Uint8Array(0), o)).toBe(false);
      expect(await verify(key, input, new Uint8Array(255).fill(1), o)).toBe(false);
      expect(await verify(key, input, new Uint8Array(257).fill(1), o)).toBe(false);
      expect(await verify(key, input, new Uint8Array(256).fill(0xff), o)).toBe(false); // ≥ n
      expect(await verify(key, input, new Uint8Array(256).fill(1), o)).toBe(false);
    }
    // a prehashed "digest" of the wrong length
    const good = await sign(key, await digest('sha2-256', input), opts({ prehashed: true }));
    expect(await verify(key, input, good, opts({ prehashed: true }))).toBe(false);
  });

  it('refuses option combinations Vault refuses', async () => {
    const key = keys['rsa-2048'];
    const msg = 'hash_algorithm=none requires both prehashed=true and signature_algorithm=pkcs1v15';
    await expect(sign(key, input, opts({ hash: 'none', prehashed: true }))).rejects.toThrow(msg);
    await expect(sign(key, input, opts({ hash: 'none', signatureAlgorithm: 'pkcs1v15' }))).rejects.toThrow(msg);
    await expect(verify(key, input, new Uint8Array(256), opts({ hash: 'none' }))).rejects.toThrow(msg);
    await expect(sign(keys['ecdsa-p256'], input, opts({ hash: 'none' }))).rejects.toThrow(msg);
    await expect(sign(key, input, opts({ marshaling: 'der' as 'asn1' }))).rejects.toThrow('requested marshaling type is invalid');
    await expect(sign(key, input, opts({ signatureAlgorithm: 'raw' as 'pss' }))).rejects.toThrow('unsupported rsa signature algorithm raw');
    await expect(verify(key, input, new Uint8Array(256), opts({ signatureAlgorithm: 'raw' as 'pss' }))).rejects.toThrow(AsymmetricError);
    // prehashed input that is not a digest of the named hash
    await expect(sign(key, input, opts({ prehashed: true }))).rejects.toThrow(AsymmetricError);
    await expect(sign(key, input, opts({ prehashed: true, signatureAlgorithm: 'pkcs1v15' }))).rejects.toThrow(AsymmetricError);
    // hash none with more than the modulus can carry
    await expect(sign(key, new Uint8Array(246), opts({ hash: 'none', prehashed: true, signatureAlgorithm: 'pkcs1v15' }))).rejects.toThrow(
      'message too long',
    );
  });

  it('refuses key types that do not sign', async () => {
    const hmac = { ...keys['rsa-2048'], type: 'hmac' as AsymmetricType };
    await expect(sign(hmac, input, opts())).rejects.toThrow('message signing not supported for key type hmac');
    await expect(verify(hmac, input, new Uint8Array(256), opts())).rejects.toThrow('message verification not supported for key type hmac');
  });

  it('refuses to sign with a public-only key but still verifies', async () => {
    for (const type of ['rsa-2048', 'ecdsa-p256', 'ed25519'] as const) {
      const full = keys[type];
      const publicOnly: AsymmetricKey = { type, privateKey: null, publicKey: full.publicKey };
      await expect(sign(publicOnly, input, opts())).rejects.toThrow('requested version for signing does not contain a private part');
      expect(await verify(publicOnly, input, await sign(full, input, opts()), opts())).toBe(true);
    }
  });
});

describe('RSA encryption', () => {
  it('round-trips OAEP and PKCS#1 v1.5 on every size', async () => {
    for (const type of ['rsa-2048', 'rsa-3072', 'rsa-4096'] as const) {
      const key = keys[type];
      const k = Number(type.slice(4)) / 8;
      for (const [padding, max] of [['oaep', k - 66], ['pkcs1v15', k - 11]] as const) {
        for (const pt of [new Uint8Array(0), input, new Uint8Array(max).fill(7)]) {
          const ct = await rsaEncrypt(key, pt, padding);
          expect(ct.length).toBe(k);
          expect(await rsaDecrypt(key, ct, padding)).toEqual(pt);
        }
        await expect(rsaEncrypt(key, new Uint8Array(max + 1), padding)).rejects.toThrow('message too long for RSA key size');
      }
    }
  });

  it('interoperates with node:crypto (OAEP SHA-256, PKCS#1 v1.5)', async () => {
    const key = keys['rsa-2048'];
    const OAEP = { padding: nc.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' };
    const PKCS1 = { padding: nc.constants.RSA_PKCS1_PADDING };
    expect(await rsaDecrypt(key, new Uint8Array(nc.publicEncrypt({ ...pub(key), ...OAEP }, buf(input))), 'oaep')).toEqual(input);
    expect(new Uint8Array(nc.privateDecrypt({ ...priv(key), ...OAEP }, buf(await rsaEncrypt(key, input, 'oaep'))))).toEqual(input);
    expect(await rsaDecrypt(key, new Uint8Array(nc.publicEncrypt({ ...pub(key), ...PKCS1 }, buf(input))), 'pkcs1v15')).toEqual(input);
    expect(new Uint8Array(nc.privateDecrypt({ ...priv(key), ...PKCS1 }, buf(await rsaEncrypt(key, input, 'pkcs1v15'))))).toEqual(input);
    // OAEP with SHA-1 (a different hash) does not decrypt
    const sha1 = nc.publicEncrypt({ ...pub(key), padding: nc.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha1' }, buf(input));
    expect(await rsaDecrypt(key, new Uint8Array(sha1), 'oaep')).toBeNull();
  });

  it('returns null for ciphertexts that do not decrypt', async () => {
    const key = keys['rsa-2048'];
    for (const padding of ['oaep', 'pkcs1v15'] as const) {
      const ct = await rsaEncrypt(key, input, padding);
      expect(await rsaDecrypt(key, flip(ct, 5), padding)).toBeNull();
      expect(await rsaDecrypt(key, ct.subarray(1), padding)).toBeNull();
      expect(await rsaDecrypt(key, new Uint8Array(0), padding)).toBeNull();
      expect(await rsaDecrypt(key, new Uint8Array(256).fill(0xff), padding)).toBeNull();
      expect(await rsaDecrypt(keys['rsa-3072'], ct, padding)).toBeNull();
    }
    expect(await rsaDecrypt(key, await rsaEncrypt(key, input, 'pkcs1v15'), 'oaep')).toBeNull();
  });

  it('refuses non-RSA keys, public-only decryption and unknown paddings', async () => {
    await expect(rsaEncrypt(keys['ecdsa-p256'], input, 'oaep')).rejects.toThrow('message encryption not supported for key type ecdsa-p256');
    await expect(rsaDecrypt(keys.ed25519, input, 'oaep')).rejects.toThrow(AsymmetricError);
    const publicOnly: AsymmetricKey = { ...keys['rsa-2048'], privateKey: null };
    const ct = await rsaEncrypt(publicOnly, input, 'oaep');
    expect(await rsaDecrypt(keys['rsa-2048'], ct, 'oaep')).toEqual(input);
    await expect(rsaDecrypt(publicOnly, ct, 'oaep')).rejects.toThrow(AsymmetricError);
    await expect(rsaEncrypt(keys['rsa-2048'], input, 'raw' as 'oaep')).rejects.toThrow('unknown padding scheme: raw');
    await expect(rsaDecrypt(keys['rsa-2048'], ct, 'raw' as 'oaep')).rejects.toThrow('unknown padding scheme: raw');
  });
});
