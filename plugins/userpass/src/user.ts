// A user as stored: the bcrypt hash of the password and the settings of the tokens a login gets.
// Names are case-insensitive (Vault lower-cases them), so keys hold the lower-case name.

import { getJSON, putJSON, type Storage } from '../../../src/framework/storage';
import type { TokenParams } from '../../../src/auth/token/fields';

export interface UserEntry {
  /** bcrypt, in modular crypt format ("$2a$10$..."); never returned by any read. */
  passwordHash: string;
  token: TokenParams;
}

export const USER_PREFIX = 'user/';

export async function loadUser(storage: Storage, username: string): Promise<UserEntry | null> {
  return getJSON<UserEntry>(storage, USER_PREFIX + username.toLowerCase());
}

export async function saveUser(storage: Storage, username: string, user: UserEntry): Promise<void> {
  await putJSON(storage, USER_PREFIX + username.toLowerCase(), user);
}
