// The emulated vault's real cryptography: keys made by node:crypto, signatures over a given digest
// made and checked by the openssl CLI (`pkeyutl` signs a digest as is: Node's sign() always hashes
// its input), RSA-OAEP by node:crypto. ECDSA signatures are Key Vault's raw r‖s (JWS) on the wire.
import { execFile } from 'node:child_process';
import { constants, generateKeyPair, privateDecrypt, publicEncrypt, randomBytes, type KeyObject } from 'node:crypto';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ECDSASigValue } from '@peculiar/asn1-ecc';
import { AsnConvert, AsnIntegerBigIntConverter } from '@peculiar/asn1-schema';

export type Hash = 'sha256' | 'sha384' | 'sha512';

interface SignAlg {
  hash: Hash;
  kind: 'pkcs1' | 'pss' | 'ecdsa';
  /** ECDSA: the one curve the algorithm goes with. */
  curve?: 'P-256' | 'P-384' | 'P-521';
}

/** Key Vault's JWS signature algorithms for asymmetric keys (ES256K left out: no such keys here). */
export const SIGN_ALGS: Readonly<Record<string, SignAlg>> = Object.freeze({
  RS256: { hash: 'sha256', kind: 'pkcs1' },
  RS384: { hash: 'sha384', kind: 'pkcs1' },
  RS512: { hash: 'sha512', kind: 'pkcs1' },
  PS256: { hash: 'sha256', kind: 'pss' },
  PS384: { hash: 'sha384', kind: 'pss' },
  PS512: { hash: 'sha512', kind: 'pss' },
  ES256: { hash: 'sha256', kind: 'ecdsa', curve: 'P-256' },
  ES384: { hash: 'sha384', kind: 'ecdsa', curve: 'P-384' },
  ES512: { hash: 'sha512', kind: 'ecdsa', curve: 'P-521' },
});

export const HASH_LENGTH: Record<Hash, number> = { sha256: 32, sha384: 48, sha512: 64 };
const COORDINATE: Record<string, number> = { 'P-256': 32, 'P-384': 48, 'P-521': 66 };

/** RSA encryption algorithms: OAEP's hash (MGF1 alike), or PKCS#1 v1.5. */
export const ENCRYPT_ALGS: Readonly<Record<string, 'sha1' | 'sha256' | 'pkcs1'>> = Object.freeze({ 'RSA-OAEP': 'sha1', 'RSA-OAEP-256': 'sha256', RSA1_5: 'pkcs1' });

export interface Material {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** The private key as a PKCS#8 PEM file, for openssl. */
  keyFile: string;
}

export async function generate(dir: string, kty: 'rsa' | 'ec', sizeOrCurve: number | string): Promise<Material> {
  const pair = await new Promise<{ publicKey: KeyObject; privateKey: KeyObject }>((resolve, reject) => {
    const done = (err: Error | null, publicKey: KeyObject, privateKey: KeyObject) => (err ? reject(err) : resolve({ publicKey, privateKey }));
    if (kty === 'rsa') generateKeyPair('rsa', { modulusLength: Number(sizeOrCurve), publicExponent: 0x10001 }, done);
    else generateKeyPair('ec', { namedCurve: String(sizeOrCurve) }, done);
  });
  const keyFile = path.join(dir, `${randomBytes(12).toString('hex')}.pem`);
  writeFileSync(keyFile, pair.privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  return { ...pair, keyFile };
}

/** The public JWK members Key Vault shows (n, e or crv, x, y). */
export function publicJwk(m: Material): Record<string, string> {
  const jwk = m.publicKey.export({ format: 'jwk' });
  return jwk.kty === 'RSA' ? { n: String(jwk.n), e: String(jwk.e) } : { crv: String(jwk.crv), x: String(jwk.x), y: String(jwk.y) };
}

function openssl(args: string[], stdin: Buffer): Promise<{ code: number; stdout: Buffer; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = execFile('openssl', args, { encoding: 'buffer' }, (err, stdout, stderr) => {
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ code: err ? Number(err.code) : 0, stdout, stderr: stderr.toString() });
    });
    child.stdin!.end(stdin);
  });
}

const pkeyopts = (alg: SignAlg) => [
  '-pkeyopt',
  `digest:${alg.hash}`,
  ...(alg.kind === 'pss' ? ['-pkeyopt', 'rsa_padding_mode:pss', '-pkeyopt', 'rsa_pss_saltlen:digest'] : []),
];

/** The signature Key Vault returns: RSA as is, ECDSA as r‖s of the curve's width. */
export async function sign(m: Material, alg: SignAlg, digest: Buffer): Promise<Buffer> {
  const out = await openssl(['pkeyutl', '-sign', '-inkey', m.keyFile, ...pkeyopts(alg)], digest);
  if (out.code !== 0) throw new Error(`openssl pkeyutl -sign failed: ${out.stderr}`);
  if (alg.kind !== 'ecdsa') return out.stdout;
  const der = AsnConvert.parse(out.stdout, ECDSASigValue);
  const size = COORDINATE[alg.curve!];
  return Buffer.concat([fixed(new Uint8Array(der.r), size), fixed(new Uint8Array(der.s), size)]);
}

/** True when `signature` (r‖s for ECDSA) is valid for `digest`. */
export async function verify(dir: string, m: Material, alg: SignAlg, digest: Buffer, signature: Buffer): Promise<boolean> {
  let sig = signature;
  if (alg.kind === 'ecdsa') {
    const size = COORDINATE[alg.curve!];
    if (signature.length !== 2 * size) return false;
    const int = (b: Buffer) => AsnIntegerBigIntConverter.toASN(BigInt(`0x${b.toString('hex')}`)).valueBlock.valueHexView.slice().buffer;
    sig = Buffer.from(AsnConvert.serialize(new ECDSASigValue({ r: int(signature.subarray(0, size)), s: int(signature.subarray(size)) })));
  }
  const sigFile = path.join(dir, `${randomBytes(12).toString('hex')}.sig`);
  writeFileSync(sigFile, sig);
  try {
    const out = await openssl(['pkeyutl', '-verify', '-inkey', m.keyFile, '-sigfile', sigFile, ...pkeyopts(alg)], digest);
    return out.code === 0 && out.stdout.toString().includes('Signature Verified Successfully');
  } finally {
    rmSync(sigFile, { force: true });
  }
}

/** An unsigned big-endian integer as exactly `size` bytes. */
function fixed(n: Uint8Array, size: number): Buffer {
  let start = 0;
  while (start < n.length - 1 && n[start] === 0) start++;
  const bytes = n.subarray(start);
  const out = Buffer.alloc(size);
  out.set(bytes, size - bytes.length);
  return out;
}

export function encrypt(m: Material, alg: string, plaintext: Buffer): Buffer {
  const mode = ENCRYPT_ALGS[alg];
  return publicEncrypt(mode === 'pkcs1' ? { key: m.publicKey, padding: constants.RSA_PKCS1_PADDING } : { key: m.publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: mode }, plaintext);
}

/** Null when the ciphertext does not decrypt. */
export function decrypt(m: Material, alg: string, ciphertext: Buffer): Buffer | null {
  const mode = ENCRYPT_ALGS[alg];
  try {
    return privateDecrypt(mode === 'pkcs1' ? { key: m.privateKey, padding: constants.RSA_PKCS1_PADDING } : { key: m.privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: mode }, ciphertext);
  } catch {
    return null;
  }
}
