// PKI keys: generation, the three PEM encodings, SKIDs, signers and signature checks.
// Independent checks use node:crypto (key export, signature verification) and @noble/hashes.

import * as nc from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sha1 } from '@noble/hashes/legacy.js';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier } from '@peculiar/asn1-x509';
import { ECParameters, ECPrivateKey } from '@peculiar/asn1-ecc';
import { PrivateKeyInfo } from '@peculiar/asn1-pkcs8';
import { asCofferError, CofferError } from '../../../../src/framework/errors';
import { fromBase64, toHex } from '../../../../src/crypto/encoding';
import { pemBlocks, toPem } from '../../../../src/crypto/pem';
import {
  GO_SIGNATURE_ALGORITHMS,
  ecPartsOf,
  encodePrivateKey,
  generateKey,
  parsePkcs8,
  parsePrivateKeyPem,
  publicKeyInfo,
  resolveKeyBits,
  sameKey,
  signerFor,
  signerForGoName,
  subjectKeyId,
  vaultSignatureAlgorithmName,
  verifySignature,
  type PkiKey,
  type PkiKeyType,
} from '../../../../src/crypto/pki/keys';

async function rejects400(p: Promise<unknown> | (() => unknown), text?: string): Promise<void> {
  let err: unknown;
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    // Crypto throws its own error type; what a client gets is the framework's mapping of it.
    err = asCofferError(e);
  }
  expect(err).toBeInstanceOf(CofferError);
  expect((err as CofferError).status).toBe(400);
  if (text !== undefined) expect((err as CofferError).errors[0]).toContain(text);
}

const nodePub = (k: PkiKey): nc.KeyObject => nc.createPublicKey({ key: Buffer.from(k.spki), format: 'der', type: 'spki' });
const nodePriv = (k: PkiKey): nc.KeyObject => nc.createPrivateKey({ key: Buffer.from(k.pkcs8), format: 'der', type: 'pkcs8' });
const b64u = (s: string): Uint8Array => new Uint8Array(Buffer.from(s, 'base64url'));

/** SKID computed independently of our code: the key material as Go hashes it, then SHA-1 from @noble/hashes. */
function expectedSkid(k: PkiKey): string {
  const pub = nodePub(k);
  if (k.type === 'rsa') return toHex(sha1(new Uint8Array(pub.export({ format: 'der', type: 'pkcs1' }))));
  const jwk = pub.export({ format: 'jwk' });
  if (k.type === 'ed25519') return toHex(sha1(b64u(jwk.x!)));
  return toHex(sha1(new Uint8Array([4, ...b64u(jwk.x!), ...b64u(jwk.y!)])));
}

const KEY_SIZES: [PkiKeyType, number][] = [
  ['rsa', 2048],
  ['rsa', 3072],
  ['rsa', 4096],
  ['ec', 224],
  ['ec', 256],
  ['ec', 384],
  ['ec', 521],
  ['ed25519', 0],
];

describe('resolveKeyBits', () => {
  it('applies the defaults and accepts the supported sizes', () => {
    expect(resolveKeyBits('rsa', 0)).toEqual({ type: 'rsa', bits: 2048 });
    expect(resolveKeyBits('ec', 0)).toEqual({ type: 'ec', bits: 256 });
    expect(resolveKeyBits('ed25519', 0)).toEqual({ type: 'ed25519', bits: 0 });
    expect(resolveKeyBits('ed25519', 521)).toEqual({ type: 'ed25519', bits: 0 });
    for (const b of [2048, 3072, 4096, 8192]) expect(resolveKeyBits('rsa', b).bits).toBe(b);
    for (const b of [224, 256, 384, 521]) expect(resolveKeyBits('ec', b).bits).toBe(b);
  });

  it('refuses small RSA keys, odd sizes and unknown types with Vault messages', async () => {
    await rejects400(() => resolveKeyBits('rsa', 1024), 'RSA keys < 2048 bits are unsafe and not supported');
    await rejects400(() => resolveKeyBits('rsa', 2049), 'unsupported bit length for RSA key: 2049');
    await rejects400(() => resolveKeyBits('ec', 512), 'unsupported bit length for EC key: 512');
    await rejects400(() => resolveKeyBits('dsa', 0), 'unknown key type dsa');
  });
});

describe('generate → encode → parse round trips', () => {
  for (const [type, bits] of KEY_SIZES) {
    it(`${type} ${bits}`, async () => {
      const k = await generateKey(type, bits);
      expect(k.type).toBe(type);
      expect(k.bits).toBe(bits);
      expect(publicKeyInfo(k.spki)).toEqual({ type, bits });
      // node:crypto agrees the pair is well-formed and of the right kind
      const pub = nodePub(k);
      expect(pub.asymmetricKeyType).toBe(type);
      if (type === 'rsa') expect(pub.asymmetricKeyDetails?.modulusLength).toBe(bits);
      expect(nc.createPublicKey(nodePriv(k)).export({ format: 'der', type: 'spki' }).equals(Buffer.from(k.spki))).toBe(true);

      const labels = { rsa: 'RSA PRIVATE KEY', ec: 'EC PRIVATE KEY', ed25519: 'PRIVATE KEY' } as const;
      for (const fmt of ['der', 'pkcs8'] as const) {
        const pem = encodePrivateKey(k, fmt, 'pem');
        expect(pem).toBe(pem.trim());
        const blocks = pemBlocks(pem);
        expect(blocks).toHaveLength(1);
        expect(blocks[0].label).toBe(fmt === 'pkcs8' ? 'PRIVATE KEY' : labels[type]);
        // the 'der' output is the same DER in standard base64
        expect(toHex(fromBase64(encodePrivateKey(k, fmt, 'der'))!)).toBe(toHex(blocks[0].der));
        const back = await parsePrivateKeyPem(pem);
        expect(back.type).toBe(type);
        expect(back.bits).toBe(bits);
        expect(sameKey(back, k.spki)).toBe(true);
        expect(toHex(back.spki)).toBe(toHex(k.spki));
      }
    });
  }

  it('rsa 8192', async () => {
    const k = await generateKey('rsa', 8192);
    expect(publicKeyInfo(k.spki)).toEqual({ type: 'rsa', bits: 8192 });
    const back = await parsePrivateKeyPem(encodePrivateKey(k, 'der', 'pem'));
    expect(sameKey(back, k.spki)).toBe(true);
  }, 60_000);

  it('PKCS#1 and SEC1 encodings match what node:crypto (OpenSSL) writes', async () => {
    const rsa = await generateKey('rsa', 2048);
    const pkcs1 = nodePriv(rsa).export({ format: 'der', type: 'pkcs1' });
    expect(encodePrivateKey(rsa, 'der', 'der')).toBe(pkcs1.toString('base64'));
    // Several keys per curve: the first encodes the curve's SEC1 template, the others reuse it.
    for (const bits of [224, 256, 256, 256, 384, 384, 521, 521]) {
      const ec = await generateKey('ec', bits);
      const sec1 = nodePriv(ec).export({ format: 'der', type: 'sec1' });
      expect(encodePrivateKey(ec, 'der', 'der')).toBe(sec1.toString('base64'));
      // The SEC1 kept from generation and the one read back out of the PKCS#8 agree.
      expect(encodePrivateKey({ ...ec, sec1: undefined }, 'der', 'der')).toBe(sec1.toString('base64'));
    }
  });

  it('SPKI and SEC1 templated from the PKCS#8 export\'s parts are what OpenSSL derives from it, key after key', async () => {
    for (const bits of [256, 384, 521]) {
      for (let i = 0; i < 60; i++) {
        const ec = await generateKey('ec', bits);
        const priv = nodePriv(ec);
        expect(Buffer.from(ec.spki).equals(nc.createPublicKey(priv).export({ format: 'der', type: 'spki' })), `P-${bits} key ${i}`).toBe(true);
        expect(Buffer.from(ec.sec1!).equals(priv.export({ format: 'der', type: 'sec1' })), `P-${bits} key ${i}`).toBe(true);
      }
    }
  });

  it('reads the scalar and point out of a PKCS#8 EC key only where they are, at the curve\'s lengths', async () => {
    for (const [bits, curve] of [
      [256, 'prime256v1'],
      [384, 'secp384r1'],
      [521, 'secp521r1'],
    ] as const) {
      const key = nc.generateKeyPairSync('ec', { namedCurve: curve }).privateKey;
      const pkcs8 = new Uint8Array(key.export({ format: 'der', type: 'pkcs8' }));
      const jwk = key.export({ format: 'jwk' });
      const parts = ecPartsOf(pkcs8, bits);
      expect(parts && Buffer.from(parts.scalar).toString('base64url')).toBe(jwk.d);
      expect(parts && Buffer.from(parts.point).toString('hex')).toBe('04' + Buffer.from(jwk.x!, 'base64url').toString('hex') + Buffer.from(jwk.y!, 'base64url').toString('hex'));
      // Another curve's lengths, a key without its point, damaged or truncated DER: none.
      expect(ecPartsOf(pkcs8, bits === 256 ? 384 : 256)).toBeNull();
      const info = AsnConvert.parse(pkcs8, PrivateKeyInfo);
      const inner = AsnConvert.parse(info.privateKey.buffer, ECPrivateKey);
      const pointless = new PrivateKeyInfo({ version: 0, privateKeyAlgorithm: info.privateKeyAlgorithm, privateKey: new OctetString(AsnConvert.serialize(new ECPrivateKey({ version: 1, privateKey: inner.privateKey }))) });
      expect(ecPartsOf(new Uint8Array(AsnConvert.serialize(pointless)), bits)).toBeNull();
      expect(ecPartsOf(pkcs8.subarray(0, pkcs8.length - 1), bits)).toBeNull();
      expect(ecPartsOf(new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x00]), bits)).toBeNull();
      const flipped = pkcs8.slice();
      flipped[flipped.length - 2 * Math.ceil(bits / 8) - 1] = 0x02; // the point's 0x04 tag
      expect(ecPartsOf(flipped, bits)).toBeNull();
    }
  });

  it('parses keys written by OpenSSL in every PEM form', async () => {
    const cases: [string, nc.KeyObject, 'pkcs1' | 'sec1' | 'pkcs8'][] = [];
    const rsa = nc.generateKeyPairSync('rsa', { modulusLength: 2048 });
    cases.push(['rsa', rsa.privateKey, 'pkcs1'], ['rsa', rsa.privateKey, 'pkcs8']);
    for (const curve of ['prime256v1', 'secp384r1', 'secp521r1', 'secp224r1']) {
      // (re-imported from PKCS#8: workerd's freshly generated keys export SEC1 without the curve)
      const gen = nc.generateKeyPairSync('ec', { namedCurve: curve }).privateKey.export({ format: 'der', type: 'pkcs8' });
      const ec = nc.createPrivateKey({ key: gen, format: 'der', type: 'pkcs8' });
      cases.push(['ec', ec, 'sec1'], ['ec', ec, 'pkcs8']);
    }
    const ed = nc.generateKeyPairSync('ed25519');
    cases.push(['ed25519', ed.privateKey, 'pkcs8']);
    for (const [type, key, form] of cases) {
      const pem = key.export({ format: 'pem', type: form }) as string;
      const parsed = await parsePrivateKeyPem(`junk before\n${pem}`);
      expect(parsed.type).toBe(type);
      const spki = new Uint8Array(nc.createPublicKey(key).export({ format: 'der', type: 'spki' }));
      expect(sameKey(parsed, spki)).toBe(true);
    }
  });

  it('parses a SEC1 key whose public point is left out, and stored PKCS#8 DER', async () => {
    for (const bits of [224, 256]) {
      const k = await generateKey('ec', bits);
      const sec1 = AsnConvert.parse(nodePriv(k).export({ format: 'der', type: 'sec1' }), ECPrivateKey);
      const bare = new ECPrivateKey({ version: 1, privateKey: sec1.privateKey, parameters: sec1.parameters });
      const back = await parsePrivateKeyPem(toPem('EC PRIVATE KEY', new Uint8Array(AsnConvert.serialize(bare))));
      expect(sameKey(back, k.spki)).toBe(true);
      expect(sameKey(await parsePkcs8(k.pkcs8), k.spki)).toBe(true);
    }
  });

  it('refuses garbage, encrypted keys and non-key PEM', async () => {
    await rejects400(parsePrivateKeyPem('not pem at all'), 'no data found in PEM block');
    await rejects400(parsePrivateKeyPem(toPem('CERTIFICATE', new Uint8Array([48, 0]))), 'no data found in PEM block');
    await rejects400(parsePrivateKeyPem(toPem('PRIVATE KEY', new Uint8Array([48, 3, 2, 1, 0]))), 'failed to parse private key');
    await rejects400(parsePrivateKeyPem(toPem('RSA PRIVATE KEY', new Uint8Array([1, 2, 3]))), 'failed to parse private key');
    await rejects400(parsePrivateKeyPem(toPem('ENCRYPTED PRIVATE KEY', new Uint8Array([48, 0]))), 'Encrypted private key given');
    // SEC1 without the named curve: Go's parser refuses it too
    const k = await generateKey('ec', 256);
    const sec1 = AsnConvert.parse(nodePriv(k).export({ format: 'der', type: 'sec1' }), ECPrivateKey);
    const noCurve = new ECPrivateKey({ version: 1, privateKey: sec1.privateKey, publicKey: sec1.publicKey });
    await rejects400(parsePrivateKeyPem(toPem('EC PRIVATE KEY', new Uint8Array(AsnConvert.serialize(noCurve)))), 'failed to parse private key');
    // a PKCS#8 EC key naming a curve we don't support (secp256k1)
    const info = AsnConvert.parse(k.pkcs8, PrivateKeyInfo);
    info.privateKeyAlgorithm.parameters = AsnConvert.serialize(new ECParameters({ namedCurve: '1.3.132.0.10' }));
    await rejects400(parsePrivateKeyPem(toPem('PRIVATE KEY', new Uint8Array(AsnConvert.serialize(info)))), 'unsupported elliptic curve');
  });
});

describe('public keys', () => {
  it('publicKeyInfo refuses unsupported algorithms and garbage', async () => {
    const x25519 = nc.generateKeyPairSync('x25519').publicKey.export({ format: 'der', type: 'spki' });
    await rejects400(() => publicKeyInfo(new Uint8Array(x25519)), 'unsupported public key algorithm');
    await rejects400(() => publicKeyInfo(new Uint8Array([1, 2, 3])), 'failed to parse public key');
  });

  it('sameKey tells matching from non-matching keys', async () => {
    const a = await generateKey('ec', 256);
    const b = await generateKey('ec', 256);
    const c = await generateKey('ec', 384);
    expect(sameKey(a, a.spki)).toBe(true);
    expect(sameKey(a, b.spki)).toBe(false);
    expect(sameKey(a, c.spki)).toBe(false);
    expect(sameKey(a, new Uint8Array([1, 2]))).toBe(false);
  });

  for (const [type, bits] of [['rsa', 2048], ['ec', 224], ['ec', 256], ['ec', 384], ['ec', 521], ['ed25519', 0]] as const) {
    it(`subjectKeyId for ${type} ${bits} matches an independent SHA-1 of the key material`, async () => {
      const k = await generateKey(type, bits);
      const skid = await subjectKeyId(k.spki);
      expect(skid).toHaveLength(20);
      expect(toHex(skid)).toBe(expectedSkid(k));
    });
  }
});

describe('signers', () => {
  const data = new TextEncoder().encode('to be signed');

  /**
   * An outside view of our X.509-format signature: node:crypto, except for PSS (workerd's node:crypto
   * ignores the PSS options), which goes to WebCrypto with the salt length spelled out here.
   */
  async function nodeVerify(k: PkiKey, goName: string, sig: Uint8Array): Promise<boolean> {
    const pub = { key: Buffer.from(k.spki), format: 'der', type: 'spki' } as const;
    if (goName === 'PureEd25519') return nc.verify(null, data, pub, sig);
    const hash = /SHA(\d{3})/.exec(goName)![1];
    if (goName.endsWith('PSS')) {
      const key = await crypto.subtle.importKey('spki', k.spki, { name: 'RSA-PSS', hash: `SHA-${hash}` }, false, ['verify']);
      return await crypto.subtle.verify({ name: 'RSA-PSS', saltLength: Number(hash) / 8 }, key, sig, data);
    }
    return nc.verify(`sha${hash}`, data, pub, sig); // ECDSA: DER signature, node's default
  }

  it('pick Vault’s algorithms: RSA hash from signature_bits, PSS on request, EC by curve, Ed25519 pure', async () => {
    const rsa = await generateKey('rsa', 2048);
    const cases: [PkiKey, number, boolean, string][] = [
      [rsa, 0, false, 'SHA256WithRSA'],
      [rsa, 256, false, 'SHA256WithRSA'],
      [rsa, 384, false, 'SHA384WithRSA'],
      [rsa, 512, false, 'SHA512WithRSA'],
      [rsa, 0, true, 'SHA256WithRSAPSS'],
      [rsa, 384, true, 'SHA384WithRSAPSS'],
      [rsa, 512, true, 'SHA512WithRSAPSS'],
    ];
    for (const [bits, name] of [[224, 'ECDSAWithSHA256'], [256, 'ECDSAWithSHA256'], [384, 'ECDSAWithSHA384'], [521, 'ECDSAWithSHA512']] as const) {
      const ec = await generateKey('ec', bits);
      cases.push([ec, 0, false, name], [ec, 512, false, name], [ec, 256, true, name]);
    }
    const ed = await generateKey('ed25519', 0);
    cases.push([ed, 0, false, 'PureEd25519'], [ed, 384, true, 'PureEd25519']);

    for (const [key, bits, pss, name] of cases) {
      const s = await signerFor(key, bits, pss);
      expect(s.goName).toBe(name);
      expect(s.keyType).toBe(key.type);
      const sig = await s.sign(data);
      expect(await nodeVerify(key, name, sig), `${name} ${key.bits}`).toBe(true);
      expect(await verifySignature(key.spki, s.signatureAlgorithm, data, sig)).toBe(true);
      expect(await verifySignature(key.spki, s.signatureAlgorithm, new TextEncoder().encode('other'), sig)).toBe(false);
    }
  });

  it('encode the AlgorithmIdentifier like Go (NULL params for PKCS#1 v1.5, full PSS params, none for ECDSA/Ed25519)', async () => {
    const rsa = await generateKey('rsa', 2048);
    const hex = async (k: PkiKey, bits: number, pss: boolean): Promise<string> =>
      toHex(new Uint8Array(AsnConvert.serialize((await signerFor(k, bits, pss)).signatureAlgorithm)));
    expect(await hex(rsa, 0, false)).toBe('300d06092a864886f70d01010b0500');
    // Go's pssParametersSHA256
    expect(await hex(rsa, 0, true)).toBe(
      '304106092a864886f70d01010a3034a00f300d06096086480165030402010500a11c301a06092a864886f70d010108300d06096086480165030402010500a203020120',
    );
    expect(await hex(await generateKey('ec', 256), 0, false)).toBe('300a06082a8648ce3d040302');
    expect(await hex(await generateKey('ed25519', 0), 0, false)).toBe('300506032b6570');
  });

  it('reuse the imported CryptoKey for the same key and algorithm', async () => {
    const k = await generateKey('ec', 256);
    const a = await signerFor(k, 0, false);
    const b = await signerFor({ ...k, pkcs8: new Uint8Array(k.pkcs8) }, 0, false);
    expect(b.key).toBe(a.key);
  });

  it('refuse bad signature_bits for RSA only', async () => {
    const rsa = await generateKey('rsa', 2048);
    await rejects400(signerFor(rsa, 123, false), 'unsupported hash signature algorithm: 123');
    const ec = await generateKey('ec', 256);
    expect((await signerFor(ec, 123, false)).goName).toBe('ECDSAWithSHA256');
  });

  it('signerForGoName: every name for its key type, case-insensitive, ed25519 alias; refuses mismatches', async () => {
    const keys = { rsa: await generateKey('rsa', 2048), ec: await generateKey('ec', 384), ed25519: await generateKey('ed25519', 0) };
    expect(GO_SIGNATURE_ALGORITHMS).toHaveLength(10);
    for (const name of GO_SIGNATURE_ALGORITHMS) {
      const type: PkiKeyType = name.includes('RSA') ? 'rsa' : name.startsWith('ECDSA') ? 'ec' : 'ed25519';
      const s = await signerForGoName(keys[type], name.toLowerCase());
      expect(s.goName).toBe(name);
      expect(await nodeVerify(keys[type], name, await s.sign(data))).toBe(true);
      for (const other of ['rsa', 'ec', 'ed25519'] as const) {
        if (other !== type) await rejects400(signerForGoName(keys[other], name), 'cannot be used with a key of type');
      }
    }
    expect((await signerForGoName(keys.ed25519, 'Ed25519')).goName).toBe('PureEd25519');
    expect(vaultSignatureAlgorithmName('PureEd25519')).toBe('Ed25519');
    expect(vaultSignatureAlgorithmName('SHA256WithRSA')).toBe('SHA256WithRSA');
    await rejects400(signerForGoName(keys.rsa, 'SHA1WithRSA'), 'unknown signature algorithm');
  });

  it('verifySignature refuses mismatched key types and unknown algorithms', async () => {
    const ec = await generateKey('ec', 256);
    const rsa = await generateKey('rsa', 2048);
    const s = await signerFor(ec, 0, false);
    const sig = await s.sign(data);
    expect(await verifySignature(rsa.spki, s.signatureAlgorithm, data, sig)).toBe(false);
    expect(await verifySignature(ec.spki, new AlgorithmIdentifier({ algorithm: '1.2.3.4' }), data, sig)).toBe(false);
    expect(await verifySignature(ec.spki, s.signatureAlgorithm, data, new Uint8Array([1, 2, 3]))).toBe(false);
  });
});
