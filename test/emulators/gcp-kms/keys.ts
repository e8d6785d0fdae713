// The emulated keys' cryptography, in Node: key pairs from node:crypto, and what Cloud KMS does
// with them — sign a digest the caller computed (asymmetricSign) and decrypt RSA-OAEP
// (asymmetricDecrypt). node:crypto signs messages, not digests, so a digest is signed this way:
//   PKCS#1 v1.5 — the DigestInfo (@peculiar/asn1-rsa) under a private-key block type 1 (privateEncrypt);
//   PSS        — EMSA-PSS (RFC 8017 §9.1.1) with a salt as long as the digest, then raw RSA;
//   ECDSA      — @noble/curves over the digest, DER-encoded as Cloud KMS answers.
// test/e2e/gcp-kms-sdk.test.ts checks each against node:crypto's verify over the original message.
import { constants, createHash, createPrivateKey, generateKeyPair, privateDecrypt, privateEncrypt, randomBytes, type KeyObject } from 'node:crypto';
import { p256, p384 } from '@noble/curves/nist.js';
import { DigestInfo, id_sha256, id_sha384, id_sha512 } from '@peculiar/asn1-rsa';
import { AsnConvert, OctetString } from '@peculiar/asn1-schema';
import { AlgorithmIdentifier } from '@peculiar/asn1-x509';

export type Hash = 'sha1' | 'sha256' | 'sha384' | 'sha512';

export interface Algorithm {
  purpose: 'ASYMMETRIC_SIGN' | 'ASYMMETRIC_DECRYPT';
  kind: 'ec' | 'rsa';
  curve?: 'P-256' | 'P-384';
  bits?: number;
  hash: Hash;
  padding?: 'pss' | 'pkcs1' | 'oaep';
}

const ec = (curve: 'P-256' | 'P-384', hash: Hash): Algorithm => ({ purpose: 'ASYMMETRIC_SIGN', kind: 'ec', curve, hash });
const rsa = (padding: 'pss' | 'pkcs1' | 'oaep', bits: number, hash: Hash): Algorithm => ({
  purpose: padding === 'oaep' ? 'ASYMMETRIC_DECRYPT' : 'ASYMMETRIC_SIGN',
  kind: 'rsa',
  bits,
  hash,
  padding,
});

/** The asymmetric algorithms the emulator implements (Cloud KMS has more: secp256k1, Ed25519, raw PKCS#1, PQC, symmetric). */
export const ALGORITHMS: Readonly<Record<string, Algorithm>> = {
  EC_SIGN_P256_SHA256: ec('P-256', 'sha256'),
  EC_SIGN_P384_SHA384: ec('P-384', 'sha384'),
  RSA_SIGN_PSS_2048_SHA256: rsa('pss', 2048, 'sha256'),
  RSA_SIGN_PSS_3072_SHA256: rsa('pss', 3072, 'sha256'),
  RSA_SIGN_PSS_4096_SHA256: rsa('pss', 4096, 'sha256'),
  RSA_SIGN_PSS_4096_SHA512: rsa('pss', 4096, 'sha512'),
  RSA_SIGN_PKCS1_2048_SHA256: rsa('pkcs1', 2048, 'sha256'),
  RSA_SIGN_PKCS1_3072_SHA256: rsa('pkcs1', 3072, 'sha256'),
  RSA_SIGN_PKCS1_4096_SHA256: rsa('pkcs1', 4096, 'sha256'),
  RSA_SIGN_PKCS1_4096_SHA512: rsa('pkcs1', 4096, 'sha512'),
  RSA_DECRYPT_OAEP_2048_SHA256: rsa('oaep', 2048, 'sha256'),
  RSA_DECRYPT_OAEP_3072_SHA256: rsa('oaep', 3072, 'sha256'),
  RSA_DECRYPT_OAEP_4096_SHA256: rsa('oaep', 4096, 'sha256'),
  RSA_DECRYPT_OAEP_4096_SHA512: rsa('oaep', 4096, 'sha512'),
  RSA_DECRYPT_OAEP_2048_SHA1: rsa('oaep', 2048, 'sha1'),
  RSA_DECRYPT_OAEP_3072_SHA1: rsa('oaep', 3072, 'sha1'),
  RSA_DECRYPT_OAEP_4096_SHA1: rsa('oaep', 4096, 'sha1'),
};

export const DIGEST_LENGTH: Record<Hash, number> = { sha1: 20, sha256: 32, sha384: 48, sha512: 64 };
const DIGEST_OID: Partial<Record<Hash, string>> = { sha256: id_sha256, sha384: id_sha384, sha512: id_sha512 };

export interface KeyPair {
  privateKey: KeyObject;
  /** SPKI PEM, as GetPublicKey answers it. */
  publicPem: string;
}

export function generate(alg: Algorithm): Promise<KeyPair> {
  return new Promise((resolve, reject) => {
    const done = (err: Error | null, publicKey: KeyObject, privateKey: KeyObject) => {
      if (err) reject(err);
      else resolve({ privateKey, publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString() });
    };
    if (alg.kind === 'ec') generateKeyPair('ec', { namedCurve: alg.curve === 'P-256' ? 'prime256v1' : 'secp384r1' }, done);
    else generateKeyPair('rsa', { modulusLength: alg.bits!, publicExponent: 65537 }, done);
  });
}

/** The signature Cloud KMS answers for a digest: RSA PKCS#1 v1.5 or PSS, or ECDSA in DER. */
export function signDigest(alg: Algorithm, key: KeyObject, digest: Uint8Array): Buffer {
  if (alg.kind === 'ec') {
    const d = Buffer.from(key.export({ format: 'jwk' }).d!, 'base64url');
    const curve = alg.curve === 'P-256' ? p256 : p384;
    return Buffer.from(curve.sign(digest, d, { prehash: false, lowS: false, format: 'der' }));
  }
  if (alg.padding === 'pkcs1') {
    const info = new DigestInfo({ digestAlgorithm: new AlgorithmIdentifier({ algorithm: DIGEST_OID[alg.hash]!, parameters: null }), digest: new OctetString(digest) });
    return privateEncrypt({ key, padding: constants.RSA_PKCS1_PADDING }, Buffer.from(AsnConvert.serialize(info)));
  }
  return privateEncrypt({ key, padding: constants.RSA_NO_PADDING }, emsaPss(alg.hash, digest, alg.bits! - 1));
}

/** EMSA-PSS-ENCODE of a message hash, MGF1 with the same hash, salt length = hash length. */
function emsaPss(hash: Hash, mHash: Uint8Array, emBits: number): Buffer {
  const hLen = DIGEST_LENGTH[hash];
  const emLen = Math.ceil(emBits / 8);
  const salt = randomBytes(hLen);
  const h = createHash(hash).update(Buffer.alloc(8)).update(mHash).update(salt).digest();
  const db = Buffer.alloc(emLen - hLen - 1);
  db[db.length - hLen - 1] = 0x01;
  salt.copy(db, db.length - hLen);
  const mask = mgf1(hash, h, db.length);
  for (let i = 0; i < db.length; i++) db[i] ^= mask[i];
  db[0] &= 0xff >>> (8 * emLen - emBits);
  return Buffer.concat([db, h, Buffer.from([0xbc])]);
}

function mgf1(hash: Hash, seed: Buffer, length: number): Buffer {
  const out: Buffer[] = [];
  for (let counter = 0; out.length * DIGEST_LENGTH[hash] < length; counter++) {
    const c = Buffer.alloc(4);
    c.writeUInt32BE(counter);
    out.push(createHash(hash).update(seed).update(c).digest());
  }
  return Buffer.concat(out).subarray(0, length);
}

/** RSA-OAEP decryption with the algorithm's hash for OAEP and MGF1; null when it fails. */
export function decrypt(alg: Algorithm, key: KeyObject, ciphertext: Uint8Array): Buffer | null {
  try {
    return privateDecrypt({ key, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: alg.hash }, ciphertext);
  } catch {
    return null;
  }
}

/** A private key from PEM (service-account keys are PKCS#8 PEM). */
export const privateKeyOf = (pem: string): KeyObject => createPrivateKey(pem);
