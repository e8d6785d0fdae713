// Key secrets travel as base32 (RFC 4648), as authenticator apps and otpauth URLs carry them.
// Parsing is as lenient as Vault's: any case, padding optional; we also drop whitespace (secrets
// are often shown in groups of four) and ignore the unused low bits of the last character, which
// Go's decoder ignores too.

import { base32nopad } from '@scure/base';
import { badRequest } from '../../../src/framework/errors';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** The secret's bytes; a 400 naming the problem when `input` is not base32. */
export function parseSecret(input: string): Uint8Array {
  const text = input.replace(/\s+/g, '').toUpperCase().replace(/=+$/, '');
  if (text === '') throw badRequest('the key value is required');
  for (let i = 0; i < text.length; i++) {
    if (!ALPHABET.includes(text[i])) throw badRequest(`invalid key value: illegal base32 data at input byte ${i}`);
  }
  // Lengths 1, 3 and 6 (mod 8) leave a partial byte of 5 bits or more: no encoder makes them.
  if ([1, 3, 6].includes(text.length % 8)) {
    throw badRequest(`invalid key value: ${text.length} base32 characters do not make whole bytes`);
  }
  const excessBits = (text.length * 5) % 8;
  if (excessBits === 0) return base32nopad.decode(text);
  // @scure/base refuses set bits past the last whole byte: clear them in the last character.
  const last = ALPHABET.indexOf(text[text.length - 1]) & ~((1 << excessBits) - 1);
  return base32nopad.decode(text.slice(0, -1) + ALPHABET[last]);
}

/** Base32 without padding, as Vault writes generated secrets. */
export const formatSecret = (secret: Uint8Array): string => base32nopad.encode(secret);
