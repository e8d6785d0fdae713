// The userpass auth method (Vault's builtin/credential/userpass), shipped as a plugin: users with a
// bcrypt-hashed password and the settings of the tokens their logins get.

import type { Backend } from '../../../src/framework/backend';
import { badRequest } from '../../../src/framework/errors';
import { loginPaths } from './paths/login';
import { userPaths } from './paths/users';
import { loadUser } from './user';

export function userpassBackend(): Backend {
  return {
    type: 'userpass',
    paths: [...userPaths(), ...loginPaths()],
    unauthenticatedPaths: ['login/*'],
    // A login only reads its user (the token and entity live elsewhere), so it need not wait for
    // the mount's writes while bcrypt runs.
    storageFreeWritePaths: ['login/*'],
    // Renewal re-reads the user (Vault's pathLoginRenew): its current ttl, max_ttl and period.
    renewLogin: async (storage, username, tokenPolicies) => {
      const user = await loadUser(storage, username);
      if (!user) throw badRequest('user no longer exists');
      // Vault's userpass: a token whose user now has other policies is not renewed.
      if (!samePolicies(user.token.policies, tokenPolicies)) throw badRequest('policies have changed, not renewing');
      return { ttl: user.token.ttl, maxTtl: user.token.maxTtl, period: user.token.period };
    },
  };
}

/** Policy sets compared as Vault's EquivalentPolicies does: order and "default" do not matter. */
function samePolicies(a: readonly string[], b: readonly string[]): boolean {
  const norm = (list: readonly string[]) => [...new Set(list.filter((p) => p !== 'default'))].sort().join('\n');
  return norm(a) === norm(b);
}
