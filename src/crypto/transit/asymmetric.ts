// Transit's asymmetric keys: generation, sign/verify (Vault's byte formats) and RSA encryption.
// Dispatch: WebCrypto whenever it covers the case (BoringSSL, fastest); otherwise @noble/curves for
// ECDSA over a given digest, and raw RSA through node:crypto with EMSA-PSS (./rsa-pss) or a DigestInfo
// for prehashed input, SHA-224 and SHA-3, which neither WebCrypto nor node's sign() can do here.

import { generateRsaPair, type RsaPairSource } from '../rsa-keygen';
import { constants, createPrivateKey, createPublicKey, privateDecrypt, privateEncrypt, publicDecrypt, publicEncrypt } from 'node:crypto';
import { p256, p384, p521 } from '@noble/curves/nist.js';
import { ECDSASigValue, ECPrivateKey, id_secp256r1, id_secp384r1, id_secp521r1 } from '@peculiar/asn1-ecc';
import { PrivateKey, PrivateKeyInfo } from '@peculiar/asn1-pkcs8';
import { DigestInfo, RSAPublicKey, id_sha1, id_sha224, id_sha256, id_sha384, id_sha512 } from '@peculiar/asn1-rsa';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, SubjectPublicKeyInfo } from '@peculiar/asn1-x509';
import { fromHex, toHex } from '../encoding';
import { ecdsaDer } from '../ecdsa-der';
import { constantTimeEqual } from '../timing';
import { digest, hashLength, type HashName } from './hashes';
import { pssEncode, pssMaxSaltLength, pssVerify } from './rsa-pss';

export type AsymmetricType = 'ed25519' | 'ecdsa-p256' | 'ecdsa-p384' | 'ecdsa-p521' | 'rsa-2048' | 'rsa-3072' | 'rsa-4096';

export interface AsymmetricKey {
  type: AsymmetricType;
  /** PKCS#8 DER; null for a public-only (imported) key. */
  privateKey: Uint8Array | null;
  /** SPKI DER. */
  publicKey: Uint8Array;
}

/** A client error: the message is returned in a 400. */
export class AsymmetricError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AsymmetricError';
  }
}

export interface SignOptions {
  hash: HashName | 'none';
  prehashed: boolean;
  signatureAlgorithm: 'pss' | 'pkcs1v15';
  saltLength: 'auto' | 'hash' | number;
  marshaling: 'asn1' | 'jws';
}

export type EcType = 'ecdsa-p256' | 'ecdsa-p384' | 'ecdsa-p521';
export type RsaType = 'rsa-2048' | 'rsa-3072' | 'rsa-4096';

/** Curve facts per ECDSA type: WebCrypto/Go name, named-curve OID, scalar/coordinate size in bytes. */
export const EC_CURVES = {
  'ecdsa-p256': { name: 'P-256', oid: id_secp256r1, size: 32, noble: p256 },
  'ecdsa-p384': { name: 'P-384', oid: id_secp384r1, size: 48, noble: p384 },
  'ecdsa-p521': { name: 'P-521', oid: id_secp521r1, size: 66, noble: p521 },
} as const;

export const RSA_BITS: Record<RsaType, number> = { 'rsa-2048': 2048, 'rsa-3072': 3072, 'rsa-4096': 4096 };

export const ID_ED25519 = '1.3.101.112';

// Own keys only: a type read from a request may be "constructor" or "toString", which `in` finds.
export const isEcType = (t: AsymmetricType): t is EcType => Object.hasOwn(EC_CURVES, t);
export const isRsaType = (t: AsymmetricType): t is RsaType => Object.hasOwn(RSA_BITS, t);

/** The modulus size of an RSA key type given as any string (a request's), or undefined for any other type. */
export const rsaBitsOf = (type: string): number | undefined => (Object.hasOwn(RSA_BITS, type) ? RSA_BITS[type as RsaType] : undefined);

const WEB_HASH: Partial<Record<HashName | 'none', string>> = {
  sha1: 'SHA-1',
  'sha2-256': 'SHA-256',
  'sha2-384': 'SHA-384',
  'sha2-512': 'SHA-512',
};

const DIGEST_OIDS: Record<HashName, string> = {
  sha1: id_sha1,
  'sha2-224': id_sha224,
  'sha2-256': id_sha256,
  'sha2-384': id_sha384,
  'sha2-512': id_sha512,
  'sha3-224': '2.16.840.1.101.3.4.2.7',
  'sha3-256': '2.16.840.1.101.3.4.2.8',
  'sha3-384': '2.16.840.1.101.3.4.2.9',
  'sha3-512': '2.16.840.1.101.3.4.2.10',
};

// ---- caches: imported CryptoKeys and parsed facts, per key-bytes object (house pattern: values, not promises)

type Cached = CryptoKey | Uint8Array | number;
const cache = new WeakMap<Uint8Array, Map<string, Cached>>();

function cached<T extends Cached>(bytes: Uint8Array, slot: string, make: () => T): T {
  let perKey = cache.get(bytes);
  if (!perKey) cache.set(bytes, (perKey = new Map()));
  let v = perKey.get(slot) as T | undefined;
  if (v === undefined) perKey.set(slot, (v = make()));
  return v;
}

async function webKey(
  bytes: Uint8Array,
  format: 'pkcs8' | 'spki',
  alg: { name: string; hash?: string; namedCurve?: string },
  usage: 'sign' | 'verify' | 'encrypt' | 'decrypt',
): Promise<CryptoKey> {
  const slot = `${format}|${alg.name}|${alg.hash ?? alg.namedCurve ?? ''}|${usage}`;
  const hit = cache.get(bytes)?.get(slot);
  if (hit) return hit as CryptoKey;
  const imported = await crypto.subtle.importKey(format, bytes, alg, false, [usage]);
  return cached(bytes, slot, () => imported);
}

// node:crypto takes DER as Buffer views (no copy); outputs are copied off Node's shared pool.
export const asBuffer = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
const nodePrivate = (der: Uint8Array) => ({ key: asBuffer(der), format: 'der', type: 'pkcs8' }) as const;
const nodePublic = (der: Uint8Array) => ({ key: asBuffer(der), format: 'der', type: 'spki' }) as const;

export const bytesToBigInt = (b: Uint8Array): bigint => (b.length === 0 ? 0n : BigInt('0x' + toHex(b)));

/** Big-endian, left-padded to `size` bytes; null when negative or too large. */
export function bigIntToBytes(n: bigint, size: number): Uint8Array | null {
  const hex = n.toString(16);
  if (n < 0n || hex.length > size * 2) return null;
  return fromHex(hex.padStart(size * 2, '0'));
}

/** Modulus length in bits, read from the SPKI (imported keys may be a few bits short of their type). */
export function rsaModulusBits(key: AsymmetricKey): number {
  return cached(key.publicKey, 'rsa-bits', () => {
    const spki = AsnConvert.parse(key.publicKey, SubjectPublicKeyInfo);
    const n = bytesToBigInt(new Uint8Array(AsnConvert.parse(spki.subjectPublicKey, RSAPublicKey).modulus));
    return n.toString(2).length;
  });
}

// ---- key generation

/** A new key pair of `type`; RSA pairs come from `rsa` (by default made here). */
export async function generateKeyPair(type: AsymmetricType, rsa: RsaPairSource = generateRsaPair): Promise<AsymmetricKey> {
  if (isRsaType(type)) {
    const { pkcs8, spki } = await rsa(RSA_BITS[type]);
    return { type, privateKey: pkcs8, publicKey: spki };
  }
  let params: SubtleCryptoGenerateKeyAlgorithm;
  if (type === 'ed25519') params = { name: 'Ed25519' };
  else if (isEcType(type)) params = { name: 'ECDSA', namedCurve: EC_CURVES[type].name };
  else throw new AsymmetricError(`unsupported key type ${String(type)}`);
  const pair = (await crypto.subtle.generateKey(params, true, ['sign', 'verify'])) as CryptoKeyPair;
  const [privateKey, publicKey] = await Promise.all([
    crypto.subtle.exportKey('pkcs8', pair.privateKey) as Promise<ArrayBuffer>,
    crypto.subtle.exportKey('spki', pair.publicKey) as Promise<ArrayBuffer>,
  ]);
  return { type, privateKey: new Uint8Array(privateKey), publicKey: new Uint8Array(publicKey) };
}

/** SPKI DER of a PKCS#8 private key (any algorithm node:crypto knows). */
export function spkiOfPkcs8(pkcs8: Uint8Array): Uint8Array {
  const pub = createPublicKey(createPrivateKey(nodePrivate(pkcs8))).export({ type: 'spki', format: 'der' });
  return new Uint8Array(pub);
}

/** Ed25519 key pair from a 32-byte seed (derived ed25519 keys: the seed comes from HKDF). */
export async function ed25519FromSeed(seed: Uint8Array): Promise<AsymmetricKey> {
  if (seed.length !== 32) throw new AsymmetricError(`invalid ed25519 seed length ${seed.length}, expected 32 bytes`);
  // RFC 8410: PrivateKeyInfo{ id-Ed25519, OCTET STRING{ OCTET STRING seed } }
  const info = new PrivateKeyInfo({
    version: 0,
    privateKeyAlgorithm: new AlgorithmIdentifier({ algorithm: ID_ED25519 }),
    privateKey: new PrivateKey(AsnConvert.serialize(new OctetString(seed))),
  });
  const privateKey = new Uint8Array(AsnConvert.serialize(info));
  return { type: 'ed25519', privateKey, publicKey: spkiOfPkcs8(privateKey) };
}

// ---- option checks (Vault's messages)

function checkOptions(opts: SignOptions): void {
  if (opts.hash === 'none' && (!opts.prehashed || opts.signatureAlgorithm !== 'pkcs1v15')) {
    throw new AsymmetricError('hash_algorithm=none requires both prehashed=true and signature_algorithm=pkcs1v15');
  }
  if (opts.marshaling !== 'asn1' && opts.marshaling !== 'jws') throw new AsymmetricError('requested marshaling type is invalid');
}

function requirePrivate(key: AsymmetricKey, op: string): Uint8Array {
  if (!key.privateKey) throw new AsymmetricError(`requested version for ${op} does not contain a private part`);
  return key.privateKey;
}

/** Go's rsa.PSSOptions.SaltLength semantics as Vault validates them: 0 is "auto", -1 is "hash". */
function pssSalt(key: AsymmetricKey, hash: HashName, opt: SignOptions['saltLength']): number | 'auto' {
  if (opt === 'auto') return 'auto';
  if (opt === 'hash') return hashLength(hash);
  if (typeof opt !== 'number' || !Number.isInteger(opt) || opt < -1) throw new AsymmetricError(`salt length is invalid: ${String(opt)}`);
  if (opt > pssMaxSaltLength(rsaModulusBits(key), hash)) throw new AsymmetricError(`requested salt length ${opt} is invalid`);
  return opt === 0 ? 'auto' : opt === -1 ? hashLength(hash) : opt;
}

/** WebCrypto verify, where a malformed signature is simply not valid. */
async function webVerify(alg: string | SubtleCryptoSignAlgorithm, key: CryptoKey, sig: Uint8Array, data: Uint8Array): Promise<boolean> {
  try {
    return await crypto.subtle.verify(alg, key, sig, data);
  } catch {
    return false;
  }
}

const messageDigest = (opts: SignOptions, input: Uint8Array): Promise<Uint8Array> | Uint8Array =>
  opts.prehashed || opts.hash === 'none' ? input : digest(opts.hash, input);

// ---- sign / verify

/** The signature bytes as Vault encodes them before base64 (see the engine for the text form). */
export async function sign(key: AsymmetricKey, input: Uint8Array, opts: SignOptions): Promise<Uint8Array> {
  checkOptions(opts);
  const priv = requirePrivate(key, 'signing');
  if (key.type === 'ed25519') {
    const k = await webKey(priv, 'pkcs8', { name: 'Ed25519' }, 'sign');
    return new Uint8Array(await crypto.subtle.sign('Ed25519', k, input));
  }
  // `return await`: a rejection is then handled at once (workerd reports late-handled ones as unhandled).
  if (isEcType(key.type)) return await ecdsaSign(key.type, priv, input, opts);
  if (isRsaType(key.type)) return await rsaSign(key, priv, input, opts);
  throw new AsymmetricError(`message signing not supported for key type ${String(key.type)}`);
}

/** false for a wrong or malformed signature; throws AsymmetricError only for invalid option combinations. */
export async function verify(key: AsymmetricKey, input: Uint8Array, signature: Uint8Array, opts: SignOptions): Promise<boolean> {
  checkOptions(opts);
  if (key.type === 'ed25519') {
    if (signature.length !== 64) return false;
    const k = await webKey(key.publicKey, 'spki', { name: 'Ed25519' }, 'verify');
    return await webVerify('Ed25519', k, signature, input);
  }
  if (isEcType(key.type)) return await ecdsaVerify(key, key.type, input, signature, opts);
  if (isRsaType(key.type)) return await rsaVerify(key, input, signature, opts);
  throw new AsymmetricError(`message verification not supported for key type ${String(key.type)}`);
}

// ECDSA: WebCrypto hashes and signs in one go for SHA-1/2 (P1363 output); noble signs a given digest.

async function ecdsaSign(type: EcType, priv: Uint8Array, input: Uint8Array, opts: SignOptions): Promise<Uint8Array> {
  const curve = EC_CURVES[type];
  const webHash = opts.prehashed ? undefined : WEB_HASH[opts.hash];
  let p1363: Uint8Array;
  if (webHash) {
    const k = await webKey(priv, 'pkcs8', { name: 'ECDSA', namedCurve: curve.name }, 'sign');
    p1363 = new Uint8Array(await crypto.subtle.sign({ name: 'ECDSA', hash: webHash }, k, input));
  } else {
    const scalar = cached(priv, 'ec-d', () => ecScalar(priv, curve.size));
    try {
      p1363 = curve.noble.sign(await messageDigest(opts, input), scalar, { prehash: false, lowS: false, extraEntropy: true });
    } catch (e) {
      throw new AsymmetricError(`failed to sign: ${(e as Error).message}`);
    }
  }
  if (opts.marshaling === 'jws') return p1363;
  return ecdsaDer(p1363.subarray(0, curve.size), p1363.subarray(curve.size));
}

async function ecdsaVerify(key: AsymmetricKey, type: EcType, input: Uint8Array, sig: Uint8Array, opts: SignOptions): Promise<boolean> {
  const curve = EC_CURVES[type];
  const rs = opts.marshaling === 'jws' ? splitJws(sig) : parseEcdsaDer(sig);
  const r = rs && bigIntToBytes(rs.r, curve.size);
  const s = rs && bigIntToBytes(rs.s, curve.size);
  if (!r || !s) return false; // too large for the curve: cannot verify
  const p1363 = new Uint8Array(curve.size * 2);
  p1363.set(r);
  p1363.set(s, curve.size);
  const webHash = opts.prehashed ? undefined : WEB_HASH[opts.hash];
  if (webHash) {
    const k = await webKey(key.publicKey, 'spki', { name: 'ECDSA', namedCurve: curve.name }, 'verify');
    return webVerify({ name: 'ECDSA', hash: webHash }, k, p1363, input);
  }
  const point = cached(key.publicKey, 'ec-point', () => new Uint8Array(AsnConvert.parse(key.publicKey, SubjectPublicKeyInfo).subjectPublicKey));
  const msg = await messageDigest(opts, input);
  try {
    return curve.noble.verify(p1363, msg, point, { prehash: false, lowS: false });
  } catch {
    return false; // r or s out of range
  }
}

/** The private scalar from a PKCS#8 EC key, left-padded to the curve size. */
export function ecScalar(pkcs8: Uint8Array, size: number): Uint8Array {
  const info = AsnConvert.parse(pkcs8, PrivateKeyInfo);
  const ec = AsnConvert.parse(info.privateKey.buffer, ECPrivateKey);
  const d = new Uint8Array(ec.privateKey.buffer);
  const out = new Uint8Array(size);
  out.set(d.subarray(Math.max(0, d.length - size)), Math.max(0, size - d.length));
  return out;
}

/** DER SEQUENCE{r, s}; null unless it is exactly the canonical DER of two positive integers (Go is as strict). */
function parseEcdsaDer(sig: Uint8Array): { r: bigint; s: bigint } | null {
  let parsed: ECDSASigValue;
  try {
    parsed = AsnConvert.parse(sig, ECDSASigValue);
  } catch {
    return null;
  }
  const rb = new Uint8Array(parsed.r);
  const sb = new Uint8Array(parsed.s);
  if (rb.length === 0 || sb.length === 0 || rb[0] & 0x80 || sb[0] & 0x80) return null;
  return constantTimeEqual(ecdsaDer(rb, sb), sig) ? { r: bytesToBigInt(rb), s: bytesToBigInt(sb) } : null;
}

/** JWS r‖s: Vault splits the bytes in half, whatever the length. */
function splitJws(sig: Uint8Array): { r: bigint; s: bigint } {
  const half = sig.length >> 1;
  return { r: bytesToBigInt(sig.subarray(0, half)), s: bytesToBigInt(sig.subarray(half)) };
}

// RSA

function digestInfo(hash: HashName, m: Uint8Array): Uint8Array {
  const algorithm = new AlgorithmIdentifier({ algorithm: DIGEST_OIDS[hash], parameters: null });
  return new Uint8Array(AsnConvert.serialize(new DigestInfo({ digestAlgorithm: algorithm, digest: new OctetString(m) })));
}

async function rsaSign(key: AsymmetricKey, priv: Uint8Array, input: Uint8Array, opts: SignOptions): Promise<Uint8Array> {
  const webHash = opts.prehashed ? undefined : WEB_HASH[opts.hash];
  const k = Math.ceil(rsaModulusBits(key) / 8);
  if (opts.signatureAlgorithm === 'pss') {
    const hash = opts.hash as HashName; // 'none' was refused for PSS by checkOptions
    const salt = pssSalt(key, hash, opts.saltLength);
    const saltLength = salt === 'auto' ? pssMaxSaltLength(rsaModulusBits(key), hash) : salt;
    if (webHash) {
      const ck = await webKey(priv, 'pkcs8', { name: 'RSA-PSS', hash: webHash }, 'sign');
      return new Uint8Array(await crypto.subtle.sign({ name: 'RSA-PSS', saltLength }, ck, input));
    }
    const m = await messageDigest(opts, input);
    if (m.length !== hashLength(hash)) throw new AsymmetricError('crypto/rsa: input must be hashed with given hash');
    const block = await pssEncode(hash, m, rsaModulusBits(key), saltLength);
    return new Uint8Array(privateDecrypt({ ...nodePrivate(priv), padding: constants.RSA_NO_PADDING }, asBuffer(block)));
  }
  if (opts.signatureAlgorithm !== 'pkcs1v15') throw new AsymmetricError(`unsupported rsa signature algorithm ${String(opts.signatureAlgorithm)}`);
  if (webHash) {
    const ck = await webKey(priv, 'pkcs8', { name: 'RSASSA-PKCS1-v1_5', hash: webHash }, 'sign');
    return new Uint8Array(await crypto.subtle.sign('RSASSA-PKCS1-v1_5', ck, input));
  }
  const m = await messageDigest(opts, input);
  let t = m; // hash 'none': the raw input, no DigestInfo
  if (opts.hash !== 'none') {
    if (m.length !== hashLength(opts.hash)) throw new AsymmetricError('crypto/rsa: input must be hashed message');
    t = digestInfo(opts.hash, m);
  }
  if (t.length > k - 11) throw new AsymmetricError('crypto/rsa: message too long for RSA key size');
  return new Uint8Array(privateEncrypt({ ...nodePrivate(priv), padding: constants.RSA_PKCS1_PADDING }, asBuffer(t)));
}

async function rsaVerify(key: AsymmetricKey, input: Uint8Array, sig: Uint8Array, opts: SignOptions): Promise<boolean> {
  const webHash = opts.prehashed ? undefined : WEB_HASH[opts.hash];
  const bits = rsaModulusBits(key);
  if (opts.signatureAlgorithm === 'pss') {
    const hash = opts.hash as HashName;
    const salt = pssSalt(key, hash, opts.saltLength);
    if (webHash && salt !== 'auto') {
      const ck = await webKey(key.publicKey, 'spki', { name: 'RSA-PSS', hash: webHash }, 'verify');
      return webVerify({ name: 'RSA-PSS', saltLength: salt }, ck, sig, input);
    }
    const block = rawPublic(key, sig, constants.RSA_NO_PADDING);
    return block !== null && pssVerify(hash, await messageDigest(opts, input), block, bits, salt);
  }
  if (opts.signatureAlgorithm !== 'pkcs1v15') throw new AsymmetricError(`unsupported rsa signature algorithm ${String(opts.signatureAlgorithm)}`);
  if (webHash) {
    const ck = await webKey(key.publicKey, 'spki', { name: 'RSASSA-PKCS1-v1_5', hash: webHash }, 'verify');
    return webVerify('RSASSA-PKCS1-v1_5', ck, sig, input);
  }
  // Recover T from the type-1 padded block and compare with the expected DigestInfo (or raw input).
  const t = rawPublic(key, sig, constants.RSA_PKCS1_PADDING);
  if (t === null) return false;
  const m = await messageDigest(opts, input);
  if (opts.hash === 'none') return constantTimeEqual(t, m);
  return m.length === hashLength(opts.hash) && constantTimeEqual(t, digestInfo(opts.hash, m));
}

/** The RSA public operation on a signature; null for a wrong length, a value ≥ n or bad padding. */
function rawPublic(key: AsymmetricKey, sig: Uint8Array, padding: number): Uint8Array | null {
  if (sig.length !== Math.ceil(rsaModulusBits(key) / 8)) return null;
  try {
    const pub = nodePublic(key.publicKey);
    const out = padding === constants.RSA_NO_PADDING ? publicEncrypt({ ...pub, padding }, asBuffer(sig)) : publicDecrypt({ ...pub, padding }, asBuffer(sig));
    return new Uint8Array(out);
  } catch {
    return null;
  }
}

// ---- RSA encryption (transit encrypt/decrypt on rsa-* keys)

function requireRsa(key: AsymmetricKey, op: 'encryption' | 'decryption'): number {
  if (!isRsaType(key.type)) throw new AsymmetricError(`message ${op} not supported for key type ${key.type}`);
  return Math.ceil(rsaModulusBits(key) / 8);
}

/** RSA encryption for rsa-* transit keys: OAEP (SHA-256, MGF1-SHA-256, empty label) or PKCS#1 v1.5. */
export async function rsaEncrypt(key: AsymmetricKey, plaintext: Uint8Array, padding: 'oaep' | 'pkcs1v15'): Promise<Uint8Array> {
  const k = requireRsa(key, 'encryption');
  if (padding !== 'oaep' && padding !== 'pkcs1v15') throw new AsymmetricError(`unknown padding scheme: ${String(padding)}`);
  const max = padding === 'oaep' ? k - 2 * 32 - 2 : k - 11; // OAEP overhead with SHA-256
  if (plaintext.length > max) throw new AsymmetricError('failed to RSA encrypt the plaintext: crypto/rsa: message too long for RSA key size');
  if (padding === 'oaep') {
    const ck = await webKey(key.publicKey, 'spki', { name: 'RSA-OAEP', hash: 'SHA-256' }, 'encrypt');
    return new Uint8Array(await crypto.subtle.encrypt({ name: 'RSA-OAEP' }, ck, plaintext));
  }
  return new Uint8Array(publicEncrypt({ ...nodePublic(key.publicKey), padding: constants.RSA_PKCS1_PADDING }, asBuffer(plaintext)));
}

/** null when decryption fails. */
export async function rsaDecrypt(key: AsymmetricKey, ciphertext: Uint8Array, padding: 'oaep' | 'pkcs1v15'): Promise<Uint8Array | null> {
  const k = requireRsa(key, 'decryption');
  const priv = requirePrivate(key, 'decryption');
  if (padding !== 'oaep' && padding !== 'pkcs1v15') throw new AsymmetricError(`unknown padding scheme: ${String(padding)}`);
  if (ciphertext.length !== k) return null;
  try {
    if (padding === 'oaep') {
      const ck = await webKey(priv, 'pkcs8', { name: 'RSA-OAEP', hash: 'SHA-256' }, 'decrypt');
      return new Uint8Array(await crypto.subtle.decrypt({ name: 'RSA-OAEP' }, ck, ciphertext));
    }
    return new Uint8Array(privateDecrypt({ ...nodePrivate(priv), padding: constants.RSA_PKCS1_PADDING }, asBuffer(ciphertext)));
  } catch {
    return null;
  }
}
