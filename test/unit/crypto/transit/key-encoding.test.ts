// Key encodings transit exports and imports, checked against node:crypto's own encoders and parsers
// (a different implementation), RFC 8032 vector 1, Vault's quirky import forms and every parse error.
import { beforeAll, describe, expect, it } from 'vitest';
import * as nc from 'node:crypto';
import { ECParameters, ECPrivateKey, id_ecPublicKey, id_secp224r1, id_secp256r1 } from '@peculiar/asn1-ecc';
import { PrivateKey, PrivateKeyInfo } from '@peculiar/asn1-pkcs8';
import { RSAPrivateKey, id_RSASSA_PSS } from '@peculiar/asn1-rsa';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, SubjectPublicKeyInfo } from '@peculiar/asn1-x509';
import {
  AsymmetricError,
  ed25519FromSeed,
  generateKeyPair,
  sign,
  verify,
  type AsymmetricKey,
  type AsymmetricType,
  type SignOptions,
} from '../../../../src/crypto/transit/asymmetric';
import {
  ecFromParts,
  ecParts,
  ecPrivateKeyPem,
  ed25519FromPrivate64,
  ed25519Private64,
  ed25519PublicRaw,
  parsePkcs8,
  parsePublicKeyPem,
  publicKeyPem,
  rsaFromParts,
  rsaFromPublicParts,
  rsaParts,
  rsaPrivateKeyPem,
  rsaPublicParts,
  type RsaParts,
} from '../../../../src/crypto/transit/key-encoding';
import { fromBase64, fromHex, toBase64, toHex, utf8 } from '../../../../src/crypto/encoding';

const TYPES: AsymmetricType[] = ['ed25519', 'ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521', 'rsa-2048'];
const EC_TYPES = ['ecdsa-p256', 'ecdsa-p384', 'ecdsa-p521'] as const;
const SIGN: SignOptions = { hash: 'sha2-256', prehashed: false, signatureAlgorithm: 'pss', saltLength: 'auto', marshaling: 'asn1' };
const message = utf8('key encoding test');

const hex = (s: string): Uint8Array => fromHex(s) as Uint8Array;
const der = (o: unknown): Uint8Array => new Uint8Array(AsnConvert.serialize(o));
const nodePriv = (k: AsymmetricKey) => nc.createPrivateKey({ key: Buffer.from(k.privateKey as Uint8Array), format: 'der', type: 'pkcs8' });
const nodePub = (k: AsymmetricKey) => nc.createPublicKey({ key: Buffer.from(k.publicKey), format: 'der', type: 'spki' });
const b64uInt = (s: string | undefined): bigint => BigInt('0x' + toHex(fromBase64((s as string).replace(/-/g, '+').replace(/_/g, '/')) as Uint8Array));
const pkcs8Of = (algorithm: string, inner: Uint8Array, parameters?: ArrayBuffer): Uint8Array =>
  der(new PrivateKeyInfo({ version: 0, privateKeyAlgorithm: new AlgorithmIdentifier({ algorithm, parameters }), privateKey: new PrivateKey(inner) }));
const curveParams = (oid: string): ArrayBuffer => AsnConvert.serialize(new ECParameters({ namedCurve: oid }));

/** A signature from `a` must verify under `b` (same key pair). */
async function samePair(a: AsymmetricKey, b: AsymmetricKey): Promise<void> {
  expect(toHex(b.publicKey)).toBe(toHex(a.publicKey));
  expect(await verify(b, message, await sign(a, message, SIGN), SIGN)).toBe(true);
  if (b.privateKey) expect(await verify(a, message, await sign(b, message, SIGN), SIGN)).toBe(true);
}

const keys = {} as Record<AsymmetricType, AsymmetricKey>;
beforeAll(async () => {
  const made = await Promise.all(TYPES.map((t) => generateKeyPair(t)));
  TYPES.forEach((t, i) => (keys[t] = made[i]));
}, 30_000);

describe('PEM exports', () => {
  it('publicKeyPem is node:crypto\'s SPKI PEM, in 64-character lines with a trailing newline', () => {
    for (const type of TYPES) {
      const pem = publicKeyPem(keys[type]);
      expect(pem).toBe(nodePub(keys[type]).export({ type: 'spki', format: 'pem' }));
      expect(pem.startsWith('-----BEGIN PUBLIC KEY-----\n')).toBe(true);
      expect(pem.endsWith('\n-----END PUBLIC KEY-----\n')).toBe(true);
      for (const line of pem.trim().split('\n').slice(1, -1)) expect(line.length).toBeLessThanOrEqual(64);
    }
  });

  it('rsaPrivateKeyPem is a PKCS#1 "RSA PRIVATE KEY" node:crypto loads', () => {
    const key = keys['rsa-2048'];
    const pem = rsaPrivateKeyPem(key);
    expect(pem).toBe(nodePriv(key).export({ type: 'pkcs1', format: 'pem' }));
    expect(pem.startsWith('-----BEGIN RSA PRIVATE KEY-----\n') && pem.endsWith('-----END RSA PRIVATE KEY-----\n')).toBe(true);
    const loaded = nc.createPrivateKey(pem);
    expect(new Uint8Array(nc.createPublicKey(loaded).export({ type: 'spki', format: 'der' }))).toEqual(key.publicKey);
  });

  it.each(EC_TYPES)('ecPrivateKeyPem (%s) is SEC1 with the curve OID and public key, loadable by node:crypto', (type) => {
    const key = keys[type];
    const pem = ecPrivateKeyPem(key);
    expect(pem).toBe(nodePriv(key).export({ type: 'sec1', format: 'pem' }));
    const loaded = nc.createPrivateKey(pem);
    expect(loaded.asymmetricKeyType).toBe('ec');
    expect(new Uint8Array(nc.createPublicKey(loaded).export({ type: 'spki', format: 'der' }))).toEqual(key.publicKey);
    const body = fromBase64(pem.split('\n').slice(1, -2).join('')) as Uint8Array;
    const sec1 = AsnConvert.parse(body, ECPrivateKey);
    expect(sec1.version).toBe(1);
    expect(sec1.parameters?.namedCurve).toBeDefined();
    expect(sec1.privateKey.byteLength).toBe({ 'ecdsa-p256': 32, 'ecdsa-p384': 48, 'ecdsa-p521': 66 }[type]);
  });

  it('refuses the wrong key type or a public-only key', () => {
    expect(() => rsaPrivateKeyPem(keys['ecdsa-p256'])).toThrow(AsymmetricError);
    expect(() => ecPrivateKeyPem(keys['rsa-2048'])).toThrow(AsymmetricError);
    expect(() => ecPrivateKeyPem({ ...keys['ecdsa-p256'], privateKey: null })).toThrow(AsymmetricError);
    expect(() => rsaPrivateKeyPem({ ...keys['rsa-2048'], privateKey: null })).toThrow(AsymmetricError);
    expect(() => ed25519PublicRaw(keys['rsa-2048'])).toThrow(AsymmetricError);
    expect(() => ed25519Private64(keys['ecdsa-p256'])).toThrow(AsymmetricError);
    expect(() => ed25519Private64({ ...keys.ed25519, privateKey: null })).toThrow(AsymmetricError);
  });
});

describe('Ed25519 raw forms', () => {
  // RFC 8032 §7.1, TEST 1
  const seed = hex('9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60');
  const publicRaw = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';

  it('ed25519PublicRaw / ed25519Private64 follow Go\'s layout (RFC 8032 test 1)', async () => {
    const key = await ed25519FromSeed(seed);
    expect(toHex(ed25519PublicRaw(key))).toBe(publicRaw);
    expect(toHex(ed25519Private64(key))).toBe(toHex(seed) + publicRaw);
    const jwk = nodePriv(key).export({ format: 'jwk' });
    expect(toHex(ed25519PublicRaw(key))).toBe(b64uInt(jwk.x).toString(16).padStart(64, '0'));
  });

  it('ed25519FromPrivate64 round-trips and checks the public half', async () => {
    const private64 = ed25519Private64(keys.ed25519);
    await samePair(keys.ed25519, await ed25519FromPrivate64(private64));
    const wrong = private64.slice();
    wrong[63] ^= 1;
    await expect(ed25519FromPrivate64(wrong)).rejects.toThrow('ed25519 public key does not match the private key');
    await expect(ed25519FromPrivate64(private64.subarray(0, 32))).rejects.toThrow(AsymmetricError);
  });
});

describe('parsePkcs8 (BYOK)', () => {
  it('accepts our own keys and node:crypto\'s, of every type', async () => {
    for (const type of TYPES) await samePair(keys[type], await parsePkcs8(type, keys[type].privateKey as Uint8Array));
    const nodeKeys: [AsymmetricType, nc.KeyPairKeyObjectResult][] = [
      ['rsa-2048', nc.generateKeyPairSync('rsa', { modulusLength: 2048 })],
      ['ecdsa-p384', nc.generateKeyPairSync('ec', { namedCurve: 'P-384' })],
      ['ed25519', nc.generateKeyPairSync('ed25519')],
    ];
    for (const [type, pair] of nodeKeys) {
      const pk8 = new Uint8Array(pair.privateKey.export({ type: 'pkcs8', format: 'der' }));
      const key = await parsePkcs8(type, pk8);
      expect(toHex(key.publicKey)).toBe(toHex(new Uint8Array(pair.publicKey.export({ type: 'spki', format: 'der' }))));
      if (type === 'rsa-2048') {
        const pkcs1 = { ...SIGN, signatureAlgorithm: 'pkcs1v15' } as const;
        expect(await verify(key, message, new Uint8Array(nc.sign('sha256', message, pair.privateKey)), pkcs1)).toBe(true);
      } else {
        expect(nc.verify(type === 'ed25519' ? null : 'sha256', message, pair.publicKey, await sign(key, message, SIGN))).toBe(true);
      }
    }
  });

  it('accepts RSA keys under the RSASSA-PSS OID', async () => {
    const key = keys['rsa-2048'];
    const inner = new Uint8Array(AsnConvert.parse(key.privateKey as Uint8Array, PrivateKeyInfo).privateKey.buffer);
    await samePair(key, await parsePkcs8('rsa-2048', pkcs8Of(id_RSASSA_PSS, inner)));
  });

  it('accepts Vault\'s Ed25519-in-ECPrivateKey form (NSS and X25519 curve OIDs)', async () => {
    const seed = nc.randomBytes(32);
    const expected = await ed25519FromSeed(seed);
    const inner = der(new ECPrivateKey({ version: 1, privateKey: new OctetString(seed) }));
    for (const oid of ['1.3.6.1.4.1.11591.15.1', '1.3.101.110']) {
      await samePair(expected, await parsePkcs8('ed25519', pkcs8Of(id_ecPublicKey, inner, curveParams(oid))));
    }
    await expect(parsePkcs8('rsa-2048', pkcs8Of(id_ecPublicKey, inner, curveParams('1.3.101.110')))).rejects.toThrow(
      'invalid key type: expected rsa-2048, got ed25519.PrivateKey',
    );
  });

  it('accepts EC keys without an embedded public key, or with the curve only inside', async () => {
    const key = keys['ecdsa-p256'];
    const d = new Uint8Array((await ecParts(key)).d!.toString(16).padStart(64, '0').match(/../g)!.map((h) => parseInt(h, 16)));
    const bare = der(new ECPrivateKey({ version: 1, privateKey: new OctetString(d) }));
    await samePair(key, await parsePkcs8('ecdsa-p256', pkcs8Of(id_ecPublicKey, bare, curveParams(id_secp256r1))));
    const curveInside = der(new ECPrivateKey({ version: 1, privateKey: new OctetString(d), parameters: new ECParameters({ namedCurve: id_secp256r1 }) }));
    await samePair(key, await parsePkcs8('ecdsa-p256', pkcs8Of(id_ecPublicKey, curveInside)));
  });

  it('refuses mismatched types with Vault\'s messages', async () => {
    const pk = (t: AsymmetricType) => keys[t].privateKey as Uint8Array;
    await expect(parsePkcs8('ecdsa-p256', pk('rsa-2048'))).rejects.toThrow('invalid key type: expected ecdsa-p256, got *rsa.PrivateKey');
    await expect(parsePkcs8('rsa-4096', pk('ecdsa-p384'))).rejects.toThrow('invalid key type: expected rsa-4096, got *ecdsa.PrivateKey');
    await expect(parsePkcs8('rsa-2048', pk('ed25519'))).rejects.toThrow('invalid key type: expected rsa-2048, got ed25519.PrivateKey');
    await expect(parsePkcs8('ed25519', pk('ecdsa-p256'))).rejects.toThrow('invalid key type: expected ed25519, got *ecdsa.PrivateKey');
    await expect(parsePkcs8('ecdsa-p256', pk('ecdsa-p384'))).rejects.toThrow('invalid curve: expected P-256, got P-384');
    await expect(parsePkcs8('ecdsa-p521', pk('ecdsa-p256'))).rejects.toThrow('invalid curve: expected P-521, got P-256');
    await expect(parsePkcs8('rsa-3072', pk('rsa-2048'))).rejects.toThrow('invalid key size: expected 384 bytes, got 256 bytes');
    const p224 = der(new ECPrivateKey({ version: 1, privateKey: new OctetString(new Uint8Array(28).fill(3)) }));
    await expect(parsePkcs8('ecdsa-p256', pkcs8Of(id_ecPublicKey, p224, curveParams(id_secp224r1)))).rejects.toThrow(
      'invalid curve: expected P-256, got P-224',
    );
    await expect(parsePkcs8('ecdsa-p256', pkcs8Of(id_ecPublicKey, p224, curveParams('1.3.132.0.10')))).rejects.toThrow('unknown elliptic curve');
  });

  it('reports every malformed input as an AsymmetricError', async () => {
    const rsaInner = new Uint8Array(AsnConvert.parse(keys['rsa-2048'].privateKey as Uint8Array, PrivateKeyInfo).privateKey.buffer);
    const ecInner = new Uint8Array(AsnConvert.parse(keys['ecdsa-p256'].privateKey as Uint8Array, PrivateKeyInfo).privateKey.buffer);
    await expect(parsePkcs8('rsa-2048', utf8('not DER'))).rejects.toThrow('error parsing asymmetric key: x509: malformed PKCS#8 private key');
    await expect(parsePkcs8('rsa-2048', new Uint8Array(0))).rejects.toThrow(AsymmetricError);
    await expect(parsePkcs8('rsa-2048', rsaInner)).rejects.toThrow('use ParsePKCS1PrivateKey instead');
    await expect(parsePkcs8('ecdsa-p256', ecInner)).rejects.toThrow('use ParseECPrivateKey instead');
    await expect(parsePkcs8('ed25519', pkcs8Of('1.3.101.110', der(new OctetString(new Uint8Array(32)))))).rejects.toThrow(
      'PKCS#8 wrapping contained private key with unknown algorithm: 1.3.101.110',
    );
    await expect(parsePkcs8('rsa-2048', pkcs8Of('1.2.840.113549.1.1.1', utf8('garbage')))).rejects.toThrow(
      'failed to parse RSA private key embedded in PKCS#8',
    );
    await expect(parsePkcs8('ecdsa-p256', pkcs8Of(id_ecPublicKey, utf8('garbage'), curveParams(id_secp256r1)))).rejects.toThrow(
      'failed to parse EC private key embedded in PKCS#8',
    );
    await expect(parsePkcs8('ed25519', pkcs8Of('1.3.101.112', utf8('garbage')))).rejects.toThrow('invalid Ed25519 private key');
    await expect(parsePkcs8('ed25519', pkcs8Of('1.3.101.112', der(new OctetString(new Uint8Array(31)))))).rejects.toThrow(
      'invalid Ed25519 private key length: 31',
    );
    // swapped primes: the CRT values no longer fit
    const rsa = AsnConvert.parse(rsaInner, RSAPrivateKey);
    [rsa.prime1, rsa.prime2] = [rsa.prime2, rsa.prime1];
    await expect(parsePkcs8('rsa-2048', pkcs8Of('1.2.840.113549.1.1.1', der(rsa)))).rejects.toThrow('invalid RSA private key');
    for (const d of [new Uint8Array(32), new Uint8Array(32).fill(0xff)]) {
      const ec = der(new ECPrivateKey({ version: 1, privateKey: new OctetString(d) }));
      await expect(parsePkcs8('ecdsa-p256', pkcs8Of(id_ecPublicKey, ec, curveParams(id_secp256r1)))).rejects.toThrow('invalid EC private key');
    }
  });
});

describe('parsePublicKeyPem', () => {
  it('round-trips every type to a public-only key that verifies', async () => {
    for (const type of TYPES) {
      const parsed = await parsePublicKeyPem(type, publicKeyPem(keys[type]));
      expect(parsed.privateKey).toBeNull();
      await samePair(keys[type], parsed);
    }
  });

  it('accepts CRLF line endings, surrounding text and any block label', async () => {
    const pem = publicKeyPem(keys['ecdsa-p384']);
    const crlf = 'leading text\r\n' + pem.replace(/\n/g, '\r\n') + 'trailing';
    expect(toHex((await parsePublicKeyPem('ecdsa-p384', crlf)).publicKey)).toBe(toHex(keys['ecdsa-p384'].publicKey));
    const relabelled = pem.replace(/PUBLIC KEY/g, 'SOMETHING');
    expect(toHex((await parsePublicKeyPem('ecdsa-p384', relabelled)).publicKey)).toBe(toHex(keys['ecdsa-p384'].publicKey));
  });

  it('refuses everything else with Vault\'s messages', async () => {
    const pem = (t: AsymmetricType) => publicKeyPem(keys[t]);
    const wrap = (b: Uint8Array) => `-----BEGIN PUBLIC KEY-----\n${toBase64(b)}\n-----END PUBLIC KEY-----\n`;
    await expect(parsePublicKeyPem('rsa-2048', 'no pem here')).rejects.toThrow('error parsing public key: not in PEM format');
    await expect(parsePublicKeyPem('rsa-2048', '-----BEGIN PUBLIC KEY-----\n!!!\n-----END PUBLIC KEY-----\n')).rejects.toThrow('not in PEM format');
    await expect(parsePublicKeyPem('rsa-2048', wrap(utf8('not DER')))).rejects.toThrow('error parsing public key: x509: malformed public key');
    await expect(parsePublicKeyPem('rsa-2048', pem('ecdsa-p256'))).rejects.toThrow('invalid key type: expected rsa-2048, got *ecdsa.PublicKey');
    await expect(parsePublicKeyPem('ecdsa-p256', pem('ed25519'))).rejects.toThrow('invalid key type: expected ecdsa-p256, got ed25519.PublicKey');
    await expect(parsePublicKeyPem('ed25519', pem('rsa-2048'))).rejects.toThrow('invalid key type: expected ed25519, got *rsa.PublicKey');
    await expect(parsePublicKeyPem('ecdsa-p384', pem('ecdsa-p521'))).rejects.toThrow('invalid curve: expected P-384, got P-521');
    await expect(parsePublicKeyPem('rsa-4096', pem('rsa-2048'))).rejects.toThrow('invalid key size: expected 512 bytes, got 256 bytes');
    const x25519 = new Uint8Array(nc.generateKeyPairSync('x25519').publicKey.export({ type: 'spki', format: 'der' }));
    await expect(parsePublicKeyPem('ed25519', wrap(x25519))).rejects.toThrow('error parsing public key: x509: unknown public key algorithm');
    const k1 = AsnConvert.parse(keys['ecdsa-p256'].publicKey, SubjectPublicKeyInfo);
    k1.algorithm = new AlgorithmIdentifier({ algorithm: id_ecPublicKey, parameters: curveParams('1.3.132.0.10') });
    await expect(parsePublicKeyPem('ecdsa-p256', wrap(der(k1)))).rejects.toThrow('error parsing public key: x509: unsupported elliptic curve');
    // a point that is not on the curve
    const spki = AsnConvert.parse(keys['ecdsa-p256'].publicKey, SubjectPublicKeyInfo);
    const point = new Uint8Array(spki.subjectPublicKey);
    point[64] ^= 1;
    spki.subjectPublicKey = point.buffer;
    await expect(parsePublicKeyPem('ecdsa-p256', wrap(der(spki)))).rejects.toThrow(AsymmetricError);
  });
});

describe('RSA components', () => {
  it('rsaParts / rsaPublicParts match node:crypto\'s JWK export', async () => {
    const key = keys['rsa-2048'];
    const jwk = nodePriv(key).export({ format: 'jwk' });
    const parts = await rsaParts(key);
    expect(parts).toEqual({
      n: b64uInt(jwk.n),
      e: 65537,
      d: b64uInt(jwk.d),
      p: b64uInt(jwk.p),
      q: b64uInt(jwk.q),
      dp: b64uInt(jwk.dp),
      dq: b64uInt(jwk.dq),
      qi: b64uInt(jwk.qi),
    });
    expect(await rsaPublicParts(key)).toEqual({ n: parts.n, e: 65537 });
    expect(await rsaPublicParts({ ...key, privateKey: null })).toEqual({ n: parts.n, e: 65537 });
  });

  it('round-trips through the component forms', async () => {
    const key = keys['rsa-2048'];
    const parts = await rsaParts(key);
    await samePair(key, await rsaFromParts('rsa-2048', parts));
    const pub = await rsaFromPublicParts('rsa-2048', parts.n, parts.e);
    expect(pub.privateKey).toBeNull();
    await samePair(key, pub);
  });

  it('refuses inconsistent or mismatched components', async () => {
    const key = keys['rsa-2048'];
    const parts = await rsaParts(key);
    const bad = (o: Partial<RsaParts>) => rsaFromParts('rsa-2048', { ...parts, ...o });
    await expect(bad({ d: parts.d + 2n })).rejects.toThrow('invalid RSA private key: crypto/rsa: invalid exponents');
    await expect(bad({ n: parts.n + 2n })).rejects.toThrow('invalid RSA private key: crypto/rsa: invalid modulus');
    await expect(bad({ e: 1 })).rejects.toThrow('public exponent too small');
    await expect(bad({ e: 2 ** 32 })).rejects.toThrow('public exponent too large');
    await expect(bad({ qi: parts.qi + 1n })).rejects.toThrow('invalid CRT values');
    await expect(bad({ dp: parts.dp + 1n })).rejects.toThrow('invalid CRT values');
    await expect(rsaFromParts('rsa-3072', parts)).rejects.toThrow('invalid key size: expected 384 bytes, got 256 bytes');
    await expect(rsaFromParts('ecdsa-p256', parts)).rejects.toThrow('invalid key type: expected ecdsa-p256, got *rsa.PrivateKey');
    await expect(rsaFromPublicParts('rsa-2048', parts.n, 1)).rejects.toThrow(AsymmetricError);
    await expect(rsaFromPublicParts('rsa-2048', 0n, 65537)).rejects.toThrow(AsymmetricError);
    await expect(rsaFromPublicParts('rsa-4096', parts.n, 65537)).rejects.toThrow('invalid key size');
    await expect(rsaFromPublicParts('ed25519', parts.n, 65537)).rejects.toThrow('invalid key type: expected ed25519, got *rsa.PublicKey');
    await expect(rsaParts({ ...key, privateKey: null })).rejects.toThrow(AsymmetricError);
    await expect(rsaParts(keys['ecdsa-p256'])).rejects.toThrow(AsymmetricError);
    await expect(rsaPublicParts(keys.ed25519)).rejects.toThrow(AsymmetricError);
  });
});

describe('EC components', () => {
  it.each(EC_TYPES)('%s: ecParts matches the JWK, and round-trips with and without d', async (type) => {
    const key = keys[type];
    const jwk = nodePriv(key).export({ format: 'jwk' });
    const parts = await ecParts(key);
    expect(parts).toEqual({ x: b64uInt(jwk.x), y: b64uInt(jwk.y), d: b64uInt(jwk.d) });
    await samePair(key, await ecFromParts(type, parts));
    const pub = await ecFromParts(type, { ...parts, d: null });
    expect(pub.privateKey).toBeNull();
    await samePair(key, pub);
    expect(await ecParts(pub)).toEqual({ ...parts, d: null });
  });

  it('refuses points off the curve, a d that does not match, and wrong types', async () => {
    const parts = await ecParts(keys['ecdsa-p256']);
    const other = await ecParts(keys['ecdsa-p384']);
    await expect(ecFromParts('ecdsa-p256', { ...parts, y: parts.y + 1n })).rejects.toThrow('invalid EC key');
    await expect(ecFromParts('ecdsa-p256', { ...parts, d: parts.d! + 1n })).rejects.toThrow('invalid EC key');
    await expect(ecFromParts('ecdsa-p256', { ...parts, x: 1n << 256n })).rejects.toThrow('invalid EC key: value out of range for P-256');
    await expect(ecFromParts('ecdsa-p256', other)).rejects.toThrow(AsymmetricError);
    await expect(ecFromParts('rsa-2048', parts)).rejects.toThrow('invalid key type: expected rsa-2048, got *ecdsa.PrivateKey');
    await expect(ecParts(keys['rsa-2048'])).rejects.toThrow(AsymmetricError);
  });
});
