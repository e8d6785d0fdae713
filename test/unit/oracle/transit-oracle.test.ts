// Checks the transit oracle itself (test/global/transit-oracle-ops.ts) before anyone trusts it:
// published known-answer vectors through its ops, round trips between ops, and cross-checks
// against implementations in workerd (WebCrypto, @noble/*, workerd's node:crypto).
import { Buffer } from 'node:buffer';
import * as nodeCrypto from 'node:crypto';
import { aeskwp } from '@noble/ciphers/aes.js';
import { ed25519 } from '@noble/curves/ed25519.js';
import { hmac as nobleHmac } from '@noble/hashes/hmac.js';
import { sha3_224, sha3_256, sha3_384, sha3_512 } from '@noble/hashes/sha3.js';
import { beforeAll, describe, expect, it } from 'vitest';
import { oracle } from '../../helpers/transit-oracle';

const fromHex = (s: string): Uint8Array => new Uint8Array(Buffer.from(s.replace(/\s+/g, ''), 'hex'));
const hexOf = (u: Uint8Array | ArrayBuffer): string => Buffer.from(u instanceof ArrayBuffer ? new Uint8Array(u) : u).toString('hex');
const b64 = (u: Uint8Array | string): string => Buffer.from(typeof u === 'string' ? Buffer.from(u) : u).toString('base64');
const unb64 = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'base64'));
const payloadOf = (v: string): Uint8Array => unb64(v.replace(/^vault:v\d+:/, ''));
const pemDer = (pem: string): Uint8Array => unb64(pem.replace(/-----[^-]+-----/g, '').replace(/\s+/g, ''));
const rand = (n: number): Uint8Array => crypto.getRandomValues(new Uint8Array(n));
const subtle = crypto.subtle;

interface KeyPair {
  private_pem: string;
  public_pem: string;
  pkcs8_der: string;
  ed25519_private64?: string;
  ed25519_public?: string;
}

const keys: Record<string, KeyPair> = {};
beforeAll(async () => {
  const types = ['rsa-2048', 'rsa-4096', 'ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'ed25519'];
  const pairs = await Promise.all(types.map((type) => oracle<KeyPair>('keygen', { type })));
  types.forEach((type, i) => (keys[type] = pairs[i]));
});

describe('oracle transport', () => {
  it('answers 404 for an unknown op and 400 for a non-object body', async () => {
    await expect(oracle('no-such-op', {})).rejects.toThrow(/\(404\)/);
    await expect(oracle('hmac', [] as unknown as Record<string, unknown>)).rejects.toThrow(/body must be a JSON object/);
  });
});

describe('keygen', () => {
  it('makes symmetric and hmac keys of the documented sizes', async () => {
    for (const [type, len] of [['aes128-gcm96', 16], ['aes256-gcm96', 32], ['chacha20-poly1305', 32], ['hmac', 32]] as const)
      expect(unb64((await oracle<{ key: string }>('keygen', { type })).key)).toHaveLength(len);
    expect(unb64((await oracle<{ key: string }>('keygen', { type: 'hmac', key_size: 64 })).key)).toHaveLength(64);
    await expect(oracle('keygen', { type: 'hmac', key_size: 16 })).rejects.toThrow(/key_size/);
    await expect(oracle('keygen', { type: 'hmac', key_size: 513 })).rejects.toThrow(/key_size/);
    await expect(oracle('keygen', { type: 'aes512-gcm96' })).rejects.toThrow(/unsupported key type/);
  });

  it('makes RSA keys WebCrypto reads with the right modulus', async () => {
    const rsa3072 = await oracle<KeyPair>('keygen', { type: 'rsa-3072' });
    for (const [pair, bits] of [[keys['rsa-2048'], 2048], [rsa3072, 3072], [keys['rsa-4096'], 4096]] as const) {
      const k = await subtle.importKey('pkcs8', unb64(pair.pkcs8_der), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, true, ['sign']);
      expect((k.algorithm as { modulusLength: number }).modulusLength).toBe(bits);
      expect(pair.private_pem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
      expect(pair.public_pem).toMatch(/^-----BEGIN PUBLIC KEY-----\n[\s\S]+\n-----END PUBLIC KEY-----\n$/);
    }
  });

  it('makes EC keys on the named curves', async () => {
    for (const [type, curve] of [['ecdsa-p256', 'P-256'], ['ecdsa-p384', 'P-384'], ['ecdsa-p521', 'P-521']]) {
      await subtle.importKey('pkcs8', unb64(keys[type].pkcs8_der), { name: 'ECDSA', namedCurve: curve }, false, ['sign']);
      await subtle.importKey('spki', pemDer(keys[type].public_pem), { name: 'ECDSA', namedCurve: curve }, false, ['verify']);
    }
  });

  it("makes Ed25519 keys whose 64-byte form is seed ‖ public (noble derives the same public key)", async () => {
    const k = keys.ed25519;
    const priv64 = unb64(k.ed25519_private64 ?? '');
    expect(priv64).toHaveLength(64);
    expect(hexOf(priv64.subarray(32))).toBe(hexOf(unb64(k.ed25519_public ?? '')));
    expect(hexOf(ed25519.getPublicKey(priv64.subarray(0, 32)))).toBe(hexOf(priv64.subarray(32)));
    // A WebCrypto signature with the PKCS#8 form verifies through the oracle.
    const wk = await subtle.importKey('pkcs8', unb64(k.pkcs8_der), { name: 'Ed25519' }, false, ['sign']);
    const msg = rand(40);
    const sig = new Uint8Array(await subtle.sign('Ed25519', wk, msg));
    const { valid } = await oracle('verify', { type: 'ed25519', ed25519_public: k.ed25519_public, input: b64(msg), signature: `vault:v1:${b64(sig)}` });
    expect(valid).toBe(true);
  });
});

// GCM spec (McGrew & Viega) test cases 4 (AES-128) and 16 (AES-256): 96-bit IV, with AAD.
const GCM_P =
  'd9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39';
const GCM_A = 'feedfacedeadbeeffeedfacedeadbeefabaddad2';
const GCM_IV = 'cafebabefacedbaddecaf888';
const GCM_CASES = [
  {
    type: 'aes128-gcm96',
    key: 'feffe9928665731c6d6a8f9467308308',
    ct: '42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091',
    tag: '5bc94fbc3221a5db94fae95ae7121a47',
  },
  {
    type: 'aes256-gcm96',
    key: 'feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308',
    ct: '522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662',
    tag: '76fc6ece0f4e1768cddf8853bb2d551b',
  },
];

// RFC 8439 §2.8.2 AEAD vector.
const CHACHA = {
  key: '808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f',
  nonce: '070000004041424344454647',
  aad: '50515253c0c1c2c3c4c5c6c7',
  plaintext: "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.",
  ct:
    'd31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b' +
    '1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc' +
    '3ff4def08e4b7a9de576d26586cec64b6116',
  tag: '1ae10b594f09e26a7e902ecbd0600691',
};

// RFC 5869 A.3: HKDF-SHA256, 22-byte IKM, empty salt and info.
const HKDF3_IKM = '0b'.repeat(22);
const HKDF3_OKM = '8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8';

async function webGcm(key: Uint8Array, op: 'encrypt' | 'decrypt', iv: Uint8Array, data: Uint8Array, aad = new Uint8Array()): Promise<Uint8Array> {
  const k = await subtle.importKey('raw', key, 'AES-GCM', false, [op]);
  return new Uint8Array(await subtle[op]({ name: 'AES-GCM', iv, additionalData: aad }, k, data));
}

describe('encrypt / decrypt', () => {
  it('AES-GCM matches GCM test cases 4 and 16 as nonce ‖ ct ‖ tag', async () => {
    for (const c of GCM_CASES) {
      const body = { type: c.type, key: b64(fromHex(c.key)), associated_data: b64(fromHex(GCM_A)) };
      const { ciphertext } = await oracle<{ ciphertext: string }>('encrypt', { ...body, plaintext: b64(fromHex(GCM_P)), nonce: b64(fromHex(GCM_IV)) });
      expect(ciphertext).toBe(`vault:v1:${b64(fromHex(GCM_IV + c.ct + c.tag))}`);
      expect((await oracle('decrypt', { ...body, ciphertext })).plaintext).toBe(b64(fromHex(GCM_P)));
    }
  });

  it('ChaCha20-Poly1305 matches RFC 8439 §2.8.2, with the version in the prefix', async () => {
    const body = { type: 'chacha20-poly1305', key: b64(fromHex(CHACHA.key)), associated_data: b64(fromHex(CHACHA.aad)) };
    const { ciphertext } = await oracle<{ ciphertext: string }>('encrypt', {
      ...body,
      plaintext: b64(CHACHA.plaintext),
      nonce: b64(fromHex(CHACHA.nonce)),
      version: 7,
    });
    expect(ciphertext).toBe(`vault:v7:${b64(fromHex(CHACHA.nonce + CHACHA.ct + CHACHA.tag))}`);
    expect((await oracle('decrypt', { ...body, ciphertext })).plaintext).toBe(b64(CHACHA.plaintext));
  });

  it('AES-GCM with random nonces interoperates with WebCrypto both ways', async () => {
    for (const len of [16, 32]) {
      const type = len === 16 ? 'aes128-gcm96' : 'aes256-gcm96';
      const key = rand(len);
      const pt = rand(50);
      const { ciphertext } = await oracle<{ ciphertext: string }>('encrypt', { type, key: b64(key), plaintext: b64(pt) });
      const p = payloadOf(ciphertext);
      expect(p).toHaveLength(12 + 50 + 16);
      expect(hexOf(await webGcm(key, 'decrypt', p.subarray(0, 12), p.subarray(12)))).toBe(hexOf(pt));
      const iv = rand(12);
      const web = await webGcm(key, 'encrypt', iv, pt);
      const back = await oracle('decrypt', { type, key: b64(key), ciphertext: `vault:v1:${b64(new Uint8Array([...iv, ...web]))}` });
      expect(back.plaintext).toBe(b64(pt));
    }
  });

  it('derives keys with HKDF-SHA256 (RFC 5869 case 3: empty salt, info = context)', async () => {
    const okm = fromHex(HKDF3_OKM);
    const nonce = b64(rand(12));
    const pt = b64(rand(33));
    for (const [type, len] of [['aes128-gcm96', 16], ['aes256-gcm96', 32], ['chacha20-poly1305', 32]] as const) {
      const derived = { type, key: b64(fromHex(HKDF3_IKM)), derived: true, context: '' };
      const { ciphertext } = await oracle<{ ciphertext: string }>('encrypt', { ...derived, plaintext: pt, nonce });
      // The derived key is the RFC's OKM prefix, so the plain (underived) op opens it with that key.
      expect((await oracle('decrypt', { type, key: b64(okm.subarray(0, len)), ciphertext })).plaintext).toBe(pt);
      expect((await oracle('decrypt', { ...derived, ciphertext })).plaintext).toBe(pt);
    }
  });

  it('convergent encryption is deterministic with nonce = HMAC-SHA256(nonce key, plaintext)[:12] (checked with WebCrypto)', async () => {
    for (const [type, len] of [['aes128-gcm96', 16], ['aes256-gcm96', 32]] as const) {
      const key = rand(32);
      const ctx = rand(16);
      const pt = rand(64);
      const body = { type, key: b64(key), derived: true, convergent: true, context: b64(ctx) };
      const a = (await oracle<{ ciphertext: string }>('encrypt', { ...body, plaintext: b64(pt) })).ciphertext;
      expect((await oracle<{ ciphertext: string }>('encrypt', { ...body, plaintext: b64(pt) })).ciphertext).toBe(a);
      const other = (await oracle<{ ciphertext: string }>('encrypt', { ...body, plaintext: b64(rand(64)) })).ciphertext;
      expect(payloadOf(other).subarray(0, 12)).not.toEqual(payloadOf(a).subarray(0, 12));

      const ikm = await subtle.importKey('raw', key, 'HKDF', false, ['deriveBits']);
      const okm = new Uint8Array(await subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(), info: ctx }, ikm, (len + 32) * 8));
      const macKey = await subtle.importKey('raw', okm.subarray(len), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
      const nonce = new Uint8Array(await subtle.sign('HMAC', macKey, pt)).subarray(0, 12);
      const p = payloadOf(a);
      expect(hexOf(p.subarray(0, 12))).toBe(hexOf(nonce));
      expect(hexOf(await webGcm(okm.subarray(0, len), 'decrypt', nonce, p.subarray(12)))).toBe(hexOf(pt));
      expect((await oracle('decrypt', { ...body, ciphertext: a })).plaintext).toBe(b64(pt));
    }
    const chacha = { type: 'chacha20-poly1305', key: b64(rand(32)), derived: true, convergent: true, context: b64('c') };
    const c1 = (await oracle<{ ciphertext: string }>('encrypt', { ...chacha, plaintext: b64('same') })).ciphertext;
    expect((await oracle<{ ciphertext: string }>('encrypt', { ...chacha, plaintext: b64('same') })).ciphertext).toBe(c1);
    expect((await oracle('decrypt', { ...chacha, ciphertext: c1 })).plaintext).toBe(b64('same'));
  });

  it('RSA-OAEP (SHA-256, MGF1-SHA-256) interoperates with WebCrypto both ways', async () => {
    const k = keys['rsa-2048'];
    const pt = rand(100);
    const { ciphertext } = await oracle<{ ciphertext: string }>('encrypt', { type: 'rsa-2048', public_key: k.public_pem, plaintext: b64(pt), version: 2 });
    expect(ciphertext.startsWith('vault:v2:')).toBe(true);
    expect(payloadOf(ciphertext)).toHaveLength(256);
    const alg = { name: 'RSA-OAEP', hash: 'SHA-256' };
    const priv = await subtle.importKey('pkcs8', unb64(k.pkcs8_der), alg, false, ['decrypt']);
    expect(hexOf(await subtle.decrypt(alg, priv, payloadOf(ciphertext)))).toBe(hexOf(pt));
    const pub = await subtle.importKey('spki', pemDer(k.public_pem), alg, false, ['encrypt']);
    const web = new Uint8Array(await subtle.encrypt(alg, pub, pt));
    expect((await oracle('decrypt', { type: 'rsa-2048', private_key: k.private_pem, ciphertext: `vault:v1:${b64(web)}` })).plaintext).toBe(b64(pt));
  });

  it('RSA PKCS#1 v1.5 encryption round trips and opens what workerd node:crypto made', async () => {
    const k = keys['rsa-2048'];
    const pt = rand(30);
    const body = { type: 'rsa-2048', padding_scheme: 'pkcs1v15', private_key: k.private_pem };
    const { ciphertext } = await oracle<{ ciphertext: string }>('encrypt', { type: 'rsa-2048', padding_scheme: 'pkcs1v15', public_key: k.public_pem, plaintext: b64(pt) });
    expect((await oracle('decrypt', { ...body, ciphertext })).plaintext).toBe(b64(pt));
    const other = nodeCrypto.publicEncrypt({ key: k.public_pem, padding: nodeCrypto.constants.RSA_PKCS1_PADDING }, Buffer.from(pt));
    expect((await oracle('decrypt', { ...body, ciphertext: `vault:v1:${b64(other)}` })).plaintext).toBe(b64(pt));
    // An OAEP ciphertext is not a PKCS#1 v1.5 one.
    const oaep = (await oracle<{ ciphertext: string }>('encrypt', { type: 'rsa-2048', public_key: k.public_pem, plaintext: b64(pt) })).ciphertext;
    await expect(oracle('decrypt', { ...body, ciphertext: oaep })).rejects.toThrow(/decryption error/);
  });

  it('rejects bad encryption input', async () => {
    const key = b64(rand(32));
    const ok = { type: 'aes256-gcm96', key, plaintext: b64('x') };
    const { ciphertext } = await oracle<{ ciphertext: string }>('encrypt', ok);
    const bad = (op: string, body: Record<string, unknown>, re: RegExp): Promise<void> => expect(oracle(op, body)).rejects.toThrow(re);
    await bad('encrypt', { ...ok, key: b64(rand(16)) }, /expected 32 bytes/);
    await bad('encrypt', { ...ok, type: 'ed25519' }, /unsupported encryption key type/);
    await bad('encrypt', { ...ok, plaintext: 'not base64!' }, /plaintext: invalid base64/);
    await bad('encrypt', { ...ok, nonce: b64(rand(8)) }, /nonce: expected 12 bytes/);
    await bad('encrypt', { ...ok, derived: true }, /missing 'context'/);
    await bad('encrypt', { ...ok, convergent: true }, /requires derivation/);
    await bad('encrypt', { ...ok, derived: true, convergent: true, context: b64('c'), nonce: b64(rand(12)) }, /nonce provided when not allowed/);
    await bad('encrypt', { ...ok, padding_scheme: 'oaep' }, /only for RSA/);
    const rsa = { type: 'rsa-2048', public_key: keys['rsa-2048'].public_pem, plaintext: b64('x') };
    await bad('encrypt', { ...rsa, associated_data: b64('a') }, /not supported for RSA/);
    await bad('encrypt', { ...rsa, padding_scheme: 'raw' }, /unsupported padding scheme/);
    await bad('encrypt', { ...rsa, type: 'rsa-4096' }, /does not match type rsa-4096/);
    await bad('decrypt', { ...ok, ciphertext: ciphertext.replace('vault:v1:', '') }, /no prefix/);
    await bad('decrypt', { ...ok, ciphertext: 'vault:v1:AAAA' }, /invalid ciphertext length/);
    const p = payloadOf(ciphertext);
    p[15] ^= 1;
    await bad('decrypt', { ...ok, ciphertext: `vault:v1:${b64(p)}` }, /message authentication failed/);
    await bad('decrypt', { ...ok, key: b64(rand(32)), ciphertext }, /message authentication failed/);
    await bad('decrypt', { ...ok, associated_data: b64('a'), ciphertext }, /message authentication failed/);
  });
});

// RFC 4231 test case 2.
const HMAC_KEY = 'Jefe';
const HMAC_DATA = 'what do ya want for nothing?';
const RFC4231: Record<string, string> = {
  'sha2-224': 'a30e01098bc6dbbf45690f3a7e9e6d0f8bbea2a39e6148008fd05e44',
  'sha2-256': '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
  'sha2-384': 'af45d2e376484031617f78d2b58a6b1b9c7ef464f5a01b47e42ec3736322445e8e2240ca5e69e2c78b3239ecfab21649',
  'sha2-512':
    '164b7a7bfcf819e2e395fbe73b56e0a387bd64222e831fd610270cd7ea2505549758bf75c05a994a6d034f65f8f0e6fdcaeab1a34d4a6b4b636e070a38bce737',
};

describe('hmac', () => {
  it('matches RFC 4231 case 2 for SHA-2, as vault:v<N>:<base64>', async () => {
    for (const [algorithm, mac] of Object.entries(RFC4231)) {
      const { hmac } = await oracle('hmac', { key: b64(HMAC_KEY), input: b64(HMAC_DATA), algorithm, version: 3 });
      expect(hmac).toBe(`vault:v3:${b64(fromHex(mac))}`);
    }
    const { hmac } = await oracle('hmac', { key: b64(HMAC_KEY), input: b64(HMAC_DATA) });
    expect(hmac).toBe(`vault:v1:${b64(fromHex(RFC4231['sha2-256']))}`);
  });

  it('SHA-3 HMACs agree with @noble/hashes', async () => {
    const key = rand(32);
    const input = rand(77);
    for (const [algorithm, h] of [['sha3-224', sha3_224], ['sha3-256', sha3_256], ['sha3-384', sha3_384], ['sha3-512', sha3_512]] as const) {
      const { hmac } = await oracle('hmac', { key: b64(key), input: b64(input), algorithm });
      expect(hmac).toBe(`vault:v1:${b64(nobleHmac(h, key, input))}`);
    }
  });

  it('rejects sha1, unknown algorithms and bad base64', async () => {
    await expect(oracle('hmac', { key: b64('k'), input: '', algorithm: 'sha1' })).rejects.toThrow(/invalid hash algorithm "sha1"/);
    await expect(oracle('hmac', { key: b64('k'), input: '', algorithm: 'md5' })).rejects.toThrow(/invalid hash algorithm "md5"/);
    await expect(oracle('hmac', { key: 'a=b', input: '' })).rejects.toThrow(/key: invalid base64/);
  });
});

// RFC 8032 §7.1 TEST 1 (empty message).
const ED_SEED = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const ED_PUB = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
const ED_SIG =
  'e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e065224901555fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b';

const WEB_HASH: Record<string, string> = { sha1: 'SHA-1', 'sha2-256': 'SHA-256', 'sha2-384': 'SHA-384', 'sha2-512': 'SHA-512' };

describe('sign / verify: Ed25519', () => {
  const priv64 = b64(fromHex(ED_SEED + ED_PUB));

  it('matches RFC 8032 test 1; jws switches to base64url without padding', async () => {
    const { signature } = await oracle('sign', { type: 'ed25519', ed25519_private64: priv64, input: '' });
    expect(signature).toBe(`vault:v1:${b64(fromHex(ED_SIG))}`);
    const jws = (await oracle<{ signature: string }>('sign', { type: 'ed25519', ed25519_private64: priv64, input: '', marshaling_algorithm: 'jws' })).signature;
    expect(jws).toBe(`vault:v1:${Buffer.from(fromHex(ED_SIG)).toString('base64url')}`);
    const verify = { type: 'ed25519', ed25519_public: b64(fromHex(ED_PUB)), input: '' };
    expect((await oracle('verify', { ...verify, signature })).valid).toBe(true);
    expect((await oracle('verify', { ...verify, signature: jws, marshaling_algorithm: 'jws' })).valid).toBe(true);
    expect((await oracle('verify', { ...verify, input: b64('x'), signature })).valid).toBe(false);
  });

  it('derived keys: seed = HKDF-SHA256(seed ‖ pub, context); returns the derived public key', async () => {
    const k = keys.ed25519;
    const ctx = rand(12);
    const msg = rand(20);
    const res = await oracle<{ signature: string; public_key: string }>('sign', {
      type: 'ed25519',
      private_pem: k.private_pem,
      derived: true,
      context: b64(ctx),
      input: b64(msg),
    });
    const ikm = await subtle.importKey('raw', unb64(k.ed25519_private64 ?? ''), 'HKDF', false, ['deriveBits']);
    const seed = new Uint8Array(await subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(), info: ctx }, ikm, 256));
    const pub = ed25519.getPublicKey(seed);
    expect(res.public_key).toBe(b64(pub));
    const wk = await subtle.importKey('raw', pub, { name: 'Ed25519' }, false, ['verify']);
    expect(await subtle.verify('Ed25519', wk, payloadOf(res.signature), msg)).toBe(true);
    const v = { type: 'ed25519', input: b64(msg), signature: res.signature };
    expect((await oracle('verify', { ...v, derived: true, context: b64(ctx), ed25519_private64: k.ed25519_private64 })).valid).toBe(true);
    expect((await oracle('verify', { ...v, ed25519_public: res.public_key })).valid).toBe(true);
    expect((await oracle('verify', { ...v, ed25519_public: k.ed25519_public })).valid).toBe(false);
    await expect(oracle('sign', { type: 'ed25519', private_pem: k.private_pem, derived: true, input: '' })).rejects.toThrow(/missing 'context'/);
  });

  it('rejects a 64-byte key whose halves disagree', async () => {
    const bad = fromHex(ED_SEED + ED_PUB);
    bad[40] ^= 1;
    await expect(oracle('sign', { type: 'ed25519', ed25519_private64: b64(bad), input: '' })).rejects.toThrow(/public half does not match/);
  });
});

describe('sign / verify: ECDSA', () => {
  const CASES = [
    ['ecdsa-p256', 'P-256', 'sha2-256', 32],
    ['ecdsa-p384', 'P-384', 'sha2-384', 48],
    ['ecdsa-p521', 'P-521', 'sha2-512', 66],
  ] as const;

  it('jws is r ‖ s padded to the curve size (WebCrypto verifies it); asn1 is DER', async () => {
    for (const [type, curve, hash, size] of CASES) {
      const k = keys[type];
      const msg = rand(45);
      const base = { type, input: b64(msg), hash_algorithm: hash };
      const jws = (await oracle<{ signature: string }>('sign', { ...base, private_pem: k.private_pem, marshaling_algorithm: 'jws' })).signature;
      const raw = jws.replace('vault:v1:', '');
      expect(raw).toMatch(/^[A-Za-z0-9_-]+$/);
      const sig = new Uint8Array(Buffer.from(raw, 'base64url'));
      expect(sig).toHaveLength(2 * size);
      const pub = await subtle.importKey('spki', pemDer(k.public_pem), { name: 'ECDSA', namedCurve: curve }, false, ['verify']);
      expect(await subtle.verify({ name: 'ECDSA', hash: WEB_HASH[hash] }, pub, sig, msg)).toBe(true);
      expect((await oracle('verify', { ...base, public_pem: k.public_pem, signature: jws, marshaling_algorithm: 'jws' })).valid).toBe(true);

      const der = (await oracle<{ signature: string }>('sign', { ...base, private_pem: k.private_pem })).signature;
      expect(payloadOf(der)[0]).toBe(0x30);
      expect((await oracle('verify', { ...base, public_pem: k.public_pem, signature: der })).valid).toBe(true);
      expect((await oracle('verify', { ...base, public_pem: k.public_pem, signature: der, input: b64('other') })).valid).toBe(false);
      // WebCrypto's signature verifies through the oracle's jws path.
      const priv = await subtle.importKey('pkcs8', unb64(k.pkcs8_der), { name: 'ECDSA', namedCurve: curve }, false, ['sign']);
      const web = new Uint8Array(await subtle.sign({ name: 'ECDSA', hash: WEB_HASH[hash] }, priv, msg));
      const webJws = `vault:v1:${Buffer.from(web).toString('base64url')}`;
      expect((await oracle('verify', { ...base, public_pem: k.public_pem, signature: webJws, marshaling_algorithm: 'jws' })).valid).toBe(true);
    }
  });

  it('signs with SHA-3 and SHA-1 (the hash is part of what verifies)', async () => {
    const k = keys['ecdsa-p256'];
    for (const hash of ['sha3-256', 'sha3-512', 'sha1', 'sha2-224']) {
      const base = { type: 'ecdsa-p256', input: b64('m'), hash_algorithm: hash };
      const { signature } = await oracle('sign', { ...base, private_pem: k.private_pem });
      expect((await oracle('verify', { ...base, public_pem: k.public_pem, signature })).valid).toBe(true);
      const otherHash = hash === 'sha2-224' ? 'sha2-256' : 'sha2-224';
      expect((await oracle('verify', { ...base, hash_algorithm: otherHash, public_pem: k.public_pem, signature })).valid).toBe(false);
    }
  });

  it('refuses prehashed ECDSA, derivation and garbage signatures', async () => {
    const k = keys['ecdsa-p256'];
    const base = { type: 'ecdsa-p256', private_pem: k.private_pem, input: b64(rand(32)) };
    await expect(oracle('sign', { ...base, prehashed: true })).rejects.toThrow(/unsupported by oracle/);
    await expect(oracle('verify', { ...base, prehashed: true, signature: 'vault:v1:AAAA' })).rejects.toThrow(/unsupported by oracle/);
    await expect(oracle('sign', { ...base, derived: true, context: '' })).rejects.toThrow(/only supported for ed25519/);
    await expect(oracle('sign', { ...base, private_pem: keys['ecdsa-p384'].private_pem })).rejects.toThrow(/does not match type ecdsa-p256/);
    expect((await oracle('verify', { ...base, signature: 'vault:v1:AAAA' })).valid).toBe(false);
    expect((await oracle('verify', { ...base, signature: 'vault:v1:AAAA', marshaling_algorithm: 'jws' })).valid).toBe(false);
  });
});

describe('sign / verify: RSA', () => {
  const k = (): KeyPair => keys['rsa-2048'];
  const webKey = (scheme: 'RSASSA-PKCS1-v1_5' | 'RSA-PSS', hash: string, use: 'sign' | 'verify'): Promise<CryptoKey> =>
    use === 'sign'
      ? subtle.importKey('pkcs8', unb64(k().pkcs8_der), { name: scheme, hash }, false, ['sign'])
      : subtle.importKey('spki', pemDer(k().public_pem), { name: scheme, hash }, false, ['verify']);
  const digest = async (hash: string, msg: Uint8Array): Promise<Uint8Array> => new Uint8Array(await subtle.digest(hash, msg));

  it('PKCS#1 v1.5 is byte-identical to WebCrypto, also when prehashed (DigestInfo)', async () => {
    const msg = rand(64);
    for (const [hash, web] of Object.entries(WEB_HASH)) {
      const expected = b64(new Uint8Array(await subtle.sign('RSASSA-PKCS1-v1_5', await webKey('RSASSA-PKCS1-v1_5', web, 'sign'), msg)));
      const base = { type: 'rsa-2048', private_pem: k().private_pem, hash_algorithm: hash, signature_algorithm: 'pkcs1v15' };
      expect((await oracle('sign', { ...base, input: b64(msg) })).signature).toBe(`vault:v1:${expected}`);
      const pre = { ...base, input: b64(await digest(web, msg)), prehashed: true };
      expect((await oracle('sign', pre)).signature).toBe(`vault:v1:${expected}`);
      expect((await oracle('verify', { ...pre, signature: `vault:v1:${expected}` })).valid).toBe(true);
      expect((await oracle('verify', { ...pre, input: b64(rand((await digest(web, msg)).length)), signature: `vault:v1:${expected}` })).valid).toBe(false);
    }
  });

  it('PKCS#1 v1.5 with SHA-224 and SHA-3: prehashed (noble digest) equals unhashed', async () => {
    const msg = rand(10);
    for (const [hash, h] of [['sha3-224', sha3_224], ['sha3-256', sha3_256], ['sha3-384', sha3_384], ['sha3-512', sha3_512]] as const) {
      const base = { type: 'rsa-2048', private_pem: k().private_pem, hash_algorithm: hash, signature_algorithm: 'pkcs1v15' };
      const { signature } = await oracle('sign', { ...base, input: b64(msg) });
      expect((await oracle('sign', { ...base, input: b64(h(msg)), prehashed: true })).signature).toBe(signature);
      expect((await oracle('verify', { ...base, input: b64(msg), signature })).valid).toBe(true);
    }
    const base = { type: 'rsa-2048', private_pem: k().private_pem, hash_algorithm: 'sha2-224', signature_algorithm: 'pkcs1v15' };
    const { signature } = await oracle('sign', { ...base, input: b64(msg) });
    const d224 = nodeCrypto.createHash('sha224').update(msg).digest();
    expect((await oracle('sign', { ...base, input: b64(d224), prehashed: true })).signature).toBe(signature);
  });

  it('hash none + prehashed + pkcs1v15 signs the raw input without DigestInfo', async () => {
    const msg = rand(30);
    const web = new Uint8Array(await subtle.sign('RSASSA-PKCS1-v1_5', await webKey('RSASSA-PKCS1-v1_5', 'SHA-256', 'sign'), msg));
    // The block inside WebCrypto's signature (DigestInfo ‖ digest), recovered by workerd's node:crypto.
    const block = nodeCrypto.publicDecrypt({ key: k().public_pem, padding: nodeCrypto.constants.RSA_PKCS1_PADDING }, Buffer.from(web));
    const none = { type: 'rsa-2048', private_pem: k().private_pem, hash_algorithm: 'none', prehashed: true, signature_algorithm: 'pkcs1v15' };
    const { signature } = await oracle('sign', { ...none, input: b64(block) });
    expect(signature).toBe(`vault:v1:${b64(web)}`);
    expect((await oracle('verify', { ...none, input: b64(block), signature })).valid).toBe(true);
    expect((await oracle('verify', { ...none, input: b64(msg), signature })).valid).toBe(false);
  });

  it('PSS salts: auto = maximum on sign, hash = digest length, or an integer (WebCrypto verifies)', async () => {
    const msg = rand(50);
    for (const [hash, web, hLen] of [['sha2-256', 'SHA-256', 32], ['sha2-512', 'SHA-512', 64]] as const) {
      const max = 256 - hLen - 2;
      for (const [salt, saltLength] of [['auto', max], ['hash', hLen], [20, 20], ['0', 0]] as const) {
        const base = { type: 'rsa-2048', hash_algorithm: hash, input: b64(msg), salt_length: salt };
        const { signature } = await oracle<{ signature: string }>('sign', { ...base, private_pem: k().private_pem });
        const pub = await webKey('RSA-PSS', web, 'verify');
        expect(await subtle.verify({ name: 'RSA-PSS', saltLength }, pub, payloadOf(signature), msg)).toBe(true);
        expect((await oracle('verify', { ...base, public_pem: k().public_pem, signature })).valid).toBe(true);
        expect((await oracle('verify', { ...base, salt_length: 'auto', public_pem: k().public_pem, signature })).valid).toBe(true);
      }
    }
  });

  it('prehashed PSS (EMSA-PSS over the digest) agrees with OpenSSL and WebCrypto both ways', async () => {
    const msg = rand(50);
    const d = await digest('SHA-256', msg);
    const base = { type: 'rsa-2048', hash_algorithm: 'sha2-256' };
    const pre = { ...base, input: b64(d), prehashed: true };
    for (const [salt, saltLength] of [['auto', 222], ['hash', 32], [7, 7]] as const) {
      const { signature } = await oracle<{ signature: string }>('sign', { ...pre, salt_length: salt, private_pem: k().private_pem });
      expect(await subtle.verify({ name: 'RSA-PSS', saltLength }, await webKey('RSA-PSS', 'SHA-256', 'verify'), payloadOf(signature), msg)).toBe(true);
      expect((await oracle('verify', { ...base, input: b64(msg), public_pem: k().public_pem, signature })).valid).toBe(true);
    }
    const webSig = new Uint8Array(await subtle.sign({ name: 'RSA-PSS', saltLength: 32 }, await webKey('RSA-PSS', 'SHA-256', 'sign'), msg));
    const v = { ...pre, public_pem: k().public_pem, signature: `vault:v1:${b64(webSig)}` };
    expect((await oracle('verify', v)).valid).toBe(true);
    expect((await oracle('verify', { ...v, salt_length: 'hash' })).valid).toBe(true);
    expect((await oracle('verify', { ...v, salt_length: 20 })).valid).toBe(false);
    expect((await oracle('verify', { ...v, input: b64(rand(32)) })).valid).toBe(false);
    const flipped = webSig.slice();
    flipped[100] ^= 1;
    expect((await oracle('verify', { ...v, signature: `vault:v1:${b64(flipped)}` })).valid).toBe(false);
  });

  it('SHA-3 and SHA-224 PSS round trip; jws uses base64url', async () => {
    for (const hash of ['sha3-256', 'sha3-512', 'sha2-224']) {
      const base = { type: 'rsa-2048', hash_algorithm: hash, input: b64('msg'), marshaling_algorithm: 'jws' };
      const { signature } = await oracle<{ signature: string }>('sign', { ...base, private_pem: k().private_pem });
      expect(signature).toMatch(/^vault:v1:[A-Za-z0-9_-]{342}$/);
      expect((await oracle('verify', { ...base, public_pem: k().public_pem, signature })).valid).toBe(true);
      expect((await oracle('verify', { ...base, input: b64('other'), public_pem: k().public_pem, signature })).valid).toBe(false);
    }
  });

  it('rejects bad signing input', async () => {
    const base = { type: 'rsa-2048', private_pem: k().private_pem, input: b64('m') };
    const bad = (op: string, body: Record<string, unknown>, re: RegExp): Promise<void> => expect(oracle(op, body)).rejects.toThrow(re);
    await bad('sign', { ...base, hash_algorithm: 'sha2-999' }, /invalid hash algorithm "sha2-999"/);
    await bad('sign', { ...base, hash_algorithm: 'none' }, /requires prehashed/);
    await bad('sign', { ...base, hash_algorithm: 'none', prehashed: true }, /requires prehashed and signature_algorithm pkcs1v15/);
    await bad('sign', { ...base, salt_length: 223 }, /requested salt length 223 is invalid/);
    await bad('sign', { ...base, salt_length: 'big' }, /salt_length: invalid/);
    await bad('sign', { ...base, prehashed: true }, /expected 32 bytes/);
    await bad('sign', { ...base, signature_algorithm: 'raw' }, /unsupported signature algorithm/);
    await bad('sign', { ...base, marshaling_algorithm: 'xml' }, /unsupported marshaling algorithm/);
    await bad('sign', { ...base, type: 'rsa-3072' }, /does not match type rsa-3072/);
    await bad('sign', { ...base, type: 'hmac' }, /unsupported signing key type/);
    await bad('sign', { ...base, private_pem: 'not a pem' }, /./);
    const { signature } = await oracle<{ signature: string }>('sign', base);
    const v = { ...base, public_pem: k().public_pem };
    await bad('verify', { ...v, signature: signature.slice('vault:'.length) }, /no prefix/);
    await bad('verify', { ...v, signature: 'vault:v1:%%%' }, /signature: invalid base64/);
    await bad('verify', { ...v, signature: 'vault:v1:a+b', marshaling_algorithm: 'jws' }, /signature: invalid base64url/);
    expect((await oracle('verify', { ...v, signature: 'vault:v1:AAAA' })).valid).toBe(false);
  });
});

// RFC 5649 §6: 192-bit KEK, 20- and 7-byte key data.
const KWP_KEK = '5840df6e29b02af1ab493b705bf16ea1ae8338f4dcc176a8';
const KWP_VECTORS = [
  ['c37b7e6492584340bed12207808941155068f738', '138bdeaa9b8fa7fc61f97742e72248ee5ae6ae5360d1ae6a5f54f373fa543b6a'],
  ['466f7250617369', 'afbeb0f07dfbf5419200f2ccb50bb24f'],
];
const OAEP_WEB: Record<string, string> = { SHA1: 'SHA-1', SHA256: 'SHA-256', SHA384: 'SHA-384', SHA512: 'SHA-512' };

describe('BYOK wrap / unwrap', () => {
  it('the KWP step matches RFC 5649 §6 and the OAEP head opens with WebCrypto', async () => {
    const k = keys['rsa-2048'];
    const priv = await subtle.importKey('pkcs8', unb64(k.pkcs8_der), { name: 'RSA-OAEP', hash: 'SHA-256' }, false, ['decrypt']);
    for (const [material, expected] of KWP_VECTORS) {
      const { ciphertext } = await oracle<{ ciphertext: string }>('wrap', {
        wrapping_public_pem: k.public_pem,
        material: b64(fromHex(material)),
        ephemeral_key: b64(fromHex(KWP_KEK)),
      });
      const ct = unb64(ciphertext);
      expect(hexOf(ct.subarray(256))).toBe(expected);
      expect(hexOf(await subtle.decrypt('RSA-OAEP', priv, ct.subarray(0, 256)))).toBe(KWP_KEK);
    }
  });

  it('round trips with every hash function, cross-checked with WebCrypto OAEP and noble AES-KWP', async () => {
    const k = keys['rsa-4096'];
    const material = rand(32);
    for (const hash of ['SHA1', 'SHA224', 'SHA256', 'SHA384', 'SHA512']) {
      const { ciphertext } = await oracle<{ ciphertext: string }>('wrap', { wrapping_public_pem: k.public_pem, material: b64(material), hash_function: hash });
      const ct = unb64(ciphertext);
      expect(ct).toHaveLength(512 + 40);
      expect((await oracle('unwrap', { wrapping_private_pem: k.private_pem, ciphertext, hash_function: hash.toLowerCase() })).material).toBe(b64(material));
      if (!OAEP_WEB[hash]) continue; // WebCrypto has no SHA-224
      const priv = await subtle.importKey('pkcs8', unb64(k.pkcs8_der), { name: 'RSA-OAEP', hash: OAEP_WEB[hash] }, false, ['decrypt']);
      const eph = new Uint8Array(await subtle.decrypt('RSA-OAEP', priv, ct.subarray(0, 512)));
      expect(eph).toHaveLength(32);
      expect(hexOf(aeskwp(eph).decrypt(ct.subarray(512)))).toBe(hexOf(material));
    }
  });

  it('unwraps a ciphertext built with WebCrypto and noble (default SHA256), including PKCS#8 material', async () => {
    const k = keys['rsa-4096'];
    const material = unb64(keys.ed25519.pkcs8_der);
    const eph = rand(32);
    const pub = await subtle.importKey('spki', pemDer(k.public_pem), { name: 'RSA-OAEP', hash: 'SHA-256' }, false, ['encrypt']);
    const head = new Uint8Array(await subtle.encrypt('RSA-OAEP', pub, eph));
    const ciphertext = b64(new Uint8Array([...head, ...aeskwp(eph).encrypt(material)]));
    expect((await oracle('unwrap', { wrapping_private_pem: k.private_pem, ciphertext })).material).toBe(b64(material));
  });

  it('rejects bad wrap input', async () => {
    const k = keys['rsa-2048'];
    const wrapped = (await oracle<{ ciphertext: string }>('wrap', { wrapping_public_pem: k.public_pem, material: b64(rand(16)), hash_function: 'SHA384' })).ciphertext;
    const un = { wrapping_private_pem: k.private_pem, hash_function: 'SHA384' };
    const bad = (op: string, body: Record<string, unknown>, re: RegExp): Promise<void> => expect(oracle(op, body)).rejects.toThrow(re);
    await bad('unwrap', { ...un, ciphertext: b64(unb64(wrapped).subarray(0, 256)) }, /provided ciphertext is too short/);
    await bad('unwrap', { ...un, ciphertext: wrapped, hash_function: 'SHA256' }, /RSA-OAEP/);
    await bad('unwrap', { ...un, ciphertext: wrapped, hash_function: 'MD5' }, /invalid hash_function "MD5"/);
    const ct = unb64(wrapped);
    ct[ct.length - 1] ^= 1;
    await bad('unwrap', { ...un, ciphertext: b64(ct) }, /AES-KWP integrity/);
    const short = (await oracle<{ ciphertext: string }>('wrap', { wrapping_public_pem: k.public_pem, material: b64('x'), ephemeral_key: b64(rand(24)) })).ciphertext;
    await bad('unwrap', { wrapping_private_pem: k.private_pem, ciphertext: short }, /ephemeral key is 24 bytes/);
    await bad('wrap', { wrapping_public_pem: k.public_pem, material: b64('x'), ephemeral_key: b64(rand(20)) }, /AES key of 20 bytes/);
    await bad('wrap', { wrapping_public_pem: keys['ecdsa-p256'].public_pem, material: b64('x') }, /must be RSA/);
  });
});

describe('export-forms', () => {
  it('RSA: PKCS#1 PEM and PKIX PEM, both with a trailing newline', async () => {
    const k = keys['rsa-2048'];
    const f = await oracle<Record<string, string>>('export-forms', { type: 'rsa-2048', private_pem: k.private_pem });
    expect(f.encryption_key).toBe(f.signing_key);
    expect(f.signing_key).toMatch(/^-----BEGIN RSA PRIVATE KEY-----\n([A-Za-z0-9+/=]{1,64}\n)+-----END RSA PRIVATE KEY-----\n$/);
    expect(f.public_key).toBe(k.public_pem);
    expect(f.public_key.endsWith('-----END PUBLIC KEY-----\n')).toBe(true);
    // The PKCS#1 form is the same key: it signs what the PKIX key verifies.
    const base = { type: 'rsa-2048', input: b64('m'), signature_algorithm: 'pkcs1v15' };
    const { signature } = await oracle('sign', { ...base, private_pem: f.signing_key });
    expect((await oracle('verify', { ...base, public_pem: f.public_key, signature })).valid).toBe(true);
  });

  it('ECDSA: SEC1 PEM and PKIX PEM, both trimmed', async () => {
    for (const type of ['ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521']) {
      const k = keys[type];
      const f = await oracle<Record<string, string>>('export-forms', { type, private_pem: k.private_pem });
      expect(f.encryption_key).toBeUndefined();
      expect(f.signing_key).toMatch(/^-----BEGIN EC PRIVATE KEY-----\n([A-Za-z0-9+/=]{1,64}\n)+-----END EC PRIVATE KEY-----$/);
      expect(f.public_key).toBe(k.public_pem.trim());
      const base = { type, input: b64('m') };
      const { signature } = await oracle('sign', { ...base, private_pem: f.signing_key });
      expect((await oracle('verify', { ...base, public_pem: f.public_key, signature })).valid).toBe(true);
    }
  });

  it('Ed25519: base64 seed ‖ public and base64 raw public, from either private form', async () => {
    const k = keys.ed25519;
    for (const source of [{ private_pem: k.private_pem }, { ed25519_private64: k.ed25519_private64 }]) {
      const f = await oracle('export-forms', { type: 'ed25519', ...source });
      expect(f).toEqual({ signing_key: k.ed25519_private64, public_key: k.ed25519_public });
    }
  });

  it('rejects symmetric types and keys of the wrong type', async () => {
    await expect(oracle('export-forms', { type: 'aes256-gcm96', private_pem: keys['rsa-2048'].private_pem })).rejects.toThrow(/unsupported key type/);
    await expect(oracle('export-forms', { type: 'ecdsa-p256', private_pem: keys['rsa-2048'].private_pem })).rejects.toThrow(/does not match type/);
    await expect(oracle('export-forms', { type: 'ed25519', private_pem: keys['ecdsa-p256'].private_pem })).rejects.toThrow(/does not match type/);
  });
});
