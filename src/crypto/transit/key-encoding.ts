// The key forms transit exports and imports (reference §6.7, §6.10-§6.12): PEM PKIX / PKCS#1 / SEC1,
// Ed25519 raw and Go's 64-byte private form, BYOK PKCS#8 and PEM public keys, and the component forms
// (Go big.Int / rsa.PrivateKey) used by Vault backups. ASN.1 goes through @peculiar/asn1-*; component
// conversions through JWK (node:crypto for RSA, WebCrypto for EC, which checks the point and the pair).

import { pemBlocks, toPem } from '../pem';
import { createPrivateKey, createPublicKey, type JsonWebKey } from 'node:crypto';
import { ECParameters, ECPrivateKey, id_ecPublicKey, id_secp224r1 } from '@peculiar/asn1-ecc';
import { PrivateKeyInfo } from '@peculiar/asn1-pkcs8';
import { RSAPrivateKey, RSAPublicKey, id_RSASSA_PSS, id_rsaEncryption } from '@peculiar/asn1-rsa';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { SubjectPublicKeyInfo } from '@peculiar/asn1-x509';
import { concatBytes, toBase64Url } from '../encoding';
import { constantTimeEqual } from '../timing';
import {
  AsymmetricError,
  EC_CURVES,
  ID_ED25519,
  RSA_BITS,
  asBuffer,
  bigIntToBytes,
  bytesToBigInt,
  ecScalar,
  ed25519FromSeed,
  isEcType,
  isRsaType,
  rsaModulusBits,
  spkiOfPkcs8,
  type AsymmetricKey,
  type AsymmetricType,
  type EcType,
  type RsaType,
} from './asymmetric';

/** Vault backup forms (Go's big.Int / rsa.PrivateKey JSON): components as bigints. */
export interface RsaParts {
  n: bigint;
  e: number;
  d: bigint;
  p: bigint;
  q: bigint;
  dp: bigint;
  dq: bigint;
  qi: bigint;
}

export interface EcParts {
  x: bigint;
  y: bigint;
  d: bigint | null;
}

/** The first PEM block's bytes, whatever its label (as Go's pem.Decode). */
const pemBody = (text: string): Uint8Array | null => pemBlocks(text)[0]?.der ?? null;

// ---- structure helpers

const parse = <T>(der: Uint8Array | ArrayBuffer, cls: new () => T): T => AsnConvert.parse(der, cls);

function requireType<T extends AsymmetricType>(key: AsymmetricKey, ok: (t: AsymmetricType) => t is T, what: string): T {
  if (!ok(key.type)) throw new AsymmetricError(`${what} not supported for key type ${key.type}`);
  return key.type;
}

function requirePrivate(key: AsymmetricKey): Uint8Array {
  if (!key.privateKey) throw new AsymmetricError('the key version does not contain a private part');
  return key.privateKey;
}

const isEd25519 = (t: AsymmetricType): t is 'ed25519' => t === 'ed25519';

/** The inner private key of a PKCS#8 PrivateKeyInfo (PKCS#1 RSAPrivateKey, SEC1 ECPrivateKey, RFC 8410 seed). */
const innerPrivate = (pkcs8: Uint8Array): ArrayBuffer => parse(pkcs8, PrivateKeyInfo).privateKey.buffer;

const subjectPublicKey = (spki: Uint8Array): Uint8Array => new Uint8Array(parse(spki, SubjectPublicKeyInfo).subjectPublicKey);

// ---- exports

/** PKIX "PUBLIC KEY" PEM, 64-character lines, trailing "\n". */
export function publicKeyPem(key: AsymmetricKey): string {
  return toPem('PUBLIC KEY', key.publicKey);
}

/** PKCS#1 "RSA PRIVATE KEY" PEM, trailing "\n". */
export function rsaPrivateKeyPem(key: AsymmetricKey): string {
  requireType(key, isRsaType, 'RSA private key export');
  return toPem('RSA PRIVATE KEY', new Uint8Array(innerPrivate(requirePrivate(key))));
}

/** SEC1 "EC PRIVATE KEY" PEM (with the curve OID and public key, as Go's MarshalECPrivateKey), trailing "\n". */
export function ecPrivateKeyPem(key: AsymmetricKey): string {
  const curve = EC_CURVES[requireType(key, isEcType, 'EC private key export')];
  const ec = new ECPrivateKey({
    version: 1,
    privateKey: new OctetString(ecScalar(requirePrivate(key), curve.size)),
    parameters: new ECParameters({ namedCurve: curve.oid }),
    publicKey: subjectPublicKey(key.publicKey).slice().buffer,
  });
  return toPem('EC PRIVATE KEY', new Uint8Array(AsnConvert.serialize(ec)));
}

/** The raw 32-byte Ed25519 public key. */
export function ed25519PublicRaw(key: AsymmetricKey): Uint8Array {
  requireType(key, isEd25519, 'ed25519 public key export');
  return subjectPublicKey(key.publicKey);
}

/** Go's ed25519.PrivateKey form: seed(32) ‖ public(32). */
export function ed25519Private64(key: AsymmetricKey): Uint8Array {
  requireType(key, isEd25519, 'ed25519 private key export');
  const seed = new Uint8Array(parse(innerPrivate(requirePrivate(key)), OctetString).buffer);
  return concatBytes(seed, ed25519PublicRaw(key));
}

/** Go's 64-byte form back to a key; the public half must match the seed. */
export async function ed25519FromPrivate64(b: Uint8Array): Promise<AsymmetricKey> {
  if (b.length !== 64) throw new AsymmetricError(`invalid ed25519 private key length ${b.length}, expected 64 bytes`);
  const key = await ed25519FromSeed(b.subarray(0, 32));
  if (!constantTimeEqual(ed25519PublicRaw(key), b.subarray(32))) throw new AsymmetricError('ed25519 public key does not match the private key');
  return key;
}

// ---- imports (Vault's messages, which quote Go's key type names)

const ID_ED25519_NSS = '1.3.6.1.4.1.11591.15.1';
const ID_X25519 = '1.3.101.110'; // sic: Vault accepts it as an Ed25519 curve inside ECPrivateKey
const CURVE_NAMES: Record<string, string> = {
  ...Object.fromEntries(Object.values(EC_CURVES).map((c) => [c.oid, c.name])),
  [id_secp224r1]: 'P-224',
};

function expectFamily(type: AsymmetricType, family: 'rsa' | 'ecdsa' | 'ed25519', isPrivate: boolean): void {
  const ok = family === 'rsa' ? isRsaType(type) : family === 'ecdsa' ? isEcType(type) : type === 'ed25519';
  if (ok) return;
  const goType = family === 'ed25519' ? 'ed25519.' : family === 'rsa' ? '*rsa.' : '*ecdsa.';
  throw new AsymmetricError(`invalid key type: expected ${type}, got ${goType}${isPrivate ? 'PrivateKey' : 'PublicKey'}`);
}

function expectCurve(type: EcType, oid: string | undefined, unknown: string): void {
  const want = EC_CURVES[type].name;
  const got = oid && CURVE_NAMES[oid];
  if (!got) throw new AsymmetricError(unknown);
  if (got !== want) throw new AsymmetricError(`invalid curve: expected ${want}, got ${got}`);
}

function expectRsaSize(type: RsaType, bits: number): void {
  const want = RSA_BITS[type] / 8;
  const got = Math.ceil(bits / 8);
  if (got !== want) throw new AsymmetricError(`invalid key size: expected ${want} bytes, got ${got} bytes`);
}

/** Why a DER blob is not PKCS#8, in Go's words (it recognises the PKCS#1 and SEC1 forms). */
function notPkcs8(der: Uint8Array): AsymmetricError {
  const hint = (cls: new () => object): boolean => {
    try {
      parse(der, cls);
      return true;
    } catch {
      return false;
    }
  };
  const use = hint(RSAPrivateKey) ? 'ParsePKCS1PrivateKey' : hint(ECPrivateKey) ? 'ParseECPrivateKey' : null;
  return new AsymmetricError(
    use
      ? `error parsing asymmetric key: x509: failed to parse private key (use ${use} instead for this key format)`
      : 'error parsing asymmetric key: x509: malformed PKCS#8 private key',
  );
}

/** BYOK import material (DER PKCS#8 PrivateKeyInfo), checked against `type` like Vault does. */
export async function parsePkcs8(type: AsymmetricType, der: Uint8Array): Promise<AsymmetricKey> {
  let info: PrivateKeyInfo;
  try {
    info = parse(der, PrivateKeyInfo);
  } catch {
    throw notPkcs8(der);
  }
  const alg = info.privateKeyAlgorithm.algorithm;
  const inner = info.privateKey.buffer;
  if (alg === id_rsaEncryption || alg === id_RSASSA_PSS) {
    expectFamily(type, 'rsa', true);
    let rsa: RSAPrivateKey;
    try {
      rsa = parse(inner, RSAPrivateKey);
    } catch {
      throw new AsymmetricError('error parsing asymmetric key: x509: failed to parse RSA private key embedded in PKCS#8');
    }
    if (rsa.version !== 0 || rsa.otherPrimeInfos) throw new AsymmetricError('error parsing asymmetric key: multi-prime RSA keys are not supported');
    return await rsaFromParts(type, rsaPartsOf(rsa));
  }
  if (alg === id_ecPublicKey) {
    let ec: ECPrivateKey;
    let curveOid: string | undefined;
    try {
      const params = info.privateKeyAlgorithm.parameters;
      curveOid = params ? parse(params, ECParameters).namedCurve : undefined;
      ec = parse(inner, ECPrivateKey);
      curveOid ??= ec.parameters?.namedCurve;
    } catch {
      throw new AsymmetricError('error parsing asymmetric key: x509: failed to parse EC private key embedded in PKCS#8');
    }
    const d = new Uint8Array(ec.privateKey.buffer);
    if (curveOid === ID_ED25519_NSS || curveOid === ID_X25519) return await ed25519Import(type, d); // Vault's Ed25519-in-ECPrivateKey quirk
    expectFamily(type, 'ecdsa', true);
    expectCurve(type as EcType, curveOid, 'error parsing asymmetric key: x509: unknown elliptic curve');
    return await ecFromScalar(type as EcType, d);
  }
  if (alg === ID_ED25519) {
    let seed: Uint8Array;
    try {
      seed = new Uint8Array(parse(inner, OctetString).buffer);
    } catch {
      throw new AsymmetricError('error parsing asymmetric key: x509: invalid Ed25519 private key');
    }
    return await ed25519Import(type, seed);
  }
  throw new AsymmetricError(`error parsing asymmetric key: x509: PKCS#8 wrapping contained private key with unknown algorithm: ${alg}`);
}

async function ed25519Import(type: AsymmetricType, seed: Uint8Array): Promise<AsymmetricKey> {
  expectFamily(type, 'ed25519', true);
  if (seed.length !== 32) throw new AsymmetricError(`error parsing asymmetric key: x509: invalid Ed25519 private key length: ${seed.length}`);
  return await ed25519FromSeed(seed);
}

/** Go derives the public point from the scalar and ignores any embedded one; so do we. */
async function ecFromScalar(type: EcType, d: Uint8Array): Promise<AsymmetricKey> {
  const curve = EC_CURVES[type];
  let point: Uint8Array;
  try {
    const scalar = bigIntToBytes(bytesToBigInt(d), curve.size);
    if (!scalar) throw new Error('scalar too large');
    point = curve.noble.getPublicKey(scalar, false);
  } catch (e) {
    throw new AsymmetricError(`error parsing asymmetric key: x509: invalid EC private key: ${(e as Error).message}`);
  }
  const x = bytesToBigInt(point.subarray(1, 1 + curve.size));
  const y = bytesToBigInt(point.subarray(1 + curve.size));
  return await ecFromParts(type, { x, y, d: bytesToBigInt(d) });
}

/** A PEM PKIX public key of the given type (RSA / ECDSA / Ed25519) → public-only key. */
export async function parsePublicKeyPem(type: AsymmetricType, text: string): Promise<AsymmetricKey> {
  const der = pemBody(text);
  if (!der) throw new AsymmetricError('error parsing public key: not in PEM format');
  let spki: SubjectPublicKeyInfo;
  try {
    spki = parse(der, SubjectPublicKeyInfo);
  } catch {
    throw new AsymmetricError('error parsing public key: x509: malformed public key');
  }
  const alg = spki.algorithm.algorithm;
  if (alg === id_rsaEncryption) expectFamily(type, 'rsa', false);
  else if (alg === id_ecPublicKey) {
    expectFamily(type, 'ecdsa', false);
    let oid: string | undefined;
    try {
      oid = spki.algorithm.parameters ? parse(spki.algorithm.parameters, ECParameters).namedCurve : undefined;
    } catch {
      oid = undefined;
    }
    expectCurve(type as EcType, oid, 'error parsing public key: x509: unsupported elliptic curve');
  } else if (alg === ID_ED25519) expectFamily(type, 'ed25519', false);
  else throw new AsymmetricError('error parsing public key: x509: unknown public key algorithm');
  let publicKey: Uint8Array;
  try {
    // Re-encoding through node:crypto validates the key (point on the curve, RSA structure).
    publicKey = new Uint8Array(createPublicKey({ key: asBuffer(der), format: 'der', type: 'spki' }).export({ type: 'spki', format: 'der' }));
  } catch (e) {
    throw new AsymmetricError(`error parsing public key: ${(e as Error).message}`);
  }
  const key: AsymmetricKey = { type, privateKey: null, publicKey };
  if (isRsaType(type)) expectRsaSize(type, rsaModulusBits(key));
  return key;
}

// ---- component forms (Vault backups)

const b64u = (n: bigint): string => {
  const hex = n.toString(16);
  return toBase64Url(bigIntToBytes(n, Math.ceil(hex.length / 2)) as Uint8Array);
};

function rsaPartsOf(k: RSAPrivateKey): RsaParts {
  const int = (b: ArrayBuffer) => bytesToBigInt(new Uint8Array(b));
  return {
    n: int(k.modulus),
    e: Number(int(k.publicExponent)),
    d: int(k.privateExponent),
    p: int(k.prime1),
    q: int(k.prime2),
    dp: int(k.exponent1),
    dq: int(k.exponent2),
    qi: int(k.coefficient),
  };
}

export async function rsaParts(key: AsymmetricKey): Promise<RsaParts> {
  requireType(key, isRsaType, 'RSA components');
  return rsaPartsOf(parse(innerPrivate(requirePrivate(key)), RSAPrivateKey));
}

export async function rsaPublicParts(key: AsymmetricKey): Promise<{ n: bigint; e: number }> {
  requireType(key, isRsaType, 'RSA components');
  const pub = parse(subjectPublicKey(key.publicKey), RSAPublicKey);
  return { n: bytesToBigInt(new Uint8Array(pub.modulus)), e: Number(bytesToBigInt(new Uint8Array(pub.publicExponent))) };
}

const mod = (a: bigint, m: bigint): bigint => ((a % m) + m) % m;

/** The consistency checks Go's rsa.PrivateKey.Validate makes, plus the CRT values node:crypto will use. */
function rsaConsistencyError(k: RsaParts): string | null {
  if (!Number.isSafeInteger(k.e) || k.e < 2) return 'crypto/rsa: public exponent too small';
  if (k.e > 2 ** 31 - 1) return 'crypto/rsa: public exponent too large';
  if (k.p <= 1n || k.q <= 1n || k.p * k.q !== k.n) return 'crypto/rsa: invalid modulus';
  const e = BigInt(k.e);
  if (mod(k.d * e, k.p - 1n) !== 1n || mod(k.d * e, k.q - 1n) !== 1n) return 'crypto/rsa: invalid exponents';
  if (k.dp !== mod(k.d, k.p - 1n) || k.dq !== mod(k.d, k.q - 1n) || mod(k.qi * k.q, k.p) !== 1n) return 'crypto/rsa: invalid CRT values';
  return null;
}

export async function rsaFromParts(type: AsymmetricType, parts: RsaParts): Promise<AsymmetricKey> {
  expectFamily(type, 'rsa', true);
  const bad = rsaConsistencyError(parts);
  if (bad) throw new AsymmetricError(`invalid RSA private key: ${bad}`);
  expectRsaSize(type as RsaType, parts.n.toString(2).length);
  const jwk: JsonWebKey = {
    kty: 'RSA',
    n: b64u(parts.n),
    e: b64u(BigInt(parts.e)),
    d: b64u(parts.d),
    p: b64u(parts.p),
    q: b64u(parts.q),
    dp: b64u(parts.dp),
    dq: b64u(parts.dq),
    qi: b64u(parts.qi),
  };
  const privateKey = new Uint8Array(createPrivateKey({ key: jwk, format: 'jwk' }).export({ type: 'pkcs8', format: 'der' }));
  return { type, privateKey, publicKey: spkiOfPkcs8(privateKey) };
}

export async function rsaFromPublicParts(type: AsymmetricType, n: bigint, e: number): Promise<AsymmetricKey> {
  expectFamily(type, 'rsa', false);
  if (!Number.isSafeInteger(e) || e < 2 || e > 2 ** 31 - 1 || n <= 1n) throw new AsymmetricError('invalid RSA public key');
  expectRsaSize(type as RsaType, n.toString(2).length);
  const jwk: JsonWebKey = { kty: 'RSA', n: b64u(n), e: b64u(BigInt(e)) };
  const publicKey = new Uint8Array(createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'der' }));
  return { type, privateKey: null, publicKey };
}

export async function ecParts(key: AsymmetricKey): Promise<EcParts> {
  const curve = EC_CURVES[requireType(key, isEcType, 'EC components')];
  const point = subjectPublicKey(key.publicKey); // uncompressed: 0x04 ‖ x ‖ y
  return {
    x: bytesToBigInt(point.subarray(1, 1 + curve.size)),
    y: bytesToBigInt(point.subarray(1 + curve.size)),
    d: key.privateKey ? bytesToBigInt(ecScalar(key.privateKey, curve.size)) : null,
  };
}

/** WebCrypto's JWK import checks the point is on the curve and matches d. */
export async function ecFromParts(type: AsymmetricType, parts: EcParts): Promise<AsymmetricKey> {
  expectFamily(type, 'ecdsa', parts.d !== null);
  const curve = EC_CURVES[type as EcType];
  const coord = (n: bigint): string => {
    const b = bigIntToBytes(n, curve.size);
    if (!b) throw new AsymmetricError(`invalid EC key: value out of range for ${curve.name}`);
    return toBase64Url(b);
  };
  const pub = { kty: 'EC', crv: curve.name, x: coord(parts.x), y: coord(parts.y) };
  const alg = { name: 'ECDSA', namedCurve: curve.name };
  try {
    const publicKey = new Uint8Array(
      (await crypto.subtle.exportKey('spki', await crypto.subtle.importKey('jwk', pub, alg, true, ['verify']))) as ArrayBuffer,
    );
    if (parts.d === null) return { type, privateKey: null, publicKey };
    const priv = await crypto.subtle.importKey('jwk', { ...pub, d: coord(parts.d) }, alg, true, ['sign']);
    return { type, privateKey: new Uint8Array((await crypto.subtle.exportKey('pkcs8', priv)) as ArrayBuffer), publicKey };
  } catch (e) {
    if (e instanceof AsymmetricError) throw e;
    throw new AsymmetricError(`invalid EC key: ${(e as Error).message}`);
  }
}
