// The pipeline's Authorizer over a compiled ACL: the capability of the operation on the canonical
// path, parameter constraints, wrapping TTL bounds, and sudo where the path requires it.

import type { AuthContext } from '../framework/backend';
import { permissionDenied } from '../framework/errors';
import type { ACL } from '../core/acl/acl';
import type { AclCache } from '../core/acl/cache';
import { anonymousAuthorizer, type Authorizer } from './dispatch';

export function aclAuthorizer(acl: ACL, wrapTTL: number): Authorizer {
  return {
    authorize: ({ capability, path, sudo, data }) => {
      const result = acl.check({ operation: capability, path, data, wrapTTL });
      if (!result.allowed || (sudo && !result.sudo)) throw permissionDenied();
      return { sudo: result.sudo };
    },
    grantsCreateAndUpdate: ({ path, data }) =>
      acl.check({ operation: 'create', path, data, wrapTTL }).allowed && acl.check({ operation: 'update', path, data, wrapTTL }).allowed,
  };
}

/** The authorizer for a request: the caller's ACL, or refusal of everything without a token. */
export async function authorizerFor(acls: AclCache, auth: AuthContext | null, wrapTTL: number): Promise<Authorizer> {
  if (!auth) return anonymousAuthorizer;
  const { acl, identityPolicies } = await acls.compiledFor(auth);
  // Recorded on the request's auth for its audit entries.
  auth.identityPolicies = identityPolicies;
  return aclAuthorizer(acl, wrapTTL);
}
