// Vault transit operations recomputed in Node with node:crypto (OpenSSL), written only from the
// documented wire formats (reference §6.3–6.5, 6.8, 6.10–6.11). Tests compare Coffer against
// these, so nothing here may come from src/. Inputs are JSON bodies; byte strings are standard
// base64. Bad input throws OracleError (the server answers 400 with its message).
import crypto, { type KeyObject } from 'node:crypto';
import { Buffer } from 'node:buffer';

export class OracleError extends Error {}

type Body = Record<string, unknown>;
type Result = Record<string, unknown>;

// ---- request fields -------------------------------------------------------------------------

function str(b: Body, name: string, fallback?: string): string {
  const v = b[name] ?? fallback;
  if (typeof v !== 'string') throw new OracleError(`${name}: expected a string`);
  return v;
}

const has = (b: Body, name: string): boolean => b[name] !== undefined && b[name] !== null;
const flag = (b: Body, name: string): boolean => b[name] === true;

function int(b: Body, name: string, fallback: number): number {
  const v = b[name] ?? fallback;
  if (!Number.isInteger(v) || (v as number) < 0) throw new OracleError(`${name}: expected a non-negative integer`);
  return v as number;
}

/** Strict standard base64 (padded, canonical), as Go's StdEncoding expects. */
function fromB64(s: string, what: string): Buffer {
  const buf = Buffer.from(s, 'base64');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || buf.toString('base64') !== s) throw new OracleError(`${what}: invalid base64`);
  return buf;
}

function fromB64Url(s: string, what: string): Buffer {
  const buf = Buffer.from(s, 'base64url');
  if (!/^[A-Za-z0-9_-]*$/.test(s) || buf.toString('base64url') !== s) throw new OracleError(`${what}: invalid base64url`);
  return buf;
}

const bytes = (b: Body, name: string): Buffer => fromB64(str(b, name), name);
const optBytes = (b: Body, name: string): Buffer | undefined => (has(b, name) ? bytes(b, name) : undefined);
const prefix = (version: number): string => `vault:v${version}:`;

/** Splits `vault:v<N>:<payload>`. */
function parseVault(s: string, what: string): { version: number; payload: string } {
  const m = /^vault:v(\d+):(.*)$/s.exec(s);
  if (!m) throw new OracleError(`invalid ${what}: no prefix`);
  return { version: Number(m[1]), payload: m[2] };
}

// ---- key types ------------------------------------------------------------------------------

const SYMMETRIC: Record<string, { keyLen: number; cipher: string }> = {
  'aes128-gcm96': { keyLen: 16, cipher: 'aes-128-gcm' },
  'aes256-gcm96': { keyLen: 32, cipher: 'aes-256-gcm' },
  'chacha20-poly1305': { keyLen: 32, cipher: 'chacha20-poly1305' },
};
const RSA_BITS: Record<string, number> = { 'rsa-2048': 2048, 'rsa-3072': 3072, 'rsa-4096': 4096 };
/** Node's name for the curve (key generation) and OpenSSL's (asymmetricKeyDetails). */
const EC_CURVES: Record<string, { curve: string; openssl: string }> = {
  'ecdsa-p256': { curve: 'P-256', openssl: 'prime256v1' },
  'ecdsa-p384': { curve: 'P-384', openssl: 'secp384r1' },
  'ecdsa-p521': { curve: 'P-521', openssl: 'secp521r1' },
};
const isRsa = (type: string): boolean => Object.hasOwn(RSA_BITS, type);
const isEc = (type: string): boolean => Object.hasOwn(EC_CURVES, type);

function checkKeyType(key: KeyObject, type: string): KeyObject {
  const details = key.asymmetricKeyDetails;
  const ok = isRsa(type)
    ? key.asymmetricKeyType === 'rsa' && details?.modulusLength === RSA_BITS[type]
    : isEc(type)
      ? key.asymmetricKeyType === 'ec' && details?.namedCurve === EC_CURVES[type].openssl
      : type === 'ed25519' && key.asymmetricKeyType === 'ed25519';
  if (!ok) throw new OracleError(`key does not match type ${type}`);
  return key;
}

/** Node's JWK import reads only `d` for a private OKP key (`x` must be a string but is unused). */
const ed25519FromSeed = (seed: Buffer): KeyObject =>
  crypto.createPrivateKey({ key: { kty: 'OKP', crv: 'Ed25519', d: seed.toString('base64url'), x: '' }, format: 'jwk' });

function ed25519Raw(key: KeyObject): { seed: Buffer; pub: Buffer } {
  const jwk = key.export({ format: 'jwk' });
  return { seed: Buffer.from(jwk.d ?? '', 'base64url'), pub: Buffer.from(jwk.x ?? '', 'base64url') };
}

/** Vault's 64-byte Ed25519 private key form: seed ‖ public key. */
function ed25519FromPrivate64(raw: Buffer): KeyObject {
  if (raw.length !== 64) throw new OracleError('ed25519_private64: expected 64 bytes');
  const key = ed25519FromSeed(raw.subarray(0, 32));
  if (!ed25519Raw(key).pub.equals(raw.subarray(32))) throw new OracleError('ed25519_private64: public half does not match the seed');
  return key;
}

function privateKey(b: Body, type: string): KeyObject {
  if (type === 'ed25519' && has(b, 'ed25519_private64')) return ed25519FromPrivate64(bytes(b, 'ed25519_private64'));
  return checkKeyType(crypto.createPrivateKey(str(b, 'private_pem')), type);
}

function publicKey(b: Body, type: string): KeyObject {
  if (has(b, 'public_pem')) return checkKeyType(crypto.createPublicKey(str(b, 'public_pem')), type);
  if (type === 'ed25519' && has(b, 'ed25519_public')) {
    const x = bytes(b, 'ed25519_public');
    if (x.length !== 32) throw new OracleError('ed25519_public: expected 32 bytes');
    return crypto.createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: x.toString('base64url') }, format: 'jwk' });
  }
  return crypto.createPublicKey(privateKey(b, type));
}

/** Derived Ed25519 (§6.4): seed = HKDF-SHA256(IKM = seed ‖ pub, salt empty, info = context, 32). */
function deriveEd25519(key: KeyObject, b: Body): KeyObject {
  const { seed, pub } = ed25519Raw(key);
  return ed25519FromSeed(hkdf(Buffer.concat([seed, pub]), context(b), 32));
}

const hkdf = (ikm: Buffer, info: Buffer, len: number): Buffer =>
  Buffer.from(crypto.hkdfSync('sha256', ikm, Buffer.alloc(0), info, len));

function context(b: Body): Buffer {
  if (!has(b, 'context')) throw new OracleError("missing 'context' for key derivation");
  return bytes(b, 'context');
}

// ---- hashes ---------------------------------------------------------------------------------

interface Hash {
  node: string;
  len: number;
}
const HASHES: Record<string, Hash> = {
  sha1: { node: 'sha1', len: 20 },
  'sha2-224': { node: 'sha224', len: 28 },
  'sha2-256': { node: 'sha256', len: 32 },
  'sha2-384': { node: 'sha384', len: 48 },
  'sha2-512': { node: 'sha512', len: 64 },
  'sha3-224': { node: 'sha3-224', len: 28 },
  'sha3-256': { node: 'sha3-256', len: 32 },
  'sha3-384': { node: 'sha3-384', len: 48 },
  'sha3-512': { node: 'sha3-512', len: 64 },
};

function hashOf(name: string): Hash {
  if (!Object.hasOwn(HASHES, name)) throw new OracleError(`invalid hash algorithm "${name}"`);
  return HASHES[name];
}

// ---- encrypt / decrypt (§6.3–6.5) -----------------------------------------------------------

function symmetricSpec(type: string): { keyLen: number; cipher: string } {
  if (!Object.hasOwn(SYMMETRIC, type)) throw new OracleError(`unsupported encryption key type "${type}"`);
  return SYMMETRIC[type];
}

/** The cipher key, plus the nonce-HMAC key for convergent (v3) encryption. */
function symmetricKeys(b: Body, keyLen: number): { encKey: Buffer; nonceKey?: Buffer } {
  const key = bytes(b, 'key');
  const convergent = flag(b, 'convergent');
  if (!flag(b, 'derived')) {
    if (convergent) throw new OracleError('convergent encryption requires derivation to be enabled');
    if (key.length !== keyLen) throw new OracleError(`key: expected ${keyLen} bytes, got ${key.length}`);
    return { encKey: key };
  }
  const okm = hkdf(key, context(b), keyLen + (convergent ? 32 : 0));
  return { encKey: okm.subarray(0, keyLen), nonceKey: convergent ? okm.subarray(keyLen) : undefined };
}

function rsaPadding(b: Body): 'oaep' | 'pkcs1v15' {
  const scheme = str(b, 'padding_scheme', 'oaep');
  if (scheme !== 'oaep' && scheme !== 'pkcs1v15') throw new OracleError(`unsupported padding scheme "${scheme}"`);
  return scheme;
}

function rejectForRsa(b: Body): void {
  for (const name of ['derived', 'convergent', 'associated_data', 'nonce', 'context'])
    if (has(b, name) && b[name] !== false) throw new OracleError(`${name} is not supported for RSA keys`);
}

function encrypt(b: Body): Result {
  const type = str(b, 'type');
  const plaintext = bytes(b, 'plaintext');
  const version = int(b, 'version', 1);
  if (isRsa(type)) {
    rejectForRsa(b);
    const key = checkKeyType(crypto.createPublicKey(str(b, 'public_key')), type);
    const ct =
      rsaPadding(b) === 'oaep'
        ? crypto.publicEncrypt({ key, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, plaintext)
        : crypto.publicEncrypt({ key, padding: crypto.constants.RSA_PKCS1_PADDING }, plaintext);
    return { ciphertext: prefix(version) + ct.toString('base64') };
  }
  const { keyLen, cipher } = symmetricSpec(type);
  if (has(b, 'padding_scheme')) throw new OracleError('padding_scheme is only for RSA keys');
  const { encKey, nonceKey } = symmetricKeys(b, keyLen);
  let nonce: Buffer;
  if (nonceKey) {
    if (has(b, 'nonce')) throw new OracleError('nonce provided when not allowed');
    nonce = crypto.createHmac('sha256', nonceKey).update(plaintext).digest().subarray(0, 12);
  } else {
    nonce = optBytes(b, 'nonce') ?? crypto.randomBytes(12);
    if (nonce.length !== 12) throw new OracleError(`nonce: expected 12 bytes, got ${nonce.length}`);
  }
  // Both AEADs default to 16-byte tags and share the GCM interface (setAAD, getAuthTag).
  const c = crypto.createCipheriv(cipher, encKey, nonce) as crypto.CipherGCM;
  c.setAAD(optBytes(b, 'associated_data') ?? Buffer.alloc(0));
  const ct = Buffer.concat([c.update(plaintext), c.final()]);
  return { ciphertext: prefix(version) + Buffer.concat([nonce, ct, c.getAuthTag()]).toString('base64') };
}

/**
 * EME-PKCS1-v1_5 decoding (RFC 8017 §7.2.2) over raw RSA: Node 20 refuses RSA_PKCS1_PADDING in
 * privateDecrypt (CVE-2023-46809), and the oracle needs no constant-time behaviour.
 */
function pkcs1v15Decrypt(key: KeyObject, ct: Buffer): Buffer {
  const em = crypto.privateDecrypt({ key, padding: crypto.constants.RSA_NO_PADDING }, ct);
  const sep = em.indexOf(0, 2);
  if (em[0] !== 0 || em[1] !== 2 || sep < 10) throw new OracleError('crypto/rsa: decryption error');
  return em.subarray(sep + 1);
}

function decrypt(b: Body): Result {
  const type = str(b, 'type');
  const payload = fromB64(parseVault(str(b, 'ciphertext'), 'ciphertext').payload, 'ciphertext');
  if (isRsa(type)) {
    rejectForRsa(b);
    const key = checkKeyType(crypto.createPrivateKey(str(b, 'private_key')), type);
    const pt =
      rsaPadding(b) === 'oaep'
        ? crypto.privateDecrypt({ key, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: 'sha256' }, payload)
        : pkcs1v15Decrypt(key, payload);
    return { plaintext: pt.toString('base64') };
  }
  const { keyLen, cipher } = symmetricSpec(type);
  const { encKey } = symmetricKeys(b, keyLen);
  if (payload.length < 28) throw new OracleError('invalid ciphertext length');
  const d = crypto.createDecipheriv(cipher, encKey, payload.subarray(0, 12)) as crypto.DecipherGCM;
  d.setAAD(optBytes(b, 'associated_data') ?? Buffer.alloc(0));
  d.setAuthTag(payload.subarray(payload.length - 16));
  try {
    return { plaintext: Buffer.concat([d.update(payload.subarray(12, payload.length - 16)), d.final()]).toString('base64') };
  } catch {
    throw new OracleError('cipher: message authentication failed');
  }
}

// ---- HMAC (§6.8) ----------------------------------------------------------------------------

function hmac(b: Body): Result {
  const algorithm = str(b, 'algorithm', 'sha2-256');
  if (algorithm === 'sha1') throw new OracleError(`invalid hash algorithm "${algorithm}"`);
  const mac = crypto.createHmac(hashOf(algorithm).node, bytes(b, 'key')).update(bytes(b, 'input')).digest();
  return { hmac: prefix(int(b, 'version', 1)) + mac.toString('base64') };
}

// ---- key generation -------------------------------------------------------------------------

function generatePair(type: string): Promise<{ publicKey: KeyObject; privateKey: KeyObject }> {
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, publicKey: KeyObject, privateKey: KeyObject): void =>
      err ? reject(err) : resolve({ publicKey, privateKey });
    if (isRsa(type)) crypto.generateKeyPair('rsa', { modulusLength: RSA_BITS[type], publicExponent: 65537 }, done);
    else if (isEc(type)) crypto.generateKeyPair('ec', { namedCurve: EC_CURVES[type].curve }, done);
    else if (type === 'ed25519') crypto.generateKeyPair('ed25519', {}, done);
    else reject(new OracleError(`unsupported key type "${type}"`));
  });
}

async function keygen(b: Body): Promise<Result> {
  const type = str(b, 'type');
  if (type === 'hmac') {
    const size = int(b, 'key_size', 32);
    if (size < 32 || size > 512) throw new OracleError('key_size: must be between 32 and 512 bytes');
    return { key: crypto.randomBytes(size).toString('base64') };
  }
  if (Object.hasOwn(SYMMETRIC, type)) return { key: crypto.randomBytes(SYMMETRIC[type].keyLen).toString('base64') };
  const { publicKey: pub, privateKey: priv } = await generatePair(type);
  const out: Result = {
    private_pem: priv.export({ type: 'pkcs8', format: 'pem' }),
    public_pem: pub.export({ type: 'spki', format: 'pem' }),
    pkcs8_der: priv.export({ type: 'pkcs8', format: 'der' }).toString('base64'),
  };
  if (type === 'ed25519') {
    const { seed, pub: raw } = ed25519Raw(priv);
    out.ed25519_private64 = Buffer.concat([seed, raw]).toString('base64');
    out.ed25519_public = raw.toString('base64');
  }
  return out;
}

// ---- sign / verify (§6.8) -------------------------------------------------------------------

interface SignOptions {
  hash: Hash | 'none';
  prehashed: boolean;
  scheme: 'pss' | 'pkcs1v15';
  salt: 'auto' | 'hash' | number;
  jws: boolean;
}

function signOptions(b: Body): SignOptions {
  const hashName = str(b, 'hash_algorithm', 'sha2-256');
  const scheme = str(b, 'signature_algorithm', 'pss');
  if (scheme !== 'pss' && scheme !== 'pkcs1v15') throw new OracleError(`unsupported signature algorithm "${scheme}"`);
  const marshaling = str(b, 'marshaling_algorithm', 'asn1');
  if (marshaling !== 'asn1' && marshaling !== 'jws') throw new OracleError(`unsupported marshaling algorithm "${marshaling}"`);
  const rawSalt = b.salt_length ?? 'auto';
  const numeric = (typeof rawSalt === 'number' && Number.isInteger(rawSalt)) || (typeof rawSalt === 'string' && /^\d+$/.test(rawSalt));
  if (rawSalt !== 'auto' && rawSalt !== 'hash' && !(numeric && Number(rawSalt) >= 0))
    throw new OracleError(`salt_length: invalid value ${JSON.stringify(rawSalt)}`);
  const salt = rawSalt === 'auto' || rawSalt === 'hash' ? rawSalt : Number(rawSalt);
  const prehashed = flag(b, 'prehashed');
  if (hashName === 'none' && (!prehashed || scheme !== 'pkcs1v15'))
    throw new OracleError('hash_algorithm none requires prehashed and signature_algorithm pkcs1v15');
  return { hash: hashName === 'none' ? 'none' : hashOf(hashName), prehashed, scheme, salt, jws: marshaling === 'jws' };
}

const modBits = (key: KeyObject): number => key.asymmetricKeyDetails?.modulusLength ?? 0;
/** Largest PSS salt: emLen - hLen - 2 with emLen = ceil((modBits - 1) / 8) (RFC 8017 §9.1.1). */
const maxSalt = (key: KeyObject, hash: Hash): number => Math.ceil((modBits(key) - 1) / 8) - hash.len - 2;

function saltFor(o: SignOptions, key: KeyObject, hash: Hash): number | 'auto' {
  if (o.salt === 'auto') return 'auto';
  const n = o.salt === 'hash' ? hash.len : o.salt;
  if (n > maxSalt(key, hash)) throw new OracleError(`requested salt length ${n} is invalid`);
  return n;
}

/**
 * PKCS#1 v1.5 DigestInfo prefixes, taken from OpenSSL itself rather than written out: sign a probe
 * message with a throwaway key and open the signature with its public key.
 */
const digestInfoPrefixes = new Map<string, Buffer>();
let probeKey: KeyObject | undefined;
function digestInfoPrefix(hash: Hash): Buffer {
  let p = digestInfoPrefixes.get(hash.node);
  if (!p) {
    probeKey ??= crypto.generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey;
    const sig = crypto.sign(hash.node, Buffer.from('probe'), probeKey);
    const block = crypto.publicDecrypt({ key: crypto.createPublicKey(probeKey), padding: crypto.constants.RSA_PKCS1_PADDING }, sig);
    p = block.subarray(0, block.length - hash.len);
    digestInfoPrefixes.set(hash.node, p);
  }
  return p;
}

function mgf1(hash: Hash, seed: Buffer, len: number): Buffer {
  const blocks: Buffer[] = [];
  for (let i = 0; blocks.length * hash.len < len; i++) {
    const counter = Buffer.alloc(4);
    counter.writeUInt32BE(i);
    blocks.push(crypto.createHash(hash.node).update(seed).update(counter).digest());
  }
  return Buffer.concat(blocks).subarray(0, len);
}

const xor = (a: Buffer, b: Buffer): Buffer => Buffer.from(a.map((x, i) => x ^ b[i]));
const pssH = (hash: Hash, digest: Buffer, salt: Buffer): Buffer =>
  crypto.createHash(hash.node).update(Buffer.alloc(8)).update(digest).update(salt).digest();

/**
 * RSASSA-PSS over a given digest (RFC 8017 §8.1, §9.1): node:crypto only signs messages, so the
 * EMSA-PSS encoding is done here and the private-key operation is raw RSA.
 */
function pssSignDigest(key: KeyObject, hash: Hash, digest: Buffer, saltLen: number): Buffer {
  const emBits = modBits(key) - 1;
  const emLen = Math.ceil(emBits / 8);
  const salt = crypto.randomBytes(saltLen);
  const h = pssH(hash, digest, salt);
  const db = Buffer.alloc(emLen - hash.len - 1);
  db[db.length - saltLen - 1] = 1;
  salt.copy(db, db.length - saltLen);
  const maskedDb = xor(db, mgf1(hash, h, db.length));
  maskedDb[0] &= 0xff >> (8 * emLen - emBits);
  const em = Buffer.concat([maskedDb, h, Buffer.from([0xbc])]);
  const k = Math.ceil(modBits(key) / 8);
  return crypto.privateDecrypt({ key, padding: crypto.constants.RSA_NO_PADDING }, Buffer.concat([Buffer.alloc(k - emLen), em]));
}

function pssVerifyDigest(key: KeyObject, hash: Hash, digest: Buffer, sig: Buffer, saltLen: number | 'auto'): boolean {
  const k = Math.ceil(modBits(key) / 8);
  const emBits = modBits(key) - 1;
  const emLen = Math.ceil(emBits / 8);
  if (sig.length !== k) return false;
  const m = crypto.publicEncrypt({ key, padding: crypto.constants.RSA_NO_PADDING }, sig);
  if (m.subarray(0, k - emLen).some((x) => x !== 0)) return false;
  const em = m.subarray(k - emLen);
  const topMask = 0xff >> (8 * emLen - emBits);
  if (em[emLen - 1] !== 0xbc || (em[0] & ~topMask) !== 0) return false;
  const h = em.subarray(emLen - hash.len - 1, emLen - 1);
  const db = xor(em.subarray(0, emLen - hash.len - 1), mgf1(hash, h, emLen - hash.len - 1));
  db[0] &= topMask;
  const one = db.findIndex((x) => x !== 0);
  if (one < 0 || db[one] !== 1) return false;
  const salt = db.subarray(one + 1);
  if (saltLen !== 'auto' && salt.length !== saltLen) return false;
  return pssH(hash, digest, salt).equals(h);
}

function checkDigest(o: SignOptions, hash: Hash, input: Buffer): void {
  if (o.prehashed && input.length !== hash.len)
    throw new OracleError(`prehashed input: expected ${hash.len} bytes for the hash, got ${input.length}`);
}

function rsaSign(key: KeyObject, o: SignOptions, input: Buffer): Buffer {
  const { RSA_PKCS1_PADDING, RSA_PKCS1_PSS_PADDING, RSA_PSS_SALTLEN_MAX_SIGN } = crypto.constants;
  if (o.hash === 'none') return crypto.privateEncrypt({ key, padding: RSA_PKCS1_PADDING }, input);
  const hash = o.hash;
  checkDigest(o, hash, input);
  if (o.scheme === 'pkcs1v15') {
    if (!o.prehashed) return crypto.sign(hash.node, input, { key, padding: RSA_PKCS1_PADDING });
    return crypto.privateEncrypt({ key, padding: RSA_PKCS1_PADDING }, Buffer.concat([digestInfoPrefix(hash), input]));
  }
  const salt = saltFor(o, key, hash);
  if (o.prehashed) return pssSignDigest(key, hash, input, salt === 'auto' ? maxSalt(key, hash) : salt);
  const saltLength = salt === 'auto' ? RSA_PSS_SALTLEN_MAX_SIGN : salt;
  return crypto.sign(hash.node, input, { key, padding: RSA_PKCS1_PSS_PADDING, saltLength });
}

function rsaVerify(key: KeyObject, o: SignOptions, input: Buffer, sig: Buffer): boolean {
  const { RSA_PKCS1_PADDING, RSA_PKCS1_PSS_PADDING, RSA_PSS_SALTLEN_AUTO } = crypto.constants;
  const open = (): Buffer => crypto.publicDecrypt({ key, padding: RSA_PKCS1_PADDING }, sig);
  if (o.hash === 'none') return open().equals(input);
  const hash = o.hash;
  checkDigest(o, hash, input);
  if (o.scheme === 'pkcs1v15') {
    if (!o.prehashed) return crypto.verify(hash.node, input, { key, padding: RSA_PKCS1_PADDING }, sig);
    return open().equals(Buffer.concat([digestInfoPrefix(hash), input]));
  }
  const salt = saltFor(o, key, hash);
  if (o.prehashed) return pssVerifyDigest(key, hash, input, sig, salt);
  const saltLength = salt === 'auto' ? RSA_PSS_SALTLEN_AUTO : salt;
  return crypto.verify(hash.node, input, { key, padding: RSA_PKCS1_PSS_PADDING, saltLength }, sig);
}

function sign(b: Body): Result {
  const type = str(b, 'type');
  const input = bytes(b, 'input');
  const o = signOptions(b);
  const encode = (sig: Buffer): string => prefix(int(b, 'version', 1)) + sig.toString(o.jws ? 'base64url' : 'base64');
  if (type === 'ed25519') {
    // Pure Ed25519 over the raw input: hash_algorithm and prehashed do not apply (Vault CE).
    const key = privateKey(b, type);
    if (!flag(b, 'derived')) return { signature: encode(crypto.sign(null, input, key)) };
    const derived = deriveEd25519(key, b);
    return { signature: encode(crypto.sign(null, input, derived)), public_key: ed25519Raw(derived).pub.toString('base64') };
  }
  if (!isRsa(type) && !isEc(type)) throw new OracleError(`unsupported signing key type "${type}"`);
  if (flag(b, 'derived')) throw new OracleError('key derivation is only supported for ed25519 signing keys');
  const key = privateKey(b, type);
  if (isRsa(type)) return { signature: encode(rsaSign(key, o, input)) };
  if (o.prehashed || o.hash === 'none') throw new OracleError('prehashed ECDSA is unsupported by oracle');
  return { signature: encode(crypto.sign(o.hash.node, input, { key, dsaEncoding: o.jws ? 'ieee-p1363' : 'der' })) };
}

function verify(b: Body): Result {
  const type = str(b, 'type');
  const input = bytes(b, 'input');
  const o = signOptions(b);
  const payload = parseVault(str(b, 'signature'), 'signature').payload;
  const sig = o.jws ? fromB64Url(payload, 'signature') : fromB64(payload, 'signature');
  if (type === 'ed25519') {
    const key = flag(b, 'derived') ? crypto.createPublicKey(deriveEd25519(privateKey(b, type), b)) : publicKey(b, type);
    return { valid: crypto.verify(null, input, key, sig) };
  }
  if (!isRsa(type) && !isEc(type)) throw new OracleError(`unsupported signing key type "${type}"`);
  if (flag(b, 'derived')) throw new OracleError('key derivation is only supported for ed25519 signing keys');
  const key = publicKey(b, type);
  if (isEc(type) && (o.prehashed || o.hash === 'none')) throw new OracleError('prehashed ECDSA is unsupported by oracle');
  try {
    if (isRsa(type)) return { valid: rsaVerify(key, o, input, sig) };
    return { valid: crypto.verify((o.hash as Hash).node, input, { key, dsaEncoding: o.jws ? 'ieee-p1363' : 'der' }, sig) };
  } catch (e) {
    if (e instanceof OracleError) throw e;
    return { valid: false }; // OpenSSL rejects malformed signatures by throwing
  }
}

// ---- BYOK wrap / unwrap (§6.11) -------------------------------------------------------------

const OAEP_HASHES: Record<string, string> = { SHA1: 'sha1', SHA224: 'sha224', SHA256: 'sha256', SHA384: 'sha384', SHA512: 'sha512' };
/** RFC 5649 alternative initial value. */
const KWP_IV = Buffer.from('A65959A6', 'hex');

function oaepHash(b: Body): string {
  const name = str(b, 'hash_function', 'SHA256').toUpperCase();
  if (!Object.hasOwn(OAEP_HASHES, name)) throw new OracleError(`invalid hash_function "${name}"`);
  return OAEP_HASHES[name];
}

function kwpCipher(key: Buffer): string {
  if (![16, 24, 32].includes(key.length)) throw new OracleError(`ephemeral_key: AES key of ${key.length} bytes`);
  return `id-aes${key.length * 8}-wrap-pad`;
}

/** `ephemeral_key` (16/24/32 bytes) is only for known-answer tests; Vault always uses 32 fresh bytes. */
function wrap(b: Body): Result {
  const pub = crypto.createPublicKey(str(b, 'wrapping_public_pem'));
  if (pub.asymmetricKeyType !== 'rsa') throw new OracleError('wrapping key must be RSA');
  const material = bytes(b, 'material');
  const ephemeral = optBytes(b, 'ephemeral_key') ?? crypto.randomBytes(32);
  const head = crypto.publicEncrypt({ key: pub, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: oaepHash(b) }, ephemeral);
  const c = crypto.createCipheriv(kwpCipher(ephemeral), ephemeral, KWP_IV);
  return { ciphertext: Buffer.concat([head, c.update(material), c.final()]).toString('base64') };
}

function unwrap(b: Body): Result {
  const key = crypto.createPrivateKey(str(b, 'wrapping_private_pem'));
  if (key.asymmetricKeyType !== 'rsa') throw new OracleError('wrapping key must be RSA');
  const ct = bytes(b, 'ciphertext');
  const k = Math.ceil(modBits(key) / 8);
  if (ct.length <= k) throw new OracleError('provided ciphertext is too short');
  let ephemeral: Buffer;
  try {
    ephemeral = crypto.privateDecrypt({ key, padding: crypto.constants.RSA_PKCS1_OAEP_PADDING, oaepHash: oaepHash(b) }, ct.subarray(0, k));
  } catch (e) {
    if (e instanceof OracleError) throw e;
    throw new OracleError('failed to decrypt the ephemeral key (RSA-OAEP)');
  }
  if (ephemeral.length !== 32) throw new OracleError(`ephemeral key is ${ephemeral.length} bytes, expected 32`);
  const d = crypto.createDecipheriv('id-aes256-wrap-pad', ephemeral, KWP_IV);
  try {
    return { material: Buffer.concat([d.update(ct.subarray(k)), d.final()]).toString('base64') };
  } catch {
    throw new OracleError('failed to unwrap the key material (AES-KWP integrity check)');
  }
}

// ---- export forms (§6.10) -------------------------------------------------------------------

function exportForms(b: Body): Result {
  const type = str(b, 'type');
  if (!isRsa(type) && !isEc(type) && type !== 'ed25519') throw new OracleError(`export-forms: unsupported key type "${type}"`);
  const key = privateKey(b, type);
  if (type === 'ed25519') {
    const { seed, pub } = ed25519Raw(key);
    return { signing_key: Buffer.concat([seed, pub]).toString('base64'), public_key: pub.toString('base64') };
  }
  const spki = crypto.createPublicKey(key).export({ type: 'spki', format: 'pem' }) as string;
  if (isRsa(type)) {
    const pkcs1 = key.export({ type: 'pkcs1', format: 'pem' }) as string; // keeps the trailing newline
    return { encryption_key: pkcs1, signing_key: pkcs1, public_key: spki };
  }
  return { signing_key: (key.export({ type: 'sec1', format: 'pem' }) as string).trim(), public_key: spki.trim() };
}

export type OracleOp = (body: Body) => Result | Promise<Result>;

export const OPS: Readonly<Record<string, OracleOp>> = {
  encrypt,
  decrypt,
  hmac,
  keygen,
  sign,
  verify,
  wrap,
  unwrap,
  'export-forms': exportForms,
};
