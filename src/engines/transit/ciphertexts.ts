// Encrypting and decrypting one value with a transit key: Vault's "vault:v<N>:<base64>" format,
// derived keys, convergent nonces and RSA padding (reference §6.3–§6.5).

import { rsaDecrypt, rsaEncrypt } from '../../crypto/transit/asymmetric';
import { cipherKeyLength, NONCE_LENGTH, open, seal, type CipherName } from '../../crypto/transit/cipher';
import { convergentNonce } from '../../crypto/transit/kdf';
import { fromBase64, toBase64 } from '../../crypto/encoding';
import { randomBytes } from '../../crypto/random';
import { badRequest } from '../../framework/errors';
import { isCipher, isRsa, supportsEncryption } from './key-types';
import { cipherKey } from './material';
import { versionPrefix, type KeyPolicy, type KeyVersion } from './policy';
import { splitVersioned, usableVersion } from './versions';

export type Padding = 'oaep' | 'pkcs1v15';

export interface CipherOptions {
  context: Uint8Array;
  /** Caller-supplied nonce (empty: none); only old convergent keys accepted one. */
  nonce: Uint8Array;
  associatedData: Uint8Array;
  /** RSA only; '' = default (oaep). */
  padding: string;
}

const EMPTY = new Uint8Array(0);
export const noOptions = (): CipherOptions => ({ context: EMPTY, nonce: EMPTY, associatedData: EMPTY, padding: '' });

function checkEncryptable(p: KeyPolicy): void {
  if (!supportsEncryption(p.type)) throw badRequest(`message encryption not supported for key type ${p.type}`);
}

function rsaPadding(p: KeyPolicy, o: CipherOptions): Padding {
  if (!isRsa(p.type)) {
    if (o.padding !== '') throw badRequest(`padding_scheme is only supported for RSA keys, not ${p.type}`);
    return 'oaep';
  }
  if (o.padding === '' || o.padding === 'oaep') return 'oaep';
  if (o.padding === 'pkcs1v15') return 'pkcs1v15';
  throw badRequest(`invalid padding_scheme "${o.padding}": oaep or pkcs1v15`);
}

/** RSA keys take no associated data, context or nonce. */
function checkRsaOptions(o: CipherOptions): void {
  if (o.associatedData.length > 0) throw badRequest('associated_data is not supported for RSA keys');
  if (o.context.length > 0 || o.nonce.length > 0) throw badRequest('context and nonce are not supported for RSA keys');
}

/** The cipher key and nonce for an AEAD encryption (convergent keys derive the nonce from the plaintext). */
async function aeadKeyAndNonce(p: KeyPolicy, cipher: CipherName, entry: KeyVersion, plaintext: Uint8Array, o: CipherOptions) {
  const keyLen = cipherKeyLength(cipher);
  if (o.nonce.length > 0) throw badRequest('nonce provided when not allowed');
  if (p.convergent) {
    const material = await cipherKey(p, entry, o.context, keyLen + 32);
    return { key: material.subarray(0, keyLen), nonce: await convergentNonce(material.subarray(keyLen), plaintext) };
  }
  return { key: await cipherKey(p, entry, o.context, keyLen), nonce: randomBytes(NONCE_LENGTH) };
}

export async function encryptValue(p: KeyPolicy, requestedVersion: number, plaintext: Uint8Array, o: CipherOptions): Promise<{ ciphertext: string; version: number }> {
  checkEncryptable(p);
  if (p.convergent && p.convergentVersion >= 1 && p.convergentVersion < 3) {
    throw badRequest(`refusing to support encryption with old convergent encryption key: version ${p.convergentVersion}`);
  }
  const padding = rsaPadding(p, o);
  const { version, entry } = usableVersion(p, requestedVersion);
  let payload: Uint8Array;
  if (isRsa(p.type)) {
    checkRsaOptions(o);
    if (!entry.asym) throw badRequest('key version has no key material');
    payload = await rsaEncrypt(entry.asym, plaintext, padding);
  } else if (isCipher(p.type)) {
    const { key, nonce } = await aeadKeyAndNonce(p, p.type, entry, plaintext, o);
    payload = await seal(p.type, key, nonce, plaintext, o.associatedData);
  } else throw badRequest(`message encryption not supported for key type ${p.type}`);
  return { ciphertext: versionPrefix(p, version) + toBase64(payload), version };
}

export async function decryptValue(p: KeyPolicy, ciphertext: string, o: CipherOptions): Promise<Uint8Array> {
  checkEncryptable(p);
  const padding = rsaPadding(p, o);
  const split = splitVersioned(p.versionTemplate, p, ciphertext, 'ciphertext');
  const entry = split.entry;
  const payload = fromBase64(split.payload);
  if (!payload) throw badRequest('invalid ciphertext: could not decode base64');
  if (isRsa(p.type)) {
    checkRsaOptions(o);
    if (!entry.asym?.privateKey) throw badRequest('requested version for decryption does not contain a private part');
    const out = await rsaDecrypt(entry.asym, payload, padding);
    if (!out) throw badRequest('invalid ciphertext: unable to decrypt');
    return out;
  }
  if (p.convergent && p.convergentVersion >= 1 && p.convergentVersion < 3) {
    throw badRequest(`refusing to support decryption with old convergent encryption key: version ${p.convergentVersion}`);
  }
  if (!isCipher(p.type)) throw badRequest(`message decryption not supported for key type ${p.type}`);
  // A convergent payload carries its nonce like any other; the caller's nonce is not needed.
  if (!p.convergent && o.nonce.length > 0) throw badRequest('nonce provided when not allowed');
  const key = await cipherKey(p, entry, o.context, cipherKeyLength(p.type) + (p.convergent ? 32 : 0));
  const out = await open(p.type, key.subarray(0, cipherKeyLength(p.type)), payload, o.associatedData);
  if (!out) throw badRequest('cipher: message authentication failed');
  return out;
}
