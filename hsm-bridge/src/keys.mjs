// @ts-check
// Key operations on one logged-in session: find a key pair by label and/or CKA_ID, describe it
// (type, size or curve, SPKI public key), generate RSA and EC key pairs, sign, verify, RSA-OAEP
// encrypt and decrypt, random bytes.
//
// Signing always takes the DIGEST of the message and names its hash. The bridge then signs with
// the base mechanism: CKM_RSA_PKCS over the DER DigestInfo, CKM_RSA_PKCS_PSS with the hash in its
// parameters, or CKM_ECDSA over the digest. ECDSA signatures are answered in DER (the
// Ecdsa-Sig-Value SEQUENCE of r and s), the form X.509 and Vault's transit use.

import { randomBytes } from 'node:crypto';
import pkcs11js from 'pkcs11js';
import { BridgeError, ckrName, pkcs11Code } from './errors.mjs';
import { curveFromParams, digestInfo, ecdsaDerToRaw, ecdsaRawToDer, ecParams, ecPoint, ecPublicPem, rsaPublicPem } from './encoding.mjs';
import { mechanismHex } from './mechanisms.mjs';
import { idHex } from './request.mjs';

/** @typedef {import('pkcs11js').PKCS11} P11 */
/** @typedef {import('./request.mjs').KeyRef} KeyRef */
/** @typedef {import('./mechanisms.mjs').Mechanism} Mechanism */
/** @typedef {import('./mechanisms.mjs').Hash} Hash */
/** @typedef {import('./mechanisms.mjs').Curve} Curve */

/**
 * @typedef {{ priv: Buffer, pub: Buffer | null, keyType: 'rsa' | 'ec', label: string, id: Buffer,
 *   modulusBytes: number, curve: Curve | null }} KeyPair
 */

const CK = pkcs11js;
const OUT_MAX = 1024; // bytes: RSA up to 8192 bits, any ECDSA signature

/** A CK_ULONG attribute value in native order (only small values are read). */
const ulong = (/** @type {Buffer} */ b) => (b.length >= 4 ? b.readUInt32LE(0) : b.readUInt8(0));
const bool = (/** @type {Buffer | undefined} */ b) => b !== undefined && b.length > 0 && b[0] !== 0;

/**
 * One attribute, or undefined when the object does not have it or keeps it secret.
 * @param {P11} p11
 * @param {Buffer} session
 * @param {Buffer} handle
 * @param {number} type
 * @returns {Buffer | undefined}
 */
function attr(p11, session, handle, type) {
  try {
    const [a] = p11.C_GetAttributeValue(session, handle, [{ type }]);
    const v = a?.value;
    return Buffer.isBuffer(v) ? v : undefined;
  } catch (e) {
    const code = pkcs11Code(e);
    if (code === CK.CKR_ATTRIBUTE_TYPE_INVALID || code === CK.CKR_ATTRIBUTE_SENSITIVE) return undefined;
    throw e;
  }
}

/**
 * @param {P11} p11
 * @param {Buffer} session
 * @param {import('pkcs11js').Template} template
 * @param {number} max
 */
function find(p11, session, template, max) {
  p11.C_FindObjectsInit(session, template);
  try {
    return p11.C_FindObjects(session, max);
  } finally {
    p11.C_FindObjectsFinal(session);
  }
}

/**
 * @param {number} cls
 * @param {{ label?: string, id?: Buffer }} ref
 */
const template = (cls, { label, id }) => [
  { type: CK.CKA_CLASS, value: cls },
  ...(label !== undefined ? [{ type: CK.CKA_LABEL, value: label }] : []),
  ...(id !== undefined ? [{ type: CK.CKA_ID, value: id }] : []),
];

/** @param {KeyRef} ref */
function describeRef({ label, id }) {
  return [label !== undefined ? `label "${label}"` : '', id !== undefined ? `id ${idHex(id)}` : ''].filter(Boolean).join(' and ');
}

/**
 * The key pair named by ref: exactly one private key must match.
 * @param {P11} p11
 * @param {Buffer} session
 * @param {KeyRef} ref
 * @returns {KeyPair}
 */
export function locate(p11, session, ref) {
  const privs = find(p11, session, template(CK.CKO_PRIVATE_KEY, ref), 2);
  if (privs.length === 0) throw new BridgeError(404, 'key_not_found', `no private key with ${describeRef(ref)} on the token`);
  if (privs.length > 1) throw new BridgeError(409, 'ambiguous_key', `more than one private key has ${describeRef(ref)}; name the key by key_id too`);
  const priv = /** @type {Buffer} */ (privs[0]);
  const typeAttr = attr(p11, session, priv, CK.CKA_KEY_TYPE);
  const kt = typeAttr && ulong(typeAttr);
  /** @type {'rsa' | 'ec'} */
  let keyType;
  if (kt === CK.CKK_RSA) keyType = 'rsa';
  else if (kt === CK.CKK_EC) keyType = 'ec';
  else throw new BridgeError(400, 'unsupported_key_type', `the key with ${describeRef(ref)} is neither RSA nor EC`);
  const label = (attr(p11, session, priv, CK.CKA_LABEL) ?? Buffer.alloc(0)).toString('utf8');
  const id = attr(p11, session, priv, CK.CKA_ID) ?? Buffer.alloc(0);

  // Its public key: same CKA_ID (and label) when the private key has an id, else same label.
  const pubRef = id.length > 0 ? { id, label: ref.label } : { label };
  const pubs = find(p11, session, [...template(CK.CKO_PUBLIC_KEY, pubRef), { type: CK.CKA_KEY_TYPE, value: /** @type {number} */ (kt) }], 1);
  const pub = pubs[0] ?? null;

  let modulusBytes = 0;
  /** @type {Curve | null} */
  let curve = null;
  if (keyType === 'rsa') {
    const modulus = attr(p11, session, priv, CK.CKA_MODULUS) ?? (pub && attr(p11, session, pub, CK.CKA_MODULUS));
    if (!modulus) throw new BridgeError(502, 'bad_hsm_output', 'the HSM does not show the modulus of the RSA key');
    modulusBytes = modulus.length;
  } else {
    const params = attr(p11, session, priv, CK.CKA_EC_PARAMS) ?? (pub && attr(p11, session, pub, CK.CKA_EC_PARAMS));
    curve = (params && curveFromParams(params)) ?? null;
    if (!curve) throw new BridgeError(400, 'unsupported_curve', 'the EC key is on a curve the bridge does not know (P-256, P-384, P-521 are supported)');
  }
  return { priv, pub, keyType, label, id, modulusBytes, curve };
}

/**
 * What /v1/key answers.
 * @param {P11} p11
 * @param {Buffer} session
 * @param {KeyPair} key
 */
export function describe(p11, session, key) {
  /** @type {string | null} */
  let publicKey = null;
  if (key.keyType === 'rsa') {
    const from = (/** @type {Buffer} */ h) => [attr(p11, session, h, CK.CKA_MODULUS), attr(p11, session, h, CK.CKA_PUBLIC_EXPONENT)];
    let [n, e] = from(key.priv);
    if ((!n || !e) && key.pub) [n, e] = from(key.pub);
    if (n && e) publicKey = rsaPublicPem(n, e);
  } else if (key.pub && key.curve) {
    const point = attr(p11, session, key.pub, CK.CKA_EC_POINT);
    if (point) publicKey = ecPublicPem(key.curve, ecPoint(point, key.curve.size));
  }
  const usages = [];
  if (bool(attr(p11, session, key.priv, CK.CKA_SIGN))) usages.push('sign');
  if (key.pub && bool(attr(p11, session, key.pub, CK.CKA_VERIFY))) usages.push('verify');
  if (key.keyType === 'rsa') {
    if (key.pub && bool(attr(p11, session, key.pub, CK.CKA_ENCRYPT))) usages.push('encrypt');
    if (bool(attr(p11, session, key.priv, CK.CKA_DECRYPT))) usages.push('decrypt');
  }
  return {
    key_type: key.keyType,
    key_bits: key.keyType === 'rsa' ? key.modulusBytes * 8 : /** @type {Curve} */ (key.curve).bits,
    curve: key.curve?.name ?? null,
    key_label: key.label,
    key_id: idHex(key.id),
    public_key: publicKey,
    has_public_key_object: key.pub !== null,
    usages,
  };
}

/**
 * Generates a token key pair. An existing key object with the same label or the same id is an
 * error (409), unless `replace` is set: then those objects are destroyed first.
 * @param {P11} p11
 * @param {Buffer} session a read-write session
 * @param {KeyRef} ref
 * @param {{ keyType: 'rsa' | 'ec', bits?: number, curve?: Curve, replace: boolean }} spec
 */
export async function generate(p11, session, ref, spec) {
  /** @type {Buffer[]} */
  const clashes = [];
  for (const cls of [CK.CKO_PRIVATE_KEY, CK.CKO_PUBLIC_KEY]) {
    if (ref.label !== undefined) clashes.push(...find(p11, session, template(cls, { label: ref.label }), 16));
    if (ref.id !== undefined) clashes.push(...find(p11, session, template(cls, { id: ref.id }), 16));
  }
  const unique = [...new Map(clashes.map((h) => [h.toString('hex'), h])).values()];
  if (unique.length > 0) {
    if (!spec.replace) throw new BridgeError(409, 'key_exists', `a key with ${describeRef(ref)} already exists on the token (set replace to destroy it and generate a new one)`);
    for (const h of unique) p11.C_DestroyObject(session, h);
  }

  const id = ref.id ?? randomBytes(16);
  const label = ref.label ?? idHex(id);
  const common = [
    { type: CK.CKA_TOKEN, value: true },
    { type: CK.CKA_LABEL, value: label },
    { type: CK.CKA_ID, value: id },
  ];
  /** @type {import('pkcs11js').Template} */
  const pubTemplate = [...common, { type: CK.CKA_PRIVATE, value: false }, { type: CK.CKA_VERIFY, value: true }];
  /** @type {import('pkcs11js').Template} */
  const privTemplate = [
    ...common,
    { type: CK.CKA_PRIVATE, value: true },
    { type: CK.CKA_SENSITIVE, value: true },
    { type: CK.CKA_EXTRACTABLE, value: false },
    { type: CK.CKA_SIGN, value: true },
  ];
  /** @type {number} */
  let mechanism;
  if (spec.keyType === 'rsa') {
    mechanism = 0x0000; // CKM_RSA_PKCS_KEY_PAIR_GEN
    pubTemplate.push(
      { type: CK.CKA_ENCRYPT, value: true },
      { type: CK.CKA_MODULUS_BITS, value: /** @type {number} */ (spec.bits) },
      { type: CK.CKA_PUBLIC_EXPONENT, value: Buffer.from([0x01, 0x00, 0x01]) },
    );
    privTemplate.push({ type: CK.CKA_DECRYPT, value: true });
  } else {
    mechanism = 0x1040; // CKM_EC_KEY_PAIR_GEN
    pubTemplate.push({ type: CK.CKA_EC_PARAMS, value: ecParams(/** @type {Curve} */ (spec.curve)) });
  }
  await p11.C_GenerateKeyPairAsync(session, { mechanism }, pubTemplate, privTemplate);
  return { replaced: unique.length > 0, id, label };
}

/**
 * @param {KeyPair} key
 * @param {Mechanism} mech
 */
function checkFamily(key, mech) {
  if (mech.keyType !== key.keyType) {
    throw new BridgeError(400, 'key_type_mismatch', `mechanism ${mechanismHex(mech.value)} ${mech.name} needs an ${mech.keyType.toUpperCase()} key; the key is ${key.keyType.toUpperCase()}`);
  }
}

/**
 * @param {Mechanism} mech
 * @param {Hash} hash
 * @param {number | undefined} saltLength
 * @returns {import('pkcs11js').Mechanism}
 */
function signMechanism(mech, hash, saltLength) {
  if (mech.family === 'rsa-pkcs') return { mechanism: 0x0001 };
  if (mech.family === 'ecdsa') return { mechanism: 0x1041 };
  if (mech.family === 'rsa-pss') {
    /** @type {import('pkcs11js').RsaPSS} */
    const parameter = { type: CK.CK_PARAMS_RSA_PSS, hashAlg: hash.ckm, mgf: hash.mgf, saltLen: saltLength ?? hash.length };
    return { mechanism: 0x000d, parameter };
  }
  throw new BridgeError(400, 'unsupported_mechanism', `mechanism ${mechanismHex(mech.value)} ${mech.name} does not sign`);
}

/**
 * The bytes the base mechanism signs: the DigestInfo for PKCS#1 v1.5, the digest otherwise.
 * @param {Mechanism} mech
 * @param {Hash} hash
 * @param {Buffer} digest
 */
function signInput(mech, hash, digest) {
  if (digest.length !== hash.length) throw new BridgeError(400, 'bad_request', `digest must be the ${hash.length}-byte ${hash.name} digest; got ${digest.length} bytes`);
  return mech.family === 'rsa-pkcs' ? digestInfo(hash, digest) : digest;
}

/**
 * @param {P11} p11
 * @param {Buffer} session
 * @param {KeyPair} key
 * @param {{ mech: Mechanism, hash: Hash, digest: Buffer, saltLength?: number }} req
 */
export async function sign(p11, session, key, { mech, hash, digest, saltLength }) {
  checkFamily(key, mech);
  const data = signInput(mech, hash, digest);
  p11.C_SignInit(session, signMechanism(mech, hash, saltLength), key.priv);
  const sig = await p11.C_SignAsync(session, data, Buffer.alloc(OUT_MAX));
  return mech.family === 'ecdsa' ? ecdsaRawToDer(sig) : Buffer.from(sig);
}

/**
 * Verifies with the token's public key object. ECDSA signatures are DER, as sign answers.
 * @param {P11} p11
 * @param {Buffer} session
 * @param {KeyPair} key
 * @param {{ mech: Mechanism, hash: Hash, digest: Buffer, signature: Buffer, saltLength?: number }} req
 */
export async function verify(p11, session, key, { mech, hash, digest, signature, saltLength }) {
  checkFamily(key, mech);
  if (!key.pub) throw new BridgeError(404, 'public_key_not_found', 'the token has no public key object for this key');
  const data = signInput(mech, hash, digest);
  const sig = mech.family === 'ecdsa' ? ecdsaDerToRaw(signature, /** @type {Curve} */ (key.curve).size) : signature;
  p11.C_VerifyInit(session, signMechanism(mech, hash, saltLength), key.pub);
  try {
    return await p11.C_VerifyAsync(session, data, sig);
  } catch (e) {
    const code = pkcs11Code(e);
    if (code === CK.CKR_SIGNATURE_INVALID || code === CK.CKR_SIGNATURE_LEN_RANGE) return false;
    throw e;
  }
}

/**
 * @param {Hash} hash
 * @param {Buffer | undefined} label
 * @returns {import('pkcs11js').Mechanism}
 */
function oaep(hash, label) {
  /** @type {import('pkcs11js').RsaOAEP} */
  const parameter = {
    type: CK.CK_PARAMS_RSA_OAEP,
    hashAlg: hash.ckm,
    mgf: hash.mgf,
    source: 1, // CKZ_DATA_SPECIFIED
    ...(label && label.length > 0 ? { sourceData: label } : {}),
  };
  return { mechanism: 0x0009, parameter };
}

/**
 * RSA-OAEP with the token's public key object.
 * @param {P11} p11
 * @param {Buffer} session
 * @param {KeyPair} key
 * @param {{ mech: Mechanism, hash: Hash, plaintext: Buffer, label?: Buffer }} req
 */
export async function encrypt(p11, session, key, { mech, hash, plaintext, label }) {
  checkFamily(key, mech);
  if (!key.pub) throw new BridgeError(404, 'public_key_not_found', 'the token has no public key object for this key');
  p11.C_EncryptInit(session, oaep(hash, label), key.pub);
  return Buffer.from(await p11.C_EncryptAsync(session, plaintext, Buffer.alloc(OUT_MAX)));
}

/**
 * @param {P11} p11
 * @param {Buffer} session
 * @param {KeyPair} key
 * @param {{ mech: Mechanism, hash: Hash, ciphertext: Buffer, label?: Buffer }} req
 */
export async function decrypt(p11, session, key, { mech, hash, ciphertext, label }) {
  checkFamily(key, mech);
  if (ciphertext.length !== key.modulusBytes) {
    throw new BridgeError(400, 'decryption_failed', `ciphertext must be ${key.modulusBytes} bytes for this ${key.modulusBytes * 8}-bit key; got ${ciphertext.length}`);
  }
  p11.C_DecryptInit(session, oaep(hash, label), key.priv);
  try {
    return Buffer.from(await p11.C_DecryptAsync(session, ciphertext, Buffer.alloc(OUT_MAX)));
  } catch (e) {
    // The key and parameters were accepted by C_DecryptInit, so a generic failure of the data step
    // is the ciphertext (SoftHSM2 reports a bad OAEP padding as CKR_GENERAL_ERROR).
    const code = pkcs11Code(e);
    if (code === CK.CKR_GENERAL_ERROR || code === CK.CKR_FUNCTION_FAILED) {
      throw new BridgeError(400, 'decryption_failed', `the ciphertext could not be decrypted (${ckrName(code)} from C_Decrypt)`);
    }
    throw e;
  }
}

/**
 * @param {P11} p11
 * @param {Buffer} session
 * @param {number} bytes
 */
export function random(p11, session, bytes) {
  return Buffer.from(p11.C_GenerateRandom(session, Buffer.alloc(bytes)));
}
