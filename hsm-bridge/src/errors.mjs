// @ts-check
// Errors the bridge answers with: `{ error, code }` and an HTTP status. PKCS#11 failures keep the
// CKR_ name as their code, so Coffer (and whoever reads its logs) sees what the HSM said.

import pkcs11js from 'pkcs11js';

export class BridgeError extends Error {
  /**
   * @param {number} status HTTP status
   * @param {string} code stable machine-readable code (a CKR_ name for HSM failures)
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message);
    this.name = 'BridgeError';
    this.status = status;
    this.code = code;
  }
}

/** CKR value → name, from the binding's exported constants. */
const CKR_NAMES = new Map(
  Object.entries(pkcs11js)
    .filter(([k, v]) => k.startsWith('CKR_') && typeof v === 'number')
    .map(([k, v]) => [/** @type {number} */ (v), k]),
);

/** @param {number} code */
export function ckrName(code) {
  return CKR_NAMES.get(code) ?? `CKR_0x${code.toString(16).toUpperCase().padStart(8, '0')}`;
}

/** @type {Record<string, [number, string]>} status and a plain explanation, by CKR name */
const MAPPED = {
  CKR_PIN_INCORRECT: [401, 'the token refused the PIN'],
  CKR_PIN_INVALID: [401, 'the PIN has characters the token does not accept'],
  CKR_PIN_LEN_RANGE: [401, 'the PIN is too long or too short for the token'],
  CKR_PIN_LOCKED: [403, 'the user PIN of the token is locked'],
  CKR_PIN_EXPIRED: [403, 'the user PIN of the token has expired'],
  CKR_USER_PIN_NOT_INITIALIZED: [403, 'the token has no user PIN yet'],
  CKR_USER_TOO_MANY_TYPES: [403, 'the token allows no further login'],
  CKR_ARGUMENTS_BAD: [400, 'the HSM refused the arguments (for example a hash it does not support with this mechanism)'],
  CKR_DATA_INVALID: [400, 'the HSM refused the input data'],
  CKR_DATA_LEN_RANGE: [400, 'the input has a length the mechanism does not accept'],
  CKR_ENCRYPTED_DATA_INVALID: [400, 'the ciphertext could not be decrypted'],
  CKR_ENCRYPTED_DATA_LEN_RANGE: [400, 'the ciphertext has the wrong length for this key'],
  CKR_KEY_TYPE_INCONSISTENT: [400, 'the key type does not fit the mechanism'],
  CKR_KEY_SIZE_RANGE: [400, 'the HSM does not support this key size'],
  CKR_KEY_FUNCTION_NOT_PERMITTED: [400, "the key's attributes forbid this operation"],
  CKR_MECHANISM_INVALID: [400, 'the HSM does not support this mechanism'],
  CKR_MECHANISM_PARAM_INVALID: [400, 'the HSM refused the mechanism parameters'],
  CKR_TEMPLATE_INCOMPLETE: [400, 'the key template is incomplete for this HSM'],
  CKR_TEMPLATE_INCONSISTENT: [400, 'the key template is inconsistent for this HSM'],
  CKR_ATTRIBUTE_VALUE_INVALID: [400, 'the HSM refused an attribute value'],
  CKR_DOMAIN_PARAMS_INVALID: [400, 'the HSM does not support these domain parameters (curve)'],
  CKR_CURVE_NOT_SUPPORTED: [400, 'the HSM does not support this curve'],
  CKR_SIGNATURE_INVALID: [400, 'the signature is not valid'],
  CKR_SIGNATURE_LEN_RANGE: [400, 'the signature has the wrong length'],
  CKR_SLOT_ID_INVALID: [404, 'no such slot'],
  CKR_TOKEN_NOT_PRESENT: [404, 'no token in the slot'],
  CKR_TOKEN_NOT_RECOGNIZED: [404, 'the token in the slot is not recognised'],
  CKR_OBJECT_HANDLE_INVALID: [404, 'the key is gone from the token'],
  CKR_KEY_HANDLE_INVALID: [404, 'the key is gone from the token'],
  CKR_TOKEN_WRITE_PROTECTED: [403, 'the token is write-protected'],
  CKR_SESSION_COUNT: [503, 'the token has no free session'],
  CKR_DEVICE_REMOVED: [503, 'the token was removed'],
  CKR_CRYPTOKI_NOT_INITIALIZED: [503, 'the PKCS#11 library is not initialised'],
};

/**
 * Turns anything thrown during an operation into a BridgeError. PKCS#11 errors carry no arguments
 * (in particular no PIN), only the function and the CKR code.
 * @param {unknown} err
 * @returns {BridgeError}
 */
export function toBridgeError(err) {
  if (err instanceof BridgeError) return err;
  const code = pkcs11Code(err);
  if (code !== undefined) {
    const name = ckrName(code);
    const method = /** @type {{ method?: string }} */ (err).method;
    const [status, text] = MAPPED[name] ?? [502, 'the HSM reported a failure'];
    return new BridgeError(status, name, `${name}${method ? ` from ${method}` : ''}: ${text}`);
  }
  return new BridgeError(500, 'internal_error', 'internal error in the bridge');
}

/**
 * The CKR code of a pkcs11js error, or undefined for anything else.
 * @param {unknown} err
 */
export function pkcs11Code(err) {
  if (err instanceof pkcs11js.Pkcs11Error) return err.code;
  return undefined;
}
