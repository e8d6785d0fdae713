// PKI key pairs: generation, PEM parsing/encoding, key identifiers and signers.
// Keys live as PKCS#8 + SPKI DER; PKCS#1/SEC1 forms are converted with the @peculiar ASN.1 schemas.
// WebCrypto does the work; only NIST P-224 (which WebCrypto lacks) goes through node:crypto.

import { generateRsaPair, type RsaPairSource } from '../rsa-keygen';
import * as nodeCrypto from 'node:crypto';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier, SubjectPublicKeyInfo } from '@peculiar/asn1-x509';
import { RSAPrivateKey, RSAPublicKey, RsaSaPssParams, id_rsaEncryption, id_RSASSA_PSS, id_mgf1 } from '@peculiar/asn1-rsa';
import {
  ECParameters,
  ECPrivateKey,
  id_ecPublicKey,
  id_secp224r1,
  id_secp256r1,
  id_secp384r1,
  id_secp521r1,
} from '@peculiar/asn1-ecc';
import { PrivateKey, PrivateKeyInfo } from '@peculiar/asn1-pkcs8';
import { CryptoInputError } from '../errors';
import { bytesEqual, toBase64 } from '../encoding';
import { childrenOf, readTlv } from './encoded-sequence';
import { EncodingCache, templated, type DerTemplate, type Slot } from './der-template';
import { pemBlocks, toPem } from '../pem';
import { AsnEcSignatureFormatter, cryptoProvider } from './x509';
import { ecdsaDerFromRaw } from '../ecdsa-der';

export type PkiKeyType = 'rsa' | 'ec' | 'ed25519';
export interface PkiKey {
  type: PkiKeyType;
  /** RSA modulus bits; EC 224|256|384|521; ed25519 0. */
  bits: number;
  /** PKCS#8 PrivateKeyInfo DER. */
  pkcs8: Uint8Array;
  /** SubjectPublicKeyInfo DER. */
  spki: Uint8Array;
  /** EC keys made here: the SEC1 encoding, computed while the key was at hand (saves parsing it back). */
  sec1?: Uint8Array;
}

const ID_ED25519 = '1.3.101.112';

interface Curve {
  bits: number;
  oid: string;
  web: string;
  node: string;
  /** Go picks the hash from the curve size. */
  hash: string;
}
const CURVES: Curve[] = [
  { bits: 224, oid: id_secp224r1, web: 'P-224', node: 'secp224r1', hash: 'SHA-256' },
  { bits: 256, oid: id_secp256r1, web: 'P-256', node: 'prime256v1', hash: 'SHA-256' },
  { bits: 384, oid: id_secp384r1, web: 'P-384', node: 'secp384r1', hash: 'SHA-384' },
  { bits: 521, oid: id_secp521r1, web: 'P-521', node: 'secp521r1', hash: 'SHA-512' },
];
const curveByBits = (bits: number): Curve | undefined => CURVES.find((c) => c.bits === bits);
const curveByOid = (oid: string | undefined): Curve | undefined => CURVES.find((c) => c.oid === oid);
// WebCrypto can't do P-224: such keys are handled by node:crypto.
const isNodeCurve = (c: Curve): boolean => c.bits === 224;
AsnEcSignatureFormatter.namedCurveSize.set('P-224', 28);

const RSA_BITS = [2048, 3072, 4096, 8192];

// ---------------------------------------------------------------------------------------------
// Sizes and types

/** Applies Vault's defaults (0 → RSA 2048 / EC 256) and validates the pair. */
export function resolveKeyBits(type: string, bits: number): { type: PkiKeyType; bits: number } {
  switch (type) {
    case 'rsa': {
      const b = bits === 0 ? 2048 : bits;
      if (b < 2048) throw new CryptoInputError('RSA keys < 2048 bits are unsafe and not supported');
      if (!RSA_BITS.includes(b)) throw new CryptoInputError(`unsupported bit length for RSA key: ${b}`);
      return { type: 'rsa', bits: b };
    }
    case 'ec': {
      const b = bits === 0 ? 256 : bits;
      if (!curveByBits(b)) throw new CryptoInputError(`unsupported bit length for EC key: ${b}`);
      return { type: 'ec', bits: b };
    }
    case 'ed25519':
      return { type: 'ed25519', bits: 0 };
    default:
      throw new CryptoInputError(`unknown key type ${type}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Generation

const u8 = (b: ArrayBuffer | ArrayBufferView): Uint8Array =>
  b instanceof Uint8Array ? b : ArrayBuffer.isView(b) ? new Uint8Array(b.buffer, b.byteOffset, b.byteLength) : new Uint8Array(b);
const copy = (b: ArrayBuffer | ArrayBufferView): Uint8Array => new Uint8Array(u8(b));

function webImportAlgorithm(type: PkiKeyType, curve?: Curve): SubtleCryptoImportKeyAlgorithm {
  if (type === 'rsa') return { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  if (type === 'ec') return { name: 'ECDSA', namedCurve: curve!.web };
  return { name: 'Ed25519' };
}

/** A new key of `type` and `bits`; RSA pairs come from `rsa` (by default made here). */
export async function generateKey(type: PkiKeyType, bits: number, rsa: RsaPairSource = generateRsaPair): Promise<PkiKey> {
  const r = resolveKeyBits(type, bits);
  if (r.type === 'rsa') return { type: r.type, bits: r.bits, ...(await rsa(r.bits)) };
  const curve = r.type === 'ec' ? curveByBits(r.bits)! : undefined;
  if (curve && isNodeCurve(curve)) {
    const { privateKey } = nodeCrypto.generateKeyPairSync('ec', { namedCurve: curve.node });
    return nodeKey(privateKey, r.bits);
  }
  const alg = webImportAlgorithm(r.type, curve);
  const pair = (await crypto.subtle.generateKey(alg, true, ['sign', 'verify'])) as CryptoKeyPair;
  const pkcs8 = copy((await crypto.subtle.exportKey('pkcs8', pair.privateKey)) as ArrayBuffer);
  if (!curve) return { type: r.type, bits: r.bits, pkcs8, spki: copy((await crypto.subtle.exportKey('spki', pair.publicKey)) as ArrayBuffer) };
  // The scalar and the point, read from the PKCS#8 export's ECPrivateKey; the SEC1 (issue answers
  // with it) and the SPKI are templates they are copied into. Exporting the SPKI and the raw point
  // took two more WebCrypto calls (≈ 20 µs per key), a JWK export and its base64url ≈ 13 µs, this
  // walk of the DER ≈ 5.
  const parts = ecPartsOf(pkcs8, curve.bits);
  if (!parts) throw new Error('generated EC key: its PKCS#8 export holds no public point');
  const { scalar, point } = parts;
  return { type: r.type, bits: r.bits, pkcs8, spki: spkiGenerated(curve, point), sec1: sec1Generated(scalar, curve.oid, point) };
}

/**
 * The private scalar and the uncompressed public point in a PKCS#8 EC key (PrivateKeyInfo →
 * privateKey OCTET STRING → ECPrivateKey: its privateKey, and the BIT STRING in its [1]); null
 * when they are not there at the lengths of a `curveBits` curve.
 */
export function ecPartsOf(pkcs8: Uint8Array, curveBits: number): { scalar: Uint8Array; point: Uint8Array } | null {
  try {
    const info = [...childrenOf(pkcs8, readTlv(pkcs8, 0, pkcs8.length))];
    const wrapped = info[2];
    if (!wrapped || wrapped.tagClass !== 1 || wrapped.tagNumber !== 4 || wrapped.constructed) return null;
    let scalar: Uint8Array | undefined;
    let point: Uint8Array | undefined;
    for (const el of childrenOf(pkcs8, readTlv(pkcs8, wrapped.contentStart, wrapped.end))) {
      if (el.tagClass === 1 && el.tagNumber === 4 && !el.constructed) scalar = pkcs8.subarray(el.contentStart, el.end);
      if (el.tagClass === 3 && el.tagNumber === 1 && el.constructed) {
        const bits = readTlv(pkcs8, el.contentStart, el.end);
        // A BIT STRING with no unused bits.
        if (bits.tagClass === 1 && bits.tagNumber === 3 && !bits.constructed && pkcs8[bits.contentStart] === 0) point = pkcs8.subarray(bits.contentStart + 1, bits.end);
      }
    }
    const size = Math.ceil(curveBits / 8);
    if (scalar?.length !== size || point?.length !== 1 + 2 * size || point[0] !== UNCOMPRESSED_POINT) return null;
    return { scalar: scalar.slice(), point: point.slice() };
  } catch {
    return null;
  }
}

/** The tag of an uncompressed EC point (SEC1 2.3.3), which SPKI and SEC1 carry. */
const UNCOMPRESSED_POINT = 0x04;

/** SEC1 ECPrivateKey as Go writes it: version, key, named curve and the public point. */
function sec1Der(privateKey: Uint8Array, curveOid: string, point: Uint8Array | ArrayBuffer): Uint8Array {
  return u8(
    AsnConvert.serialize(
      new ECPrivateKey({
        version: 1,
        privateKey: new OctetString(privateKey),
        parameters: new ECParameters({ namedCurve: curveOid }),
        publicKey: point instanceof Uint8Array ? point.slice().buffer : point,
      }),
    ),
  );
}

/**
 * A generated key's SEC1 and SPKI: the scalar (an OCTET STRING) and the point (a BIT STRING) have
 * one length per curve, so every key of a curve encodes to the same bytes around them. The library
 * encodes a template once per shape; each key is then the template with its own bytes copied in
 * (a serialization cost ~60 µs per issued certificate).
 */
const keyShapes = new EncodingCache<DerTemplate>(32);
// ECPrivateKey: the scalar is child 1; the point is in [1] (child 3), after its unused-bits byte.
const SEC1_SLOTS: Slot[] = [{ path: [3, 0], skip: 1 }, { path: [1] }];
// SubjectPublicKeyInfo: the point is child 1, after its unused-bits byte.
const SPKI_SLOTS: Slot[] = [{ path: [1], skip: 1 }];

const sec1Generated = (scalar: Uint8Array, curveOid: string, point: Uint8Array): Uint8Array =>
  templated(keyShapes, `sec1|${curveOid}`, SEC1_SLOTS, [point, scalar], ([p, k]) => sec1Der(k, curveOid, p));

const spkiGenerated = (curve: Curve, point: Uint8Array): Uint8Array =>
  templated(keyShapes, `spki|${curve.oid}`, SPKI_SLOTS, [point], ([p]) =>
    u8(AsnConvert.serialize(new SubjectPublicKeyInfo({ algorithm: ecAlgorithmIdentifier(curve), subjectPublicKey: p.slice().buffer }))),
  );

function nodeKey(privateKey: nodeCrypto.KeyObject, bits: number): PkiKey {
  const pkcs8 = copy(privateKey.export({ format: 'der', type: 'pkcs8' }));
  const spki = copy(nodeCrypto.createPublicKey(privateKey).export({ format: 'der', type: 'spki' }));
  return { type: 'ec', bits, pkcs8, spki };
}

// ---------------------------------------------------------------------------------------------
// Parsing private keys

/** PKCS#1 "RSA PRIVATE KEY", SEC1 "EC PRIVATE KEY" or PKCS#8 "PRIVATE KEY" (RSA, EC or Ed25519). */
export async function parsePrivateKeyPem(pem: string): Promise<PkiKey> {
  const block = pemBlocks(pem).find((b) => b.label.endsWith('PRIVATE KEY'));
  if (!block) throw new CryptoInputError('no data found in PEM block');
  if (block.label.includes('ENCRYPTED')) {
    throw new CryptoInputError('Encrypted private key given; provide only decrypted private key in the bundle');
  }
  return await parsePrivateKeyDer(block.der, block.label);
}

/** A private key DER in any of the three encodings (the label, when known, is tried first). */
export async function parsePrivateKeyDer(der: Uint8Array, label = ''): Promise<PkiKey> {
  const order = ['EC PRIVATE KEY', 'RSA PRIVATE KEY', 'PRIVATE KEY'].sort((a, b) => Number(b === label) - Number(a === label));
  const errors: string[] = [];
  for (const form of order) {
    let info: PrivateKeyInfo;
    try {
      info = toPrivateKeyInfo(form, der);
    } catch (e) {
      errors.push(e instanceof Error ? e.message : String(e));
      continue;
    }
    return await parsePrivateKeyInfo(info);
  }
  throw new CryptoInputError(`failed to parse private key: ${errors.join('; ')}`);
}

/** PKCS#8 DER (as stored) → PkiKey; validates the key by importing it. */
export async function parsePkcs8(der: Uint8Array): Promise<PkiKey> {
  let info: PrivateKeyInfo;
  try {
    info = AsnConvert.parse(der, PrivateKeyInfo);
  } catch (e) {
    throw new CryptoInputError(`failed to parse private key: ${e instanceof Error ? e.message : String(e)}`);
  }
  return await parsePrivateKeyInfo(info);
}

function toPrivateKeyInfo(label: string, der: Uint8Array): PrivateKeyInfo {
  if (label === 'RSA PRIVATE KEY') {
    AsnConvert.parse(der, RSAPrivateKey); // validate the structure
    return new PrivateKeyInfo({
      privateKeyAlgorithm: new AlgorithmIdentifier({ algorithm: id_rsaEncryption, parameters: null }),
      privateKey: new PrivateKey(copy(der)),
    });
  }
  if (label === 'EC PRIVATE KEY') {
    const ec = AsnConvert.parse(der, ECPrivateKey);
    const curve = curveByOid(ec.parameters?.namedCurve);
    if (!curve) throw new Error('EC private key without a supported named curve');
    // In PKCS#8 the curve moves to the outer AlgorithmIdentifier.
    const inner = new ECPrivateKey({ version: 1, privateKey: ec.privateKey, publicKey: ec.publicKey });
    return new PrivateKeyInfo({
      privateKeyAlgorithm: ecAlgorithmIdentifier(curve),
      privateKey: new PrivateKey(AsnConvert.serialize(inner)),
    });
  }
  return AsnConvert.parse(der, PrivateKeyInfo);
}

const ecAlgorithmIdentifier = (curve: Curve): AlgorithmIdentifier =>
  new AlgorithmIdentifier({
    algorithm: id_ecPublicKey,
    parameters: AsnConvert.serialize(new ECParameters({ namedCurve: curve.oid })),
  });

async function parsePrivateKeyInfo(info: PrivateKeyInfo): Promise<PkiKey> {
  const oid = info.privateKeyAlgorithm.algorithm;
  let type: PkiKeyType;
  let curve: Curve | undefined;
  if (oid === id_rsaEncryption) type = 'rsa';
  else if (oid === ID_ED25519) type = 'ed25519';
  else if (oid === id_ecPublicKey) {
    type = 'ec';
    const params = info.privateKeyAlgorithm.parameters;
    curve = params ? curveByOid(AsnConvert.parse(params, ECParameters).namedCurve) : undefined;
    if (!curve) throw new CryptoInputError('unsupported elliptic curve in private key');
  } else {
    throw new CryptoInputError(`unsupported private key algorithm: ${oid}`);
  }
  const der = u8(AsnConvert.serialize(info));
  try {
    if (curve && isNodeCurve(curve)) {
      return nodeKey(nodeCrypto.createPrivateKey({ key: Buffer.from(der), format: 'der', type: 'pkcs8' }), curve.bits);
    }
    // Round trip through WebCrypto: validates the key and yields canonical PKCS#8 plus the public half.
    const alg = webImportAlgorithm(type, curve);
    const priv = await crypto.subtle.importKey('pkcs8', der, alg, true, ['sign']);
    const pkcs8 = copy((await crypto.subtle.exportKey('pkcs8', priv)) as ArrayBuffer);
    const { d: _d, p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, key_ops: _ops, ...pubJwk } = (await crypto.subtle.exportKey('jwk', priv)) as JsonWebKey;
    const pub = await crypto.subtle.importKey('jwk', pubJwk, alg, true, ['verify']);
    const spki = copy((await crypto.subtle.exportKey('spki', pub)) as ArrayBuffer);
    return { type, bits: publicKeyInfo(spki).bits, pkcs8, spki };
  } catch (e) {
    if (e instanceof Error && 'status' in e) throw e;
    throw new CryptoInputError(`failed to parse private key: ${e instanceof Error ? e.message : String(e)}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding private keys

/** 'der' = PKCS#1 (rsa) / SEC1 (ec) / PKCS#8 (ed25519); 'pkcs8' = PKCS#8 for all. PEM is trimmed; 'der' out is std base64. */
export function encodePrivateKey(key: PkiKey, keyFormat: 'der' | 'pkcs8', out: 'pem' | 'der'): string {
  let label = 'PRIVATE KEY';
  let der = key.pkcs8;
  if (keyFormat === 'der' && key.sec1) {
    label = 'EC PRIVATE KEY';
    der = key.sec1;
  } else if (keyFormat === 'der' && key.type !== 'ed25519') {
    const info = AsnConvert.parse(key.pkcs8, PrivateKeyInfo);
    const inner = u8(info.privateKey.buffer);
    if (key.type === 'rsa') {
      label = 'RSA PRIVATE KEY';
      der = inner;
    } else {
      label = 'EC PRIVATE KEY';
      const ec = AsnConvert.parse(inner, ECPrivateKey);
      const spki = AsnConvert.parse(key.spki, SubjectPublicKeyInfo);
      der = sec1Der(u8(ec.privateKey.buffer), curveByBits(key.bits)!.oid, ec.publicKey ?? spki.subjectPublicKey);
    }
  }
  return out === 'der' ? toBase64(der) : toPem(label, der).trim();
}

// ---------------------------------------------------------------------------------------------
// Public keys

/** Key type and size of a SubjectPublicKeyInfo; 400 for anything we can't sign with. */
export function publicKeyInfo(spki: Uint8Array): { type: PkiKeyType; bits: number } {
  let info: SubjectPublicKeyInfo;
  try {
    info = AsnConvert.parse(spki, SubjectPublicKeyInfo);
  } catch {
    throw new CryptoInputError('failed to parse public key');
  }
  return parsedKeyInfo(info);
}

/** publicKeyInfo of a SubjectPublicKeyInfo already parsed. */
export function parsedKeyInfo(info: SubjectPublicKeyInfo): { type: PkiKeyType; bits: number } {
  const oid = info.algorithm.algorithm;
  if (oid === id_rsaEncryption) {
    const pub = AsnConvert.parse(info.subjectPublicKey, RSAPublicKey);
    return { type: 'rsa', bits: bitLength(u8(pub.modulus)) };
  }
  if (oid === id_ecPublicKey) {
    const params = info.algorithm.parameters;
    const curve = params ? curveByOid(AsnConvert.parse(params, ECParameters).namedCurve) : undefined;
    if (!curve) throw new CryptoInputError('unsupported elliptic curve in public key');
    return { type: 'ec', bits: curve.bits };
  }
  if (oid === ID_ED25519) return { type: 'ed25519', bits: 0 };
  throw new CryptoInputError(`unsupported public key algorithm: ${oid}`);
}

function bitLength(n: Uint8Array): number {
  let i = 0;
  while (i < n.length && n[i] === 0) i++;
  if (i === n.length) return 0;
  return (n.length - i - 1) * 8 + (32 - Math.clz32(n[i]));
}

/**
 * SHA-1 of the subjectPublicKey BIT STRING contents: the PKCS#1 RSAPublicKey DER for RSA, the
 * uncompressed point for EC, the 32 raw bytes for Ed25519 (what Go's certutil hashes).
 */
export async function subjectKeyId(spki: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-1', subjectPublicKeyBits(spki)));
}

/**
 * The subjectPublicKey BIT STRING's bits (the RSAPublicKey DER, the EC point, the Ed25519 key),
 * found by walking the SPKI's TLV headers: a full schema parse costs more than the hash, and this
 * runs for every certificate issued.
 */
function subjectPublicKeyBits(spki: Uint8Array): Uint8Array {
  const outer = readTlv(spki, 0, spki.length);
  const algorithm = readTlv(spki, outer.contentStart, outer.end);
  const bits = readTlv(spki, algorithm.end, outer.end);
  if (outer.tagNumber !== 16 || algorithm.tagNumber !== 16 || bits.tagNumber !== 3 || bits.end !== outer.end || spki[bits.contentStart] !== 0) {
    throw new CryptoInputError('failed to parse public key');
  }
  return spki.subarray(bits.contentStart + 1, bits.end);
}

const stripZeros = (b: Uint8Array): Uint8Array => {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  return b.subarray(i);
};

/** Whether the private key's public half is this public key (compared by value, not encoding). */
export function sameKey(key: PkiKey, spki: Uint8Array): boolean {
  try {
    const a = AsnConvert.parse(key.spki, SubjectPublicKeyInfo);
    const b = AsnConvert.parse(spki, SubjectPublicKeyInfo);
    if (a.algorithm.algorithm !== b.algorithm.algorithm) return false;
    if (a.algorithm.algorithm === id_rsaEncryption) {
      const ra = AsnConvert.parse(a.subjectPublicKey, RSAPublicKey);
      const rb = AsnConvert.parse(b.subjectPublicKey, RSAPublicKey);
      return (
        bytesEqual(stripZeros(u8(ra.modulus)), stripZeros(u8(rb.modulus))) &&
        bytesEqual(stripZeros(u8(ra.publicExponent)), stripZeros(u8(rb.publicExponent)))
      );
    }
    if (a.algorithm.algorithm === id_ecPublicKey) {
      const ca = a.algorithm.parameters && AsnConvert.parse(a.algorithm.parameters, ECParameters).namedCurve;
      const cb = b.algorithm.parameters && AsnConvert.parse(b.algorithm.parameters, ECParameters).namedCurve;
      if (!ca || ca !== cb) return false;
    }
    return bytesEqual(u8(a.subjectPublicKey), u8(b.subjectPublicKey));
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------------------------
// Imported-key cache: importKey is slow (RSA especially) and the same issuer key signs repeatedly.

const KEY_CACHE_MAX = 64;
const keyCache = new Map<string, CryptoKey>();

async function cachedKey(cacheKey: string, load: () => Promise<CryptoKey>): Promise<CryptoKey> {
  const hit = keyCache.get(cacheKey);
  if (hit) {
    keyCache.delete(cacheKey); // refresh LRU position
    keyCache.set(cacheKey, hit);
    return hit;
  }
  const key = await load();
  keyCache.set(cacheKey, key);
  if (keyCache.size > KEY_CACHE_MAX) keyCache.delete(keyCache.keys().next().value!);
  return key;
}

// ---------------------------------------------------------------------------------------------
// P-224 through node:crypto, disguised as a CryptoKey so @peculiar/x509's generators (which call
// `crypto.subtle.sign` of their provider) can sign with it too.

// Handle → PKCS#8 DER (workerd's node:crypto wants key material, not a KeyObject, alongside options).
const nodeKeys = new WeakMap<object, Buffer>();

function nodeCryptoKey(pkcs8: Uint8Array, curve: Curve): CryptoKey {
  const handle = { type: 'private', extractable: false, algorithm: { name: 'ECDSA', namedCurve: curve.web }, usages: ['sign'] };
  nodeKeys.set(handle, Buffer.from(pkcs8));
  return handle as unknown as CryptoKey;
}

const nodeHash = (hash: string): string => hash.replace('-', '').toLowerCase();

/** IEEE P1363 r||s, as WebCrypto's ECDSA sign returns it. */
function nodeSignRaw(pkcs8: Buffer, hash: string, data: Uint8Array): ArrayBuffer {
  const sig = nodeCrypto.sign(nodeHash(hash), data, { key: pkcs8, format: 'der', type: 'pkcs8', dsaEncoding: 'ieee-p1363' });
  return copy(sig).buffer as ArrayBuffer;
}

const webSubtle = crypto.subtle;
const pkiSubtle = new Proxy(webSubtle, {
  get(target, prop) {
    if (prop === 'sign') {
      return async (alg: AlgorithmIdentifierLike, key: CryptoKey, data: BufferSource): Promise<ArrayBuffer> => {
        const pkcs8 = nodeKeys.get(key);
        if (!pkcs8) return await target.sign(alg, key, data);
        const hash = typeof alg === 'object' && 'hash' in alg ? hashName(alg.hash) : 'SHA-256';
        return nodeSignRaw(pkcs8, hash, u8(data as ArrayBuffer));
      };
    }
    const v: unknown = Reflect.get(target, prop);
    return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
  },
});
type AlgorithmIdentifierLike = string | SubtleCryptoSignAlgorithm;
const hashName = (h: unknown): string => (typeof h === 'string' ? h : ((h as { name?: string } | undefined)?.name ?? 'SHA-256'));

const pkiCrypto = new Proxy(crypto, {
  get(target, prop) {
    if (prop === 'subtle') return pkiSubtle;
    const v: unknown = Reflect.get(target, prop);
    return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
  },
});
cryptoProvider.set(pkiCrypto);

// ---------------------------------------------------------------------------------------------
// Signers

export interface Signer {
  /**
   * For @peculiar/x509 generators (`signingKey`). A P-224 key is a handle only x509's provider (set here) understands;
   * an externalSigner's is its public key (it signs only through `sign`).
   */
  key: CryptoKey;
  /** As @peculiar/x509 wants it: {name:'RSASSA-PKCS1-v1_5',hash} | {name:'RSA-PSS',hash,saltLength} | {name:'ECDSA',hash} | {name:'Ed25519'}. */
  algorithm: SignAlgorithm;
  /** Go's x509.SignatureAlgorithm name, e.g. SHA256WithRSA. */
  goName: string;
  /** The AlgorithmIdentifier to put in signed structures (encoded like Go: NULL params for RSA). */
  signatureAlgorithm: AlgorithmIdentifier;
  /** Signs and returns the signature as X.509 carries it (ECDSA as a DER ECDSA-Sig-Value). */
  sign(data: Uint8Array): Promise<Uint8Array>;
  keyType: PkiKeyType;
}

/** A WebCrypto signing algorithm with the hash as a plain name. */
export interface SignAlgorithm {
  name: string;
  hash?: string;
  saltLength?: number;
}

interface GoAlgorithm {
  type: PkiKeyType;
  name: string;
  hash?: string;
  oid: string;
}
const GO_ALGORITHMS: Record<string, GoAlgorithm> = {
  SHA256WithRSA: { type: 'rsa', name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', oid: '1.2.840.113549.1.1.11' },
  SHA384WithRSA: { type: 'rsa', name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-384', oid: '1.2.840.113549.1.1.12' },
  SHA512WithRSA: { type: 'rsa', name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-512', oid: '1.2.840.113549.1.1.13' },
  SHA256WithRSAPSS: { type: 'rsa', name: 'RSA-PSS', hash: 'SHA-256', oid: id_RSASSA_PSS },
  SHA384WithRSAPSS: { type: 'rsa', name: 'RSA-PSS', hash: 'SHA-384', oid: id_RSASSA_PSS },
  SHA512WithRSAPSS: { type: 'rsa', name: 'RSA-PSS', hash: 'SHA-512', oid: id_RSASSA_PSS },
  ECDSAWithSHA256: { type: 'ec', name: 'ECDSA', hash: 'SHA-256', oid: '1.2.840.10045.4.3.2' },
  ECDSAWithSHA384: { type: 'ec', name: 'ECDSA', hash: 'SHA-384', oid: '1.2.840.10045.4.3.3' },
  ECDSAWithSHA512: { type: 'ec', name: 'ECDSA', hash: 'SHA-512', oid: '1.2.840.10045.4.3.4' },
  PureEd25519: { type: 'ed25519', name: 'Ed25519', oid: ID_ED25519 },
};

/** Names accepted for revocation_signature_algorithm (case-insensitive; "ed25519" is also accepted). */
export const GO_SIGNATURE_ALGORITHMS: readonly string[] = Object.keys(GO_ALGORITHMS);

/** How Vault prints an algorithm on reads (certutil.InvSignatureAlgorithmNames): PureEd25519 shows as "Ed25519". */
export const vaultSignatureAlgorithmName = (goName: string): string => (goName === 'PureEd25519' ? 'Ed25519' : goName);

const HASH_OIDS: Record<string, string> = {
  'SHA-1': '1.3.14.3.2.26',
  'SHA-256': '2.16.840.1.101.3.4.2.1',
  'SHA-384': '2.16.840.1.101.3.4.2.2',
  'SHA-512': '2.16.840.1.101.3.4.2.3',
};
const HASH_LEN: Record<string, number> = { 'SHA-1': 20, 'SHA-256': 32, 'SHA-384': 48, 'SHA-512': 64 };

function signatureAlgorithmId(g: GoAlgorithm): AlgorithmIdentifier {
  if (g.name === 'RSASSA-PKCS1-v1_5') return new AlgorithmIdentifier({ algorithm: g.oid, parameters: null });
  if (g.name === 'RSA-PSS') {
    const hashAlg = new AlgorithmIdentifier({ algorithm: HASH_OIDS[g.hash!], parameters: null });
    const params = new RsaSaPssParams({
      hashAlgorithm: hashAlg,
      maskGenAlgorithm: new AlgorithmIdentifier({ algorithm: id_mgf1, parameters: AsnConvert.serialize(hashAlg) }),
      saltLength: HASH_LEN[g.hash!],
    });
    return new AlgorithmIdentifier({ algorithm: id_RSASSA_PSS, parameters: AsnConvert.serialize(params) });
  }
  return new AlgorithmIdentifier({ algorithm: g.oid }); // ECDSA and Ed25519: parameters absent
}

/**
 * Vault's default signature algorithm (Go name) for a key: RSA SHA-256 unless signature_bits says
 * 384/512, PSS on request; EC hash follows the curve; Ed25519 is pure. use_pss is ignored for
 * non-RSA keys, as Vault does.
 */
export function defaultSignatureAlgorithm(type: PkiKeyType, bits: number, signatureBits: number, usePss: boolean): string {
  if (type === 'rsa') {
    // Only RSA takes signature_bits into account (Vault ignores it for EC and Ed25519).
    if (![0, 256, 384, 512].includes(signatureBits)) {
      throw new CryptoInputError(`unsupported hash signature algorithm: ${signatureBits}`);
    }
    return `SHA${signatureBits === 0 ? 256 : signatureBits}WithRSA${usePss ? 'PSS' : ''}`;
  }
  if (type === 'ec') return `ECDSAWith${curveByBits(bits)!.hash.replace('-', '')}`;
  return 'PureEd25519';
}

/** Signer with Vault's defaults (defaultSignatureAlgorithm). */
export async function signerFor(key: PkiKey, signatureBits: number, usePss: boolean): Promise<Signer> {
  return await signerForGoName(key, defaultSignatureAlgorithm(key.type, key.bits, signatureBits, usePss));
}

/** A Go algorithm name (case-insensitive) for a key type, canonical; 400 when the key type cannot do it. */
function goAlgorithm(keyType: PkiKeyType, goName: string): { canonical: string; g: GoAlgorithm; algorithm: SignAlgorithm } {
  const wanted = goName.toLowerCase() === 'ed25519' ? 'pureed25519' : goName.toLowerCase(); // Vault's alias
  const canonical = GO_SIGNATURE_ALGORITHMS.find((n) => n.toLowerCase() === wanted);
  if (!canonical) throw new CryptoInputError(`unknown signature algorithm: ${goName}`);
  const g = GO_ALGORITHMS[canonical];
  if (g.type !== keyType) {
    throw new CryptoInputError(`signature algorithm ${canonical} cannot be used with a key of type ${keyType}`);
  }
  const algorithm: SignAlgorithm =
    g.name === 'RSA-PSS'
      ? { name: g.name, hash: g.hash, saltLength: HASH_LEN[g.hash!] }
      : g.hash
        ? { name: g.name, hash: g.hash }
        : { name: g.name };
  return { canonical, g, algorithm };
}

/** Signer for a named Go algorithm (case-insensitive); 400 when the key type cannot do it. */
export async function signerForGoName(key: PkiKey, goName: string): Promise<Signer> {
  const { canonical, g, algorithm } = goAlgorithm(key.type, goName);
  const signatureAlgorithm = signatureAlgorithmId(g);
  const curve = key.type === 'ec' ? curveByBits(key.bits)! : undefined;

  if (curve && isNodeCurve(curve)) {
    const ko = nodeCrypto.createPrivateKey({ key: Buffer.from(key.pkcs8), format: 'der', type: 'pkcs8' });
    return {
      key: nodeCryptoKey(key.pkcs8, curve),
      algorithm,
      goName: canonical,
      signatureAlgorithm,
      keyType: key.type,
      sign: async (data) => copy(nodeCrypto.sign(nodeHash(g.hash!), data, ko)), // DER by default
    };
  }

  // x509's generators merge the key's own algorithm over `algorithm`, so the key is imported
  // with exactly this name and hash.
  const importAlg =
    key.type === 'rsa'
      ? { name: g.name, hash: g.hash }
      : key.type === 'ec'
        ? { name: 'ECDSA', namedCurve: curve!.web }
        : { name: 'Ed25519' };
  const cryptoKey = await cachedKey(`${JSON.stringify(importAlg)}:${toBase64(key.pkcs8)}`, async () =>
    await crypto.subtle.importKey('pkcs8', key.pkcs8, importAlg, false, ['sign']),
  );
  return {
    key: cryptoKey,
    algorithm,
    goName: canonical,
    signatureAlgorithm,
    keyType: key.type,
    sign: async (data) => {
      const sig = await webSubtle.sign(algorithm, cryptoKey, data);
      if (g.name !== 'ECDSA') return new Uint8Array(sig);
      return ecdsaDerFromRaw(new Uint8Array(sig));
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Signers whose private key is elsewhere (an HSM): the data is hashed here, the digest signed there.

/**
 * Signs a digest made with `hash` (WebCrypto name): RSA PKCS#1 v1.5 with the DigestInfo added by
 * the signer, RSA-PSS with `saltLength`, or ECDSA answered as a DER ECDSA-Sig-Value.
 */
export type DigestSigner = (digest: Uint8Array, how: { hash: string; pss: boolean; saltLength?: number }) => Promise<Uint8Array>;

/**
 * A Signer for the RSA or EC key whose public half is `spki`, signing through `signDigest`. Every
 * signature is checked against `spki` before it is used: a key replaced behind our back (or a
 * faulty device) then fails the request instead of producing certificates nobody can verify.
 * `key` is the public key: such a signer cannot be handed to @peculiar/x509's generators.
 */
export async function externalSigner(spki: Uint8Array, goName: string, signDigest: DigestSigner): Promise<Signer> {
  const info = publicKeyInfo(spki);
  if (info.type === 'ed25519') throw new CryptoInputError('Ed25519 keys cannot sign through a digest');
  const { canonical, g, algorithm } = goAlgorithm(info.type, goName);
  const signatureAlgorithm = signatureAlgorithmId(g);
  const importAlg = info.type === 'rsa' ? { name: g.name, hash: g.hash } : { name: 'ECDSA', namedCurve: curveByBits(info.bits)!.web };
  const publicKey = await cachedKey(`pub:${JSON.stringify(importAlg)}:${toBase64(spki)}`, async () =>
    await crypto.subtle.importKey('spki', spki, importAlg, false, ['verify']),
  );
  return {
    key: publicKey,
    algorithm,
    goName: canonical,
    signatureAlgorithm,
    keyType: info.type,
    sign: async (data) => {
      const digest = new Uint8Array(await crypto.subtle.digest(g.hash!, data));
      const pss = g.name === 'RSA-PSS';
      const signature = await signDigest(digest, { hash: g.hash!, pss, ...(pss ? { saltLength: algorithm.saltLength } : {}) });
      if (!(await verifySignature(spki, signatureAlgorithm, data, signature))) {
        throw new CryptoInputError('the signature made by the external key does not verify with its recorded public key (was the key replaced?)');
      }
      return signature;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Verification

interface VerifyAlgorithm {
  name: string;
  hash?: string;
  saltLength?: number;
}

/** Maps a signature AlgorithmIdentifier to WebCrypto terms; null for ones we don't verify. */
function verifyAlgorithm(alg: AlgorithmIdentifier): VerifyAlgorithm | null {
  const rsa: Record<string, string> = {
    '1.2.840.113549.1.1.5': 'SHA-1',
    '1.2.840.113549.1.1.11': 'SHA-256',
    '1.2.840.113549.1.1.12': 'SHA-384',
    '1.2.840.113549.1.1.13': 'SHA-512',
  };
  const ecdsa: Record<string, string> = {
    '1.2.840.10045.4.1': 'SHA-1',
    '1.2.840.10045.4.3.2': 'SHA-256',
    '1.2.840.10045.4.3.3': 'SHA-384',
    '1.2.840.10045.4.3.4': 'SHA-512',
  };
  const oid = alg.algorithm;
  if (rsa[oid]) return { name: 'RSASSA-PKCS1-v1_5', hash: rsa[oid] };
  if (ecdsa[oid]) return { name: 'ECDSA', hash: ecdsa[oid] };
  if (oid === ID_ED25519) return { name: 'Ed25519' };
  if (oid === id_RSASSA_PSS && alg.parameters) {
    const p = AsnConvert.parse(alg.parameters, RsaSaPssParams);
    const hash = Object.keys(HASH_OIDS).find((h) => HASH_OIDS[h] === p.hashAlgorithm.algorithm);
    return hash ? { name: 'RSA-PSS', hash, saltLength: p.saltLength } : null;
  }
  return null;
}

/** Verifies an X.509-style signature (ECDSA as DER) over `data` with the public key `spki`. */
export async function verifySignature(
  spki: Uint8Array,
  signatureAlgorithm: AlgorithmIdentifier,
  data: Uint8Array,
  signature: Uint8Array,
  /** publicKeyInfo(spki), when the caller has it already. */
  keyInfo?: { type: PkiKeyType; bits: number },
): Promise<boolean> {
  try {
    const alg = verifyAlgorithm(signatureAlgorithm);
    if (!alg) return false;
    const info = keyInfo ?? publicKeyInfo(spki);
    if ((alg.name === 'ECDSA') !== (info.type === 'ec') || (alg.name === 'Ed25519') !== (info.type === 'ed25519')) return false;
    const curve = info.type === 'ec' ? curveByBits(info.bits)! : undefined;
    if (curve && isNodeCurve(curve)) {
      const pub = nodeCrypto.createPublicKey({ key: Buffer.from(spki), format: 'der', type: 'spki' });
      return nodeCrypto.verify(nodeHash(alg.hash!), data, pub, signature);
    }
    const importAlg =
      info.type === 'rsa' ? { name: alg.name, hash: alg.hash } : curve ? { name: 'ECDSA', namedCurve: curve.web } : { name: 'Ed25519' };
    const key = await cachedKey(`pub:${JSON.stringify(importAlg)}:${toBase64(spki)}`, async () =>
      await crypto.subtle.importKey('spki', spki, importAlg, false, ['verify']),
    );
    let sig = signature;
    if (curve) {
      // DER ECDSA-Sig-Value → r||s padded to the curve size (the formatter parses it with its schema).
      sig = u8(new AsnEcSignatureFormatter().toWebSignature({ name: 'ECDSA', namedCurve: curve.web }, signature)!);
    }
    return await crypto.subtle.verify(alg, key, sig, data);
  } catch {
    return false;
  }
}
