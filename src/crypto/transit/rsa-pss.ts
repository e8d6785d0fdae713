// EMSA-PSS encoding and verification (RFC 8017 §9.1) over a given message digest, with MGF1 on the
// same hash. Paired with raw RSA (node:crypto RSA_NO_PADDING) this signs prehashed input and
// SHA-224/SHA-3 digests, which neither WebCrypto nor node:crypto's sign() can do.

import { concatBytes } from '../encoding';
import { randomBytes } from '../random';
import { constantTimeEqual } from '../timing';
import { digest, hashLength, type HashName } from './hashes';

const ZERO8 = new Uint8Array(8);

/** Largest salt that fits (RFC 8017 §9.1.1 step 3), which is also Go's PSSSaltLengthAuto on signing. */
export function pssMaxSaltLength(modBits: number, hash: HashName): number {
  return Math.ceil((modBits - 1) / 8) - hashLength(hash) - 2;
}

async function mgf1(hash: HashName, seed: Uint8Array, length: number): Promise<Uint8Array> {
  const out = new Uint8Array(length);
  const block = new Uint8Array(seed.length + 4);
  block.set(seed);
  const counter = new DataView(block.buffer, seed.length, 4);
  for (let i = 0, off = 0; off < length; i++) {
    counter.setUint32(0, i);
    const t = await digest(hash, block);
    out.set(t.subarray(0, Math.min(t.length, length - off)), off);
    off += t.length;
  }
  return out;
}

// H = Hash(0x00 * 8 || mHash || salt)
const saltedHash = (hash: HashName, mHash: Uint8Array, salt: Uint8Array) => digest(hash, concatBytes(ZERO8, mHash, salt));

/**
 * Encodes `mHash` for a modulus of `modBits` bits. Returns the block to feed to the raw RSA private
 * operation: exactly ceil(modBits/8) bytes (with a leading zero byte when emLen is one shorter).
 * Throws RangeError when the digest length is wrong or the salt does not fit.
 */
export async function pssEncode(hash: HashName, mHash: Uint8Array, modBits: number, saltLength: number): Promise<Uint8Array> {
  const hLen = hashLength(hash);
  const emBits = modBits - 1;
  const emLen = Math.ceil(emBits / 8);
  if (mHash.length !== hLen) throw new RangeError('digest length does not match the hash');
  if (!Number.isInteger(saltLength) || saltLength < 0 || emLen < hLen + saltLength + 2) throw new RangeError('salt length does not fit the key');
  const salt = randomBytes(saltLength);
  const h = await saltedHash(hash, mHash, salt);
  // DB = PS (zeros) || 0x01 || salt, masked with MGF1(H).
  const dbLen = emLen - hLen - 1;
  const db = new Uint8Array(dbLen);
  db[dbLen - saltLength - 1] = 0x01;
  db.set(salt, dbLen - saltLength);
  const mask = await mgf1(hash, h, dbLen);
  for (let i = 0; i < dbLen; i++) db[i] ^= mask[i];
  db[0] &= 0xff >> (8 * emLen - emBits);
  const k = Math.ceil(modBits / 8);
  const block = new Uint8Array(k);
  block.set(db, k - emLen);
  block.set(h, k - emLen + dbLen);
  block[k - 1] = 0xbc;
  return block;
}

/**
 * Checks a block recovered by the raw RSA public operation (ceil(modBits/8) bytes) against `mHash`.
 * `saltLength` 'auto' recovers the salt length from the encoding (Go's PSSSaltLengthAuto on verify).
 * Never throws: any mismatch or malformed input is false.
 */
export async function pssVerify(
  hash: HashName,
  mHash: Uint8Array,
  block: Uint8Array,
  modBits: number,
  saltLength: number | 'auto',
): Promise<boolean> {
  const hLen = hashLength(hash);
  const emBits = modBits - 1;
  const emLen = Math.ceil(emBits / 8);
  const k = Math.ceil(modBits / 8);
  if (mHash.length !== hLen || block.length !== k) return false;
  if (k > emLen && block[0] !== 0) return false;
  const em = block.subarray(k - emLen);
  const fixed = saltLength !== 'auto';
  if (emLen < hLen + (fixed ? saltLength : 0) + 2 || em[emLen - 1] !== 0xbc) return false;
  const dbLen = emLen - hLen - 1;
  const topMask = 0xff >> (8 * emLen - emBits);
  if ((em[0] & ~topMask) !== 0) return false;
  const h = em.subarray(dbLen, dbLen + hLen);
  const db = await mgf1(hash, h, dbLen);
  for (let i = 0; i < dbLen; i++) db[i] ^= em[i];
  db[0] &= topMask;
  // DB must be zeros, then 0x01, then the salt.
  let sep = 0;
  while (sep < dbLen && db[sep] === 0) sep++;
  if (sep === dbLen || db[sep] !== 0x01) return false;
  const salt = db.subarray(sep + 1);
  if (fixed && salt.length !== saltLength) return false;
  return constantTimeEqual(await saltedHash(hash, mHash, salt), h);
}
