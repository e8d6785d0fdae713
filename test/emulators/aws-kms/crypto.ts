// The emulator's cryptography, with real keys (node:crypto) and an implementation other than the
// product's: KMS signs a precomputed digest (MessageType DIGEST), which node:crypto cannot do (its
// sign() always hashes its input), so DIGEST signatures are made and checked by OpenSSL's
// `pkeyutl`, which takes the digest as given: for PKCS#1 v1.5 it adds the DigestInfo of the named
// hash, for PSS it uses MGF1 on the same hash and a salt as long as the hash (what KMS uses), for
// ECDSA it answers DER. Keys reach it through a pipe (bash process substitution), never a file.
// RAW messages are hashed and signed by node:crypto; RSA-OAEP by node:crypto too.
import { spawn } from 'node:child_process';
import { constants, generateKeyPair, privateDecrypt, publicEncrypt, sign, verify, type KeyObject } from 'node:crypto';
import { promisify } from 'node:util';
import type { HashAlg, SigningAlgorithm, Spec } from './specs';

const generate = promisify(generateKeyPair);

export interface KeyPair {
  privateKey: KeyObject;
  publicKey: KeyObject;
  /** PKCS#8 PEM of the private key and SPKI PEM of the public key, for OpenSSL. */
  privatePem: string;
  publicPem: string;
  /** DER SubjectPublicKeyInfo (GetPublicKey). */
  spki: Buffer;
}

export async function generateKey(spec: Spec): Promise<KeyPair> {
  const { privateKey, publicKey } =
    spec.kind === 'rsa' ? await generate('rsa', { modulusLength: spec.bits, publicExponent: 0x10001 }) : await generate('ec', { namedCurve: spec.curve });
  return {
    privateKey,
    publicKey,
    privatePem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    spki: publicKey.export({ type: 'spki', format: 'der' }),
  };
}

interface Run {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/**
 * `openssl pkeyutl <args>` with the key PEM on fd 3 (read by -inkey through a process
 * substitution, as OpenSSL cannot open a socket by /dev/fd), an optional signature on fd 4
 * (-sigfile), and `input` on stdin.
 */
function pkeyutl(args: string[], keyPem: string, input: Buffer, signature?: Buffer): Promise<Run> {
  const script = `exec openssl pkeyutl "$@" -inkey <(cat <&3)${signature ? ' -sigfile <(cat <&4)' : ''}`;
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', script, 'pkeyutl', ...args], { stdio: ['pipe', 'pipe', 'pipe', 'pipe', ...(signature ? (['pipe'] as const) : [])] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (c: Buffer) => out.push(c));
    child.stderr!.on('data', (c: Buffer) => err.push(c));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString() }));
    // A child that exits early closes its pipes: the writes' EPIPE is its answer, not ours.
    const feed = (stream: NodeJS.WritableStream | null | undefined, data: string | Buffer) => {
      if (!stream) return;
      stream.on('error', () => {});
      stream.end(data);
    };
    feed(child.stdin, input);
    feed(child.stdio[3] as NodeJS.WritableStream, keyPem);
    if (signature) feed(child.stdio[4] as NodeJS.WritableStream, signature);
  });
}

function pkeyoptsOf(alg: SigningAlgorithm): string[] {
  const opts = ['-pkeyopt', `digest:${alg.hash}`];
  if (alg.padding === 'pkcs1') opts.push('-pkeyopt', 'rsa_padding_mode:pkcs1');
  if (alg.padding === 'pss') opts.push('-pkeyopt', 'rsa_padding_mode:pss', '-pkeyopt', 'rsa_pss_saltlen:digest', '-pkeyopt', `rsa_mgf1_md:${alg.hash}`);
  return opts;
}

/** Signs a digest exactly `alg.length` bytes long. */
export async function signDigest(key: KeyPair, alg: SigningAlgorithm, digest: Buffer): Promise<Buffer> {
  const r = await pkeyutl(['-sign', ...pkeyoptsOf(alg)], key.privatePem, digest);
  if (r.code !== 0) throw new Error(`openssl pkeyutl -sign failed (${r.code}): ${r.stderr.trim()}`);
  return r.stdout;
}

/** Whether `signature` is the key's over the digest (checked with the public key only). */
export async function verifyDigest(key: KeyPair, alg: SigningAlgorithm, digest: Buffer, signature: Buffer): Promise<boolean> {
  const r = await pkeyutl(['-verify', '-pubin', ...pkeyoptsOf(alg)], key.publicPem, digest, signature);
  return r.code === 0 && /Signature Verified Successfully/.test(r.stdout.toString());
}

const rsaOptions = (key: KeyObject, alg: SigningAlgorithm) =>
  alg.padding === 'pss' ? { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: alg.length } : alg.padding === 'pkcs1' ? { key, padding: constants.RSA_PKCS1_PADDING } : { key, dsaEncoding: 'der' as const };

/** MessageType RAW: node:crypto hashes the message and signs. */
export const signRaw = (key: KeyPair, alg: SigningAlgorithm, message: Buffer): Buffer => sign(alg.hash, message, rsaOptions(key.privateKey, alg));

export function verifyRaw(key: KeyPair, alg: SigningAlgorithm, message: Buffer, signature: Buffer): boolean {
  try {
    return verify(alg.hash, message, rsaOptions(key.publicKey, alg), signature);
  } catch {
    return false;
  }
}

/** RSAES-OAEP with `hash` for OAEP and MGF1 (node:crypto sets MGF1 to the OAEP hash). */
export const oaepEncrypt = (key: KeyPair, hash: HashAlg, plaintext: Buffer): Buffer => publicEncrypt({ key: key.publicKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash }, plaintext);

/** null when the ciphertext does not decrypt. */
export function oaepDecrypt(key: KeyPair, hash: HashAlg, ciphertext: Buffer): Buffer | null {
  try {
    return privateDecrypt({ key: key.privateKey, padding: constants.RSA_PKCS1_OAEP_PADDING, oaepHash: hash }, ciphertext);
  } catch {
    return null;
  }
}

/** The largest plaintext RSA-OAEP takes for a modulus and hash (RFC 8017 §7.1.1). */
export const oaepMaxPlaintext = (bits: number, hash: HashAlg): number => bits / 8 - 2 * (hash === 'sha1' ? 20 : 32) - 2;
