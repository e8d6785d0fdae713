// @ts-check
// The PKCS#11 numbers the bridge speaks, by the hexadecimal value a Coffer `pkcs11` managed key
// names in its `mechanism` field ("0x0001"), plus the hashes and curves that go with them. The
// values are the standard CKM_/CKG_ constants of PKCS#11 2.40 and 3.0, written out here so the
// bridge does not depend on which of them a binding happens to export.

import { BridgeError } from './errors.mjs';

/**
 * @typedef {'rsa-pkcs' | 'rsa-pss' | 'rsa-oaep' | 'ecdsa' | 'rsa-keygen' | 'ec-keygen'} Family
 * @typedef {{ value: number, name: string, family: Family, keyType: 'rsa' | 'ec', hash?: string }} Mechanism
 */

/** @type {Mechanism[]} */
const LIST = [
  { value: 0x0000, name: 'CKM_RSA_PKCS_KEY_PAIR_GEN', family: 'rsa-keygen', keyType: 'rsa' },
  { value: 0x0001, name: 'CKM_RSA_PKCS', family: 'rsa-pkcs', keyType: 'rsa' },
  { value: 0x0009, name: 'CKM_RSA_PKCS_OAEP', family: 'rsa-oaep', keyType: 'rsa' },
  { value: 0x000d, name: 'CKM_RSA_PKCS_PSS', family: 'rsa-pss', keyType: 'rsa' },
  { value: 0x1040, name: 'CKM_EC_KEY_PAIR_GEN', family: 'ec-keygen', keyType: 'ec' },
  { value: 0x1041, name: 'CKM_ECDSA', family: 'ecdsa', keyType: 'ec' },
  // Hash-and-sign mechanisms name the hash too. The bridge always receives the digest, so it signs
  // with the base mechanism above and only uses these to know (and check) the hash.
  { value: 0x0006, name: 'CKM_SHA1_RSA_PKCS', family: 'rsa-pkcs', keyType: 'rsa', hash: 'sha1' },
  { value: 0x0046, name: 'CKM_SHA224_RSA_PKCS', family: 'rsa-pkcs', keyType: 'rsa', hash: 'sha2-224' },
  { value: 0x0040, name: 'CKM_SHA256_RSA_PKCS', family: 'rsa-pkcs', keyType: 'rsa', hash: 'sha2-256' },
  { value: 0x0041, name: 'CKM_SHA384_RSA_PKCS', family: 'rsa-pkcs', keyType: 'rsa', hash: 'sha2-384' },
  { value: 0x0042, name: 'CKM_SHA512_RSA_PKCS', family: 'rsa-pkcs', keyType: 'rsa', hash: 'sha2-512' },
  { value: 0x000e, name: 'CKM_SHA1_RSA_PKCS_PSS', family: 'rsa-pss', keyType: 'rsa', hash: 'sha1' },
  { value: 0x0047, name: 'CKM_SHA224_RSA_PKCS_PSS', family: 'rsa-pss', keyType: 'rsa', hash: 'sha2-224' },
  { value: 0x0043, name: 'CKM_SHA256_RSA_PKCS_PSS', family: 'rsa-pss', keyType: 'rsa', hash: 'sha2-256' },
  { value: 0x0044, name: 'CKM_SHA384_RSA_PKCS_PSS', family: 'rsa-pss', keyType: 'rsa', hash: 'sha2-384' },
  { value: 0x0045, name: 'CKM_SHA512_RSA_PKCS_PSS', family: 'rsa-pss', keyType: 'rsa', hash: 'sha2-512' },
  { value: 0x1042, name: 'CKM_ECDSA_SHA1', family: 'ecdsa', keyType: 'ec', hash: 'sha1' },
  { value: 0x1043, name: 'CKM_ECDSA_SHA224', family: 'ecdsa', keyType: 'ec', hash: 'sha2-224' },
  { value: 0x1044, name: 'CKM_ECDSA_SHA256', family: 'ecdsa', keyType: 'ec', hash: 'sha2-256' },
  { value: 0x1045, name: 'CKM_ECDSA_SHA384', family: 'ecdsa', keyType: 'ec', hash: 'sha2-384' },
  { value: 0x1046, name: 'CKM_ECDSA_SHA512', family: 'ecdsa', keyType: 'ec', hash: 'sha2-512' },
];

/** @type {Map<number, Mechanism>} */
export const MECHANISMS = new Map(LIST.map((m) => [m.value, m]));

/** "0x0001" style, as Coffer shows mechanisms. */
export function mechanismHex(/** @type {number} */ value) {
  return `0x${value.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Reads a mechanism field: a "0x…" hexadecimal string (the managed key's form), a number (how a
 * managed key read shows it) or a CKM_ name.
 * @param {unknown} raw
 * @param {string} field
 * @returns {Mechanism}
 */
export function parseMechanism(raw, field = 'mechanism') {
  /** @type {number | undefined} */
  let value;
  if (typeof raw === 'number' && Number.isSafeInteger(raw) && raw >= 0) value = raw;
  else if (typeof raw === 'string') {
    const s = raw.trim();
    if (/^0x[0-9a-f]{1,8}$/i.test(s)) value = Number.parseInt(s.slice(2), 16);
    else if (/^[0-9]{1,10}$/.test(s)) value = Number.parseInt(s, 10);
    else value = LIST.find((m) => m.name === s.toUpperCase())?.value;
  }
  if (value === undefined) throw new BridgeError(400, 'bad_request', `${field} must be a hexadecimal string such as "0x0001"`);
  const mech = MECHANISMS.get(value);
  if (!mech) {
    const known = LIST.map((m) => `${mechanismHex(m.value)} ${m.name}`).join(', ');
    throw new BridgeError(400, 'unsupported_mechanism', `${field} ${mechanismHex(value)} is not supported by the bridge; supported: ${known}`);
  }
  return mech;
}

/**
 * @typedef {{ name: string, ckm: number, mgf: number, length: number, oid: string, node: string }} Hash
 */

/** @type {Hash[]} */
const HASH_LIST = [
  { name: 'sha1', ckm: 0x0220, mgf: 0x1, length: 20, oid: '1.3.14.3.2.26', node: 'sha1' },
  { name: 'sha2-224', ckm: 0x0255, mgf: 0x5, length: 28, oid: '2.16.840.1.101.3.4.2.4', node: 'sha224' },
  { name: 'sha2-256', ckm: 0x0250, mgf: 0x2, length: 32, oid: '2.16.840.1.101.3.4.2.1', node: 'sha256' },
  { name: 'sha2-384', ckm: 0x0260, mgf: 0x3, length: 48, oid: '2.16.840.1.101.3.4.2.2', node: 'sha384' },
  { name: 'sha2-512', ckm: 0x0270, mgf: 0x4, length: 64, oid: '2.16.840.1.101.3.4.2.3', node: 'sha512' },
  { name: 'sha3-224', ckm: 0x02b5, mgf: 0x6, length: 28, oid: '2.16.840.1.101.3.4.2.7', node: 'sha3-224' },
  { name: 'sha3-256', ckm: 0x02b0, mgf: 0x7, length: 32, oid: '2.16.840.1.101.3.4.2.8', node: 'sha3-256' },
  { name: 'sha3-384', ckm: 0x02c0, mgf: 0x8, length: 48, oid: '2.16.840.1.101.3.4.2.9', node: 'sha3-384' },
  { name: 'sha3-512', ckm: 0x02d0, mgf: 0x9, length: 64, oid: '2.16.840.1.101.3.4.2.10', node: 'sha3-512' },
];

/** Vault's names (sha2-256) and the common spellings (sha256, SHA-256). */
const HASH_ALIASES = new Map(
  HASH_LIST.flatMap((h) => {
    const bits = h.name.split('-')[1];
    const names = [h.name, h.node];
    if (h.name.startsWith('sha2-')) names.push(`sha-${bits}`);
    if (h.name === 'sha1') names.push('sha-1');
    return names.map((n) => /** @type {[string, Hash]} */ ([n, h]));
  }),
);

/**
 * @param {unknown} raw
 * @param {string} field
 * @returns {Hash}
 */
export function parseHash(raw, field = 'hash') {
  const hash = typeof raw === 'string' ? HASH_ALIASES.get(raw.trim().toLowerCase()) : undefined;
  if (!hash) throw new BridgeError(400, 'bad_request', `${field} must be one of ${HASH_LIST.map((h) => h.name).join(', ')}`);
  return hash;
}

/** @param {string} name */
export function hashByName(name) {
  return parseHash(name);
}

/**
 * @typedef {{ name: string, oid: string, bits: number, size: number }} Curve
 */

/** @type {Curve[]} */
const CURVE_LIST = [
  { name: 'P-256', oid: '1.2.840.10045.3.1.7', bits: 256, size: 32 },
  { name: 'P-384', oid: '1.3.132.0.34', bits: 384, size: 48 },
  { name: 'P-521', oid: '1.3.132.0.35', bits: 521, size: 66 },
];

const CURVE_ALIASES = new Map(
  CURVE_LIST.flatMap((c) => {
    const bits = String(c.bits);
    const sec = { 256: 'prime256v1', 384: 'secp384r1', 521: 'secp521r1' }[c.bits];
    return [c.name, `p${bits}`, `p-${bits}`, `secp${bits}r1`, sec ?? '']
      .filter(Boolean)
      .map((n) => /** @type {[string, Curve]} */ ([n.toLowerCase(), c]));
  }),
);

/**
 * Accepts P-256 / P256 / p256 / secp256r1 / prime256v1 and the same for P-384 and P-521.
 * @param {unknown} raw
 * @returns {Curve}
 */
export function parseCurve(raw) {
  const curve = typeof raw === 'string' ? CURVE_ALIASES.get(raw.trim().toLowerCase()) : undefined;
  if (!curve) throw new BridgeError(400, 'bad_request', `curve must be one of ${CURVE_LIST.map((c) => c.name).join(', ')}`);
  return curve;
}

/** @param {string} oid */
export function curveByOid(oid) {
  return CURVE_LIST.find((c) => c.oid === oid);
}

export const RSA_KEY_BITS = [2048, 3072, 4096];
