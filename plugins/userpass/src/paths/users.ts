// auth/<mount>/users/: LIST the users; users/:username to create, read, update and delete one;
// users/:username/password and users/:username/policies to change just that.

import { nameRegex, type LogicalRequest, type PathDef } from '../../../../src/framework/backend';
import { badRequest, notFound } from '../../../../src/framework/errors';
import type { FieldData, FieldSchemas } from '../../../../src/framework/fields';
import { emptyTokenParams, parseTokenFields, TOKEN_FIELDS, tokenFieldsView } from '../../../../src/auth/token/fields';
import { checkImportedHash, hashPassword } from '../password';
import { loadUser, saveUser, USER_PREFIX, type UserEntry } from '../user';

const usernameField: FieldSchemas = {
  username: { type: 'lowercase-string', description: 'Username for this user.' },
};

const passwordFields: FieldSchemas = {
  password: { type: 'string', description: 'Password for this user.' },
  password_hash: { type: 'string', description: 'Pre-hashed password for this user, in bcrypt format. Mutually exclusive with password.' },
};

/** Vault's userpass keeps only these deprecated aliases (not period or num_uses). */
const userTokenFields: FieldSchemas = Object.fromEntries(Object.entries(TOKEN_FIELDS).filter(([name]) => name !== 'period' && name !== 'num_uses'));

type PasswordChange = { password: string } | { hash: string };

/**
 * The new password a write sets, checked before anything is hashed or stored: null when it sends
 * neither password nor password_hash; a 400 when it sends both, or only empty ones.
 */
function passwordChange(f: FieldData): PasswordChange | null {
  if (!f.has('password') && !f.has('password_hash')) return null;
  const password = f.get<string>('password');
  const imported = f.get<string>('password_hash');
  if (password !== '' && imported !== '') throw badRequest('password and password_hash are mutually exclusive');
  if (password !== '') return { password };
  if (imported !== '') return { hash: checkImportedHash(imported) };
  throw badRequest('missing password');
}

const hashOf = (change: PasswordChange): Promise<string> => ('hash' in change ? Promise.resolve(change.hash) : hashPassword(change.password));

/** The stored user, or a 400 for the paths that change one part of an existing user. */
async function existingUser(req: LogicalRequest, username: string): Promise<UserEntry> {
  const user = await loadUser(req.storage, username);
  if (!user) throw badRequest('username does not exist');
  return user;
}

/** Vault's policyutil.ParsePolicies: trimmed, lower-cased, without empty names or repeats, sorted. */
const parsePolicies = (list: string[]): string[] => [...new Set(list.map((p) => p.trim().toLowerCase()).filter((p) => p !== ''))].sort();

/**
 * Create or update, with Vault's checks in its order: the password a create needs, the token
 * fields, then the password is hashed (the slow part, once everything else is known to be valid).
 * An update finds the user (the existence check did); should it be gone, it needs a password too.
 */
async function writeUser(req: LogicalRequest, f: FieldData, create: boolean): Promise<null> {
  const username = f.get<string>('username');
  const change = passwordChange(f);
  const current = create ? null : await loadUser(req.storage, username);
  if (!current && !change) throw badRequest('missing password');
  const token = parseTokenFields(current?.token ?? emptyTokenParams(), f);
  const passwordHash = change ? await hashOf(change) : (current as UserEntry).passwordHash;
  await saveUser(req.storage, username, { passwordHash, token });
  return null;
}

export function userPaths(): PathDef[] {
  return [
    {
      pattern: 'users/?',
      summary: 'Lists the users.',
      operations: {
        list: async (req) => {
          const keys = await req.storage.list(USER_PREFIX);
          if (keys.length === 0) throw notFound();
          return { data: { keys } };
        },
      },
    },
    {
      pattern: `users/${nameRegex('username')}`,
      fields: { ...usernameField, ...passwordFields, ...userTokenFields },
      summary: 'Create, read, update or delete a user.',
      existenceCheck: async (req, f) => (await loadUser(req.storage, f.get('username'))) !== null,
      operations: {
        read: async (req, f) => {
          const user = await loadUser(req.storage, f.get('username'));
          if (!user) throw notFound();
          return { data: tokenFieldsView(user.token) };
        },
        create: (req, f) => writeUser(req, f, true),
        update: (req, f) => writeUser(req, f, false),
        delete: async (req, f) => {
          await req.storage.delete(USER_PREFIX + f.get<string>('username'));
          return null;
        },
      },
    },
    {
      pattern: `users/${nameRegex('username')}/password`,
      fields: { ...usernameField, ...passwordFields },
      summary: "Reset a user's password.",
      operations: {
        update: async (req, f) => {
          const username = f.get<string>('username');
          const user = await existingUser(req, username);
          const change = passwordChange(f);
          if (!change) throw badRequest('missing password');
          await saveUser(req.storage, username, { ...user, passwordHash: await hashOf(change) });
          return null;
        },
      },
    },
    {
      pattern: `users/${nameRegex('username')}/policies`,
      fields: {
        ...usernameField,
        token_policies: TOKEN_FIELDS.token_policies,
        policies: TOKEN_FIELDS.policies,
      },
      summary: "Update a user's policies.",
      operations: {
        update: async (req, f) => {
          const username = f.get<string>('username');
          const user = await existingUser(req, username);
          const token = { ...user.token, legacy: { ...user.token.legacy } };
          // As on users/:username: the deprecated key is kept only while it is sent.
          if (f.has('token_policies')) {
            token.policies = parsePolicies(f.get('token_policies'));
            if (f.has('policies')) token.legacy.policies = token.policies;
            else delete token.legacy.policies;
          } else if (f.has('policies')) {
            token.policies = token.legacy.policies = parsePolicies(f.get('policies'));
          }
          await saveUser(req.storage, username, { ...user, token });
          return null;
        },
      },
    },
  ];
}
