// POST auth/<mount>/login/:username {password}: unauthenticated. A wrong password and an unknown
// user get the same answer after the same work (a bcrypt comparison either way).

import { allowedByCIDRs } from '../../../../src/core/tokens/cidr';
import { nameRegex, type PathDef } from '../../../../src/framework/backend';
import { badRequest, permissionDenied } from '../../../../src/framework/errors';
import { tokenLoginFields } from '../../../../src/auth/token/fields';
import { verifyPassword } from '../password';
import { loadUser } from '../user';

export function loginPaths(): PathDef[] {
  return [
    {
      pattern: `login/${nameRegex('username')}`,
      fields: {
        username: { type: 'lowercase-string', description: 'Username of the user.' },
        password: { type: 'string', description: 'Password for this user.' },
      },
      summary: 'Log in with a username and password.',
      operations: {
        update: async (req, f) => {
          const username = f.get<string>('username');
          const password = f.get<string>('password');
          if (password === '') throw badRequest('missing password');
          const user = await loadUser(req.storage, username);
          if (!(await verifyPassword(password, user?.passwordHash ?? null)) || !user) throw badRequest('invalid username or password');
          // Checked after the password, as Vault does, so this 403 is only ever seen with a valid password.
          if (!allowedByCIDRs(user.token.boundCidrs, req.clientIP)) throw permissionDenied();
          return {
            login: {
              aliasName: username,
              // Vault's userpass alias carries no metadata of its own.
              aliasMetadata: {},
              metadata: { username },
              displayName: username,
              // Renewal finds the user again by this name (Backend.renewLogin).
              role: username,
              ...tokenLoginFields(user.token),
            },
          };
        },
      },
    },
  ];
}
