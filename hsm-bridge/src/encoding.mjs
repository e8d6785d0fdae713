// @ts-check
// The few ASN.1 structures around raw PKCS#11 values, built and read with asn1js: the DigestInfo
// that CKM_RSA_PKCS signs, ECDSA signatures (PKCS#11 gives r‖s, X.509 and Vault use DER), EC
// domain parameters (a curve OID) and EC points (CKA_EC_POINT is a DER OCTET STRING).

import { createPublicKey } from 'node:crypto';
import * as asn1js from 'asn1js';
import { BridgeError } from './errors.mjs';
import { curveByOid } from './mechanisms.mjs';

/** @param {ArrayBuffer} ab */
const buf = (ab) => Buffer.from(ab);

/**
 * DigestInfo ::= SEQUENCE { AlgorithmIdentifier { oid, NULL }, OCTET STRING digest } (RFC 8017 §9.2).
 * @param {{ oid: string }} hash
 * @param {Buffer} digest
 */
export function digestInfo(hash, digest) {
  const seq = new asn1js.Sequence({
    value: [
      new asn1js.Sequence({ value: [new asn1js.ObjectIdentifier({ value: hash.oid }), new asn1js.Null()] }),
      new asn1js.OctetString({ valueHex: digest }),
    ],
  });
  return buf(seq.toBER(false));
}

/**
 * PKCS#11's ECDSA signature (r‖s, each as long as the order) → DER Ecdsa-Sig-Value.
 * @param {Buffer} raw
 */
export function ecdsaRawToDer(raw) {
  if (raw.length === 0 || raw.length % 2 !== 0) throw new BridgeError(502, 'bad_hsm_output', 'the HSM returned an ECDSA signature of odd length');
  const half = raw.length / 2;
  const int = (/** @type {Buffer} */ b) => asn1js.Integer.fromBigInt(BigInt(`0x${b.toString('hex')}`));
  const seq = new asn1js.Sequence({ value: [int(raw.subarray(0, half)), int(raw.subarray(half))] });
  return buf(seq.toBER(false));
}

/**
 * DER Ecdsa-Sig-Value → r‖s with each half `size` bytes, for C_Verify.
 * @param {Buffer} der
 * @param {number} size
 */
export function ecdsaDerToRaw(der, size) {
  const parsed = asn1js.fromBER(der);
  const seq = parsed.result;
  const bad = () => new BridgeError(400, 'bad_request', 'signature is not a DER ECDSA signature');
  if (parsed.offset !== der.length || !(seq instanceof asn1js.Sequence) || seq.valueBlock.value.length !== 2) throw bad();
  const parts = seq.valueBlock.value.map((v) => {
    if (!(v instanceof asn1js.Integer)) throw bad();
    const n = v.toBigInt();
    if (n < 0n) throw bad();
    const hex = n.toString(16).padStart(size * 2, '0');
    if (hex.length > size * 2) throw bad();
    return Buffer.from(hex, 'hex');
  });
  return Buffer.concat(parts);
}

/** CKA_EC_PARAMS of a named curve: the DER OBJECT IDENTIFIER. @param {{ oid: string }} curve */
export function ecParams(curve) {
  return buf(new asn1js.ObjectIdentifier({ value: curve.oid }).toBER(false));
}

/** The curve named by CKA_EC_PARAMS, or undefined for explicit or unknown parameters. @param {Buffer} params */
export function curveFromParams(params) {
  const parsed = asn1js.fromBER(params);
  if (parsed.offset === -1 || !(parsed.result instanceof asn1js.ObjectIdentifier)) return undefined;
  return curveByOid(parsed.result.getValue());
}

/**
 * The uncompressed point of CKA_EC_POINT. PKCS#11 says DER OCTET STRING; a few libraries return
 * the bare point, which is accepted too.
 * @param {Buffer} value
 * @param {number} size field size of the curve in bytes
 */
export function ecPoint(value, size) {
  if (value.length === 2 * size + 1 && value[0] === 0x04) return value;
  const parsed = asn1js.fromBER(value);
  if (parsed.offset !== -1 && parsed.result instanceof asn1js.OctetString) {
    const point = Buffer.from(parsed.result.valueBlock.valueHexView);
    if (point.length === 2 * size + 1 && point[0] === 0x04) return point;
  }
  throw new BridgeError(502, 'bad_hsm_output', 'the HSM returned an EC point that is not uncompressed');
}

/** @param {Buffer} b */
const b64url = (b) => b.toString('base64url');

/**
 * SPKI PEM of an RSA public key from CKA_MODULUS and CKA_PUBLIC_EXPONENT.
 * @param {Buffer} modulus
 * @param {Buffer} exponent
 */
export function rsaPublicPem(modulus, exponent) {
  const key = createPublicKey({ key: { kty: 'RSA', n: b64url(stripZeros(modulus)), e: b64url(stripZeros(exponent)) }, format: 'jwk' });
  return /** @type {string} */ (key.export({ type: 'spki', format: 'pem' }));
}

/**
 * SPKI PEM of an EC public key from its uncompressed point.
 * @param {{ name: string, size: number }} curve
 * @param {Buffer} point 04‖x‖y
 */
export function ecPublicPem(curve, point) {
  const x = point.subarray(1, 1 + curve.size);
  const y = point.subarray(1 + curve.size);
  const key = createPublicKey({ key: { kty: 'EC', crv: curve.name, x: b64url(x), y: b64url(y) }, format: 'jwk' });
  return /** @type {string} */ (key.export({ type: 'spki', format: 'pem' }));
}

/** @param {Buffer} b */
function stripZeros(b) {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  return b.subarray(i);
}
