// Password hashing with bcrypt, as Vault's userpass does (golang.org/x/crypto/bcrypt, default cost
// 10). bcryptjs is pure JavaScript; we hand it the salt ourselves, so it never looks for a random
// source of its own (the plugin isolate has no Node built-ins).

import { compare, encodeBase64, hash } from 'bcryptjs';
import { randomBytes } from '../../../src/crypto/random';
import { utf8 } from '../../../src/crypto/encoding';
import { badRequest } from '../../../src/framework/errors';

/** bcrypt.DefaultCost. */
export const BCRYPT_COST = 10;
/** bcrypt keys Blowfish with at most 72 bytes; Go refuses longer passwords rather than truncating. */
const MAX_PASSWORD_BYTES = 72;
const SALT_BYTES = 16;

/**
 * A cost-10 hash whose password nobody knows: a login for an unknown user is compared against it,
 * so it takes as long as a wrong password for a real user.
 */
const DUMMY_HASH = '$2a$10$8nbhhwYll6ssvxjQgTb7P.o4etvYN4CQM9ZrKFE/0Ny0AQ.jRrhva';

/**
 * Modular crypt format: version 2a, 2b or 2y, a two-digit cost, then 22 characters of salt and 31
 * of hash in bcrypt's base64 alphabet.
 */
const BCRYPT_HASH = /^\$2[aby]\$(\d\d)\$[./A-Za-z0-9]{53}$/;
const MIN_COST = 4;
const MAX_COST = 31;

/** A new hash of `password` with a fresh salt ("$2a$", as Go writes them). */
export async function hashPassword(password: string): Promise<string> {
  if (utf8(password).length > MAX_PASSWORD_BYTES) throw badRequest('bcrypt: password length exceeds 72 bytes');
  const salt = `$2a$${BCRYPT_COST}$${encodeBase64(randomBytes(SALT_BYTES), SALT_BYTES)}`;
  return hash(password, salt);
}

/** Checks an imported hash (password_hash) is one bcrypt can verify; returns it unchanged. */
export function checkImportedHash(value: string): string {
  const m = BCRYPT_HASH.exec(value);
  const cost = m ? Number(m[1]) : 0;
  if (!m || cost < MIN_COST || cost > MAX_COST) {
    throw badRequest(`password_hash is not a bcrypt hash: expected "$2a$", "$2b$" or "$2y$", a cost of 04 to 31 and 53 characters of salt and hash`);
  }
  return value;
}

/**
 * True when `password` matches `stored`. `stored` null (no such user) still costs a full bcrypt
 * comparison, so the answer's timing does not tell which users exist.
 */
export async function verifyPassword(password: string, stored: string | null): Promise<boolean> {
  const matches = await compare(password, stored ?? DUMMY_HASH);
  return matches && stored !== null;
}
