// Cloud KMS enums with their proto numbers. JSON carries their names, unless the request asks for
// numbers ($alt=json;enum-encoding=int, as the Node SDK's REST transport does); requests may
// carry either form.
const PURPOSE = { CRYPTO_KEY_PURPOSE_UNSPECIFIED: 0, ENCRYPT_DECRYPT: 1, ASYMMETRIC_SIGN: 5, ASYMMETRIC_DECRYPT: 6, RAW_ENCRYPT_DECRYPT: 7, MAC: 9 };
const PROTECTION_LEVEL = { PROTECTION_LEVEL_UNSPECIFIED: 0, SOFTWARE: 1, HSM: 2, EXTERNAL: 3, EXTERNAL_VPC: 4 };
const STATE = {
  CRYPTO_KEY_VERSION_STATE_UNSPECIFIED: 0,
  PENDING_GENERATION: 5,
  ENABLED: 1,
  DISABLED: 2,
  DESTROYED: 3,
  DESTROY_SCHEDULED: 4,
  PENDING_IMPORT: 6,
  IMPORT_FAILED: 7,
  GENERATION_FAILED: 8,
};
const ALGORITHM = {
  CRYPTO_KEY_VERSION_ALGORITHM_UNSPECIFIED: 0,
  GOOGLE_SYMMETRIC_ENCRYPTION: 1,
  RSA_SIGN_PSS_2048_SHA256: 2,
  RSA_SIGN_PSS_3072_SHA256: 3,
  RSA_SIGN_PSS_4096_SHA256: 4,
  RSA_SIGN_PSS_4096_SHA512: 15,
  RSA_SIGN_PKCS1_2048_SHA256: 5,
  RSA_SIGN_PKCS1_3072_SHA256: 6,
  RSA_SIGN_PKCS1_4096_SHA256: 7,
  RSA_SIGN_PKCS1_4096_SHA512: 16,
  RSA_DECRYPT_OAEP_2048_SHA256: 8,
  RSA_DECRYPT_OAEP_3072_SHA256: 9,
  RSA_DECRYPT_OAEP_4096_SHA256: 10,
  RSA_DECRYPT_OAEP_4096_SHA512: 17,
  RSA_DECRYPT_OAEP_2048_SHA1: 37,
  RSA_DECRYPT_OAEP_3072_SHA1: 38,
  RSA_DECRYPT_OAEP_4096_SHA1: 39,
  EC_SIGN_P256_SHA256: 12,
  EC_SIGN_P384_SHA384: 13,
  EC_SIGN_SECP256K1_SHA256: 31,
  EC_SIGN_ED25519: 40,
};

/** The enum fields of the messages the emulator answers, wherever they appear. */
const FIELDS: Record<string, Record<string, number>> = { purpose: PURPOSE, protectionLevel: PROTECTION_LEVEL, state: STATE, algorithm: ALGORITHM };

/** A request's enum value as its name ('' when absent, the number as text when unknown). */
export function enumName(field: keyof typeof FIELDS, value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number') return Object.entries(FIELDS[field]).find(([, n]) => n === value)?.[0] ?? String(value);
  return '';
}

/** An answer with its enums as numbers (deeply), when the request asked for them. */
export function withEnums(body: unknown, numeric: boolean): unknown {
  if (!numeric || body === null || typeof body !== 'object') return body;
  if (Array.isArray(body)) return body.map((b) => withEnums(b, numeric));
  return Object.fromEntries(
    Object.entries(body).map(([k, v]) => [k, typeof v === 'string' && FIELDS[k] && v in FIELDS[k] ? FIELDS[k][v] : withEnums(v, numeric)]),
  );
}
